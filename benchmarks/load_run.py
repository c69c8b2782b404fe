"""Bounded load run: a fixed number of mixed requests at a fixed concurrency, loopback only.

    .venv/bin/python benchmarks/load_run.py [--requests 10000] [--connections 100] [--limit 300]

Starts the upstream test site (tests/support/upstream.py, its own thread) and `readerproxy serve
--cache memory --rate-limit 0` as a process, then sends `--requests` requests over `--connections`
connections, stopping at `--limit` seconds whatever happens:

- 70 % cached reads: /read of 20 hot pages (each fetched once, then served from the caches);
- 15 % uncached reads: /read of a distinct ~50 KB page each time (fetch, parse, extract, render);
- 15 % bad: a `javascript:` URL (400), a name that does not resolve (502), an upstream 404 (502),
  an unknown algorithm (400), a parameter out of range (400);
- two hostile extractions at the start: 200,000 nested `<div>`s POSTed to /api/extract, which
  must be cut off at the extraction deadline (503) while the rest keeps being served.

Reports throughput, p50/p99 latency, answers by status and kind, the uncached reads that overlapped
the hostile ones, and the resident memory of the server (and its workers) before and after.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import random
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

from aiohttp import ClientSession, ClientTimeout, TCPConnector

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "benchmarks"))

from soak import children, rss_kb, start_server  # noqa: E402
from support.reader_server import free_port  # noqa: E402
from support.upstream import Upstream  # noqa: E402


def plan(total: int, upstream: Upstream, seed: int = 13) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    requests: list[tuple[str, str]] = []
    for i in range(total):
        roll = rng.random()
        if roll < 0.70:
            requests.append(
                ("cached", "/read?" + urlencode({"url": upstream.url(f"/generated/hot-{rng.randrange(20)}")}))
            )
        elif roll < 0.85:
            requests.append(("uncached", "/read?" + urlencode({"url": upstream.url(f"/generated/cold-{i}")})))
        else:
            bad = rng.choice(
                [
                    {"url": "javascript:alert(1)"},
                    {"url": "http://does-not-exist.invalid/"},
                    {"url": upstream.url("/status/404")},
                    {"url": upstream.url("/article"), "algo": "nope"},
                    {"url": upstream.url("/article"), "algo": "accb", "iterations": "1000000000"},
                ]
            )
            requests.append(("bad", "/read?" + urlencode(bad)))
    return requests


async def run(base: str, requests: list[tuple[str, str]], connections: int, limit: float) -> dict:
    latencies: list[float] = []
    by_status: collections.Counter[str] = collections.Counter()
    by_class: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    hostile: list[dict] = []
    overlapped: collections.Counter[str] = collections.Counter()
    hostile_window = [float("inf"), 0.0]
    queue: asyncio.Queue[tuple[str, str]] = asyncio.Queue()
    for item in requests:
        queue.put_nowait(item)
    nested = ("<html><body>" + "<div>" * 200_000 + "x" + "</div>" * 200_000 + "</body></html>").encode()
    connector = TCPConnector(limit=connections + 2)
    async with ClientSession(connector=connector, timeout=ClientTimeout(total=120)) as http:

        async def hostile_one() -> None:
            t0 = time.monotonic()
            hostile_window[0] = min(hostile_window[0], t0)
            async with http.post(
                base + "/api/extract", data=nested, headers={"Content-Type": "text/html"}
            ) as r:
                body = await r.json()
            t1 = time.monotonic()
            hostile_window[1] = max(hostile_window[1], t1)
            hostile.append(
                {"status": r.status, "kind": body.get("error", {}).get("kind"), "seconds": round(t1 - t0, 2)}
            )

        async def worker() -> None:
            while not queue.empty():
                kind, path = queue.get_nowait()
                t0 = time.monotonic()
                try:
                    async with http.get(base + path) as r:
                        await r.read()
                        status = str(r.status)
                except Exception as exc:
                    status = type(exc).__name__
                t1 = time.monotonic()
                latencies.append(t1 - t0)
                by_status[status] += 1
                by_class[kind][status] += 1
                if kind == "uncached" and t0 < hostile_window[1] and t1 > hostile_window[0]:
                    overlapped[status] += 1

        began = time.monotonic()
        tasks = [asyncio.ensure_future(hostile_one()) for _ in range(2)]
        await asyncio.sleep(0.2)
        tasks += [asyncio.ensure_future(worker()) for _ in range(connections)]
        try:
            async with asyncio.timeout(limit):
                await asyncio.gather(*tasks)
        except TimeoutError:
            for task in tasks:
                task.cancel()
        elapsed = time.monotonic() - began
    latencies.sort()
    done = len(latencies)
    return {
        "requests": done,
        "seconds": round(elapsed, 2),
        "throughput_rps": round(done / elapsed, 1),
        "p50_ms": round(statistics.median(latencies) * 1000, 1) if latencies else None,
        "p99_ms": round(latencies[int(done * 0.99) - 1] * 1000, 1) if latencies else None,
        "by_status": dict(by_status),
        "by_class": {k: dict(v) for k, v in by_class.items()},
        "hostile": hostile,
        "uncached_during_hostile": dict(overlapped),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=10_000)
    parser.add_argument("--connections", type=int, default=100)
    parser.add_argument("--limit", type=float, default=300.0)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    upstream = Upstream()
    upstream.start()
    port = free_port()
    server = start_server(port, "--extract-timeout", "10", "--extract-queue", "64")
    try:

        def memory() -> dict:
            kids = children(server.pid)
            main_kb = rss_kb(server.pid)
            return {
                "server_mb": round(main_kb / 1024, 1),
                "server_and_workers_mb": round((main_kb + sum(rss_kb(k) for k in kids)) / 1024, 1),
            }

        before = memory()
        result = asyncio.run(
            run(f"http://127.0.0.1:{port}", plan(args.requests, upstream), args.connections, args.limit)
        )
        result["rss_before"] = before
        result["rss_after"] = memory()
        print(json.dumps(result, indent=1))
        if args.json:
            args.json.write_text(json.dumps(result, indent=1))
    finally:
        server.terminate()
        try:
            server.wait(10)
        except Exception:
            server.kill()
        upstream.stop()


if __name__ == "__main__":
    main()
