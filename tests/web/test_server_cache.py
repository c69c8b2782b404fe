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


async def test_sqlite_cache_survives_a_restart(
    tmp_path: Path, http: aiohttp.ClientSession, upstream: Upstream
) -> None:
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


async def test_a_corrupt_sqlite_file_is_moved_aside_and_the_cache_goes_on(
    tmp_path: Path, http: aiohttp.ClientSession, upstream: Upstream
) -> None:
    path = tmp_path / "cache.sqlite3"
    path.write_bytes(b"this is not a database, " * 1000)
    target = upstream.url("/cached/sqlite-corrupt")
    async with serve(test_settings(cache=f"sqlite:{path}")) as server:
        assert await read_status(http, server, target) == (200, "miss")
        assert await read_status(http, server, target) == (200, "hit")
        async with http.get(server.url("/metrics")) as response:
            metrics = await response.text()
    assert 'status="500"' not in metrics
    (moved,) = tmp_path.glob("cache.sqlite3.corrupt-*")
    assert moved.read_bytes().startswith(b"this is not a database")
    # a fresh cache took its place and kept the page: a restart still has it
    async with serve(test_settings(cache=f"sqlite:{path}")) as server:
        assert await read_status(http, server, target) == (200, "hit")


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
        assert 'event="error",layer="redis"}' in metrics.decode()
    # After the restart, a second process sees what the first wrote once Redis was back.
    with serve_process(redis_server.url) as first, serve_process(redis_server.url) as second:
        assert get(first.read_url(upstream.url("/cached/redis-after")))[1]["X-Cache"] == "miss"
        assert get(second.read_url(upstream.url("/cached/redis-after")))[1]["X-Cache"] == "hit"


def _concurrent_reads(urls: list[str]) -> list[tuple[int, str]]:
    """GET every URL at the same time (threads, since the servers run in other processes)."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(len(urls)) as pool:
        return [(status, headers.get("X-Cache", "")) for status, headers, _ in pool.map(get, urls)]


def test_a_single_flight_holds_across_server_processes_sharing_redis(
    redis_server: RedisServer, upstream: Upstream
) -> None:
    """Concurrent misses for one page on two instances behind a load balancer: one upstream fetch."""
    target = upstream.url("/counter/across-redis?delay=0.5")
    with serve_process(redis_server.url) as first, serve_process(redis_server.url) as second:
        answers = _concurrent_reads([first.read_url(target), second.read_url(target)] * 3)
    assert [status for status, _ in answers] == [200] * 6
    assert upstream.count("/counter/across-redis") == 1
    # the instance that fetched answers "miss" (its concurrent callers share its one fetch); the other
    # took the copy from Redis
    by_instance = {
        frozenset(cache for _, cache in answers[0::2]),
        frozenset(cache for _, cache in answers[1::2]),
    }
    assert by_instance == {frozenset({"miss"}), frozenset({"hit"})}


def test_a_single_flight_holds_across_workers_sharing_sqlite(tmp_path: Path, upstream: Upstream) -> None:
    """The same with the embedded SQLite cache shared by two processes on one machine (--workers)."""
    cache = f"sqlite:{tmp_path / 'shared.sqlite3'}"
    target = upstream.url("/counter/across-sqlite?delay=0.5")
    with serve_process(cache) as first, serve_process(cache) as second:
        answers = _concurrent_reads([first.read_url(target), second.read_url(target)] * 3)
    assert [status for status, _ in answers] == [200] * 6
    assert upstream.count("/counter/across-sqlite") == 1


def test_workers_share_one_port_and_stop_together(tmp_path: Path, upstream: Upstream) -> None:
    """`--workers 2`: two processes answer on one port (SO_REUSEPORT), share the SQLite cache, and
    SIGTERM to the supervisor stops them all."""
    import signal
    import time

    from support.reader_server import start_server_process

    cache = f"sqlite:{tmp_path / 'workers.sqlite3'}"
    process, base = start_server_process("--workers", "2", "--cache", cache, "--allow-private")
    try:
        pids: set[int] = set()
        deadline = time.monotonic() + 30
        while len(pids) < 2 and time.monotonic() < deadline:
            try:
                status, _, body = get(base + "/healthz")
            except OSError:
                time.sleep(0.1)
                continue
            if status == 200:
                pids.add(json.loads(body)["pid"])
        assert len(pids) == 2, pids
        target = upstream.url("/cached/workers-share")
        statuses = [get(f"{base}/read?url={target}")[1].get("X-Cache") for _ in range(6)]
        assert statuses[0] == "miss" and set(statuses[1:]) <= {"hit"}
        assert upstream.count("/cached/workers-share") == 1
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(30)  # a bound for a hang, not a measure: the proof is below
    # the supervisor stopped cleanly and took every worker with it
    assert process.returncode == 0
    for _ in range(100):
        if not any(_running(pid) for pid in pids):
            break
        time.sleep(0.05)
    assert not any(_running(pid) for pid in pids), pids


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:  # a zombie is not running
            return stat.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False
