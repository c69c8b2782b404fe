"""A render started through proxy mode stops when the browser that asked for it leaves
(docs/security.md, "a render cancelled when its client goes").

The proxy reads articles with `visual`, which renders each page in the browser service first. The
page links a stylesheet its site never finishes sending, so its render waits on the page's load
until the render deadline (60 s here). The client sends a navigation through the proxy, waits until
the render holds a tab, and closes its connection: the tab is closed and the page given back long
before that deadline, and another navigation through the proxy is then read as before.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import AsyncIterator, Callable

import pytest
from aiohttp import web
from support.reader_server import serve, serve_app, test_settings

from readerproxy.proxy.server import ProxyServer
from readerproxy.web.appkeys import READER
from readerproxy.web.browser import BrowserService
from readerproxy.web.fetch import FetchSettings
from readerproxy.web.server import METRICS, RENDERER

pytestmark = pytest.mark.browser

PARAGRAPH = (
    "<p>The harbour town woke early, as it always had, to the sound of boats leaving for the day's "
    "catch and gulls arguing over what the night had left on the quay. Nobody there would have "
    "called it remarkable, and yet people who left it came back, year after year, to stand on the "
    "same stones and watch the same tide come in over the same sand.</p>"
)
STORY = (
    "<!doctype html><html><head><title>The harbour town</title>{css}</head><body><article>"
    "<h1>The harbour town</h1>" + PARAGRAPH * 8 + "</article></body></html>"
)
#: How long the test waits for the abandoned render to be stopped: well under its deadline.
RENDER_DEADLINE = 60.0
STOPPED_WITHIN = 20.0


class Site:
    """An article site on 127.0.0.1 whose /never.css is never finished while the test runs."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.release = asyncio.Event()

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/story", self.story)
        app.router.add_get("/plain", self.plain)
        app.router.add_get("/never.css", self.never_css)
        return app

    async def story(self, request: web.Request) -> web.Response:
        self.counts["/story"] += 1
        css = '<link rel="stylesheet" href="/never.css">'
        return web.Response(text=STORY.format(css=css), content_type="text/html")

    async def plain(self, request: web.Request) -> web.Response:
        self.counts["/plain"] += 1
        return web.Response(text=STORY.format(css=""), content_type="text/html")

    async def never_css(self, request: web.Request) -> web.Response:
        self.counts["/never.css"] += 1
        await self.release.wait()
        return web.Response(text="p { color: black }", content_type="text/css")


@contextlib.asynccontextmanager
async def proxy_reading_with_visual(site: Site) -> AsyncIterator[tuple[ProxyServer, str, BrowserService]]:
    """The site, a reader server whose proxy reads articles with `visual`, and its browser service."""
    fetch = FetchSettings(
        connect_timeout=2.0, read_timeout=RENDER_DEADLINE, total_timeout=RENDER_DEADLINE, allow_private=True
    )
    settings = test_settings(default_algorithm="visual", render_timeout=RENDER_DEADLINE, fetch=fetch)
    async with serve_app(site.app()) as base, serve(settings) as server:
        assert server.app is not None
        app = server.app
        proxy = ProxyServer(settings, app[READER], app[RENDERER], app[METRICS])
        await proxy.start("127.0.0.1", 0)
        try:
            browser = app[READER].browser
            assert browser is not None
            yield proxy, base, browser
        finally:
            site.release.set()
            await proxy.close()


def navigation(url: str) -> bytes:
    host = url.split("/", 3)[2]
    return (
        f"GET {url} HTTP/1.1\r\nHost: {host}\r\nAccept: text/html\r\nSec-Fetch-Dest: document\r\n"
        "Connection: close\r\n\r\n"
    ).encode()


async def until(condition: Callable[[], bool], what: str, within: float) -> None:
    """Wait for `condition()` to hold, checking every 50 ms; fail naming `what` after `within` s."""
    deadline = asyncio.get_running_loop().time() + within
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, f"not within {within} s: {what}"
        await asyncio.sleep(0.05)


async def test_a_render_stops_when_the_proxy_client_leaves(chromium_path: str) -> None:
    site = Site()
    async with proxy_reading_with_visual(site) as (proxy, base, browser):
        reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
        writer.write(navigation(base + "/story"))
        await writer.drain()
        await until(lambda: site.counts["/never.css"] > 0 and browser.open_pages == 1, "a render began", 30)

        writer.close()  # the browser leaves while its page is being rendered
        await writer.wait_closed()
        await until(lambda: browser.open_pages == 0, "the abandoned render closed its tab", STOPPED_WITHIN)
        assert not site.release.is_set() and browser.waiting == 0

        # the proxy goes on reading: a page that renders whole is a reader view
        reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
        writer.write(navigation(base + "/plain"))
        await writer.drain()
        answer = await asyncio.wait_for(reader.read(), 30)
        writer.close()
        assert answer.startswith(b"HTTP/1.1 200 ") and b"x-readerproxy: reader-view" in answer.lower(), (
            answer[:400]
        )
