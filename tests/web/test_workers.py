"""The extraction worker pool: a deadline that kills the work, a bounded queue, replacement workers,
and the server's answers (503 extraction_timeout, 503 overloaded, 400 for parameters out of range)."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import signal
import subprocess
import time
from collections.abc import AsyncIterator

import aiohttp
import pytest
from support.reader_server import serve, start_server_process, test_settings
from support.upstream import Upstream

from readerproxy.engine.extraction import get_extractor
from readerproxy.web.server import READER
from readerproxy.web.workers import CLIENT, Call, ExtractionTimeout, Job, Overloaded, WorkerPool

ARTICLE = (
    "<html><body><article><h1>T</h1>"
    + "<p>Some words of the article body here.</p>" * 20
    + "</article></body></html>"
)


def links(count: int) -> str:
    """A page that is slow for every algorithm without being pathological: linear, but big."""
    return "<html><body>" + "".join(f'<a href="/l{i}">link {i}</a> ' for i in range(count)) + "</body></html>"


#: Work that outlives any deadline in these tests (a worker runs it like an extraction).
ENDLESS = Call(time.sleep, (120,))


def job(html: str, algorithm: str = "auto") -> Job:
    extractor = get_extractor(algorithm)
    return Job(html, None, None, extractor.name, extractor.make_params({}))


@pytest.fixture
async def pool() -> AsyncIterator[WorkerPool]:
    workers = WorkerPool(1, deadline=1.5, queue_limit=1)
    await workers.start()
    try:
        yield workers
    finally:
        await workers.close()


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:  # a zombie is not running
        return stat.read().split(")")[-1].split()[0] != "Z"


async def test_a_job_runs_in_a_worker_process(pool: WorkerPool) -> None:
    data = await pool.run(job(ARTICLE))
    assert "Some words" in data["text"]
    assert pool.pids() and os.getpid() not in pool.pids()


async def test_after_its_first_job_a_worker_keeps_what_lasts_out_of_the_collector(pool: WorkerPool) -> None:
    assert await pool.run(Call(gc.get_freeze_count)) == 0  # a Call is a job too: now it froze
    assert await pool.run(Call(gc.get_freeze_count)) > 1000
    data = await pool.run(job(ARTICLE))
    assert "Some words" in data["text"]


async def test_past_the_deadline_the_worker_is_killed_and_replaced(pool: WorkerPool) -> None:
    [before] = pool.pids()
    # the work sleeps 120 s: an ExtractionTimeout, counted as timed out, came from the 1.5 s deadline
    with pytest.raises(ExtractionTimeout) as caught:
        await pool.run(ENDLESS)
    assert caught.value.status == 503 and caught.value.kind == "extraction_timeout"
    assert not alive(before)  # the work stopped
    data = await pool.run(job(ARTICLE))  # a fresh worker serves the next page
    assert "Some words" in data["text"] and pool.pids() != [before]
    assert pool.stats.timed_out == 1


async def test_a_caller_that_gives_up_stops_its_work(pool: WorkerPool) -> None:
    [before] = pool.pids()
    task = asyncio.ensure_future(pool.run(ENDLESS))
    await asyncio.sleep(0.3)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    for _ in range(50):
        if not alive(before):
            break
        await asyncio.sleep(0.05)
    assert not alive(before)
    assert "Some words" in (await pool.run(job(ARTICLE)))["text"]


async def test_the_queue_is_bounded(pool: WorkerPool) -> None:
    running = asyncio.ensure_future(pool.run(ENDLESS))
    await asyncio.sleep(0.1)
    waiting = asyncio.ensure_future(pool.run(job(ARTICLE)))  # the one queue place
    await asyncio.sleep(0.1)
    with pytest.raises(Overloaded) as caught:
        await pool.run(job(ARTICLE))
    assert caught.value.status == 503 and caught.value.retry_after >= 1
    with pytest.raises(ExtractionTimeout):
        await running
    [outcome] = await asyncio.gather(waiting, return_exceptions=True)
    assert isinstance(outcome, (dict, Overloaded))  # served by the fresh worker, or waited a deadline


async def test_server_answers_503_extraction_timeout_and_keeps_serving(http: aiohttp.ClientSession) -> None:
    settings = test_settings(extract_timeout=1.5, extract_workers=1)
    async with serve(settings) as server:
        async with http.post(
            server.url("/api/extract"), data=links(200_000), headers={"Content-Type": "text/html"}
        ) as response:
            body = await response.json()
        # answered at the deadline, not when the extraction ended: an extraction that ended would be
        # a 200, not an extraction_timeout
        assert response.status == 503 and body["error"]["kind"] == "extraction_timeout"
        async with http.post(
            server.url("/api/extract"), data=ARTICLE, headers={"Content-Type": "text/html"}
        ) as response:
            assert response.status == 200
        async with http.get(server.url("/metrics")) as response:
            metrics = await response.text()
        assert 'readerproxy_extraction_jobs_total{event="timed_out"} 1.0' in metrics
        assert "readerproxy_extraction_busy" in metrics and 'name="extract_timeout_seconds"' in metrics


@pytest.mark.parametrize("query", ["algo=accb&iterations=1000000000", "algo=cetr&radius=1e8"])
async def test_parameters_out_of_range_are_400(http: aiohttp.ClientSession, query: str) -> None:
    async with (
        serve(test_settings()) as server,
        http.post(
            server.url("/api/extract") + "?" + query, data=ARTICLE, headers={"Content-Type": "text/html"}
        ) as response,
    ):
        body = await response.json()
    assert response.status == 400 and body["error"]["kind"] == "bad_request"


def test_sigterm_stops_the_server_and_its_workers_within_seconds() -> None:
    # the hostile extraction is given --shutdown-timeout to finish, then answered 503 and its worker killed
    process, base = start_server_process(
        "--cache", "memory", "--extract-timeout", "60", "--shutdown-timeout", "1"
    )
    try:
        import urllib.error
        import urllib.request

        answers: list[tuple[int, str]] = []

        def post() -> None:
            request = urllib.request.Request(
                base + "/api/extract",
                data=links(200_000).encode(),
                headers={"Content-Type": "text/html"},
            )
            try:
                with urllib.request.urlopen(request, timeout=30) as response:
                    answers.append((response.status, "ok"))
            except urllib.error.HTTPError as error:
                answers.append((error.code, json.loads(error.read())["error"]["kind"]))
            except OSError:
                pass

        import threading

        thread = threading.Thread(target=post, daemon=True)
        thread.start()
        time.sleep(1.5)  # the hostile page is being extracted
        children = subprocess.run(
            ["pgrep", "-P", str(process.pid)], capture_output=True, text=True
        ).stdout.split()
        process.send_signal(signal.SIGTERM)
        # the order of events, not a time: the server and its workers are gone before the
        # extraction's 60 s deadline could end it (the wait's bound is half of it), and the request
        # was answered: its page, when the extraction ended within the grace (links(200_000) now
        # takes about a second), else 503 shutting_down
        process.wait(30)
        thread.join(30)
        assert process.returncode == 0
        assert answers in ([(200, "ok")], [(503, "shutting_down")]), answers
        for _ in range(100):
            if not any(alive(int(pid)) for pid in children):
                break
            time.sleep(0.05)
        assert not any(alive(int(pid)) for pid in children)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


async def _as_client(client: str, pool: WorkerPool, work: Job | Call) -> object:
    CLIENT.set(client)  # what the server's middleware does per request (this task's own context)
    return await pool.run(work)


async def test_one_client_cannot_hold_every_worker() -> None:
    pool = WorkerPool(2, deadline=30.0, queue_limit=8)  # per client: half the workers, one
    await pool.start()
    try:
        hostile = [asyncio.ensure_future(_as_client("10.0.0.66", pool, ENDLESS)) for _ in range(2)]
        await asyncio.sleep(0.3)
        assert pool.busy == 1 and pool.waiting == 1  # its second job waits for its own worker
        served = await asyncio.wait_for(_as_client("10.0.0.1", pool, job(ARTICLE)), 20)
        assert isinstance(served, dict) and "Some words" in served["text"]
        assert not any(task.done() for task in hostile)
        assert pool.clients() == 1
        for task in hostile:
            task.cancel()
        await asyncio.gather(*hostile, return_exceptions=True)
    finally:
        await pool.close()


async def test_a_client_past_its_queue_share_is_refused_at_once() -> None:
    events: list[str] = []
    pool = WorkerPool(2, deadline=30.0, queue_limit=4, on_event=events.append)  # share: 1 running + 2 waiting
    await pool.start()
    try:
        held = [asyncio.ensure_future(_as_client("10.0.0.66", pool, ENDLESS)) for _ in range(3)]
        await asyncio.sleep(0.3)
        with pytest.raises(Overloaded, match="this address already has 3"):
            await _as_client("10.0.0.66", pool, ENDLESS)
        assert events == ["client_limited"] and pool.stats.client_limited == 1
        for task in held:
            task.cancel()
        await asyncio.gather(*held, return_exceptions=True)
    finally:
        await pool.close()


async def test_metrics_show_the_per_client_share(http: aiohttp.ClientSession) -> None:
    async with (
        serve(test_settings(extract_workers=2, extract_per_client=2)) as server,
        http.get(server.url("/metrics")) as response,
    ):
        metrics = await response.text()
    assert 'readerproxy_limit{name="extract_per_client"} 2.0' in metrics
    assert "readerproxy_extraction_clients 0.0" in metrics


async def test_overlay_compare_and_blocks_run_in_the_pool(
    http: aiohttp.ClientSession, upstream: Upstream
) -> None:
    """Their work is a job of the pool (deadline, kill, per-client share), not a thread: one job
    per request, the pipeline runs once (the blocks come from the extraction itself)."""
    async with serve(test_settings(rate_limit=0)) as server:
        assert server.app is not None
        pool = server.app[READER].workers
        async with http.post(
            server.url("/api/extract", blocks="1"), data=ARTICLE, headers={"Content-Type": "text/html"}
        ) as response:
            data = await response.json()
        assert response.status == 200 and data["blocks"]
        assert pool.stats.completed == 1  # the extraction, with its blocks
        target = upstream.url("/article")
        # the overlay and compare of a page never read before: one job each, no read first
        for path, query, jobs in (
            ("/read", {"view": "overlay"}, 1),
            ("/compare", {}, 1),
            ("/api/extract", {"blocks": "1"}, 1),
        ):
            before = pool.stats.completed
            async with http.get(server.url(path, url=target, **query)) as response:
                assert response.status == 200, path
                if path == "/api/extract":
                    assert (await response.json())["blocks"]
            assert pool.stats.completed == before + jobs, path
