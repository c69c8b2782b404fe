"""Blocked hosts explained over HTTPS: with `--intercept-https`, a CONNECT to a
host on the block list is accepted (no connection to the site) and the requests inside the TLS
connection get the same readable 403 as over plain HTTP; a CONNECT the proxy would not intercept
gets the 403 itself. The client is aiohttp trusting the proxy's test CA; the page at 375 and 1280 px
in headless Chromium is in `test_blocked_https_host_reads_as_a_page_in_chromium`.
"""

from __future__ import annotations

import ssl
from pathlib import Path

import aiohttp
import pytest
from support.chromium import SCREENSHOTS
from support.proxy_browser import browser_through, text_of
from support.upstream import Upstream
from test_proxy import HTML_ACCEPT, raw, running_proxy

from readerproxy.proxy.tls import CertificateAuthority

REASON = "Blocked by readerproxy: ads.tracker.test is on the block list (tracker.test)."


async def test_a_blocked_https_host_is_answered_inside_the_intercepted_tunnel(
    tmp_path: Path, upstream: Upstream
) -> None:
    ca = CertificateAuthority.load_or_create(tmp_path / "ca")
    trust = ssl.create_default_context(cafile=str(ca.cert_path))
    # tracker.test is resolved by nobody: the blocked tunnel never reaches for the site
    async with running_proxy(ca=ca, block_hosts="tracker.test") as proxy, aiohttp.ClientSession() as http:
        async with http.get(
            "https://ads.tracker.test/story", proxy=proxy.url, ssl=trust, headers={"Accept": HTML_ACCEPT}
        ) as r:
            page = await r.text()
            assert r.status == 403 and r.content_type == "text/html"
        assert f"<p>{REASON}</p>" in page and '<meta name="viewport"' in page
        async with http.get("https://ads.tracker.test/pixel.gif", proxy=proxy.url, ssl=trust) as r:
            assert r.status == 403 and await r.text() == REASON + "\n"  # not a navigation: one line
        assert proxy.metric("blocked") == 2 and proxy.metric("error") == 0


async def test_a_blocked_host_spared_from_interception_is_refused_on_the_connect(tmp_path: Path) -> None:
    ca = CertificateAuthority.load_or_create(tmp_path / "ca")
    async with running_proxy(ca=ca, block_hosts="tracker.test", ignore_hosts="ads.tracker.test") as proxy:
        answer = await raw(
            proxy,
            b"CONNECT ads.tracker.test:443 HTTP/1.1\r\nHost: ads.tracker.test:443\r\nConnection: close\r\n\r\n",
        )
    assert answer.startswith(b"HTTP/1.1 403 ") and REASON.encode() in answer
    assert proxy.metric("blocked") == 1


@pytest.mark.browser
async def test_blocked_https_host_reads_as_a_page_in_chromium(tmp_path: Path) -> None:
    ca = CertificateAuthority.load_or_create(tmp_path / "ca")
    async with (
        running_proxy(ca=ca, block_hosts="tracker.test") as proxy,
        browser_through(proxy, f"--ignore-certificate-errors-spki-list={ca.spki_sha256}") as (_, page),
    ):
        for width, height, mobile in ((375, 812, True), (1280, 900, False)):
            await page.set_viewport(width, height, mobile)
            await page.navigate("https://ads.tracker.test/story")
            assert await text_of(page) == REASON  # not Chromium's "This site can't be reached"
            assert await page.evaluate("location.protocol") == "https:"
            assert await page.evaluate("document.documentElement.scrollWidth") <= width
            size = await page.evaluate("parseFloat(getComputedStyle(document.body).fontSize)")
            assert size >= 16  # readable on a phone without zooming
            await page.screenshot(SCREENSHOTS / f"proxy-blocked-https-{width}.png")
    assert proxy.metric("blocked") >= 2


@pytest.mark.browser
async def test_without_interception_the_setup_page_says_what_a_blocked_https_site_looks_like() -> None:
    from test_proxy_setup import setup_proxy

    async with (
        setup_proxy(block_hosts="tracker.test") as proxy,
        browser_through(proxy) as (_, page),
    ):
        await page.set_viewport(375, 812, True)
        await page.navigate("http://readerproxy/")
        note = await page.evaluate("document.getElementById('blocked-https').innerText")
        assert "ERR_TUNNEL_CONNECTION_FAILED" in note and "--intercept-https" in note
        assert await page.evaluate("document.documentElement.scrollWidth") <= 375
        await page.evaluate("document.getElementById('blocked-https').scrollIntoView()")
        await page.screenshot(SCREENSHOTS / "proxy-setup-blocked-note-375.png")
    async with (  # no block list: no note
        setup_proxy() as proxy,
        aiohttp.ClientSession() as http,
        http.get("http://readerproxy/", proxy=proxy.url) as r,
    ):
        assert 'id="blocked-https"' not in await r.text()
