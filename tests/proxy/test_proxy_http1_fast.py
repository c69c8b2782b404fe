"""The fast path of `proxy/http1.py` against h11's path.

Every request head below is read twice, by a `ClientConnection` with the fast path and by one
without it (every head through h11, as before), and must give the same answer: the same head or the
same refusal (status and message), the same `Request` or `BadRequest` from it, and the same bytes
left unread for the next request. The heads are the common ones the fast path takes and the unusual
and hostile ones it must leave to h11 (the smuggling cases of `test_attacks_proxy.py` among them).

Every answer is framed twice too, by the fast path (by h11's rules) and by h11, and must give the
same bytes, the same errors at the same step, and the same decision to keep the connection.
"""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass
from typing import Any

import h11
import pytest

from readerproxy.proxy.flow import (
    MAX_HEAD,
    MAX_HEADERS,
    MAX_REQUEST_LINE,
    BadRequest,
    RequestHead,
    request_from_head,
)
from readerproxy.proxy.http1 import ClientConnection, parse_fast

T = b"http://news.test:8080/page?q=1"
COMMON = (
    b"Host: news.test:8080\r\nUser-Agent: Mozilla/5.0 (X11; Linux x86_64)\r\n"
    b"Accept: text/html,application/xhtml+xml,*/*;q=0.8\r\nAccept-Encoding: gzip, br\r\n"
    b"Cookie: a=1; b=2\r\nProxy-Connection: keep-alive\r\n"
)


def head(*fields: bytes, line: bytes = b"GET " + T + b" HTTP/1.1") -> bytes:
    return line + b"\r\n" + b"".join(field + b"\r\n" for field in fields) + b"\r\n"


#: Heads the fast path takes (checked: `test_the_common_heads_take_the_fast_path`).
FAST = [
    head(b"Host: news.test"),
    b"GET " + T + b" HTTP/1.1\r\n" + COMMON + b"\r\n",
    head(b"Host: news.test", b"Connection: close"),
    head(b"Host: news.test", b"Connection: keep-alive, close"),
    head(b"Host: news.test", b"Connection: Keep-Alive"),
    head(b"host: news.test", b"X-Empty:", b"X-Spaces:   a  b\t ", b"X-Tab:\tv"),
    head(b"Host: news.test", line=b"GET " + T + b" HTTP/1.0"),
    head(b"Host: news.test", b"Connection: keep-alive", line=b"GET " + T + b" HTTP/1.0"),
    head(b"Host: news.test", line=b"HEAD " + T + b" HTTP/1.1"),
    head(b"Host: news.test", line=b"DELETE " + T + b" HTTP/1.1"),
    head(b"Host: news.test", line=b"OPTIONS * HTTP/1.1"),
    head(b"Host: news.test", line=b"GET /relative HTTP/1.1"),  # refused by the proxy (400), alike
    head(b"Host: x", line=b"GET http://[::1/ HTTP/1.1"),
    head(b"Host: x", line=b"GET http://u@news.test/ HTTP/1.1"),
    head(b"Host: x", line=b"GET http://news.test:99999/ HTTP/1.1"),
    head(b"Host: x", line=b"GET http://-lead.test/ HTTP/1.1"),
    head(b"Host: x", line=b"GET https://news.test/ HTTP/1.1"),
    head(b"Host: x", line=b"GET ftp://news.test/ HTTP/1.1"),
    head(b"Host: x", line=b"GET ws://news.test/chat HTTP/1.1"),
    head(b"Host: x", line=b"GET http://a_b.test/ HTTP/1.1"),
    head(b"Host: x", line=b"GET http://news.test/caf%C3%A9 HTTP/1.1"),
    head(b"Host: x", b"X-Latin: caf\xe9", b"X-Utf8: caf\xc3\xa9"),
    head(b"Host: x", b"Proxy-Authorization: Basic dTpw"),
    head(b"Host: x", b"Connection: Upgrade"),  # no Upgrade field: no switch for h11 either
    head(b"Host: x", b"Transfer-Encodings: chunked", b"Content-Lengths: 4"),
    head(b"Host: x", *(b"X-%d: v" % i for i in range(MAX_HEADERS - 1))),
    head(  # a browser's navigation
        b"Host: news.test",
        b"User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0",
        b"Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
        b"Accept-Language: en-US,en;q=0.5",
        b"Accept-Encoding: gzip, deflate, br, zstd",
        b"Connection: keep-alive",
        b"Referer: http://news.test/",
        b"Cookie: session=abcdef0123; prefs=dark;  _ga=GA1.2.12\t34 ",
        b"Upgrade-Insecure-Requests: 1",
        b"Sec-Fetch-Dest: document",
        b"Priority: u=0, i",
        b"X-Colon: a:b: c",
        b"X-Empty-Spaces: \t ",
    ),
]

#: Heads the fast path leaves to h11, which accepts or refuses them as before.
SLOW = [
    # bodies, waits and switches: h11's
    head(b"Host: news.test", b"Content-Length: 0"),
    head(b"Host: news.test", b"Content-Length: 4", line=b"POST " + T + b" HTTP/1.1"),
    head(b"Host: news.test", b"Transfer-Encoding: chunked", line=b"POST " + T + b" HTTP/1.1"),
    head(b"Host: news.test", b"Expect: 100-continue"),
    head(b"Host: news.test", b"Upgrade: websocket", b"Connection: Upgrade"),
    head(b"Host: news.test", b"Upgrade:"),
    head(b"Host: news.test:443", line=b"CONNECT news.test:443 HTTP/1.1"),
    head(line=b"CONNECT news.test:443 HTTP/1.1"),
    # the smuggling and framing cases (`test_attacks_proxy.py`)
    head(b"Host: x", b"Content-Length: \xb2"),
    head(b"Host: x", b"Content-Length: \xc3\xb2"),
    head(b"Host: x", b"Content-Length: 4x"),
    head(b"Host: x", b"Content-Length: -4"),
    head(b"Host: x", b"Content-Length: 4", b"Content-Length: 5"),
    head(b"Host: x", b"Content-Length: 4, 4"),
    head(b"Host: x", b"Content-Length: 4", b"Transfer-Encoding: chunked"),
    head(b"Host: x", b"Transfer-Encoding: gzip, chunked"),
    head(b"Host: x", b"Transfer-Encoding: chunked", b"Transfer-Encoding: chunked"),
    head(b"Host: x", b"Transfer-Encoding : chunked"),
    head(b"Host: x", b" Transfer-Encoding: chunked"),
    head(b"Host: x", b"X: a", b" Transfer-Encoding: chunked"),  # obs-fold
    head(b"Host: x", b"X: a", b"\tfolded"),
    head(b"Host: x", b"X-Control: a\x01b"),
    head(b"Host: x", b"X-Control: a\x7fb"),
    head(b"Host: x", b"X-Null: a\x00b"),
    head(b"Host: x", b"X-CR: a\rb"),
    head(b"Host: x", b"Bad Name: x"),
    head(b"Host: x", b"Bad\x00Name: x"),
    head(b"Host: x", b": no name"),
    head(b"Host: x", b"NoColon"),
    # the request line
    b"NONSENSE\r\n\r\n",
    head(b"Host: x", line=b"GET " + T + b" HTTP/2.0"),
    head(b"Host: x", line=b"GET " + T + b" HTTP/1.2"),
    head(b"Host: x", line=b"GET " + T + b" http/1.1"),
    head(b"Host: x", line=b"GET " + T + b" HTTP/1.1 "),
    head(b"Host: x", line=b"GET  " + T + b" HTTP/1.1"),
    head(b"Host: x", line=b"GET " + T + b"\tHTTP/1.1"),
    head(b"Host: x", line=b"G(T " + T + b" HTTP/1.1"),
    head(b"Host: x", line=b"GET http://news.test/caf\xe9 HTTP/1.1"),
    head(b"Host: x", line=b"GET http://news.test/a\x7f HTTP/1.1"),
    head(b"Host: x", line=b" GET " + T + b" HTTP/1.1"),
    head(b"Host: x", line=b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03"),
    # Host: none, two, or only the target's
    head(),
    head(line=b"GET " + T + b" HTTP/1.0"),
    head(b"Host: a", b"Host: b"),
    head(b"Host: a", b"host: a"),
    # line ends other than CRLF
    b"GET " + T + b" HTTP/1.1\nHost: x\n\n",
    b"GET " + T + b" HTTP/1.1\r\nHost: x\n\r\n",
    b"GET " + T + b" HTTP/1.1\r\nHost: x\r\n\n",
    b"GET " + T + b" HTTP/1.1\r\nHost: x\n\nX: after\r\n\r\n",
    b"GET " + T + b" HTTP/1.1\r\nHost: x\r\r\n\r\n",
    b"GET " + T + b" HTTP/1.1\nHost: x\r\n\r\n",
    # stray empty lines before a request (RFC 9112 §2.2), and sizes at the limits
    head(b"Host: x", *(b"X-%d: v" % i for i in range(MAX_HEADERS))),
    head(b"Host: x", *(b"X-%d: v" % i for i in range(MAX_HEADERS + 1))),
    head(b"Host: x", b"X-Long: " + b"a" * MAX_HEAD),
    head(b"Host: x", line=b"GET http://news.test/" + b"a" * MAX_REQUEST_LINE + b" HTTP/1.1"),
    # incomplete
    b"GET " + T + b" HTTP/1.1\r\nHost: x\r\n",
    b"GET " + T,
    b"",
]

#: Heads either path may read (the fast path after stray empty lines, or up to the limits).
EITHER = [
    b"\r\n\r\n" + head(b"Host: x"),
    b"\n" + head(b"Host: x"),
    head(b"Host: x", b"X-Long: " + b"a" * (MAX_HEAD - 200)),
    head(b"Host: x", b"X-Long: " + b"a" * (MAX_HEAD - 200), b"Content-Length: 0"),
]

AFTER = b"GET http://next.test/ HTTP/1.1\r\nHost: next.test\r\n\r\n"


@dataclass
class _Writer:
    """Just enough of an asyncio.StreamWriter: what was written, in writes."""

    def __post_init__(self) -> None:
        self.writes: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.writes.append(bytes(data))

    async def drain(self) -> None:
        return None

    def is_closing(self) -> bool:
        return False

    def can_write_eof(self) -> bool:
        return False

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return default


def _connection(data: bytes, fast: bool, *, eof: bool = True) -> tuple[ClientConnection, _Writer]:
    reader = asyncio.StreamReader(limit=MAX_HEAD)
    reader.feed_data(data)
    if eof:
        reader.feed_eof()
    writer = _Writer()
    conn = ClientConnection(reader, writer)  # type: ignore[arg-type]
    conn.fast_heads = fast
    return conn, writer


def _request(result: Any) -> Any:
    """What the proxy makes of a head: a Request, or the BadRequest it answers."""
    if not isinstance(result, RequestHead):
        return result
    try:
        return request_from_head(result)
    except BadRequest as exc:
        return ("refused", exc.status, exc.message)


async def _read(data: bytes, fast: bool) -> tuple[Any, Any, bytes, bool]:
    conn, _ = _connection(data, fast)
    try:
        async with asyncio.timeout(2):
            result: Any = await conn.next_request()
    except BadRequest as exc:
        result = ("bad", exc.status, exc.message)
    left = await conn.reader.read()
    return result, _request(result), left + bytes(conn.h11.trailing_data[0]), conn._fast is not None


@pytest.mark.parametrize("data", FAST + SLOW + EITHER, ids=lambda data: repr(data[:60]))
@pytest.mark.parametrize("after", [b"", AFTER, b"\x16\x03\x01"])
async def test_the_fast_path_answers_as_h11_does(data: bytes, after: bytes) -> None:
    fast, fast_request, fast_left, took = await _read(data + after, True)
    slow, slow_request, slow_left, _ = await _read(data + after, False)
    assert fast == slow
    assert fast_request == slow_request
    assert fast_left == slow_left
    if took:  # what the fast path takes, h11 takes the same way
        assert isinstance(slow, RequestHead)


@pytest.mark.parametrize("data", FAST, ids=lambda data: repr(data[:60]))
async def test_the_common_heads_take_the_fast_path(data: bytes) -> None:
    *_, took = await _read(data, True)
    assert took, "left to h11"
    assert parse_fast(data) is not None


@pytest.mark.parametrize("data", SLOW, ids=lambda data: repr(data[:60]))
async def test_the_unusual_heads_are_left_to_h11(data: bytes) -> None:
    *_, took = await _read(data, True)
    assert not took


async def test_a_head_in_pieces_and_pipelined_heads() -> None:
    """A head not all here after its first line is read line by line by h11 as before; pipelined
    heads each take the fast path, with nothing read past each one's empty line."""
    data = head(b"Host: a") + head(b"Host: b", b"Connection: close")
    for fast in (True, False):
        conn, _ = _connection(data, fast)
        first = await conn.next_request()
        assert first is not None and first.fields == [(b"Host", b"a")]
        assert conn.reader._buffer == head(b"Host: b", b"Connection: close")  # type: ignore[attr-defined]
        await conn.send_response(200, "OK", [("Content-Length", "2")], b"ok")
        assert conn.next_cycle()
        second = await conn.next_request()
        assert second is not None and second.fields[0] == (b"Host", b"b")
        await conn.send_response(200, "OK", [("Content-Length", "2")], b"ok")
        assert not conn.next_cycle()  # Connection: close
    conn, _ = _connection(b"", True, eof=False)
    task = asyncio.ensure_future(conn.next_request())
    for piece in (b"GET " + T + b" HTTP/1.1\r\n", b"Host: a\r\n", b"\r\n"):
        await asyncio.sleep(0)
        conn.reader.feed_data(piece)
    got = await asyncio.wait_for(task, 2)
    assert got is not None and got.fields == [(b"Host", b"a")] and conn._fast is None


# ---- answers ------------------------------------------------------------------------------------

REQUESTS = [
    head(b"Host: x"),
    head(b"Host: x", b"Connection: close"),
    head(b"Host: x", line=b"HEAD " + T + b" HTTP/1.1"),
    head(b"Host: x", line=b"GET " + T + b" HTTP/1.0"),
    head(b"Host: x", b"Connection: keep-alive", line=b"HEAD " + T + b" HTTP/1.0"),
]
RESPONSES: list[tuple[int, str, list[tuple[str, str]]]] = [
    (200, "OK", [("Content-Type", "text/html"), ("Content-Length", "10"), ("Connection", "keep-alive")]),
    (200, "OK", [("Content-Length", "10"), ("Connection", "close")]),
    (200, "OK", [("Content-Type", "text/plain"), ("Connection", "keep-alive")]),  # unknown length
    (200, "OK", [("Transfer-Encoding", "chunked"), ("Content-Length", "10"), ("X", "y")]),
    (200, "OK", [("Transfer-Encoding", "Chunked")]),
    (200, "OK", [("Transfer-Encoding", "gzip")]),
    (200, "OK", [("Transfer-Encoding", "chunked"), ("Transfer-Encoding", "chunked")]),
    (200, "OK", [("Content-Length", "10, 10"), ("Content-Length", "10")]),
    (200, "OK", [("Content-Length", "10"), ("Content-Length", "11")]),
    (200, "OK", [("Content-Length", "1x")]),
    (200, "OK", [("Content-Length", "1" * 21)]),
    (200, "", [("Via", "1.1 a"), ("host", "h"), ("Content-Length", "10")]),
    (200, "OK", [("X-Space", " v"), ("Content-Length", "10")]),
    (200, "OK", [("X-Latin", "caf\u00e9"), ("Content-Length", "10")]),
    (200, "OK", [("Connection", "Keep-Alive, Foo"), ("Content-Length", "10")]),
    (204, "No Content", [("Content-Length", "10")]),
    (304, "Not Modified", [("Transfer-Encoding", "chunked")]),
    (404, "Not Found", [("Content-Length", "10"), ("Connection", "close")]),
    (200, "OK", [("X-Tab", "a\tb"), ("X-Empty", ""), ("Content-Length", " 10 ")]),
    (200, "OK", [("X-Trailing", "v "), ("Content-Length", "10")]),
    (200, "OK", [("X-NL", "v\n"), ("Content-Length", "10")]),
    (200, "OK", [("X-NL\n", "v"), ("Content-Length", "10")]),
    (200, "OK", [("Bad Name", "v"), ("X-Null", "a\x00b"), ("X-CR", "a\rb"), ("Content-Length", "10")]),
    (200, "OK", [("X-Odd", "a\x1cb"), ("Content-Length", "10\x1c")]),
    (200, "OK", [("Connection", "close\x1c"), ("Content-Length", "10")]),
    (200, "OK\x01", [("Content-Length", "10")]),
    (200, "Caf\u00e9", [("Content-Length", "10")]),
    # fields that are each plain, or hold a line end that would make two plain ones of them
    (200, "OK", [("Date", "Mon"), ("Server", "x"), ("Content-Type", "text/css"), ("Content-Length", "10")]),
    (200, "OK", [("X-Split", "a\nb"), ("Content-Length", "10")]),
    (200, "OK", [("X\nSplit", "a"), ("Content-Length", "10")]),
    (200, "OK", [("X-Split", "a\nB: b"), ("Content-Length", "10")]),
    (200, "OK", [("X-Split", "a\r\nB: b"), ("Content-Length", "10")]),
    (200, "OK", [("Connection", "Foo, CLOSE"), ("Content-Length", "10")]),
    (200, "OK", [("connection", "keep-alive"), ("Connection", "close"), ("Content-Length", "10")]),
    (200, "OK", [("X-A", "1"), ("Host", "h"), ("HOST", "i"), ("Content-Length", "10")]),
    (200, "OK", []),
    (101, "Switching Protocols", []),
    (999, "Odd", [("Content-Length", "0")]),
]
BODIES = [[b"0123456789"], [b"01234", b"", b"56789"], [b"012345678"], [b"0123456789", b"x"], []]


async def _answer(
    request: bytes, response: tuple[int, str, list[tuple[str, str]]], body: list[bytes], fast: bool
) -> list[Any]:
    """What each step of an answer gave: bytes written, errors, the connection's state."""
    conn, writer = _connection(request, fast)
    assert await conn.next_request() is not None
    assert (conn._fast is not None) == fast
    trace: list[Any] = []

    async def step(name: str, call: Any) -> None:
        try:
            await call
            trace.append((name, b"".join(writer.writes), conn.response_started))
        except Exception as exc:  # compared, whatever it is
            trace.append((name, type(exc).__name__, b"".join(writer.writes), conn.response_started))
        writer.writes.clear()

    status, reason, headers = response
    await step("head", conn.start_response(status, reason, headers, flush=False))
    for piece in body:
        await step("data", conn.send_data(piece, flush=False))
    await step("flush", conn.flush())
    await step("end", conn.end_response())
    trace.append(("next", conn.next_cycle()))
    return trace


@pytest.mark.parametrize("request_head", REQUESTS, ids=lambda data: repr(data[:24] + data[-30:]))
async def test_answers_are_framed_as_h11_frames_them(request_head: bytes) -> None:
    for response, body in itertools.product(RESPONSES, BODIES):
        fast = await _answer(request_head, response, body, True)
        slow = await _answer(request_head, response, body, False)
        assert fast == slow, (response, body)


@pytest.mark.parametrize("request_head", REQUESTS[:2] + REQUESTS[3:4], ids=["keep", "close", "1.0"])
async def test_whole_answers_continue_and_errors_as_h11(request_head: bytes) -> None:
    outcomes = []
    for fast in (True, False):
        conn, writer = _connection(request_head, fast)
        assert await conn.next_request() is not None
        await conn.send_continue()
        await conn.send_response(200, "OK", [("Content-Type", "text/plain")], b"hello")
        with pytest.raises(h11.LocalProtocolError):
            await conn.send_response(200, "OK", [], b"again")
        outcomes.append((b"".join(writer.writes), conn.response_started, conn.expects_continue()))
        assert [piece async for piece in conn.body(10)] == []
    assert outcomes[0] == outcomes[1]
