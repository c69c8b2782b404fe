"""Proxy mode's transport: the latency the proxy adds, and the time to first byte of a slow page.

Starts the upstream test site over http and https (tests/support/upstream.py, in threads of this
process) and two `readerproxy serve --proxy-port` processes (memory cache, --allow-private,
`--resolve`): one plain, one with `--intercept-https` (its CA in a temporary data directory, the
test site's CA trusted upstream). With one keep-alive aiohttp client, the median of N requests
(after 5 warm-up requests) directly and through the proxy, in the same run:

- pass-through navigation: GET /plain (an HTML page that is no article) with a browser's Accept;
- article: GET /article with a browser's Accept (through the proxy: the reader view);
- image: GET /binary (a small PNG);
- through interception: GET https://secure.test/binary and /article through the intercepting proxy
  (the CONNECT tunnel kept alive: the cost per request inside it).

Then the time to first byte (and to the last) of a page trickling in over 4 s, directly and through
the proxy (`--reader-wait`, default 1 s).

    .venv/bin/python benchmarks/proxy_transport.py [--requests 20]
"""

from __future__ import annotations

import argparse
import asyncio
import ssl
import statistics
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "tests" / "proxy"))

from support.reader_server import free_port, start_server_process, stop_process  # noqa: E402
from support.upstream import Upstream, make_tls_upstream  # noqa: E402
from test_proxy_transport import serve_site  # noqa: E402

HTML_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"


async def timed(
    http: aiohttp.ClientSession,
    url: str,
    n: int,
    proxy: str | None,
    accept: str,
    context: ssl.SSLContext | bool,
) -> list[float]:
    samples = []
    for index in range(5 + n):
        began = time.perf_counter()
        async with http.get(url, proxy=proxy, headers={"Accept": accept}, ssl=context) as r:
            await r.read()
            assert r.status == 200, (url, r.status)
        if index >= 5:
            samples.append((time.perf_counter() - began) * 1000)
    return samples


async def first_byte(url: str, proxy: str | None) -> tuple[float, float]:
    async with aiohttp.ClientSession() as http:
        began = time.perf_counter()
        async with http.get(url, proxy=proxy, headers={"Accept": HTML_ACCEPT}) as r:
            await r.content.readany()
            first = time.perf_counter() - began
            await r.read()
        return first, time.perf_counter() - began


async def measure(
    upstream: Upstream, secure: Upstream, plain_proxy: str, intercepting: str, ca_pem: Path, n: int
) -> None:
    proxy_ca = ssl.create_default_context(cafile=str(ca_pem))
    rows = [
        ("pass-through navigation /plain", "/plain", HTML_ACCEPT, False),
        ("article /article (reader view)", "/article", HTML_ACCEPT, False),
        ("image /binary", "/binary", "*/*", False),
        ("intercepted https /binary", "/binary", "*/*", True),
        ("intercepted https /article (reader view)", "/article", HTML_ACCEPT, True),
    ]
    print(f"median of {n} (ms): direct | through the proxy | added")
    for label, path, accept, tls in rows:
        # a fresh client per row: connections (and the intercepted tunnel) kept alive within it
        async with aiohttp.ClientSession() as http:
            if tls:
                # direct: by address, so the certificate (for secure.test) is not checked
                direct = await timed(http, f"https://127.0.0.1:{secure.port}{path}", n, None, accept, False)
                proxied = await timed(
                    http, f"https://secure.test:{secure.port}{path}", n, intercepting, accept, proxy_ca
                )
            else:
                direct = await timed(http, f"http://127.0.0.1:{upstream.port}{path}", n, None, accept, True)
                proxied = await timed(
                    http, f"http://news.test:{upstream.port}{path}", n, plain_proxy, accept, True
                )
        d, p = statistics.median(direct), statistics.median(proxied)
        print(f"{label}: {d:.2f} | {p:.2f} | {p - d:+.2f}")
    with tempfile.TemporaryDirectory() as directory:
        async with serve_site(Path(directory)) as site:
            for label, url, proxy in (
                ("direct", f"http://127.0.0.1:{site.port}/trickle?s=4", None),
                ("through the proxy", f"http://news.test:{site.port}/trickle?s=4", plain_proxy),
            ):
                first, last = await first_byte(url, proxy)
                print(
                    f"page trickling over 4 s, {label}: first byte {first * 1000:.0f} ms, last {last:.2f} s"
                )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=20)
    parser.add_argument("--smoke", action="store_true", help="two requests of each kind")
    args = parser.parse_args()
    if args.smoke:
        args.requests = 2
    upstream = Upstream()
    upstream.start()
    with tempfile.TemporaryDirectory() as data:
        secure = make_tls_upstream(Path(data))
        secure.start()
        common = [
            "--cache",
            "memory",
            "--allow-private",
            "--resolve",
            "news.test:127.0.0.1,secure.test:127.0.0.1",
        ]
        plain_port, intercept_port = free_port(), free_port()
        plain, _ = start_server_process("--proxy-port", str(plain_port), *common)
        env = {"XDG_DATA_HOME": str(Path(data) / "xdg")}
        intercepting, _ = start_server_process(
            "--proxy-port",
            str(intercept_port),
            "--intercept-https",
            "--upstream-ca",
            str(secure.ca_file),
            *common,
            env=env,
        )
        try:
            ca_pem = Path(data) / "xdg" / "readerproxy" / "ca" / "readerproxy-ca.pem"
            for _ in range(100):  # the CA is made on start-up
                if ca_pem.exists():
                    break
                time.sleep(0.05)
            asyncio.run(
                measure(
                    upstream,
                    secure,
                    f"http://127.0.0.1:{plain_port}",
                    f"http://127.0.0.1:{intercept_port}",
                    ca_pem,
                    args.requests,
                )
            )
        finally:
            stop_process(plain)
            stop_process(intercepting)
            secure.stop()
            upstream.stop()


if __name__ == "__main__":
    main()
