"""Hostile load run: 10,000 requests over 100 connections from 100 distinct addresses.

    .venv/bin/python benchmarks/hostile_load.py [--requests 10000] [--connections 100]
        [--timeout 60] [--limit 900] [--cache sqlite:/tmp/hl.sqlite --cache memory] [--json FILE]

Everything runs in subprocesses and over loopback TCP; nothing of readerproxy is imported (its
module layout changes), so the script only needs aiohttp:

- the upstream: this file again (`--serve-upstream PORT`), an aiohttp site on 127.0.0.1 serving the
  ScrapingHub dataset pages (gunzipped, `Cache-Control: max-age=3600`) and the hostile pages: a gzip
  bomb (256 MiB of zeros in 256 KB, `Content-Encoding: gzip`), a double-gzipped bomb (the body is a
  gzip file again once the transport gzip is undone), a 9 MB page of 200,000 links, 100,000 nested
  `<div>`s, an endless body (a paragraph every 0.5 s, at most 120 s), a redirect to 127.0.0.2 (where
  nothing listens), a redirect loop, and 2 MB of random bytes served as text/html;
- the server: `.venv/bin/readerproxy serve --cache SPEC --allow-private --rate-limit 0` (the rate
  limit off so the run is not a 429 test; the upstream is on loopback), its log in a file; once per
  `--cache` spec, a fresh server (and a fresh SQLite file) each time.

The plan is a fixed list of `--requests` requests (seeded, so both runs send the same list), sent by
`--connections` workers, each with its own `TCPConnector(limit=1, local_addr=(ADDR, 0))` on its own
loopback source address (127.0.0.10-127.0.0.59, 127.0.1.10-127.0.1.59), each request within
`--timeout` seconds, the whole run within `--limit` seconds:

- cached (70 %): `/read` and `/api/extract` of 30 dataset pages, all read once each way before
  the run (the warm-up) and not timed;
- uncached (15 %): `/read` or `/api/extract` of the other dataset pages, each under a URL never
  read before (`/u/N/PAGE`), so each is fetched, parsed and extracted;
- bad (12 %): malformed URLs (`http://[::1/`, a 64-character label, an empty host, a bad port,
  `%zz`), non-http schemes, an over-long `url` (3,000 characters) and an over-long request line
  (9,000), unknown algorithms, out-of-range, malformed and other algorithms' parameters, `model=`,
  an unknown format, no `url`, bad JSON and a `model` in a POST body;
- hostile (3 %): the hostile pages above, each under a URL never read before.

Reported per run: per category the status counts and p50/p99 latency; 5xx by status (503s with and
without Retry-After, and their error kinds where the answer is JSON); cached reads not 200; every
500 with its request; the RSS (VmRSS) of the server and of each child process before and after;
Chromium processes (none expected: no `render=1` in this run).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import gzip
import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import zlib
from pathlib import Path
from urllib.parse import quote, urlencode

from aiohttp import ClientSession, ClientTimeout, TCPConnector, web

REPO = Path(__file__).resolve().parent.parent
DATASET = REPO.parent / "shared" / "datasets" / "scrapinghub" / "html"
READERPROXY = REPO / ".venv" / "bin" / "readerproxy"
HOT_PAGES = 30
CATEGORIES = ("cached", "uncached", "bad", "hostile")
HOSTILE = (
    "bomb",
    "double-gzip",
    "links-9mb",
    "nested-100k",
    "endless",
    "redirect-127.0.0.2",
    "redirect-loop",
    "binary",
)


# --- the upstream site (its own process) -------------------------------------------------------


def gzip_bomb(size: int = 256 * 1024 * 1024) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: a gzip header and trailer
    zeros = bytes(1024 * 1024)
    return b"".join(packer.compress(zeros) for _ in range(size // len(zeros))) + packer.flush()


def hostile_bodies() -> dict[str, bytes]:
    bomb = gzip_bomb()
    links = "".join(f'<a href="/l{i:06d}">link number {i:06d}</a>\n' for i in range(200_000))
    return {
        "bomb": bomb,
        "double-gzip": gzip.compress(bomb, 9),
        "links-9mb": f"<html><head><title>Links</title></head><body>{links}</body></html>".encode(),
        "nested-100k": (
            "<html><body>" + "<div>" * 100_000 + "<p>deep text</p>" + "</div>" * 100_000 + "</body></html>"
        ).encode(),
        "binary": random.Random(28).randbytes(2 * 1024 * 1024),
    }


def serve_upstream(port: int) -> None:
    pages = {path.name.removesuffix(".html.gz"): path for path in sorted(DATASET.glob("*.html.gz"))}
    bodies = hostile_bodies()
    cache = {"Cache-Control": "max-age=3600"}

    async def page(request: web.Request) -> web.Response:
        path = pages.get(request.match_info["name"])
        if path is None:
            raise web.HTTPNotFound()
        body = gzip.decompress(path.read_bytes())
        return web.Response(body=body, headers={"Content-Type": "text/html", **cache})

    async def hostile(request: web.Request) -> web.StreamResponse:
        kind = request.match_info["kind"]
        if kind in ("bomb", "double-gzip"):
            headers = {"Content-Type": "text/html", "Content-Encoding": "gzip", **cache}
            return web.Response(body=bodies[kind], headers=headers)
        if kind == "redirect-127.0.0.2":
            raise web.HTTPFound(f"http://127.0.0.2:{port}/p/{next(iter(pages))}")
        if kind == "redirect-loop":
            raise web.HTTPFound(f"/h/redirect-loop?hop={int(request.query.get('hop', '0')) + 1}")
        if kind == "endless":
            response = web.StreamResponse(headers={"Content-Type": "text/html"})
            await response.prepare(request)
            await response.write(b"<html><body>")
            try:
                for n in range(240):  # at most 120 s, then the body ends
                    await asyncio.sleep(0.5)
                    await response.write(b"<p>still coming %d</p>\n" % n)
            except (ConnectionResetError, RuntimeError):
                return response
            await response.write_eof()
            return response
        if kind in bodies:
            return web.Response(body=bodies[kind], headers={"Content-Type": "text/html", **cache})
        raise web.HTTPNotFound()

    app = web.Application()
    app.router.add_get("/p/{name}", page)
    app.router.add_get("/u/{n}/{name}", page)
    app.router.add_get("/h/{kind}", hostile)
    print("ready", flush=True)
    web.run_app(app, host="127.0.0.1", port=port, access_log=None, print=None)


# --- processes and memory ----------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_ready(url: str, process: subprocess.Popen[bytes], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{process.args} exited with {process.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=1):
                return
        except urllib.error.HTTPError:
            return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer within {timeout} s")


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def descendants(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            kids = [int(p) for p in task.read_text().split()]
        except OSError:
            continue
        for kid in kids:
            found += [kid, *descendants(kid)]
    return found


def status_field(pid: int, field: str) -> str:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


def memory(pid: int) -> list[dict]:
    """The server and each of its descendants: pid, name, command line (short), VmRSS and VmHWM in MB."""
    rows = []
    for n, p in enumerate([pid, *descendants(pid)]):
        try:
            cmdline = Path(f"/proc/{p}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            cmdline = ""
        rss = status_field(p, "VmRSS").split()
        hwm = status_field(p, "VmHWM").split()
        rows.append(
            {
                "pid": p,
                "role": "server" if n == 0 else "child",
                "name": status_field(p, "Name"),
                "cmd": cmdline[:90],
                "rss_mb": round(int(rss[0]) / 1024, 1) if rss else None,
                "peak_mb": round(int(hwm[0]) / 1024, 1) if hwm else None,
            }
        )
    return rows


def chromium_processes(pids: list[int]) -> list[int]:
    return [pid for pid in pids if "chrom" in status_field(pid, "Name").lower()]


# --- the plan ----------------------------------------------------------------------------------

Request = tuple[str, str, str, str, bytes | None, str]  # category, label, method, path, body, content type


def plan(total: int, upstream: str, names: list[str], seed: int = 28) -> tuple[list[Request], list[Request]]:
    """The warm-up requests and the fixed, seeded list of `total` requests."""
    rng = random.Random(seed)
    hot, cold = names[:HOT_PAGES], names[HOT_PAGES:]

    def read(route: str, target: str, **query: str) -> str:
        return f"{route}?{urlencode({'url': target, **query})}"

    warm = [
        ("warm", route, "GET", read(route, f"{upstream}/p/{name}"), None, "")
        for name in hot
        for route in ("/read", "/api/extract")
    ]
    page = f"{upstream}/p/{hot[0]}"
    bad: list[tuple[str, str, str, bytes | None, str]] = [
        ("ipv6-unclosed", "GET", read("/read", "http://[::1/"), None, ""),
        ("ipv6-unclosed-api", "GET", read("/api/extract", "http://[::1/"), None, ""),
        ("label-64", "GET", read("/read", f"http://{'a' * 64}.test/"), None, ""),
        ("label-64-api", "GET", read("/api/extract", f"http://{'b' * 64}.example/x"), None, ""),
        ("empty-host", "GET", read("/read", "http:///x"), None, ""),
        ("bad-port", "GET", read("/read", "http://127.0.0.1:99999/"), None, ""),
        ("percent-in-port", "GET", read("/api/extract", "http://127.0.0.1:8%zz/"), None, ""),
        ("space-host", "GET", read("/read", "http://exa mple.test/"), None, ""),
        ("javascript", "GET", read("/read", "javascript:alert(1)"), None, ""),
        ("file", "GET", read("/api/extract", "file:///etc/passwd"), None, ""),
        ("ftp", "GET", read("/read", "ftp://127.0.0.1/x"), None, ""),
        ("data", "GET", read("/read", "data:text/html,<p>x</p>"), None, ""),
        ("long-url-3000", "GET", read("/read", f"{upstream}/p/" + "d" * 3000), None, ""),
        ("negative-port", "GET", read("/api/extract", "http://127.0.0.1:-1/"), None, ""),
        ("long-line-9000", "GET", read("/read", f"{upstream}/p/" + "e" * 9000), None, ""),
        ("unknown-algo", "GET", read("/read", page, algo="nope"), None, ""),
        ("unknown-algo-api", "GET", read("/api/extract", page, algo="../../etc"), None, ""),
        ("out-of-range", "GET", read("/read", page, algo="accb", iterations="1000000000"), None, ""),
        ("not-a-number", "GET", read("/api/extract", page, algo="density", c1="abc"), None, ""),
        ("nan", "GET", read("/api/extract", page, algo="density", c1="nan"), None, ""),
        ("other-algos-param", "GET", read("/read", page, algo="density", iterations="3"), None, ""),
        ("model-param", "GET", read("/api/extract", page, algo="learned", model="/etc/passwd"), None, ""),
        ("unknown-format", "GET", read("/read", page, format="xml"), None, ""),
        ("no-url", "GET", "/read", None, ""),
        ("no-url-api", "GET", "/api/extract", None, ""),
        ("bad-json", "POST", "/api/extract", b'{"url": ', "application/json"),
        (
            "post-model",
            "POST",
            "/api/extract",
            json.dumps({"url": page, "algorithm": "learned", "params": {"model": "/dev/stdin"}}).encode(),
            "application/json",
        ),
        ("post-json-list", "POST", "/api/extract", b"[1, 2, 3]", "application/json"),
    ]
    requests: list[Request] = []
    uncached = 0
    for i in range(total):
        roll = rng.random()
        route = rng.choice(("/read", "/api/extract"))
        if roll < 0.70:
            name = rng.choice(hot)
            requests.append(("cached", route, "GET", read(route, f"{upstream}/p/{name}"), None, ""))
        elif roll < 0.85:
            target = f"{upstream}/u/{i}/{cold[uncached % len(cold)]}"
            uncached += 1
            requests.append(("uncached", route, "GET", read(route, target), None, ""))
        elif roll < 0.97:
            label, method, path, body, ctype = rng.choice(bad)
            requests.append(("bad", label, method, path, body, ctype))
        else:
            kind = rng.choice(HOSTILE)
            target = f"{upstream}/h/{kind}?n={i}"
            requests.append(("hostile", f"{kind} {route}", "GET", read(route, target), None, ""))
    return warm, requests


# --- the load ----------------------------------------------------------------------------------


def source_addresses(count: int) -> list[str]:
    addresses = [f"127.0.0.{n}" for n in range(10, 60)] + [f"127.0.1.{n}" for n in range(10, 60)]
    return (
        addresses[:count]
        if count <= len(addresses)
        else [f"127.2.{n // 250}.{n % 250 + 1}" for n in range(count)]
    )


async def send(
    http: ClientSession, base: str, request: Request, timeout: float
) -> tuple[str, float, bool, str]:
    """(status, seconds, has Retry-After, "kind|message" of a JSON error answer)."""
    _, _, method, path, body, ctype = request
    headers = {"Content-Type": ctype} if ctype else {}
    t0 = time.monotonic()
    retry_after, kind = False, ""
    try:
        async with asyncio.timeout(timeout):
            async with http.request(method, base + path, data=body, headers=headers) as r:
                data = await r.read()
                status = str(r.status)
                retry_after = "Retry-After" in r.headers
                if r.status >= 400 and r.content_type == "text/html":
                    text = data.decode("utf-8", "replace")
                    title = re.search(r"<title>(.*?)</title>", text, re.S)
                    para = re.search(r"<p[^>]*>([^<]{10,}?)</p>", text, re.S)
                    kind = f"html|{(title.group(1).strip() if title else '')} / {(para.group(1).strip() if para else '')}"[
                        :160
                    ]
                elif r.status >= 400 and r.content_type == "application/json":
                    try:
                        error = json.loads(data).get("error", {})
                        if isinstance(error, dict):
                            kind = f"{error.get('kind', '')}|{str(error.get('message', ''))[:120]}"
                        else:
                            kind = f"|{str(error)[:120]}"
                    except (ValueError, AttributeError):
                        pass
    except TimeoutError:
        status = "client-timeout"
    except Exception as exc:  # a dropped connection is a result here
        status = type(exc).__name__
    return status, time.monotonic() - t0, retry_after, kind


async def warm_up(base: str, warm: list[Request], timeout: float) -> list[tuple[str, str]]:
    """Each hot page read once per route, one at a time (not timed); the reads that were not 200."""
    warm_bad = []
    async with ClientSession(timeout=ClientTimeout(total=None)) as http:
        for request in warm:
            status, _, _, _ = await send(http, base, request, timeout)
            if status != "200":
                warm_bad.append((request[3], status))
    return warm_bad


async def load(base: str, requests: list[Request], args: argparse.Namespace) -> dict:
    results: list[tuple[Request, str, float, bool, str, float]] = []
    sessions = [
        ClientSession(
            connector=TCPConnector(limit=1, local_addr=(address, 0), force_close=False),
            timeout=ClientTimeout(total=None),
        )
        for address in source_addresses(args.connections)
    ]
    queue: asyncio.Queue[Request] = asyncio.Queue()
    for request in requests:
        queue.put_nowait(request)

    async def worker(http: ClientSession) -> None:
        while not queue.empty():
            request = queue.get_nowait()
            status, seconds, retry_after, kind = await send(http, base, request, args.timeout)
            results.append((request, status, seconds, retry_after, kind, time.monotonic() - began))

    began = time.monotonic()
    tasks = [asyncio.ensure_future(worker(session)) for session in sessions]
    stopped_early = False
    try:
        async with asyncio.timeout(args.limit):
            await asyncio.gather(*tasks)
    except TimeoutError:
        stopped_early = True
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    elapsed = time.monotonic() - began
    for session in sessions:
        await session.close()
    return {"results": results, "seconds": elapsed, "stopped_early": stopped_early}


def quantile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, max(0, int(len(ordered) * q + 0.5) - 1))] * 1000, 1)


def summarise(outcome: dict) -> dict:
    by_category: dict[str, collections.Counter[str]] = {c: collections.Counter() for c in CATEGORIES}
    latency: dict[str, list[float]] = {c: [] for c in CATEGORIES}
    by_label: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    five_xx: collections.Counter[str] = collections.Counter()
    five_xx_detail: collections.Counter[str] = collections.Counter()
    failures: list[dict] = []
    cached_not_200: list[dict] = []
    messages: dict[str, str] = {}
    for request, status, seconds, retry_after, kind_message, done_at in outcome["results"]:
        category, label, method, path = request[:4]
        kind, _, message = kind_message.partition("|")
        if message:
            messages.setdefault(f"{category}: {label.split()[0]} {status}", f"{kind}: {message}")
        by_category[category][status] += 1
        latency[category].append(seconds)
        if category in ("bad", "hostile"):
            by_label[f"{category}: {label}"][status] += 1
        if status.startswith("5"):
            five_xx[status] += 1
            detail = f"{status} {category}"
            if status == "503":
                detail += " with Retry-After" if retry_after else " WITHOUT Retry-After"
            five_xx_detail[f"{detail} ({kind or '-'})"] += 1
        if status == "500" or not status[:1].isdigit():
            failures.append(
                {"category": category, "label": label, "method": method, "path": path[:300], "status": status}
            )
        if category == "cached" and status != "200":
            cached_not_200.append(
                {
                    "label": label,
                    "path": path[:300],
                    "status": status,
                    "answer": kind_message,
                    "done_at_s": round(done_at, 1),
                    "took_s": round(seconds, 2),
                }
            )
    return {
        "requests": len(outcome["results"]),
        "seconds": round(outcome["seconds"], 1),
        "by_category": {c: dict(by_category[c]) for c in CATEGORIES},
        "latency_ms": {c: {"p50": quantile(v, 0.5), "p99": quantile(v, 0.99)} for c, v in latency.items()},
        "by_label": {k: dict(v) for k, v in sorted(by_label.items())},
        "messages": dict(sorted(messages.items())),
        "5xx": dict(five_xx),
        "5xx_detail": dict(five_xx_detail),
        "failures": failures,
        "cached_not_200": cached_not_200,
        "warm_not_200": outcome["warm_not_200"],
        "stopped_early": outcome["stopped_early"],
    }


def table(spec: str, summary: dict, before: list[dict], after: list[dict], chromium: list[int]) -> str:
    lines = [
        f"### `--cache {spec}`: {summary['requests']} requests in {summary['seconds']} s"
        + (" (stopped at --limit)" if summary["stopped_early"] else ""),
        "",
        "| category | requests | statuses | p50 ms | p99 ms |",
        "| --- | ---: | --- | ---: | ---: |",
    ]
    for c in CATEGORIES:
        counts = summary["by_category"][c]
        statuses = ", ".join(f"{s}: {n}" for s, n in sorted(counts.items()))
        lat = summary["latency_ms"][c]
        lines.append(f"| {c} | {sum(counts.values())} | {statuses} | {lat['p50']} | {lat['p99']} |")
    lines += ["", "| bad / hostile request | statuses |", "| --- | --- |"]
    for label, counts in summary["by_label"].items():
        lines.append(f"| {label} | {', '.join(f'{s}: {n}' for s, n in sorted(counts.items()))} |")
    lines += [
        "",
        "| process | pid | RSS before MB | RSS after MB | peak (VmHWM) MB |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    after_by_pid = {row["pid"]: row for row in after}
    for row in before + [r for r in after if r["pid"] not in {b["pid"] for b in before}]:
        now = after_by_pid.get(row["pid"], {})
        was = row if row in before else {}
        lines.append(
            f"| {row['role']} {row['name']} | {row['pid']} | {was.get('rss_mb', '-')} | "
            f"{now.get('rss_mb', 'gone')} | {now.get('peak_mb', '-')} |"
        )
    total_before = sum(r["rss_mb"] or 0 for r in before)
    total_after = sum(r["rss_mb"] or 0 for r in after)
    lines += [
        f"| all | | {total_before:.1f} | {total_after:.1f} | |",
        "",
        f"- 5xx by status: {summary['5xx'] or 'none'}",
        f"- 5xx detail: {summary['5xx_detail'] or 'none'}",
        f"- 500s: {sum(1 for f in summary['failures'] if f['status'] == '500')}"
        f" (must be 0); no status at all: {sum(1 for f in summary['failures'] if f['status'] != '500')}",
        f"- cached reads not 200: {len(summary['cached_not_200'])} (must be 0)",
        f"- warm-up reads not 200: {len(summary['warm_not_200'])}",
        f"- Chromium processes under the server: {len(chromium)} (none expected: no render=1)",
    ]
    return "\n".join(lines)


def run_once(spec: str, upstream: str, names: list[str], args: argparse.Namespace) -> dict:
    if spec.startswith("sqlite:"):
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(spec.removeprefix("sqlite:") + suffix).unlink(missing_ok=True)
    port = free_port()
    log_path = Path(f"/tmp/hostile_load-{spec.split(':')[0]}-{port}.log")
    command = [
        str(READERPROXY), "serve", "--host", "127.0.0.1", "--port", str(port), "--cache", spec,
        "--allow-private", "--rate-limit", "0", *args.server_option,
    ]  # fmt: skip
    with log_path.open("wb") as log:
        server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd="/tmp")
    base = f"http://127.0.0.1:{port}"
    try:
        wait_ready(base + "/healthz", server)
        warm, requests = plan(args.requests, upstream, names)
        time.sleep(1)
        started = memory(server.pid)
        warm_bad = asyncio.run(warm_up(base, warm, args.timeout))
        time.sleep(1)
        before = memory(server.pid)
        outcome = asyncio.run(load(base, requests, args))
        outcome["warm_not_200"] = warm_bad
        time.sleep(2)
        after = memory(server.pid)
        chromium = chromium_processes(descendants(server.pid))
        try:
            with urllib.request.urlopen(base + "/metrics", timeout=10) as r:
                metrics = [
                    line
                    for line in r.read().decode().splitlines()
                    if not line.startswith("#")
                    and any(w in line for w in ("cache", "extraction_jobs", "evict"))
                ]
        except OSError as exc:
            metrics = [f"/metrics failed: {exc}"]
        try:
            with urllib.request.urlopen(base + "/healthz", timeout=10) as r:
                healthy = r.status
        except OSError as exc:
            healthy = str(exc)
    finally:
        stop(server)
    summary = summarise(outcome)
    summary |= {
        "cache": spec,
        "rss_started": started,
        "rss_before": before,
        "rss_after": after,
        "chromium": chromium,
    }
    summary |= {
        "metrics_after": metrics,
        "healthz_after": healthy,
        "server_log": str(log_path),
        "exit_code": server.returncode,
    }
    print(table(spec, summary, before, after, chromium))
    print(f"- RSS at start, before the warm-up: {[(r['name'], r['pid'], r['rss_mb']) for r in started]}")
    print(f"- /healthz after the run: {healthy}; server exit code on SIGTERM: {server.returncode}")
    log_text = log_path.read_text(errors="replace").splitlines()
    worrying = [line for line in log_text if any(w in line for w in ("Traceback", "ERROR", "Error", "500"))]
    print(f"- server log: {log_path} ({len(log_text)} lines, {len(worrying)} with Traceback/ERROR/Error/500)")
    for line in worrying[:20]:
        print(f"    {line[:200]}")
    print("- /metrics after the run (cache and extraction lines):")
    for line in metrics:
        print(f"    {line}")
    print("- error answers, one sample per request kind and status:")
    for key, message in summary["messages"].items():
        print(f"    {key}: {message}")
    for failure in summary["failures"][:20]:
        print(f"- FAILURE {failure}")
    for miss in summary["cached_not_200"][:20]:
        print(f"- CACHED NOT 200 {miss}")
    print(flush=True)
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=10_000)
    parser.add_argument("--connections", type=int, default=100)
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per request")
    parser.add_argument("--limit", type=float, default=900.0, help="seconds for the whole run")
    parser.add_argument("--cache", action="append", help="cache specs, one run each")
    parser.add_argument("--server-option", action="append", default=[], help="one more `serve` argument")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--serve-upstream", type=int, metavar="PORT", help=argparse.SUPPRESS)
    parser.add_argument("--smoke", action="store_true", help="40 requests over 4 connections, memory cache")
    args = parser.parse_args()
    if args.smoke:
        args.requests, args.connections, args.limit, args.cache = 40, 4, 120.0, ["memory"]
    if args.serve_upstream:
        serve_upstream(args.serve_upstream)
        return
    names = sorted(path.name.removesuffix(".html.gz") for path in DATASET.glob("*.html.gz"))
    random.Random(1).shuffle(names)
    port = free_port()
    upstream_process = subprocess.Popen(
        [sys.executable, __file__, "--serve-upstream", str(port)], stdout=subprocess.DEVNULL
    )
    upstream = f"http://127.0.0.1:{port}"
    summaries = []
    try:
        wait_ready(f"{upstream}/p/{quote(names[0])}", upstream_process)
        print(
            f"upstream {upstream} (pid {upstream_process.pid}, {len(names)} dataset pages, "
            f"{HOT_PAGES} hot); {args.requests} requests, {args.connections} connections from distinct "
            f"addresses, {args.timeout:g} s per request, {args.limit:g} s per run\n",
            flush=True,
        )
        for spec in args.cache or ["sqlite:/tmp/hl.sqlite", "memory"]:
            summaries.append(run_once(spec, upstream, names, args))
    finally:
        stop(upstream_process)
    if args.json:
        args.json.write_text(json.dumps(summaries, indent=1))


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
