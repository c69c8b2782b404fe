"""Proxy mode's cost against direct, all in one run (issue 45, item 6): the table of
docs/benchmarks.md's "Proxy mode cost" section.

Starts the upstream test site (tests/support/upstream.py, in this process, its own thread) and
`readerproxy serve --proxy-port` as a separate process (memory cache, --allow-private, no rate
limit, `--resolve news.test:127.0.0.1`), then, on loopback:

1. latency, one keep-alive aiohttp client, `--requests` samples of each, direct and proxied
   requests alternating (so that a busy moment of the shared machine hits both alike), medians:
   - a navigation passed through: /plain (a 326-byte page that is no article) with a browser's
     navigation Accept header: buffered whole, judged no article, sent as it came;
   - a 100 KB page passed through as a subresource (`Accept: */*`): streamed;
   - a repeat reader view of a 100 KB article (Readability's iab-1, 102 KB, from ../shared/datasets;
     visited once before): the kept extraction rendered with the visitor's preferences, against
     the same page passed through (`Accept: */*`);
2. throughput with wrk (`apt-get install wrk`) on the 100 KB page as a subresource, directly and
   through the proxy (absolute-form requests), `--seconds` each, `--connections` connections;
   the ratio is proxy / direct requests per second, same run.

    .venv/bin/python benchmarks/proxy_cost.py [--requests 300] [--seconds 10] [--connections 16]

`--profile FILE` runs the proxy under cProfile during the wrk run only (its own process, written
when it stops) and prints the top functions by cumulative and by own time.
"""

from __future__ import annotations

import argparse
import asyncio
import pstats
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import aiohttp

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "benchmarks"))

from proxy_throughput import proxy_script, run_wrk  # noqa: E402
from support.reader_server import free_port, stop_process, wait_healthy  # noqa: E402
from support.upstream import Upstream  # noqa: E402

NAVIGATION = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
PAGE_100K = "/generated/cost?kb=100"
#: Readability's iab-1 (102 KB; ../shared/datasets beside the repository), a reader view.
ARTICLE_100K = "/rd/iab-1"


def start_proxy(profile: Path | None) -> tuple[subprocess.Popen[bytes], int]:
    """`readerproxy serve --proxy-port` from this tree (under cProfile with `profile`)."""
    port, proxy_port = free_port(), free_port()
    python = [sys.executable, *(["-m", "cProfile", "-o", str(profile)] if profile else [])]
    command = [*python, "-m", "readerproxy.cli", "serve", "--host", "127.0.0.1", "--port", str(port)]
    options = ["--proxy-port", str(proxy_port), "--cache", "memory", "--allow-private", "--rate-limit", "0"]
    process = subprocess.Popen(
        [*command, *options, "--resolve", "news.test:127.0.0.1"],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_healthy(f"http://127.0.0.1:{port}", process)
    return process, proxy_port


async def paired(
    http: aiohttp.ClientSession,
    first: tuple[str, str | None, str],
    second: tuple[str, str | None, str],
    n: int,
) -> tuple[list[float], list[float]]:
    """`n` timings (ms) of each of two requests (url, proxy, accept), alternating, after a warm-up."""

    async def one(url: str, proxy: str | None, accept: str) -> float:
        began = time.perf_counter()
        async with http.get(url, proxy=proxy, headers={"Accept": accept}) as response:
            await response.read()
            assert response.status == 200, (url, response.status)
        return (time.perf_counter() - began) * 1000

    for _ in range(10):
        await one(*first)
        await one(*second)
    a, b = [], []
    for i in range(n):
        pair = (first, second) if i % 2 == 0 else (second, first)
        x = await one(*pair[0])
        y = await one(*pair[1])
        a.append(x if pair[0] is first else y)
        b.append(y if pair[0] is first else x)
    return a, b


async def latency(upstream: int, proxy: str, n: int) -> list[tuple[str, float, float]]:
    """(row, median ms of the baseline, median ms through the proxy) for each latency row."""
    direct = f"http://127.0.0.1:{upstream}"
    named = f"http://news.test:{upstream}"
    rows = []
    async with aiohttp.ClientSession() as http:
        base, through = await paired(
            http, (direct + "/plain", None, NAVIGATION), (named + "/plain", proxy, NAVIGATION), n
        )
        rows.append(("navigation passed through (/plain, 326 B) vs direct", base, through))
        base, through = await paired(
            http, (direct + PAGE_100K, None, "*/*"), (named + PAGE_100K, proxy, "*/*"), n
        )
        rows.append(("100 KB page passed through (streamed) vs direct", base, through))
        async with http.get(named + ARTICLE_100K, proxy=proxy, headers={"Accept": NAVIGATION}) as r:
            await r.read()  # the first visit: extracted and kept
            assert r.headers.get("X-Readerproxy") == "reader-view"
        base, through = await paired(
            http, (named + ARTICLE_100K, proxy, "*/*"), (named + ARTICLE_100K, proxy, NAVIGATION), n
        )
        rows.append(("repeat reader view (iab-1, 102 KB) vs its pass-through", base, through))
    return [(label, statistics.median(a), statistics.median(b)) for label, a, b in rows]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=300, help="latency samples of each request")
    parser.add_argument("--seconds", type=int, default=10, help="each wrk run's duration")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--profile", type=Path, help="cProfile the proxy during the wrk run into FILE")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is not installed (apt-get install wrk)")
    upstream = Upstream()
    upstream.start()
    try:
        process, proxy_port = start_proxy(None)
        try:
            rows = asyncio.run(latency(upstream.port, f"http://127.0.0.1:{proxy_port}", args.requests))
            if args.profile is None:
                wrk_args = (args.seconds, args.connections, args.threads)
                direct = run_wrk(f"http://127.0.0.1:{upstream.port}{PAGE_100K}", *wrk_args, None)
                script = proxy_script(f"http://news.test:{upstream.port}{PAGE_100K}")
                proxied = run_wrk(f"http://127.0.0.1:{proxy_port}/", *wrk_args, script, process.pid)
        finally:
            stop_process(process)
        if args.profile is not None:
            profiled, port = start_proxy(args.profile)
            try:
                script = proxy_script(f"http://news.test:{upstream.port}{PAGE_100K}")
                run_wrk(f"http://127.0.0.1:{port}/", args.seconds, args.connections, args.threads, script)
            finally:
                stop_process(profiled, timeout=30)
            stats = pstats.Stats(str(args.profile))
            stats.sort_stats("cumulative").print_stats(30)
            stats.sort_stats("tottime").print_stats(25)
            return
    finally:
        upstream.stop()
    print(f"latency: median of {args.requests}, one keep-alive aiohttp client, alternating")
    print("| measure | baseline ms | through the proxy ms | added ms |")
    print("|---|---|---|---|")
    for label, base, through in rows:
        print(f"| {label} | {base:.2f} | {through:.2f} | {through - base:+.2f} |")
    ratio = proxied.requests_per_second / direct.requests_per_second
    print(
        f"\nwrk -t{args.threads} -c{args.connections} -d{args.seconds}s, {PAGE_100K} (Accept */*): "
        f"direct {direct.requests_per_second:,.0f} req/s, proxy {proxied.requests_per_second:,.0f} "
        f"req/s ({proxied.cpu_us_per_request or 0:,.0f} µs proxy CPU/req), ratio {ratio:.2f}"
    )
    for label, run in (("direct", direct), ("proxy", proxied)):
        if run.errors:
            print(f"  {label}: {run.errors}")


if __name__ == "__main__":
    main()
