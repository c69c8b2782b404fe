"""Memory soak: distinct big pages through /read, resident memory after each.

    .venv/bin/python benchmarks/soak.py [--pages 100] [--kb 5120] [--limit 600]

Starts the upstream test site (tests/support/upstream.py, loopback, its own thread, `/generated/<key>`:
a distinct article of about `--kb` KB per key) and `readerproxy serve --cache memory` as a process
(extraction workers are its children). Reads `--pages` distinct pages one after another and prints
the resident memory (RSS) of the server and of server + workers after each; stops at `--limit`
seconds whatever happens. Then a single 9 MB page: the peak resident size of the worker that
extracted it (the server process itself only passes bytes). Loopback only; bounded in pages and time.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlencode

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from support.reader_server import free_port, start_server_process, stop_process  # noqa: E402
from support.upstream import Upstream  # noqa: E402


def rss_kb(pid: int, field: str = "VmRSS") -> int:
    """A /proc/PID/status size in kB (VmRSS, or e.g. VmHWM for the peak); 0 once the process has gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def children(pid: int) -> list[int]:
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
    found = [int(p) for p in out]
    for child in list(found):
        found += children(child)
    return found


def start_server(port: int, *extra: str) -> subprocess.Popen[bytes]:
    """`readerproxy serve --cache memory --rate-limit 0` on `port`, once /healthz answers."""
    options = ["--cache", "memory", "--allow-private", "--rate-limit", "0", *extra]
    return start_server_process(*options, port=port)[0]


def get(url: str, timeout: float = 120) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=100)
    parser.add_argument("--kb", type=int, default=5120)
    parser.add_argument("--limit", type=float, default=600.0)
    parser.add_argument("--json", type=Path, help="write the numbers here too")
    parser.add_argument("--smoke", action="store_true", help="two 64 KB pages and a 256 KB one")
    args = parser.parse_args()
    if args.smoke:
        args.pages, args.kb, args.limit = 2, 64, 120.0
    big_kb = 256 if args.smoke else 9216  # the peak page
    upstream = Upstream()
    upstream.start()
    port = free_port()
    server = start_server(port, "--extract-timeout", "120")
    base = f"http://127.0.0.1:{port}"
    began = time.monotonic()
    samples = []
    try:
        before = rss_kb(server.pid)
        print(f"server RSS before: {before / 1024:.0f} MB")
        for i in range(args.pages):
            if time.monotonic() - began > args.limit:
                print("time limit reached")
                break
            target = upstream.url(f"/generated/soak-{i}?kb={args.kb}")
            t0 = time.monotonic()
            status, _ = get(f"{base}/read?{urlencode({'url': target})}")
            took = time.monotonic() - t0
            kids = children(server.pid)
            main_rss = rss_kb(server.pid)
            total = main_rss + sum(rss_kb(k) for k in kids)
            samples.append(
                {
                    "page": i + 1,
                    "status": status,
                    "seconds": round(took, 2),
                    "server_mb": round(main_rss / 1024, 1),
                    "total_mb": round(total / 1024, 1),
                }
            )
            print(
                f"page {i + 1:3d} status {status} {took:5.2f} s  server {main_rss / 1024:6.1f} MB  "
                f"server+workers {total / 1024:6.1f} MB",
                flush=True,
            )
        # the peak for one 9 MB page: the worker's high-water mark (fresh workers: restart the server)
        stop_process(server)
        server = start_server(port, "--extract-timeout", "120", "--extract-workers", "1")
        kids = children(server.pid)
        worker_before = {k: rss_kb(k, "VmHWM") for k in kids}
        main_before = rss_kb(server.pid)
        status, _ = get(f"{base}/read?{urlencode({'url': upstream.url(f'/generated/nine?kb={big_kb}')})}")
        worker_peak = max(
            (rss_kb(k, "VmHWM") - worker_before.get(k, 0) for k in children(server.pid)), default=0
        )
        main_after = rss_kb(server.pid)
        peak = {
            "status": status,
            "page_mb": 9,
            "worker_peak_growth_mb": round(worker_peak / 1024, 1),
            "worker_peak_mb": round(
                max((rss_kb(k, "VmHWM") for k in children(server.pid)), default=0) / 1024, 1
            ),
            "server_growth_mb": round((main_after - main_before) / 1024, 1),
        }
        print("9 MB page:", json.dumps(peak))
        if args.json:
            args.json.write_text(
                json.dumps(
                    {"before_mb": round(before / 1024, 1), "samples": samples, "nine_mb_page": peak}, indent=1
                )
            )
    finally:
        stop_process(server)
        upstream.stop()


if __name__ == "__main__":
    main()
