"""Proxy pass-through, 2026-11-26: what the throughput work changed keeps the proxy's behaviour.

A small answer leaves in one write (head, body and end together) while a body still to come never
holds its head back; request heads are read as before when pipelined, split across packets or sent
with stray CRLFs; a navigation to a page that was no article is not extracted again for the same
bytes, and is extracted again when the bytes, the URL or the site rule differ.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from support.upstream import Upstream
from test_proxy import HTML_ACCEPT, RunningProxy, raw, running_proxy, site

from readerproxy.proxy.http1 import ClientConnection
from readerproxy.web.server import READER


class _Writer:
    """Just enough of an asyncio.StreamWriter to count writes."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.writes.append(bytes(data))

    async def drain(self) -> None:
        return None


async def _connection(request: bytes) -> tuple[ClientConnection, _Writer]:
    reader = asyncio.StreamReader()
    reader.feed_data(request)
    writer = _Writer()
    conn = ClientConnection(reader, writer)  # type: ignore[arg-type]
    assert await conn.next_request() is not None
    return conn, writer


async def test_small_answer_is_one_write() -> None:
    conn, writer = await _connection(b"GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n")
    await conn.send_response(200, "OK", [("Content-Length", "5")], b"hello")
    assert len(writer.writes) == 1
    assert writer.writes[0].startswith(b"HTTP/1.1 200 OK\r\n") and writer.writes[0].endswith(b"\r\n\r\nhello")


async def test_held_head_goes_out_on_flush_before_the_body() -> None:
    conn, writer = await _connection(b"GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n")
    await conn.start_response(200, "OK", [("Content-Length", "5")], flush=False)
    await conn.send_data(b"", flush=False)
    assert writer.writes == []
    await conn.flush()  # the body is still to come: the head must not wait for it
    assert len(writer.writes) == 1 and writer.writes[0].endswith(b"\r\n\r\n")
    await conn.send_data(b"hello")
    await conn.end_response()
    assert writer.writes[1:] == [b"hello"]


async def test_pipelined_split_and_padded_heads(upstream: Upstream) -> None:
    async with running_proxy() as proxy:
        one = f"GET {site(upstream, '/binary')} HTTP/1.1\r\nHost: news.test\r\n\r\n".encode()
        last = f"GET {site(upstream, '/plain')} HTTP/1.1\r\nHost: news.test\r\nConnection: close\r\n\r\n"
        answer = await raw(proxy, b"\r\n" + one + one + last.encode())  # pipelined, a stray CRLF first
        assert answer.count(b"HTTP/1.1 200 OK\r\n") == 3
        reader, writer = await asyncio.open_connection("127.0.0.1", proxy.proxy.port)
        try:
            for piece in (last[:7], last[7:40], last[40:-3], last[-3:]):  # split mid-line and mid-CRLF
                writer.write(piece.encode())
                await writer.drain()
                await asyncio.sleep(0.05)
            data = await asyncio.wait_for(reader.read(-1), 5)
        finally:
            writer.close()
        assert data.startswith(b"HTTP/1.1 200 OK\r\n") and b"</html>" in data


def _count_extractions(proxy: RunningProxy, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    assert proxy.server.app is not None
    reader = proxy.server.app[READER]
    calls: list[str] = []
    original = reader.extract_bytes

    async def counted(body: Any, url: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(str(url))
        return await original(body, url, *args, **kwargs)

    monkeypatch.setattr(reader, "extract_bytes", counted)
    return calls


async def _navigate(proxy: RunningProxy, url: str) -> bytes:
    head = f"GET {url} HTTP/1.1\r\nHost: news.test\r\nAccept: {HTML_ACCEPT}\r\nConnection: close\r\n\r\n"
    return await raw(proxy, head.encode())


async def test_no_article_is_not_extracted_twice_for_the_same_bytes(
    upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with running_proxy() as proxy:
        calls = _count_extractions(proxy, monkeypatch)
        first = await _navigate(proxy, site(upstream, "/plain"))
        second = await _navigate(proxy, site(upstream, "/plain"))
        assert len(calls) == 1
        assert first.startswith(b"HTTP/1.1 200 OK") and b"X-Readerproxy" not in first
        assert first.partition(b"\r\n\r\n")[2] == second.partition(b"\r\n\r\n")[2]
        await _navigate(proxy, site(upstream, "/plain?other=1"))  # another URL: decided anew
        assert len(calls) == 2


async def test_always_rule_is_decided_apart(upstream: Upstream, monkeypatch: pytest.MonkeyPatch) -> None:
    async with running_proxy() as proxy:
        calls = _count_extractions(proxy, monkeypatch)
        await _navigate(proxy, site(upstream, "/plain"))
        await _navigate(proxy, site(upstream, "/plain?readerproxy-reader=1"))  # the reader view asked
        assert len(calls) == 2


# ---- the pass-through's header work in one pass (2026-12-07) --------------------------------------

HEADER_CASES: list[list[tuple[str, str]]] = [
    [],
    [("Host", "news.test"), ("Accept", "*/*")],
    [("Host", "h"), ("Connection", "keep-alive, X-Drop"), ("x-drop", "1"), ("X-Keep", "2")],
    [("Via", "1.0 a"), ("VIA", "1.1 b"), ("Accept-Encoding", "gzip, zstd"), ("Expect", "100-continue")],
    [("Connection", "via"), ("Via", "1.0 a"), ("Proxy-Connection", "keep-alive"), ("TE", "trailers")],
    [("Transfer-Encoding", "chunked"), ("Content-Length", "10"), ("content-length", "10"), ("X", "y")],
    [("Connection", "Content-Length"), ("Content-Length", "3"), ("Upgrade", "h2c"), ("Keep-Alive", "5")],
    [("Proxy-Authorization", "Basic x"), ("Trailer", "X"), ("X-Readerproxy-Client", "1.2.3.4")],
    [("Connection", " , Host ,"), ("Host", "h"), ("Cookie", "a=1")],
]


@pytest.mark.parametrize("headers", HEADER_CASES)
def test_one_pass_headers_are_the_composed_ones(headers: list[tuple[str, str]]) -> None:
    """`_site_headers` and `_passed_headers` give what `with_via(end_to_end(...))` and the filters
    after it gave, field for field and in order."""
    from readerproxy.proxy.flow import end_to_end, with_via
    from readerproxy.proxy.server import _CLIENT_HEADER, _passed_headers, _site_headers

    to_site = [
        (k, v)
        for k, v in with_via(end_to_end(headers))
        if k.lower() not in ("host", "expect", "accept-encoding", _CLIENT_HEADER)
    ]
    assert _site_headers(headers) == to_site
    passed = with_via(end_to_end(headers))
    if any(k.lower() == "transfer-encoding" for k, _ in headers):
        passed = [(k, v) for k, v in passed if k.lower() != "content-length"]
    assert _passed_headers(headers) == passed


def test_only_the_hooks_an_addon_has_are_called() -> None:
    """`_hooks`: an addon's own hook (defined in its class or set on it) is called, `Addon`'s no-op
    is left out, in the addons' order."""
    from readerproxy.proxy.addons import Addon
    from readerproxy.proxy.server import _addon_name, _hooks

    class Requests(Addon):
        async def request(self, flow: Any) -> None:
            return None

    class Inherits(Requests):
        pass

    first, plain, second, patched = Requests(), Addon(), Inherits(), Addon()

    async def done(flow: Any) -> None:
        return None

    patched.done = done  # type: ignore[method-assign]
    addons = [first, plain, second, patched]
    assert [getattr(hook, "__self__", None) for hook in _hooks(addons, "request")] == [first, second]
    assert _hooks(addons, "response_headers") == []
    assert _hooks(addons, "done") == [done]
    assert [_addon_name(hook) for hook in _hooks(addons, "request")] == ["Requests", "Inherits"]
