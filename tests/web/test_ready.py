"""Reader pages ready to send again (ready.ReadyPages), alone and through a real server."""

from __future__ import annotations

import gzip
import json
import re
import time
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import brotli
import pytest
from selectolax.lexbor import LexborHTMLParser
from support.reader_server import RunningServer, serve, test_settings
from support.upstream import Upstream

from readerproxy.web import fetch, page_cache, ready_pages
from readerproxy.web.appkeys import READER
from readerproxy.web.ready_pages import ENTRY_EXTRA, ReadyPage, ReadyPages, Sources
from readerproxy.web.server import CSP

KEY = ("/read?url=x", None, "br")
SOURCES: Sources = (("page:x", 7), ("result:x", 8))


def ready_page(body: bytes = b"body", fresh_for: float = 60.0, sources: Sources = SOURCES) -> ReadyPage:
    return ReadyPage(body, {"Content-Type": "text/html"}, sources, time.time() + fresh_for)


# ---- ReadyPages alone ---------------------------------------------------------------------------------------


def test_a_ready_page_is_given_while_its_sources_are_unchanged() -> None:
    pages = ReadyPages()
    page = ready_page()
    pages.put(KEY, page)
    seen: list[Sources] = []
    assert pages.get(KEY, lambda sources: seen.append(sources) or True) is page
    assert seen == [SOURCES]
    assert pages.get(("/read?url=y", None, "br"), lambda sources: True) is None


def test_a_changed_source_or_the_end_of_freshness_drops_the_page() -> None:
    pages = ReadyPages()
    pages.put(KEY, ready_page())
    assert pages.get(KEY, lambda sources: False) is None
    assert len(pages) == 0 and pages.get(KEY, lambda sources: True) is None  # dropped, not kept for later
    pages.put(KEY, ready_page(fresh_for=0.05))
    assert len(pages) == 1
    time.sleep(0.06)
    assert pages.get(KEY, lambda sources: True) is None and len(pages) == 0


def test_pages_without_sources_or_already_stale_are_not_kept() -> None:
    pages = ReadyPages()
    pages.put(KEY, ready_page(sources=()))
    pages.put(("/read?url=stale", None, None), ready_page(fresh_for=-1.0))
    assert len(pages) == 0


def test_ready_pages_are_bounded_by_bytes() -> None:
    body = b"x" * 1000
    charged = len(KEY[0]) + len(body) + ENTRY_EXTRA
    pages = ReadyPages(max_bytes=3 * (charged + 64))  # 64: the LRU's own bookkeeping per entry
    for n in range(5):
        pages.put((f"/read?url={n}", None, "br"), ready_page(body))
    assert len(pages) == 3
    assert pages.get(("/read?url=0", None, "br"), lambda sources: True) is None
    assert pages.get(("/read?url=4", None, "br"), lambda sources: True) is not None


# ---- through the server -------------------------------------------------------------------------------------


@pytest.fixture
async def plain_http() -> AsyncIterator[aiohttp.ClientSession]:
    """A client that sends exactly the headers a test gives (no cookie jar, no automatic decoding)."""
    async with aiohttp.ClientSession(
        cookie_jar=aiohttp.DummyCookieJar(), auto_decompress=False, skip_auto_headers=("Accept-Encoding",)
    ) as session:
        yield session


async def get(http: aiohttp.ClientSession, url: str, **headers: str) -> tuple[int, bytes, dict[str, str]]:
    async with http.get(url, headers=headers) as response:
        return response.status, await response.read(), dict(response.headers)


def hits_shown(body: bytes) -> int:
    """The upstream's fetch count, as the counter page's text shows it in the reader view."""
    match = re.search(r'\{"hits": (\d+)\}', LexborHTMLParser(body.decode()).css_first(".content").text())
    assert match is not None
    return int(match.group(1))


async def metric(server: RunningServer, http: aiohttp.ClientSession, line: str) -> float:
    async with http.get(server.url("/metrics")) as response:
        text = await response.text()
    match = re.search(re.escape(line) + r" ([\d.]+)", text)
    return float(match.group(1)) if match else 0.0


READY_HITS = 'readerproxy_cache_events_total{event="hit",layer="ready"}'
PAGE_HITS = 'readerproxy_page_cache_total{status="hit"}'


async def test_a_repeated_read_is_sent_again_byte_for_byte(
    reader_server: RunningServer, plain_http: aiohttp.ClientSession, upstream: Upstream
) -> None:
    target = upstream.url("/counter/ready-repeat?delay=0")
    url = reader_server.read_url(target)
    answers = [await get(plain_http, url, **{"Accept-Encoding": "br"}) for _ in range(4)]
    assert [status for status, _, _ in answers] == [200] * 4
    assert [headers["X-Cache"] for _, _, headers in answers] == ["miss", "hit", "hit", "hit"]
    # the miss went out quickly compressed (test_compression); every later answer is the kept bytes
    assert len({body for _, body, _ in answers[1:]}) == 1
    assert len({brotli.decompress(body) for _, body, _ in answers}) == 1
    for _, _, headers in answers[1:]:  # the ready answer carries every header of the full path
        assert headers["Content-Encoding"] == "br" and headers["Vary"] == "Accept-Encoding"
        assert headers["Content-Type"] == "text/html; charset=utf-8"
        assert headers["Content-Security-Policy"] == CSP and headers["X-Content-Type-Options"] == "nosniff"
    assert upstream.count("/counter/ready-repeat") == 1
    # the second read made the ready page; the third and fourth were sent from it, counted as page hits
    assert await metric(reader_server, plain_http, READY_HITS) == 2.0
    assert await metric(reader_server, plain_http, PAGE_HITS) == 3.0
    assert (
        await metric(reader_server, plain_http, 'readerproxy_requests_total{route="/read",status="200"}') == 4
    )


async def test_a_refresh_replaces_the_ready_page(
    reader_server: RunningServer, http: aiohttp.ClientSession, upstream: Upstream
) -> None:
    target = upstream.url("/counter/ready-refresh?delay=0")
    shown = []
    for query in ({}, {}, {}, {"refresh": "1"}, {}, {}):
        async with http.get(reader_server.read_url(target, **query)) as response:
            shown.append(hits_shown(await response.read()))
    assert shown == [1, 1, 1, 2, 2, 2]


class SteppedClock:
    """The server's freshness clocks, moved only by the test (`advance`): the wall clock (`time.time()`)
    of the fetcher (a page's `fetched_at`), the page store and the ready pages, and the memory
    cache's clock (its entries' TTLs). Everything else those modules ask of `time` is the real one."""

    def __init__(self) -> None:
        self.wall = time.time()
        self.steady = time.monotonic()

    def time(self) -> float:
        return self.wall

    def monotonic(self) -> float:
        return self.steady

    def advance(self, seconds: float) -> None:
        self.wall += seconds
        self.steady += seconds

    def __getattr__(self, name: str) -> Any:
        return getattr(time, name)


class WallOnly:
    """`time` as a module sees it with its wall clock stepped: `time()` is the stepped clock's."""

    def __init__(self, clock: SteppedClock) -> None:
        self.time = clock.time

    def __getattr__(self, name: str) -> Any:
        return getattr(time, name)


async def test_the_end_of_the_page_freshness_ends_the_ready_page(
    http: aiohttp.ClientSession, upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three reads in one freshness window (page_ttl 1 s), the clock moved past its end, three more:
    the clock stands still while the reads run, however long a loaded machine takes over them."""
    clock = SteppedClock()
    for module in (fetch, page_cache, ready_pages):
        monkeypatch.setattr(module, "time", WallOnly(clock))
    async with serve(test_settings(page_ttl=1.0)) as server:
        assert server.app is not None
        server.app[READER].cache.memory.clock = clock.monotonic
        target = upstream.url("/counter/ready-expiry?delay=0")
        first = [hits_shown((await get(http, server.read_url(target)))[1]) for _ in range(3)]
        clock.advance(1.5)  # past the end of the first fetch's freshness
        after = [hits_shown((await get(http, server.read_url(target)))[1]) for _ in range(3)]
        ready_hits = await metric(server, http, READY_HITS)
    assert first == [1, 1, 1] and after == [2, 2, 2]
    assert ready_hits == 2.0  # one in each freshness window


async def test_ready_pages_follow_coding_and_preference_cookies(
    reader_server: RunningServer, plain_http: aiohttp.ClientSession, upstream: Upstream
) -> None:
    url = reader_server.read_url(upstream.url("/counter/ready-variants?delay=0"))
    for _ in range(3):
        _, plain, plain_headers = await get(plain_http, url)
        _, gzipped, gzip_headers = await get(plain_http, url, **{"Accept-Encoding": "gzip"})
        _, sepia, _ = await get(plain_http, url, Cookie="rp_theme=sepia")
    assert "Content-Encoding" not in plain_headers and gzip_headers["Content-Encoding"] == "gzip"
    assert gzip.decompress(gzipped) == plain
    themes = [
        LexborHTMLParser(body.decode()).css_first("html").attributes["data-theme"] for body in (plain, sepia)
    ]
    assert themes[1] == "sepia" and themes[0] != "sepia"
    # made on each variant's first read from all three caches (page, result, rendered page: the very
    # first read fetched the page, sepia's first rendered it), then sent: gzip 2, plain and sepia 1
    assert await metric(reader_server, plain_http, READY_HITS) == 4.0


async def test_a_read_that_sets_preferences_is_never_sent_from_a_ready_page(
    reader_server: RunningServer, plain_http: aiohttp.ClientSession, upstream: Upstream
) -> None:
    url = reader_server.read_url(upstream.url("/counter/ready-prefs?delay=0"), theme="dark")
    answers = [await get(plain_http, url) for _ in range(3)]
    assert all("rp_theme=dark" in headers.get("Set-Cookie", "") for _, _, headers in answers)
    assert await metric(reader_server, plain_http, READY_HITS) == 0.0


async def test_other_formats_are_not_sent_from_ready_pages(
    reader_server: RunningServer, plain_http: aiohttp.ClientSession, upstream: Upstream
) -> None:
    url = reader_server.read_url(upstream.url("/counter/ready-json?delay=0"), format="json")
    answers = [json.loads((await get(plain_http, url))[1]) for _ in range(3)]
    assert [a["cache"] for a in answers] == [
        {"page": "miss", "result": "miss"},
        {"page": "hit", "result": "hit"},
        {"page": "hit", "result": "hit"},
    ]
    assert await metric(reader_server, plain_http, READY_HITS) == 0.0


async def test_a_repeated_identity_read_is_sent_from_its_ready_copy_without_coding(
    reader_server: RunningServer,
    plain_http: aiohttp.ClientSession,
    upstream: Upstream,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A client that asks for no compression, after one that asked for brotli: the identity copy the
    page is kept with is sent, and once ready it is sent again with no coding, render or lookup."""
    from readerproxy.web import compression
    from readerproxy.web.templating import Renderer

    counts = {"compress": 0, "decompress": 0, "render": 0}

    def counted(name: str, function: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            counts[name] += 1
            return function(*args, **kwargs)

        return call

    monkeypatch.setattr(compression, "compress", counted("compress", compression.compress))
    monkeypatch.setattr(brotli, "decompress", counted("decompress", brotli.decompress))
    monkeypatch.setattr(gzip, "decompress", counted("decompress", gzip.decompress))
    monkeypatch.setattr(Renderer, "reader_page", counted("render", Renderer.reader_page))
    url = reader_server.read_url(upstream.url("/counter/ready-identity?delay=0"))
    _, compressed, _ = await get(plain_http, url, **{"Accept-Encoding": "br"})
    # the rendered page's identity copy, sent as it is kept; this read makes the ready page
    _, first, first_headers = await get(plain_http, url)
    before = dict(counts)
    ready_before = await metric(reader_server, plain_http, READY_HITS)
    answers = [await get(plain_http, url) for _ in range(3)]
    assert counts == before  # no compression, decompression or render for the repeated reads
    assert counts["render"] == 1 and counts["decompress"] == 0
    assert await metric(reader_server, plain_http, READY_HITS) == ready_before + 3
    assert {body for _, body, _ in answers} == {first}
    assert first == brotli.decompress(compressed)  # the test's own decoding, after the counting
    assert all(headers["X-Cache"] == "hit" and "Content-Encoding" not in headers for _, _, headers in answers)
    assert {key: headers[key] for _, _, headers in answers for key in ("Content-Type", "Vary")} == {
        "Content-Type": first_headers["Content-Type"],
        "Vary": "Accept-Encoding",
    }
