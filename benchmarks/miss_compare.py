"""A miss on `server_load.py`'s 197 KB page, two source trees side by side in one run (not a test).

    .venv/bin/python benchmarks/miss_compare.py --before /tmp/old-tree [--rounds 3] [--misses 40]
    .venv/bin/python benchmarks/miss_compare.py --before /tmp/old-tree --accept-encoding "br, gzip"

Starts the local upstream of `server_load.py` and two `readerproxy serve --cache memory` processes,
one from `--before` and one from this tree (each with PYTHONPATH set to its own tree), then, per
miss, GETs the page from the upstream directly and `/read?url=…&refresh=1` from one server, the
two servers taking turns. Prints per round the p50 of (miss − bare fetch) for each tree and their
ratio, so both saw the same load. aiohttp's client sends `Accept-Encoding: gzip, deflate` (and
`br` when brotli is installed) unless `--accept-encoding` says otherwise, as in `server_load.py`.
Build the C kernels in both trees first (`python hatch_build.py`) to compare like with like.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

from aiohttp import ClientSession
from server_load import page_bytes, start_upstream

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from support.reader_server import free_port, stop_process, wait_healthy  # noqa: E402


def start_tree(tree: Path) -> tuple[subprocess.Popen[bytes], str]:
    """`readerproxy serve` from `tree`'s own code, as `server_load.start_server` runs it."""
    port = free_port()
    command = [sys.executable, "-m", "readerproxy.cli", "serve", "--host", "127.0.0.1", "--port", str(port)]
    options = ["--rate-limit", "0", "--cache", "memory", "--allow-private", "--workers", "1"]
    process = subprocess.Popen(
        [*command, *options],
        cwd=tree,
        env={**os.environ, "PYTHONPATH": str(tree)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    wait_healthy(base, process)
    return process, base


async def one_round(
    upstream: str, servers: dict[str, str], misses: int, headers: dict[str, str]
) -> dict[str, float]:
    """p50 of (miss − bare fetch) per server, the servers taking turns (3 warm-up misses dropped)."""
    target = upstream + "/page"
    added: dict[str, list[float]] = {name: [] for name in servers}
    async with ClientSession() as session:
        for i in range(misses + 3):
            for name, base in servers.items():
                began = time.perf_counter()
                async with session.get(target, headers={"Accept-Encoding": "gzip"}) as response:
                    await response.read()
                bare = time.perf_counter() - began
                began = time.perf_counter()
                query = urlencode({"url": target, "refresh": "1"})
                async with session.get(f"{base}/read?{query}", headers=headers) as response:
                    await response.read()
                    assert response.headers["X-Cache"] == "miss", response.headers
                read = time.perf_counter() - began
                if i >= 3:
                    added[name].append((read - bare) * 1000)
    return {name: statistics.median(values) for name, values in added.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", type=Path, help="source tree of the code to compare with (required)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--misses", type=int, default=40, help="misses per server and round")
    parser.add_argument("--accept-encoding", help='e.g. "br, gzip" (default: what aiohttp sends)')
    parser.add_argument("--smoke", action="store_true", help="this tree against itself, one round of 3")
    args = parser.parse_args()
    if args.smoke:
        args.before, args.rounds, args.misses = args.before or REPO, 1, 3
    elif args.before is None:
        parser.error("--before is required")
    headers = {"Accept-Encoding": args.accept_encoding} if args.accept_encoding is not None else {}
    upstream, stop_upstream = start_upstream(page_bytes())
    started = {"before": start_tree(args.before.resolve()), "now": start_tree(REPO)}
    try:
        servers = {name: base for name, (_, base) in started.items()}
        for number in range(1, args.rounds + 1):
            result = asyncio.run(one_round(upstream, servers, args.misses, headers))
            print(
                f"round {number}: added over the bare fetch, p50: before {result['before']:.1f} ms, "
                f"now {result['now']:.1f} ms, now/before {result['now'] / result['before']:.2f}",
                flush=True,
            )
    finally:
        for process, _ in started.values():
            stop_process(process)
        stop_upstream.set()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
