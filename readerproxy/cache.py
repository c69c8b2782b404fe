"""The layered cache and the caching policy for fetched pages.

- `MemoryLRU`: a bounded in-process LRU, bounded by total bytes, with a per-entry TTL.
- `CacheBackend`: the persistent layer, bytes in and bytes out — `SQLiteBackend` (embedded default) or
  `RedisBackend` (shared by several server processes). Backends raise on failure.
- `LayeredCache`: memory over an optional backend. A failing backend is never an error for the caller:
  one warning is logged, the cache carries on memory-only, and the backend is tried again after a
  back-off, so it recovers by itself when the backend returns.
- `SingleFlight`: concurrent calls for one key share one in-flight call.
- `PageStore`: the HTTP caching policy for fetched pages (RFC 9111 as a shared cache: s-maxage,
  max-age, Expires, no-store, no-cache; revalidation with If-None-Match / If-Modified-Since).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import sqlite3
import struct
import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar
from urllib.parse import urlsplit, urlunsplit

from .fetch import FetchedPage, Fetcher

log = logging.getLogger(__name__)

T = TypeVar("T")
EventHook = Callable[[str, str], None]  # on_event(layer, event): "memory"|"sqlite"|"redis", "hit"|"miss"|"error"


# ---- layers ------------------------------------------------------------------------------------------

class CacheBackend(Protocol):
    """A persistent cache layer: bytes in, bytes out; raises on failure (LayeredCache handles it)."""

    name: str  # the layer name reported in events and metrics: "sqlite" | "redis"

    async def get(self, key: str) -> bytes | None: ...
    async def set(self, key: str, value: bytes, ttl: float | None) -> None: ...
    async def delete(self, key: str) -> None: ...
    async def close(self) -> None: ...


class MemoryLRU:
    """In-process LRU bounded by the total bytes of keys and values, with a per-entry TTL."""

    ENTRY_OVERHEAD = 64  # bytes charged per entry for the bookkeeping, so tiny entries still count

    def __init__(self, max_bytes: int = 64 * 1024 * 1024, clock: Callable[[], float] = time.monotonic) -> None:
        self.max_bytes = max_bytes
        self.clock = clock
        self.total_bytes = 0
        self._entries: OrderedDict[str, tuple[bytes, float | None]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def _size(self, key: str, value: bytes) -> int:
        return len(key) + len(value) + self.ENTRY_OVERHEAD

    def get(self, key: str) -> bytes | None:
        """The value if present and not expired (and mark it most recently used)."""
        entry = self._entries.get(key)
        if entry is None:
            return None
        value, expires_at = entry
        if expires_at is not None and self.clock() >= expires_at:
            self.delete(key)
            return None
        self._entries.move_to_end(key)
        return value

    def ttl(self, key: str) -> float | None:
        """Seconds left for a present entry (None: no expiry or absent)."""
        entry = self._entries.get(key)
        if entry is None or entry[1] is None:
            return None
        return max(0.0, entry[1] - self.clock())

    def set(self, key: str, value: bytes, ttl: float | None = None) -> None:
        """Store, evicting least recently used entries until the total fits; too-big values are not kept."""
        self.delete(key)
        size = self._size(key, value)
        if size > self.max_bytes or (ttl is not None and ttl <= 0):
            return
        self._entries[key] = (value, None if ttl is None else self.clock() + ttl)
        self.total_bytes += size
        self._evict()

    def _evict(self) -> None:
        while self.total_bytes > self.max_bytes and self._entries:
            key, (value, _) = self._entries.popitem(last=False)
            self.total_bytes -= self._size(key, value)

    def delete(self, key: str) -> None:
        entry = self._entries.pop(key, None)
        if entry is not None:
            self.total_bytes -= self._size(key, entry[0])

    def clear(self) -> None:
        self._entries.clear()
        self.total_bytes = 0


class SQLiteBackend:
    """SQLite file (WAL, short busy timeout); blocking calls run in a thread via asyncio.to_thread.

    The connection is opened lazily and dropped after any error, so a file that was corrupt, locked or
    read-only is simply opened again on the next attempt once it has been fixed.
    """

    name = "sqlite"
    BUSY_TIMEOUT_MS = 200
    PURGE_EVERY = 200  # sets between deletions of expired rows

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).expanduser()
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self._sets = 0

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=self.BUSY_TIMEOUT_MS / 1000, check_same_thread=False,
                                   isolation_level=None)
            try:
                conn.execute(f"PRAGMA busy_timeout = {self.BUSY_TIMEOUT_MS}")
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("PRAGMA synchronous = NORMAL")
                conn.execute("CREATE TABLE IF NOT EXISTS cache "
                             "(key TEXT PRIMARY KEY, value BLOB NOT NULL, expires_at REAL)")
            except BaseException:
                conn.close()
                raise
            self._conn = conn
        return self._conn

    def _run(self, operation: Callable[[sqlite3.Connection], T]) -> T:
        with self._lock:
            try:
                return operation(self._connection())
            except BaseException:
                self._drop()
                raise

    def _drop(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(sqlite3.Error):
                self._conn.close()
            self._conn = None

    def _get(self, key: str) -> bytes | None:
        def op(conn: sqlite3.Connection) -> bytes | None:
            row = conn.execute("SELECT value FROM cache WHERE key = ? AND (expires_at IS NULL OR expires_at > ?)",
                               (key, time.time())).fetchone()
            return None if row is None else bytes(row[0])
        return self._run(op)

    def _set(self, key: str, value: bytes, ttl: float | None) -> None:
        expires_at = None if ttl is None else time.time() + ttl
        self._sets += 1
        purge = self._sets % self.PURGE_EVERY == 0

        def op(conn: sqlite3.Connection) -> None:
            conn.execute("INSERT OR REPLACE INTO cache (key, value, expires_at) VALUES (?, ?, ?)",
                         (key, value, expires_at))
            if purge:
                conn.execute("DELETE FROM cache WHERE expires_at IS NOT NULL AND expires_at <= ?", (time.time(),))
        self._run(op)

    def _delete(self, key: str) -> None:
        self._run(lambda conn: conn.execute("DELETE FROM cache WHERE key = ?", (key,)))

    async def get(self, key: str) -> bytes | None:
        return await asyncio.to_thread(self._get, key)

    async def set(self, key: str, value: bytes, ttl: float | None) -> None:
        await asyncio.to_thread(self._set, key, value, ttl)

    async def delete(self, key: str) -> None:
        await asyncio.to_thread(self._delete, key)

    async def close(self) -> None:
        with self._lock:
            self._drop()


class RedisBackend:
    """Redis via redis-py's asyncio client; keys are prefixed, TTLs become PX expiries."""

    name = "redis"
    PREFIX = "readerproxy:"

    def __init__(self, url: str, timeout: float = 1.0) -> None:
        from redis.asyncio import Redis

        self.url = url
        self._redis: Any = Redis.from_url(url, socket_connect_timeout=timeout, socket_timeout=timeout,
                                          health_check_interval=0)

    async def get(self, key: str) -> bytes | None:
        value = await self._redis.get(self.PREFIX + key)
        return None if value is None else bytes(value)

    async def set(self, key: str, value: bytes, ttl: float | None) -> None:
        px = None if ttl is None else max(1, int(ttl * 1000))
        await self._redis.set(self.PREFIX + key, value, px=px)

    async def delete(self, key: str) -> None:
        await self._redis.delete(self.PREFIX + key)

    async def close(self) -> None:
        await self._redis.aclose()


# ---- the layered cache -------------------------------------------------------------------------------

_EXPIRY = struct.Struct("!d")  # backend values carry their wall-clock expiry (0 = none) for the memory layer


class LayeredCache:
    """Memory LRU over an optional persistent backend; a failing backend degrades to memory-only."""

    def __init__(self, memory: MemoryLRU, backend: CacheBackend | None, on_event: EventHook | None = None,
                 *, retry_interval: float = 2.0, max_retry_interval: float = 30.0,
                 op_timeout: float = 2.0) -> None:
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
            log.warning("cache backend %s failed (%s: %s); continuing with the memory cache only and "
                        "retrying in the background", self.backend.name, type(exc).__name__, exc)
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

    async def _backend_call(self, call: Awaitable[T]) -> tuple[bool, T | None]:
        try:
            async with asyncio.timeout(self.op_timeout):
                result = await call
        except Exception as exc:
            self._failed(exc)
            return False, None
        self._succeeded()
        return True, result

    # -- the interface --
    async def get(self, key: str) -> bytes | None:
        """Memory first, then the backend (filling memory on a backend hit); None on a miss."""
        value = self.memory.get(key)
        if value is not None:
            self._event("memory", "hit")
            return value
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
        await self._backend_call(self.backend.set(key, _EXPIRY.pack(expires_at) + value, ttl))

    async def delete(self, key: str) -> None:
        self.memory.delete(key)
        if self.backend is not None and self._backend_usable():
            await self._backend_call(self.backend.delete(key))

    async def close(self) -> None:
        if self.backend is not None:
            try:
                await self.backend.close()
            except Exception as exc:
                log.warning("closing cache backend %s failed: %s", self.backend.name, exc)


def open_cache(spec: str, on_event: EventHook | None = None, *, memory_bytes: int = 64 * 1024 * 1024,
               retry_interval: float = 2.0) -> LayeredCache:
    """A LayeredCache from a spec: "memory" | "sqlite:PATH" | "redis://HOST:PORT/DB" (or rediss://)."""
    memory = MemoryLRU(memory_bytes)
    backend: CacheBackend | None
    if spec == "memory":
        backend = None
    elif spec.startswith("sqlite:"):
        path = spec.removeprefix("sqlite:").removeprefix("//")
        if not path:
            raise ValueError("sqlite cache needs a path: sqlite:PATH")
        backend = SQLiteBackend(path)
    elif spec.startswith(("redis://", "rediss://", "unix://")):
        backend = RedisBackend(spec)
    else:
        raise ValueError(f"unknown cache {spec!r}: use memory, sqlite:PATH or redis://HOST:PORT/DB")
    return LayeredCache(memory, backend, on_event, retry_interval=retry_interval)


# ---- single flight -----------------------------------------------------------------------------------

class SingleFlight:
    """At most one in-flight call per key; concurrent callers await the same result (or exception)."""

    def __init__(self) -> None:
        self._flights: dict[str, asyncio.Future[Any]] = {}

    def __len__(self) -> int:
        return len(self._flights)

    async def run(self, key: str, factory: Callable[[], Awaitable[T]]) -> T:
        flight = self._flights.get(key)
        if flight is None:
            flight = asyncio.ensure_future(factory())
            self._flights[key] = flight
            flight.add_done_callback(lambda done: self._landed(key, done))
        # shield: one caller giving up (cancelled) must not cancel the call the others wait for
        result: T = await asyncio.shield(flight)
        return result

    def _landed(self, key: str, flight: asyncio.Future[Any]) -> None:
        if self._flights.get(key) is flight:
            del self._flights[key]
        if not flight.cancelled():
            flight.exception()  # mark retrieved: callers that gave up must not cause "never retrieved"


# ---- the page caching policy -------------------------------------------------------------------------

@functools.lru_cache(maxsize=4096)
def normalize_url(url: str) -> str:
    """Cache key form of a URL: lower-case scheme and host, default port and fragment dropped; nothing sorted."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    userinfo = parts.netloc.rpartition("@")[0]
    netloc = host if port is None or (scheme, port) in (("http", 80), ("https", 443)) else f"{host}:{port}"
    if userinfo:
        netloc = f"{userinfo}@{netloc}"
    return urlunsplit((scheme, netloc, parts.path or "/", parts.query, ""))


@dataclass(frozen=True)
class CachePolicy:
    """What the response headers allow (RFC 9111 §5.2, as a shared cache that also accepts `private`)."""

    store: bool
    lifetime: float  # seconds the page is fresh from fetched_at (0: revalidate before every use)


def cache_control(headers: Mapping[str, str]) -> dict[str, str]:
    """Cache-Control directives, lower-case names, values unquoted ('' for bare directives)."""
    directives: dict[str, str] = {}
    for part in headers.get("cache-control", "").split(","):
        name, _, value = part.strip().partition("=")
        if name:
            directives[name.strip().lower()] = value.strip().strip('"')
    return directives


def _seconds(value: str) -> float | None:
    try:
        return max(0.0, float(int(value)))
    except ValueError:
        return None


def _http_date(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def freshness(headers: Mapping[str, str], default_ttl: float, max_ttl: float) -> CachePolicy:
    """Freshness lifetime: s-maxage, then max-age, then Expires − Date, else default_ttl; capped at max_ttl."""
    directives = cache_control(headers)
    if "no-store" in directives:
        return CachePolicy(store=False, lifetime=0.0)
    if "no-cache" in directives:
        return CachePolicy(store=True, lifetime=0.0)
    lifetime: float | None = None
    for name in ("s-maxage", "max-age"):
        if name in directives:
            lifetime = _seconds(directives[name])
            if lifetime is not None:
                break
    if lifetime is None and "expires" in headers:
        expires = _http_date(headers["expires"])
        date = _http_date(headers.get("date")) or time.time()
        lifetime = 0.0 if expires is None else max(0.0, expires - date)  # an invalid Expires means stale
    if lifetime is None:
        lifetime = default_ttl
    return CachePolicy(store=True, lifetime=min(lifetime, max_ttl))


def has_validators(page: FetchedPage) -> bool:
    return bool(page.etag or page.last_modified)


class DecodedMemo(Generic[T]):
    """Decoded forms of cached values, reused while the cache hands back the very same bytes object.

    The memory LRU returns the stored bytes object itself on a hit, so identity tells that the
    value has not changed; decoding a 200 KB page or a JSON result on every hit was the hot path.
    """

    def __init__(self, decode: Callable[[bytes], T], max_entries: int = 256) -> None:
        self._decode = decode
        self._max_entries = max_entries
        self._entries: OrderedDict[str, tuple[bytes, T]] = OrderedDict()

    def decode(self, key: str, raw: bytes) -> T:
        entry = self._entries.get(key)
        if entry is not None and entry[0] is raw:
            self._entries.move_to_end(key)
            return entry[1]
        value = self._decode(raw)
        self._entries[key] = (raw, value)
        self._entries.move_to_end(key)
        while len(self._entries) > self._max_entries:
            self._entries.popitem(last=False)
        return value


class PageStore:
    """Fetched pages through the cache: fresh → "hit", stale and still valid (304) → "revalidated",
    else fetched → "miss". refresh=True skips the cache read. One upstream request per URL at a time."""

    KEY_PREFIX = "page:"

    def __init__(self, cache: LayeredCache, fetcher: Fetcher, default_ttl: float = 300.0,
                 max_ttl: float = 86400.0) -> None:
        self.cache = cache
        self.fetcher = fetcher
        self.default_ttl = default_ttl
        self.max_ttl = max_ttl
        self.flights = SingleFlight()
        self._decoded: DecodedMemo[tuple[FetchedPage, float]] = DecodedMemo(self._decode_entry)

    def key(self, url: str) -> str:
        return self.KEY_PREFIX + normalize_url(url)

    async def get(self, url: str, refresh: bool = False) -> tuple[FetchedPage, str]:
        """The page and the cache status "hit" | "miss" | "revalidated"; FetchError propagates."""
        key = self.key(url)
        if refresh:
            return await self.flights.run("refresh|" + key, lambda: self._fetch(url, key, None))
        entry = await self._cached(key)
        cached = entry[0] if entry is not None else None
        if entry is not None and time.time() - entry[0].fetched_at < entry[1]:
            return entry[0], "hit"
        return await self.flights.run(key, lambda: self._fetch(url, key, cached))

    def _decode_entry(self, data: bytes) -> tuple[FetchedPage, float]:
        """A stored page and its freshness lifetime (headers parsed once per stored copy)."""
        page = FetchedPage.from_bytes(data)
        return page, freshness(page.headers, self.default_ttl, self.max_ttl).lifetime

    async def _cached(self, key: str) -> tuple[FetchedPage, float] | None:
        data = await self.cache.get(key)
        if data is None:
            return None
        try:
            return self._decoded.decode(key, data)
        except ValueError:
            log.warning("dropping a malformed cache entry for %s", key)
            await self.cache.delete(key)
            return None

    async def _fetch(self, url: str, key: str, cached: FetchedPage | None) -> tuple[FetchedPage, str]:
        """Revalidate `cached` if it has validators, else fetch; store what the headers allow."""
        if cached is not None and has_validators(cached):
            fetched = await self.fetcher.fetch(url, etag=cached.etag, last_modified=cached.last_modified)
            if fetched.not_modified:
                page = revalidated(cached, fetched)
                await self._store(key, page)
                return page, "revalidated"
        else:
            fetched = await self.fetcher.fetch(url)
        await self._store(key, fetched)
        return fetched, "miss"

    async def _store(self, key: str, page: FetchedPage) -> None:
        policy = freshness(page.headers, self.default_ttl, self.max_ttl)
        if not policy.store:
            await self.cache.delete(key)  # no-store now: forget what an earlier response allowed
            return
        # keep pages that can be revalidated beyond their freshness, up to max_ttl
        ttl = self.max_ttl if has_validators(page) else policy.lifetime
        if ttl > 0:
            await self.cache.set(key, page.to_bytes(), ttl)


def revalidated(cached: FetchedPage, response: FetchedPage) -> FetchedPage:
    """The cached page refreshed by a 304: new fetch time, headers updated from the 304 (RFC 9111 §4.3.4)."""
    headers = {**cached.headers, **{k: v for k, v in response.headers.items()
                                    if k not in ("content-length", "content-encoding", "content-type")}}
    return replace(cached, headers=headers, fetched_at=response.fetched_at, elapsed_ms=response.elapsed_ms,
                   etag=headers.get("etag"), last_modified=headers.get("last-modified"), not_modified=False)
