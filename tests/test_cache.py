"""The layered cache with real parts: SQLite files (corrupt, locked, read-only), a real redis-server
(shared, stopped and restarted), and PageStore against the upstream test site on 127.0.0.1."""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import sqlite3
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from support.redis_server import RedisServer
from support.upstream import Upstream

from readerproxy.cache import (
    LayeredCache,
    MemoryLRU,
    PageStore,
    SingleFlight,
    SQLiteBackend,
    freshness,
    normalize_url,
    open_cache,
)
from readerproxy.fetch import Fetcher, FetchError, FetchSettings

Events = list[tuple[str, str]]


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def cache_warnings(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "readerproxy.cache" and r.levelno == logging.WARNING]


# ---- MemoryLRU ---------------------------------------------------------------------------------------

def test_lru_evicts_least_recently_used_by_bytes() -> None:
    size = len("a") + 300 + MemoryLRU.ENTRY_OVERHEAD
    lru = MemoryLRU(max_bytes=3 * size)
    for key in "abc":
        lru.set(key, key.encode() * 300)
    assert lru.total_bytes == 3 * size and len(lru) == 3
    assert lru.get("a") == b"a" * 300  # "a" is now the most recently used
    lru.set("d", b"d" * 300)
    assert [k for k in "abcd" if k in lru] == ["a", "c", "d"]  # "b" was the least recently used
    lru.set("e", b"e" * 600)  # worth nearly two entries: evicts the two least recently used ("c", then "a")
    assert [k for k in "acde" if k in lru] == ["d", "e"]
    assert lru.total_bytes <= lru.max_bytes


def test_lru_replace_delete_and_oversized() -> None:
    lru = MemoryLRU(max_bytes=1000)
    lru.set("k", b"x" * 100)
    lru.set("k", b"y" * 10)
    assert lru.get("k") == b"y" * 10 and lru.total_bytes == 1 + 10 + MemoryLRU.ENTRY_OVERHEAD
    lru.set("big", b"z" * 2000)  # larger than the whole cache: not kept, nothing evicted for it
    assert "big" not in lru and "k" in lru
    lru.delete("k")
    assert len(lru) == 0 and lru.total_bytes == 0


def test_lru_ttl_expires_entries() -> None:
    clock = FakeClock()
    lru = MemoryLRU(max_bytes=10_000, clock=clock)
    lru.set("short", b"1", ttl=10)
    lru.set("forever", b"2")
    lru.set("never", b"3", ttl=0)
    assert "never" not in lru
    clock.now += 9.9
    assert lru.get("short") == b"1" and lru.ttl("short") == pytest.approx(0.1)
    clock.now += 0.1
    assert lru.get("short") is None and "short" not in lru
    assert lru.get("forever") == b"2" and lru.ttl("forever") is None


# ---- URL keys and HTTP freshness ---------------------------------------------------------------------

@pytest.mark.parametrize(("url", "expected"), [
    ("HTTP://Example.COM:80/Path?b=2&a=1#top", "http://example.com/Path?b=2&a=1"),
    ("https://example.com:443", "https://example.com/"),
    ("https://example.com:8443/x", "https://example.com:8443/x"),
    ("http://[2001:DB8::1]:80/", "http://[2001:db8::1]/"),
])
def test_normalize_url(url: str, expected: str) -> None:
    assert normalize_url(url) == expected


@pytest.mark.parametrize(("headers", "store", "lifetime"), [
    ({}, True, 300.0),
    ({"cache-control": "max-age=60"}, True, 60.0),
    ({"cache-control": "public, s-maxage=30, max-age=60"}, True, 30.0),
    ({"cache-control": "private, max-age=60"}, True, 60.0),
    ({"cache-control": "max-age=999999"}, True, 86400.0),
    ({"cache-control": "no-cache, max-age=60"}, True, 0.0),
    ({"cache-control": "no-store"}, False, 0.0),
    ({"cache-control": 'max-age="20"'}, True, 20.0),
    ({"expires": "Thu, 01 Jan 2015 00:01:00 GMT", "date": "Thu, 01 Jan 2015 00:00:00 GMT"}, True, 60.0),
    ({"expires": "0"}, True, 0.0),
    ({"cache-control": "max-age=10", "expires": "Thu, 01 Jan 2015 00:01:00 GMT"}, True, 10.0),
])
def test_freshness(headers: dict[str, str], store: bool, lifetime: float) -> None:
    policy = freshness(headers, default_ttl=300.0, max_ttl=86400.0)
    assert (policy.store, policy.lifetime) == (store, lifetime)


# ---- SingleFlight ------------------------------------------------------------------------------------

async def test_single_flight_shares_one_call() -> None:
    flights = SingleFlight()
    calls = 0
    release = asyncio.Event()

    async def work() -> str:
        nonlocal calls
        calls += 1
        await release.wait()
        return "done"

    waiters = [asyncio.create_task(flights.run("k", work)) for _ in range(20)]
    await asyncio.sleep(0)
    assert len(flights) == 1
    waiters[0].cancel()  # one caller giving up does not cancel the shared call
    release.set()
    results = await asyncio.gather(*waiters[1:])
    assert results == ["done"] * 19 and calls == 1 and len(flights) == 0
    assert await flights.run("k", work) == "done" and calls == 2  # a later call runs again


async def test_single_flight_shares_the_exception() -> None:
    flights = SingleFlight()

    async def fail() -> None:
        await asyncio.sleep(0)
        raise ValueError("boom")

    results = await asyncio.gather(*(flights.run("k", fail) for _ in range(5)), return_exceptions=True)
    assert all(isinstance(r, ValueError) for r in results) and len(flights) == 0


# ---- SQLite ------------------------------------------------------------------------------------------

async def test_sqlite_persists_across_instances(tmp_path: Path) -> None:
    events: Events = []
    spec = f"sqlite:{tmp_path / 'sub' / 'cache.sqlite3'}"
    first = open_cache(spec)
    await first.set("k", b"value", ttl=60)
    await first.set("gone", b"x", ttl=0.001)
    await first.close()
    second = open_cache(spec, lambda layer, event: events.append((layer, event)))
    assert await second.get("k") == b"value"
    assert events == [("memory", "miss"), ("sqlite", "hit")]
    assert await second.get("k") == b"value"  # now from memory
    assert events[-1] == ("memory", "hit")
    await asyncio.sleep(0.01)
    assert await second.get("gone") is None and events[-1] == ("sqlite", "miss")
    await second.delete("k")
    assert await second.get("k") is None
    await second.close()
    assert (tmp_path / "sub" / "cache.sqlite3").is_file()


async def test_sqlite_corrupt_file_degrades_then_recovers(tmp_path: Path,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "cache.sqlite3"
    path.write_bytes(b"this is not a database" * 100)
    events: Events = []
    cache = LayeredCache(MemoryLRU(), SQLiteBackend(path), lambda layer, event: events.append((layer, event)),
                         retry_interval=0)
    for i in range(3):  # no exception, memory keeps working, one warning for the whole outage
        await cache.set(f"k{i}", b"v", ttl=60)
        assert await cache.get(f"k{i}") == b"v"
    assert await cache.get("missing") is None
    assert cache.degraded and ("sqlite", "error") in events
    assert len(cache_warnings(caplog)) == 1
    path.unlink()  # fixed: the operator removed the corrupt file
    await cache.set("after", b"fixed", ttl=60)
    assert not cache.degraded
    await cache.close()
    reopened = open_cache(f"sqlite:{path}")
    assert await reopened.get("after") == b"fixed"
    await reopened.close()


async def test_sqlite_locked_degrades_then_recovers(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "cache.sqlite3"
    cache = LayeredCache(MemoryLRU(), SQLiteBackend(path), retry_interval=0)
    await cache.set("before", b"1", ttl=60)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another process holds the write lock
    try:
        await cache.set("during", b"2", ttl=60)
        await cache.set("during2", b"3", ttl=60)
        assert cache.degraded and len(cache_warnings(caplog)) == 1
        assert await cache.get("during") == b"2"  # memory still serves
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    await cache.set("after", b"4", ttl=60)
    assert not cache.degraded
    cache.memory.clear()
    assert await cache.get("after") == b"4" and await cache.get("before") == b"1"
    await cache.close()


def _immutable(path: Path, on: bool) -> None:
    """Make a path read-only even for root: chattr +i when root (skip if unsupported), chmod otherwise."""
    if os.geteuid() == 0:
        chattr = shutil.which("chattr")
        result = subprocess.run([chattr or "chattr", "+i" if on else "-i", str(path)], capture_output=True,
                                check=False) if chattr else None
        if on and (result is None or result.returncode != 0):
            pytest.skip("running as root without a working chattr: cannot make a file read-only")
    else:
        path.chmod((0o555 if path.is_dir() else 0o444) if on else (0o755 if path.is_dir() else 0o644))


@pytest.fixture
def read_only_dir(tmp_path: Path) -> Iterator[Path]:
    directory = tmp_path / "ro"
    directory.mkdir()
    yield directory
    for path in [*directory.iterdir(), directory]:
        _immutable(path, False)


@pytest.mark.parametrize("what", ["directory", "file"])
async def test_sqlite_read_only_degrades_then_recovers(read_only_dir: Path, what: str,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    path = read_only_dir / "cache.sqlite3"
    if what == "file":
        seeded = open_cache(f"sqlite:{path}")
        await seeded.set("old", b"seed", ttl=60)
        await seeded.close()
        _immutable(path, True)
    _immutable(read_only_dir, True)
    events: Events = []
    cache = LayeredCache(MemoryLRU(), SQLiteBackend(path), lambda layer, event: events.append((layer, event)),
                         retry_interval=0)
    for i in range(3):
        await cache.set(f"k{i}", b"v", ttl=60)
        assert await cache.get(f"k{i}") == b"v"
    assert cache.degraded and ("sqlite", "error") in events and len(cache_warnings(caplog)) == 1
    _immutable(read_only_dir, False)
    if what == "file":
        _immutable(path, False)
    await cache.set("after", b"ok", ttl=60)
    assert not cache.degraded
    await cache.close()
    reopened = open_cache(f"sqlite:{path}")
    assert await reopened.get("after") == b"ok"
    await reopened.close()


class FailingBackend:
    name = "sqlite"

    def __init__(self) -> None:
        self.calls = 0

    async def get(self, key: str) -> bytes | None:
        self.calls += 1
        raise OSError("disk on fire")

    async def set(self, key: str, value: bytes, ttl: float | None) -> None:
        self.calls += 1
        raise OSError("disk on fire")

    async def delete(self, key: str) -> None:
        self.calls += 1
        raise OSError("disk on fire")

    async def close(self) -> None:
        return None


async def test_degraded_backend_is_left_alone_until_the_back_off_ends(caplog: pytest.LogCaptureFixture) -> None:
    backend = FailingBackend()
    cache = LayeredCache(MemoryLRU(), backend, retry_interval=3600)
    await cache.set("a", b"1", ttl=None)
    for _ in range(10):
        assert await cache.get("a") == b"1"
        assert await cache.get("b") is None
        await cache.set("c", b"2", ttl=None)
    assert backend.calls == 1 and len(cache_warnings(caplog)) == 1
    cache._retry_at = 0.0  # the back-off has ended
    assert await cache.get("b") is None
    assert backend.calls == 2 and cache.degraded and len(cache_warnings(caplog)) == 1


def test_open_cache_specs(tmp_path: Path) -> None:
    assert open_cache("memory").backend is None
    assert isinstance(open_cache(f"sqlite:{tmp_path / 'c.db'}").backend, SQLiteBackend)
    assert getattr(open_cache("redis://127.0.0.1:1/0").backend, "name", None) == "redis"
    for bad in ("", "mysql://x", "sqlite:"):
        with pytest.raises(ValueError):
            open_cache(bad)


# ---- Redis (a real redis-server) ---------------------------------------------------------------------

@pytest.mark.redis
async def test_two_caches_share_one_redis(redis_url: str) -> None:
    events: Events = []
    one = open_cache(redis_url)
    two = open_cache(redis_url, lambda layer, event: events.append((layer, event)))
    try:
        await one.set("shared", b"from one", ttl=60)
        assert await two.get("shared") == b"from one"
        assert events == [("memory", "miss"), ("redis", "hit")]
        await two.delete("shared")
        one.memory.clear()
        assert await one.get("shared") is None
    finally:
        await one.close()
        await two.close()


@pytest.mark.redis
async def test_redis_down_degrades_and_recovers_on_restart(redis_server: RedisServer,
                                                           caplog: pytest.LogCaptureFixture) -> None:
    events: Events = []
    cache = open_cache(redis_server.url, lambda layer, event: events.append((layer, event)), retry_interval=0)
    other = open_cache(redis_server.url)
    try:
        await cache.set("k", b"1", ttl=60)
        redis_server.stop()
        for i in range(3):  # no exception: memory only, one warning
            await cache.set(f"down{i}", b"2", ttl=60)
            assert await cache.get(f"down{i}") == b"2"
        assert await cache.get("absent") is None
        assert cache.degraded and ("redis", "error") in events and len(cache_warnings(caplog)) == 1
        redis_server.start()  # same port, empty (no persistence)
        await cache.set("back", b"3", ttl=60)
        assert not cache.degraded
        assert await other.get("back") == b"3"  # really written to the restarted server
    finally:
        await cache.close()
        await other.close()


# ---- PageStore ---------------------------------------------------------------------------------------

@pytest.fixture
async def fetcher() -> AsyncIterator[Fetcher]:
    async with Fetcher(FetchSettings(allow_private=True)) as f:
        yield f


@pytest.fixture
def store(fetcher: Fetcher) -> PageStore:
    return PageStore(open_cache("memory"), fetcher)


async def test_max_age_is_a_hit(store: PageStore, upstream: Upstream) -> None:
    url = upstream.url("/cached/max-age")
    first, status1 = await store.get(url)
    second, status2 = await store.get(url.replace("http://", "HTTP://") + "#fragment")  # same key
    assert (status1, status2) == ("miss", "hit") and second.body == first.body
    assert upstream.count("/cached/max-age") == 1


async def test_expires_is_a_hit(store: PageStore, upstream: Upstream) -> None:
    url = upstream.url("/expires/page")
    assert [(await store.get(url))[1] for _ in range(2)] == ["miss", "hit"]
    assert upstream.count("/expires/page") == 1


async def test_no_store_is_never_cached(store: PageStore, upstream: Upstream) -> None:
    url = upstream.url("/nostore/page")
    assert [(await store.get(url))[1] for _ in range(3)] == ["miss"] * 3
    assert upstream.count("/nostore/page") == 3


@pytest.mark.parametrize("route", ["etag", "lastmod"])
async def test_stale_page_is_revalidated(store: PageStore, upstream: Upstream, route: str) -> None:
    path = f"/{route}/revalidate"
    first, status1 = await store.get(upstream.url(path))
    second, status2 = await store.get(upstream.url(path))
    assert (status1, status2) == ("miss", "revalidated")
    assert second.body == first.body and second.fetched_at >= first.fetched_at and not second.not_modified
    assert upstream.count(path) == 2 and upstream.conditional(path) == 1


async def test_refresh_bypasses_the_cache(store: PageStore, upstream: Upstream) -> None:
    url = upstream.url("/cached/refresh")
    statuses = [(await store.get(url))[1], (await store.get(url, refresh=True))[1], (await store.get(url))[1]]
    assert statuses == ["miss", "miss", "hit"]
    assert upstream.count("/cached/refresh") == 2 and upstream.conditional("/cached/refresh") == 0


async def test_single_flight_makes_one_upstream_request(store: PageStore, upstream: Upstream) -> None:
    url = upstream.url("/counter/single-flight")
    results = await asyncio.gather(*(store.get(url) for _ in range(20)))
    assert upstream.count("/counter/single-flight") == 1
    assert len({page.body for page, _ in results}) == 1 and {s for _, s in results} == {"miss"}


async def test_errors_are_not_cached(store: PageStore, upstream: Upstream) -> None:
    for _ in range(2):
        with pytest.raises(FetchError):
            await store.get(upstream.url("/status/404"))
    assert upstream.count("/status/404") >= 2


async def test_zero_default_ttl_does_not_store(fetcher: Fetcher, upstream: Upstream) -> None:
    store = PageStore(open_cache("memory"), fetcher, default_ttl=0)
    url = upstream.url("/counter/no-headers?delay=0")
    assert [(await store.get(url))[1] for _ in range(2)] == ["miss", "miss"]


async def test_pages_persist_in_sqlite(fetcher: Fetcher, upstream: Upstream, tmp_path: Path) -> None:
    spec = f"sqlite:{tmp_path / 'pages.sqlite3'}"
    first = PageStore(open_cache(spec), fetcher)
    page, status = await first.get(upstream.url("/cached/sqlite"))
    await first.cache.close()
    second = PageStore(open_cache(spec), fetcher)
    again, status2 = await second.get(upstream.url("/cached/sqlite"))
    await second.cache.close()
    assert (status, status2) == ("miss", "hit") and again == page
    assert upstream.count("/cached/sqlite") == 1


@pytest.mark.redis
async def test_two_stores_share_pages_through_redis(fetcher: Fetcher, upstream: Upstream, redis_url: str) -> None:
    one, two = PageStore(open_cache(redis_url), fetcher), PageStore(open_cache(redis_url), fetcher)
    try:
        _, status1 = await one.get(upstream.url("/cached/redis"))
        _, status2 = await two.get(upstream.url("/cached/redis"))
    finally:
        await one.cache.close()
        await two.cache.close()
    assert (status1, status2) == ("miss", "hit") and upstream.count("/cached/redis") == 1


async def test_broken_backend_never_breaks_the_store(fetcher: Fetcher, upstream: Upstream) -> None:
    store = PageStore(LayeredCache(MemoryLRU(), FailingBackend(), retry_interval=0), fetcher)
    statuses = [(await store.get(upstream.url("/cached/broken-backend")))[1] for _ in range(2)]
    assert statuses == ["miss", "hit"]  # the memory layer still serves
