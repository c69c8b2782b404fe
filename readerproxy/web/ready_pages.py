"""Reader pages ready to send again: the fast path of a repeated `GET /read`.

The reader page for a request is the same bytes as long as three things hold: the request is the
same (path and query, `Cookie` with the reader preferences, `Accept-Encoding` choosing the coding),
the memory cache still holds the very copy of the page and of the extraction result the page was
made from, and that copy of the page is still fresh. `ReadyPages` keeps, per request, the bytes and
headers sent and which cache entries they came from (`ReadResult.sources`: the entries' stamps,
`lru.LRU.stamp`, not the values, which would stay alive uncounted after an eviction); the next
identical request is answered from it once `Reader.unchanged(sources)` confirms them, which is two
dictionary lookups.

Chosen for speed: a cached read otherwise parses the query, the preferences and the algorithm's
parameters, looks the page and the result up (decoding both through their memos, counting both in
the metrics), keys the rendered-page cache and negotiates the coding. py-spy put that at about a
third of the server's time under a cached load. The answer is the same: a refetch, a new result, an
eviction or the end of the page's freshness sends the request down the full path, which makes a new
entry. Only plain reader views are kept (no `refresh`, no preference cookies to set).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from aiohttp import web

from .lru import LRU

#: Bytes of ready pages kept (they share their bodies with the rendered-page cache while both hold them).
READY_PAGES_BYTES = 4 * 1024 * 1024
#: Bytes charged per entry for its headers and sources, beyond the request key and the body.
ENTRY_EXTRA = 512

#: The request as far as the answer depends on it: raw path and query, Cookie, Accept-Encoding.
ReadyKey = tuple[str, str | None, str | None]
#: (cache key, stamp of the memory cache's entry) per source: stamps, so nothing evicted is kept alive.
Sources = tuple[tuple[str, int], ...]


@dataclass(frozen=True, slots=True)
class ReadyPage:
    """One answer ready to send: body as sent (compressed or not), its headers, what it was made from."""

    body: bytes
    headers: dict[str, str]
    sources: Sources
    fresh_until: float  # `time.time()` at which the page it shows stops being fresh


def ready_key(request: web.Request) -> ReadyKey:
    headers = request.headers
    return request.raw_path, headers.get("Cookie"), headers.get("Accept-Encoding")


class ReadyPages:
    """The ready pages, an `LRU` bounded by bytes."""

    def __init__(self, max_bytes: int = READY_PAGES_BYTES) -> None:
        self._pages: LRU[ReadyKey, ReadyPage] = LRU(
            max_bytes, lambda key, page: len(key[0]) + len(page.body) + ENTRY_EXTRA
        )

    def get(self, key: ReadyKey, unchanged: Callable[[Sources], bool]) -> ReadyPage | None:
        """The ready page for `key` if its page is fresh and `unchanged` confirms its sources."""
        page = self._pages.get(key)
        if page is None:
            return None
        if time.time() >= page.fresh_until or not unchanged(page.sources):
            self._pages.delete(key)
            return None
        return page

    def put(self, key: ReadyKey, page: ReadyPage) -> None:
        if page.sources and time.time() < page.fresh_until:
            self._pages.set(key, page)

    def __len__(self) -> int:
        return len(self._pages)
