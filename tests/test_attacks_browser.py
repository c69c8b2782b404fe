"""Attacks on the browser service (readerproxy/web/browser.py) by the pages it renders and the clients
that ask for renders, with the real Chromium; every page and server is on loopback.

- a page whose script fetches a large resource of its own host again and again receives at most
  the render's byte budget, and makes at most its request budget of requests;
- a page that builds a huge DOM is a 413, checked in the page before anything is serialised;
- a page's script cannot send a WebRTC (STUN) packet;
- one client address cannot tie the pool up: it holds at most its share of pages, the queue is
  bounded (503 + Retry-After past it), and a render whose client went away stops at once;
- a browser killed mid-render fails that render at once, not at the deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import time
from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from support.reader_server import RunningServer, serve, serve_app, test_settings

from readerproxy.web.appkeys import READER
from readerproxy.web.browser import (
    BrowserService,
    BrowserSettings,
    BrowserUnavailable,
    RenderFailed,
    RenderTooLarge,
)
from readerproxy.web.fetch import Fetcher, FetchSettings

pytestmark = pytest.mark.browser

ARTICLE = "<p>" + "Words of an ordinary article that a reader wants to read in peace. " * 8 + "</p>"
#: A page whose script never yields: its tab is busy until it is closed.
LOOP_PAGE = (
    "<!doctype html><html><head><title>Loop</title></head><body>"
    + ARTICLE
    + "<script>while (true) {}</script></body></html>"
)
OK_PAGE = (
    f"<!doctype html><html><head><title>Fine</title></head><body><article>{ARTICLE}</article></body></html>"
)


class Site:
    """A small site of its own on 127.0.0.1: pages for the attacks, requests counted by path."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.base = ""

    def url(self, path: str) -> str:
        return self.base + path

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/loop", self.loop)
        app.router.add_get("/ok", self.ok)
        app.router.add_get("/blob", self.blob)
        app.router.add_get("/slow.css", self.slow_css)
        return app

    async def loop(self, request: web.Request) -> web.Response:
        self.counts["/loop"] += 1
        return web.Response(text=LOOP_PAGE, content_type="text/html")

    async def ok(self, request: web.Request) -> web.Response:
        self.counts["/ok"] += 1
        return web.Response(text=OK_PAGE, content_type="text/html")

    async def slow_css(self, request: web.Request) -> web.Response:
        """A stylesheet that takes 6 s: the page's load event waits for it."""
        self.counts["/slow.css"] += 1
        await asyncio.sleep(6)
        return web.Response(text="p { color: black }", content_type="text/css")

    async def blob(self, request: web.Request) -> web.Response:
        """`kb` kilobytes of octets (default 3 MB)."""
        self.counts["/blob"] += 1
        return web.Response(body=b"x" * (1024 * int(request.query.get("kb", "3072"))))


@pytest.fixture
async def site() -> AsyncIterator[Site]:
    """The attack site, served in the test's own event loop."""
    site = Site()
    async with serve_app(site.app()) as base:
        site.base = base
        yield site


@contextlib.asynccontextmanager
async def _service(executable: str, **settings: Any) -> AsyncIterator[BrowserService]:
    """A browser service with a fetcher that may read loopback (the attack site), closed after."""
    async with Fetcher(FetchSettings(allow_private=True)) as fetcher:
        service = BrowserService(BrowserSettings(executable=executable, **settings), fetcher)
        try:
            yield service
        finally:
            await service.close()


def _browser(server: RunningServer) -> BrowserService:
    """The browser service of a running in-process server."""
    assert server.app is not None
    service = server.app[READER].browser
    assert service is not None
    return service


def _client(address: str) -> aiohttp.ClientSession:
    """An HTTP client whose connections come from `address` (another loopback address: another
    client for the server's per-client shares)."""
    return aiohttp.ClientSession(connector=aiohttp.TCPConnector(local_addr=(address, 0), force_close=True))


# ---- the render's budget ---------------------------------------------------------------------------


async def test_a_page_fetching_a_large_resource_again_and_again_gets_at_most_the_byte_budget(
    site: Site, chromium_path: str
) -> None:
    """Before: 60 fetches of the page's own host were all delivered (566 MB, the server at 3.2 GB)."""
    page = (
        "<!doctype html><html><body><p id='out'>waiting</p><script>"
        "let done = 0, ok = 0;"
        "for (let i = 0; i < 60; i++) {"
        "  fetch('/blob?i=' + i).then((r) => r.arrayBuffer()).then(() => { ok++; })"
        "    .catch(() => {}).finally(() => { if (++done === 60) document.getElementById('out').textContent = 'ok ' + ok; });"
        "}</script></body></html>"
    )
    budget = 4 * 1024 * 1024
    async with _service(chromium_path, max_bytes=budget, settle_ms=3000) as service:
        rendered = await service.render(site.url("/story"), page, javascript=True, layout=False)
    delivered = rendered.requests.bytes
    assert 0 < delivered <= budget  # one 3 MB answer fits, a second would not
    assert rendered.requests.fulfilled == 2  # the document and that answer
    # 59 fetches over the budget, and the favicon request too when Chromium sends it after the
    # budget is spent (before that, it is blocked as a type not allowed): 59 or 60, by timing
    assert rendered.requests.over_budget in (59, 60)
    # what was read but not delivered is bounded too: reading stops once the budget is read, and
    # at most a few fetches are under way at once
    assert site.counts["/blob"] <= 6
    assert "ok 1" in rendered.html


async def test_a_page_making_many_requests_has_the_extra_ones_failed_unfetched(
    site: Site, chromium_path: str
) -> None:
    page = (
        "<!doctype html><html><body><p id='out'>waiting</p><script>"
        "let done = 0;"
        "for (let i = 0; i < 150; i++) {"
        "  fetch('/blob?kb=1&i=' + i).catch(() => {})"
        "    .finally(() => { if (++done === 150) document.getElementById('out').textContent = 'all done'; });"
        "}</script></body></html>"
    )
    async with _service(chromium_path, max_requests=100, settle_ms=3000) as service:
        rendered = await service.render(site.url("/story"), page, javascript=True, layout=False)
    assert "all done" in rendered.html
    assert site.counts["/blob"] == 100
    # the 50 past the budget, and a favicon request
    assert rendered.requests.fulfilled == 101 and rendered.requests.over_budget in (50, 51)


# ---- the rendered DOM's size ---------------------------------------------------------------------------


async def test_a_page_building_a_huge_dom_is_too_large_not_a_huge_answer(
    site: Site, chromium_path: str
) -> None:
    """Before: a 317-byte page returned a 102 MB JSON."""
    many = (
        "<!doctype html><html><body><script>"
        "const f = document.createDocumentFragment();"
        "for (let i = 0; i < 30000; i++) { const p = document.createElement('p'); p.textContent = i; f.append(p); }"
        "document.body.append(f);</script></body></html>"
    )
    long = (
        "<!doctype html><html><body><p id='p'></p><script>"
        "document.getElementById('p').textContent = 'x'.repeat(3 * 1024 * 1024);</script></body></html>"
    )
    settings = {"max_elements": 20000, "max_html_bytes": 2 * 1024 * 1024}
    async with _service(chromium_path, **settings) as service:
        for layout in (False, True):
            with pytest.raises(RenderTooLarge, match="30004 elements, more than the 20000"):
                await service.render(site.url("/many"), many, javascript=True, layout=layout)
            with pytest.raises(RenderTooLarge, match="larger than 2097152 bytes") as large:
                await service.render(site.url("/long"), long, javascript=True, layout=layout)
            assert large.value.status == 413 and large.value.kind == "render_too_large"
        fine = await service.render(site.url("/ok"), OK_PAGE, javascript=True, layout=True)
        assert "ordinary article" in fine.html and service.open_pages == 0


async def test_the_server_answers_413_for_a_rendered_page_over_the_dom_cap(
    site: Site, http: aiohttp.ClientSession, chromium_path: str
) -> None:
    page = (
        "<!doctype html><html><body><script>"
        "for (let i = 0; i < 3000; i++) document.body.append(document.createElement('div'));"
        "</script></body></html>"
    )
    async with serve(test_settings(render_max_elements=1000)) as server:
        target = server.url("/api/extract", url=site.url("/many"), render="1")
        async with http.post(target, data=page, headers={"Content-Type": "text/html"}) as response:
            error = await response.json()
        assert response.status == 413 and error["error"]["kind"] == "render_too_large"
        assert "elements, more than the 1000 allowed" in error["error"]["message"]


# ---- WebRTC ---------------------------------------------------------------------------------------------


async def test_a_page_script_sends_no_webrtc_packet(site: Site, chromium_path: str) -> None:
    """Before: STUN and TURN packets left the browser during a render."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    listener.bind(("127.0.0.1", 0))
    listener.setblocking(False)
    port = listener.getsockname()[1]
    ice = f"{{iceServers: [{{urls: 'stun:127.0.0.1:{port}'}}, {{urls: 'turn:127.0.0.1:{port}?transport=udp', username: 'u', credential: 'p'}}]}}"
    attempt = (
        "(function (w) {"
        "  try {"
        "    const Peer = w.RTCPeerConnection || w.webkitRTCPeerConnection;"
        "    if (!Peer) return 'no webrtc';"
        f"    const pc = new Peer({ice});"
        "    pc.createDataChannel('x');"
        "    pc.createOffer().then((offer) => pc.setLocalDescription(offer));"
        "    return 'webrtc on';"
        "  } catch (e) { return 'failed: ' + e; }"
        "})"
    )
    page = (
        "<!doctype html><html><body><p id='top'></p><p id='frame'></p><script>"
        f"document.getElementById('top').textContent = 'top ' + {attempt}(window);"
        "const f = document.createElement('iframe'); document.body.append(f);"
        f"document.getElementById('frame').textContent = 'frame ' + {attempt}(f.contentWindow);"
        "</script></body></html>"
    )
    try:
        async with _service(chromium_path, settle_ms=2000) as service:
            rendered = await service.render(site.url("/rtc"), page, javascript=True, layout=False)
        received: list[bytes] = []
        with contextlib.suppress(BlockingIOError):
            while True:
                received.append(listener.recv(2048))
    finally:
        listener.close()
    assert received == []
    assert "top no webrtc" in rendered.html and "frame no webrtc" in rendered.html


# ---- fair shares, a bounded queue, cancellation -------------------------------------------------------


async def test_one_client_abandoning_endless_renders_does_not_hold_up_another(
    site: Site, chromium_path: str
) -> None:
    """Before: twelve render=1 requests for an endless loop, each abandoned after 1 s, made another
    address wait 88.7 s for its render."""
    async with serve(test_settings(browser_pages=2, render_timeout=15)) as server:
        service = _browser(server)
        statuses: list[int] = []
        retry_after: list[str] = []
        async with _client("127.0.0.4") as warm:  # the browser is running before the attack
            query = {"url": site.url("/ok?warm=1"), "render": "1"}
            async with warm.get(server.url("/api/extract", **query)) as response:
                assert response.status == 200

        async def hostile(session: aiohttp.ClientSession, i: int) -> None:
            target = server.url("/api/extract", url=site.url(f"/loop?i={i}"), render="1")
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(1):
                    async with session.get(target) as response:
                        statuses.append(response.status)
                        retry_after.append(response.headers.get("Retry-After", ""))
                        await response.read()

        async with _client("127.0.0.2") as attacker:
            await asyncio.gather(*(hostile(attacker, i) for i in range(12)))
        # the attacker got its share and a bounded queue; the rest were refused at once
        assert statuses and set(statuses) == {503} and all(retry_after)
        assert service.peak_pages == 1  # its share: half the pages
        for _ in range(60):  # the abandoned renders close their tabs
            if service.open_pages == 0:
                break
            await asyncio.sleep(0.05)
        assert service.open_pages == 0 and service.waiting == 0
        async with _client("127.0.0.3") as reader:
            for algo in ("heuristic", "visual"):
                began = time.monotonic()
                query = {"url": site.url(f"/ok?a={algo}"), "render": "1", "algo": algo}
                async with reader.get(server.url("/api/extract", **query)) as response:
                    data = await response.json()
                assert response.status == 200 and "ordinary article" in data["text"]
                assert time.monotonic() - began < 12  # loose: a loaded host slows a render to ~5 s


async def test_a_client_holding_its_share_leaves_the_rest_of_the_pool_to_others(
    site: Site, chromium_path: str
) -> None:
    # the attacker's pages loop until the render deadline (20 s): the reader answered well before it
    # was not queued behind them (the bound is loose: a loaded machine slows a render to ~5 s)
    async with serve(test_settings(browser_pages=2, render_timeout=20)) as server:
        service = _browser(server)
        async with _client("127.0.0.2") as attacker, _client("127.0.0.3") as reader:
            target = server.url("/api/extract", url=site.url("/loop"), render="1", refresh="1")
            held = [asyncio.create_task(attacker.get(target)) for _ in range(3)]
            for _ in range(100):
                if service.open_pages == 1 and service.waiting == 2:
                    break
                await asyncio.sleep(0.05)
            assert service.open_pages == 1 and service.waiting == 2
            began = time.monotonic()
            async with reader.get(server.url("/api/extract", url=site.url("/ok"), render="1")) as response:
                assert response.status == 200
            assert time.monotonic() - began < 12
            for task in held:
                task.cancel()
            await asyncio.gather(*held, return_exceptions=True)


# ---- a crashed browser ---------------------------------------------------------------------------------


async def test_a_browser_killed_mid_render_fails_the_render_at_once(site: Site, chromium_path: str) -> None:
    """Before: the render waited for the full deadline (a 504 after 15 s)."""
    page = f'<html><head><link rel="stylesheet" href="/slow.css"></head><body>{ARTICLE}</body></html>'
    async with _service(chromium_path, timeout=15) as service:
        render = asyncio.create_task(service.render(site.url("/story"), page))
        for _ in range(200):  # until the tab waits for the stylesheet
            if site.counts["/slow.css"] and service.pid:
                break
            await asyncio.sleep(0.05)
        pid = service.pid
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        began = time.monotonic()
        with pytest.raises(BrowserUnavailable, match="stopped during the render"):
            await render
        assert time.monotonic() - began < 8  # well before the 15 s deadline (loose: noisy hosts)
        assert service.open_pages == 0
        after = await service.render(site.url("/ok"), OK_PAGE, javascript=True, layout=False)
        assert "ordinary article" in after.html and service.restarts == 1


async def test_a_page_growing_its_dom_without_end_has_its_tab_killed_not_the_browser(
    site: Site, chromium_path: str
) -> None:
    """Before: with 500k paragraphs Chromium reached 4.9 GB before the 504; a DOM is no script heap,
    so `--js-flags` alone does not bound it."""
    page = (
        "<!doctype html><html><body><script>"
        "for (let i = 0; ; i++) { const p = document.createElement('p');"
        " p.textContent = 'paragraph ' + i; document.body.append(p); }"
        "</script></body></html>"
    )
    async with _service(chromium_path, timeout=30, max_memory=300 * 1024 * 1024) as service:
        began = time.monotonic()
        with pytest.raises(RenderFailed, match="tab crashed"):
            await service.render(site.url("/grow"), page, javascript=True, layout=False)
        assert time.monotonic() - began < 25 and service.memory_kills >= 1
        after = await service.render(site.url("/ok"), OK_PAGE, javascript=True, layout=False)
        assert "ordinary article" in after.html and service.restarts == 0
