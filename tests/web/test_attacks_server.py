"""Attacks on the reader server itself: request parameters naming server files, caches filled by
hostile pages, inputs that made 500s, and shutdown under load.

- A request can never name a file on the server (`model` and any other free-text or path
  parameter): 400 on every route, the same answer whether the file exists or not, nothing opened,
  a FIFO blocks nothing; the library and the command line still take it. The files the server
  reads itself (the learned scorer's weights) are read off the event loop.
- The SQLite cache is bounded (`--cache-max-bytes`, oldest entries first out); every Redis key
  expires; one big page cannot push the memory cache's other entries out; a page whose
  extraction failed for its own sake is not kept; cached reads stay hits while big pages are read.
- Every bad input is a 4xx (`http://[::1/`, a host label over 63 characters, a gzip body inside
  gzip) and a short fuzz of every route's query finds no 5xx.
- SIGTERM: requests in flight finish within `--shutdown-timeout`, those still running then get
  503 with Retry-After; new connections are refused; the process is gone soon after.
"""

from __future__ import annotations

import asyncio
import gzip
import os
import signal
import sqlite3
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import aiohttp
import pytest
from aiohttp import web
from support.reader_server import (
    RunningServer,
    serve,
    serve_app,
    start_server_process,
    stop_process,
    test_settings,
)
from support.upstream import ARTICLE_HTML, ARTICLE_TITLE, Upstream

import readerproxy
from readerproxy.app import load_settings
from readerproxy.engine.learn import model as learn_model
from readerproxy.web.appkeys import READER
from readerproxy.web.cache import RedisBackend, SQLiteBackend, open_cache
from readerproxy.web.reader import server_only_parameters

TIMEOUT = aiohttp.ClientTimeout(total=30)


def generated_paragraphs(key: str, kb: int) -> str:
    """An article of about `kb` KB of distinct sentences (so it compresses like text, not like a bomb)."""
    paragraphs = []
    size = 0
    index = 0
    while size < kb * 1024:
        paragraph = (
            f"<p>Paragraph {index} of {key}: readers read sentence number {index * 7919 % 100003}.</p>\n"
        )
        paragraphs.append(paragraph)
        size += len(paragraph)
        index += 1
    return f"<!doctype html><html><head><title>{key}</title></head><body><article>{''.join(paragraphs)}</article></body></html>"


# ---- item 4: nothing from a request names a server file ------------------------------------------


def test_every_free_text_parameter_is_server_only() -> None:
    assert "model" in server_only_parameters()


@pytest.mark.parametrize(
    "route",
    [
        "/read?algo=learned&model={path}&url={url}",
        "/read?algo=auto&model={path}&url={url}&format=json",
        "/read?algo=learned&view=overlay&model={path}&url={url}",
        "/api/extract?algo=learned&model={path}&url={url}",
        "/compare?model={path}&url={url}",
    ],
)
async def test_a_query_naming_a_server_file_is_refused(
    route: str, upstream: Upstream, reader_server: RunningServer, http: aiohttp.ClientSession, tmp_path: Path
) -> None:
    answers = []
    for path in ("/etc/passwd", str(tmp_path / "absent.npz")):
        target = reader_server.base + route.format(path=quote(path), url=quote(upstream.url("/article")))
        async with http.get(target, timeout=TIMEOUT) as response:
            text = await response.text()
        assert response.status == 400, (route, response.status)
        assert path not in text  # the answer says nothing about the file
        answers.append(text.replace(quote(path), "PATH"))
    assert "model" in answers[0] and "names a file on the server" in answers[0]


@pytest.mark.parametrize("algorithm", ["learned", "auto"])
async def test_a_posted_parameter_naming_a_server_file_is_refused(
    algorithm: str, reader_server: RunningServer, http: aiohttp.ClientSession, tmp_path: Path
) -> None:
    bodies = []
    for path in ("/etc/passwd", str(tmp_path / "absent.npz"), learn_model.SHIPPED_MODEL.as_posix()):
        payload = {"html": ARTICLE_HTML, "algo": algorithm, "params": {"model": path}}
        async with http.post(reader_server.url("/api/extract"), json=payload, timeout=TIMEOUT) as response:
            body = await response.json()
        assert response.status == 400 and body["error"]["kind"] == "bad_request"
        bodies.append(body)
    assert bodies[0] == bodies[1] == bodies[2]  # existing, absent and the real weights: one answer
    async with http.post(
        reader_server.url("/api/extract", algo=algorithm, model="/etc/passwd"),
        data=ARTICLE_HTML,
        headers={"Content-Type": "text/html"},
        timeout=TIMEOUT,
    ) as response:
        assert response.status == 400


def test_a_fifo_named_by_a_request_blocks_nothing(tmp_path: Path) -> None:
    """A FIFO (or /dev/stdin) as `model` used to block the event loop: /healthz timed out and SIGTERM
    was ignored. Now it is refused before anything is opened."""
    fifo = tmp_path / "model.npz"
    os.mkfifo(fifo)
    process, base = start_server_process("--cache", "memory", "--allow-private")
    try:

        async def scenario() -> None:
            async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=5)) as session:
                for path in (str(fifo), "/dev/stdin"):
                    payload = {"html": ARTICLE_HTML, "algo": "learned", "params": {"model": path}}
                    async with session.post(base + "/api/extract", json=payload) as response:
                        assert response.status == 400
                async with session.get(base + "/healthz") as response:
                    assert response.status == 200

        asyncio.run(scenario())
        # SIGTERM is heard: the server stops cleanly (the bounded wait catches a hang, it is no measure)
        process.send_signal(signal.SIGTERM)
        process.wait(30)
        assert process.returncode == 0
    finally:
        # whatever happened, nothing stays blocked on the FIFO
        opener = threading.Thread(target=lambda: open(fifo, "wb").close(), daemon=True)
        opener.start()
        stop_process(process)


def test_the_library_still_takes_a_model_path() -> None:
    article = readerproxy.extract(
        ARTICLE_HTML, algorithm="learned", model=learn_model.SHIPPED_MODEL.as_posix()
    )
    assert ARTICLE_TITLE in article.text
    with pytest.raises(ValueError, match="cannot load block model"):
        readerproxy.extract(ARTICLE_HTML, algorithm="learned", model="/nonexistent/blocks.npz")


async def test_the_server_reads_its_own_model_file_off_the_event_loop(
    http: aiohttp.ClientSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    loads: list[bool] = []  # for each file load: was it on the event loop's thread?
    real_load = learn_model.np.load

    def recording_load(*args: Any, **kwargs: Any) -> Any:
        loads.append(threading.current_thread() is threading.main_thread())
        return real_load(*args, **kwargs)

    monkeypatch.setattr(learn_model.np, "load", recording_load)
    learn_model.load_model.cache_clear()
    try:
        async with serve(test_settings(rate_limit=0)) as server:
            for algorithm in ("learned", "auto"):
                async with http.post(
                    server.url("/api/extract", algo=algorithm, threshold="0.6"),
                    data=ARTICLE_HTML,
                    headers={"Content-Type": "text/html"},
                    timeout=TIMEOUT,
                ) as response:
                    assert response.status == 200, await response.text()
    finally:
        learn_model.load_model.cache_clear()
    assert loads and not any(loads), loads


# ---- item 7: caches bounded ------------------------------------------------------------------------


def test_cache_max_bytes_is_an_option() -> None:
    assert load_settings({}, env={}).cache_max_bytes == 1024**3
    assert load_settings({"cache_max_bytes": "5000000"}, env={}).cache_max_bytes == 5_000_000
    assert load_settings({}, env={"READERPROXY_CACHE_MAX_BYTES": "7000000"}).cache_max_bytes == 7_000_000


async def test_the_sqlite_cache_stays_within_its_bound_oldest_out_first(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite3"
    bound = 1024 * 1024
    cache = open_cache(f"sqlite:{path}", max_bytes=bound, memory_bytes=1024 * 1024)
    backend = cache.backend
    assert isinstance(backend, SQLiteBackend) and backend.max_bytes == bound
    value = os.urandom(40 * 1024)  # incompressible, as pages and results are to SQLite
    for index in range(200):  # 8 MB written through a 1 MB bound
        await cache.set(f"key-{index}", value, ttl=3600)
    assert backend.used_bytes() <= bound
    assert await backend.get("key-199") is not None and await backend.get("key-198") is not None
    assert await backend.get("key-0") is None and await backend.get("key-100") is None
    assert backend.evicted >= 170
    await cache.close()
    assert path.stat().st_size <= bound * 1.25  # freed pages are reused: the file stops growing
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT count(*) FROM cache").fetchone()[0]
    assert 10 <= rows <= 25


async def test_a_value_too_big_for_the_sqlite_bound_is_not_stored(tmp_path: Path) -> None:
    backend = SQLiteBackend(tmp_path / "cache.sqlite3", max_bytes=1024 * 1024)
    await backend.set("small", b"x" * 1000, None)
    await backend.set("big", b"x" * (128 * 1024), None)  # over 1/16 of the bound
    assert await backend.get("small") is not None and await backend.get("big") is None
    await backend.close()


async def test_every_redis_key_expires(redis_url: str) -> None:
    from redis.asyncio import Redis

    backend = RedisBackend(redis_url)
    cache = open_cache(redis_url)
    client = Redis.from_url(redis_url)
    try:
        await backend.set("no-ttl", b"value", None)
        await cache.set("layered-no-ttl", b"value")
        await cache.set("with-ttl", b"value", 60)
        assert await backend.acquire("lock", "token", 5)
        keys = await client.keys(RedisBackend.PREFIX + "*")
        assert len(keys) == 4
        for key in keys:
            assert await client.pttl(key) > 0, key  # -1 would be a key that never expires
    finally:
        await client.aclose()
        await backend.close()
        await cache.close()


def test_one_big_entry_cannot_push_the_memory_cache_out() -> None:
    memory = open_cache("memory", memory_bytes=1024 * 1024).memory
    for index in range(15):
        memory.set(f"small-{index}", b"x" * (60 * 1024))
    memory.set("big", b"x" * (300 * 1024))  # over 1/16 of the bound: not kept
    assert memory.get("big") is None
    assert all(memory.get(f"small-{index}") is not None for index in range(15))
    memory.set("small-0", b"x" * (200 * 1024))  # a key's older value goes when the new one is too big
    assert memory.get("small-0") is None


@pytest.fixture
async def pages_site() -> AsyncIterator[str]:
    """A site of generated articles: /hot/<key> (about 20 KB), /big/<key> (about 600 KB) and
    /hostile/<key> (30,000 links, slow to extract)."""

    async def hot(request: web.Request) -> web.Response:
        return web.Response(
            text=generated_paragraphs(request.match_info["key"], 20), content_type="text/html"
        )

    async def big(request: web.Request) -> web.Response:
        return web.Response(
            text=generated_paragraphs(request.match_info["key"], 600), content_type="text/html"
        )

    async def hostile(request: web.Request) -> web.Response:
        links = "".join(f'<a href="/p/{index}">link {index}</a> ' for index in range(30_000))
        return web.Response(text=f"<html><body><div>{links}</div></body></html>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/hot/{key}", hot)
    app.router.add_get("/big/{key}", big)
    app.router.add_get("/hostile/{key}", hostile)
    async with serve_app(app) as base:
        yield base


async def test_a_page_whose_extraction_timed_out_is_not_kept(
    pages_site: str, http: aiohttp.ClientSession
) -> None:
    settings = test_settings(rate_limit=0, extract_timeout=0.3, memory_cache_bytes=512 * 1024 * 1024)
    async with serve(settings) as server:
        assert server.app is not None
        reader = server.app[READER]
        url = pages_site + "/hostile/a"
        async with http.get(server.url("/api/extract", url=url), timeout=TIMEOUT) as response:
            body = await response.json()
        assert response.status == 503 and body["error"]["kind"] == "extraction_timeout"
        assert reader.cache is not None and reader.pages is not None
        assert reader.cache.memory.get(reader.pages.key(url)) is None


async def test_cached_reads_stay_hits_while_big_pages_are_read(
    pages_site: str, http: aiohttp.ClientSession
) -> None:
    """The load run's finding: with `--cache memory`, big pages pushed the hot pages out of the
    memory cache, and reads that were hits needed a fetch and an extraction again (503s once the
    workers were busy). Big pages are now not kept in memory, so the hot ones stay."""
    settings = test_settings(
        rate_limit=0, memory_cache_bytes=2 * 1024 * 1024, extract_workers=1, extract_queue=2
    )
    hot = [pages_site + f"/hot/{index}" for index in range(8)]
    async with serve(settings) as server:
        for url in hot:
            async with http.get(server.read_url(url), timeout=TIMEOUT) as response:
                assert response.status == 200

        async def big_reads() -> list[int]:
            statuses = []
            for index in range(8):
                async with http.get(server.read_url(pages_site + f"/big/{index}"), timeout=TIMEOUT) as r:
                    statuses.append(r.status)
            return statuses

        async def cached_reads() -> list[tuple[int, str]]:
            answers = []
            for _ in range(6):
                for url in hot:
                    async with http.get(server.read_url(url, format="json"), timeout=TIMEOUT) as r:
                        answers.append((r.status, r.headers.get("X-Cache", "")))
                await asyncio.sleep(0.05)
            return answers

        big, cached = await asyncio.gather(big_reads(), cached_reads())
        assert all(status in (200, 503) for status in big), big  # 503: past the deadline on a busy machine
        assert cached and all(answer == (200, "hit") for answer in cached), cached
        for url in hot:  # and after every big page: still hits
            async with http.get(server.read_url(url, format="json"), timeout=TIMEOUT) as response:
                data = await response.json()
            assert response.status == 200 and data["cache"] == {"page": "hit", "result": "hit"}


@pytest.mark.parametrize("route", ["/etag/hit", "/lastmod/hit"])
async def test_a_revalidated_page_keeps_its_cached_result(
    route: str, upstream: Upstream, reader_server: RunningServer, http: aiohttp.ClientSession
) -> None:
    """A page sent with a validator and `max-age=0` is revalidated on every read; a 304 says the
    body is unchanged, so the result is too: no extraction (no worker) for such a cached read."""
    caches = []
    for _ in range(3):
        url = reader_server.url("/api/extract", url=upstream.url(route))
        async with http.get(url, timeout=TIMEOUT) as response:
            assert response.status == 200
            caches.append((await response.json())["cache"])
    assert caches[0] == {"page": "miss", "result": "miss"}
    assert caches[1:] == [{"page": "revalidated", "result": "hit"}] * 2


# ---- item 9: every bad input a 4xx ----------------------------------------------------------------

BAD_URLS = [
    "http://[::1/",
    "http://[/",
    "http://" + "a" * 64 + ".example/",
    "http://a..b.example/",
    "http://" + ("abcdefghij." * 24) + "example/",  # a name over 253 characters
    # urlsplit reads these as [::1] and as the name v1.x (fetched, or a 502)
    "http://[::1]x/",
    "http://[::1]x:80/",
    "http://[::1]]/",
    "http://[v1.x]/",
]


@pytest.mark.parametrize("url", BAD_URLS)
@pytest.mark.parametrize(
    "route",
    [
        "/read?url={}",
        "/read?format=json&url={}",
        "/api/extract?url={}",
        "/compare?url={}",
        "/read?view=overlay&url={}",
    ],
)
async def test_bad_addresses_are_400(
    route: str, url: str, reader_server: RunningServer, http: aiohttp.ClientSession
) -> None:
    async with http.get(reader_server.base + route.format(quote(url, safe="")), timeout=TIMEOUT) as response:
        await response.read()
    assert response.status == 400, (route, url, response.status)


async def test_a_gzip_body_inside_gzip_is_413(http: aiohttp.ClientSession) -> None:
    """Content-Encoding: gzip around a gzip of 40 MB: the inner layer used to be undone later without
    the fetch's decoded-size cap (was 500 extraction_failed)."""
    inner = gzip.compress(b"<html><body>" + b"<p>all work and no play</p>" * (40 * 1024 * 1024 // 27), 1)
    double = gzip.compress(inner)

    async def page(request: web.Request) -> web.Response:
        return web.Response(body=double, headers={"Content-Type": "text/html", "Content-Encoding": "gzip"})

    async def plain(request: web.Request) -> web.Response:  # gzip bytes without a Content-Encoding
        return web.Response(body=inner, headers={"Content-Type": "text/html"})

    app = web.Application()
    app.router.add_get("/double", page)
    app.router.add_get("/plain", plain)
    async with serve_app(app) as site, serve(test_settings(rate_limit=0)) as server:
        for path in ("/double", "/plain"):
            for route in ("/api/extract", "/read"):
                async with http.get(server.url(route, url=site + path), timeout=TIMEOUT) as response:
                    await response.read()
                assert response.status == 413, (path, route, response.status)
        async with http.post(
            server.url("/api/extract"), data=inner, headers={"Content-Type": "text/html"}, timeout=TIMEOUT
        ) as response:
            assert response.status == 413
        async with http.post(
            server.url("/api/extract"), data=b"\x1f\x8bnot gzip at all", timeout=TIMEOUT
        ) as response:
            assert response.status == 400


ODD_VALUES = [
    "",
    " ",
    "0",
    "-1",
    "1e309",
    "-1e309",
    "nan",
    "inf",
    "1" * 400,
    "0x10",
    "1_0",
    "None",
    "true",
    "\u0000",
    "\u00ff\u0100",
    "%",
    "é",
    "[]",
    "{}",
    "a" * 5000,
]
ODD_KEYS = [
    "algo",
    "format",
    "theme",
    "size",
    "lite",
    "links",
    "refresh",
    "blocks",
    "view",
    "c1",
    "threshold",
    "radius",
    "iterations",
    "link_filter",
    "article_root",
    "min_chars",
    "unit",
    "k",
]


@pytest.mark.parametrize("route", ["/read", "/api/extract", "/compare", "/read?view=overlay"])
async def test_a_fuzz_of_every_route_finds_no_5xx(
    upstream: Upstream, http: aiohttp.ClientSession, route: str
) -> None:
    """Odd keys and values, and bad URLs, on one route (one test per route: the workers share them)."""
    page = upstream.url("/article")
    seen: dict[int, int] = {}
    separator = "&" if "?" in route else "?"
    async with serve(test_settings(rate_limit=0)) as server:
        for key in ODD_KEYS:
            for value in ODD_VALUES:
                target = f"{server.base}{route}{separator}url={quote(page, safe='')}&{key}={quote(value)}"
                async with http.get(target, timeout=TIMEOUT) as response:
                    await response.read()
                seen[response.status] = seen.get(response.status, 0) + 1
                assert response.status < 500, (route, key, value, response.status)
        for value in (
            ODD_VALUES + BAD_URLS + ["javascript:alert(1)", "//example.com", "http://:80/", "ftp://x/"]
        ):
            target = f"{server.base}{route}{separator}url={quote(value, safe='')}&algo=auto"
            async with http.get(target, timeout=TIMEOUT) as response:
                await response.read()
            seen[response.status] = seen.get(response.status, 0) + 1
            assert response.status < 500, (route, "url", value, response.status)
    assert seen.get(200, 0) > 0 and seen.get(400, 0) > 0


# ---- item 9: SIGTERM ---------------------------------------------------------------------------------


def test_sigterm_lets_requests_finish_then_answers_503(upstream: Upstream) -> None:
    """Requests still fetching used to get 500 on SIGTERM. Now: one that finishes within
    `--shutdown-timeout` gets its page, one that does not gets 503 with Retry-After, a new connection
    is refused, and the process is gone soon after the timeout."""
    process, base = start_server_process(
        "--cache", "memory", "--allow-private", "--shutdown-timeout", "3", "--rate-limit", "0"
    )
    try:

        async def scenario() -> tuple[list[tuple[int, str | None, str]], float, bool]:
            async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as session:

                async def read(seconds: float, key: str) -> tuple[int, str | None, str]:
                    url = upstream.url(f"/slow?s={seconds}&k={key}")
                    async with session.get(base + "/api/extract", params={"url": url}) as response:
                        body = await response.json()
                        kind = body.get("error", {}).get("kind", "ok")
                        return response.status, response.headers.get("Retry-After"), kind

                reads = [
                    asyncio.ensure_future(read(0.5, "quick")),
                    asyncio.ensure_future(read(1.0, "quick2")),
                    asyncio.ensure_future(read(30, "stuck")),
                ]
                await asyncio.sleep(0.5)  # all three are fetching
                began = time.monotonic()
                process.send_signal(signal.SIGTERM)
                await asyncio.sleep(0.3)
                refused = False
                try:
                    async with aiohttp.ClientSession() as fresh, fresh.get(base + "/healthz") as response:
                        await response.read()
                except aiohttp.ClientConnectionError:
                    refused = True
                answers = await asyncio.gather(*reads)
                return answers, time.monotonic() - began, refused

        answers, answered_after, refused = asyncio.run(scenario())
        process.wait(10)
        assert answers[0] == (200, None, "ok") and answers[1] == (200, None, "ok"), answers
        assert answers[2][0] == 503 and answers[2][1] is not None and answers[2][2] == "shutting_down", (
            answers
        )
        # given the shutdown timeout (3 s), then answered by the shutdown (its kind above), not at the
        # end of its 30 s fetch
        assert answered_after >= 2.8, answered_after
        assert refused
    finally:
        stop_process(process)


def test_sigterm_answers_an_inflight_render(chromium_path: str) -> None:
    """A render in flight at SIGTERM used to get no answer at all; now it gets the same 503."""
    process, base = start_server_process(
        "--cache",
        "memory",
        "--allow-private",
        "--shutdown-timeout",
        "2",
        "--rate-limit",
        "0",
        "--browser",
        chromium_path,
        "--render-timeout",
        "60",
    )
    endless = (
        "<html><head><title>Endless</title></head><body><article><p>"
        + "Words of an endless page. " * 40
        + "</p></article><script>while (true) {}</script></body></html>"
    )

    async def page(request: web.Request) -> web.Response:
        return web.Response(text=endless, content_type="text/html")

    try:

        async def scenario() -> tuple[int, str | None, str]:
            app = web.Application()
            app.router.add_get("/endless", page)
            async with serve_app(app) as site, aiohttp.ClientSession(timeout=TIMEOUT) as session:

                async def read() -> tuple[int, str | None, str]:
                    query = {"url": site + "/endless", "render": "1"}
                    async with session.get(base + "/api/extract", params=query) as response:
                        body = await response.json()
                        return response.status, response.headers.get("Retry-After"), body["error"]["kind"]

                reading = asyncio.ensure_future(read())
                await asyncio.sleep(3)  # the browser has started and is running the page's script
                process.send_signal(signal.SIGTERM)
                return await reading

        status, retry_after, kind = asyncio.run(scenario())
        # answered by the shutdown, not at the render's 60 s deadline (that is a render_timeout)
        assert (status, kind) == (503, "shutting_down") and retry_after is not None
        process.wait(15)
    finally:
        stop_process(process)


def test_host_names_with_characters_no_resolver_takes_are_400() -> None:
    """`http://%zz/` and friends are refused before any lookup (found by the hostile load run)."""
    from readerproxy.errors import ReaderproxyError
    from readerproxy.web.fetch import validate_url

    for url in ("http://%zz/", "http://a%20b.test/", "http://ex'ample.test/", "http://a b.test/"):
        with pytest.raises(ReaderproxyError) as refused:
            validate_url(url)
        assert refused.value.kind == "bad_url" and refused.value.status == 400
    assert validate_url("http://my_host.example/") == "http://my_host.example/"


def test_a_ready_page_keeps_its_sources_hot_in_memory() -> None:
    """A page read only through the ready-page fast path must not drift to the old end of the
    memory LRU (the hostile load run's cached /read 503s with --cache memory)."""
    from readerproxy.web.lru import ENTRY_OVERHEAD, LRU

    entry = 100 + ENTRY_OVERHEAD
    lru: LRU[str, bytes] = LRU(max_bytes=2 * entry, sizeof=lambda key, value: len(value))
    lru.set("hot", b"x" * 100)
    lru.set("other", b"y" * 100)
    lru.touch("hot")
    lru.set("filler", b"z" * 100)  # one entry must go: the least recently used
    assert "hot" in lru and "other" not in lru
