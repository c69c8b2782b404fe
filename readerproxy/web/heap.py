"""Memory given back to the system after a burst.

A burst of 60 posted pages of 9 MB took the server from 163 to 1,345 MB, and it stayed there; after
a 10k-request load, 138 → 830 → 797 MB after two idle minutes. Two things kept it:

- Garbage in reference cycles, which only a full collection frees, and which an idle server never
  runs (the collector runs as objects are allocated). The largest was the client watch of
  `Reader._pooled` (now an object, `reader._ClientWatch`), which kept each job's result, a posted
  page's text and HTML, until then; aiohttp's requests, transports and exceptions with their
  tracebacks make others.
- What Python frees goes back to glibc's malloc, which keeps much of it. `server._return_freed_memory`
  already gives buffers of 128 KiB and more mappings of their own (returned when freed), but a body
  arrives in socket reads of 64 KiB and less, and a burst's many such blocks, freed between blocks
  still alive, leave free pages inside the heap that only `malloc_trim` hands back (every free page
  of every arena, not only the heap's top).

`Heap` runs a full collection, then `malloc_trim(0)` in a thread, after `TRIM_AFTER` bytes of posted
bodies were let go (a burst), and when the server has been idle for `IDLE_CHECK` seconds with its
resident size grown by `IDLE_GROWTH` since the last time. Without glibc (musl, macOS) there is no
`malloc_trim`: the collection alone is done.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import gc
import logging
import os
from collections.abc import AsyncIterator, Callable

log = logging.getLogger(__name__)

#: Bytes of posted bodies let go after which garbage is collected and memory trimmed, idle or not.
TRIM_AFTER = 64 * 1024 * 1024
#: Seconds between two looks at whether the server is idle and has grown since the last trim.
IDLE_CHECK = 10.0
#: Growth of the resident size since the last trim (bytes) that makes an idle server trim.
IDLE_GROWTH = 16 * 1024 * 1024


def _glibc() -> ctypes.CDLL | None:
    """The process's C library when it is glibc (with `malloc_trim`), else None."""
    try:
        if not os.confstr("CS_GNU_LIBC_VERSION"):  # "glibc 2.36"; musl and others have none
            return None
    except (ValueError, OSError, AttributeError):
        return None
    try:
        libc = ctypes.CDLL(None)
        libc.malloc_trim.argtypes = [ctypes.c_size_t]
        libc.malloc_trim.restype = ctypes.c_int
    except (OSError, AttributeError):
        return None
    return libc


LIBC = _glibc()


def trim() -> bool:
    """`malloc_trim(0)`: every free page of every arena back to the system; whether any was."""
    return bool(LIBC.malloc_trim(0)) if LIBC is not None else False


def resident_bytes() -> int:
    """This process's resident size (0 where /proc cannot tell)."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, IndexError, ValueError):
        return 0


class Heap:
    """When to collect and trim: after `trim_after` bytes of bodies were let go, and when idle
    after growth.

    `busy` says whether requests are in flight (the server's `Drain`): an idle trim waits for none.
    """

    def __init__(
        self,
        busy: Callable[[], bool],
        *,
        trim_after: int = TRIM_AFTER,
        idle_check: float = IDLE_CHECK,
        idle_growth: int = IDLE_GROWTH,
    ) -> None:
        self.busy = busy
        self.trim_after = trim_after
        self.idle_check = idle_check
        self.idle_growth = idle_growth
        self.released = 0  # body bytes let go since the last trim
        self.trims = 0  # trims done (for /metrics and the tests)
        self.after_trim = resident_bytes()
        self._trimming: asyncio.Task[None] | None = None

    def let_go(self, size: int) -> None:
        """`size` bytes of a body are no longer held: collect and trim once enough were."""
        self.released += size
        if self.released >= self.trim_after:
            self.trim_soon()

    def trim_soon(self) -> None:
        """Collect and trim (one at a time): the collection on the event loop's thread (it holds
        the interpreter anyway), `malloc_trim` in a thread (it may take a while on a large heap)."""
        if self._trimming is not None and not self._trimming.done():
            return
        self.released = 0
        self._trimming = asyncio.ensure_future(self._trim())

    async def _trim(self) -> None:
        before = resident_bytes()
        gc.collect()
        if LIBC is not None:
            await asyncio.to_thread(trim)
        self.trims += 1
        self.after_trim = resident_bytes()
        log.debug("memory given back: %d MB resident, was %d MB", self.after_trim >> 20, before >> 20)

    @contextlib.asynccontextmanager
    async def watching(self) -> AsyncIterator[None]:
        """While the server runs: collect and trim when it is idle and has grown since the last time."""
        task = asyncio.create_task(self._watch())
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            if self._trimming is not None:
                with contextlib.suppress(Exception):
                    await self._trimming

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(self.idle_check)
            if not self.busy() and resident_bytes() > self.after_trim + self.idle_growth:
                self.trim_soon()
