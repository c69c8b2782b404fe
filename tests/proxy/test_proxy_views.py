"""Reader views remembered: a proxied article's extraction is kept in the
cache backend (memory, SQLite, Redis) by the page's digest and the algorithm, so a repeat visit to
the same bytes renders it again with no extraction, with the preferences of the moment; and a page
that streamed through because its body was late is read once it has arrived, so the next visit and
the bookmarklet open its reader view at once.

Real parts: a small aiohttp site of this module on 127.0.0.1 (`news.test` through `--resolve`), the
proxy and reader server in this process, extraction workers, redis-server for the Redis backend.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import aiohttp
import pytest
from aiohttp import web
from support.reader_server import serve_app
from support.upstream import ARTICLE_HTML, ARTICLE_TITLE
from test_proxy import RunningProxy, running_proxy
from test_proxy_setup import get as navigation

from readerproxy.proxy.addons import ReaderAddon
from readerproxy.proxy.setup import SETUP_ORIGIN
from readerproxy.web.server import METRICS

OTHER_TITLE = "A Story Told Again"


@dataclass
class Site:
    """The test site: `/story` (whatever `story` holds now), `/trickle?s=S` (an article whose body
    takes S seconds, `type=` its Content-Type), and what it is doing."""

    port: int = 0
    story: bytes = ARTICLE_HTML.encode()
    trickling: int = 0  # /trickle answers still sending
    served: dict[str, int] = field(default_factory=dict)

    def url(self, path: str) -> str:
        return f"http://news.test:{self.port}{path}"


def trickle_pieces() -> list[bytes]:
    body = ARTICLE_HTML.encode()
    step = len(body) // 6 + 1
    return [body[i : i + step] for i in range(0, len(body), step)]


def site_app(site: Site) -> web.Application:
    async def story(request: web.Request) -> web.Response:
        site.served["story"] = site.served.get("story", 0) + 1
        return web.Response(body=site.story, headers={"Content-Type": "text/html; charset=utf-8"})

    async def trickle(request: web.Request) -> web.StreamResponse:
        site.served["trickle"] = site.served.get("trickle", 0) + 1
        seconds = float(request.query.get("s", "2"))
        content_type = request.query.get("type", "text/html; charset=utf-8")
        response = web.StreamResponse(headers={"Content-Type": content_type})
        site.trickling += 1
        try:
            await response.prepare(request)
            pieces = trickle_pieces()
            for index, piece in enumerate(pieces):
                if index:
                    await asyncio.sleep(seconds / (len(pieces) - 1))
                await response.write(piece)
            await response.write_eof()
        finally:
            site.trickling -= 1
        return response

    app = web.Application()
    app.router.add_get("/story", story)
    app.router.add_get("/trickle", trickle)
    return app


@pytest.fixture
async def site() -> AsyncIterator[Site]:
    running = Site()
    async with serve_app(site_app(running), shutdown_timeout=0.5) as base:
        running.port = int(base.rsplit(":", 1)[1])
        yield running


def extractions(proxy: RunningProxy) -> float:
    """Extractions run so far (every algorithm), as `/metrics` counts them."""
    assert proxy.server.app is not None
    registry = proxy.server.app[METRICS].registry
    return sum(
        sample.value
        for metric in registry.collect()
        if metric.name == "readerproxy_extraction_seconds"
        for sample in metric.samples
        if sample.name == "readerproxy_extraction_seconds_count"
    )


async def get(http: aiohttp.ClientSession, proxy: RunningProxy, url: str) -> tuple[int, dict[str, str], str]:
    """A navigation through the proxy (`test_proxy_setup.get`: redirects not followed), its body as text."""
    status, headers, body = await navigation(http, proxy, url)
    return status, headers, body.decode()


def reader_addon(proxy: RunningProxy) -> ReaderAddon:
    return next(addon for addon in proxy.proxy.addons if isinstance(addon, ReaderAddon))


# ---- item 2: reader views remembered ------------------------------------------------------------


@pytest.mark.parametrize("backend", ["memory", "sqlite", "redis"])
async def test_a_repeat_visit_renders_the_kept_view_with_the_preferences_of_now(
    site: Site, backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    cache = {
        "memory": "memory",
        "sqlite": f"sqlite:{tmp_path / 'cache.sqlite3'}",
        "redis": request.getfixturevalue("redis_url") if backend == "redis" else "",
    }[backend]
    async with running_proxy(cache=cache) as proxy, aiohttp.ClientSession() as http:
        status, headers, page = await get(http, proxy, site.url("/story"))
        assert status == 200 and headers["X-Readerproxy"] == "reader-view"
        assert ARTICLE_TITLE in page and 'data-theme="auto"' in page
        assert extractions(proxy) == 1
        status, _, _ = await get(http, proxy, f"{SETUP_ORIGIN}/prefs?theme=dark&size=xl")
        assert status == 303  # stored, and back to the setup page
        status, headers, page = await get(http, proxy, site.url("/story"))
        assert status == 200 and headers["X-Readerproxy"] == "reader-view"
        assert ARTICLE_TITLE in page
        assert 'data-theme="dark"' in page and 'data-size="xl"' in page  # today's preferences
        assert extractions(proxy) == 1  # the kept extraction, not a second one
        assert site.served["story"] == 2  # the page itself is fetched every time
        # the site changes the page: new bytes, a new extraction
        site.story = ARTICLE_HTML.replace(ARTICLE_TITLE, OTHER_TITLE).encode()
        status, headers, page = await get(http, proxy, site.url("/story"))
        assert headers["X-Readerproxy"] == "reader-view" and OTHER_TITLE in page
        assert extractions(proxy) == 2


async def test_kept_views_outlive_the_process_with_a_persistent_backend(site: Site, tmp_path: Path) -> None:
    cache = f"sqlite:{tmp_path / 'cache.sqlite3'}"
    async with aiohttp.ClientSession() as http:
        async with running_proxy(cache=cache) as proxy:
            await get(http, proxy, site.url("/story"))
            assert extractions(proxy) == 1
        async with running_proxy(cache=cache) as proxy:  # a restart: a new process, the same file
            _, headers, page = await get(http, proxy, site.url("/story"))
            assert headers["X-Readerproxy"] == "reader-view" and ARTICLE_TITLE in page
            assert extractions(proxy) == 0


# ---- item 3: slow pages read after all ----------------------------------------------------------


async def settled(condition: Callable[[], bool], tries: int = 300) -> None:
    """Wait, a loop turn of 50 ms at a time, until `condition` holds (background work to finish)."""
    for _ in range(tries):
        if condition():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the background work never finished")


async def test_a_slow_page_is_read_after_it_arrived_and_its_view_opens_at_once(site: Site) -> None:
    async with running_proxy(reader_wait=0.3) as proxy, aiohttp.ClientSession() as http:
        addon = reader_addon(proxy)
        url = site.url("/trickle?s=1.5")
        status, headers, page = await get(http, proxy, url)
        assert status == 200 and "X-Readerproxy" not in headers
        assert page == ARTICLE_HTML  # streamed through as it came: the body was late
        await settled(lambda: extractions(proxy) == 1 and not addon._late)  # read once it arrived

        # the next visit: the reader view, answered while the site is still sending its page
        status, headers, page = await get(http, proxy, url)
        assert status == 200 and headers["X-Readerproxy"] == "reader-view"
        assert ARTICLE_TITLE in page and page.rstrip().endswith("</html>")
        assert site.trickling == 1
        assert headers["Connection"] == "close"  # the proxy goes on reading the page after it

        # the bookmarklet's "Reader view" (http://readerproxy/reader?url=…): at once too
        status, headers, _ = await get(http, proxy, f"{SETUP_ORIGIN}/reader?url={quote(url, safe='')}")
        assert 300 <= status < 400
        status, headers, page = await get(http, proxy, headers["Location"])
        assert headers["X-Readerproxy"] == "reader-view" and ARTICLE_TITLE in page
        assert site.trickling >= 1
        await settled(lambda: site.trickling == 0 and not addon._late)
        assert extractions(proxy) == 1  # the same bytes every time: the one extraction kept
        # two views and http://readerproxy/'s own answer; the first visit passed through
        assert proxy.metric("reader_view") == 3 and proxy.metric("passed_through") == 1


async def test_slow_pages_that_are_no_html_navigation_are_not_read(site: Site) -> None:
    async with running_proxy(reader_wait=0.3) as proxy, aiohttp.ClientSession() as http:
        addon = reader_addon(proxy)
        plain = site.url("/trickle?s=0.8&type=text/plain")
        status, headers, page = await get(http, proxy, plain)
        assert status == 200 and page == ARTICLE_HTML
        async with http.get(site.url("/trickle?s=0.8"), proxy=proxy.url, headers={"Accept": "*/*"}) as r:
            assert await r.text() == ARTICLE_HTML  # not a navigation (a script's fetch)
        await settled(lambda: site.trickling == 0 and not addon._late)
        assert extractions(proxy) == 0
        status, headers, _ = await get(http, proxy, plain)
        assert "X-Readerproxy" not in headers
