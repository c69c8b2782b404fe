"""Resident memory of a server process against its configured cache bounds (not a test).

    .venv/bin/python benchmarks/memory.py [--pages 1000] [--requests 10000] [--memory-cache-mb 32]
        [--concurrency 8] [--phases 2] [--posts 60] [--post-mb 9] [--idle 30]
    .venv/bin/python benchmarks/memory.py --smoke   # 200 pages, 2,000 requests, 1 phase, 10 s idle

1. A loopback upstream (aiohttp, its own thread) serves `--pages` distinct pages, `/p/<i>`: the
   dataset pages (ScrapingHub, then Readability) in turn, each with its number written into the
   title and the first paragraph of its body, so that no two pages are the same bytes or give the
   same extraction. Cacheable for an hour.
2. `readerproxy serve --cache memory --memory-cache-bytes B --rate-limit 0` runs as one process.
3. Each phase sends `--requests` GET /read requests with `--concurrency` connections: first every
   page once (shuffled), then the rest drawn with Zipf-like popularity (weight 1/rank), from a fixed
   seed, so that popular pages are hits and the long tail keeps missing and evicting.
4. Reported: the server process's RSS (VmRSS from /proc) at start, after each phase, and its peak
   (sampled every 0.2 s); the RSS of its child processes (extraction workers, their forkserver); and the bounds of the in-process
   caches: the memory LRU (`--memory-cache-bytes`), the rendered-page LRU and the two decoded-value
   memos. Memory is within bounds when RSS after the phases is at most start + the sum of the
   bounds, and when a second phase adds little over the first (a plateau, not a leak).
5. A burst of `--posts` concurrent `POST /api/extract` of `--post-mb` MB each from one address (the
   case that bounded bodies answer: 60 × 9 MB took the server from 163 to 1,345 MB, and it stayed there), or from
   `--post-clients` loopback addresses in turn; answers counted by status, RSS after it and its peak.
6. After `--idle` seconds with no request, RSS again: memory a burst took should come back (issue
   46: 138 → 830 → 797 MB after two idle minutes of a 10k-request load). `--smoke` runs a short
   version of all of it (about a minute), for checking a change; the full run is the measurement.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import json
import random
import re
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from urllib.parse import urlencode

from aiohttp import ClientError, ClientSession, ClientTimeout, TCPConnector, web

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from support.reader_server import free_port, start_server_process, stop_process  # noqa: E402

from readerproxy.api import to_text  # noqa: E402
from readerproxy.research.datasets import load_dataset  # noqa: E402
from readerproxy.web.page_cache import DecodedMemo  # noqa: E402
from readerproxy.web.ready_pages import READY_PAGES_BYTES  # noqa: E402
from readerproxy.web.server import RENDERED_PAGES_BYTES  # noqa: E402

MIB = 1024 * 1024


def rss_bytes(pid: int) -> int:
    """VmRSS of a process (0 once it has gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    found = re.search(r"^VmRSS:\s+(\d+) kB", status, re.M)
    return int(found.group(1)) * 1024 if found else 0


def descendants(pid: int) -> list[int]:
    """Child processes, their children, ... (the extraction workers sit below a forkserver)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(p) for p in (task / "children").read_text().split()]
        except OSError:
            continue
    return [p for child in found for p in (child, *descendants(child))]


def distinct_pages(count: int) -> list[bytes]:
    """`count` different pages made from the shared datasets (number in the title and body)."""
    sources = [
        to_text(page.read_bytes())
        for name in ("scrapinghub", "readability")
        for page in load_dataset(name).pages
    ]
    pages = []
    for index in range(count):
        text = sources[index % len(sources)]
        marker = f"page {index} of the memory benchmark"
        text = re.sub(r"(<title[^>]*>)", rf"\g<1>{marker}: ", text, count=1, flags=re.I)
        text = re.sub(r"(<body[^>]*>)", rf"\g<1><p>This is {marker}.</p>", text, count=1, flags=re.I)
        pages.append(text.encode("utf-8"))
    return pages


def start_upstream(pages: list[bytes]) -> tuple[str, threading.Event]:
    port = free_port()
    ready, stop = threading.Event(), threading.Event()

    async def page(request: web.Request) -> web.Response:
        index = int(request.match_info["index"])
        if not 0 <= index < len(pages):
            raise web.HTTPNotFound()
        return web.Response(
            body=pages[index],
            content_type="text/html",
            charset="utf-8",
            headers={"Cache-Control": "max-age=3600"},
        )

    def run() -> None:
        async def serve() -> None:
            app = web.Application()
            app.router.add_get("/p/{index}", page)
            runner = web.AppRunner(app, access_log=None)
            await runner.setup()
            await web.TCPSite(runner, "127.0.0.1", port).start()
            ready.set()
            while not stop.is_set():
                await asyncio.sleep(0.1)
            await runner.cleanup()

        asyncio.run(serve())

    threading.Thread(target=run, daemon=True).start()
    ready.wait(10)
    return f"http://127.0.0.1:{port}", stop


def start_server(memory_cache_bytes: int) -> tuple[str, subprocess.Popen[bytes]]:
    options = ["--cache", "memory", "--memory-cache-bytes", str(memory_cache_bytes), "--rate-limit", "0"]
    # Every request comes from 127.0.0.1, standing for many readers: no per-client limits.
    options += ["--allow-private", "--extract-per-client", "2", "--extract-workers", "2"]
    process, base = start_server_process(*options)
    return base, process


def request_order(pages: int, requests: int, rng: random.Random) -> list[int]:
    """Every page once (shuffled), then Zipf-like draws (weight 1/rank) up to `requests`."""
    order = list(range(pages))
    rng.shuffle(order)
    popularity = list(range(pages))
    rng.shuffle(popularity)
    weights = [1 / (rank + 1) for rank in range(pages)]
    return order + rng.choices(popularity, weights, k=max(0, requests - pages))


async def send(server: str, upstream: str, order: list[int], concurrency: int) -> dict[str, int]:
    """GET /read for every page in `order` with `concurrency` connections; answers by X-Cache/status."""
    counts: dict[str, int] = {}
    queue = iter(order)
    timeout = ClientTimeout(total=60)
    async with ClientSession(connector=TCPConnector(limit=concurrency), timeout=timeout) as session:

        async def worker() -> None:
            for index in queue:
                url = server + "/read?" + urlencode({"url": f"{upstream}/p/{index}"})
                async with session.get(url) as response:
                    await response.read()
                    key = f"{response.status} {response.headers.get('X-Cache', '-')}"
                    counts[key] = counts.get(key, 0) + 1

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return counts


async def post_burst(server: str, posts: int, size: int, clients: int = 1) -> dict[str, int]:
    """`posts` concurrent POST /api/extract of `size` bytes of HTML each, on connections of their own
    from `clients` loopback addresses (127.0.0.1, 127.0.0.2, ... in turn); answers by status ("error"
    for a connection the server closed)."""
    paragraph = b"<p>" + b"A paragraph of a large posted page, as a client might send it. " * 8 + b"</p>\n"
    body = b"<html><head><title>Posted</title></head><body><article>"
    body += paragraph * max(1, (size - len(body)) // len(paragraph)) + b"</article></body></html>"
    counts: dict[str, int] = {}
    timeout = ClientTimeout(total=300)
    sessions = [
        ClientSession(
            connector=TCPConnector(limit=0, force_close=True, local_addr=(f"127.0.0.{1 + number}", 0)),
            timeout=timeout,
        )
        for number in range(max(1, min(clients, 250)))
    ]

    async def post(index: int) -> None:
        url = server + "/api/extract?" + urlencode({"url": f"https://example.com/posted/{index}"})
        key = "error"
        try:
            session = sessions[index % len(sessions)]
            async with session.post(url, data=body, headers={"Content-Type": "text/html"}) as response:
                await response.read()
                key = str(response.status)
        except (TimeoutError, OSError, ClientError):
            pass
        counts[key] = counts.get(key, 0) + 1

    try:
        await asyncio.gather(*(post(i) for i in range(posts)))
    finally:
        for session in sessions:
            await session.close()
    return counts


@dataclass(frozen=True, slots=True)
class Phase:
    requests: int
    answers: dict[str, int]
    seconds: float
    server_rss_mib: float
    server_peak_rss_mib: float
    child_processes_rss_mib: list[float]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--requests", type=int, default=10_000, help="requests per phase")
    parser.add_argument("--phases", type=int, default=2)
    parser.add_argument("--memory-cache-mb", type=float, default=32.0)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--posts", type=int, default=60, help="concurrent large POSTs from one address")
    parser.add_argument("--post-mb", type=float, default=9.0, help="size of each POST body")
    parser.add_argument("--post-clients", type=int, default=1, help="addresses the POSTs come from")
    parser.add_argument("--idle", type=float, default=30.0, help="seconds idle before the last RSS")
    parser.add_argument(
        "--smoke", action="store_true", help="a short run: 200 pages, 2,000 requests, 1 phase, 10 s idle"
    )
    args = parser.parse_args()
    if args.smoke:
        args.pages, args.requests, args.phases, args.idle = 200, 2000, 1, 10.0

    memory_cache_bytes = int(args.memory_cache_mb * MIB)
    memo_bytes = inspect.signature(DecodedMemo).parameters["max_bytes"].default
    bounds = {
        "memory_cache_mib": memory_cache_bytes / MIB,
        "rendered_pages_mib": RENDERED_PAGES_BYTES / MIB,
        "ready_pages_mib": READY_PAGES_BYTES / MIB,
        "decoded_memos_mib": 2 * memo_bytes / MIB,  # pages and results
    }
    bounds["sum_mib"] = sum(bounds.values())
    pages = distinct_pages(args.pages)
    upstream, stop_upstream = start_upstream(pages)
    server, process = start_server(memory_cache_bytes)
    rng = random.Random(args.seed)
    peak = 0
    sampling = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not sampling.is_set():
            peak = max(peak, rss_bytes(process.pid))
            time.sleep(0.2)

    phases: list[Phase] = []
    try:
        time.sleep(1.0)  # let the extraction workers finish starting
        start_rss = rss_bytes(process.pid)
        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        for number in range(args.phases):
            began = time.perf_counter()
            answers = asyncio.run(
                send(server, upstream, request_order(args.pages, args.requests, rng), args.concurrency)
            )
            seconds = time.perf_counter() - began
            phase = Phase(
                requests=args.requests,
                answers=answers,
                seconds=round(seconds, 1),
                server_rss_mib=round(rss_bytes(process.pid) / MIB, 1),
                server_peak_rss_mib=round(max(peak, rss_bytes(process.pid)) / MIB, 1),
                child_processes_rss_mib=[round(rss_bytes(pid) / MIB, 1) for pid in descendants(process.pid)],
            )
            phases.append(phase)
            print(f"phase {number + 1}: {json.dumps(asdict(phase))}", file=sys.stderr, flush=True)
        burst: dict[str, object] = {}
        if args.posts > 0:
            peak = 0
            before = rss_bytes(process.pid)
            began = time.perf_counter()
            answers = asyncio.run(post_burst(server, args.posts, int(args.post_mb * MIB), args.post_clients))
            burst = {
                "posts": args.posts,
                "post_mib": args.post_mb,
                "post_clients": args.post_clients,
                "answers": answers,
                "seconds": round(time.perf_counter() - began, 1),
                "server_rss_before_mib": round(before / MIB, 1),
                "server_peak_rss_mib": round(max(peak, rss_bytes(process.pid)) / MIB, 1),
                "server_rss_after_mib": round(rss_bytes(process.pid) / MIB, 1),
            }
            print(f"post burst: {json.dumps(burst)}", file=sys.stderr, flush=True)
        time.sleep(args.idle)
        idle_rss = rss_bytes(process.pid)
    finally:
        sampling.set()
        stop_process(process)
        stop_upstream.set()
    final = phases[-1].server_rss_mib if phases else 0.0
    report = {
        "pages": args.pages,
        "page_mib_total": round(sum(map(len, pages)) / MIB, 1),
        "bounds": bounds,
        "server_rss_at_start_mib": round(start_rss / MIB, 1),
        "phases": [asdict(phase) for phase in phases],
        "growth_over_start_mib": round(final - start_rss / MIB, 1),
        "within_bounds": final <= start_rss / MIB + bounds["sum_mib"],
        "post_burst": burst,
        "idle_seconds": args.idle,
        "server_rss_after_idle_mib": round(idle_rss / MIB, 1),
        "idle_within_bounds": idle_rss / MIB <= start_rss / MIB + bounds["sum_mib"],
    }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
