"""The server over real cache backends: SQLite persistence and breakage, Redis shared by two processes."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

import aiohttp
from support.reader_server import RunningServer, serve, serve_process, test_settings
from support.redis_server import RedisServer
from support.upstream import Upstream


def get(url: str) -> tuple[int, dict[str, str], bytes]:
    """A blocking GET (for servers in other processes): status, headers, body."""
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


async def read_status(http: aiohttp.ClientSession, server: RunningServer, target: str) -> tuple[int, str]:
    async with http.get(server.read_url(target)) as response:
        await response.read()
        return response.status, response.headers.get("X-Cache", "")


async def test_sqlite_cache_survives_a_restart(tmp_path: Path, http: aiohttp.ClientSession, upstream: Upstream) -> None:
    settings = test_settings(cache=f"sqlite:{tmp_path / 'cache.sqlite3'}")
    target = upstream.url("/cached/sqlite-restart")
    async with serve(settings) as server:
        assert await read_status(http, server, target) == (200, "miss")
        async with http.get(server.url("/api/extract", url=target)) as response:
            assert (await response.json())["cache"] == {"page": "hit", "result": "miss"}
    async with serve(settings) as server:
        assert await read_status(http, server, target) == (200, "hit")
        async with http.get(server.url("/api/extract", url=target)) as response:
            assert (await response.json())["cache"] == {"page": "hit", "result": "hit"}
    assert upstream.count("/cached/sqlite-restart") == 1


async def test_corrupt_sqlite_file_degrades_to_memory(
    tmp_path: Path, http: aiohttp.ClientSession, upstream: Upstream
) -> None:
    path = tmp_path / "cache.sqlite3"
    path.write_bytes(b"this is not a database, " * 1000)
    target = upstream.url("/cached/sqlite-corrupt")
    async with serve(test_settings(cache=f"sqlite:{path}")) as server:
        assert await read_status(http, server, target) == (200, "miss")
        assert await read_status(http, server, target) == (200, "hit")  # from the memory layer
        async with http.get(server.url("/metrics")) as response:
            metrics = await response.text()
    assert 'readerproxy_cache_events_total{event="error",layer="sqlite"}' in metrics
    assert 'status="500"' not in metrics


async def test_unusable_sqlite_location_degrades_to_memory(
    tmp_path: Path, http: aiohttp.ClientSession, upstream: Upstream
) -> None:
    directory = tmp_path / "a-directory"
    directory.mkdir()  # a directory where the database file should be: unusable even for root
    async with serve(test_settings(cache=f"sqlite:{directory}")) as server:
        assert await read_status(http, server, upstream.url("/cached/sqlite-dir")) == (200, "miss")
        assert await read_status(http, server, upstream.url("/cached/sqlite-dir")) == (200, "hit")


def test_two_server_processes_share_one_redis(redis_server: RedisServer, upstream: Upstream) -> None:
    target = upstream.url("/cached/shared-by-redis")
    with serve_process(redis_server.url) as first, serve_process(redis_server.url) as second:
        status, headers, _ = get(first.read_url(target))
        assert (status, headers["X-Cache"]) == (200, "miss")
        status, headers, body = get(second.url("/api/extract", url=target))
        assert (status, headers["X-Cache"]) == (200, "hit")
        assert json.loads(body)["cache"]["page"] == "hit"
        status, headers, _ = get(second.read_url(target))  # the rendered result is shared too
        assert (status, headers["X-Cache"]) == (200, "hit")
    assert upstream.count("/cached/shared-by-redis") == 1


def test_redis_down_degrades_and_recovers(redis_server: RedisServer, upstream: Upstream) -> None:
    with serve_process(redis_server.url) as server:
        assert get(server.read_url(upstream.url("/cached/redis-before")))[0] == 200
        redis_server.stop()
        for name in ("redis-down-1", "redis-down-2"):
            status, headers, _ = get(server.read_url(upstream.url(f"/cached/{name}")))
            assert (status, headers["X-Cache"]) == (200, "miss")
        status, headers, _ = get(server.read_url(upstream.url("/cached/redis-down-1")))
        assert (status, headers["X-Cache"]) == (200, "hit")  # the memory layer still serves
        redis_server.start()
        status, _, metrics = get(server.url("/metrics"))
        assert 'readerproxy_cache_events_total{event="error",layer="redis"}' in metrics.decode()
    # After the restart, a second process sees what the first wrote once Redis was back.
    with serve_process(redis_server.url) as first, serve_process(redis_server.url) as second:
        assert get(first.read_url(upstream.url("/cached/redis-after")))[1]["X-Cache"] == "miss"
        assert get(second.read_url(upstream.url("/cached/redis-after")))[1]["X-Cache"] == "hit"
