"""HTTP/1.1 on one browser connection, framed by h11 (a strict, well-kept parser and framer).

The proxy never parses request framing itself: request heads, `Content-Length` and chunked request
bodies are read by h11 (which refuses chunk sizes such as `-1`, `+4`, `0x4` or `0_4`, a chunk
without its trailing CRLF, a non-digit or conflicting `Content-Length`, control characters in a
header), and every answer is framed by h11 too (Content-Length, chunked, or close for HTTP/1.0).

What this module adds around h11: the limits of a request head (`MAX_REQUEST_LINE` answered with
414, `MAX_HEAD` and `MAX_HEADERS` with 431) enforced while reading, timeouts, a bound on every
request body (`BodyTooLarge` past the caller's limit, 413), and reading a head line by line so that
nothing after a CONNECT head is consumed before the tunnel takes the socket over.
"""

from __future__ import annotations

import asyncio
import os
import re
import socket
from collections.abc import AsyncIterator, Sequence

import h11

from .flow import MAX_HEAD, MAX_HEADERS, MAX_REQUEST_LINE, BadRequest

#: Bytes read from the browser at a time while a request body streams, and the size of the pieces
#: a body is handed on in (`ClientConnection.body`): h11 gives one event per chunk, and a body of
#: one-byte chunks handed on chunk by chunk cost the shared event loop about 18 µs each (issue 46).
BODY_READ = 64 * 1024
#: Chunks one chunked request body may have (413 past it). h11 parses each chunk's line in Python
#: (about 4 µs), so the chunk count, not the size, bounds what a body of tiny chunks costs the
#: loop: 16,384 chunks are about 65 ms of parsing, and 1 M one-byte chunks (6 MB on the wire)
#: were 18 s. Clients that stream an upload in chunks write pieces of kilobytes (curl 64 KB), so
#: a body up to the fetch size cap (10 MB) fits in well under this many.
MAX_CHUNKS = 16 * 1024
#: A browser connection with no request (new, or kept alive after one). It holds a descriptor all
#: the while: at 75 s, 1,100 idle connections took every descriptor of a 1,024 limit (issue 46).
#: Browsers open a new connection to their proxy in one round trip when the old one has gone.
IDLE_TIMEOUT = 20.0
HEAD_TIMEOUT = 30.0  # the rest of a request head once it started
BODY_TIMEOUT = 60.0  # a request body that stops arriving
LINGER_SECONDS = 2.0  # a refused body discarded at most this long before the close (`linger`)
LINGER_BYTES = 16 * 1024 * 1024  # and at most this much of it
_FIELD_NAME = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
_FIELD_VALUE = re.compile(r"^(?:[\x21-\x7e\x80-\xff](?:[ \t]*[\x21-\x7e\x80-\xff])*)?$")
_REASON = re.compile(r"^[ \t\x21-\x7e\x80-\xff]*$")
#: A line end other than CRLF in what h11 holds unread while it waits for more of a body: h11 ends a
#: chunk-size line (and the trailer's) only at CRLF, so a body written with bare LFs ("4\nabcd\n0\n\n")
#: would wait for one until BODY_TIMEOUT, its client unanswered for 60 s. What h11 holds unread then
#: is the start of such a line (a chunk's data it takes as it comes), so any LF not after a CR, or CR
#: not before an LF, is one (RFC 9112 7.1: chunk lines end with CRLF).
_BARE_LINE_END = re.compile(rb"(?<!\r)\n|\r(?!\n|\Z)")
#: A request-target that may stand in as the Host of a request that has none (see `_host_line`).
_AUTHORITY = re.compile(rb"^(?:[a-z][a-z0-9+.\-]*://)?([A-Za-z0-9.\-_~%!$&'()*+,;=:\[\]]+)", re.I)


class BodyTooLarge(Exception):
    """A request body went past the limit the caller gave (answered with 413)."""


class TooManyChunks(BodyTooLarge):
    """A chunked request body with more than `MAX_CHUNKS` chunks (answered with 413, as too large:
    its cost is in its chunks)."""


def sendable(headers: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """The header fields h11 can send: any field with a malformed name or value (as an upstream
    server may send and a lenient client parser may pass on) is dropped, never forwarded."""
    return [
        (name, value)
        for name, value in headers
        if _FIELD_NAME.match(name) and _FIELD_VALUE.match(value.strip(" \t"))
    ]


def _reason(reason: str) -> bytes:
    """A reason phrase h11 accepts (an unprintable one is dropped: the status code is what counts)."""
    data = reason.encode("latin-1", "replace")
    return data if _REASON.match(reason) else b""


def _host_line(first_line: bytes) -> bytes | None:
    """A `Host` field for an HTTP/1.1 request that came without one.

    h11 requires `Host` on HTTP/1.1 (RFC 9112 §3.2), but a proxy's targets are absolute or CONNECT
    authorities, which the proxy uses and which override any Host (§3.2.2); some clients (Python
    3.11's http.client for CONNECT) send none. The authority of the target stands in, and is only
    used for h11's check.
    """
    parts = first_line.rstrip(b"\r\n").split(b" ")
    if len(parts) != 3 or parts[2] != b"HTTP/1.1":
        return None
    match = _AUTHORITY.match(parts[1])
    if match is None or not match.group(1) or (parts[0] != b"CONNECT" and b"://" not in parts[1]):
        return None
    authority = match.group(1).split(b"/", 1)[0]
    return b"Host: " + authority + b"\r\n" if authority else None


#: The first byte of a TLS connection from the client: a handshake record (RFC 8446 §5.1).
TLS_HANDSHAKE = 0x16


async def client_starts_tls(writer: asyncio.StreamWriter, timeout: float) -> bool:
    """Whether the first byte a client sends into an accepted CONNECT tunnel opens a TLS handshake.

    Browsers also tunnel plain protocols through a proxy (Chromium sends `ws://` WebSockets through
    CONNECT): those must not be met with TLS. The byte is peeked at (MSG_PEEK on the socket while
    the transport's reading is paused), so nothing is consumed: on True the caller starts TLS on the
    still-paused transport (`start_tls` resumes it), on False reading resumes for plain HTTP.
    TimeoutError when the client sends nothing within `timeout` seconds.
    """
    transport = writer.transport
    raw = writer.get_extra_info("socket")
    if raw is None or not isinstance(transport, asyncio.ReadTransport):
        return True
    loop = asyncio.get_running_loop()
    transport.pause_reading()
    # a duplicate descriptor: the loop watches the transport's own, and its socket object forbids recv
    with socket.socket(fileno=os.dup(raw.fileno())) as peek:
        readable: asyncio.Future[None] = loop.create_future()

        def ready() -> None:
            if not readable.done():
                readable.set_result(None)

        loop.add_reader(peek.fileno(), ready)
        try:
            await asyncio.wait_for(readable, timeout)
        finally:
            loop.remove_reader(peek.fileno())
        first = peek.recv(1, socket.MSG_PEEK)
    if first and first[0] == TLS_HANDSHAKE:
        return True
    transport.resume_reading()
    return False


class ClientConnection:
    """One browser connection: requests read and answers written through an `h11.Connection`."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.h11 = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEAD)
        self.method = b""  # of the request being answered: a HEAD gets no body
        #: Waiting for a request to begin (no byte of it yet): the connection can be closed without
        #: harm to anyone when descriptors run out (`ProxyServer`'s shedding).
        self.idle = False
        self._held: list[bytes] = []  # framed answer bytes not yet written (`flush`)

    # ---- reading ------------------------------------------------------------------------------
    def _next_event(self) -> h11.Event | type[h11.NEED_DATA] | type[h11.PAUSED]:
        """h11's next event; a protocol error as BadRequest with h11's status hint."""
        try:
            return self.h11.next_event()
        except h11.RemoteProtocolError as exc:
            status = exc.error_status_hint
            raise BadRequest(status if status in (400, 414, 431, 501) else 400, str(exc)) from None

    async def next_request(self) -> h11.Request | None:
        """The next request head; None at a clean end of the connection or after IDLE_TIMEOUT.

        The head is read a line at a time (never past its empty line) within MAX_REQUEST_LINE
        (414), MAX_HEAD and MAX_HEADERS (431), and within HEAD_TIMEOUT of its first line;
        BadRequest when it is malformed.
        """
        size = 0
        lines = 0
        first: bytes | None = None
        has_host = False
        buffered = bool(self.h11.trailing_data[0])
        # h11 can complete a head only at its empty line (or from bytes it already held), so it is
        # asked for its next event then, not after every line; one timeout spans the whole head
        # (IDLE_TIMEOUT for the first line, then HEAD_TIMEOUT from it), not one per line
        complete = True
        loop = asyncio.get_running_loop()
        self.idle = not buffered
        try:
            async with asyncio.timeout_at(loop.time() + IDLE_TIMEOUT) as timeout:
                while True:
                    if complete:
                        event = self._next_event()
                        if isinstance(event, h11.Request):
                            self.method = event.method
                            return event
                        if isinstance(event, h11.ConnectionClosed):
                            return None
                        if event is not h11.NEED_DATA:
                            raise BadRequest(400, "unexpected data before a request")
                    try:
                        line = await self.reader.readuntil(b"\n")
                    except asyncio.IncompleteReadError as exc:
                        if first is None and not buffered and not exc.partial.strip():
                            return None
                        raise BadRequest(400, "incomplete request head") from None
                    except (asyncio.LimitOverrunError, ValueError):
                        if first is None:
                            raise BadRequest(414, "request line too long") from None
                        raise BadRequest(431, "request header fields too large") from None
                    size += len(line)
                    end = line in (b"\r\n", b"\n")
                    if first is None:
                        if end and not buffered:  # stray CRLFs between requests (RFC 9112 §2.2)
                            if size > MAX_HEAD:
                                raise BadRequest(400, "too many empty lines before a request")
                            complete = False
                            continue
                        if len(line) > MAX_REQUEST_LINE:
                            raise BadRequest(414, "request line too long")
                        first = line
                        self.idle = False
                        timeout.reschedule(loop.time() + HEAD_TIMEOUT)  # for the whole head
                    else:
                        lines += 1
                        if end:
                            if not has_host and not buffered and (host := _host_line(first)) is not None:
                                self.h11.receive_data(host)
                        else:
                            has_host = has_host or line[:5].lower() == b"host:"
                    if size > MAX_HEAD or lines > MAX_HEADERS + 1:
                        raise BadRequest(431, "request header fields too large")
                    self.h11.receive_data(line)
                    complete = end or buffered
        except TimeoutError:
            if first is None:
                return None
            raise BadRequest(400, "incomplete request head") from None
        finally:
            self.idle = False

    async def body(self, limit: int) -> AsyncIterator[bytes]:
        """The request body as it arrives (de-framed by h11, never held whole), in pieces of up to
        `BODY_READ` bytes however small its chunks: BodyTooLarge past `limit` bytes, TooManyChunks
        past `MAX_CHUNKS` chunks, BadRequest on a framing error, ConnectionError when the browser
        goes (its connection closed or broken: nothing more is parsed or sent on for it).

        Why pieces rather than h11's events: each event handed on is a generator step and a write
        upstream (a chunk of its own there too), which for one-byte chunks cost ~18 µs of the loop
        each; joined per read, a piece costs that once.
        """
        received = 0
        chunks = 0
        while True:
            parts: list[bytes] = []
            size = 0
            while size < BODY_READ:
                event = self._next_event()
                if not isinstance(event, h11.Data):
                    break
                if event.chunk_start:
                    chunks += 1
                    if chunks > MAX_CHUNKS:
                        raise TooManyChunks(f"the request body has more than {MAX_CHUNKS} chunks")
                received += len(event.data)
                if received > limit:
                    raise BodyTooLarge(f"the request body is larger than {limit} bytes")
                parts.append(event.data)
                size += len(event.data)
            if parts:
                yield bytes(parts[0]) if len(parts) == 1 else b"".join(parts)
                if size >= BODY_READ:  # more may be parsed from what h11 holds already
                    continue
            if isinstance(event, h11.EndOfMessage):
                return
            if event is not h11.NEED_DATA:
                raise BadRequest(400, "malformed request body")
            if _BARE_LINE_END.search(self.h11.trailing_data[0]):
                raise BadRequest(400, "a chunked body's lines must end with CRLF, not a bare LF or CR")
            if self.writer.is_closing():  # reset or lost: what is left of the body is nobody's
                raise ConnectionError("the browser left while sending its body")
            try:
                data = await asyncio.wait_for(self.reader.read(BODY_READ), BODY_TIMEOUT)
            except TimeoutError:
                raise ConnectionError("the request body stopped arriving") from None
            self.h11.receive_data(data)  # b"" is the end of the connection: h11 decides

    def expects_continue(self) -> bool:
        """Whether the browser waits for `100 Continue` before sending its body."""
        return bool(self.h11.they_are_waiting_for_100_continue)

    # ---- writing ------------------------------------------------------------------------------
    async def _send(self, event: h11.Event, *, flush: bool = True) -> None:
        """`event` framed by h11; written with whatever was held (`flush=False`) unless held too."""
        data = self.h11.send(event)
        if data:
            self._held.append(data)
        if flush:
            await self.flush()

    async def flush(self) -> None:
        """Write what is held, as one write: small answers go out in one segment, not three."""
        if self._held:
            data = b"".join(self._held) if len(self._held) > 1 else self._held[0]
            self._held.clear()
            self.writer.write(data)
            await self.writer.drain()  # back-pressure: never more than a piece or two in memory

    async def send_continue(self) -> None:
        await self._send(h11.InformationalResponse(status_code=100, headers=[], reason=b"Continue"))

    async def start_response(
        self, status: int, reason: str, headers: Sequence[tuple[str, str]], *, flush: bool = True
    ) -> None:
        """The status line and headers; h11 adds the framing (length, chunked, or close).
        `flush=False` holds them to go out with the body's first bytes (`send_data`, `flush`)."""
        response = h11.Response(status_code=status, headers=sendable(headers), reason=_reason(reason))
        await self._send(response, flush=flush)

    async def send_data(self, data: bytes, *, flush: bool = True) -> None:
        if data:
            await self._send(h11.Data(data=data), flush=flush)
        elif flush:
            await self.flush()

    async def end_response(self) -> None:
        await self._send(h11.EndOfMessage())

    async def send_response(
        self, status: int, reason: str, headers: Sequence[tuple[str, str]], body: bytes = b""
    ) -> None:
        """A whole answer whose body is known, written at once."""
        try:
            await self.start_response(status, reason, headers, flush=False)
            if self.method != b"HEAD":
                await self.send_data(body, flush=False)
            await self.end_response()
        finally:
            await self.flush()  # what was framed before an error goes out, as it did piece by piece

    def accept_tunnel_head(self) -> bytes:
        """`200 Connection established` for a CONNECT, as bytes to write; the bytes that came after
        the CONNECT head (the tunnel's first bytes) are left in `trailing_data`."""
        return (
            self.h11.send(
                h11.Response(
                    status_code=200, headers=[("Via", "1.1 readerproxy")], reason=b"Connection established"
                )
            )
            or b""
        )

    @property
    def trailing_data(self) -> bytes:
        return bytes(self.h11.trailing_data[0])

    def next_cycle(self) -> bool:
        """Ready for the next request on this connection (both messages complete, keep-alive);
        False when the connection has to close (a body left unread, `Connection: close`, HTTP/1.0)."""
        if self.h11.their_state is h11.SEND_BODY:  # a request without a body: its end is known
            try:
                if not isinstance(self.h11.next_event(), h11.EndOfMessage):
                    return False
            except h11.RemoteProtocolError:
                return False
        if self.h11.our_state is h11.DONE and self.h11.their_state is h11.DONE:
            self.h11.start_next_cycle()
            return True
        return False

    async def linger(self) -> None:
        """Before the connection closes on a request whose body was left unread (refused, too
        large, malformed): half-close, then discard what the browser still sends for a moment.

        Closing a socket with unread data makes the kernel reset the connection, and the reset can
        destroy the answer before the browser reads it; a bounded lingering close (LINGER_SECONDS,
        LINGER_BYTES, then close whatever comes) lets the status line arrive. Nothing is kept.
        """
        answered = self.h11.our_state in (h11.DONE, h11.MUST_CLOSE)
        if not answered or self.h11.their_state not in (h11.SEND_BODY, h11.ERROR):
            return
        if not self.writer.can_write_eof() or self.writer.is_closing():
            return
        discarded = 0
        try:
            self.writer.write_eof()
            async with asyncio.timeout(LINGER_SECONDS):
                while discarded < LINGER_BYTES and (data := await self.reader.read(BODY_READ)):
                    discarded += len(data)
        except (TimeoutError, OSError):
            pass

    @property
    def response_started(self) -> bool:
        """Whether an answer (its head at least) went to the browser."""
        return self.h11.our_state not in (h11.IDLE, h11.SEND_RESPONSE)
