"""Posted bodies bounded per client and in all, and memory given back after them.

Sixty 9 MB `POST /api/extract` from one address took the server from 163 to 1,345 MB, and it stayed
there. Here, on loopback with a 1 MiB cap (`[fetch] max_bytes`):

- a client's second large post while its first is still being read is a 429 with Retry-After at
  once, its body unread; another address is served meanwhile, and the first post is answered;
- a post whose Content-Length is over the cap is a 413 before its body is sent;
- a finished extraction leaves no garbage cycle holding its result (the client watch of
  `Reader._pooled` was one: the task and its result lived until a full collection);
- `heap.Heap` collects and trims after a burst of bodies, and when idle after growth, not while busy.

The resident size after a burst and after idling is measured by `benchmarks/memory.py`, not here.
"""

from __future__ import annotations

import asyncio
import gc
from dataclasses import replace
from typing import Any

import aiohttp
from support.reader_server import TEST_FETCH, RunningServer, serve, test_settings
from support.upstream import ARTICLE_HTML

from readerproxy.web.bodies import BODIES
from readerproxy.web.heap import Heap

CAP = 1024 * 1024
TIMEOUT = aiohttp.ClientTimeout(total=60)


def _settings() -> Any:
    return test_settings(rate_limit=0, fetch=replace(TEST_FETCH, max_bytes=CAP))


def _large_page(size: int) -> bytes:
    """An article of about `size` bytes."""
    paragraph = b"<p>" + b"Words of a large posted article, one sentence after another. " * 8 + b"</p>\n"
    return b"<html><body><article>" + paragraph * (size // len(paragraph)) + b"</article></body></html>"


async def _start_post(
    server: RunningServer, size: int, sent: bytes
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A POST /api/extract from 127.0.0.1 declaring `size` bytes, of which only `sent` go out."""
    reader, writer = await asyncio.open_connection("127.0.0.1", int(server.base.rsplit(":", 1)[1]))
    head = (
        "POST /api/extract HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/html\r\n"
        f"Content-Length: {size}\r\nConnection: close\r\n\r\n"
    )
    writer.write(head.encode("ascii") + sent)
    await writer.drain()
    return reader, writer


async def _status(reader: asyncio.StreamReader) -> int:
    line = await reader.readline()
    return int(line.split()[1])


def _client(address: str) -> aiohttp.ClientSession:
    connector = aiohttp.TCPConnector(local_addr=(address, 0), force_close=True)
    return aiohttp.ClientSession(connector=connector, timeout=TIMEOUT)


async def test_a_second_large_post_from_a_client_is_429_while_its_first_is_read() -> None:
    """Before: the second post was read and extracted too (all sixty of the issue's were)."""
    page = _large_page(CAP - 64 * 1024)
    async with serve(_settings()) as server:
        assert server.app is not None
        bodies = server.app[BODIES]
        first_reader, first_writer = await _start_post(server, len(page), page[: 64 * 1024])
        for _ in range(200):  # until the server counts the first body as held
            if bodies.held_by("127.0.0.1"):
                break
            await asyncio.sleep(0.01)
        assert bodies.held_by("127.0.0.1") == len(page)
        async with _client("127.0.0.1") as same:
            target = server.url("/api/extract")
            async with same.post(target, data=page, headers={"Content-Type": "text/html"}) as response:
                error = await response.json()
        assert response.status == 429 and response.headers["Retry-After"] == "2"
        assert error["error"]["kind"] == "too_many_bodies" and "already has" in error["error"]["message"]
        assert bodies.refused == 1
        async with (
            _client("127.0.0.2") as other,  # another address is served meanwhile
            other.post(target, data=ARTICLE_HTML, headers={"Content-Type": "text/html"}) as response,
        ):
            assert response.status == 200
        first_writer.write(page[64 * 1024 :])  # the first post's body, to its end: it is answered
        await first_writer.drain()
        assert await _status(first_reader) == 200
        first_writer.close()
        for _ in range(200):
            if not bodies.held:
                break
            await asyncio.sleep(0.01)
        assert bodies.held == 0 and bodies.held_by("127.0.0.1") == 0


async def test_a_post_declaring_more_than_the_cap_is_413_before_its_body_is_sent() -> None:
    """Before: the server waited for the body (and would have read it up to the cap)."""
    async with serve(_settings()) as server:
        reader, writer = await _start_post(server, 50 * CAP, b"<html>")
        try:
            assert await _status(reader) == 413
            answer = (await reader.read()).decode("utf-8", "replace")
        finally:
            writer.close()
        assert "too_large" in answer and f"larger than {CAP} bytes" in answer
        assert server.app is not None and server.app[BODIES].held == 0


async def test_a_finished_extraction_leaves_no_garbage_cycle_holding_its_result() -> None:
    """Before: each job's task (with its result: a 9 MB post's text and HTML) stayed in a cycle
    until a full collection, which an idle server never runs: the issue's memory that stayed."""
    async with serve(_settings()) as server, _client("127.0.0.1") as client:
        target = server.url("/api/extract")
        async with client.post(target, data=ARTICLE_HTML, headers={"Content-Type": "text/html"}) as response:
            assert response.status == 200  # warm: the workers are up
        gc.collect()
        gc.disable()
        try:
            for _ in range(3):
                async with client.post(
                    target, data=ARTICLE_HTML, headers={"Content-Type": "text/html"}
                ) as response:
                    assert response.status == 200
            gc.set_debug(gc.DEBUG_SAVEALL)
            gc.collect()
            results = [
                task
                for task in gc.garbage
                if isinstance(task, asyncio.Task)
                and task.done()
                and not task.cancelled()
                and task.exception() is None
                and isinstance(task.result(), dict)
                and "text" in task.result()
            ]
        finally:
            gc.set_debug(0)
            gc.garbage.clear()
            gc.enable()
        assert results == []


async def test_the_heap_is_collected_and_trimmed_after_a_burst_and_when_idle_not_while_busy() -> None:
    busy = True
    heap = Heap(lambda: busy, trim_after=10 * CAP, idle_check=0.01, idle_growth=-1)
    async with heap.watching():
        heap.let_go(9 * CAP)
        await asyncio.sleep(0.05)  # several idle looks: busy, so none trims
        assert heap.trims == 0
        heap.let_go(CAP)  # the burst's bytes reached: a trim now, busy or not
        for _ in range(100):
            if heap.trims:
                break
            await asyncio.sleep(0.01)
        assert heap.trims == 1 and heap.released == 0
        busy = False  # idle (and grown, as `idle_growth` says): the watch trims
        for _ in range(100):
            if heap.trims > 1:
                break
            await asyncio.sleep(0.01)
        assert heap.trims > 1
