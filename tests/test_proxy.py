"""Proxy mode with aiohttp and raw sockets as the client: reader views, pass-through,
hop-by-hop headers, the SSRF guard, CONNECT, auth, the way back, edge cases of HTTP/1.1.

Every test talks to loopback only: the upstream test site is reached as `news.test` through the
proxy's `--resolve` map.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import dataclasses
import hashlib
import json
import ssl
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from support.reader_server import RunningServer, free_port, serve, test_settings
from support.upstream import Upstream

from readerproxy.proxy import ProxyServer
from readerproxy.proxy.addons import MARKER, strip_marker, with_marker
from readerproxy.proxy.flow import BadRequest, parse_request_head, prefers_html
from readerproxy.proxy.tls import CertificateAuthority, describe
from readerproxy.web.server import METRICS, READER, RENDERER
from readerproxy.web.settings import Settings, SettingsError, load_settings

HTML_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
RESOLVE = "news.test:127.0.0.1,secure.test:127.0.0.1,wrong.test:127.0.0.1"


@dataclass
class RunningProxy:
    proxy: ProxyServer
    server: RunningServer

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.proxy.port}"

    def metric(self, outcome: str) -> float:
        assert self.server.app is not None
        value = self.server.app[METRICS].registry.get_sample_value(
            "readerproxy_proxy_requests_total", {"outcome": outcome}
        )
        return value or 0.0


@contextlib.asynccontextmanager
async def running_proxy(
    ca: CertificateAuthority | None = None, **changes: Any
) -> AsyncIterator[RunningProxy]:
    """A reader server and a proxy sharing its Reader, Renderer and Metrics (proxy on an ephemeral port)."""
    settings: Settings = test_settings(resolve=RESOLVE, intercept_https=ca is not None, **changes)
    async with serve(settings) as server:
        assert server.app is not None
        app = server.app
        proxy = ProxyServer(settings, app[READER], app[RENDERER], app[METRICS], ca=ca)
        await proxy.start("127.0.0.1", 0)
        try:
            yield RunningProxy(proxy, server)
        finally:
            await proxy.close()


@pytest.fixture
async def proxy() -> AsyncIterator[RunningProxy]:
    async with running_proxy() as running:
        yield running


def site(upstream: Upstream, path: str) -> str:
    return f"http://news.test:{upstream.port}{path}"


async def raw(proxy: RunningProxy, data: bytes, *, read_until_close: bool = True) -> bytes:
    """Send bytes to the proxy on a fresh connection; everything it answers until it closes (5 s at most)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", proxy.proxy.port)
    try:
        writer.write(data)
        await writer.drain()
        if not read_until_close:
            return b""
        return await asyncio.wait_for(reader.read(-1), 5)
    finally:
        writer.close()


# ---- units ----------------------------------------------------------------------------------------


def test_marker_round_trip() -> None:
    assert with_marker("http://a.test/x") == f"http://a.test/x?{MARKER}"
    assert with_marker("http://a.test/x?q=1") == f"http://a.test/x?q=1&{MARKER}"
    assert strip_marker(f"/x?q=1&{MARKER}") == ("/x?q=1", True)
    assert strip_marker(f"/x?{MARKER}") == ("/x", True)
    assert strip_marker("/x?q=1") == ("/x?q=1", False)


def test_prefers_html() -> None:
    assert prefers_html(HTML_ACCEPT)
    assert not prefers_html("*/*")
    assert not prefers_html("image/avif,image/webp,*/*;q=0.8")
    assert not prefers_html("application/json, text/html;q=0.5")
    assert not prefers_html(None)


@pytest.mark.parametrize(
    "head",
    [
        b"GET",
        b"GET http://a.test/ HTTP/2.0",
        b"GET  http://a.test/ HTTP/1.1",
        b"G@T http://a.test/ HTTP/1.1",
        b"GET /relative HTTP/1.1",
        b"GET ftp://a.test/ HTTP/1.1",
        b"GET http://u:p@a.test/ HTTP/1.1",
        b"GET http://a.test/ HTTP/1.1\r\nBad Header: x",
        b"GET http://a.test/ HTTP/1.1\r\nNoColon",
        b"POST http://a.test/ HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked",
        b"POST http://a.test/ HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6",
        b"CONNECT a.test HTTP/1.1",
    ],
)
def test_malformed_heads_are_refused(head: bytes) -> None:
    with pytest.raises(BadRequest):
        parse_request_head(head)


def test_open_proxy_refused_without_auth() -> None:
    with pytest.raises(SettingsError, match="open proxy"):
        load_settings({"host": "0.0.0.0", "proxy_port": "0"}, env={})
    assert load_settings({"host": "0.0.0.0", "proxy_port": "0", "auth": "u:p"}, env={}).auth == "u:p"
    assert load_settings({"host": "0.0.0.0", "proxy_port": "0", "insecure_open_proxy": True}, env={})
    assert load_settings({"host": "0.0.0.0"}, env={}).proxy_port is None  # no proxy: nothing to refuse


# ---- through the proxy ----------------------------------------------------------------------------


async def test_article_navigation_gets_the_reader_view(
    proxy: RunningProxy, upstream: Upstream, http: aiohttp.ClientSession
) -> None:
    async with http.get(site(upstream, "/article"), proxy=proxy.url, headers={"Accept": HTML_ACCEPT}) as r:
        body = await r.text()
        assert r.status == 200
        assert r.headers["X-Readerproxy"] == "reader-view"
        assert "1.1 readerproxy" in r.headers["Via"]
    assert "The Upstream Test Article" in body
    assert "Copyright the upstream site" not in body  # the footer is gone: this is the reader view
    assert f'href="http://news.test:{upstream.port}/article?{MARKER}"' in body  # the way back
    assert 'href="/.readerproxy/static/' in body  # same-origin assets
    assert proxy.metric("reader_view") == 1


async def test_way_back_passes_the_original_through(
    proxy: RunningProxy, upstream: Upstream, http: aiohttp.ClientSession
) -> None:
    async with http.get(
        site(upstream, f"/echo?a=1&{MARKER}"), proxy=proxy.url, headers={"Accept": HTML_ACCEPT}
    ) as r:
        data = await r.json()
    assert data["query"] == "a=1"  # the marker never reaches the site
    async with http.get(
        site(upstream, f"/article?{MARKER}"), proxy=proxy.url, headers={"Accept": HTML_ACCEPT}
    ) as r:
        body = await r.text()
        assert "X-Readerproxy" not in r.headers
    assert "Copyright the upstream site" in body  # the original page, as the site sent it


async def test_non_article_and_non_navigation_pass_through(
    proxy: RunningProxy, upstream: Upstream, http: aiohttp.ClientSession
) -> None:
    async with http.get(site(upstream, "/plain"), proxy=proxy.url, headers={"Accept": HTML_ACCEPT}) as r:
        assert "Not an article" in await r.text()
        assert "X-Readerproxy" not in r.headers
    async with http.get(site(upstream, "/article"), proxy=proxy.url, headers={"Accept": "*/*"}) as r:
        assert "Copyright the upstream site" in await r.text()  # an XHR/fetch: untouched
    async with http.get(site(upstream, "/binary"), proxy=proxy.url, headers={"Accept": HTML_ACCEPT}) as r:
        assert r.headers["Content-Type"] == "image/png"
        assert (await r.read()).startswith(b"\x89PNG")
    assert proxy.metric("passed_through") == 3


async def test_hop_by_hop_headers_and_via(
    proxy: RunningProxy, upstream: Upstream, http: aiohttp.ClientSession
) -> None:
    async with http.get(
        site(upstream, "/echo"),
        proxy=proxy.url,
        headers={
            "Connection": "keep-alive, X-Secret",
            "X-Secret": "hop",
            "Keep-Alive": "timeout=5",
            "TE": "trailers",
            "Proxy-Authorization": "Basic eDp5",
            "X-End": "kept",
            "Via": "1.0 earlier",
        },
    ) as r:
        data = await r.json()
    names = {k.lower(): v for k, v in data["headers"]}
    for hop in ("x-secret", "keep-alive", "te", "proxy-authorization", "proxy-connection"):
        assert hop not in names
    assert names["x-end"] == "kept"
    assert names["via"] == "1.0 earlier, 1.1 readerproxy"
    assert names["host"] == f"news.test:{upstream.port}"


async def test_post_body_arrives_intact_chunked_and_with_length(
    proxy: RunningProxy, upstream: Upstream
) -> None:
    payload = bytes(range(256)) * 4096 + b"tail"  # 1 MiB and a bit

    async def chunks() -> AsyncIterator[bytes]:
        for i in range(0, len(payload), 10_000):
            yield payload[i : i + 10_000]

    async with aiohttp.ClientSession() as http:
        async with http.post(site(upstream, "/echo"), proxy=proxy.url, data=payload) as r:
            data = await r.json()
        assert (data["method"], data["length"]) == ("POST", len(payload))
        assert data["sha256"] == hashlib.sha256(payload).hexdigest()
        async with http.post(site(upstream, "/echo"), proxy=proxy.url, data=chunks()) as r:
            data = await r.json()
        assert data["sha256"] == hashlib.sha256(payload).hexdigest()


async def test_redirects_cookies_head_and_chunked_responses(proxy: RunningProxy, upstream: Upstream) -> None:
    async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as http:
        async with http.get(site(upstream, "/redirect/2"), proxy=proxy.url, allow_redirects=False) as r:
            assert r.status == 302 and r.headers["Location"] == "1"  # passed to the browser as it is
        async with http.get(site(upstream, "/set-cookie"), proxy=proxy.url, headers={"Cookie": "a=b"}) as r:
            assert (await r.json())["cookie"] == "a=b"
            assert "session=abc123" in r.headers["Set-Cookie"]
        async with http.head(site(upstream, "/article"), proxy=proxy.url) as r:
            assert r.status == 200 and int(r.headers["Content-Length"]) > 100
            assert await r.read() == b""
        async with http.get(site(upstream, "/chunked"), proxy=proxy.url) as r:
            assert r.headers.get("Transfer-Encoding") == "chunked"
            assert "The Upstream Test Article" in await r.text()
        async with http.get(
            site(upstream, "/chunked"), proxy=proxy.url, headers={"Accept": HTML_ACCEPT}
        ) as r:
            assert r.headers["X-Readerproxy"] == "reader-view"  # a chunked article is read too


async def test_keep_alive_serves_several_requests_on_one_connection(
    proxy: RunningProxy, upstream: Upstream
) -> None:
    request = (f"GET {site(upstream, '/binary')} HTTP/1.1\r\nHost: news.test\r\n\r\n" * 3).encode()
    last = (
        f"GET {site(upstream, '/echo')} HTTP/1.1\r\nHost: news.test\r\nConnection: close\r\n\r\n"
    ).encode()
    answer = await raw(proxy, request + last)
    assert answer.count(b"HTTP/1.1 200 OK") == 4
    assert answer.count(b"\x89PNG") == 3


async def test_expect_100_continue(proxy: RunningProxy, upstream: Upstream) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", proxy.proxy.port)
    try:
        writer.write(
            (
                f"POST {site(upstream, '/echo')} HTTP/1.1\r\nHost: news.test\r\nContent-Length: 5\r\n"
                "Expect: 100-continue\r\nConnection: close\r\n\r\n"
            ).encode()
        )
        await writer.drain()
        interim = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
        assert interim.startswith(b"HTTP/1.1 100 Continue")
        writer.write(b"hello")
        answer = await asyncio.wait_for(reader.read(-1), 5)
    finally:
        writer.close()
    assert b"HTTP/1.1 200" in answer
    assert json.loads(answer.split(b"\r\n\r\n", 1)[1])["sha256"] == hashlib.sha256(b"hello").hexdigest()


async def test_malformed_and_oversized_requests(proxy: RunningProxy, upstream: Upstream) -> None:
    assert (await raw(proxy, b"NONSENSE\r\n\r\n")).startswith(b"HTTP/1.1 400")
    assert (await raw(proxy, b"GET /no-absolute HTTP/1.1\r\nHost: x\r\n\r\n")).startswith(b"HTTP/1.1 400")
    long_header = b"X-Long: " + b"a" * 70_000 + b"\r\n"
    answer = await raw(proxy, f"GET {site(upstream, '/echo')} HTTP/1.1\r\n".encode() + long_header + b"\r\n")
    assert answer.startswith(b"HTTP/1.1 431")
    answer = await raw(proxy, b"GET http://news.test/" + b"a" * 70_000 + b" HTTP/1.1\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 414")
    ok_header = b"X-Long: " + b"a" * 8_000 + b"\r\nConnection: close\r\n"
    answer = await raw(proxy, f"GET {site(upstream, '/echo')} HTTP/1.1\r\n".encode() + ok_header + b"\r\n")
    assert answer.startswith(b"HTTP/1.1 200")
    assert proxy.metric("refused") == 4


async def test_ssrf_guard_applies_to_proxied_requests_and_tunnels(upstream: Upstream) -> None:
    async with running_proxy(fetch=dataclasses.replace(test_settings().fetch, allow_private=False)) as proxy:
        async with aiohttp.ClientSession() as http:
            for url in (site(upstream, "/echo"), upstream.url("/echo"), "http://169.254.169.254/latest/"):
                async with http.get(url, proxy=proxy.url) as r:
                    assert r.status == 403, url
                    assert "not allowed" in await r.text()
        for target in (f"127.0.0.1:{upstream.port}", f"news.test:{upstream.port}"):
            answer = await raw(proxy, f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
            assert answer.startswith(b"HTTP/1.1 403"), target
        assert upstream.count("/echo") == upstream.count("/echo")  # (nothing reached the site)
        assert proxy.metric("refused") == 5


async def test_connect_tunnel_to_https_site(proxy: RunningProxy, tls_upstream: Upstream) -> None:
    assert tls_upstream.ca_file is not None
    context = ssl.create_default_context(cafile=str(tls_upstream.ca_file))
    async with (
        aiohttp.ClientSession() as http,
        http.get(
            f"https://secure.test:{tls_upstream.port}/article",
            proxy=proxy.url,
            ssl=context,
            headers={"Accept": HTML_ACCEPT},
        ) as r,
    ):
        body = await r.text()
    assert "Copyright the upstream site" in body  # a plain tunnel: HTTPS is not read
    for _ in range(50):  # a tunnel is counted when it closes
        if proxy.metric("tunnelled") == 1:
            break
        await asyncio.sleep(0.05)
    assert proxy.metric("tunnelled") == 1


async def test_auth_407_then_accepted(upstream: Upstream) -> None:
    async with running_proxy(auth="reader:s3cret") as proxy, aiohttp.ClientSession() as http:
        async with http.get(site(upstream, "/echo"), proxy=proxy.url) as r:
            assert r.status == 407
            assert r.headers["Proxy-Authenticate"].startswith("Basic")
        async with http.get(
            site(upstream, "/echo"),
            proxy=proxy.url,
            headers={"Proxy-Authorization": aiohttp.encode_basic_auth("reader", "wrong")},
        ) as r:
            assert r.status == 407
        async with http.get(
            site(upstream, "/echo"),
            proxy=proxy.url,
            headers={"Proxy-Authorization": aiohttp.encode_basic_auth("reader", "s3cret")},
        ) as r:
            assert r.status == 200
            assert "proxy-authorization" not in {k.lower() for k, _ in (await r.json())["headers"]}
        answer = await raw(
            proxy, f"CONNECT news.test:{upstream.port} HTTP/1.1\r\nConnection: close\r\n\r\n".encode()
        )
        assert answer.startswith(b"HTTP/1.1 407")
        # the reader routes take the same credentials
        async with http.get(proxy.server.url("/read", url=upstream.url("/article"))) as r:
            assert r.status == 401 and r.headers["WWW-Authenticate"].startswith("Basic")
        token = base64.b64encode(b"reader:s3cret").decode()
        async with http.get(
            proxy.server.url("/read", url=upstream.url("/article")),
            headers={"Authorization": f"Basic {token}"},
        ) as r:
            assert r.status == 200
        async with http.get(proxy.server.url("/healthz")) as r:
            assert r.status == 200


async def test_host_rules(upstream: Upstream, http: aiohttp.ClientSession) -> None:
    async with (
        running_proxy(direct_hosts=("news.test",)) as proxy,
        http.get(site(upstream, "/article"), proxy=proxy.url, headers={"Accept": HTML_ACCEPT}) as r,
    ):
        assert "X-Readerproxy" not in r.headers
    async with (
        running_proxy(reader_hosts="news.test") as proxy,
        http.get(site(upstream, "/plain"), proxy=proxy.url, headers={"Accept": HTML_ACCEPT}) as r,
    ):
        assert r.headers["X-Readerproxy"] == "reader-view"  # always the reader view here


async def test_reader_assets_served_on_the_proxied_origin(
    proxy: RunningProxy, upstream: Upstream, http: aiohttp.ClientSession
) -> None:
    async with http.get(site(upstream, "/article"), proxy=proxy.url, headers={"Accept": HTML_ACCEPT}) as r:
        body = await r.text()
    css = body.split('rel="stylesheet" href="/.readerproxy/static/', 1)[1].split('"', 1)[0]
    async with http.get(site(upstream, f"/.readerproxy/static/{css}"), proxy=proxy.url) as r:
        assert r.status == 200 and r.headers["Content-Type"].startswith("text/css")


async def test_pac_file_and_the_listener_started_by_the_app(
    upstream: Upstream, http: aiohttp.ClientSession
) -> None:
    port = free_port()
    async with serve(test_settings(proxy_port=port, resolve=RESOLVE)) as server:
        async with http.get(server.url("/proxy.pac")) as r:
            assert r.status == 200
            assert r.content_type == "application/x-ns-proxy-autoconfig"
            assert f"PROXY 127.0.0.1:{port}" in await r.text()
        async with http.get(
            site(upstream, "/article"), proxy=f"http://127.0.0.1:{port}", headers={"Accept": HTML_ACCEPT}
        ) as r:
            assert r.headers["X-Readerproxy"] == "reader-view"
        async with http.get(server.url("/metrics")) as r:
            assert 'readerproxy_proxy_requests_total{outcome="reader_view"} 1.0' in await r.text()
    async with serve(test_settings()) as server, http.get(server.url("/proxy.pac")) as r:
        assert r.status == 404


# ---- --intercept-https ----------------------------------------------------------------------------


async def test_intercepted_https_reader_view_and_bad_upstream_certificate(
    tls_upstream: Upstream, tmp_path: Path, http: aiohttp.ClientSession
) -> None:
    ca = CertificateAuthority.load_or_create(tmp_path / "ca")
    assert (tmp_path / "ca" / "readerproxy-ca-key.pem").stat().st_mode & 0o777 == 0o600
    trust = ssl.create_default_context(cafile=str(ca.cert_path))
    async with running_proxy(upstream_ca=tls_upstream.ca_file, ca=ca) as proxy:
        async with http.get(
            f"https://secure.test:{tls_upstream.port}/article",
            proxy=proxy.url,
            ssl=trust,
            headers={"Accept": HTML_ACCEPT},
        ) as r:
            body = await r.text()
            assert r.headers["X-Readerproxy"] == "reader-view"
        assert f'href="https://secure.test:{tls_upstream.port}/article?{MARKER}"' in body
        async with http.get(
            f"https://secure.test:{tls_upstream.port}/binary", proxy=proxy.url, ssl=trust
        ) as r:
            assert (await r.read()).startswith(b"\x89PNG")
        async with http.get(
            f"https://wrong.test:{tls_upstream.port}/article",
            proxy=proxy.url,
            ssl=trust,
            headers={"Accept": HTML_ACCEPT},
        ) as r:
            assert r.status == 502
            assert "certificate" in await r.text()
        assert proxy.metric("reader_view") == 1 and proxy.metric("error") == 1


def test_ca_is_created_once_and_described(tmp_path: Path) -> None:
    first = CertificateAuthority.load_or_create(tmp_path)
    again = CertificateAuthority.load_or_create(tmp_path)
    assert first.spki_sha256 == again.spki_sha256
    assert str(first.cert_path) in describe(first) and "Firefox" in describe(first)
    context = first.context_for("example.test")
    assert first.context_for("example.test") is context  # cached


def test_ca_command_prints_where_the_certificate_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from readerproxy.cli import main

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert main(["ca"]) == 0
    out = capsys.readouterr().out
    cert = tmp_path / "readerproxy" / "ca" / "readerproxy-ca.pem"
    assert f"CA certificate: {cert}" in out and cert.is_file()
    assert (cert.parent / "readerproxy-ca-key.pem").stat().st_mode & 0o777 == 0o600
