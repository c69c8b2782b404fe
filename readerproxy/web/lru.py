"""One least-recently-used cache, bounded by bytes, used by every in-process cache of the server.

The memory layer of the cache (`cache.MemoryLRU`), the rendered reader pages and the memo of
decoded cache values are all this class with their own size function: each entry is charged what
`sizeof(key, value)` says plus a fixed overhead for the bookkeeping, so a bound in bytes holds
whatever the entries are.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

ENTRY_OVERHEAD = 64  # bytes charged per entry for the bookkeeping, so tiny entries still count


class LRU(Generic[K, V]):
    """A mapping bounded by the total charged bytes of its entries, with an optional TTL per entry."""

    ENTRY_OVERHEAD = ENTRY_OVERHEAD

    def __init__(
        self,
        max_bytes: int,
        sizeof: Callable[[K, V], int],
        clock: Callable[[], float] = time.monotonic,
        *,
        max_entry_bytes: int | None = None,
    ) -> None:
        self.max_bytes = max_bytes
        #: An entry charged more than this is not kept (None: up to the whole bound), so one big
        #: value cannot push out everything else.
        self.max_entry_bytes = max_bytes if max_entry_bytes is None else min(max_entry_bytes, max_bytes)
        self.sizeof = sizeof
        self.clock = clock
        self.total_bytes = 0
        # value, expiry, size, stamp (which `set` made it: a number never given twice by this LRU)
        self._entries: OrderedDict[K, tuple[V, float | None, int, int]] = OrderedDict()
        self._sets = 0

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def get(self, key: K) -> V | None:
        """The value if present and not expired (and mark it most recently used)."""
        entry = self._entries.get(key)
        if entry is None:
            return None
        value, expires_at, _, _ = entry
        if expires_at is not None and self.clock() >= expires_at:
            self.delete(key)
            return None
        self._entries.move_to_end(key)
        return value

    def stamp(self, key: K) -> int | None:
        """Which `set` stored the present, unexpired entry (None: absent or expired), leaving its
        recency alone. Equal stamps mean the very same entry: a later `set` of the key, or its eviction,
        changes the answer. A stamp, not the value, so a caller that remembers it keeps nothing alive."""
        entry = self._entries.get(key)
        if entry is None or (entry[1] is not None and self.clock() >= entry[1]):
            return None
        return entry[3]

    def touch(self, key: K) -> None:
        """Mark a present entry most recently used (as `get` does, without reading it)."""
        if key in self._entries:
            self._entries.move_to_end(key)

    def ttl(self, key: K) -> float | None:
        """Seconds left for a present entry (None: no expiry or absent)."""
        entry = self._entries.get(key)
        if entry is None or entry[1] is None:
            return None
        return max(0.0, entry[1] - self.clock())

    def set(self, key: K, value: V, ttl: float | None = None) -> None:
        """Store, evicting least recently used entries until the total fits; values over
        `max_entry_bytes` are not kept (and the key's older value is dropped)."""
        self.delete(key)
        size = self.sizeof(key, value) + ENTRY_OVERHEAD
        if size > self.max_entry_bytes or (ttl is not None and ttl <= 0):
            return
        self._sets += 1
        self._entries[key] = (value, None if ttl is None else self.clock() + ttl, size, self._sets)
        self.total_bytes += size
        while self.total_bytes > self.max_bytes and self._entries:
            _, (_, _, evicted, _) = self._entries.popitem(last=False)
            self.total_bytes -= evicted

    def delete(self, key: K) -> None:
        entry = self._entries.pop(key, None)
        if entry is not None:
            self.total_bytes -= entry[2]

    def clear(self) -> None:
        self._entries.clear()
        self.total_bytes = 0


def bytes_size(key: str, value: bytes) -> int:
    """Size of a str key and a bytes value (keys are ASCII in practice)."""
    return len(key) + len(value)
