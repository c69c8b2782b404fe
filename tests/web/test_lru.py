"""The in-process LRU bounded by bytes (lru.LRU, as the cache's MemoryLRU)."""

from __future__ import annotations

import pytest

from readerproxy.web.cache import MemoryLRU
from readerproxy.web.lru import LRU


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


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


def test_lru_charges_what_its_size_function_says() -> None:
    lru: LRU[tuple[str, int], str] = LRU(max_bytes=400, sizeof=lambda key, value: 100 * len(value))
    lru.set(("a", 1), "x")
    lru.set(("b", 2), "y")
    assert len(lru) == 2 and lru.total_bytes == 2 * (100 + 64)
    lru.set(("c", 3), "zz")  # 264 bytes: both older entries go
    assert ("a", 1) not in lru and ("b", 2) not in lru and lru.get(("c", 3)) == "zz"


def test_stamps_name_one_entry_leave_recency_alone_and_honour_expiry() -> None:
    clock = FakeClock()
    size = len("a") + 300 + LRU.ENTRY_OVERHEAD
    lru: LRU[str, bytes] = LRU(3 * size, lambda key, value: len(key) + len(value), clock)
    for key in "abc":
        lru.set(key, key.encode() * 300, ttl=10.0 if key == "c" else None)
    stamp = lru.stamp("a")
    assert stamp is not None and len({lru.stamp(k) for k in "abc"}) == 3
    lru.set("b", b"b" * 300)  # the same value again is another entry
    assert lru.stamp("a") == stamp and lru.stamp("b") not in (None, stamp)
    lru.set("d", b"d" * 300)  # a look is not a use: "a" was still the least recently used
    assert "a" not in lru and lru.stamp("a") is None
    lru.set("a", b"a" * 300)
    assert lru.stamp("a") not in (None, stamp)  # back, but not the entry it was
    lru.set("e", b"e" * 300, ttl=5.0)
    assert lru.stamp("e") is not None
    clock.now += 5.0
    assert "e" in lru and lru.stamp("e") is None  # expired: no stamp (left for get/set to drop)
