"""Proxy mode: pass-through throughput with wrk, against the upstream site directly, same run.

Starts the upstream test site (tests/support/upstream.py, in this process, its own thread) and
`readerproxy serve --proxy-port` as a separate process (memory cache, --allow-private, `--resolve
news.test:127.0.0.1`), then runs wrk (https://github.com/wg/wrk; `apt-get install wrk`) for a
bounded time on loopback, for each page:

- directly: `wrk http://127.0.0.1:UPSTREAM/PATH`;
- through the proxy: wrk connected to the proxy, its requests in absolute form
  (`GET http://news.test:UPSTREAM/PATH HTTP/1.1`, set by a wrk Lua script), as a browser sends them
  to an HTTP proxy.

The pages: /plain (a 326-byte HTML page, fetched as a subresource: `Accept: */*`, so it streams
through) and /binary (a small PNG). Every response must be a 200 (wrk's non-2xx count is printed).

    .venv/bin/python benchmarks/proxy_throughput.py [--seconds 10] [--connections 16] [--threads 2]
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from support.reader_server import free_port, start_server_process, stop_process  # noqa: E402
from support.upstream import Upstream  # noqa: E402

PAGES = ("/plain", "/binary")
_REQUESTS = re.compile(r"Requests/sec:\s*([\d.]+)")
_LATENCY = re.compile(r"Latency\s+([\d.]+)(us|ms|s)\b")
_TOTAL = re.compile(r"(\d+) requests in ")
_ERRORS = re.compile(r"Non-2xx or 3xx responses:\s*(\d+)|Socket errors:[^\n]*")
_UNITS = {"us": 0.001, "ms": 1.0, "s": 1000.0}


@dataclass(frozen=True)
class WrkRun:
    """What one wrk run measured."""

    requests_per_second: float
    mean_latency_ms: float
    requests: int
    errors: str  # wrk's non-2xx and socket error lines, or ""


def run_wrk(url: str, seconds: int, connections: int, threads: int, script: str | None) -> WrkRun:
    """wrk against `url` for `seconds` (a Lua `script` shapes the requests when given)."""
    command = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--timeout", "5s"]
    with tempfile.NamedTemporaryFile("w", suffix=".lua") as lua:
        if script is not None:
            lua.write(script)
            lua.flush()
            command += ["-s", lua.name]
        out = subprocess.run(
            [*command, url], capture_output=True, text=True, check=True, timeout=seconds + 30
        ).stdout
    rate, latency, total = _REQUESTS.search(out), _LATENCY.search(out), _TOTAL.search(out)
    if rate is None or latency is None or total is None:
        raise RuntimeError(f"unexpected wrk output:\n{out}")
    errors = "; ".join(match.group(0) for match in _ERRORS.finditer(out))
    return WrkRun(
        float(rate.group(1)), float(latency.group(1)) * _UNITS[latency.group(2)], int(total.group(1)), errors
    )


def proxy_script(target: str) -> str:
    """A wrk script whose requests are absolute-form, for the page at `target`, via a proxy."""
    host = target.split("/")[2]
    return f'wrk.path = "{target}"\nwrk.headers["Host"] = "{host}"\nwrk.headers["Accept"] = "*/*"\n'


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=int, default=10, help="each wrk run's duration")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is not installed (apt-get install wrk)")
    upstream = Upstream()
    upstream.start()
    proxy_port = free_port()
    options = ["--proxy-port", str(proxy_port), "--cache", "memory", "--allow-private", "--rate-limit", "0"]
    process, _ = start_server_process(*options, "--resolve", "news.test:127.0.0.1")
    rows = []
    try:
        for path in PAGES:
            direct = run_wrk(
                f"http://127.0.0.1:{upstream.port}{path}",
                args.seconds,
                args.connections,
                args.threads,
                'wrk.headers["Accept"] = "*/*"\n',
            )
            proxied = run_wrk(
                f"http://127.0.0.1:{proxy_port}/",
                args.seconds,
                args.connections,
                args.threads,
                proxy_script(f"http://news.test:{upstream.port}{path}"),
            )
            rows.append((path, direct, proxied))
    finally:
        stop_process(process)
        upstream.stop()
    print(
        f"wrk -t{args.threads} -c{args.connections} -d{args.seconds}s, loopback; "
        "upstream in this process (aiohttp, one thread), proxy in its own process"
    )
    print("| page | direct req/s (mean latency) | through the proxy req/s (mean latency) | ratio |")
    print("|---|---|---|---|")
    for path, direct, proxied in rows:
        print(
            f"| {path} | {direct.requests_per_second:,.0f} ({direct.mean_latency_ms:.2f} ms) "
            f"| {proxied.requests_per_second:,.0f} ({proxied.mean_latency_ms:.2f} ms) "
            f"| {proxied.requests_per_second / direct.requests_per_second:.2f} |"
        )
        for label, run in (("direct", direct), ("proxy", proxied)):
            if run.errors:
                print(f"  {path} {label}: {run.errors}")


if __name__ == "__main__":
    main()
