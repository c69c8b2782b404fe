"""Reader server benchmark (not a test): cached /read against a bare aiohttp handler, and misses.

    .venv/bin/python benchmarks/server_load.py [--duration 10] [--connections 64] [--rounds 3]
        [--misses 40] [--workers 1 2] [--accept-encoding "br, gzip"] [--generator]

1. Starts a local upstream (aiohttp, 127.0.0.1, its own thread) serving a ~200 KB dataset page, and
   `readerproxy serve --cache memory --allow-private [--workers N]` as a separate process.
2. Cached /read against its reference, in the same run: a bare aiohttp handler (its own process,
   one process like the server, access log off) answering every request with the very bytes the
   reader sends for the cached page (same body, same Content-Type and, with `--accept-encoding`,
   the same compressed body and Content-Encoding, as a browser gets them). Each round loads both with
   `wrk -t2 -cN --latency` (requests/s and p50/p99 as wrk reports them), one after the other; the
   ratio reader/bare of requests per second is printed per round and as the median. Without wrk, a
   bounded aiohttp load generator with the same number of connections is used instead (it is itself
   the bottleneck on a 2-core machine, so its ratio says less).
3. With `--workers 1 2`, the cached load is repeated on `--workers 2` (both workers warmed; the
   bare handler stays one process, the reference for one server process).
4. Miss overhead, `--rounds` times: sequentially, a bare GET of the page from the upstream vs
   /read?url=…&refresh=1 (refresh bypasses both caches: the server fetches, parses, extracts and
   renders every time); p50 of each and of the difference, per round.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from aiohttp import ClientSession, TCPConnector, web

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from support.reader_server import free_port, start_server_process, stop_process, wait_healthy  # noqa: E402

DATASET = REPO.parent / "shared" / "datasets" / "scrapinghub" / "html"
PAGE_ID = "c582d3b772578e8feaa3cfd8f5ae8100bb6f0bc66048204a9a398395841c1164"  # 197 562 bytes decoded


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


def start_server(workers: int = 1) -> tuple[str, subprocess.Popen[bytes]]:
    """`readerproxy serve` with a memory cache (each worker its own) in a separate process.

    The per-client rate limit is off: every request of the load comes from one address (127.0.0.1),
    so with the default limit the run would measure 429 answers, not the cached path.
    """
    options = ["--rate-limit", "0", "--cache", "memory", "--allow-private", "--workers", str(workers)]
    process, base = start_server_process(*options)
    return base, process


def serve_bare(port: int, body_file: str, content_type: str, content_encoding: str) -> None:
    """The reference: an aiohttp handler that answers every request with the same bytes (and the
    same Content-Type and Content-Encoding as the reader's answer)."""
    body = Path(body_file).read_bytes()
    headers = {"Content-Type": content_type}
    if content_encoding:
        headers |= {"Content-Encoding": content_encoding, "Vary": "Accept-Encoding"}

    async def handler(request: web.Request) -> web.Response:
        return web.Response(body=body, headers=headers)

    app = web.Application()
    app.router.add_get("/{tail:.*}", handler)
    web.run_app(app, host="127.0.0.1", port=port, access_log=None, print=None)


def start_bare(
    body: bytes, content_type: str, content_encoding: str, scratch: Path
) -> tuple[str, subprocess.Popen[bytes]]:
    """The bare handler in its own process (one process, like the server it is compared with)."""
    body_file = scratch / "reader-page.bin"
    body_file.write_bytes(body)
    port = free_port()
    command = [sys.executable, __file__, "--bare", str(port), str(body_file), content_type, content_encoding]
    process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    wait_healthy(base, process)
    return base, process


def _ms(text: str) -> float:
    value, unit = re.match(r"([\d.]+)(us|ms|s)", text).groups()  # type: ignore[union-attr]
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


def run_wrk(url: str, connections: int, duration: int, headers: dict[str, str]) -> dict[str, float]:
    header_options = [option for name, value in headers.items() for option in ("-H", f"{name}: {value}")]
    out = subprocess.run(
        ["wrk", "-t2", f"-c{connections}", f"-d{duration}s", "--latency", *header_options, url],
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


async def run_generator(
    url: str, connections: int, duration: int, headers: dict[str, str]
) -> dict[str, float]:
    """A bounded load generator: `connections` workers each issuing requests back to back."""
    latencies: list[float] = []
    failures = 0
    deadline = time.perf_counter() + duration
    async with ClientSession(connector=TCPConnector(limit=connections)) as session:

        async def worker() -> None:
            nonlocal failures
            while time.perf_counter() < deadline:
                began = time.perf_counter()
                async with session.get(url, headers=headers) as response:
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


def load(
    url: str, connections: int, duration: int, generator: bool, headers: dict[str, str]
) -> dict[str, float]:
    if shutil.which("wrk") and not generator:
        return run_wrk(url, connections, duration, headers)
    return asyncio.run(run_generator(url, connections, duration, headers))


def warm(url: str, requests: int, headers: dict[str, str]) -> tuple[bytes, str, str]:
    """GET the page until it is cached (in every worker): the reader's bytes as sent (compressed if
    the headers ask for it), its Content-Type and its Content-Encoding ("" for none)."""
    body, content_type, encoding, cache = b"", "", "", ""
    for _ in range(requests):
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=30) as response:
            body, content_type, encoding, cache = (
                response.read(),
                response.headers["Content-Type"],
                response.headers.get("Content-Encoding", ""),
                response.headers["X-Cache"],
            )
    assert cache == "hit", cache
    return body, content_type, encoding


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--duration", type=int, default=10)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3, help="cached-load and miss rounds")
    parser.add_argument("--misses", type=int, default=40, help="misses per round")
    parser.add_argument("--workers", type=int, nargs="+", default=[1], help="e.g. --workers 1 2")
    parser.add_argument("--generator", action="store_true", help="use the aiohttp load generator, not wrk")
    parser.add_argument(
        "--accept-encoding", default="", help='e.g. "br, gzip": what a browser sends (default: nothing)'
    )
    parser.add_argument("--bare", nargs=4, metavar=("PORT", "FILE", "TYPE", "CODING"), help=argparse.SUPPRESS)
    parser.add_argument("--smoke", action="store_true", help="one 1 s round over 4 connections, 3 misses")
    args = parser.parse_args()
    if args.smoke:
        args.duration, args.connections, args.rounds, args.misses, args.workers = 1, 4, 1, 3, [1]
    if args.bare:  # the reference handler's own process
        serve_bare(int(args.bare[0]), args.bare[1], args.bare[2], args.bare[3])
        return 0

    headers = {"Accept-Encoding": args.accept_encoding} if args.accept_encoding else {}
    body = page_bytes()
    upstream, stop_upstream = start_upstream(body)
    report: dict[str, object] = {
        "page_bytes": len(body),
        "tool": "wrk -t2" if shutil.which("wrk") and not args.generator else "aiohttp generator",
        "connections": args.connections,
        "duration_s": args.duration,
    }
    try:
        with tempfile.TemporaryDirectory() as scratch:
            for workers in args.workers:
                server, process = start_server(workers)
                try:
                    url = server + "/read?" + urlencode({"url": upstream + "/page"})
                    reader_page, content_type, coding = warm(url, 4 * workers, headers)
                    report["reader_page_bytes_sent"] = len(reader_page)
                    report["content_encoding"] = coding or "identity"
                    bare, bare_process = start_bare(reader_page, content_type, coding, Path(scratch))
                    try:
                        rounds: list[dict[str, Any]] = []
                        for _ in range(args.rounds):
                            cached = load(url, args.connections, args.duration, args.generator, headers)
                            reference = load(
                                bare + "/", args.connections, args.duration, args.generator, headers
                            )
                            if cached["non_2xx"] or reference["non_2xx"]:
                                raise SystemExit(f"non-2xx answers under load: {cached}, {reference}")
                            ratio = cached["requests_per_s"] / reference["requests_per_s"]
                            rounds.append({"cached_read": cached, "bare_aiohttp": reference, "ratio": ratio})
                            print(
                                f"workers={workers}: cached /read {cached['requests_per_s']:8.0f} req/s "
                                f"p50 {cached['p50_ms']:5.1f} ms p99 {cached['p99_ms']:5.1f} ms | bare "
                                f"{reference['requests_per_s']:8.0f} req/s p99 {reference['p99_ms']:5.1f} ms"
                                f" | ratio {ratio:.2f}",
                                file=sys.stderr,
                                flush=True,
                            )
                    finally:
                        stop_process(bare_process)
                    summary = {
                        "rounds": rounds,
                        "median_ratio": statistics.median(r["ratio"] for r in rounds),
                        "median_cached_requests_per_s": statistics.median(
                            r["cached_read"]["requests_per_s"] for r in rounds
                        ),
                        "median_cached_p99_ms": statistics.median(r["cached_read"]["p99_ms"] for r in rounds),
                    }
                    if workers == 1:
                        summary["misses"] = [
                            asyncio.run(miss_overhead(upstream, server, args.misses))
                            for _ in range(args.rounds)
                        ]
                    report[f"workers_{workers}"] = summary
                finally:
                    stop_process(process)
    finally:
        stop_upstream.set()
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
