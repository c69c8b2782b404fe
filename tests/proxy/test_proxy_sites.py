"""The proxy's own keep-alive connections to sites (`proxy/sites.py`).

A plain GET or HEAD to an http:// site goes out on a connection the proxy keeps per (host, port)
instead of through aiohttp. Against a scripted site: bodies framed by Content-Length, chunked (in
pieces, with extensions and trailer fields) and by the connection's end come out whole; the
connection is kept only after an answer read to its end that allows it; a kept connection the
site closed is replaced once; a body cut short or malformed is the error aiohttp gave; heads and
framings it does not read, and requests it does not send, are `Unsupported` (aiohttp's, as before).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

import aiohttp
import pytest
from support.upstream import Upstream
from test_proxy import RunningProxy, running_proxy, site

from readerproxy.proxy import sites
from readerproxy.proxy.sites import SitePool, SiteResponse, Unsupported

Answer = Callable[[bytes], list[bytes | None]]  # a request head -> bytes to write; None: close


@dataclass
class Site:
    """A site that answers each request head with what `answer` gives."""

    answer: Answer
    connections: int = 0
    requests: list[bytes] = field(default_factory=list)
    server: asyncio.Server | None = None

    @property
    def port(self) -> int:
        assert self.server is not None
        return int(self.server.sockets[0].getsockname()[1])

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                self.requests.append(head)
                for piece in self.answer(head):
                    if piece is None:
                        writer.close()
                        return
                    writer.write(piece)
                    await writer.drain()
                    await asyncio.sleep(0)
        finally:
            writer.close()


async def _site(answer: Answer) -> Site:
    served = Site(answer)
    served.server = await asyncio.start_server(served.serve, "127.0.0.1", 0)
    return served


async def _connect(host: str, port: int) -> str:
    return "127.0.0.1"


def _pool(read_timeout: float = 5.0) -> SitePool:
    return SitePool(_connect, 5.0, read_timeout)


async def _get(
    pool: SitePool, served: Site, method: str = "GET", path: str = "/"
) -> tuple[SiteResponse, bytes]:
    response = await pool.fetch(method, "site.test", served.port, path, [("Accept", "*/*")])
    try:
        body = b"".join([chunk async for chunk in response.content.iter_any()])
    finally:
        response.release()
    return response, body


def _length(body: bytes, *extra: bytes) -> list[bytes | None]:
    return [b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n" % len(body) + b"".join(extra) + b"\r\n" + body]


@pytest.fixture
async def pool() -> AsyncIterator[SitePool]:
    made = _pool()
    yield made
    made.close()


async def test_a_length_framed_answer_and_its_connection_kept(pool: SitePool) -> None:
    served = await _site(lambda head: _length(b"x" * 100_000))
    for _ in range(3):
        response, body = await _get(pool, served)
        assert response.status == 200 and response.reason == "OK" and body == b"x" * 100_000
        assert (b"Content-Length", b"100000") in response.raw_headers
    assert served.connections == 1 and len(served.requests) == 3
    assert served.requests[0].startswith(
        b"GET / HTTP/1.1\r\nHost: site.test:%d\r\nAccept: */*\r\n" % served.port
    )


async def test_a_chunked_answer_in_one_byte_pieces(pool: SitePool) -> None:
    wire = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4;ext=1\r\nabcd\r\nA \r\n0123456789\r\n0\r\nX-T: 1\r\n\r\n"
    served = await _site(lambda head: [wire[i : i + 1] for i in range(len(wire))])
    for _ in range(2):
        _, body = await _get(pool, served)
        assert body == b"abcd0123456789"
    assert served.connections == 1


async def test_a_body_to_the_end_of_the_connection(pool: SitePool) -> None:
    served = await _site(
        lambda head: [b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil ", b"close", None]
    )
    for _ in range(2):
        _, body = await _get(pool, served)
        assert body == b"until close"
    assert served.connections == 2  # never kept


async def test_head_204_and_304_have_no_body_and_keep_the_connection(pool: SitePool) -> None:
    answers = {
        b"HEAD": b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n",
        b"GET /204": b"HTTP/1.1 204 No Content\r\n\r\n",
        b"GET /304": b"HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\n",
    }
    served = await _site(lambda head: [next(v for k, v in answers.items() if head.startswith(k))])
    for method, path in (("HEAD", "/"), ("GET", "/204"), ("GET", "/304"), ("HEAD", "/")):
        response, body = await _get(pool, served, method, path)
        assert body == b"" and response.status in (200, 204, 304)
    assert served.connections == 1


@pytest.mark.parametrize(
    "wire",
    [
        b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nab",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabcd\r\n0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-4\r\nabcd\r\n0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nabcdXY0\r\n\r\n",
    ],
    ids=["short", "chunk cut", "bad size", "negative size", "no CRLF after data"],
)
async def test_a_body_cut_short_or_malformed_is_a_payload_error(pool: SitePool, wire: bytes) -> None:
    served = await _site(lambda head: [wire, None])
    with pytest.raises(aiohttp.ClientPayloadError):
        await _get(pool, served)
    assert pool._count == {} and pool._idle.get(("site.test", served.port), []) == []


@pytest.mark.parametrize(
    "wire",
    [
        b"HTTP/1.1 200 OK\r\nX: a\r\n folded\r\nContent-Length: 0\r\n\r\n",  # obs-fold
        b"HTTP/1.1 200 OK\nContent-Length: 0\n\n",  # bare LF
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok",
        b"HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\n\r\nok",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n",
        b"HTTP/2 200\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nBad Name: x\r\nContent-Length: 0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nX: a\x00b\r\nContent-Length: 0\r\n\r\n",
    ],
)
async def test_answers_not_read_here_are_left_to_aiohttp(pool: SitePool, wire: bytes) -> None:
    served = await _site(lambda head: [wire])
    with pytest.raises(Unsupported):
        await _get(pool, served)
    assert pool._count == {}


async def test_a_kept_connection_the_site_closed_is_replaced_once(pool: SitePool) -> None:
    served = await _site(lambda head: [*_length(b"ok"), None])  # keep-alive said, then closed
    for _ in range(3):
        _, body = await _get(pool, served)
        assert body == b"ok"
        await asyncio.sleep(0.05)
    assert served.connections == 3


async def test_a_site_that_closes_without_answering(pool: SitePool) -> None:
    served = await _site(lambda head: [None])
    with pytest.raises(aiohttp.ServerDisconnectedError):
        await _get(pool, served)


async def test_no_answer_is_a_read_timeout() -> None:
    pool = _pool(read_timeout=0.2)
    served = await _site(lambda head: [])
    with pytest.raises(TimeoutError):
        await _get(pool, served)
    assert pool._count == {}
    pool.close()


async def test_idle_connections_are_closed(monkeypatch: pytest.MonkeyPatch, pool: SitePool) -> None:
    monkeypatch.setattr(sites, "IDLE_SECONDS", 0.1)
    served = await _site(lambda head: _length(b"ok"))
    await _get(pool, served)
    assert pool._count == {("site.test", served.port): 1}
    await asyncio.sleep(0.4)
    assert pool._count == {} and not any(pool._idle.values())


async def test_bytes_on_an_idle_connection_close_it(pool: SitePool) -> None:
    served = await _site(lambda head: [*_length(b"ok"), b"HTTP/1.1 200 OK\r\n"])
    await _get(pool, served)
    await asyncio.sleep(0.05)
    assert pool._count == {}
    _, body = await _get(pool, served)
    assert body == b"ok" and served.connections == 2


async def test_reading_pauses_until_the_body_is_taken(pool: SitePool) -> None:
    body = bytes(range(256)) * 8192  # 2 MB
    served = await _site(lambda head: _length(body))
    response = await pool.fetch("GET", "site.test", served.port, "/", [])
    await asyncio.sleep(0.2)
    site = response._site
    assert site.paused and site.buffered <= sites.HIGH_WATER + 256 * 1024
    got = [response.content.read_nowait(-1)]
    got += [chunk async for chunk in response.content.iter_any()]
    response.release()
    assert b"".join(got) == body
    assert pool._count == {("site.test", served.port): 1}  # read to its end: kept


async def test_the_connections_are_bounded(pool: SitePool) -> None:
    served = await _site(lambda head: _length(b"ok"))
    pool._count[("site.test", served.port)] = sites.PER_HOST
    with pytest.raises(Unsupported):
        await pool.fetch("GET", "site.test", served.port, "/", [])
    assert served.requests == []  # nothing sent: aiohttp's, whose own limit then applies
    pool._count.clear()
    pool._total = sites.TOTAL
    with pytest.raises(Unsupported):
        await pool.fetch("GET", "site.test", served.port, "/", [])
    pool._total = 0
    _, body = await _get(pool, served)
    assert body == b"ok" and pool._total == 1


@pytest.mark.parametrize(
    ("method", "host", "path", "takes"),
    [
        ("GET", "news.test", "/a/b?c=d&e=f;g", True),
        ("HEAD", "news.test", "/", True),
        ("POST", "news.test", "/", False),
        ("GET", "news.test", "/caf%C3%A9", False),  # requoted by aiohttp's URL
        ("GET", "news.test", "/a/../b", False),
        ("GET", "news.test", "/a/./b", False),
        ("GET", "news.test", "/a b", False),
        ("GET", "news.test", "/a?b=c d", False),
        ("GET", "xn--caf-dma.test", "/", True),
        ("GET", "café.test", "/", False),
    ],
)
def test_what_the_pool_sends(method: str, host: str, path: str, takes: bool) -> None:
    assert SitePool.takes(method, "http", host, path) is takes
    assert not SitePool.takes(method, "https", host, path)


# ---- through the proxy ----------------------------------------------------------------------------


async def test_pass_through_on_kept_connections(upstream: Upstream) -> None:
    async with running_proxy() as proxy:
        await _through(proxy, upstream)


async def _through(proxy: RunningProxy, upstream: Upstream) -> None:
    sites = proxy.proxy.sites
    assert sites is not None
    async with aiohttp.ClientSession() as http:
        async with http.get(upstream.url("/generated/cost?kb=100")) as r:
            direct = await r.read()
        for _ in range(3):
            async with http.get(site(upstream, "/generated/cost?kb=100"), proxy=proxy.url) as r:
                assert r.status == 200 and await r.read() == direct
                assert r.headers["Via"].endswith("1.1 readerproxy")
        assert sites._count == {("news.test", upstream.port): 1}
        async with http.get(site(upstream, "/chunked"), proxy=proxy.url) as r:
            assert r.headers.get("Transfer-Encoding") == "chunked"
            assert "The Upstream Test Article" in await r.text()
        async with http.get(site(upstream, "/echo?x=caf%C3%A9"), proxy=proxy.url) as r:
            assert r.status == 200  # requoted: through aiohttp, as before
        async with http.get(site(upstream, "/echo"), proxy=proxy.url, headers={"X-Test": "1"}) as r:
            echoed = await r.text()
            assert "X-Test" in echoed and "1.1 readerproxy" in echoed
