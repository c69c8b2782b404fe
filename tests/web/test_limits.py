"""Limits: the per-client token bucket, fetch slots timed apart from the site, HEAD without a fetch,
empty upstreams, protocol-level errors with security headers, the request-header timeout."""

from __future__ import annotations

import asyncio
import dataclasses
import socket
import time

import aiohttp
import pytest
from support.reader_server import TEST_FETCH, serve, serve_process, test_settings
from support.upstream import Upstream

from readerproxy.web.limits import Busy, FetchSlots, RateLimited, RateLimiter


def test_token_bucket_allows_a_burst_then_refuses_with_retry_after() -> None:
    now = [0.0]
    limiter = RateLimiter(rate=2.0, burst=3, clock=lambda: now[0])
    for _ in range(3):
        limiter.take("a")
    with pytest.raises(RateLimited) as caught:
        limiter.take("a")
    assert caught.value.status == 429 and caught.value.retry_after == 1
    limiter.take("b")  # another client has its own bucket
    now[0] = 0.5
    limiter.take("a")  # one token back after 1/rate seconds


def test_the_table_of_clients_is_bounded() -> None:
    limiter = RateLimiter(rate=1.0, burst=1, max_clients=100)
    for i in range(10_000):
        limiter.take(f"10.0.{i // 256}.{i % 256}")
    assert len(limiter) == 100


def test_a_zero_rate_is_no_limit() -> None:
    limiter = RateLimiter(rate=0, burst=1)
    for _ in range(1000):
        limiter.take("a")


async def test_fetch_slots_cap_per_host_and_time_the_queue_apart() -> None:
    slots = FetchSlots(max_total=10, max_per_host=2, queue_timeout=0.3)
    held = [slots.slot("a.example") for _ in range(2)]
    for cm in held:
        await cm.__aenter__()
    assert slots.active == 2
    async with slots.slot("b.example"):  # another host is not held up
        pass
    began = time.monotonic()
    with pytest.raises(Busy) as caught:
        async with slots.slot("a.example"):
            pass
    # waited its queue_timeout, then gave up on its own: the slots it waited for are still held
    assert time.monotonic() - began > 0.25
    assert slots.active == 2
    assert (
        caught.value.status == 503
        and "this site" in caught.value.message
        and "not contacted" in caught.value.message
    )
    for cm in held:
        await cm.__aexit__(None, None, None)
    assert slots.active == 0 and not slots._hosts


async def test_a_burst_to_one_site_queues_instead_of_timing_out(
    http: aiohttp.ClientSession, upstream: Upstream
) -> None:
    """100 distinct URLs at once on one site answering in 0.5 s, 8 connections per host, a 2 s connect
    timeout: the wait for a connection is not the site's timeout, so every read succeeds."""
    fetch = dataclasses.replace(TEST_FETCH, total_timeout=5.0, queue_timeout=30.0)
    async with serve(test_settings(fetch=fetch, rate_limit=0)) as server:
        targets = [upstream.url(f"/counter/burst-{i}?delay=0.5") for i in range(100)]

        async def one(target: str) -> int:
            async with http.get(server.url("/api/extract", url=target)) as response:
                await response.read()
                return response.status

        statuses = await asyncio.gather(*(one(t) for t in targets))
    assert statuses.count(200) == 100, sorted(set(statuses))


async def test_rate_limit_answers_429_with_retry_after(
    http: aiohttp.ClientSession, upstream: Upstream
) -> None:
    async with serve(test_settings(rate_limit=1.0, rate_burst=3)) as server:
        statuses = []
        for _ in range(5):
            async with http.get(server.url("/api/extract", url=upstream.url("/article"))) as response:
                statuses.append(response.status)
                if response.status == 429:
                    assert int(response.headers["Retry-After"]) >= 1
                    assert (await response.json())["error"]["kind"] == "rate_limited"
        async with http.get(server.url("/healthz")) as response:
            assert response.status == 200  # health and metrics are not limited
        async with http.get(server.url("/metrics")) as response:
            assert "readerproxy_rate_limited_total 2.0" in await response.text()
    assert statuses == [200, 200, 200, 429, 429]


async def test_head_read_does_not_fetch(http: aiohttp.ClientSession, upstream: Upstream) -> None:
    async with serve(test_settings()) as server:
        async with http.head(server.read_url(upstream.url("/counter/head-only"))) as response:
            assert response.status == 200 and response.content_type == "text/html"
        async with http.head(server.read_url("javascript:alert(1)")) as response:
            assert response.status == 400
    assert upstream.count("/counter/head-only") == 0


@pytest.mark.parametrize("route", ["/empty", "/no-content"])
async def test_an_empty_page_is_an_error_saying_so(
    http: aiohttp.ClientSession, upstream: Upstream, route: str
) -> None:
    async with serve(test_settings()) as server:
        async with http.get(server.url("/api/extract", url=upstream.url(route))) as response:
            error = (await response.json())["error"]
        assert response.status == 502 and error["kind"] == "empty" and "no content" in error["message"]
        async with http.get(server.read_url(upstream.url(route))) as response:
            assert response.status == 502 and "The page has no content" in await response.text()


@pytest.mark.parametrize(
    ("route", "kind", "words"),
    [
        ("/reset-mid-body", "upstream", "could not be read"),
        ("/slowloris?every=0.2&s=30", "timeout", "longer than 3 s"),
        ("/slow-body?s=30", "timeout", "stopped sending"),
    ],
)
async def test_upstream_faults_are_named(
    http: aiohttp.ClientSession, upstream: Upstream, route: str, kind: str, words: str
) -> None:
    # the stalling routes send for 30 s: a "timeout" naming the server's own 3 s limit was answered
    # before the site finished (had the server waited, the page would have been read whole)
    async with (
        serve(test_settings()) as server,
        http.get(server.url("/api/extract", url=upstream.url(route))) as response,
    ):
        error = (await response.json())["error"]
    assert error["kind"] == kind and words in error["message"], error


def _raw(port: int, data: bytes, wait: float = 5.0) -> tuple[bytes, bool]:
    """Send raw bytes, read until the server closes or `wait` seconds pass without a byte; the
    answer and whether the server closed the connection (False: this side's wait ran out)."""
    with socket.create_connection(("127.0.0.1", port), timeout=wait) as sock:
        sock.sendall(data)
        chunks = []
        try:
            while chunk := sock.recv(65536):
                chunks.append(chunk)
        except TimeoutError:
            return b"".join(chunks), False
        except ConnectionResetError:
            pass
    return b"".join(chunks), True


def test_protocol_errors_have_security_headers_and_header_reads_time_out() -> None:
    with serve_process("memory", "--header-timeout", "1") as server:
        port = int(server.base.rsplit(":", 1)[1])
        answer, _ = _raw(port, b"GET /" + b"a" * 20_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n")
        head = answer.split(b"\r\n\r\n", 1)[0].decode("latin-1")
        assert head.split(" ")[1] in ("400", "414"), head
        assert "Content-Security-Policy:" in head and "X-Content-Type-Options: nosniff" in head
        assert "Traceback" not in answer.decode("latin-1")
        # half-sent headers: closed by the server after its header timeout (1 s), while this side
        # still waits (up to 30 s of silence, thirty times the header timeout)
        answer, closed = _raw(port, b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ", wait=30)
        assert answer == b"" and closed
