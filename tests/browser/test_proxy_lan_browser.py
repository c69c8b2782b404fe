"""A phone on board in one scan, with real headless Chromium at 375 px: the QR
code of the setup page on the landing page, on the setup page a device not yet on the proxy opens
(the QR code's page) and on `http://readerproxy/`, the same code on all three; and the check step,
before the device uses the proxy, through it before it trusts readerproxy's CA, and after (Chromium
told to accept the CA by its key, as the interception tests do). Screenshots in
artifacts/screenshots/proxy-lan-*.png.

The server runs in the test's event loop with `--lan`; the machine's LAN address is 127.0.0.2 here
(a loopback address stands in for it: the tests reach nothing else).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import pytest
from support.chromium import CHROMIUM, SCREENSHOTS, Chromium, Page, wait_for
from support.proxy_browser import browser_through, text_of
from support.reader_server import RunningServer, free_port, serve, test_settings

from readerproxy.proxy import addresses, lan
from readerproxy.proxy.addons import RulesAddon
from readerproxy.proxy.routes import PROXY, share_setup
from readerproxy.proxy.server import ProxyServer
from readerproxy.proxy.setup import SetupAddon, der

pytestmark = pytest.mark.browser

SETUP = "http://readerproxy"
LAN_ADDRESS = "127.0.0.2"
ANDROID = (
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/131.0.0.0 Mobile Safari/537.36"
)


@dataclass
class LanServer:
    """The reader server and its proxy listener, as `serve --lan --intercept-https` runs them."""

    server: RunningServer
    proxy: ProxyServer

    @property
    def reader_port(self) -> int:
        return int(self.server.base.rsplit(":", 1)[1])

    @property
    def qr_url(self) -> str:
        return lan.setup_url(LAN_ADDRESS, self.reader_port)


@contextlib.asynccontextmanager
async def lan_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[LanServer]:
    """`--lan` in this event loop (the CA in a fresh data directory), told its real reader port
    (the test server listens on an ephemeral one)."""
    monkeypatch.setattr(addresses, "lan_addresses", lambda: [LAN_ADDRESS])
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    settings = test_settings(lan=True, proxy_port=free_port(), intercept_https=True)
    async with serve(settings) as server:
        assert server.app is not None
        (proxy,) = server.app[PROXY]
        assert isinstance(proxy, ProxyServer)
        port = int(server.base.rsplit(":", 1)[1])
        share_setup(server.app, port)
        for addon in proxy.addons:
            if isinstance(addon, SetupAddon):
                addon.reader_base = server.base
            elif isinstance(addon, RulesAddon):
                addon.own_port = port
        yield LanServer(server, proxy)


@contextlib.asynccontextmanager
async def phone(*flags: str) -> AsyncIterator[Page]:
    """Chromium as a phone that does not use the proxy (yet)."""
    if not CHROMIUM.exists():
        pytest.skip("/usr/bin/chromium is not installed")
    browser = Chromium(extra_flags=flags)
    try:
        await browser.start()
        page = await browser.new_page()
        await phone_size(page)
        yield page
    finally:
        await browser.close()


async def phone_size(page: Page) -> None:
    await page.set_viewport(375, 812, True)
    await page.send("Emulation.setUserAgentOverride", {"userAgent": ANDROID})


async def shown_qr(page: Page) -> dict[str, object]:
    """The page's QR code: its SVG and its size on screen."""
    return dict(
        await page.evaluate(
            "(() => { const q = document.querySelector('.qr-share svg.qr');"
            " if (!q) return {}; const r = q.getBoundingClientRect();"
            " return {svg: q.outerHTML, width: r.width, height: r.height, right: r.right}; })()"
        )
    )


async def small_controls(page: Page, selector: str) -> list[str]:
    """The visible controls under `selector` smaller than a 44 px touch target."""
    return list(
        await page.evaluate(
            f"[...document.querySelectorAll({selector!r})]"
            ".filter(e => e.offsetParent !== null)"
            ".filter(e => { const r = e.getBoundingClientRect(); return r.height < 44; })"
            ".map(e => e.outerHTML.slice(0, 80))"
        )
    )


def same_svg(shown: str, url: str) -> bool:
    """The SVG on the page draws the QR code of `url`: its title and every path's outline are
    segno's (Chromium writes `<path …></path>` for segno's `<path …/>`)."""

    def parts(svg: str) -> list[str]:
        return re.findall(r'<title>[^<]*</title>|\bd="[^"]*"', svg)

    return bool(shown) and parts(shown) == parts(lan.qr_svg(url))


async def test_landing_page_shows_the_qr_code_of_the_setup_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with lan_server(tmp_path, monkeypatch) as running, phone() as page:
        await page.navigate(running.server.base + "/")
        qr = await shown_qr(page)
        assert same_svg(str(qr["svg"]), running.qr_url)
        assert float(str(qr["width"])) >= 150 and qr["width"] == qr["height"]  # big enough to scan
        assert float(str(qr["right"])) <= 375
        assert running.qr_url in await text_of(page)
        assert await page.evaluate("document.documentElement.scrollWidth") <= 375
        await page.evaluate("document.querySelector('.qr-share').scrollIntoView()")
        await page.screenshot(SCREENSHOTS / "proxy-lan-landing-375.png")


async def test_the_qr_codes_page_before_the_proxy_is_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with lan_server(tmp_path, monkeypatch) as running, phone() as page:
        # the QR code's page, on the address the test server listens on (127.0.0.1, same port)
        await page.navigate(running.qr_url.replace(LAN_ADDRESS, "127.0.0.1"))
        text = await text_of(page)
        assert "Set up readerproxy" in text and "Not through the proxy yet" in text
        assert f"Server 127.0.0.1, port {running.proxy.port}" in text.replace("\n", " ")
        assert "Android" in await page.evaluate("document.querySelector('details[open] summary').textContent")
        links = await page.evaluate("[...document.querySelectorAll('.downloads a')].map(a => a.href)")
        assert any(link.endswith("/ca.crt") for link in links)
        assert await page.evaluate("document.querySelector('.prefs-form')") is None  # later, via the proxy
        assert same_svg(str((await shown_qr(page))["svg"]), running.qr_url)
        assert await small_controls(page, ".setup-nav a, .setup-check a, .downloads a, summary") == []
        assert await page.evaluate("document.documentElement.scrollWidth") <= 375
        await page.screenshot(SCREENSHOTS / "proxy-lan-direct-setup-375.png")
        # the certificate is there without the proxy, in the format the phone takes
        assert running.proxy.ca is not None
        async with aiohttp.ClientSession() as http, http.get(running.server.url("/ca.crt")) as answer:
            assert answer.status == 200 and await answer.read() == der(running.proxy.ca.cert)


@pytest.mark.parametrize("trusted", [False, True], ids=["before-trust", "after-trust"])
async def test_check_step_through_the_proxy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, trusted: bool
) -> None:
    async with lan_server(tmp_path, monkeypatch) as running:
        assert running.proxy.ca is not None
        flags = (f"--ignore-certificate-errors-spki-list={running.proxy.ca.spki_sha256}",) if trusted else ()
        async with browser_through(running, *flags) as (_, page):
            await phone_size(page)
            await page.navigate(f"{SETUP}/")
            connected = await page.evaluate("document.getElementById('proxy-check').textContent")
            assert "You're connected" in connected
            state = await wait_for(page, "document.getElementById('https-check').dataset.state", 15)
            assert state == ("trusted" if trusted else "untrusted")
            line = await page.evaluate("document.getElementById('https-check').textContent")
            if trusted:
                assert "This device trusts readerproxy's certificate" in line
            else:
                assert "does not trust readerproxy's certificate yet" in line and "install it" in line
            # the same QR code as the landing page, for the next device
            assert same_svg(str((await shown_qr(page))["svg"]), running.qr_url)
            assert await small_controls(page, ".setup-nav a, .setup-check a, .downloads a, summary") == []
            assert await page.evaluate("document.documentElement.scrollWidth") <= 375
            name = "trusted" if trusted else "untrusted"
            await page.screenshot(SCREENSHOTS / f"proxy-lan-check-{name}-375.png")
            await page.evaluate("document.querySelector('.qr-share').scrollIntoView()")
            await page.screenshot(SCREENSHOTS / f"proxy-lan-setup-qr-{name}-375.png")
