"""Fetched pages through the cache: the HTTP caching policy (RFC 9111 as a shared cache).

`PageStore.get(url)` answers from the cache while a page is fresh (s-maxage, max-age, Expires,
no-store, no-cache), revalidates a stale copy with If-None-Match / If-Modified-Since, and fetches
otherwise, with one upstream request per URL at a time. `DecodedMemo` keeps the decoded form of
a cached value while the memory layer hands back the very same bytes object.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from email.utils import parsedate_to_datetime
from typing import Generic, TypeVar

from .cache import LayeredCache
from .fetch import FetchedPage, Fetcher, canonical_url
from .lru import LRU
from .singleflight import SingleFlight

log = logging.getLogger(__name__)

T = TypeVar("T")


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
    Bounded by bytes: an entry is charged twice the size of its raw value (the decoded form holds
    the page body or the result's strings again, plus Python object overhead).
    """

    def __init__(self, decode: Callable[[bytes], T], max_bytes: int = 32 * 1024 * 1024) -> None:
        self._decode = decode
        self._entries: LRU[str, tuple[bytes, T]] = LRU(
            max_bytes, lambda key, entry: len(key) + 2 * len(entry[0])
        )

    def decode(self, key: str, raw: bytes) -> T:
        entry = self._entries.get(key)
        if entry is not None and entry[0] is raw:
            return entry[1]
        value = self._decode(raw)
        self._entries.set(key, (raw, value))
        return value


def page_version(page: FetchedPage) -> str:
    """Identifies the fetched copy a result was computed from (a refetch gives a new version)."""
    return (
        f"{page.final_url}|{page.fetched_at!r}|{page.etag or ''}|{page.last_modified or ''}|{len(page.body)}"
    )


class PageStore:
    """Fetched pages through the cache: fresh → "hit", stale and still valid (304) → "revalidated",
    else fetched → "miss". refresh=True skips the cache read.

    One upstream request per URL at a time, within the process (single flight) and across every
    process sharing the cache backend (a lock in Redis or in the SQLite file: the first process to
    miss fetches, the others wait for its copy to appear in the backend, up to `lock_wait` seconds).
    """

    KEY_PREFIX = "page:"
    LOCK_PREFIX = "lock:"
    POLL_INTERVAL = 0.05  # seconds between looks at the backend while another process fetches

    def __init__(
        self, cache: LayeredCache, fetcher: Fetcher, default_ttl: float = 300.0, max_ttl: float = 86400.0
    ) -> None:
        self.cache = cache
        self.fetcher = fetcher
        # a fetch holds the shared lock at most this long; waiters give up and fetch themselves then
        self.lock_wait = fetcher.settings.total_timeout + 2.0
        self.default_ttl = default_ttl
        self.max_ttl = max_ttl
        self.flights = SingleFlight()
        self._decoded: DecodedMemo[tuple[FetchedPage, float]] = DecodedMemo(self._decode_entry)

    def key(self, url: str) -> str:
        """The cache key of a URL: its canonical form (lower-case scheme and host, no default port or
        fragment; see `fetch.validate_url`)."""
        return self.KEY_PREFIX + canonical_url(url)

    async def get(self, url: str, refresh: bool = False) -> tuple[FetchedPage, str]:
        """The page and the cache status "hit" | "miss" | "revalidated"; FetchError propagates."""
        key = self.key(url)
        if refresh:
            return await self.flights.run("refresh|" + key, lambda: self._fetch(url, key, None))
        entry = await self._cached(key)
        cached = entry[0] if entry is not None else None
        if entry is not None and time.time() - entry[0].fetched_at < entry[1]:
            return entry[0], "hit"
        return await self.flights.run(key, lambda: self._fetch_once_across_processes(url, key, cached))

    def fresh_until(self, page: FetchedPage) -> float:
        """The wall-clock time (`time.time()`) until which a stored copy of `page` is fresh."""
        return page.fetched_at + freshness(page.headers, self.default_ttl, self.max_ttl).lifetime

    async def _fetch_once_across_processes(
        self,
        url: str,
        key: str,
        cached: FetchedPage | None,
    ) -> tuple[FetchedPage, str]:
        """`_fetch` by the one process holding the shared lock; the others take its copy."""
        lock = self.LOCK_PREFIX + key
        deadline = time.monotonic() + self.lock_wait
        waited = False
        while True:
            # after waiting, look for the holder's copy first; and always once we hold the lock: it
            # may have been stored and the lock released between our look (`get`'s, or the last
            # poll) and our lock, by a process that fetched while this one was descheduled
            shared = await self._shared_copy(key, cached) if waited else None
            if shared is not None:
                return shared, "hit"
            go_ahead, token = await self.cache.try_lock(lock, ttl=self.lock_wait)
            if go_ahead:
                try:
                    shared = await self._shared_copy(key, cached)
                    return (shared, "hit") if shared is not None else await self._fetch(url, key, cached)
                finally:
                    await self.cache.unlock(lock, token)
            if time.monotonic() >= deadline:  # the holder is stuck or gone: fetch ourselves
                return await self._fetch(url, key, cached)
            await asyncio.sleep(self.POLL_INTERVAL)
            waited = True

    async def _shared_copy(self, key: str, cached: FetchedPage | None) -> FetchedPage | None:
        """A fresh copy that another process stored in the backend (newer than ours, if we have one)."""
        data = await self.cache.get(key, skip_memory=True)
        if data is None:
            return None
        try:
            page, lifetime = self._decoded.decode(key, data)
        except ValueError:
            return None
        if cached is not None and page.fetched_at <= cached.fetched_at:
            return None
        return page if time.time() - page.fetched_at < lifetime else None

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
    headers = {
        **cached.headers,
        **{
            k: v
            for k, v in response.headers.items()
            if k not in ("content-length", "content-encoding", "content-type")
        },
    }
    return replace(
        cached,
        headers=headers,
        fetched_at=response.fetched_at,
        elapsed_ms=response.elapsed_ms,
        etag=headers.get("etag"),
        last_modified=headers.get("last-modified"),
        not_modified=False,
    )
