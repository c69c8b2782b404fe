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
through) and /binary (a small PNG); with `--navigation`, /plain again as a browser's navigation
(`Accept: text/html,…`: the reader addon buffers it and decides it is no article). Every response
must be a 200 (wrk's non-2xx count is printed).

Besides wrk's rate, the proxy process's CPU time per request (user + system, from /proc, over the
wrk run) is printed: on a shared machine it moves less than the rate does.

`--before TREE` measures another source tree's proxy in the same run (e.g. `git worktree add
/tmp/base HEAD`), as a process started from that tree, alternating with this one's page by page.

    .venv/bin/python benchmarks/proxy_throughput.py [--seconds 10] [--connections 16] [--threads 2]
        [--navigation] [--before /tmp/base]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from support.reader_server import free_port, stop_process, wait_healthy  # noqa: E402
from support.upstream import Upstream  # noqa: E402

PAGES = ("/plain", "/binary")
NAVIGATION_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
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
    cpu_us_per_request: float | None = None  # the proxy process's CPU time, when measured


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (all its threads), from /proc/PID/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_wrk(
    url: str, seconds: int, connections: int, threads: int, script: str | None, pid: int | None = None
) -> WrkRun:
    """wrk against `url` for `seconds` (a Lua `script` shapes the requests when given); with `pid`,
    that process's CPU time per request too."""
    command = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--timeout", "5s"]
    with tempfile.NamedTemporaryFile("w", suffix=".lua") as lua:
        if script is not None:
            lua.write(script)
            lua.flush()
            command += ["-s", lua.name]
        cpu_before = cpu_seconds(pid) if pid is not None else 0.0
        out = subprocess.run(
            [*command, url], capture_output=True, text=True, check=True, timeout=seconds + 30
        ).stdout
        cpu = cpu_seconds(pid) - cpu_before if pid is not None else None
    rate, latency, total = _REQUESTS.search(out), _LATENCY.search(out), _TOTAL.search(out)
    if rate is None or latency is None or total is None:
        raise RuntimeError(f"unexpected wrk output:\n{out}")
    errors = "; ".join(match.group(0) for match in _ERRORS.finditer(out))
    requests = int(total.group(1))
    return WrkRun(
        float(rate.group(1)),
        float(latency.group(1)) * _UNITS[latency.group(2)],
        requests,
        errors,
        cpu * 1e6 / requests if cpu is not None and requests else None,
    )


def proxy_script(target: str, accept: str = "*/*") -> str:
    """A wrk script whose requests are absolute-form, for the page at `target`, via a proxy."""
    host = target.split("/")[2]
    return f'wrk.path = "{target}"\nwrk.headers["Host"] = "{host}"\nwrk.headers["Accept"] = "{accept}"\n'


def start_proxy(tree: Path) -> tuple[subprocess.Popen[bytes], int]:
    """`readerproxy serve --proxy-port` from the source tree `tree` (memory cache, --allow-private,
    no rate limit, news.test resolved to 127.0.0.1); the process and its proxy port."""
    port, proxy_port = free_port(), free_port()
    command = [sys.executable, "-m", "readerproxy.cli", "serve", "--host", "127.0.0.1", "--port", str(port)]
    options = ["--proxy-port", str(proxy_port), "--cache", "memory", "--allow-private", "--rate-limit", "0"]
    process = subprocess.Popen(
        [*command, *options, "--resolve", "news.test:127.0.0.1"],
        cwd=tree,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_healthy(f"http://127.0.0.1:{port}", process)
    return process, proxy_port


def cell(run: WrkRun) -> str:
    cpu = f", {run.cpu_us_per_request:,.0f} µs CPU/req" if run.cpu_us_per_request is not None else ""
    return f"{run.requests_per_second:,.0f} ({run.mean_latency_ms:.2f} ms{cpu})"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=int, default=10, help="each wrk run's duration")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--navigation", action="store_true", help="also /plain as a navigation")
    parser.add_argument("--before", type=Path, help="another source tree's proxy, measured alongside")
    parser.add_argument("--smoke", action="store_true", help="1 s wrk runs (none without wrk)")
    args = parser.parse_args()
    have_wrk = shutil.which("wrk") is not None
    if not have_wrk and not args.smoke:
        raise SystemExit("wrk is not installed (apt-get install wrk)")
    if args.smoke:
        args.seconds, args.connections, args.threads = 1, 2, 1
    pages = [(path, "*/*") for path in PAGES]
    if args.navigation:
        pages.append(("/plain", NAVIGATION_ACCEPT))
    trees = [("before", args.before.resolve())] if args.before else []
    trees.append(("proxy", REPO))
    upstream = Upstream()
    upstream.start()
    proxies: list[tuple[str, subprocess.Popen[bytes], int]] = []
    rows = []
    try:
        for label, tree in trees:
            process, port = start_proxy(tree)
            proxies.append((label, process, port))
        for path, accept in pages if have_wrk else []:
            accept_line = f'wrk.headers["Accept"] = "{accept}"\n'
            runs = [
                (
                    "direct",
                    run_wrk(
                        f"http://127.0.0.1:{upstream.port}{path}",
                        args.seconds,
                        args.connections,
                        args.threads,
                        accept_line,
                    ),
                )
            ]
            for label, process, port in proxies:
                runs.append(
                    (
                        label,
                        run_wrk(
                            f"http://127.0.0.1:{port}/",
                            args.seconds,
                            args.connections,
                            args.threads,
                            proxy_script(f"http://news.test:{upstream.port}{path}", accept),
                            process.pid,
                        ),
                    )
                )
            rows.append((path if accept == "*/*" else f"{path} (navigation)", runs))
    finally:
        for _, process, _ in proxies:
            stop_process(process)
        upstream.stop()
    if not rows:  # a smoke run without wrk: the proxies started and stopped
        print("wrk is not installed: the smoke run skipped the wrk runs")
        return
    print(
        f"wrk -t{args.threads} -c{args.connections} -d{args.seconds}s, loopback; "
        "upstream in this process (aiohttp, one thread), each proxy in its own process"
    )
    labels = [label for label, _ in rows[0][1]]
    print("| page | " + " | ".join(f"{label} req/s (mean latency)" for label in labels) + " | ratio |")
    print("|---|" + "---|" * len(labels) + "---|")
    for path, runs in rows:
        direct = runs[0][1]
        ratios = ", ".join(
            f"{label} {run.requests_per_second / direct.requests_per_second:.2f}" for label, run in runs[1:]
        )
        print(f"| {path} | " + " | ".join(cell(run) for _, run in runs) + f" | {ratios} |")
        for label, run in runs:
            if run.errors:
                print(f"  {path} {label}: {run.errors}")


if __name__ == "__main__":
    main()
