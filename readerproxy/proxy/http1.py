"""HTTP/1.1 on one browser connection, framed by h11 (a strict, well-kept parser and framer).

The proxy never parses request framing itself: request bodies (`Content-Length`, chunked) are
read by h11 (which refuses chunk sizes such as `-1`, `+4`, `0x4` or `0_4`, a chunk without its
trailing CRLF, a non-digit or conflicting `Content-Length`, control characters in a header), and
so is every request head that is not of the common, plainly well-formed kind.

The fast path (the proxy's cost per request): a head that arrived whole and is a strict subset of
what h11 accepts (CRLF line ends, a token method, `HTTP/1.0` or `HTTP/1.1`, token names and values
of visible characters, exactly one Host, and no Content-Length, Transfer-Encoding, Expect or
Upgrade: a request without a body and without a protocol switch, not CONNECT) is parsed by two
regular expressions into what h11 would give (`RequestHead`), and its answer is framed here by
h11's own rules (`_FastAnswer`: Content-Length, chunked, or close for HTTP/1.0, HEAD, 204 and
304, the Connection header), without h11's per-event machinery. Anything else goes to h11 as
before, byte for byte: `tests/proxy/test_proxy_http1_fast.py` checks both give the same answer.

What this module adds around h11: the limits of a request head (`MAX_REQUEST_LINE` answered with
414, `MAX_HEAD` and `MAX_HEADERS` with 431) enforced while reading, timeouts, a bound on every
request body (`BodyTooLarge` past the caller's limit, 413), and reading a head line by line so that
nothing after a CONNECT head is consumed before the tunnel takes the socket over.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import socket
from collections.abc import AsyncIterator, Sequence
from typing import NamedTuple

import h11

from .flow import (
    MAX_HEAD,
    MAX_HEADERS,
    MAX_REQUEST_LINE,
    TOKEN,
    BadRequest,
    Request,
    RequestHead,
    request_from_head,
)

#: Bytes read from the browser at a time while a request body streams, and the size of the pieces
#: a body is handed on in (`ClientConnection.body`): h11 gives one event per chunk, and a body of
#: one-byte chunks handed on chunk by chunk cost the shared event loop about 18 µs each.
BODY_READ = 64 * 1024
#: Chunks one chunked request body may have (413 past it). h11 parses each chunk's line in Python
#: (about 4 µs), so the chunk count, not the size, bounds what a body of tiny chunks costs the
#: loop: 16,384 chunks are about 65 ms of parsing, and 1 M one-byte chunks (6 MB on the wire)
#: were 18 s. Clients that stream an upload in chunks write pieces of kilobytes (curl 64 KB), so
#: a body up to the fetch size cap (10 MB) fits in well under this many.
MAX_CHUNKS = 16 * 1024
#: A browser connection with no request (new, or kept alive after one). It holds a descriptor all
#: the while: at 75 s, 1,100 idle connections took every descriptor of a 1,024 limit.
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

# ---- the fast path's syntax: a strict subset of h11's (`h11._abnf`) ----------------------------
#: A field value of visible characters with single spaces or tabs inside (h11 also lets control
#: characters through, which the proxy then refuses: such heads take h11's path).
_VALUE = rb"(?:[\x21-\x7e\x80-\xff]+(?:[ \t]+[\x21-\x7e\x80-\xff]+)*)?"
_FAST_HEAD = re.compile(
    rb"(" + TOKEN + rb") ([\x21-\x7e]+) HTTP/(1\.[01])\r\n"
    rb"((?:" + TOKEN + rb":[ \t]*" + _VALUE + rb"[ \t]*\r\n)*)\r\n"
)
_FAST_FIELD = re.compile(rb"(" + TOKEN + rb"):[ \t]*(" + _VALUE + rb")[ \t]*\r\n")
#: Where reading a head line by line would stop: an empty line (CRLF or a bare LF) after a line.
_HEAD_END = re.compile(rb"\n\r?\n")
#: Fields that send a request to h11's path: a body's framing, a 100-continue wait, a switch.
_NOT_FAST = frozenset({b"content-length", b"transfer-encoding", b"expect", b"upgrade"})
# h11's checks of the answers it sends (`h11._headers`, `h11._abnf`)
_H11_NAME = re.compile(TOKEN)
_H11_VALUE = re.compile(rb"(?:[^\x00\s]+(?:[ \t]+[^\x00\s]+)*)?")
_DIGITS = re.compile(rb"[0-9]+")
#: A field as `sendable` keeps it and h11 sends it unchanged: a token name, an ASCII value with
#: nothing to strip (anything else is checked field by field as `sendable` and h11 check it).
_PLAIN_NAME = re.compile(r"[-!#$%&'*+.^_`|~0-9a-zA-Z]+")
_PLAIN_VALUE = re.compile(r"(?:[\x21-\x7e](?:[ \t]*[\x21-\x7e])*)?")
_ASCII_SPACE = " \t\n\r\x0b\x0c"  # what bytes.strip() strips
#: `_PLAIN_NAME` over all the names of an answer at once, joined by LF (which no name may hold:
#: `_all_plain` counts the LFs too); their values are checked by `_VALUE_CHARACTERS` and their ends.
_PLAIN_NAMES = re.compile(r"[-!#$%&'*+.^_`|~0-9a-zA-Z]+(?:\n[-!#$%&'*+.^_`|~0-9a-zA-Z]+)*")
_VALUE_CHARACTERS = re.compile(r"[\t\n\x20-\x7e]*")
_SPACE = (" ", "\t")
#: The answer's fields `_FastAnswer._framed` looks at (Host only to send it first, as h11 does).
_FRAMING = frozenset({"content-length", "transfer-encoding", "host", "connection"})


def parse_fast(head: bytes) -> RequestHead | None:
    """A request head (request line to its empty line) as h11 would parse it, when it is of the
    common kind the fast path takes (the module's docstring); None for anything else, which h11
    then reads: a head refused here is not refused, only left to h11."""
    match = _FAST_HEAD.fullmatch(head)
    if match is None:
        return None
    method, target, version, block = match.groups()
    if method == b"CONNECT":
        return None
    fields = _FAST_FIELD.findall(block)
    if len(fields) > MAX_HEADERS:
        return None
    hosts = 0
    for name, _ in fields:
        lowered = name.lower()
        if lowered == b"host":
            hosts += 1
        elif lowered in _NOT_FAST:
            return None
    if hosts != 1:
        return None
    return RequestHead(method, target, version, fields)


def head_of(event: h11.Request) -> RequestHead:
    """The head of a request h11 parsed."""
    return RequestHead(event.method, event.target, event.http_version, list(event.headers.raw_items()))


def parse_request_head(
    head: bytes,
    *,
    default_scheme: str = "http",
    default_host: str | None = None,
    default_port: int | None = None,
) -> Request:
    """A request head (request line and headers, CRLF-separated, without the empty line) as a
    Request, parsed by h11 as the proxy core parses every request (`flow.request_from_head` says
    what the proxy then requires of it)."""
    connection = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEAD)
    connection.receive_data(head + b"\r\n\r\n")
    try:
        event = connection.next_event()
    except h11.RemoteProtocolError as exc:
        raise BadRequest(400, str(exc)) from None
    if not isinstance(event, h11.Request):
        raise BadRequest(400, "incomplete request head")
    return request_from_head(
        head_of(event), default_scheme=default_scheme, default_host=default_host, default_port=default_port
    )


def _all_plain(headers: Sequence[tuple[str, str]]) -> bool:
    """Whether every field of an answer is plain (`_PLAIN_NAME`, `_PLAIN_VALUE`: visible ASCII,
    spaces and tabs only inside a value): sent by h11 as it is, nothing to drop or check field by
    field. Checked on the names and the values joined by LF, each a single pass of C: a pattern
    such as `_PLAIN_VALUE` costs a step of the regular expression engine per character."""
    if not headers:
        return False
    names = "\n".join([name for name, _ in headers])
    values = "\n".join([value for _, value in headers])
    lines = len(headers) - 1
    return (
        names.count("\n") == lines
        and values.count("\n") == lines
        and _PLAIN_NAMES.fullmatch(names) is not None
        and _VALUE_CHARACTERS.fullmatch(values) is not None
        # no value starts or ends with a space or a tab
        and not values.startswith(_SPACE)
        and not values.endswith(_SPACE)
        and " \n" not in values
        and "\t\n" not in values
        and "\n " not in values
        and "\n\t" not in values
    )


def _comma_tokens(fields: Sequence[tuple[bytes, bytes]], name: bytes) -> list[bytes]:
    """h11's `get_comma_header`: the lower-cased comma-separated elements of field `name`."""
    return [
        item
        for field, value in fields
        if field.lower() == name
        for item in (part.strip() for part in value.lower().split(b","))
        if item
    ]


def _tokens(items: Sequence[tuple[str, str, str]], lowered: str) -> list[str]:
    """`_comma_tokens` of an answer's (ASCII) fields, stripped as bytes are (not of \\x1c-\\x1f)."""
    return [
        item
        for _, name, value in items
        if name == lowered
        for item in (part.strip(_ASCII_SPACE) for part in value.lower().split(","))
        if item
    ]


class _FastAnswer:
    """The state of an answer to a fast-path request, framed here by h11's rules.

    h11 (0.16) in `Connection._clean_up_response_headers_for_sending`, `_body_framing`,
    `_keep_alive`, `write_any_response` and its body writers, reproduced for a request that has no
    body: any difference from h11's bytes or errors is a bug (`tests/proxy/test_proxy_http1_fast.py`).
    """

    IDLE, BODY, DONE, MUST_CLOSE, ERROR = "idle", "body", "done", "must_close", "error"
    LENGTH, CHUNKED, UNTIL_CLOSE = "length", "chunked", "until close"

    __slots__ = ("framing", "http10", "keep_alive", "method", "remaining", "state")

    def __init__(self, head: RequestHead) -> None:
        self.method = head.method
        self.http10 = head.http_version == b"1.0"
        # h11's `_keep_alive`: HTTP/1.1 without `Connection: close`
        self.keep_alive = not self.http10 and b"close" not in _comma_tokens(head.fields, b"connection")
        self.state = self.IDLE
        self.framing = self.LENGTH
        self.remaining = 0

    def _fail(self, message: str) -> h11.LocalProtocolError:
        self.state = self.ERROR
        return h11.LocalProtocolError(message)

    def head(self, status: int, reason: bytes, headers: Sequence[tuple[str, str]]) -> bytes:
        """The status line and header block h11 would send for `sendable(headers)`, with the same
        errors (LocalProtocolError, UnicodeEncodeError for a field that is not ASCII)."""
        if self.state is not self.IDLE:
            raise self._fail(f"can't send a response in state {self.state}")
        if not isinstance(status, int):
            raise h11.LocalProtocolError("status code must be integer")
        status = int(status)
        if not 200 <= status < 1000:
            raise h11.LocalProtocolError(f"Response status_code should be in range [200, 1000), not {status}")
        items: list[tuple[str, str, str]]  # (name, lower-case name, value), all ASCII
        if _all_plain(headers):  # the common answer: every field plain, checked at once
            items = [(name, name.lower(), value) for name, value in headers]
        else:
            items = []
            for name, value in headers:
                if _PLAIN_NAME.fullmatch(name) is None or _PLAIN_VALUE.fullmatch(value) is None:
                    # what `sendable` drops is dropped; what it keeps, h11 checks again, unstripped
                    if not _FIELD_NAME.match(name) or not _FIELD_VALUE.match(value.strip(" \t")):
                        continue
                    raw, data = name.encode("ascii"), value.encode("ascii")  # as h11's bytesify
                    if not _H11_NAME.fullmatch(raw) or not _H11_VALUE.fullmatch(data):
                        raise h11.LocalProtocolError(f"Illegal header {raw!r}")
                items.append((name, name.lower(), value))
        items, host = self._framed(status, items)
        if host:  # h11 sends Host first
            text = "".join([f"{name}: {value}\r\n" for name, lowered, value in items if lowered == "host"])
            text += "".join([f"{name}: {value}\r\n" for name, lowered, value in items if lowered != "host"])
        else:
            text = "".join([f"{name}: {value}\r\n" for name, _, value in items])
        self.state = self.BODY
        return b"HTTP/1.1 %d %s\r\n%s\r\n" % (status, reason, text.encode("ascii"))

    def _framed(
        self, status: int, items: list[tuple[str, str, str]]
    ) -> tuple[list[tuple[str, str, str]], bool]:
        """h11's rules on the fields of an answer: Content-Length and Transfer-Encoding checked,
        the framing chosen (`framing`, `remaining`), Connection set (`keep_alive`); and whether
        there is a Host field among them."""
        length: bytes | None = None
        chunked = False
        host = False
        connection: list[tuple[str, str, str]] = []  # the Connection fields
        kept: list[tuple[str, str, str]] = []
        for item in items:
            name, lowered, value = item
            if lowered not in _FRAMING:
                kept.append(item)
                continue
            if lowered == "host":
                host = True
            elif lowered == "connection":
                connection.append(item)
            elif lowered == "content-length":
                if value.isascii() and value.isdigit() and len(value) <= 20:  # the common one
                    data = value.encode("ascii")
                else:
                    lengths = {part.strip() for part in value.encode("ascii").split(b",")}
                    if len(lengths) != 1:
                        raise h11.LocalProtocolError("conflicting Content-Length headers")
                    data = lengths.pop()
                    if not _DIGITS.fullmatch(data) or len(data) > 20:
                        raise h11.LocalProtocolError("bad Content-Length")
                if length is not None:
                    if length != data:
                        raise h11.LocalProtocolError("conflicting Content-Length headers")
                    continue
                length = data
                item = (name, lowered, data.decode("ascii"))
            elif lowered == "transfer-encoding":
                if chunked:
                    raise h11.LocalProtocolError("multiple Transfer-Encoding headers")
                value = value.lower()
                if value != "chunked":
                    raise h11.LocalProtocolError("Only Transfer-Encoding: chunked is supported")
                chunked = True
                item = (name, lowered, value)
            kept.append(item)
        items = kept
        no_body = status in (204, 304)
        close = False
        if not no_body and not chunked and length is None:  # a body of unknown length
            if self.http10:  # no chunked framing for HTTP/1.0: the end is the connection's
                close = self.method != b"HEAD"
            else:
                items.append(("Transfer-Encoding", "transfer-encoding", "chunked"))
                chunked = True
        elif chunked and not no_body:
            items = [item for item in items if item[1] not in ("content-length", "transfer-encoding")]
            length = None
            if self.http10:
                chunked = False
                close = self.method != b"HEAD"
            else:  # h11 takes it out and puts it back last
                items.append(("Transfer-Encoding", "transfer-encoding", "chunked"))
        if not self.keep_alive or close:
            tokens = set(_tokens(items, "connection"))
            tokens.discard("keep-alive")
            tokens.add("close")
            items = [item for item in items if item[1] != "connection"]
            items += [("Connection", "connection", token) for token in sorted(tokens)]
            self.keep_alive = False  # "close" is among them
        elif connection and "close" in _tokens(connection, "connection"):
            self.keep_alive = False
        # the body's framing, for the real method (a HEAD's answer has none)
        if no_body or self.method == b"HEAD":
            self.framing, self.remaining = self.LENGTH, 0
        elif chunked:
            self.framing = self.CHUNKED
        elif length is not None:
            self.framing, self.remaining = self.LENGTH, int(length)
        else:
            self.framing = self.UNTIL_CLOSE
        return items, host

    def data(self, data: bytes, held: list[bytes]) -> None:
        """A piece of the body, framed onto `held`."""
        if self.state is not self.BODY:
            raise self._fail(f"can't send data in state {self.state}")
        if self.framing is self.CHUNKED:
            if data:
                held += (b"%x\r\n" % len(data), data, b"\r\n")
            return
        if self.framing is self.LENGTH:
            self.remaining -= len(data)
            if self.remaining < 0:
                raise self._fail("Too much data for declared Content-Length")
        held.append(data)

    def end(self, held: list[bytes]) -> None:
        if self.state is not self.BODY:
            raise self._fail(f"can't end a message in state {self.state}")
        if self.framing is self.LENGTH and self.remaining != 0:
            raise self._fail("Too little data for declared Content-Length")
        if self.framing is self.CHUNKED:
            held.append(b"0\r\n\r\n")
        self.state = (
            self.DONE if self.keep_alive and self.framing is not self.UNTIL_CLOSE else self.MUST_CLOSE
        )


#: An answer h11 refuses to frame (a bad header, a body past its Content-Length).
LocalProtocolError = h11.LocalProtocolError


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
    """One browser connection: requests read and answers written through an `h11.Connection`,
    or for a common request without a body, through the fast path (the module's docstring)."""

    #: Whether heads of the common kind take the fast path (False: every head goes through h11).
    fast_heads = True

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.h11 = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEAD)
        self.method = b""  # of the request being answered: a HEAD gets no body
        #: Waiting for a request to begin (no byte of it yet): the connection can be closed without
        #: harm to anyone when descriptors run out (`ProxyServer`'s shedding).
        self.idle = False
        self._held: list[bytes] = []  # framed answer bytes not yet written (`flush`)
        #: The answer's state when this cycle's request took the fast path (h11 then stays idle).
        self._fast: _FastAnswer | None = None

    # ---- reading ------------------------------------------------------------------------------
    def _next_event(self) -> h11.Event | type[h11.NEED_DATA] | type[h11.PAUSED]:
        """h11's next event; a protocol error as BadRequest with h11's status hint."""
        try:
            return self.h11.next_event()
        except h11.RemoteProtocolError as exc:
            status = exc.error_status_hint
            raise BadRequest(status if status in (400, 414, 431, 501) else 400, str(exc)) from None

    async def next_request(self) -> RequestHead | None:
        """The next request head; None at a clean end of the connection or after IDLE_TIMEOUT.

        The head is read a line at a time (never past its empty line) within MAX_REQUEST_LINE
        (414), MAX_HEAD and MAX_HEADERS (431), and within HEAD_TIMEOUT of its first line;
        BadRequest when it is malformed. When the rest of the head is already here after its
        first line, it is taken at once and, if of the common kind, parsed by the fast path
        (`parse_fast`); else its lines go to h11 one by one as if just read.
        """
        size = 0
        lines = 0
        first: bytes | None = None
        has_host = False
        self._fast = None
        buffered = bool(self.h11.trailing_data[0])
        pending: list[bytes] = []  # lines taken ahead by the fast path and left to h11, last first
        # h11 can complete a head only at its empty line (or from bytes it already held), so it is
        # asked for its next event then, not after every line; one timeout spans the whole head
        # (IDLE_TIMEOUT for the first line, then HEAD_TIMEOUT from it), not one per line. Between
        # requests with nothing held, h11 has nothing to give (NEED_DATA) and is not asked.
        complete = buffered or self.h11.their_state is not h11.IDLE
        loop = asyncio.get_running_loop()
        self.idle = not buffered
        try:
            async with asyncio.timeout_at(loop.time() + IDLE_TIMEOUT) as timeout:
                while True:
                    if complete:
                        event = self._next_event()
                        if isinstance(event, h11.Request):
                            self.method = event.method
                            return head_of(event)
                        if isinstance(event, h11.ConnectionClosed):
                            return None
                        if event is not h11.NEED_DATA:
                            raise BadRequest(400, "unexpected data before a request")
                    if pending:
                        line = pending.pop()
                    else:
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
                        if not buffered and self.fast_heads and (rest := await self._rest_of_head(line)):
                            if (head := parse_fast(line + rest)) is not None:
                                self._fast = _FastAnswer(head)
                                self.method = head.method
                                return head
                            pending = [part + b"\n" for part in rest.split(b"\n")[:-1]]
                            pending.reverse()
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

    async def _rest_of_head(self, first: bytes) -> bytes | None:
        """After the first line of a head, the rest of it up to the empty line where reading line
        by line would stop, taken from the reader when all of it (within MAX_HEAD) is there
        already and within the limits; None (nothing taken) otherwise. What it returns is read
        to its end, by the fast path or as lines by h11's path, which raise no limit within it."""
        buffer = getattr(self.reader, "_buffer", None)  # asyncio.StreamReader's, read-only here
        if not isinstance(buffer, bytearray) or not buffer:
            return None
        if buffer[:1] == b"\n":
            end = 1
        elif buffer[:2] == b"\r\n":
            end = 2
        elif (match := _HEAD_END.search(buffer, 0, MAX_HEAD)) is not None:
            end = match.end()
        else:
            return None
        if len(first) + end > MAX_HEAD or buffer.count(b"\n", 0, end) > MAX_HEADERS + 1:
            return None  # refused (431) as it is read line by line, nothing taken past the limit
        return await self.reader.readexactly(end)  # here already: no wait

    async def body(self, limit: int) -> AsyncIterator[bytes]:
        """The request body as it arrives (de-framed by h11, never held whole), in pieces of up to
        `BODY_READ` bytes however small its chunks: BodyTooLarge past `limit` bytes, TooManyChunks
        past `MAX_CHUNKS` chunks, BadRequest on a framing error, ConnectionError when the browser
        goes (its connection closed or broken: nothing more is parsed or sent on for it).

        Why pieces rather than h11's events: each event handed on is a generator step and a write
        upstream (a chunk of its own there too), which for one-byte chunks cost ~18 µs of the loop
        each; joined per read, a piece costs that once.
        """
        if self._fast is not None:  # a fast-path request has no body
            return
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
        if self._fast is not None:  # no Expect field on the fast path
            return False
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
        if self._fast is not None:
            if self._fast.state is not _FastAnswer.IDLE:
                raise self._fast._fail("can't send 100 Continue after the answer began")
            self._held.append(b"HTTP/1.1 100 Continue\r\n\r\n")
            await self.flush()
            return
        await self._send(h11.InformationalResponse(status_code=100, headers=[], reason=b"Continue"))

    async def start_response(
        self, status: int, reason: str, headers: Sequence[tuple[str, str]], *, flush: bool = True
    ) -> None:
        """The status line and headers; h11 adds the framing (length, chunked, or close), or the
        fast path by h11's rules. `flush=False` holds them to go out with the body's first bytes
        (`send_data`, `flush`)."""
        if self._fast is not None:
            self._held.append(self._fast.head(status, _reason(reason), headers))  # `sendable` in it
            if flush:
                await self.flush()
            return
        response = h11.Response(status_code=status, headers=sendable(headers), reason=_reason(reason))
        await self._send(response, flush=flush)

    async def send_data(self, data: bytes, *, flush: bool = True) -> None:
        if data:
            if self._fast is not None:
                self._fast.data(data, self._held)
                if flush:
                    await self.flush()
                return
            await self._send(h11.Data(data=data), flush=flush)
        elif flush:
            await self.flush()

    async def end_response(self) -> None:
        if self._fast is not None:
            self._fast.end(self._held)
            await self.flush()
            return
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
        assert self._fast is None, "CONNECT never takes the fast path"
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

    def switching_protocols_head(self, headers: list[tuple[str, str]], reason: bytes) -> bytes:
        """`101 Switching Protocols` for an upgrade the site accepted, as bytes to write; from here
        on the connection carries bytes (what the browser sent after its request is in
        `trailing_data`)."""
        return (
            self.h11.send(h11.InformationalResponse(status_code=101, headers=headers, reason=reason)) or b""
        )

    def next_cycle(self) -> bool:
        """Ready for the next request on this connection (both messages complete, keep-alive);
        False when the connection has to close (a body left unread, `Connection: close`, HTTP/1.0)."""
        if self._fast is not None:
            done = self._fast.state is _FastAnswer.DONE
            self._fast = None
            return done
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
        if self._fast is not None:  # no body to be left unread
            return
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
        if self._fast is not None:
            return self._fast.state is not _FastAnswer.IDLE
        return self.h11.our_state not in (h11.IDLE, h11.SEND_RESPONSE)


# ---- the site's side of a WebSocket handshake (`upgrade.py`) -------------------------------------

#: Bytes read from the site at a time while its answer to a handshake is awaited.
SITE_CHUNK = 64 * 1024


class UpgradeFailed(Exception):
    """The site's answer to the handshake was not HTTP (or came too late); nothing was sent yet."""


class SiteAnswer(NamedTuple):
    """The site's answer head to an upgrade request: a 101, or a final answer."""

    status: int
    reason: bytes
    headers: list[tuple[str, str]]


class SiteConnection:
    """HTTP/1.1 as a client to the site, for an upgrade request (`upgrade.py`): the handshake
    framed by h11, its answer head, and the body of a refusal."""

    def __init__(self) -> None:
        self.h11 = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_HEAD)

    def request(self, target: str, headers: list[tuple[str, str]]) -> bytes:
        """A GET without a body (the handshake), as bytes to write."""
        head = self.h11.send(h11.Request(method="GET", target=target, headers=headers)) or b""
        return head + (self.h11.send(h11.EndOfMessage()) or b"")

    async def answer(self, reader: asyncio.StreamReader, timeout: float) -> SiteAnswer:
        """The site's answer head: a 101, or a final answer (other interim answers are skipped);
        UpgradeFailed when it is not HTTP or does not come within `timeout` seconds."""
        try:
            async with asyncio.timeout(timeout):
                while True:
                    event = self.h11.next_event()
                    if event is h11.NEED_DATA:
                        self.h11.receive_data(await reader.read(SITE_CHUNK))
                        continue
                    if isinstance(event, h11.InformationalResponse) and event.status_code == 101:
                        return _site_answer(event)
                    if isinstance(event, h11.Response):
                        return _site_answer(event)
                    if isinstance(event, h11.ConnectionClosed):
                        raise UpgradeFailed("the site closed the connection")
        except h11.RemoteProtocolError as exc:
            raise UpgradeFailed(f"the site's answer is not HTTP: {exc}") from None
        except TimeoutError:
            raise UpgradeFailed("the site did not answer the upgrade in time") from None

    async def body(self, reader: asyncio.StreamReader, timeout: float, limit: int) -> bytes:
        """The body of a refused upgrade, at most `limit` bytes (the rest is dropped)."""
        parts: list[bytes] = []
        size = 0
        with contextlib.suppress(h11.RemoteProtocolError, TimeoutError, ConnectionError):
            async with asyncio.timeout(timeout):
                while size < limit:
                    event = self.h11.next_event()
                    if event is h11.NEED_DATA:
                        self.h11.receive_data(await reader.read(SITE_CHUNK))
                    elif isinstance(event, h11.Data):
                        parts.append(bytes(event.data))
                        size += len(event.data)
                    else:
                        break
        return b"".join(parts)[:limit]

    @property
    def trailing_data(self) -> bytes:
        """What the site sent after its 101 (the first frames), to be passed on as bytes."""
        return bytes(self.h11.trailing_data[0])


def _site_answer(event: h11.Response | h11.InformationalResponse) -> SiteAnswer:
    headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in event.headers.raw_items()]
    return SiteAnswer(event.status_code, event.reason, headers)
