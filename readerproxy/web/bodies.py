"""Posted bodies held by the server: bounded per client and in all.

`POST /api/extract` holds its body from the first byte read until its extraction has ended (the
body, its copy in the job sent to a worker, the parsed JSON's string). Sixty 9 MB posts from one
address, inside its rate limit's burst, were all read at once and took the server from 163 to
1,345 MB. Now each body is counted while it is held, before a byte of it is read:

- at most `client_bytes` (one body of the fetch's size cap, `--max-bytes`, 10 MiB) per client
  (`workers.CLIENT`): a second large post from a client whose first is still being read or
  extracted is a 429 with Retry-After at once, its body left unread; small posts fit beside it;
- at most `total_bytes` (`TOTAL_BODIES` such bodies) in the server: past it, 503 + Retry-After;
- a body larger than the cap is a 413: at once when its Content-Length says so (nothing read),
  else as soon as the bytes read pass it. A body without a length counts as the cap until read.

When a body is let go, `heap.Heap` hears of it, to give the memory back after a burst.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable

from aiohttp import web

from ..errors import ReaderproxyError
from .heap import Heap
from .workers import CLIENT, Overloaded

#: Bodies of the size cap that may be held in the server at once (all clients together).
TOTAL_BODIES = 8
#: Seconds a refused client is asked to wait (a body is held for about one extraction).
RETRY_AFTER = 2


class TooManyBodies(ReaderproxyError):
    """A client posting while its earlier bodies still fill its share: 429 with Retry-After."""

    kind = "too_many_bodies"
    status = 429

    def __init__(self, message: str, retry_after: int = RETRY_AFTER) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class BodyTooLarge(ReaderproxyError):
    """A posted body over the size cap: 413."""

    kind = "too_large"
    status = 413


class PostedBodies:
    """The bytes of posted bodies held now, per client and in all; see the module's docstring."""

    def __init__(
        self,
        max_bytes: int,
        heap: Heap | None = None,
        *,
        client_bytes: int | None = None,
        total_bytes: int | None = None,
    ) -> None:
        self.max_bytes = max_bytes
        self.heap = heap
        self.client_bytes = client_bytes or max_bytes
        self.total_bytes = total_bytes or TOTAL_BODIES * max_bytes
        self.held = 0  # bytes counted now, all clients
        self.refused = 0  # bodies refused unread (429 or 503)
        self._clients: dict[str, int] = {}

    def held_by(self, client: str) -> int:
        """Bytes counted now for `client`'s bodies."""
        return self._clients.get(client, 0)

    @contextlib.asynccontextmanager
    async def read(self, request: web.Request) -> AsyncIterator[bytes]:
        """The request's body, counted for its client from before it is read until the `async with`
        ends (the caller extracts inside it). TooManyBodies, Overloaded or BodyTooLarge otherwise."""
        client = CLIENT.get()
        declared = request.content_length
        if declared is not None and declared > self.max_bytes:
            raise BodyTooLarge(self._too_large())
        counted = declared if declared is not None else self.max_bytes
        self._take(client, counted)
        try:
            body = await self._read(request)
            self._give(client, counted - len(body))  # a body without a length: its real size
            counted = len(body)
            yield body
        finally:
            self._give(client, counted)
            if self.heap is not None:
                self.heap.let_go(counted)

    def _take(self, client: str, size: int) -> None:
        mine = self._clients.get(client, 0)
        if mine and mine + size > self.client_bytes:
            self.refused += 1
            raise TooManyBodies(
                f"this address already has {mine} bytes of posted pages being read or extracted, and "
                f"may have {self.client_bytes} at once: post the next page when the last one is answered"
            )
        if self.held and self.held + size > self.total_bytes:
            self.refused += 1
            raise Overloaded("too many posted pages are being read; try again in a moment", RETRY_AFTER)
        self._clients[client] = mine + size
        self.held += size

    def _give(self, client: str, size: int) -> None:
        left = self._clients.get(client, 0) - size
        if left > 0:
            self._clients[client] = left
        else:
            self._clients.pop(client, None)
        self.held -= size

    async def _read(self, request: web.Request) -> bytes:
        """The body, read as it arrives, refused (413) as soon as it passes the cap."""
        body = bytearray()
        while chunk := await request.content.readany():
            body += chunk
            if len(body) > self.max_bytes:
                raise BodyTooLarge(self._too_large())
        return bytes(body)

    def _too_large(self) -> str:
        return f"the posted page is larger than {self.max_bytes} bytes (the server's [fetch] max_bytes)"


BODIES = web.AppKey("bodies", PostedBodies)


def install_bodies(app: web.Application, max_bytes: int, busy: Callable[[], bool]) -> None:
    """Posted bodies bounded (`app[BODIES]`, for `POST /api/extract`) and memory trimmed after
    bursts and when idle (`busy`: whether requests are in flight) for as long as `app` runs."""
    heap = Heap(busy)
    app[BODIES] = PostedBodies(max_bytes, heap)

    async def trimming(app: web.Application) -> AsyncIterator[None]:
        async with heap.watching():
            yield

    app.cleanup_ctx.append(trimming)
