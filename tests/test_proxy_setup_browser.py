"""`http://readerproxy/` and what it sets, with real headless Chromium through the proxy: the setup
page at phone and desktop width (screenshots in artifacts/screenshots/), the CA downloaded in every
format, a preference chosen on one site applied on another, "always the original" for a site, the
PAC file as Chromium evaluates it, and no reader view of readerproxy's own pages."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import plistlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from support.chromium import CHROMIUM, SCREENSHOTS, Chromium, DevToolsError, Page
from support.upstream import Upstream
from test_proxy import RunningProxy
from test_proxy_setup import setup_proxy

from readerproxy.proxy import pac_text
from readerproxy.proxy.addons import MARKER, Addon
from readerproxy.proxy.flow import Flow
from readerproxy.proxy.tls import CertificateAuthority

pytestmark = pytest.mark.browser

SETUP = "http://readerproxy"


@contextlib.asynccontextmanager
async def browser_through(proxy: RunningProxy, *flags: str) -> AsyncIterator[tuple[Chromium, Page]]:
    """Chromium with the proxy as its HTTP proxy, loopback included."""
    if not CHROMIUM.exists():
        pytest.skip("/usr/bin/chromium is not installed")
    browser = Chromium(
        extra_flags=(
            f"--proxy-server=127.0.0.1:{proxy.proxy.port}",
            "--proxy-bypass-list=<-loopback>",
            *flags,
        )
    )
    try:
        await browser.start()
        yield browser, await browser.new_page()
    finally:
        await browser.close()


async def text_of(page: Page) -> str:
    return str(await page.evaluate("document.body.innerText"))


class Seen(Addon):
    """Records the host of every flow the proxy finished."""

    def __init__(self) -> None:
        self.hosts: list[str] = []

    async def done(self, flow: Flow) -> None:
        self.hosts.append(flow.request.host)


async def click_and_wait(page: Page, selector: str) -> None:
    """Click the first element matching `selector` and wait for the page it leads to."""
    loaded = page.browser.subscribe("Page.loadEventFired", page.session)
    await page.evaluate(f"document.querySelector({selector!r}).click()")
    await asyncio.wait_for(loaded.get(), 30)


async def test_setup_page_at_phone_and_desktop_width_and_the_ca_in_every_format(
    tmp_path: Path,
) -> None:
    ca = CertificateAuthority.load_or_create(tmp_path / "ca")
    expected = ca.cert.fingerprint(hashes.SHA256())
    downloads = tmp_path / "downloads"
    async with (
        setup_proxy(ca=ca) as proxy,
        browser_through(proxy, f"--ignore-certificate-errors-spki-list={ca.spki_sha256}") as (browser, page),
    ):
        for width, height, mobile in ((375, 812, True), (1280, 900, False)):
            await page.set_viewport(width, height, mobile)
            await page.navigate(f"{SETUP}/")
            assert "Set up readerproxy" in await text_of(page)
            assert expected.hex(":").upper() in await text_of(page)
            # nothing wider than the screen, and the stylesheets applied
            assert await page.evaluate("document.documentElement.scrollWidth") <= width
            assert (
                await page.evaluate("getComputedStyle(document.querySelector('.downloads')).display")
                == "grid"
            )
            await page.evaluate("document.querySelector('.platforms details').open = true")
            await page.screenshot(SCREENSHOTS / f"proxy-setup-{width}.png", full_page=True)
        await page.navigate(f"{SETUP}/rules")
        await page.screenshot(SCREENSHOTS / "proxy-rules-375.png")
        await page.navigate(f"{SETUP}/")
        await browser.send(
            "Browser.setDownloadBehavior",
            {"behavior": "allow", "downloadPath": str(downloads), "eventsEnabled": True},
        )
        progress = browser.subscribe("Browser.downloadProgress")
        for href in ("/ca.pem", "/ca.crt", "/ca.cer", "/readerproxy.mobileconfig"):
            await page.evaluate(f"document.querySelector('.downloads a[href=\"{href}\"]').click()")
            state: dict[str, Any] = {}
            async with asyncio.timeout(30):
                while state.get("state") not in ("completed", "canceled"):
                    state = await progress.get()
            assert state["state"] == "completed", href
    files = {path.name: path.read_bytes() for path in downloads.iterdir()}
    assert set(files) == {
        "readerproxy-ca.pem",
        "readerproxy-ca.crt",
        "readerproxy-ca.cer",
        "readerproxy.mobileconfig",
    }
    assert (
        x509.load_pem_x509_certificate(files["readerproxy-ca.pem"]).fingerprint(hashes.SHA256()) == expected
    )
    for name in ("readerproxy-ca.crt", "readerproxy-ca.cer"):
        assert x509.load_der_x509_certificate(files[name]).fingerprint(hashes.SHA256()) == expected
    (payload,) = plistlib.loads(files["readerproxy.mobileconfig"])["PayloadContent"]
    assert payload["PayloadType"] == "com.apple.security.root"
    assert x509.load_der_x509_certificate(payload["PayloadContent"]).fingerprint(hashes.SHA256()) == expected


async def test_setup_page_without_interception_offers_the_pac(upstream: Upstream) -> None:
    async with setup_proxy() as proxy, browser_through(proxy) as (_, page):
        await page.set_viewport(375, 812, True)
        await page.navigate(f"{SETUP}/")
        text = await text_of(page)
        assert "interception is off" in text and f"{SETUP}/proxy.pac" in text
        assert await page.evaluate("document.documentElement.scrollWidth") <= 375
        await page.screenshot(SCREENSHOTS / "proxy-setup-off-375.png", full_page=True)


async def test_a_preference_chosen_on_one_site_applies_on_another(upstream: Upstream) -> None:
    async with setup_proxy() as proxy, browser_through(proxy) as (_, page):
        await page.set_viewport(375, 812, True)
        await page.navigate(f"http://news.test:{upstream.port}/article")
        assert await page.evaluate("document.documentElement.dataset.theme") == "auto"
        await page.evaluate("document.querySelector('details.prefs').open = true")
        await click_and_wait(page, "a.chip.theme-dark")
        # back on the same article, now dark, and the choice kept by the proxy for this client
        assert await page.evaluate("location.href") == f"http://news.test:{upstream.port}/article"
        assert await page.evaluate("document.documentElement.dataset.theme") == "dark"
        await click_and_wait(page, 'a.chip.step.big[data-key="+"]')
        assert await page.evaluate("document.documentElement.dataset.size") == "l"
        await page.navigate(f"http://wrong.test:{upstream.port}/article")  # another site
        assert "The Upstream Test Article" in await text_of(page)
        assert await page.evaluate("document.documentElement.dataset.theme") == "dark"
        assert await page.evaluate("document.documentElement.dataset.size") == "l"
        await page.screenshot(SCREENSHOTS / "proxy-prefs-other-site-375.png")
        # and the setup page shows them
        await page.navigate(f"{SETUP}/")
        assert await page.evaluate("document.querySelector('input[name=theme][value=dark]').checked")


async def test_always_original_for_this_site(upstream: Upstream) -> None:
    article = f"http://news.test:{upstream.port}/article"
    async with setup_proxy() as proxy, browser_through(proxy) as (_, page):
        await page.navigate(article)
        assert "Copyright the upstream site" not in await text_of(page)
        assert await page.evaluate("document.querySelector('a.original-top').href") == f"{article}?{MARKER}"
        await click_and_wait(page, ".site-row a.chip:nth-of-type(2)")  # "Always original"
        assert await page.evaluate("location.href") == article
        assert "Copyright the upstream site" in await text_of(page)  # the original
        await page.navigate(article + "?again=1")  # the next page of that site too
        assert "Copyright the upstream site" in await text_of(page)
        await page.navigate(f"{SETUP}/rules")
        assert "news.test" in await text_of(page)
        await page.screenshot(SCREENSHOTS / "proxy-rules-375.png")
        await click_and_wait(page, ".rules a.chip:nth-of-type(2)")  # Remove
        await page.navigate(article)
        assert "Copyright the upstream site" not in await text_of(page)


async def test_no_reader_view_of_readerproxy_itself(upstream: Upstream) -> None:
    async with setup_proxy() as proxy, browser_through(proxy) as (_, page):
        # loopback through the proxy too (--proxy-bypass-list=<-loopback>)
        read = proxy.server.url("/read", url=upstream.url("/article"))
        await page.navigate(read)
        assert await page.evaluate("location.href") == read
        sheet = await page.evaluate("document.querySelector('link[rel=stylesheet]').getAttribute('href')")
        assert sheet.startswith("/static/")  # the reader server's own page, not a reader view of it
        assert proxy.metric("reader_view") == 0
        await page.navigate(f"{SETUP}/read?url={quote(upstream.url('/article'), safe='')}")
        assert "The Upstream Test Article" in await text_of(page)
        links = await page.evaluate("[...document.querySelectorAll('a[href]')].map(a => a.href)")
        assert not any(link.count("/read?") > 1 or "read%3Furl" in link for link in links)


async def test_pac_file_as_chromium_evaluates_it(upstream: Upstream) -> None:
    if not CHROMIUM.exists():
        pytest.skip("/usr/bin/chromium is not installed")
    async with setup_proxy() as proxy:
        pac = base64.b64encode(pac_text("127.0.0.1", proxy.proxy.port).encode()).decode()
        browser = Chromium(
            extra_flags=(f"--proxy-pac-url=data:application/x-ns-proxy-autoconfig;base64,{pac}",)
        )
        try:
            await browser.start()
            page = await browser.new_page()
            await page.navigate(f"http://news.test:{upstream.port}/article")  # through the proxy
            assert "The Upstream Test Article" in await text_of(page)
            assert proxy.metric("reader_view") >= 1
            await page.navigate(f"{SETUP}/")  # a plain host name, but readerproxy's own: the proxy
            assert "Set up readerproxy" in await text_of(page)
            hosts = Seen()
            proxy.proxy.addons.append(hosts)
            await page.navigate(proxy.server.url("/"))  # loopback: direct
            assert "Read any page, clean." in await text_of(page)
            with pytest.raises(DevToolsError, match="NAME_NOT_RESOLVED"):  # a plain name: direct
                await page.navigate("http://intranet/")
            await page.navigate(f"{SETUP}/rules")  # readerproxy's own name: through the proxy
            assert {"127.0.0.1", "intranet"}.isdisjoint(hosts.hosts) and "readerproxy" in hosts.hosts
        finally:
            await browser.close()
