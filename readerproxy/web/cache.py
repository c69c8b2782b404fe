"""The layered cache: an in-process LRU over SQLite or Redis, bytes in and bytes out.

- `MemoryLRU`: the in-process layer, `lru.LRU` bounded by total bytes, with a per-entry TTL.
- `CacheBackend`: the persistent layer — `SQLiteBackend` (embedded default) or `RedisBackend`
  (shared by several server processes). Backends raise on failure.
- `LayeredCache`: memory over an optional backend. A failing backend is never an error for the caller:
  one warning is logged, the cache carries on memory-only, and the backend is tried again after a
  back-off, so it recovers by itself when the backend returns.
- `CacheSpec` / `parse_cache_spec`: the one reading of "memory | sqlite:PATH | redis://HOST:PORT/DB",
  used by the settings (to refuse a bad spec at start-up) and by `open_cache`.

The HTTP caching policy for fetched pages is `pages.PageStore`; single flight is `singleflight`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import sqlite3
import struct
import threading
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

from .lru import LRU, bytes_size

log = logging.getLogger(__name__)

T = TypeVar("T")
EventHook = Callable[
    [str, str], None
]  # on_event(layer, event): "memory"|"sqlite"|"redis", "hit"|"miss"|"error"

# ---- layers ------------------------------------------------------------------------------------------


class CacheBackend(Protocol):
    """A persistent cache layer: bytes in, bytes out; raises on failure (LayeredCache handles it)."""

    name: str  # the layer name reported in events and metrics: "sqlite" | "redis"

    async def get(self, key: str) -> bytes | None: ...
    async def set(self, key: str, value: bytes, ttl: float | None) -> None: ...
    async def acquire(self, key: str, token: str, ttl: float) -> bool: ...
    async def release(self, key: str, token: str) -> None: ...
    async def delete(self, key: str) -> None: ...
    async def close(self) -> None: ...


#: The largest share of a cache's bound one entry may take (the memory layer and the SQLite file).
ENTRY_SHARE = 16


class MemoryLRU(LRU[str, bytes]):
    """The in-process layer: str keys, bytes values, bounded by their total size (see `lru.LRU`).

    `open_cache` gives the server's one a per-entry cap of 1/ENTRY_SHARE of the bound (4 MB of the
    default 64 MB): a few big pages (hostile ones, typically) would otherwise push every other page
    and result out, and reads that were cache hits would need a fetch and an extraction again.
    Such entries still go to the backend (SQLite, Redis) when there is one.
    """

    def __init__(
        self,
        max_bytes: int = 64 * 1024 * 1024,
        clock: Callable[[], float] = time.monotonic,
        *,
        max_entry_bytes: int | None = None,
    ) -> None:
        super().__init__(max_bytes, bytes_size, clock, max_entry_bytes=max_entry_bytes)


def is_corruption(exc: sqlite3.DatabaseError) -> bool:
    """A file that is not an SQLite database, or a damaged one (not a lock, a full disk, a read-only file)."""
    if isinstance(exc, sqlite3.OperationalError):
        return False
    message = str(exc).lower()
    return "not a database" in message or "malformed" in message or "encrypted" in message


def use_wal(conn: sqlite3.Connection, seconds: float) -> None:
    """`PRAGMA journal_mode = WAL`, tried again every 5 ms for up to `seconds` while another
    connection holds the file's lock. SQLite answers "database is locked" to this pragma at once,
    without its busy handler: two processes opening a new file together (`--workers`, or servers
    sharing one file) failed so 27 times in 200 (two threads, 2026-12-08); the cache's failing one
    took its backend out and fetched beside the lock's holder, the reading list's failed the save.
    The mode is the file's: once one connection has switched it, the others find it switched."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc).lower() or time.monotonic() >= deadline:
                raise
        time.sleep(0.005)


#: The default bound of the SQLite cache file (`--cache-max-bytes`).
DEFAULT_SQLITE_BYTES = 1024 * 1024 * 1024


class SQLiteBackend:
    """SQLite file (WAL, short busy timeout); blocking calls run in threads of its own.

    Reads and writes have a connection, a lock and a thread each: in WAL mode a reader never waits
    for a writer in SQLite, and here not in this process either, so a cached read is answered while
    a write (a big value, an eviction at the bound, a checkpoint) holds the write lock; nor do they
    queue behind other work on the event loop's default threads. Under a mixed load at the 1 GiB
    bound, reads waiting behind writes timed out ("cache backend sqlite failed (TimeoutError)"),
    and the cached reads then missed and needed an extraction: 10 of 1,055 were 503.

    The connection is opened lazily and dropped after any error, so a file that was corrupt, locked or
    read-only is simply opened again on the next attempt once it has been fixed.

    Bounded: the pages the database uses (`PRAGMA page_count` less the free list, times the page
    size: every row, index and table, read in O(1) from the file's header) stay within `max_bytes`.
    After a write that takes them past it, the oldest rows (first stored: the lowest rowids, as
    `INSERT OR REPLACE` gives a replaced row a new one) are deleted in growing batches until they
    are back under 90 % of it; freed pages are reused, so the file stops growing at about `max_bytes`. Every
    process sharing the file checks after its own writes, so the bound holds for all of them. A
    value over 1/ENTRY_SHARE of the bound is not stored.
    """

    name = "sqlite"
    BUSY_TIMEOUT_MS = 200
    WAL_SWITCH_SECONDS = 1.0  # `use_wal`: opening a new file beside another process
    PURGE_EVERY = 200  # sets between deletions of expired rows
    EVICT_BATCH = 256  # at most this many oldest rows deleted by one statement
    EVICT_STATEMENTS = 16  # and at most this many statements by one write (the next one goes on)
    MAX_PENDING_WRITES = 64  # writes waiting for the write thread before more are dropped (a cache)
    LOW_WATER = 0.9  # eviction stops under this share of the bound

    def __init__(self, path: str | Path, max_bytes: int = DEFAULT_SQLITE_BYTES) -> None:
        self.path = Path(path).expanduser()
        self.max_bytes = max_bytes
        self._conns: dict[bool, sqlite3.Connection | None] = {False: None, True: None}  # by "writes"
        self._locks = {False: threading.Lock(), True: threading.Lock()}
        self._threads = {
            False: ThreadPoolExecutor(1, thread_name_prefix="sqlite-read"),
            True: ThreadPoolExecutor(1, thread_name_prefix="sqlite-write"),
        }
        self._pending_writes = 0
        self._sets = 0
        self.evicted = 0  # rows deleted to keep the bound
        self.dropped = 0  # writes not made: MAX_PENDING_WRITES were waiting already

    @property
    def location(self) -> str:
        return str(self.path)

    def _connection(self, writes: bool) -> sqlite3.Connection:
        try:
            return self._open(writes)
        except sqlite3.DatabaseError as exc:
            if not is_corruption(exc):
                raise
            self._move_aside(exc)
            return self._open(writes)

    def _move_aside(self, exc: BaseException) -> None:
        """A corrupt file is renamed (with its -wal and -shm) so a fresh cache starts in its place."""
        self._drop(False)
        self._drop(True)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        moved = self.path.with_name(f"{self.path.name}.corrupt-{stamp}")
        for suffix in ("", "-wal", "-shm"):
            source = self.path.with_name(self.path.name + suffix)
            with contextlib.suppress(FileNotFoundError):
                source.rename(moved.with_name(moved.name + suffix))
        log.warning(
            "SQLite cache file %s is corrupt (%s); moved it aside to %s and started a new one",
            self.path,
            exc,
            moved,
        )

    def _open(self, writes: bool) -> sqlite3.Connection:
        conn = self._conns[writes]
        if conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(
                self.path, timeout=self.BUSY_TIMEOUT_MS / 1000, check_same_thread=False, isolation_level=None
            )
            try:
                conn.execute(f"PRAGMA busy_timeout = {self.BUSY_TIMEOUT_MS}")
                use_wal(conn, self.WAL_SWITCH_SECONDS)
                conn.execute("PRAGMA synchronous = NORMAL")
                # the write-ahead log is cut back to this after a checkpoint (it counts on disk too)
                conn.execute(f"PRAGMA journal_size_limit = {min(self.max_bytes // ENTRY_SHARE, 64 << 20)}")
                conn.execute(
                    "CREATE TABLE IF NOT EXISTS cache "
                    "(key TEXT PRIMARY KEY, value BLOB NOT NULL, expires_at REAL)"
                )
                conn.execute(
                    "CREATE TABLE IF NOT EXISTS locks "
                    "(key TEXT PRIMARY KEY, token TEXT NOT NULL, expires_at REAL NOT NULL)"
                )
            except BaseException:
                conn.close()
                raise
            self._conns[writes] = conn
        return conn

    def _run(self, operation: Callable[[sqlite3.Connection], T], *, writes: bool = True) -> T:
        with self._locks[writes]:
            try:
                return operation(self._connection(writes))
            except sqlite3.DatabaseError as exc:
                if is_corruption(exc):
                    self._move_aside(exc)
                self._drop(writes)
                raise
            except BaseException:
                self._drop(writes)
                raise

    def _drop(self, writes: bool) -> None:
        conn, self._conns[writes] = self._conns[writes], None
        if conn is not None:
            with contextlib.suppress(sqlite3.Error):
                conn.close()

    def _get(self, key: str) -> bytes | None:
        def op(conn: sqlite3.Connection) -> bytes | None:
            row = conn.execute(
                "SELECT value FROM cache WHERE key = ? AND (expires_at IS NULL OR expires_at > ?)",
                (key, time.time()),
            ).fetchone()
            return None if row is None else bytes(row[0])

        return self._run(op, writes=False)

    def _set(self, key: str, value: bytes, ttl: float | None) -> None:
        expires_at = None if ttl is None else time.time() + ttl
        self._sets += 1
        purge = self._sets % self.PURGE_EVERY == 0
        if len(value) > self.max_bytes // ENTRY_SHARE:  # too big a share of the file: not kept
            self._delete(key)
            return

        def op(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT OR REPLACE INTO cache (key, value, expires_at) VALUES (?, ?, ?)",
                (key, value, expires_at),
            )
            if purge:
                conn.execute(
                    "DELETE FROM cache WHERE expires_at IS NOT NULL AND expires_at <= ?", (time.time(),)
                )
            if self._used_bytes(conn) > self.max_bytes:
                self._evict(conn)

        self._run(op)

    @staticmethod
    def _used_bytes(conn: sqlite3.Connection) -> int:
        """Bytes of the database's pages in use (not on the free list): O(1), from the header."""
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        free = conn.execute("PRAGMA freelist_count").fetchone()[0]
        size = conn.execute("PRAGMA page_size").fetchone()[0]
        return int((pages - free) * size)

    def _evict(self, conn: sqlite3.Connection) -> None:
        """Delete the oldest rows until the used pages are under LOW_WATER of the bound, in at most
        EVICT_STATEMENTS statements: the write lock is held a bounded time, and the next write
        (which finds the file still over) goes on."""
        target = self.max_bytes * self.LOW_WATER
        batch = 1  # doubled while still over: a few statements, and never more than twice what was needed
        for _ in range(self.EVICT_STATEMENTS):
            if self._used_bytes(conn) <= target:
                return
            deleted = conn.execute(
                "DELETE FROM cache WHERE rowid IN (SELECT rowid FROM cache ORDER BY rowid LIMIT ?)",
                (batch,),
            ).rowcount
            if deleted <= 0:
                return
            self.evicted += deleted
            batch = min(batch * 2, self.EVICT_BATCH)

    def used_bytes(self) -> int:
        """Bytes of the database's pages in use (blocking)."""
        return self._run(self._used_bytes, writes=False)

    def _delete(self, key: str) -> None:
        self._run(lambda conn: conn.execute("DELETE FROM cache WHERE key = ?", (key,)))

    def _acquire(self, key: str, token: str, ttl: float) -> bool:
        def op(conn: sqlite3.Connection) -> bool:
            now = time.time()
            conn.execute("DELETE FROM locks WHERE key = ? AND expires_at <= ?", (key, now))
            inserted = conn.execute(
                "INSERT OR IGNORE INTO locks (key, token, expires_at) VALUES (?, ?, ?)",
                (key, token, now + ttl),
            )
            return inserted.rowcount == 1

        return self._run(op)

    def _release(self, key: str, token: str) -> None:
        self._run(lambda conn: conn.execute("DELETE FROM locks WHERE key = ? AND token = ?", (key, token)))

    async def _in_thread(self, writes: bool, call: Callable[..., T], *args: Any) -> T:
        """`call(*args)` on the read or the write thread (never the loop's default threads)."""
        return await asyncio.get_running_loop().run_in_executor(self._threads[writes], call, *args)

    async def acquire(self, key: str, token: str, ttl: float) -> bool:
        """Take a lock shared by every process using this file (expires after `ttl` seconds)."""
        return await self._in_thread(True, self._acquire, key, token, ttl)

    async def release(self, key: str, token: str) -> None:
        await self._in_thread(True, self._release, key, token)

    async def get(self, key: str) -> bytes | None:
        return await self._in_thread(False, self._get, key)

    async def set(self, key: str, value: bytes, ttl: float | None) -> None:
        """Store a value; dropped (it is a cache) when MAX_PENDING_WRITES already wait for the
        write thread: a write given up by its caller (`LayeredCache.op_timeout`) still runs, so
        slow writes must not pile up values in memory."""
        if self._pending_writes >= self.MAX_PENDING_WRITES:
            self.dropped += 1
            return
        self._pending_writes += 1
        try:
            future = asyncio.get_running_loop().run_in_executor(
                self._threads[True], self._set, key, value, ttl
            )
        except BaseException:
            self._pending_writes -= 1
            raise
        future.add_done_callback(self._write_done)
        await future

    def _write_done(self, _: object) -> None:
        self._pending_writes -= 1

    async def delete(self, key: str) -> None:
        await self._in_thread(True, self._delete, key)

    async def close(self) -> None:
        for writes in (False, True):
            with self._locks[writes]:
                self._drop(writes)
            self._threads[writes].shutdown(wait=False)


class RedisBackend:
    """Redis via redis-py's asyncio client; keys are prefixed, TTLs become PX expiries.

    Every key expires: a value stored without a TTL gets `MAX_TTL`, locks their own. Redis's
    memory is bounded by its own `maxmemory` with `maxmemory-policy allkeys-lru` (docs/security.md).
    """

    name = "redis"
    PREFIX = "readerproxy:"
    MAX_TTL = 7 * 86400.0  # seconds a value stored without a TTL is kept

    def __init__(self, url: str, timeout: float = 1.0) -> None:
        from redis.asyncio import Redis

        self.url = url
        self._redis: Any = Redis.from_url(
            url, socket_connect_timeout=timeout, socket_timeout=timeout, health_check_interval=0
        )

    async def get(self, key: str) -> bytes | None:
        value = await self._redis.get(self.PREFIX + key)
        return None if value is None else bytes(value)

    async def set(self, key: str, value: bytes, ttl: float | None) -> None:
        px = max(1, int((self.MAX_TTL if ttl is None else ttl) * 1000))
        await self._redis.set(self.PREFIX + key, value, px=px)

    async def delete(self, key: str) -> None:
        await self._redis.delete(self.PREFIX + key)

    #: Delete the lock only if it still holds our token (it may have expired and been taken by another).
    _RELEASE = (
        "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"
    )

    async def acquire(self, key: str, token: str, ttl: float) -> bool:
        """SET NX PX: a lock shared by every server using this Redis (expires after `ttl` seconds)."""
        return bool(await self._redis.set(self.PREFIX + key, token, nx=True, px=max(1, int(ttl * 1000))))

    async def release(self, key: str, token: str) -> None:
        await self._redis.eval(self._RELEASE, 1, self.PREFIX + key, token)

    #: A token bucket in one hash (tokens, at), refilled by Redis's own clock (`TIME`), so that
    #: instances on machines whose clocks differ agree; answers the seconds until the next token
    #: (0: one was taken). A string: Lua numbers come back to the client as integers.
    _TAKE = """
local rate, burst = tonumber(ARGV[1]), tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens, at = tonumber(state[1]) or burst, tonumber(state[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - at) * rate)
local wait = 0
if tokens < 1 then wait = (1 - tokens) / rate else tokens = tokens - 1 end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil(burst / rate * 1000) + 1000)
return tostring(wait)
"""

    async def take_token(self, key: str, rate: float, burst: int) -> float:
        """Take a token of the bucket `key` shared by every server on this Redis (`limits.RateLimiter`):
        0.0 when one was taken, else the seconds until the next. The bucket expires once full again."""
        wait = await self._redis.eval(self._TAKE, 1, self.PREFIX + "rate:" + key, repr(rate), str(burst))
        return float(wait)

    async def close(self) -> None:
        await self._redis.aclose()


# ---- the layered cache -------------------------------------------------------------------------------

_EXPIRY = struct.Struct("!d")  # backend values carry their wall-clock expiry (0 = none) for the memory layer


class LayeredCache:
    """Memory LRU over an optional persistent backend; a failing backend degrades to memory-only."""

    def __init__(
        self,
        memory: MemoryLRU,
        backend: CacheBackend | None,
        on_event: EventHook | None = None,
        *,
        retry_interval: float = 2.0,
        max_retry_interval: float = 30.0,
        op_timeout: float = 2.0,
    ) -> None:
        self.memory = memory
        self.backend = backend
        self.on_event = on_event
        self.retry_interval = retry_interval
        self.max_retry_interval = max_retry_interval
        self.op_timeout = op_timeout
        self.degraded = False
        self._retry_at = 0.0
        self._backoff = retry_interval

    def _event(self, layer: str, event: str) -> None:
        if self.on_event is not None:
            try:
                self.on_event(layer, event)
            except Exception:  # a metrics hook must never break the cache
                log.exception("cache on_event hook failed")

    # -- backend health --
    def _backend_usable(self) -> bool:
        return self.backend is not None and (not self.degraded or time.monotonic() >= self._retry_at)

    def _failed(self, exc: BaseException) -> None:
        assert self.backend is not None
        self._event(self.backend.name, "error")
        if not self.degraded:
            log.warning(
                "cache backend %s (%s) failed (%s: %s); continuing with the memory cache only and "
                "retrying in the background",
                self.backend.name,
                getattr(self.backend, "location", None) or getattr(self.backend, "url", ""),
                type(exc).__name__,
                exc,
            )
            self.degraded = True
            self._backoff = self.retry_interval
        else:
            self._backoff = min(self._backoff * 2, self.max_retry_interval)
        self._retry_at = time.monotonic() + self._backoff

    def _succeeded(self) -> None:
        if self.degraded:
            assert self.backend is not None
            log.info("cache backend %s is back", self.backend.name)
            self.degraded = False

    async def _backend_call(self, call: Awaitable[T], *, slow_fails: bool = True) -> tuple[bool, T | None]:
        """`call` within `op_timeout`: (True, its value), or (False, None) with the backend marked
        failed. With `slow_fails=False` (writes) a call that is only slow is counted ("slow") and
        let be: a slow write is no sign that reads fail, and taking the backend out would turn
        every cached read of the back-off into a miss (and, with the workers busy, a 503)."""
        try:
            async with asyncio.timeout(self.op_timeout):
                result = await call
        except TimeoutError as exc:
            if slow_fails:
                self._failed(exc)
            else:
                assert self.backend is not None
                self._event(self.backend.name, "slow")
            return False, None
        except Exception as exc:
            self._failed(exc)
            return False, None
        self._succeeded()
        return True, result

    # -- the interface --
    async def get(self, key: str, *, skip_memory: bool = False) -> bytes | None:
        """Memory first, then the backend (filling memory on a backend hit); None on a miss.

        skip_memory: ask the backend only (another process may have stored a newer copy).
        """
        value = None if skip_memory else self.memory.get(key)
        if value is not None:
            self._event("memory", "hit")
            return value
        if not skip_memory:
            self._event("memory", "miss")
        if self.backend is None or not self._backend_usable():
            return None  # no backend, or degraded and not yet due for a retry
        ok, stored = await self._backend_call(self.backend.get(key))
        if not ok:
            return None
        if stored is None or len(stored) < _EXPIRY.size:
            self._event(self.backend.name, "miss")
            return None
        (expires_at,) = _EXPIRY.unpack_from(stored)
        ttl = None if expires_at == 0 else expires_at - time.time()
        if ttl is not None and ttl <= 0:
            self._event(self.backend.name, "miss")
            return None
        self._event(self.backend.name, "hit")
        value = stored[_EXPIRY.size :]
        self.memory.set(key, value, ttl)
        return value

    async def set(self, key: str, value: bytes, ttl: float | None = None) -> None:
        """Store in memory and (if healthy or due for a retry) in the backend."""
        self.memory.set(key, value, ttl)
        if self.backend is None or not self._backend_usable():
            return
        expires_at = 0.0 if ttl is None else time.time() + ttl
        await self._backend_call(
            self.backend.set(key, _EXPIRY.pack(expires_at) + value, ttl), slow_fails=False
        )

    async def delete(self, key: str) -> None:
        self.memory.delete(key)
        if self.backend is not None and self._backend_usable():
            await self._backend_call(self.backend.delete(key))

    async def try_lock(self, key: str, ttl: float) -> tuple[bool, str]:
        """A lock across every process sharing the backend: (go ahead, token to release).

        Without a shared backend (memory only, or degraded) the answer is always "go ahead": the
        in-process single flight is all there is. A failing backend never blocks anyone.
        """
        if self.backend is None or not self._backend_usable():
            return True, ""
        token = secrets.token_hex(8)
        ok, acquired = await self._backend_call(self.backend.acquire(key, token, ttl))
        if not ok:
            return True, ""
        return bool(acquired), token if acquired else ""

    async def unlock(self, key: str, token: str) -> None:
        if token and self.backend is not None:
            await self._backend_call(self.backend.release(key, token))

    async def close(self) -> None:
        if self.backend is not None:
            try:
                await self.backend.close()
            except Exception as exc:
                log.warning("closing cache backend %s failed: %s", self.backend.name, exc)


@dataclass(frozen=True, slots=True)
class CacheSpec:
    """A parsed cache spec: kind "memory" | "sqlite" | "redis", and the path or URL it names."""

    kind: str
    target: str = ""


CACHE_SPEC_HELP = "use memory, sqlite:PATH or redis://HOST:PORT/DB"


def parse_cache_spec(spec: str) -> CacheSpec:
    """memory | sqlite:PATH | redis://HOST:PORT/DB (rediss:// and unix:// too), or ValueError saying why."""
    if spec == "memory":
        return CacheSpec("memory")
    if spec.startswith("sqlite:"):
        path = spec.removeprefix("sqlite:").removeprefix("//")
        if not path.strip("/ "):
            raise ValueError(
                f"the sqlite cache needs a file path: sqlite:PATH, e.g. sqlite:~/readerproxy.sqlite3 "
                f"(got {spec!r})"
            )
        return CacheSpec("sqlite", path)
    if spec.startswith(("redis://", "rediss://", "unix://")):
        return CacheSpec("redis", spec)
    raise ValueError(f"unknown cache {spec!r}: {CACHE_SPEC_HELP}")


def open_cache(
    spec: str,
    on_event: EventHook | None = None,
    *,
    memory_bytes: int = 64 * 1024 * 1024,
    retry_interval: float = 2.0,
    max_bytes: int = DEFAULT_SQLITE_BYTES,
) -> LayeredCache:
    """A LayeredCache from a spec (see `parse_cache_spec`); `max_bytes` bounds a SQLite file."""
    parsed = parse_cache_spec(spec)
    backend: CacheBackend | None = None
    if parsed.kind == "sqlite":
        backend = SQLiteBackend(parsed.target, max_bytes=max_bytes)
    elif parsed.kind == "redis":
        backend = RedisBackend(parsed.target)
    memory = MemoryLRU(memory_bytes, max_entry_bytes=memory_bytes // ENTRY_SHARE)
    return LayeredCache(memory, backend, on_event, retry_interval=retry_interval)
