"""Proxy mode's cost against direct, all in one run: the table of
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
        [--rounds 3] [--before /tmp/base] [--wrk-only]

`--rounds N` repeats the wrk runs N times (direct, then each proxy, in turn), each round's ratios
from its own runs, and prints the medians. `--before TREE` also measures another source tree's
proxy (e.g. `git archive HEAD | tar -x -C /tmp/base`, plus the built `readerproxy/_native*.so`),
its wrk runs interleaved with this tree's. `--wrk-only` skips the latency rows.

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

from proxy_throughput import WrkRun, proxy_script, run_wrk  # noqa: E402
from support.reader_server import free_port, stop_process, wait_healthy  # noqa: E402
from support.upstream import Upstream  # noqa: E402

NAVIGATION = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
PAGE_100K = "/generated/cost?kb=100"
#: Readability's iab-1 (102 KB; ../shared/datasets beside the repository), a reader view.
ARTICLE_100K = "/rd/iab-1"


def start_proxy(profile: Path | None, tree: Path = REPO) -> tuple[subprocess.Popen[bytes], int]:
    """`readerproxy serve --proxy-port` from the source tree `tree` (under cProfile with `profile`)."""
    port, proxy_port = free_port(), free_port()
    python = [sys.executable, *(["-m", "cProfile", "-o", str(profile)] if profile else [])]
    command = [*python, "-m", "readerproxy.cli", "serve", "--host", "127.0.0.1", "--port", str(port)]
    options = ["--proxy-port", str(proxy_port), "--cache", "memory", "--allow-private", "--rate-limit", "0"]
    process = subprocess.Popen(
        [*command, *options, "--resolve", "news.test:127.0.0.1"],
        cwd=tree,
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
    parser.add_argument("--rounds", type=int, default=1, help="wrk rounds (direct and proxies in turn)")
    parser.add_argument("--before", type=Path, help="another source tree's proxy, measured alongside")
    parser.add_argument("--wrk-only", action="store_true", help="skip the latency rows")
    parser.add_argument("--smoke", action="store_true", help="3 latency samples, one 1 s wrk round if any")
    args = parser.parse_args()
    have_wrk = shutil.which("wrk") is not None
    if not have_wrk and not args.smoke:
        raise SystemExit("wrk is not installed (apt-get install wrk)")
    if args.smoke:
        args.requests, args.seconds, args.connections, args.threads, args.rounds = 3, 1, 2, 1, 1
    upstream = Upstream()
    upstream.start()
    rows: list[tuple[str, float, float]] = []
    rounds: list[dict[str, WrkRun]] = []
    try:
        trees = [("before", args.before.resolve())] if args.before else []
        proxies = [(label, *start_proxy(None, tree)) for label, tree in [*trees, ("proxy", REPO)]]
        try:
            proxy_port = proxies[-1][2]
            if not args.wrk_only:
                rows = asyncio.run(latency(upstream.port, f"http://127.0.0.1:{proxy_port}", args.requests))
            if args.profile is None and have_wrk:
                wrk_args = (args.seconds, args.connections, args.threads)
                script = proxy_script(f"http://news.test:{upstream.port}{PAGE_100K}")
                for _ in range(args.rounds):
                    runs = {
                        "direct": run_wrk(f"http://127.0.0.1:{upstream.port}{PAGE_100K}", *wrk_args, None)
                    }
                    for label, running, port in proxies:
                        runs[label] = run_wrk(f"http://127.0.0.1:{port}/", *wrk_args, script, running.pid)
                    rounds.append(runs)
        finally:
            for _, running, _ in proxies:
                stop_process(running)
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
    if rows:
        print(f"latency: median of {args.requests}, one keep-alive aiohttp client, alternating")
        print("| measure | baseline ms | through the proxy ms | added ms |")
        print("|---|---|---|---|")
        for label, base, through in rows:
            print(f"| {label} | {base:.2f} | {through:.2f} | {through - base:+.2f} |")
    if not rounds:  # a smoke run without wrk
        print("wrk is not installed: the smoke run skipped the wrk rounds")
        return
    print(f"\nwrk -t{args.threads} -c{args.connections} -d{args.seconds}s, {PAGE_100K} (Accept */*), req/s:")
    labels = [label for label in rounds[0] if label != "direct"]
    ratios: dict[str, list[float]] = {label: [] for label in labels}
    for number, runs in enumerate(rounds, 1):
        direct = runs["direct"]
        cells = [f"direct {direct.requests_per_second:,.0f}"]
        for label in labels:
            run = runs[label]
            ratio = run.requests_per_second / direct.requests_per_second
            ratios[label].append(ratio)
            cells.append(
                f"{label} {run.requests_per_second:,.0f} ({run.cpu_us_per_request or 0:,.0f} µs CPU/req), "
                f"ratio {ratio:.2f}"
            )
        print(f"  round {number}: " + "; ".join(cells))
        for label, run in runs.items():
            if run.errors:
                print(f"    {label}: {run.errors}")
    for label in labels:
        print(f"  median ratio, {label}: {statistics.median(ratios[label]):.2f}")


if __name__ == "__main__":
    main()
