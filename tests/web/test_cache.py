"""The layered cache with real parts: SQLite files (corrupt, locked, read-only), a real redis-server
(shared, stopped and restarted)."""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import sqlite3
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.redis_server import RedisServer

from readerproxy.web.cache import LayeredCache, MemoryLRU, SQLiteBackend, open_cache

Events = list[tuple[str, str]]


def cache_warnings(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "readerproxy.web.cache" and r.levelno == logging.WARNING]


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


async def test_sqlite_corrupt_file_is_moved_aside_and_named(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "cache.sqlite3"
    path.write_bytes(b"this is not a database" * 100)
    cache = LayeredCache(MemoryLRU(), SQLiteBackend(path), retry_interval=0)
    await cache.set("after", b"fixed", ttl=60)  # the corrupt file is moved aside, a new one starts
    assert not cache.degraded
    moved = [p.name for p in tmp_path.iterdir() if ".corrupt-" in p.name]
    assert moved and moved[0].startswith("cache.sqlite3.corrupt-")
    assert any(str(path) in r.getMessage() and "corrupt" in r.getMessage() for r in caplog.records)
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


def _open_and_lock_together(path: Path) -> tuple[list[bool], list[BaseException]]:
    """Two threads, each with a backend of its own on `path`, ask for one lock at the same moment:
    whether each got it, and what failed."""
    start = threading.Barrier(2)
    acquired: list[bool] = []
    failures: list[BaseException] = []

    def open_and_lock(token: str) -> None:
        backend = SQLiteBackend(path)
        start.wait()
        try:
            acquired.append(backend._acquire("lock:page", token, ttl=30))
        except sqlite3.OperationalError as exc:
            failures.append(exc)

    threads = [threading.Thread(target=open_and_lock, args=(token,)) for token in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return acquired, failures


def test_two_processes_opening_a_new_file_together_both_take_part_in_its_lock(tmp_path: Path) -> None:
    """Two servers started together on one new SQLite file (`--workers`): each opens it and asks for
    the same lock at once; exactly one gets it, and neither fails (SQLite answers "database is
    locked" to the switch to WAL at once, without its busy timeout: before `use_wal`, 27 of 200
    such races failed, and the failing server fetched beside the lock's holder). Two threads with a
    connection each stand for the two processes: SQLite locks the file the same way."""
    for attempt in range(200):
        acquired, failures = _open_and_lock_together(tmp_path / f"new-{attempt}.sqlite3")
        assert failures == [] and sorted(acquired) == [False, True], attempt


def _immutable(path: Path, on: bool) -> None:
    """Make a path read-only even for root: chattr +i when root (skip if unsupported), chmod otherwise."""
    if os.geteuid() == 0:
        chattr = shutil.which("chattr")
        result = (
            subprocess.run(
                [chattr or "chattr", "+i" if on else "-i", str(path)], capture_output=True, check=False
            )
            if chattr
            else None
        )
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
async def test_sqlite_read_only_degrades_then_recovers(
    read_only_dir: Path, what: str, caplog: pytest.LogCaptureFixture
) -> None:
    path = read_only_dir / "cache.sqlite3"
    if what == "file":
        seeded = open_cache(f"sqlite:{path}")
        await seeded.set("old", b"seed", ttl=60)
        await seeded.close()
        _immutable(path, True)
    _immutable(read_only_dir, True)
    events: Events = []
    cache = LayeredCache(
        MemoryLRU(), SQLiteBackend(path), lambda layer, event: events.append((layer, event)), retry_interval=0
    )
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

    async def acquire(self, key: str, token: str, ttl: float) -> bool:
        self.calls += 1
        raise OSError("disk on fire")

    async def release(self, key: str, token: str) -> None:
        self.calls += 1
        raise OSError("disk on fire")

    async def close(self) -> None:
        return None


async def test_degraded_backend_is_left_alone_until_the_back_off_ends(
    caplog: pytest.LogCaptureFixture,
) -> None:
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
async def test_redis_down_degrades_and_recovers_on_restart(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
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


# ---- a slow write never fails a cached read ---------------------------------------


def _hold_writes(backend: SQLiteBackend) -> tuple[threading.Event, threading.Event]:
    """Make the backend's next write stop, under its write lock, until `release` is set; `entered`
    is set once it has stopped there (a big value, an eviction at the bound, a slow disk)."""
    entered, release = threading.Event(), threading.Event()
    real = SQLiteBackend._used_bytes

    def slow(conn: sqlite3.Connection) -> int:
        entered.set()
        release.wait(30)
        return real(conn)

    backend._used_bytes = slow  # type: ignore[method-assign]
    return entered, release


async def test_a_sqlite_read_is_answered_while_a_write_holds_the_lock(tmp_path: Path) -> None:
    """Reads had to wait for the one connection's lock that a slow write held, timed out, and took
    the backend out: cached reads missed (10 of 1,055 /api/extract reads 503 at the 1 GiB bound).
    Reads now have a connection and a thread of their own; in WAL mode SQLite lets them read."""
    backend = SQLiteBackend(tmp_path / "cache.sqlite3")
    writer = LayeredCache(MemoryLRU(), backend)
    await writer.set("cached", b"result", ttl=60)
    reader = LayeredCache(MemoryLRU(), backend)  # memory empty: the read goes to SQLite
    entered, release = _hold_writes(backend)
    write = asyncio.ensure_future(writer.set("new", b"x" * 1000, ttl=60))
    try:
        assert await asyncio.to_thread(entered.wait, 30)
        assert await reader.get("cached") == b"result"
        assert not reader.degraded
    finally:
        release.set()
        await write
    await writer.close()


async def test_a_slow_write_does_not_take_the_backend_out_for_reads(tmp_path: Path) -> None:
    backend = SQLiteBackend(tmp_path / "cache.sqlite3")
    events: Events = []
    cache = LayeredCache(
        MemoryLRU(), backend, lambda layer, event: events.append((layer, event)), op_timeout=0.05
    )
    await cache.set("cached", b"result", ttl=60)
    cache.memory.clear()
    entered, release = _hold_writes(backend)
    try:
        await cache.set("slow", b"x", ttl=60)  # given up after op_timeout, still running
        assert await asyncio.to_thread(entered.wait, 30) and ("sqlite", "slow") in events
        assert not cache.degraded
        assert await cache.get("cached") == b"result"  # from SQLite, not a miss
    finally:
        release.set()
    await cache.close()


async def test_writes_waiting_for_a_slow_one_are_bounded(tmp_path: Path) -> None:
    backend = SQLiteBackend(tmp_path / "cache.sqlite3")
    await backend.set("first", b"1", None)
    entered, release = _hold_writes(backend)
    waiting = [
        asyncio.ensure_future(backend.set(f"k{i}", b"v", None)) for i in range(backend.MAX_PENDING_WRITES + 5)
    ]
    try:
        assert await asyncio.to_thread(entered.wait, 30)
        assert backend.dropped == 5  # the ones past the bound returned at once, not stored
    finally:
        release.set()
        await asyncio.gather(*waiting)
    assert (
        await backend.get("k0") is not None
        and await backend.get(f"k{backend.MAX_PENDING_WRITES + 4}") is None
    )
    await backend.close()
