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
import gzip
import hashlib
import json
import ssl
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from support.reader_server import RunningServer, free_port, serve, test_settings
from support.upstream import ARTICLE_HTML, DATASETS, Upstream

from readerproxy.app import Settings, load_settings
from readerproxy.proxy.addons import (
    MARKER,
    SNIFF_LIMIT,
    HeadSniffer,
    head_says_not_article,
    strip_marker,
    with_marker,
)
from readerproxy.proxy.blocklist import Blocklist, parse_host_list
from readerproxy.proxy.flow import BadRequest, prefers_html
from readerproxy.proxy.http1 import parse_request_head
from readerproxy.proxy.server import ProxyServer
from readerproxy.proxy.tls import CertificateAuthority, describe
from readerproxy.web.server import METRICS, READER, RENDERER
from readerproxy.web.settings import SettingsError

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
    assert load_settings({"host": "0.0.0.0", "proxy_port": "0", "auth": "u:long-password"}, env={}).auth
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


# ---- pages that are no article stream through from their first bytes -------------------------------

WCXB = DATASETS / "wcxb-dev"
#: A wcxb-dev product page whose head names a schema.org Product in JSON-LD (135 KB).
PRODUCT_PAGE = "0611"


def wcxb_page(page_id: str) -> bytes:
    path = WCXB / "html" / f"{page_id}.html.gz"
    if not path.is_file():
        pytest.skip(f"{path} is missing (../shared/datasets is not beside the repository)")
    return gzip.decompress(path.read_bytes())


def hide_head_types(page: bytes) -> bytes:
    """The page with its JSON-LD and `og:type` renamed, byte for byte as long: what the head says
    of the page is hidden, so only the extraction can tell (benchmarks/proxy_latency.py's "before")."""
    return page.replace(b"application/ld+json", b"application/xx+json").replace(b"og:type", b"og:tipe")


class DatasetSite(Upstream):
    """The upstream test site with wcxb-dev pages: `/wcxb/<id>` the page as stored (gzip-encoded
    when `?gzip=1`, its head's types hidden when `?hide=1`: `hide_head_types`); `/held/<id>` its
    head at once, the rest only once the test sets `release` (`<id>` "article" is the site's own
    small article page)."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.head_sent = threading.Event()

    def app(self) -> web.Application:
        app = super().app()
        app.router.add_get("/wcxb/{id}", self.wcxb)
        app.router.add_get("/held/{id}", self.held)
        app.router.add_get("/tracked", self.tracked)
        return app

    async def tracked(self, request: web.Request) -> web.Response:
        """A small page with its own image and one from `?tracker=HOST` (the same site's port)."""
        tracker = request.query.get("tracker", "tracker.test")
        page = (
            "<!doctype html><html><head><title>Tracked</title></head><body>"
            "<h1 id='title'>A page with a tracker</h1>"
            "<img id='own' src='/binary' alt='own'>"
            f"<img id='pixel' src='http://{tracker}:{request.url.port}/binary' alt='pixel'>"
            "</body></html>"
        )
        return web.Response(text=page, content_type="text/html")

    @staticmethod
    def page(page_id: str) -> bytes:
        if page_id == "article":
            return ARTICLE_HTML.encode()
        if not page_id.isdigit():
            raise web.HTTPNotFound()
        path = WCXB / "html" / f"{page_id}.html.gz"
        if not path.is_file():
            raise web.HTTPNotFound()
        return gzip.decompress(path.read_bytes())

    async def wcxb(self, request: web.Request) -> web.Response:
        body = self.page(request.match_info["id"])
        if request.query.get("hide") == "1":
            body = hide_head_types(body)
        headers = {"Content-Type": "text/html; charset=utf-8"}
        if request.query.get("gzip") == "1":
            body = gzip.compress(
                body, mtime=0
            )  # the same bytes for every request (a header stamps the second)
            headers["Content-Encoding"] = "gzip"
        return web.Response(body=body, headers=headers)

    async def held(self, request: web.Request) -> web.StreamResponse:
        body = self.page(request.match_info["id"])
        cut = body.lower().index(b"</head>") + len(b"</head>")
        response = web.StreamResponse(headers={"Content-Type": "text/html; charset=utf-8"})
        response.content_length = len(body)
        await response.prepare(request)
        await response.write(body[:cut])
        self.head_sent.set()
        await asyncio.to_thread(self.release.wait, 30)
        await response.write(body[cut:])
        await response.write_eof()
        return response


@pytest.fixture(scope="module")
def dataset_site() -> Iterator[DatasetSite]:
    served = DatasetSite()
    served.start()
    yield served
    served.stop()


def ld_page(*types: str, og: str | None = None) -> bytes:
    blocks = "".join(
        f'<script type="application/ld+json">{{"@context":"https://schema.org","@type":"{name}"}}</script>'
        for name in types
    )
    meta = f'<meta property="og:type" content="{og}">' if og else ""
    return f"<!doctype html><html><head><title>t</title>{meta}{blocks}</head><body><p>x</p>".encode()


@pytest.mark.parametrize(
    ("page", "reason"),
    [
        (ld_page("Product"), "not_article:product"),
        (ld_page("https://schema.org/ProductGroup"), "not_article:productgroup"),
        (ld_page("CollectionPage", "BreadcrumbList"), "not_article:collectionpage"),
        (ld_page(og="product"), "not_article:og:product"),
        (ld_page("WebSite", og="product.group"), "not_article:og:product.group"),
        # a review of a product, an article that names one, or what can be on an article's head
        (ld_page("Product", "Review"), None),
        (ld_page("Product", og="article"), None),
        (ld_page("NewsArticle", og="product"), None),
        (ld_page("Offer"), None),
        (ld_page("ItemList"), None),
        (ld_page("Organization", "WebSite", og="website"), None),
        (b'<html><head><script type="application/ld+json">{"@graph":[{"@type":["Product","Thing"]}]}', None),
    ],
)
def test_head_says_not_article(page: bytes, reason: str | None) -> None:
    head = page.split(b"</head>")[0]
    assert head_says_not_article(head) == reason


def test_head_sniffer_reads_encoded_chunks_until_the_head_ends() -> None:
    settings = test_settings()
    page = ld_page("Product") + b"<p>" + b"words " * 50_000 + b"</p></body></html>"
    wire = gzip.compress(page)
    sniff = HeadSniffer("gzip", settings, "http://shop.test/")
    verdicts = [sniff(wire[i : i + 7]) for i in range(0, len(wire), 7)]  # the head split anywhere
    assert [v for v in verdicts if v] == ["not_article:product"]  # said once, at the end of the head
    no_head = b"<html><head><title>t</title>" + b"<!-- -->" * (SNIFF_LIMIT // 8 + 1)
    sniff = HeadSniffer("", settings, "http://shop.test/")
    assert sniff(no_head) is None and sniff(ld_page("Product")) is None  # gave up past SNIFF_LIMIT
    sniff = HeadSniffer("gzip", settings, "http://shop.test/")
    assert sniff(b"not gzip at all") is None and sniff(wire) is None  # corrupt: no early answer


def test_no_wcxb_article_is_passed_through_early() -> None:
    """Precision first: on every wcxb-dev page typed article (and forum and documentation, which
    become reader views too), the head never says "no article"; on products it often does."""
    metadata = WCXB / "metadata.json"
    if not metadata.is_file():
        pytest.skip(f"{metadata} is missing")
    files: dict[str, dict[str, Any]] = json.loads(metadata.read_text())["files"]
    said: dict[str, list[str]] = {}
    settings = test_settings()
    for page_id, info in files.items():
        page = wcxb_page(page_id)
        sniff = HeadSniffer("", settings, f"https://{info['domain']}/")
        chunks = (page[i : i + 64 * 1024] for i in range(0, len(page), 64 * 1024))
        if any(sniff(chunk) is not None for chunk in chunks):  # as the proxy reads it
            said.setdefault(info["page_type"], []).append(page_id)
    assert not said.get("article") and not said.get("forum") and not said.get("documentation"), said
    products = sum(info["page_type"] == "product" for info in files.values())
    assert len(said.get("product", [])) >= products // 4, said  # it is worth having


async def test_a_product_page_streams_through_before_its_body_has_arrived(
    dataset_site: DatasetSite, http: aiohttp.ClientSession
) -> None:
    """With its head arrived and the rest held back upstream (and `reader_wait` far longer than the
    test), the proxy has already answered: the head and the bytes so far, as the site sent them."""
    page = wcxb_page(PRODUCT_PAGE)
    head = page[: page.lower().index(b"</head>") + len(b"</head>")]
    dataset_site.release.clear()
    async with running_proxy(reader_wait=60.0) as proxy:
        url = f"http://news.test:{dataset_site.port}/held/{PRODUCT_PAGE}"
        try:
            async with asyncio.timeout(30):
                async with http.get(url, proxy=proxy.url, headers={"Accept": HTML_ACCEPT}) as r:
                    assert "X-Readerproxy" not in r.headers
                    assert int(r.headers["Content-Length"]) == len(page)
                    first = await r.content.readexactly(len(head))  # before the rest was sent
                    assert not dataset_site.release.is_set()
                    dataset_site.release.set()
                    rest = await r.read()
        finally:
            dataset_site.release.set()
        assert first + rest == page
        assert proxy.metric("passed_through") == 1 and proxy.metric("reader_view") == 0


async def test_an_article_is_held_for_the_reader_view_whatever_its_pace(
    dataset_site: DatasetSite, http: aiohttp.ClientSession
) -> None:
    dataset_site.release.clear()
    dataset_site.head_sent.clear()
    async with running_proxy(reader_wait=60.0) as proxy:
        url = f"http://news.test:{dataset_site.port}/held/article"
        try:
            request = asyncio.ensure_future(http.get(url, proxy=proxy.url, headers={"Accept": HTML_ACCEPT}))
            await asyncio.wait_for(asyncio.to_thread(dataset_site.head_sent.wait, 30), 31)
            dataset_site.release.set()
            async with asyncio.timeout(30):
                async with await request as r:
                    body = await r.text()
                    assert r.headers["X-Readerproxy"] == "reader-view"
        finally:
            dataset_site.release.set()
    assert "Copyright the upstream site" not in body


@pytest.mark.parametrize("encoded", [False, True])
async def test_a_product_page_passes_through_byte_for_byte(
    dataset_site: DatasetSite, http: aiohttp.ClientSession, encoded: bool
) -> None:
    page = wcxb_page(PRODUCT_PAGE)
    query = "?gzip=1" if encoded else ""
    url = f"http://news.test:{dataset_site.port}/wcxb/{PRODUCT_PAGE}{query}"
    headers = {"Accept": HTML_ACCEPT, "Accept-Encoding": "gzip"}
    async with running_proxy() as proxy:
        direct_url = f"http://127.0.0.1:{dataset_site.port}/wcxb/{PRODUCT_PAGE}{query}"
        async with http.get(direct_url, headers=headers, auto_decompress=False) as r:
            upstream_bytes = await r.read()
        async with http.get(url, proxy=proxy.url, headers=headers, auto_decompress=False) as r:
            proxied = await r.read()
            assert r.status == 200 and "X-Readerproxy" not in r.headers
            assert r.headers.get("Content-Encoding") == ("gzip" if encoded else None)
    assert hashlib.sha256(proxied).hexdigest() == hashlib.sha256(upstream_bytes).hexdigest()
    assert (gzip.decompress(proxied) if encoded else proxied) == page


# ---- the block list ---------------------------------------------------------------------------------

HOST_LIST = """\
# a hosts file (StevenBlack's format)
127.0.0.1 localhost
0.0.0.0 0.0.0.0
0.0.0.0 ads.test  # an inline comment
0.0.0.0 pixel.test beacon.test
::1 ip6-localhost
! Adblock Plus / uBlock host rules
[Adblock Plus 2.0]
||tracker.test^
||cdn.metrics.test^$third-party
||a.test^$domain=news.test
||b.test/path^
@@||ads.test^
/banner/*
# a domain list
counter.test
not a host list line
"""


def test_host_lists_in_their_usual_formats() -> None:
    parsed = parse_host_list(HOST_LIST.splitlines())
    assert parsed.hosts == {
        "ads.test",
        "pixel.test",
        "beacon.test",
        "tracker.test",
        "cdn.metrics.test",
        "counter.test",
    }
    # $domain= options, paths, exceptions, cosmetic or URL rules and stray text are not host rules
    assert parsed.skipped == 5


def test_blocklist_matches_names_with_their_subdomains_and_patterns() -> None:
    blocklist = Blocklist.from_settings("ads.test, *.ad-cdn.test, ^track[0-9]+\\.", ())
    assert blocklist.reason("ads.test", 80) == "ads.test"
    assert blocklist.reason("img.ADS.test.", 443) == "ads.test"
    assert blocklist.reason("badads.test", 80) is None  # a name, not a suffix of letters
    assert blocklist.reason("x.ad-cdn.test", 80) == "*.ad-cdn.test"
    assert blocklist.reason("track42.example", 443) is not None
    assert blocklist.reason("news.test", 80) is None
    assert not Blocklist.from_settings("", ())
    with pytest.raises(ValueError, match="cannot read block list"):
        Blocklist.from_settings("", ["/nonexistent/list.txt"])
    with pytest.raises(SettingsError, match="block list"):
        load_settings({"block_lists": "/nonexistent/list.txt"}, env={})
    with pytest.raises(
        SettingsError, match="--block-hosts: '\\(\\(' is neither a host glob nor a valid regex"
    ):
        load_settings({"block_hosts": "ads.test, (("}, env={})


async def test_blocked_hosts_are_refused_at_once_and_counted(
    upstream: Upstream, http: aiohttp.ClientSession, tmp_path: Path
) -> None:
    hosts = tmp_path / "hosts.txt"
    hosts.write_text(HOST_LIST)
    async with running_proxy(block_hosts="*.ad-cdn.test", block_lists=str(hosts)) as proxy:
        async with http.get(f"http://pixel.test:{upstream.port}/binary", proxy=proxy.url) as r:
            assert r.status == 403
            assert await r.text() == "Blocked by readerproxy: pixel.test is on the block list (pixel.test).\n"
        navigation = {"Accept": HTML_ACCEPT}
        async with http.get(f"http://pixel.test:{upstream.port}/", proxy=proxy.url, headers=navigation) as r:
            assert r.status == 403 and r.content_type == "text/html"  # a small page a person reads
            assert (
                "<p>Blocked by readerproxy: pixel.test is on the block list (pixel.test).</p>"
                in await r.text()
            )
        async with http.get(f"http://x.ad-cdn.test:{upstream.port}/echo", proxy=proxy.url) as r:
            assert r.status == 403 and "*.ad-cdn.test" in await r.text()
        answer = await raw(
            proxy,
            b"CONNECT www.tracker.test:443 HTTP/1.1\r\nHost: www.tracker.test:443\r\nConnection: close\r\n\r\n",
        )
        assert answer.startswith(b"HTTP/1.1 403 ")
        assert b"www.tracker.test is on the block list (tracker.test)" in answer
        async with http.get(site(upstream, "/plain"), proxy=proxy.url, headers={"Accept": HTML_ACCEPT}) as r:
            assert r.status == 200 and "Not an article" in await r.text()  # the rest passes
        async with http.get("http://readerproxy/", proxy=proxy.url) as r:
            assert r.status == 200  # the proxy's own pages are never blocked
        assert proxy.metric("blocked") == 4 and proxy.metric("passed_through") == 1
