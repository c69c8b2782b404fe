"""The proxy's own keep-alive connections to sites, for the common pass-through.

A GET or HEAD without a body to an `http://` site is most of what a browser sends through the
proxy, and the client library (aiohttp) cost about 45 µs of the proxy's loop per such request
(its request and response objects, URL parsing, header dicts, timers, connection bookkeeping; a
plain exchange on a kept-alive socket, in the same process, is under a third of it). This module
is that plain exchange: `SitePool.fetch` writes the request head as one write on a connection it
keeps alive per (host, port), parses the answer's head, and hands its body on as it arrives, with
the interface of `aiohttp.ClientResponse` the proxy core reads (`status`, `reason`, `raw_headers`,
`content.read_nowait`/`readany`/`iter_any`/`at_eof`, `release`).

It takes only what it can answer exactly as aiohttp did, and says so before a byte is sent
(`Unsupported`, then the core sends the request through aiohttp as before): a host that is not
ASCII, a path aiohttp would requote, `PER_HOST` (or `TOTAL`) connections of this pool open, a
connection that cannot be made (aiohttp tries again and reports the error as it always did). An
answer whose head is not of the plainly well-formed kind (`_SITE_HEAD`), an interim (1xx) answer, or
framing other than one Content-Length, chunked, or the connection's end also raises `Unsupported`:
the request, a GET or HEAD, is then sent again through aiohttp, which reads such answers as before.

The rules kept: the same address rule as every connection of the proxy (`ProxyServer._guarded_address`:
the SSRF guard's resolver, and the literal address checked as `guarded_socket` does), the connect
timeout, a read timeout between arrivals (`SocketTimeoutError`, as aiohttp's `sock_read`),
back-pressure (reading paused past `HIGH_WATER` bytes not yet taken), and errors mid-body as
aiohttp's (`ClientPayloadError`, `ServerDisconnectedError`), which the core handles as before.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Awaitable, Callable

import aiohttp
from multidict import CIMultiDict, CIMultiDictProxy

from .flow import MAX_HEAD, TOKEN

#: Connections of this pool to one (host, port), in use and idle; past it, aiohttp's (limit 16).
PER_HOST = 16
#: Connections of this pool in all (aiohttp's own limit, 256, applies to its own).
TOTAL = 256
#: An idle connection is closed after this many seconds (aiohttp's keep-alive timeout).
IDLE_SECONDS = 15.0
#: Bytes of an answer not yet taken past which reading from the site pauses.
HIGH_WATER = 256 * 1024
#: The longest chunk-size line of a chunked body (extensions included).
MAX_CHUNK_LINE = 4 * 1024

#: A path sent as it is: no percent-escape, no dot segment, nothing aiohttp's URL would requote.
_PLAIN_PATH = re.compile(r"/[A-Za-z0-9\-._~!$&'()*+,;=:@/]*(?:\?[A-Za-z0-9\-._~!$&'()*+,;=:@/?]*)?")
#: A plainly well-formed answer head: HTTP/1.x, a 3-digit status, token names, values without
#: control characters other than tab, CRLF line ends (an obs-fold or a bare LF is aiohttp's).
_SITE_HEAD = re.compile(
    rb"HTTP/1\.([01]) ([0-9]{3})(?: ([\t\x20-\x7e\x80-\xff]*))?\r\n"
    rb"((?:" + TOKEN + rb":[\t\x20-\x7e\x80-\xff]*\r\n)*)\r\n"
)
_SITE_FIELD = re.compile(rb"(" + TOKEN + rb"):[ \t]*([\t\x20-\x7e\x80-\xff]*?)[ \t]*\r\n")
_BARE_LF = re.compile(rb"(?<!\r)\n")
_SITE_HEX = re.compile(rb"[0-9A-Fa-f]{1,16}")


class Unsupported(Exception):
    """Not for this pool: the request goes through aiohttp (the module's docstring)."""


# the body's framing
_BY_LENGTH, _BY_CHUNKS, _BY_CLOSE = 0, 1, 2
# a chunked body's parts
_AT_SIZE, _AT_DATA, _AT_DATA_END, _AT_TRAILER = 0, 1, 2, 3


class _Site(asyncio.Protocol):
    """One connection to a site: the bytes of the answer being read, as the loop delivers them."""

    def __init__(self, pool: SitePool, key: tuple[str, int]) -> None:
        self.pool = pool
        self.key = key
        self.transport: asyncio.Transport | None = None
        self.head: list[bytes] = []  # what arrived of the answer while its head is awaited
        self.head_size = 0
        self.data = bytearray()  # a chunked body's bytes not yet parsed
        self.body: list[bytes] = []  # de-framed body bytes not yet taken
        self.buffered = 0  # their size
        self.closed = False
        self.error: BaseException | None = None
        self.waiter: asyncio.Future[None] | None = None
        self.paused = False
        self.received = False  # any byte of the current answer
        self.idle_since = 0.0
        # the current answer's body (`_frame`)
        self.framing = -1  # -1: reading the head
        self.remaining = 0  # of a Content-Length body, or of the current chunk
        self.chunk_part = _AT_SIZE
        self.complete = False  # the body has ended as framed
        self.reusable = False
        self.counted = False  # in the pool's count of open connections
        self.idle = False  # kept in the pool, between answers

    # ---- asyncio.Protocol ----------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        if self.idle:  # bytes that answer nothing: the connection is not to be trusted
            if self.transport is not None:
                self.transport.close()
            return
        self.received = True
        if self.framing < 0:  # kept as it came: the body after the head is cut from it once
            self.head.append(data)
            self.head_size += len(data)
        else:
            if self.framing == _BY_CHUNKS:
                self.data += data
            self._frame(data)
        waiting = self.buffered + self.head_size + len(self.data)
        if waiting > HIGH_WATER and not self.paused and self.transport is not None:
            self.paused = True
            self.transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool:
        self._lost(None)
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._lost(exc)

    def _lost(self, exc: BaseException | None) -> None:
        if not self.closed:
            self.closed = True
            if exc is not None and self.error is None:
                self.error = exc
            self.reusable = False
            if self.framing == _BY_CLOSE and exc is None:  # the end of such a body
                self.complete = True
            self.pool._forget(self)
        self._wake()

    def _wake(self) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    # ---- the body's framing ----------------------------------------------------------------------
    def _frame(self, data: bytes) -> None:
        """De-frame what arrived of the body onto `body` (a chunked body's bytes are in `data`)."""
        if self.complete:
            if data:
                self.reusable = False  # bytes after the answer: nothing to reuse
            return
        if self.framing == _BY_LENGTH:
            if len(data) > self.remaining:
                self.reusable = False
                data = data[: self.remaining]
            self.remaining -= len(data)
            self._take(data)
            if self.remaining == 0:
                self.complete = True
        elif self.framing == _BY_CLOSE:
            self._take(data)
        else:
            self._chunks()

    def _take(self, data: bytes) -> None:
        if data:
            self.body.append(data)
            self.buffered += len(data)

    def _chunks(self) -> None:
        """Chunks out of `data` as far as they have arrived (RFC 9112 §7.1); a malformed one ends
        the answer (`error`), as aiohttp's parser does."""
        data = self.data
        start = 0
        while not self.complete:
            if self.chunk_part == _AT_DATA:
                piece = bytes(data[start : start + self.remaining])
                if not piece:
                    break
                start += len(piece)
                self.remaining -= len(piece)
                self._take(piece)
                if self.remaining == 0:
                    self.chunk_part = _AT_DATA_END
                continue
            end = data.find(b"\r\n", start)
            if end < 0:
                if len(data) - start > MAX_CHUNK_LINE:
                    self._malformed("a chunk line too long")
                break
            line = bytes(data[start:end])
            start = end + 2
            if self.chunk_part == _AT_DATA_END:
                if line:
                    self._malformed("a chunk without its CRLF")
                    break
                self.chunk_part = _AT_SIZE
            elif self.chunk_part == _AT_SIZE:
                size = line.split(b";", 1)[0].rstrip(b" \t")
                if not _SITE_HEX.fullmatch(size):
                    self._malformed("a malformed chunk size")
                    break
                self.remaining = int(size, 16)
                self.chunk_part = _AT_DATA if self.remaining else _AT_TRAILER
            elif not line:  # the empty line after the trailer fields: the end
                self.complete = True
        del data[:start]
        if self.complete and data:
            self.reusable = False

    def _malformed(self, message: str) -> None:
        self.error = aiohttp.ClientPayloadError(f"the site's chunked body: {message}")
        self.reusable = False
        self.complete = True  # nothing more is read from it
        if self.transport is not None:
            self.transport.abort()

    # ---- waiting ----------------------------------------------------------------------------------
    async def wait(self, timeout: float) -> None:
        """Until more bytes arrive, the connection ends, or `timeout` seconds pass without either
        (`SocketTimeoutError`, aiohttp's `sock_read`)."""
        if self.paused and self.transport is not None:
            self.paused = False
            self.transport.resume_reading()
        loop = asyncio.get_running_loop()
        waiter = self.waiter = loop.create_future()
        timer = loop.call_later(timeout, _time_out, waiter)
        try:
            await waiter
        finally:
            timer.cancel()
            self.waiter = None


def _time_out(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_exception(aiohttp.SocketTimeoutError("Timeout on reading data from socket"))


class SiteResponse:
    """A site's answer read by `SitePool`: what the proxy core reads of `aiohttp.ClientResponse`
    (its `content` is the answer itself)."""

    def __init__(
        self,
        site: _Site,
        status: int,
        reason: str,
        raw_headers: tuple[tuple[bytes, bytes], ...],
        timeout: float,
    ) -> None:
        self._site = site
        self.status = status
        self.reason = reason
        self.raw_headers = raw_headers
        self._timeout = timeout
        self._done = False

    @property
    def content(self) -> SiteResponse:
        return self

    @property
    def headers(self) -> CIMultiDictProxy[str]:
        return CIMultiDictProxy(
            CIMultiDict(
                (k.decode("utf-8", "surrogateescape"), v.decode("utf-8", "surrogateescape"))
                for k, v in self.raw_headers
            )
        )

    def at_eof(self) -> bool:
        site = self._site
        return site.complete and not site.body

    def read_nowait(self, n: int = -1) -> bytes:
        """All of the body that is here (`n` is -1, as the core asks)."""
        site = self._site
        body = site.body
        if not body:
            return b""
        data = body[0] if len(body) == 1 else b"".join(body)
        body.clear()
        site.buffered = 0
        return data

    async def readany(self) -> bytes:
        """The next bytes of the body (waiting for them); b"" at its end."""
        site = self._site
        while not site.body:
            if site.complete:
                if site.error is not None and isinstance(site.error, aiohttp.ClientPayloadError):
                    raise site.error
                self._finished()
                return b""
            if site.closed:  # ended before its end
                raise aiohttp.ClientPayloadError("Response payload is not completed") from site.error
            await site.wait(self._timeout)
        return self.read_nowait()

    async def iter_any(self) -> AsyncIterator[bytes]:
        while chunk := await self.readany():
            yield chunk

    def _finished(self) -> None:
        if not self._done:
            self._done = True
            self._site.pool._release(self._site)

    def release(self) -> None:
        """Done with the answer: its connection kept for the next request when it was read to its
        end and may be, else closed."""
        if not self._done:
            self._done = True
            site = self._site
            if not (site.complete and not site.body):
                site.reusable = False
            site.pool._release(site)


class SitePool:
    """Kept-alive connections to sites, by (host, port); `fetch` for one request."""

    def __init__(
        self,
        connect: Callable[[str, int], Awaitable[str]],
        connect_timeout: float,
        read_timeout: float,
    ) -> None:
        self.connect_address = connect  # the guarded address of a host (`_guarded_address`)
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self._idle: dict[tuple[str, int], list[_Site]] = {}
        self._count: dict[tuple[str, int], int] = {}  # open connections, in use or idle
        self._total = 0  # all of them
        self._sweeping: asyncio.TimerHandle | None = None  # `_sweep`, while connections are kept

    @staticmethod
    def takes(method: str, scheme: str, host: str, path: str) -> bool:
        """Whether a request (without a body) is of the kind this pool sends."""
        return (
            method in ("GET", "HEAD")
            and scheme == "http"
            and host.isascii()
            and _PLAIN_PATH.fullmatch(path) is not None
            and "/." not in path.partition("?")[0]
        )

    async def fetch(
        self, method: str, host: str, port: int, path: str, headers: list[tuple[str, str]]
    ) -> SiteResponse:
        """Send the request and read its answer's head; `Unsupported` when aiohttp is to send it
        (nothing was sent, or the answer is not of the kind read here: the module's docstring)."""
        key = (host, port)
        authority = f"[{host}]" if ":" in host else host
        if port != 80:
            authority += f":{port}"
        lines = [f"{method} {path} HTTP/1.1\r\nHost: {authority}\r\n"]
        lines += [f"{name}: {value}\r\n" for name, value in headers]
        lines.append("\r\n")
        head = "".join(lines).encode("utf-8")  # as aiohttp encodes header values
        site = self._idle_site(key)
        reused = site is not None
        if site is None:
            site = await self._open(key)
        try:
            return await self._exchange(site, head, method)
        except _Stale:
            if not reused:
                raise aiohttp.ServerDisconnectedError() from None
        # a kept-alive connection the site had closed before it read the request: once more, anew
        try:
            return await self._exchange(await self._open(key), head, method)
        except _Stale:
            raise aiohttp.ServerDisconnectedError() from None

    def _idle_site(self, key: tuple[str, int]) -> _Site | None:
        idle = self._idle.get(key)
        if not idle:
            return None
        now = asyncio.get_running_loop().time()
        while idle:
            site = idle.pop()
            site.idle = False
            if not site.closed and now - site.idle_since < IDLE_SECONDS:
                return site
            self._close(site)
        return None

    def _sweep(self) -> None:
        """Close the connections idle for `IDLE_SECONDS`; again later while any are kept."""
        self._sweeping = None
        now = asyncio.get_running_loop().time()
        for idle in list(self._idle.values()):
            for site in [site for site in idle if now - site.idle_since >= IDLE_SECONDS]:
                self._close(site)
        if any(self._idle.values()):
            self._sweeping = asyncio.get_running_loop().call_later(IDLE_SECONDS, self._sweep)

    async def _open(self, key: tuple[str, int]) -> _Site:
        if self._count.get(key, 0) >= PER_HOST or self._total >= TOTAL:
            raise Unsupported("this pool has all the connections it may open")
        host, port = key
        loop = asyncio.get_running_loop()
        site = _Site(self, key)
        try:
            async with asyncio.timeout(self.connect_timeout):
                address = await self.connect_address(host, port)
                await loop.create_connection(lambda: site, address, port)
        except TimeoutError:
            raise aiohttp.ConnectionTimeoutError(f"Connection timeout to host http://{host}:{port}") from None
        except Exception as exc:  # refused, unreachable, not allowed: aiohttp connects and says why
            raise Unsupported(f"cannot connect: {exc!r}") from None
        self._count[key] = self._count.get(key, 0) + 1
        self._total += 1
        site.counted = True
        if site.closed:  # closed as soon as made
            self._forget(site)
        return site

    async def _exchange(self, site: _Site, head: bytes, method: str) -> SiteResponse:
        site.data.clear()
        site.head.clear()
        site.head_size = 0
        site.body.clear()
        site.buffered = 0
        site.framing = -1
        site.complete = site.received = False
        site.reusable = True
        site.error = None
        transport = site.transport
        assert transport is not None
        if site.closed or transport.is_closing():
            self._close(site)
            raise _Stale
        transport.write(head)
        try:
            while True:
                parts = site.head
                data = parts[0] if len(parts) == 1 else b"".join(parts)
                if len(parts) > 1:
                    parts[:] = [data]
                end = data.find(b"\r\n\r\n")
                if end >= 0:
                    break
                if len(data) > MAX_HEAD:
                    raise Unsupported("an answer head longer than this pool reads")
                if _BARE_LF.search(data) is not None:  # its end would never be found here
                    raise Unsupported("an answer head with a bare LF")
                if site.closed:
                    if not site.received:
                        raise _Stale
                    raise aiohttp.ServerDisconnectedError()
                await site.wait(self.read_timeout)
            match = _SITE_HEAD.fullmatch(data, 0, end + 4)
            if match is None:
                raise Unsupported("an answer head not of the plain kind")
            version, status_digits, reason, block = match.groups()
            status = int(status_digits)
            if status < 200:
                raise Unsupported("an interim answer")
            raw_headers = tuple(_SITE_FIELD.findall(block))
            framing, length, keep_alive = _site_framing(raw_headers, version == b"1")
            if method == "HEAD" or status in (204, 304):
                framing, length = _BY_LENGTH, 0
            rest = data[end + 4 :]
            site.head.clear()
            site.head_size = 0
        except BaseException:
            site.reusable = False
            self._close(site)
            raise
        site.reusable = keep_alive and framing != _BY_CLOSE
        site.framing = framing
        site.remaining = length
        site.chunk_part = _AT_SIZE
        site.complete = framing == _BY_LENGTH and length == 0
        if framing == _BY_CHUNKS:
            site.data += rest
        site._frame(rest)
        if site.closed and framing == _BY_CLOSE and site.error is None:
            site.complete = True
        reason_text = (reason or b"").decode("utf-8", "surrogateescape")  # as aiohttp's parser
        return SiteResponse(site, status, reason_text, raw_headers, self.read_timeout)

    def _release(self, site: _Site) -> None:
        if site.reusable and site.complete and not site.closed and site.error is None:
            if site.paused and site.transport is not None:
                site.paused = False
                site.transport.resume_reading()
            site.framing = -1
            site.idle = True
            loop = asyncio.get_running_loop()
            site.idle_since = loop.time()
            self._idle.setdefault(site.key, []).append(site)
            if self._sweeping is None:
                self._sweeping = loop.call_later(IDLE_SECONDS, self._sweep)
        else:
            self._close(site)

    def _close(self, site: _Site) -> None:
        if site.transport is not None and not site.transport.is_closing():
            site.transport.close()
        self._forget(site)

    def _forget(self, site: _Site) -> None:
        """A connection closed (by either side): no longer counted nor kept."""
        key = site.key
        idle = self._idle.get(key)
        if idle and site in idle:
            idle.remove(site)
        if not site.counted:
            return
        site.counted = False
        self._total -= 1
        if key in self._count:
            self._count[key] -= 1
            if self._count[key] <= 0:
                del self._count[key]

    def close(self) -> None:
        if self._sweeping is not None:
            self._sweeping.cancel()
            self._sweeping = None
        for idle in list(self._idle.values()):
            for site in list(idle):
                self._close(site)
        self._idle.clear()


class _Stale(Exception):
    """A kept-alive connection closed before any byte of the answer (sent once more, anew)."""


def _site_framing(raw_headers: tuple[tuple[bytes, bytes], ...], http11: bool) -> tuple[int, int, bool]:
    """The body's framing (`_BY_LENGTH`, `_BY_CHUNKS`, `_BY_CLOSE`), its length, and whether the
    connection stays open after it; `Unsupported` for what aiohttp is to read."""
    length: int | None = None
    chunked = False
    keep_alive = http11
    for name, value in raw_headers:
        lowered = name.lower()
        if lowered == b"content-length":
            if not value.isdigit() or length is not None or len(value) > 18:
                raise Unsupported("a Content-Length this pool does not read")
            length = int(value)
        elif lowered == b"transfer-encoding":
            if chunked or value.lower() != b"chunked":
                raise Unsupported("a Transfer-Encoding other than chunked")
            chunked = True
        elif lowered == b"connection":
            tokens = {part.strip() for part in value.lower().split(b",")}
            if b"close" in tokens:
                keep_alive = False
            elif b"keep-alive" in tokens and not http11:
                keep_alive = False  # HTTP/1.0 keep-alive: not reused here
    if chunked:
        if length is not None:
            raise Unsupported("both Content-Length and Transfer-Encoding")
        return _BY_CHUNKS, 0, keep_alive
    if length is not None:
        return _BY_LENGTH, length, keep_alive
    return _BY_CLOSE, 0, keep_alive  # kept after an answer without a body (HEAD, 204, 304) only
