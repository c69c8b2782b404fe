"""Limits on what one client or one burst can make the server do.

- `RateLimiter`: a token bucket per client address (`rate` tokens a second, `burst` at most); a
  request finding its bucket empty is refused with 429 and a `Retry-After` saying when the next
  token comes. The table of buckets is bounded (`max_clients`, least recently seen dropped first),
  so a flood of addresses cannot grow it without end.
- `FetchSlots`: a global cap on concurrent upstream fetches and a per-host cap (politeness). The
  wait for a slot is timed apart from the site's own timeouts: a queue that does not move in
  `queue_timeout` seconds is a 503 "busy" saying so, never a 504 "the site took too long".

(The cap on concurrent extractions and its bounded queue are the worker pool's: `workers.py`.)
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable

from ..errors import ReaderproxyError


class RateLimited(ReaderproxyError):
    """A client over its rate: 429 with Retry-After."""

    kind = "rate_limited"
    status = 429

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class Busy(ReaderproxyError):
    """No fetch slot came free in time (our queue, not the site): 503 with Retry-After."""

    kind = "busy"
    status = 503

    def __init__(self, message: str, retry_after: int = 1, url: str | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.url = url


class RateLimiter:
    """Token buckets by client key; `take(key)` spends one token or raises RateLimited."""

    def __init__(
        self,
        rate: float,
        burst: int,
        *,
        max_clients: int = 65536,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.rate = rate
        self.burst = max(1, burst)
        self.max_clients = max_clients
        self.clock = clock
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()  # key -> (tokens, at)

    @property
    def enabled(self) -> bool:
        return self.rate > 0

    def __len__(self) -> int:
        return len(self._buckets)

    def take(self, key: str) -> None:
        if not self.enabled:
            return
        now = self.clock()
        tokens, at = self._buckets.pop(key, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - at) * self.rate)
        if tokens < 1.0:
            self._buckets[key] = (tokens, now)
            wait = math.ceil((1.0 - tokens) / self.rate)
            raise RateLimited(f"too many requests from this address; try again in {wait} s", retry_after=wait)
        self._buckets[key] = (tokens - 1.0, now)
        while len(self._buckets) > self.max_clients:
            self._buckets.popitem(last=False)


class KeyedSemaphores:
    """A semaphore of `size` per key (a host, a client), kept while it has users: `join` before
    waiting on it, `leave` when done, and the table holds only the keys in use."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._entries: dict[str, tuple[asyncio.Semaphore, int]] = {}  # key -> (semaphore, users)

    def __len__(self) -> int:
        return len(self._entries)

    def users(self, key: str) -> int:
        entry = self._entries.get(key)
        return entry[1] if entry is not None else 0

    def join(self, key: str) -> asyncio.Semaphore:
        semaphore, users = self._entries.get(key) or (asyncio.Semaphore(self.size), 0)
        self._entries[key] = (semaphore, users + 1)
        return semaphore

    def leave(self, key: str) -> None:
        semaphore, users = self._entries[key]
        if users <= 1:
            del self._entries[key]
        else:
            self._entries[key] = (semaphore, users - 1)


class FetchSlots:
    """At most `max_total` fetches at once, at most `max_per_host` to one host; waits bounded in time."""

    def __init__(self, max_total: int = 64, max_per_host: int = 8, queue_timeout: float = 10.0) -> None:
        self.max_total = max(1, max_total)
        self.max_per_host = max(1, max_per_host)
        self.queue_timeout = queue_timeout
        self._total = asyncio.Semaphore(self.max_total)
        self._hosts = KeyedSemaphores(self.max_per_host)
        self.active = 0
        self.waiting = 0

    @contextlib.asynccontextmanager
    async def slot(self, host: str, url: str | None = None) -> AsyncIterator[None]:
        """Hold a per-host and a global slot for the body of the `async with`."""
        semaphore = self._hosts.join(host)
        acquired_host = acquired_total = False
        self.waiting += 1
        try:
            try:
                async with asyncio.timeout(self.queue_timeout):
                    await semaphore.acquire()
                    acquired_host = True
                    await self._total.acquire()
                    acquired_total = True
            except TimeoutError:
                which = "this site" if not acquired_host else "all sites"
                raise Busy(
                    f"too many reads of {which} are in progress (waited {self.queue_timeout:g} s for a "
                    "free connection; the site itself was not contacted); try again shortly",
                    retry_after=max(1, round(self.queue_timeout / 2)),
                    url=url,
                ) from None
            finally:
                self.waiting -= 1
            self.active += 1
            try:
                yield
            finally:
                self.active -= 1
        finally:
            if acquired_total:
                self._total.release()
            if acquired_host:
                semaphore.release()
            self._hosts.leave(host)
