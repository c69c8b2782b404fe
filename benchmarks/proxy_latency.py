"""Proxy mode: the latency the proxy adds, and its memory while streaming a large download.

Starts the upstream test site (tests/support/upstream.py, in this process) and `readerproxy serve
--proxy-port` as a separate process (memory cache, --allow-private, `--resolve news.test:127.0.0.1`),
then measures with one keep-alive aiohttp client:

- pass-through: GET /binary (a small PNG) directly and through the proxy;
- reader navigation: GET /article with a browser's Accept header directly (the raw page) and
  through the proxy (the reader view: the page is buffered, extracted, rendered);
- non-article navigations: wcxb-dev product pages whose head names a schema.org Product or
  og:type product, directly, through the proxy (streamed from the end of their head), and through
  the proxy with the head's types hidden (`hide=1`, same length: buffered whole and extracted, as
  every non-article was before 2026-11-26), each with the time to the response head and to the
  whole body;
- memory: the proxy process's RSS (VmRSS sampled every 10 ms, and VmHWM) while a download of
  MB megabytes streams through it to a client that discards it.

`--repeat` instead measures a repeat visit to an article (median of `--requests`, all in one
run): the page fetched directly, passed through the proxy (`Accept: */*`, streamed as
it comes), its reader view on a first visit (a new URL each time: extracted), and its reader view
on a repeat visit (the same bytes again: the kept extraction rendered, since 2026-12-07).

`--sniff` instead measures the early decision itself over the 1,310 wcxb-dev pages: how many
pages of each type their head already shows to be no article (`addons.HeadSniffer`, fed 64 KB at a
time as the proxy feeds it), and
how many of those the full pipeline would have made reader views (`Article.readerable`).

    .venv/bin/python benchmarks/proxy_latency.py [--requests 20] [--mb 20]
    .venv/bin/python benchmarks/proxy_latency.py --sniff
    .venv/bin/python benchmarks/proxy_latency.py --repeat [--requests 20]
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

import aiohttp

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "tests" / "proxy"))

from soak import rss_kb  # noqa: E402
from support.reader_server import free_port, start_server_process, stop_process  # noqa: E402
from test_proxy import WCXB, DatasetSite  # noqa: E402

from readerproxy.proxy.addons import HeadSniffer  # noqa: E402
from readerproxy.web.settings import load_settings  # noqa: E402

HTML_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
#: wcxb-dev product pages that the full pipeline passes through too (so "before" is a pass-through):
#: 15 KB (og:type product) and 322 KB (og:type product).
NON_ARTICLES = ("4720", "0582")


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


async def timed_head(
    http: aiohttp.ClientSession, url: str, n: int, proxy: str | None
) -> tuple[list[float], list[float], bool]:
    """Times to the response head and to the whole body (ms), and whether it was a reader view."""
    heads, wholes = [], []
    reader = False
    for i in range(n + 3):  # three to warm up
        began = time.perf_counter()
        async with http.get(url, proxy=proxy, headers={"Accept": HTML_ACCEPT}) as r:
            head = time.perf_counter()
            await r.read()
            reader = reader or "X-Readerproxy" in r.headers
        if i >= 3:
            heads.append((head - began) * 1000)
            wholes.append((time.perf_counter() - began) * 1000)
    return heads, wholes, reader


def summary(samples: list[float]) -> str:
    q = statistics.quantiles(samples, n=100)
    return f"median {statistics.median(samples):.2f} ms, p90 {q[89]:.2f} ms"


async def non_articles(http: aiohttp.ClientSession, upstream: DatasetSite, proxy_url: str, n: int) -> None:
    print(
        f"\nnon-article navigations (median of {n}; head = time to the response head, whole = to the last byte)"
    )
    print(
        "| page | direct head / whole | proxy, streamed from its head | proxy, head hidden (buffered, extracted) | added, streamed | added, buffered |"
    )
    print("|---|---|---|---|---|---|")
    for page in NON_ARTICLES:
        size = len(gzip.decompress((WCXB / "html" / f"{page}.html.gz").read_bytes()))
        direct = await timed_head(http, f"http://127.0.0.1:{upstream.port}/wcxb/{page}", n, None)
        streamed = await timed_head(http, f"http://news.test:{upstream.port}/wcxb/{page}", n, proxy_url)
        buffered = await timed_head(
            http, f"http://news.test:{upstream.port}/wcxb/{page}?hide=1", n, proxy_url
        )
        med = [(statistics.median(h), statistics.median(w)) for h, w, _ in (direct, streamed, buffered)]
        reader = " (a reader view!)" if streamed[2] or buffered[2] else ""
        print(
            f"| wcxb-dev {page} ({size / 1000:.0f} KB){reader} | {med[0][0]:.2f} / {med[0][1]:.2f} ms "
            f"| {med[1][0]:.2f} / {med[1][1]:.2f} ms | {med[2][0]:.2f} / {med[2][1]:.2f} ms "
            f"| +{med[1][1] - med[0][1]:.2f} ms | +{med[2][1] - med[0][1]:.2f} ms |"
        )


#: Articles of the upstream test site for `--repeat`: its own small one, and Readability's ars-1
#: (56 KB) and wapo-1 (180 KB).
REPEAT_PAGES = ("/article", "/rd/ars-1", "/rd/wapo-1")


async def repeat_visits(upstream: DatasetSite, proxy_url: str, n: int) -> None:
    """Direct, passed through, first and repeat reader views of the same articles, one run."""
    direct_host = f"http://127.0.0.1:{upstream.port}"
    named = f"http://news.test:{upstream.port}"
    print(f"repeat visits (median of {n}, ms, one keep-alive client; added = over direct)")
    print("| page | direct | passed through | reader view, first visit | reader view, repeat visit |")
    print("|---|---|---|---|---|")
    async with aiohttp.ClientSession() as http:
        for path in REPEAT_PAGES:
            async with http.get(direct_host + path) as r:
                size = len(await r.read())
            direct = await timed(http, direct_host + path, n, None, HTML_ACCEPT)
            passed = await timed(http, named + path, n, proxy_url, "*/*")
            first = []
            sep = "&" if "?" in path else "?"
            for i in range(n):  # a new URL each time: nothing kept for it
                began = time.perf_counter()
                async with http.get(
                    f"{named}{path}{sep}first={time.time_ns()}-{i}",
                    proxy=proxy_url,
                    headers={"Accept": HTML_ACCEPT},
                ) as r:
                    await r.read()
                    assert r.headers.get("X-Readerproxy") == "reader-view", path
                first.append((time.perf_counter() - began) * 1000)
            repeat = await timed(http, named + path, n, proxy_url, HTML_ACCEPT)
            base = statistics.median(direct)
            cells = [
                f"{statistics.median(x):.2f} (+{statistics.median(x) - base:.2f})"
                for x in (passed, first, repeat)
            ]
            print(f"| {path} ({size / 1000:.0f} KB) | {base:.2f} | {' | '.join(cells)} |")


def sniff_corpus() -> None:
    """The early decision over wcxb-dev: pages per type, and the full pipeline's answer on those."""
    import readerproxy

    files = json.loads((WCXB / "metadata.json").read_text())["files"]
    settings = load_settings({}, env={})
    totals: Counter[str] = Counter()
    early: Counter[str] = Counter()
    would_read: Counter[str] = Counter()
    seconds = 0.0
    for page_id, info in files.items():
        kind = info["page_type"]
        totals[kind] += 1
        page = gzip.decompress((WCXB / "html" / f"{page_id}.html.gz").read_bytes())
        began = time.perf_counter()
        sniff = HeadSniffer("", settings, f"https://{info['domain']}/")
        chunks = (page[i : i + 64 * 1024] for i in range(0, len(page), 64 * 1024))
        reason = next((found for chunk in chunks if (found := sniff(chunk)) is not None), None)
        seconds += time.perf_counter() - began
        if reason is not None:
            early[kind] += 1
            if readerproxy.extract(page, url=f"https://{info['domain']}/").readerable:
                would_read[kind] += 1
    print("| wcxb-dev type | pages | streamed from the head | of those, reader views before |")
    print("|---|---|---|---|")
    for kind, total in totals.most_common():
        print(f"| {kind} | {total} | {early[kind]} | {would_read[kind]} |")
    print(f"\nthe decision on the head: {seconds / len(files) * 1000:.3f} ms a page (mean, one thread)")


async def measure(upstream: DatasetSite, proxy_url: str, pid: int, n: int, mb: int) -> None:
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
        await non_articles(http, upstream, proxy_url, n)
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
    parser.add_argument("--requests", type=int, default=20)
    parser.add_argument("--mb", type=int, default=20)
    parser.add_argument("--sniff", action="store_true", help="the early decision over wcxb-dev instead")
    parser.add_argument("--repeat", action="store_true", help="repeat visits to articles instead")
    parser.add_argument("--smoke", action="store_true", help="two requests of each kind, a 1 MB download")
    args = parser.parse_args()
    if args.smoke:
        args.requests, args.mb = 2, 1
    if args.sniff:
        sniff_corpus()
        return
    upstream = DatasetSite()
    upstream.start()
    proxy_port = free_port()
    options = ["--proxy-port", str(proxy_port), "--cache", "memory", "--allow-private"]
    process, _ = start_server_process(*options, "--resolve", "news.test:127.0.0.1")
    try:
        if args.repeat:
            asyncio.run(repeat_visits(upstream, f"http://127.0.0.1:{proxy_port}", args.requests))
            return
        asyncio.run(measure(upstream, f"http://127.0.0.1:{proxy_port}", process.pid, args.requests, args.mb))
    finally:
        stop_process(process)
        upstream.stop()


if __name__ == "__main__":
    main()
