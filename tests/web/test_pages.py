"""Fetched pages through the cache (pages.PageStore): HTTP freshness, revalidation, single flight,
persistence in SQLite and Redis, against the upstream test site on 127.0.0.1."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from support.upstream import Upstream
from test_cache import FailingBackend

from readerproxy.web.cache import LayeredCache, MemoryLRU, open_cache
from readerproxy.web.fetch import Fetcher, FetchError, FetchSettings, validate_url
from readerproxy.web.page_cache import PageStore, freshness


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("HTTP://Example.COM:80/Path?b=2&a=1#top", "http://example.com/Path?b=2&a=1"),
        ("https://example.com:443", "https://example.com/"),
        ("https://example.com:8443/x", "https://example.com:8443/x"),
        ("http://[2001:DB8::1]:80/", "http://[2001:db8::1]/"),
    ],
)
def test_page_keys_are_validated_urls(url: str, expected: str) -> None:
    assert PageStore.key(PageStore.__new__(PageStore), validate_url(url)) == "page:" + expected


@pytest.mark.parametrize(
    ("headers", "store", "lifetime"),
    [
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
    ],
)
def test_freshness(headers: dict[str, str], store: bool, lifetime: float) -> None:
    policy = freshness(headers, default_ttl=300.0, max_ttl=86400.0)
    assert (policy.store, policy.lifetime) == (store, lifetime)


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


async def test_a_copy_stored_between_the_look_and_the_lock_is_taken(
    fetcher: Fetcher, upstream: Upstream, tmp_path: Path
) -> None:
    """Two processes sharing a cache: the second looks (no copy), the first fetches, stores and
    unlocks, then the second takes the lock. It takes the first's copy instead of fetching again
    (a clean-clone run under load once saw two fetches across two `--workers`)."""
    spec = f"sqlite:{tmp_path / 'pages.sqlite3'}"
    one, two = PageStore(open_cache(spec), fetcher), PageStore(open_cache(spec), fetcher)
    url = upstream.url("/counter/look-then-lock?delay=0")
    try_lock = two.cache.try_lock

    async def first_fetches_meanwhile(key: str, ttl: float) -> tuple[bool, str]:
        await one.get(url)
        return await try_lock(key, ttl)

    two.cache.try_lock = first_fetches_meanwhile  # type: ignore[method-assign]
    try:
        page, status = await two.get(url)
    finally:
        await one.cache.close()
        await two.cache.close()
    assert status == "hit" and page.body and upstream.count("/counter/look-then-lock") == 1


@pytest.mark.redis
async def test_two_stores_share_pages_through_redis(
    fetcher: Fetcher, upstream: Upstream, redis_url: str
) -> None:
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
