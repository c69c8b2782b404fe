"""The browser service (readerproxy/web/browser.py) with the real Chromium: the pool bound, a crash and
the restart after it, a missing browser, and the SSRF guard on what a rendered page asks for."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from selectolax.lexbor import LexborHTMLParser
from support.reader_server import REPO, serve, test_settings
from support.upstream import Upstream

from readerproxy.web.browser import BrowserService, BrowserSettings
from readerproxy.web.fetch import Fetcher, FetchSettings
from readerproxy.web.server import READER

pytestmark = pytest.mark.browser


@contextlib.asynccontextmanager
async def _service(
    executable: str, fetcher: Fetcher | None = None, **settings: Any
) -> AsyncIterator[BrowserService]:
    """A browser service of its own, closed afterwards."""
    service = BrowserService(BrowserSettings(executable=executable, **settings), fetcher)
    try:
        yield service
    finally:
        await service.close()


async def test_the_browser_killed_mid_request_then_the_next_request_succeeds(
    upstream: Upstream, http: aiohttp.ClientSession, chromium_path: str
) -> None:
    async with serve(test_settings()) as server:
        service = server.app[READER].browser  # type: ignore[index]
        # the page's stylesheet answers after 1.5 s, so the render is still open when the browser dies
        page = (REPO / "tests" / "fixtures" / "visual_columns.html").read_text()
        slow = page.replace('href="visual_columns.css"', 'href="visual_columns.css?delay=1.5"')
        target = server.url("/api/extract", url=upstream.url("/fixture/visual_columns.html"), algo="visual")
        request = asyncio.create_task(http.post(target, data=slow, headers={"Content-Type": "text/html"}))
        for _ in range(200):  # until the tab waits for the slow stylesheet
            if service.open_pages and service.pid:
                break
            await asyncio.sleep(0.05)
        pid = service.pid
        assert pid is not None and service.open_pages == 1
        os.kill(pid, signal.SIGKILL)
        async with await request as response:
            error = await response.json()
        assert response.status == 503 and error["error"]["kind"] == "browser_unavailable"
        assert error["error"]["message"].startswith("visual rendering is unavailable:")
        url = upstream.url("/fixture/visual_columns.html")
        async with http.get(server.url("/api/extract", url=url, algo="visual")) as response:
            data = await response.json()
        assert response.status == 200 and "Glacier garden cinder" in data["text"]
        assert service.pid not in (None, pid) and service.restarts == 1


async def test_twenty_concurrent_renders_stay_within_the_pool_bound(
    upstream: Upstream, http: aiohttp.ClientSession, chromium_path: str
) -> None:
    async with serve(
        test_settings(browser_pages=2, extract_queue=64, render_queue=64, render_per_client=2)
    ) as server:
        service = server.app[READER].browser  # type: ignore[index]
        page = (REPO / "tests" / "fixtures" / "visual_columns.html").read_text()
        url = upstream.url("/fixture/visual_columns.html")
        tabs_seen: list[int] = []

        async def post(i: int) -> int:
            body = page.replace("Between two columns", f"Between two columns {i}")
            target = server.url("/api/extract", url=url, algo="visual")
            async with http.post(target, data=body, headers={"Content-Type": "text/html"}) as response:
                await response.read()
                return response.status

        async def watch() -> None:
            while True:
                browser = service._browser
                if browser is not None and browser.alive:
                    targets = await browser.send("Target.getTargets")
                    tabs_seen.append(sum(1 for t in targets["targetInfos"] if t["type"] == "page"))
                await asyncio.sleep(0.02)

        watcher = asyncio.create_task(watch())
        try:
            statuses = await asyncio.gather(*(post(i) for i in range(20)))
        finally:
            watcher.cancel()
        assert statuses == [200] * 20
        assert service.renders == 20 and service.peak_pages == 2
        # about:blank of the browser itself plus at most two render tabs
        assert tabs_seen and max(tabs_seen) <= 3


async def test_a_missing_browser_is_a_503_at_once_and_visual_is_listed_unavailable(
    upstream: Upstream, http: aiohttp.ClientSession
) -> None:
    async with serve(test_settings(browser="/nonexistent/chromium")) as server:
        url = upstream.url("/article")
        fetched = upstream.count("/article")
        bounded = aiohttp.ClientTimeout(total=10)  # a hang fails the test instead of stalling it
        async with http.get(server.url("/api/extract", url=url, algo="visual"), timeout=bounded) as response:
            error = await response.json()
        assert response.status == 503 and server.app[READER].browser.pid is None  # type: ignore[index, union-attr]
        assert error["error"]["kind"] == "browser_unavailable"
        assert "no browser at /nonexistent/chromium" in error["error"]["message"]
        async with http.get(server.read_url(url, render="1")) as response:
            page = await response.text()
        assert response.status == 503 and "Visual rendering is unavailable" in page
        assert upstream.count("/article") == fetched  # refused before anything was fetched
        async with http.get(server.url("/api/algorithms")) as response:
            listing = await response.json()
        assert listing["visual"]["available"] is False and "no browser" in listing["visual"]["reason"]
        assert all(entry["available"] for name, entry in listing.items() if name != "visual")
        async with http.get(server.url("/")) as response:
            landing = await response.text()
        option = LexborHTMLParser(landing).css_first('option[value="visual"]')
        assert option is not None and "disabled" in option.attributes  # the menu's friendly name, greyed out
        assert (option.text() or "").endswith("(unavailable)")
        async with http.get(server.url("/api/extract", url=url, algo="heuristic")) as response:
            assert response.status == 200  # every other algorithm is unaffected
    out = subprocess.run(
        [sys.executable, "-m", "readerproxy.cli", "algorithms", "--browser", "/nonexistent/chromium"],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        check=True,
    ).stdout
    visual_line = next(line for line in out.splitlines() if line.startswith("visual"))
    assert "[unavailable: no browser at /nonexistent/chromium" in visual_line
    assert "unavailable" not in next(line for line in out.splitlines() if line.startswith("heuristic"))


async def test_a_render_of_a_refused_address_is_refused(
    upstream: Upstream, http: aiohttp.ClientSession, chromium_path: str
) -> None:
    guarded = FetchSettings(allow_private=False)
    async with serve(test_settings(fetch=guarded)) as server:
        service = server.app[READER].browser  # type: ignore[index]
        for target in ("http://10.0.0.1/story", "http://169.254.169.254/latest/meta-data/"):
            async with http.get(
                server.url("/api/extract", url=target, algo="visual", render="1")
            ) as response:
                error = await response.json()
            assert response.status == 403 and error["error"]["kind"] == "refused"
        assert service.pid is None  # nothing was rendered


async def test_subresources_go_through_the_guard_and_other_hosts_are_blocked(
    upstream: Upstream, chromium_path: str
) -> None:
    page = (
        '<html><head><link rel="stylesheet" href="/fixture/visual_columns.css">'
        '<link rel="stylesheet" href="http://elsewhere.example/x.css"></head>'
        "<body><p>Some text for the page.</p><img src='/binary'></body></html>"
    )
    url = upstream.url("/fixture/page.html")
    css, image = upstream.count("/fixture/visual_columns.css"), upstream.count("/binary")
    async with (
        Fetcher(FetchSettings(allow_private=False)) as guarded,
        _service(chromium_path, guarded) as service,
    ):
        refused = await service.render(url, page.encode(), "text/html", layout=True)
    assert refused.requests.fulfilled == 1 and refused.requests.blocked >= 2
    assert upstream.count("/fixture/visual_columns.css") == css  # the guard refused loopback
    async with (
        Fetcher(FetchSettings(allow_private=True)) as fetcher,
        _service(chromium_path, fetcher) as service,
    ):
        allowed = await service.render(url, page.encode(), "text/html", layout=True)
    assert upstream.count("/fixture/visual_columns.css") == css + 1
    assert upstream.count("/binary") == image  # images are blocked by default
    assert allowed.requests.fulfilled == 2 and allowed.layout is not None


async def test_a_rendered_script_cannot_reach_an_address_past_the_interception(
    upstream: Upstream, chromium_path: str
) -> None:
    """WebSockets are not seen by the `Fetch` domain and IP literals by no resolver: neither reaches."""
    echo = upstream.url("/echo")
    socket_url = "ws://" + echo.removeprefix("http://")
    page = (
        "<html><body><p id='out'>waiting</p><script>"
        f"var ws = new WebSocket({socket_url!r});"
        "ws.onerror = function () { document.getElementById('out').textContent = 'socket failed'; };"
        f"fetch({echo!r}, {{method: 'POST', body: 'x'}}).catch(function () {{}});"
        "</script></body></html>"
    )
    before = upstream.count("/echo")
    async with (
        Fetcher(FetchSettings(allow_private=True)) as fetcher,
        _service(chromium_path, fetcher, settle_ms=500) as service,
    ):
        rendered = await service.render(
            "http://page.test/story", page.encode(), "text/html", javascript=True, layout=False
        )
    assert "socket failed" in rendered.html
    assert upstream.count("/echo") == before


async def test_a_page_the_browser_cannot_load_is_a_502_not_an_unavailable_browser(
    upstream: Upstream, chromium_path: str
) -> None:
    from readerproxy.web.browser import RenderFailed

    async with _service(chromium_path) as service:
        with pytest.raises(RenderFailed) as failed:
            # an address that is no web page: the browser refuses to navigate there
            await service.render("ftp://page.test/a", b"<p>x</p>", "text/html", layout=True)
        assert failed.value.status == 502 and failed.value.kind == "render_failed"
        page = await service.render(upstream.url("/fixture/x.html"), b"<p>fine</p>", "text/html")
        assert "fine" in page.html and service.restarts == 0
