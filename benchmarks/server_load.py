"""Reader server benchmark (not a test): cached /read under load, and what a miss adds over the upstream.

    .venv/bin/python benchmarks/server_load.py [--duration 10] [--connections 64] [--misses 40]

1. Starts a local upstream (aiohttp, 127.0.0.1, its own thread) serving a ~200 KB dataset page, and
   `readerproxy serve --cache memory --allow-private` as a separate process.
2. Cached throughput: `wrk -t2 -cN --latency` on /read?url=<page> after one warm-up request (page and
   result cached); requests/s and p50/p99 latency as wrk reports them. Without wrk, a bounded aiohttp
   load generator with the same number of connections is used instead.
3. Miss overhead: sequentially, a bare GET of the page from the upstream vs /read?url=…&refresh=1
   (refresh bypasses both caches: the server fetches, parses, extracts and renders every time);
   p50 of each and the difference.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import re
import shutil
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlencode

from aiohttp import ClientSession, TCPConnector, web

REPO = Path(__file__).resolve().parent.parent
DATASET = REPO.parent / "shared" / "datasets" / "scrapinghub" / "html"
PAGE_ID = "c582d3b772578e8feaa3cfd8f5ae8100bb6f0bc66048204a9a398395841c1164"  # 197 562 bytes decoded


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def page_bytes() -> bytes:
    path = DATASET / f"{PAGE_ID}.html.gz"
    if path.exists():
        return gzip.decompress(path.read_bytes())
    paragraph = "<p>" + "Benchmark text for the reader server, long enough to be content. " * 20 + "</p>"
    return f"<html><head><title>Bench</title></head><body><article>{paragraph * 150}</article></body></html>".encode()


def start_upstream(body: bytes) -> tuple[str, threading.Event]:
    """The upstream site in a thread: /page (cacheable for an hour)."""
    port = free_port()
    ready, stop = threading.Event(), threading.Event()

    async def page(request: web.Request) -> web.Response:
        return web.Response(
            body=body, content_type="text/html", charset="utf-8", headers={"Cache-Control": "max-age=3600"}
        )

    def run() -> None:
        async def main() -> None:
            app = web.Application()
            app.router.add_get("/page", page)
            runner = web.AppRunner(app, access_log=None)
            await runner.setup()
            await web.TCPSite(runner, "127.0.0.1", port).start()
            ready.set()
            while not stop.is_set():
                await asyncio.sleep(0.1)
            await runner.cleanup()

        asyncio.run(main())

    threading.Thread(target=run, daemon=True).start()
    ready.wait(10)
    return f"http://127.0.0.1:{port}", stop


def start_server() -> tuple[str, subprocess.Popen[bytes]]:
    port = free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "readerproxy.cli",
            "serve",
            "--port",
            str(port),
            "--cache",
            "memory",
            "--allow-private",
        ],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(base + "/healthz", timeout=1):
                return base, process
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise SystemExit("server did not start")


def _ms(text: str) -> float:
    value, unit = re.match(r"([\d.]+)(us|ms|s)", text).groups()  # type: ignore[union-attr]
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


def run_wrk(url: str, connections: int, duration: int) -> dict[str, float]:
    out = subprocess.run(
        ["wrk", "-t2", f"-c{connections}", f"-d{duration}s", "--latency", url],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    percentiles = dict(re.findall(r"^\s+(50|75|90|99)%\s+(\S+)", out, re.M))
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return {
        "requests_per_s": rps,
        "p50_ms": _ms(percentiles["50"]),
        "p99_ms": _ms(percentiles["99"]),
        "non_2xx": float(errors.group(1)) if errors else 0.0,
    }


async def run_generator(url: str, connections: int, duration: int) -> dict[str, float]:
    """A bounded load generator: `connections` workers each issuing requests back to back."""
    latencies: list[float] = []
    failures = 0
    deadline = time.perf_counter() + duration
    async with ClientSession(connector=TCPConnector(limit=connections)) as session:

        async def worker() -> None:
            nonlocal failures
            while time.perf_counter() < deadline:
                began = time.perf_counter()
                async with session.get(url) as response:
                    await response.read()
                    failures += response.status != 200
                latencies.append((time.perf_counter() - began) * 1000)

        began = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(connections)))
        elapsed = time.perf_counter() - began
    latencies.sort()
    return {
        "requests_per_s": len(latencies) / elapsed,
        "p50_ms": latencies[len(latencies) // 2],
        "p99_ms": latencies[int(len(latencies) * 0.99)],
        "non_2xx": float(failures),
    }


async def miss_overhead(upstream: str, server: str, rounds: int) -> dict[str, float]:
    """p50 of a bare upstream fetch vs a /read that bypasses the caches, sequentially."""
    bare: list[float] = []
    read: list[float] = []
    stages: dict[str, list[float]] = {"fetch": [], "parse": [], "extract": [], "render": []}
    target = upstream + "/page"
    async with ClientSession() as session:
        for i in range(rounds + 3):
            began = time.perf_counter()
            async with session.get(target, headers={"Accept-Encoding": "gzip"}) as response:
                await response.read()
            bare_ms = (time.perf_counter() - began) * 1000
            began = time.perf_counter()
            async with session.get(
                server + "/read?" + urlencode({"url": target, "refresh": "1"})
            ) as response:
                await response.read()
                assert response.headers["X-Cache"] == "miss", response.headers
            read_ms = (time.perf_counter() - began) * 1000
            async with session.get(server + "/api/extract?" + urlencode({"url": target})) as response:
                timings = (await response.json())["timings_ms"]
            if i >= 3:  # warm-up rounds dropped
                bare.append(bare_ms)
                read.append(read_ms)
                for stage in stages:
                    stages[stage].append(timings.get(stage, 0.0))
    result = {
        "bare_fetch_p50_ms": statistics.median(bare),
        "read_miss_p50_ms": statistics.median(read),
        "added_p50_ms": statistics.median(r - b for r, b in zip(read, bare, strict=True)),
    }
    result.update(
        {f"{stage}_p50_ms": statistics.median(values) for stage, values in stages.items() if stage != "fetch"}
    )
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--duration", type=int, default=10)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--misses", type=int, default=40)
    parser.add_argument("--generator", action="store_true", help="use the aiohttp load generator, not wrk")
    args = parser.parse_args()

    body = page_bytes()
    upstream, stop_upstream = start_upstream(body)
    server, process = start_server()
    try:
        url = server + "/read?" + urlencode({"url": upstream + "/page"})
        with urllib.request.urlopen(url, timeout=30) as response:  # warm-up: page and result cached
            reader_bytes = len(response.read())
        with urllib.request.urlopen(url, timeout=30) as response:
            assert response.headers["X-Cache"] == "hit"
        if shutil.which("wrk") and not args.generator:
            tool, load = "wrk", run_wrk(url, args.connections, args.duration)
        else:
            tool, load = "aiohttp generator", asyncio.run(run_generator(url, args.connections, args.duration))
        misses = asyncio.run(miss_overhead(upstream, server, args.misses))
    finally:
        process.terminate()
        process.wait(10)
        stop_upstream.set()
    report = {
        "page_bytes": len(body),
        "reader_page_bytes": reader_bytes,
        "tool": tool,
        "connections": args.connections,
        "cached_read": load,
        "miss": misses,
    }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
