"""An extraction whose client leaves is stopped (2026-11-26): on the reader server, a job waiting for
a worker leaves the queue and a running one has its worker killed and replaced, counted as
"cancelled"; an extraction shared with a client still waiting (single flight) goes on for it. Proxy
mode's reader views go through the same `Reader`, and stop the same way.

Real server, real worker processes: the clients that leave speak HTTP over a raw socket and close
it; the slow page is big and plain (links), a few seconds of work for one worker, under a deadline
far past it. Every wait is on a condition, never on a time.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from urllib.parse import urlencode

import aiohttp
from aiohttp import web
from support.reader_server import RunningServer, serve, serve_app, test_settings
from test_proxy_client_gone import navigation
from test_workers import alive

from readerproxy.proxy.server import ProxyServer
from readerproxy.web.browser import CONNECTED
from readerproxy.web.reader import Reader
from readerproxy.web.server import METRICS, READER, RENDERER
from readerproxy.web.singleflight import SingleFlight
from readerproxy.web.workers import WorkerPool

ARTICLE = (
    "<html><body><article><h1>T</h1>"
    + "<p>Some words of the article body here.</p>" * 20
    + "</article></body></html>"
)
#: Seconds any condition may take to come true before the test fails (never reached when it works).
PATIENCE = 60.0


def slow_page(count: int = 100_000) -> str:
    """A page that takes a worker seconds to extract (3.3 MB of links), linear, not pathological."""
    return "<html><body>" + "".join(f'<a href="/l{i}">link {i}</a> ' for i in range(count)) + "</body></html>"


async def until(condition: Callable[[], bool], what: str) -> None:
    """Wait (polling the event loop) until `condition()` holds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + PATIENCE
    while not condition():
        assert loop.time() < deadline, f"still waiting for {what}"
        await asyncio.sleep(0.02)


@contextlib.asynccontextmanager
async def one_worker_server() -> AsyncIterator[tuple[RunningServer, Reader, WorkerPool]]:
    """A reader server with one extraction worker and a deadline far past any extraction here."""
    async with serve(test_settings(extract_workers=1, extract_timeout=300.0)) as server:
        assert server.app is not None
        reader = server.app[READER]
        assert reader.workers is not None
        yield server, reader, reader.workers


@contextlib.asynccontextmanager
async def slow_site() -> AsyncIterator[str]:
    """A site serving the slow page at /slow-to-extract (its base URL)."""
    body = slow_page()

    async def page(request: web.Request) -> web.Response:
        return web.Response(text=body, content_type="text/html")

    async def article(request: web.Request) -> web.Response:
        return web.Response(text=ARTICLE, content_type="text/html")

    app = web.Application()
    app.router.add_get("/slow-to-extract", page)
    app.router.add_get("/article", article)
    async with serve_app(app) as base:
        yield base


class LeavingClient:
    """A client on a raw socket: sends one request, then closes its connection unanswered."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.writer: asyncio.StreamWriter | None = None

    async def send(self, method: str, path: str, body: bytes = b"") -> None:
        host, port = self.base.removeprefix("http://").split(":")
        _, self.writer = await asyncio.open_connection(host, int(port))
        head = f"{method} {path} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Length: {len(body)}\r\n"
        if body:
            head += "Content-Type: text/html\r\n"
        self.writer.write(head.encode() + b"\r\n" + body)
        await self.writer.drain()

    async def leave(self) -> None:
        assert self.writer is not None
        self.writer.close()
        with contextlib.suppress(OSError):
            await self.writer.wait_closed()


async def metrics_text(http: aiohttp.ClientSession, server: RunningServer) -> str:
    async with http.get(server.url("/metrics")) as response:
        return await response.text()


async def test_a_running_extraction_stops_when_its_client_leaves(http: aiohttp.ClientSession) -> None:
    async with one_worker_server() as (server, _, pool):
        [before] = pool.pids()
        client = LeavingClient(server.base)
        await client.send("POST", "/api/extract", slow_page().encode())
        await until(lambda: pool.busy == 1, "the slow page in the worker")
        await client.leave()
        await until(lambda: pool.stats.cancelled == 1, "the extraction cancelled")
        await until(lambda: not alive(before), "the worker killed")
        # the worker is free for the next request: a fresh one answers it
        async with http.post(
            server.url("/api/extract"), data=ARTICLE, headers={"Content-Type": "text/html"}
        ) as response:
            assert response.status == 200
            assert "Some words" in (await response.json())["text"]
        assert pool.pids() != [before] and pool.stats.completed == 1 and pool.stats.timed_out == 0
        assert 'readerproxy_extraction_jobs_total{event="cancelled"} 1.0' in await metrics_text(http, server)


async def test_a_waiting_extraction_leaves_the_queue_when_its_client_leaves(
    http: aiohttp.ClientSession,
) -> None:
    async with one_worker_server() as (server, _, pool):
        [worker] = pool.pids()
        running = LeavingClient(server.base)
        await running.send("POST", "/api/extract", slow_page().encode())
        await until(lambda: pool.busy == 1, "the slow page in the worker")
        queued = LeavingClient(server.base)
        await queued.send("POST", "/api/extract", ARTICLE.encode())
        await until(lambda: pool.waiting == 1, "the second page in the queue")
        await queued.leave()
        await until(lambda: pool.stats.cancelled == 1 and pool.waiting == 0, "the queued job dropped")
        assert pool.busy == 1 and alive(worker) and pool.pids() == [worker]  # the running one goes on
        await running.leave()
        await until(lambda: pool.stats.cancelled == 2 and not alive(worker), "the running job stopped")
        async with http.post(
            server.url("/api/extract"), data=ARTICLE, headers={"Content-Type": "text/html"}
        ) as response:
            assert response.status == 200
        assert pool.stats.completed == 1
        assert 'readerproxy_extraction_jobs_total{event="cancelled"} 2.0' in await metrics_text(http, server)


async def test_a_shared_extraction_goes_on_for_the_client_still_waiting(http: aiohttp.ClientSession) -> None:
    async with slow_site() as site, one_worker_server() as (server, reader, pool):
        [worker] = pool.pids()
        path = "/api/extract?" + urlencode({"url": site + "/slow-to-extract"})
        leaving = LeavingClient(server.base)
        await leaving.send("GET", path)
        await until(lambda: pool.busy == 1, "the slow page in the worker")
        staying = asyncio.ensure_future(http.get(server.base + path))
        await until(lambda: reader.flights.callers() == 2, "both clients on the one extraction")
        await leaving.leave()
        # the flight's presence check has found the first client gone, and kept the extraction
        await until(lambda: reader.flights.callers() < 2, "the leaving client seen gone")
        async with await staying as response:
            assert response.status == 200
            data = await response.json()
        assert "link 99999" in data["text"]
        assert pool.stats.cancelled == 0 and pool.stats.completed == 1 and pool.pids() == [worker]


async def test_a_flight_stops_only_when_every_caller_has_gone() -> None:
    """SingleFlight with a presence variable: the shared call sees "someone is there" while any caller
    is; once none is, the flight leaves the table (a newcomer starts afresh)."""
    flights = SingleFlight(CONNECTED)
    seen: list[Callable[[], bool] | None] = []
    release = asyncio.Event()

    async def work() -> str:
        seen.append(CONNECTED.get())
        await release.wait()
        return "done"

    there = {"a": True, "b": True}

    async def caller(name: str) -> str:
        CONNECTED.set(lambda: there[name])
        return await flights.run("k", work)

    a = asyncio.ensure_future(caller("a"))
    b = asyncio.ensure_future(caller("b"))
    await until(lambda: flights.callers() == 2, "both callers")
    [present] = seen
    assert present is not None and present()
    there["a"] = False
    assert present() and flights.callers() == 1 and len(flights) == 1
    there["b"] = False
    assert not present() and len(flights) == 0  # nobody left: out of the table
    release.set()
    assert await asyncio.gather(a, b) == ["done", "done"]


async def test_a_caller_without_a_presence_check_keeps_the_flight() -> None:
    flights = SingleFlight(CONNECTED)
    present: list[Callable[[], bool] | None] = []

    async def work() -> int:
        present.append(CONNECTED.get())
        return 1

    assert CONNECTED.get() is None
    assert await flights.run("k", work) == 1
    [check] = present
    assert check is not None and not check()  # after the call: nobody awaits it any more

    gone = asyncio.Event()

    async def held() -> int:
        present.append(CONNECTED.get())
        await gone.wait()
        return 2

    waiter = asyncio.ensure_future(flights.run("j", held))
    await until(lambda: len(present) == 2, "the flight started")
    assert present[1] is not None and present[1]()  # an unknown caller counts as there
    gone.set()
    assert await waiter == 2


async def test_a_proxy_reader_view_stops_its_extraction_when_the_browser_leaves() -> None:
    async with slow_site() as site, one_worker_server() as (server, reader, pool):
        assert server.app is not None
        app = server.app
        proxy = ProxyServer(reader.settings, reader, app[RENDERER], app[METRICS])
        await proxy.start("127.0.0.1", 0)
        try:
            [before] = pool.pids()
            _, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
            writer.write(navigation(site + "/slow-to-extract"))
            await writer.drain()
            await until(lambda: pool.busy == 1, "the slow page in the worker")
            writer.close()  # the browser leaves while its page is being extracted
            await writer.wait_closed()
            await until(lambda: pool.stats.cancelled == 1 and not alive(before), "the extraction stopped")

            # the proxy goes on reading: the next article is a reader view, from a fresh worker
            answers, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
            writer.write(navigation(site + "/article"))
            await writer.drain()
            answer = await asyncio.wait_for(answers.read(), PATIENCE)
            writer.close()
            assert answer.startswith(b"HTTP/1.1 200 ") and b"x-readerproxy: reader-view" in answer.lower(), (
                answer[:400]
            )
            assert pool.stats.completed == 1 and pool.pids() != [before]
        finally:
            await proxy.close()
