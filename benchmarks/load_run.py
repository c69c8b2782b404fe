"""Bounded load run: a fixed number of mixed requests at a fixed concurrency, loopback only.

    .venv/bin/python benchmarks/load_run.py [--requests 10000] [--connections 100] [--limit 300]

Starts the upstream test site (tests/support/upstream.py, its own thread) and `readerproxy serve
--cache memory --rate-limit 0` as a process, then sends `--requests` requests over `--connections`
connections, stopping at `--limit` seconds whatever happens:

- 70 % cached reads: /read of 20 hot pages (each fetched once, then served from the caches);
- 15 % uncached reads: /read of a distinct ~50 KB page each time (fetch, parse, extract, render);
- 15 % bad: a `javascript:` URL (400), a name that does not resolve (502), an upstream 404 (502),
  an unknown algorithm (400), a parameter out of range (400);
- two hostile extraction streams from another client address (127.0.0.2) for the whole run: one
  POSTs 200,000 nested `<div>`s to /api/extract (flattened by the depth cap, so it finishes), the
  other a page of 200,000 links (linear but slow, about the deadline); one after another while the
  normal requests last. Uncached normal reads must keep being served meanwhile: the hostile
  address holds at most its share of the extraction workers (`--extract-per-client`).

Reports throughput, p50/p99 latency overall and by class of request, answers by status, the
uncached reads that overlapped a hostile extraction, and the resident memory of the server (and its
workers) before and after.
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
from support.reader_server import free_port, stop_process  # noqa: E402
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


async def run(
    base: str,
    requests: list[tuple[str, str]],
    connections: int,
    limit: float,
    hostile_streams: bool = True,
    addresses: int = 1,
) -> dict:
    latencies: list[float] = []
    class_latencies: dict[str, list[float]] = collections.defaultdict(list)
    by_status: collections.Counter[str] = collections.Counter()
    by_class: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    hostile: list[dict] = []
    overlapped: collections.Counter[str] = collections.Counter()
    queue: asyncio.Queue[tuple[str, str]] = asyncio.Queue()
    for item in requests:
        queue.put_nowait(item)
    pages = {
        "nested-divs-200k": "<html><body>" + "<div>" * 200_000 + "x" + "</div>" * 200_000 + "</body></html>",
        "links-200k": "<html><body>"
        + "".join(f'<a href="/l{i}">link {i}</a> ' for i in range(200_000))
        + "</body></html>",
    }
    hostile_windows: list[tuple[float, float]] = []
    # Normal traffic from `addresses` client addresses (127.0.1.x; the first is 127.0.0.1), the
    # hostile client from 127.0.0.2: all of 127.0.0.0/8 is loopback on Linux.
    sources = ["127.0.0.1"] + [f"127.0.1.{n}" for n in range(1, addresses)]
    sessions = [
        ClientSession(
            connector=TCPConnector(limit=connections + 2, local_addr=(source, 0)),
            timeout=ClientTimeout(total=120),
        )
        for source in sources
    ]
    hostile_connector = TCPConnector(limit=2, local_addr=("127.0.0.2", 0))
    async with ClientSession(connector=hostile_connector, timeout=ClientTimeout(total=120)) as attacker:
        http = sessions[0]

        async def hostile_stream(name: str) -> None:
            body = pages[name].encode()
            while not queue.empty():
                t0 = time.monotonic()
                async with attacker.post(
                    base + "/api/extract", data=body, headers={"Content-Type": "text/html"}
                ) as r:
                    answer = await r.json()
                t1 = time.monotonic()
                hostile_windows.append((t0, t1))
                kind = answer.get("error", {}).get("kind") if r.status != 200 else "ok"
                hostile.append({"page": name, "status": r.status, "kind": kind, "seconds": round(t1 - t0, 2)})

        async def worker(http: ClientSession) -> None:
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
                class_latencies[kind].append(t1 - t0)
                by_status[status] += 1
                by_class[kind][status] += 1
                if kind == "uncached":
                    reads.append((t0, t1, status))

        reads: list[tuple[float, float, str]] = []
        began = time.monotonic()
        tasks = [asyncio.ensure_future(hostile_stream(name)) for name in pages] if hostile_streams else []
        await asyncio.sleep(0.2)
        tasks += [asyncio.ensure_future(worker(sessions[n % len(sessions)])) for n in range(connections)]
        try:
            async with asyncio.timeout(limit):
                await asyncio.gather(*tasks)
        except TimeoutError:
            for task in tasks:
                task.cancel()
        elapsed = time.monotonic() - began
        async with http.get(base + "/metrics") as r:
            metrics = await r.text()
        for session in sessions:
            await session.close()
    jobs = {
        line.split('event="')[1].split('"')[0]: float(line.rsplit(" ", 1)[1])
        for line in metrics.splitlines()
        if line.startswith("readerproxy_extraction_jobs_total{")
    }
    for t0, t1, status in reads:
        if any(t0 < end and t1 > start for start, end in hostile_windows):
            overlapped[status] += 1
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
        "by_class_ms": {
            k: {"p50": _ms(v, 0.5), "p99": _ms(v, 0.99), "n": len(v)} for k, v in class_latencies.items()
        },
        "hostile": hostile,
        "uncached_during_hostile": dict(overlapped),
        "extraction_jobs": jobs,
    }


def _ms(values: list[float], quantile: float) -> float:
    ordered = sorted(values)
    return round(ordered[max(0, int(len(ordered) * quantile) - 1)] * 1000, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=10_000)
    parser.add_argument("--connections", type=int, default=100)
    parser.add_argument("--limit", type=float, default=300.0)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--no-hostile", action="store_true", help="the control run: normal requests only")
    parser.add_argument(
        "--addresses", type=int, default=1, help="client addresses the normal traffic comes from"
    )
    parser.add_argument("server_options", nargs="*", help="more `readerproxy serve` options (after --)")
    parser.add_argument("--smoke", action="store_true", help="40 requests over 4 connections")
    args = parser.parse_args()
    if args.smoke:
        args.requests, args.connections, args.limit = 40, 4, 120.0
    upstream = Upstream()
    upstream.start()
    port = free_port()
    server = start_server(port, "--extract-timeout", "10", "--extract-queue", "64", *args.server_options)
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
            run(
                f"http://127.0.0.1:{port}",
                plan(args.requests, upstream),
                args.connections,
                args.limit,
                hostile_streams=not args.no_hostile,
                addresses=args.addresses,
            )
        )
        result["options"] = {
            "addresses": args.addresses,
            "hostile": not args.no_hostile,
            "server": args.server_options,
        }
        result["rss_before"] = before
        result["rss_after"] = memory()
        print(json.dumps(result, indent=1))
        if args.json:
            args.json.write_text(json.dumps(result, indent=1))
    finally:
        stop_process(server)
        upstream.stop()


if __name__ == "__main__":
    main()
