"""Proxy mode with real headless Chromium (`--proxy-server`): the browser reaches the upstream test
site as `news.test` / `secure.test` (the proxy's `--resolve` map), on loopback only."""

from __future__ import annotations

import asyncio
import hashlib
import json
import tracemalloc
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import quote_plus

import pytest
from support.chromium import Page
from support.proxy_browser import browser_through, text_of
from support.upstream import Upstream
from test_proxy import running_proxy
from test_proxy_transport import Site, serve_site

from readerproxy.proxy.addons import MARKER
from readerproxy.proxy.tls import CertificateAuthority

pytestmark = pytest.mark.browser


async def test_article_reader_view_and_the_way_back(upstream: Upstream) -> None:
    async with running_proxy() as proxy, browser_through(proxy) as (_, page):
        await page.navigate(f"http://news.test:{upstream.port}/article")
        assert "The Upstream Test Article" in await text_of(page)
        assert "Copyright the upstream site" not in await text_of(page)
        # the reader view's own stylesheet loaded from /.readerproxy/ on the same origin
        sheets = await page.evaluate("[...document.styleSheets].map(s => s.href + ':' + s.cssRules.length)")
        assert any("/.readerproxy/static/" in s and not s.endswith(":0") for s in sheets), sheets
        back = await page.evaluate("document.querySelector('a.original-top').href")
        assert back == f"http://news.test:{upstream.port}/article?{MARKER}"
        await page.navigate(back)
        assert "Copyright the upstream site" in await text_of(page)  # the original page
    assert proxy.metric("reader_view") >= 1


async def test_non_article_page_loads_its_image_and_stylesheet(upstream: Upstream) -> None:
    before_css, before_png = upstream.count("/plain.css"), upstream.count("/binary")
    async with running_proxy() as proxy, browser_through(proxy) as (_, page):
        await page.navigate(f"http://news.test:{upstream.port}/plain")
        assert "Not an article" in await text_of(page)
        assert (
            await page.evaluate("getComputedStyle(document.getElementById('title')).color") == "rgb(1, 2, 3)"
        )
        assert await page.evaluate("document.getElementById('pixel').naturalWidth") == 1
    assert upstream.count("/plain.css") == before_css + 1
    assert upstream.count("/binary") == before_png + 1
    assert proxy.metric("reader_view") == 0


async def test_post_form_arrives_upstream_intact(upstream: Upstream) -> None:
    async with running_proxy() as proxy, browser_through(proxy) as (browser, page):
        await page.navigate(f"http://news.test:{upstream.port}/form")
        loaded = browser.subscribe("Page.loadEventFired", page.session)
        await page.evaluate("document.getElementById('f').submit()")
        await asyncio.wait_for(loaded.get(), 30)
        data = json.loads(await text_of(page))
    expected = ("name=" + quote_plus("Zoë & co") + "&text=" + quote_plus("line one\r\nline two")).encode()
    assert data["method"] == "POST"
    assert (data["length"], data["sha256"]) == (len(expected), hashlib.sha256(expected).hexdigest())


async def test_20mb_download_streams_with_bounded_memory(upstream: Upstream, tmp_path: Path) -> None:
    async with running_proxy() as proxy, browser_through(proxy) as (browser, page):
        await browser.send(
            "Browser.setDownloadBehavior",
            {"behavior": "allow", "downloadPath": str(tmp_path), "eventsEnabled": True},
        )
        progress = browser.subscribe("Browser.downloadProgress")
        tracemalloc.start()
        try:
            await page.send("Page.navigate", {"url": f"http://news.test:{upstream.port}/download?mb=20"})
            state: dict[str, Any] = {}
            async with asyncio.timeout(60):
                while state.get("state") not in ("completed", "canceled"):
                    state = await progress.get()
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert state["state"] == "completed"
    files = list(tmp_path.iterdir())
    assert len(files) == 1 and files[0].stat().st_size == 20 * 1024 * 1024
    # proxy and upstream (same process) together never held more than a few chunks of the 20 MB
    assert peak < 4 * 1024 * 1024, peak


async def test_https_through_a_plain_tunnel(tls_upstream: Upstream) -> None:
    async with (
        running_proxy() as proxy,
        browser_through(proxy, f"--ignore-certificate-errors-spki-list={tls_upstream.ca_spki}") as (_, page),
    ):
        await page.navigate(f"https://secure.test:{tls_upstream.port}/article")
        assert "Copyright the upstream site" in await text_of(page)  # not read: a tunnel
    assert proxy.metric("tunnelled") >= 1


async def test_intercepted_https_reader_view_and_bad_certificate(
    tls_upstream: Upstream, tmp_path: Path
) -> None:
    ca = CertificateAuthority.load_or_create(tmp_path)
    async with (
        running_proxy(ca=ca, upstream_ca=tls_upstream.ca_file) as proxy,
        browser_through(proxy, f"--ignore-certificate-errors-spki-list={ca.spki_sha256}") as (_, page),
    ):
        await page.navigate(f"https://secure.test:{tls_upstream.port}/article")
        text = await text_of(page)
        assert "The Upstream Test Article" in text and "Copyright the upstream site" not in text
        await page.navigate(f"https://wrong.test:{tls_upstream.port}/article")
        assert "certificate" in (await text_of(page)).lower()
    assert proxy.metric("reader_view") >= 1 and proxy.metric("error") >= 1


async def test_407_without_credentials_then_the_page_with_them(upstream: Upstream) -> None:
    async with running_proxy(auth="reader:s3cret") as proxy, browser_through(proxy) as (browser, page):
        await page.send("Fetch.enable", {"handleAuthRequests": True})
        challenges = browser.subscribe("Fetch.authRequired", page.session)
        paused = browser.subscribe("Fetch.requestPaused", page.session)

        async def answer() -> dict[str, Any]:
            while True:
                waiting = [asyncio.ensure_future(q.get()) for q in (challenges, paused)]
                done, pending = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
                for task in pending:
                    task.cancel()
                event = done.pop().result()
                if "authChallenge" in event:
                    await page.send(
                        "Fetch.continueWithAuth",
                        {
                            "requestId": event["requestId"],
                            "authChallengeResponse": {
                                "response": "ProvideCredentials",
                                "username": "reader",
                                "password": "s3cret",
                            },
                        },
                    )
                    return event
                await page.send("Fetch.continueRequest", {"requestId": event["requestId"]})

        answering = asyncio.create_task(answer())
        await page.send("Page.navigate", {"url": f"http://news.test:{upstream.port}/article"})
        challenge = await asyncio.wait_for(answering, 30)
        assert challenge["authChallenge"]["source"] == "Proxy"
        for _ in range(100):
            if "The Upstream Test Article" in (
                await page.evaluate("document.body ? document.body.innerText : ''")
            ):
                break
            await asyncio.sleep(0.1)
        assert "The Upstream Test Article" in await text_of(page)
    assert proxy.metric("refused") >= 1


# ---- transport: interception that spares, WebSockets, zstd, slow pages ----------------------------


@pytest.fixture
async def site(tmp_path: Path) -> AsyncIterator[Site]:
    """The transport tests' site (`tests/proxy/test_proxy_transport.py`) on http and https."""
    async with serve_site(tmp_path / "site") as running:
        yield running


async def wait_for_title(page: Page, prefix: str, seconds: float = 10.0) -> str:
    title = ""
    for _ in range(int(seconds / 0.05)):
        title = str(await page.evaluate("document.title"))
        if title.startswith(prefix):
            break
        await asyncio.sleep(0.05)
    return title


async def test_ws_and_wss_through_interception(site: Site, tmp_path: Path) -> None:
    ca = CertificateAuthority.load_or_create(tmp_path / "ca")
    async with (
        running_proxy(ca=ca, upstream_ca=site.ca_file) as proxy,
        browser_through(proxy, f"--ignore-certificate-errors-spki-list={ca.spki_sha256}") as (_, page),
    ):
        await page.navigate(site.https("/ws-page"))  # wss inside the intercepted tunnel
        assert await wait_for_title(page, "echo") == "echo: hello over https:"
        # Chromium sends ws:// through CONNECT too: plain HTTP inside a tunnel is met without TLS
        await page.navigate(site.http("/ws-page"))
        assert await wait_for_title(page, "echo") == "echo: hello over http:"


async def test_ignore_hosts_keeps_the_upstream_certificate(site: Site, tmp_path: Path) -> None:
    ca = CertificateAuthority.load_or_create(tmp_path / "ca")
    spkis = f"{ca.spki_sha256},{site.ca_spki}"
    async with (
        running_proxy(ca=ca, upstream_ca=site.ca_file, ignore_hosts="secure.test") as proxy,
        browser_through(proxy, f"--ignore-certificate-errors-spki-list={spkis}") as (browser, page),
    ):
        await page.send("Network.enable")
        responses = browser.subscribe("Network.responseReceived", page.session)
        await page.navigate(site.https("/article"))
        assert "Copyright the upstream site" in await text_of(page)  # not read
        event = await asyncio.wait_for(responses.get(), 10)
    issuer = event["response"]["securityDetails"]["issuer"]
    assert issuer == "readerproxy transport test CA", issuer  # the site's own, not readerproxy's


async def test_zstd_page_becomes_a_reader_view(site: Site) -> None:
    async with running_proxy() as proxy, browser_through(proxy) as (_, page):
        await page.navigate(site.http("/zstd"))
        text = await text_of(page)
    assert "The Upstream Test Article" in text and "Copyright the upstream site" not in text
    assert proxy.metric("reader_view") >= 1


async def test_trickling_page_renders_before_its_upstream_finishes(site: Site) -> None:
    """Proves the proxy streams a page the upstream sends slowly: the browser shows the page's first
    piece (`#first`) while the page's last words are not in it yet (the upstream sends them about 6 s
    after the first piece), then the rest as it comes. Waits are bounded only to fail a hang."""
    # one evaluation, atomic in the page: is the first piece shown, is the last one in the document?
    probe = (
        "[!!document.getElementById('first'),"
        " (document.body?.innerText ?? '').includes('Copyright the upstream site')]"
    )
    async with running_proxy() as proxy, browser_through(proxy) as (_, page):
        await page.send("Page.navigate", {"url": site.http("/trickle?s=6")})

        async def first_piece_shown() -> list[bool]:
            while not (state := await page.evaluate(probe))[0]:
                await asyncio.sleep(0.02)
            return list(state)

        shown, complete = await asyncio.wait_for(first_piece_shown(), 60)
        assert shown and not complete  # rendered while the upstream was still sending

        async def rest_shown() -> None:  # and the rest of the page as it comes
            while "Copyright the upstream site" not in await text_of(page):
                await asyncio.sleep(0.05)

        await asyncio.wait_for(rest_shown(), 60)
