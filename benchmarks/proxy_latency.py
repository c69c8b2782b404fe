"""Proxy mode: the latency the proxy adds, and its memory while streaming a large download.

Starts the upstream test site (tests/support/upstream.py, in this process) and `readerproxy serve
--proxy-port` as a separate process (memory cache, --allow-private, `--resolve news.test:127.0.0.1`),
then measures with one keep-alive aiohttp client:

- pass-through: GET /binary (a small PNG) directly and through the proxy;
- reader navigation: GET /article with a browser's Accept header directly (the raw page) and
  through the proxy (the reader view: the page is buffered, extracted, rendered);
- memory: the proxy process's RSS (VmRSS sampled every 10 ms, and VmHWM) while a download of
  MB megabytes streams through it to a client that discards it.

    .venv/bin/python benchmarks/proxy_latency.py [--requests 200] [--mb 20]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

import aiohttp

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from soak import rss_kb  # noqa: E402
from support.reader_server import free_port, start_server_process, stop_process  # noqa: E402
from support.upstream import Upstream  # noqa: E402

HTML_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"


async def timed(http: aiohttp.ClientSession, url: str, n: int, proxy: str | None, accept: str) -> list[float]:
    samples = []
    for _ in range(5):  # warm up the connections
        async with http.get(url, proxy=proxy, headers={"Accept": accept}) as r:
            await r.read()
    for _ in range(n):
        began = time.perf_counter()
        async with http.get(url, proxy=proxy, headers={"Accept": accept}) as r:
            await r.read()
        samples.append((time.perf_counter() - began) * 1000)
    return samples


def summary(samples: list[float]) -> str:
    q = statistics.quantiles(samples, n=100)
    return f"median {statistics.median(samples):.2f} ms, p90 {q[89]:.2f} ms"


async def measure(upstream: Upstream, proxy_url: str, pid: int, n: int, mb: int) -> None:
    direct_host = f"http://127.0.0.1:{upstream.port}"
    named = f"http://news.test:{upstream.port}"
    async with aiohttp.ClientSession() as http:
        for label, path, accept in (
            ("pass-through /binary", "/binary", "*/*"),
            ("reader navigation /article", "/article", HTML_ACCEPT),
        ):
            direct = await timed(http, direct_host + path, n, None, accept)
            proxied = await timed(http, named + path, n, proxy_url, accept)
            added = statistics.median(proxied) - statistics.median(direct)
            print(
                f"{label}: direct {summary(direct)}; through the proxy {summary(proxied)}; "
                f"added (median) {added:.2f} ms"
            )
        baseline = rss_kb(pid)
        peak = baseline
        received = 0
        began = time.perf_counter()
        async with http.get(f"{named}/download?mb={mb}", proxy=proxy_url) as r:
            async for chunk in r.content.iter_chunked(256 * 1024):
                received += len(chunk)
                peak = max(peak, rss_kb(pid))
        seconds = time.perf_counter() - began
        print(
            f"download {mb} MB through the proxy: {received / 1e6:.1f} MB in {seconds:.2f} s "
            f"({received / 1e6 / seconds:.0f} MB/s); proxy RSS before {baseline / 1024:.1f} MiB, "
            f"peak while streaming {peak / 1024:.1f} MiB (+{(peak - baseline) / 1024:.1f} MiB), "
            f"VmHWM {rss_kb(pid, 'VmHWM') / 1024:.1f} MiB"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--mb", type=int, default=20)
    args = parser.parse_args()
    upstream = Upstream()
    upstream.start()
    proxy_port = free_port()
    options = ["--proxy-port", str(proxy_port), "--cache", "memory", "--allow-private"]
    process, _ = start_server_process(*options, "--resolve", "news.test:127.0.0.1")
    try:
        asyncio.run(measure(upstream, f"http://127.0.0.1:{proxy_port}", process.pid, args.requests, args.mb))
    finally:
        stop_process(process)
        upstream.stop()


if __name__ == "__main__":
    main()
