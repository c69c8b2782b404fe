"""Proxy mode's transport: which tunnels interception spares (`--intercept-hosts`, `--ignore-hosts`,
`direct_hosts`), WebSockets (ws, and wss through interception), zstd and the encodings offered
upstream, slow pages streamed through (`--reader-wait`), and `--upgrade-https` for plain-HTTP clients.

The site is an aiohttp app of this module on 127.0.0.1, over http and over https (a certificate for
`secure.test` from a test CA), reached through the proxy's `--resolve` map; the clients are aiohttp
here and real Chromium in `tests/browser/test_proxy_browser.py`.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
import pytest
import zstandard
from aiohttp import web
from cryptography.hazmat.primitives.asymmetric import ec
from support.upstream import ARTICLE_HTML, ARTICLE_TITLE
from test_proxy import HTML_ACCEPT, RunningProxy, running_proxy

from readerproxy.proxy.flow import offered_encodings
from readerproxy.proxy.intercept import HostPattern, InterceptPolicy, split_patterns
from readerproxy.proxy.tls import CertificateAuthority, key_pem, make_ca, make_leaf, pem, spki_sha256
from readerproxy.web.fetch import DECODABLE_ENCODINGS, BodyDecoder, FetchError, FetchSettings

TRICKLE_PIECES = 8


@dataclass
class Site:
    """The test site on http (`port`) and https (`tls_port`), and what it saw."""

    port: int = 0
    tls_port: int = 0
    ca_file: Path = Path()
    ca_spki: str = ""
    seen_encodings: list[str | None] = field(default_factory=list)
    first_piece: list[float] = field(default_factory=list)  # when /trickle sent its first bytes
    upgraded: list[str] = field(default_factory=list)  # /upgrade/… requests the https side answered

    def http(self, path: str, host: str = "news.test") -> str:
        return f"http://{host}:{self.port}{path}"

    def https(self, path: str) -> str:
        return f"https://secure.test:{self.tls_port}{path}"


def trickle_page(seconds: float) -> list[bytes]:
    """An article in TRICKLE_PIECES pieces, the first one carrying a visible heading."""
    head = b'<!doctype html><html><head><meta charset="utf-8"><title>Slow</title></head><body>'
    first = head + b"<h1 id='first'>First bytes</h1>" + b" " * 2048  # past the browser's sniffing buffer
    rest = ARTICLE_HTML.encode().split(b"<body>", 1)[1]
    step = max(1, len(rest) // (TRICKLE_PIECES - 1))
    return [first] + [rest[i : i + step] for i in range(0, len(rest), step)]


def site_app(site: Site, *, secure: bool) -> web.Application:
    async def article(request: web.Request) -> web.Response:
        site.seen_encodings.append(request.headers.get("Accept-Encoding"))
        return web.Response(text=ARTICLE_HTML, content_type="text/html")

    async def zstd_page(request: web.Request) -> web.Response:
        site.seen_encodings.append(request.headers.get("Accept-Encoding"))
        body = zstandard.ZstdCompressor().compress(ARTICLE_HTML.encode())
        return web.Response(
            body=body, headers={"Content-Type": "text/html; charset=utf-8", "Content-Encoding": "zstd"}
        )

    async def trickle(request: web.Request) -> web.StreamResponse:
        seconds = float(request.query.get("s", "4"))
        response = web.StreamResponse(headers={"Content-Type": "text/html; charset=utf-8"})
        await response.prepare(request)
        pieces = trickle_page(seconds)
        for index, piece in enumerate(pieces):
            if index:
                await asyncio.sleep(seconds / (len(pieces) - 1))
            else:
                site.first_piece.append(time.monotonic())
            await response.write(piece)
        await response.write_eof()
        return response

    async def ws_page(request: web.Request) -> web.Response:
        scheme = "wss" if secure else "ws"
        script = (
            f"const ws = new WebSocket('{scheme}://' + location.host + '/ws');"
            "ws.onopen = () => ws.send('hello over ' + location.protocol);"
            "ws.onmessage = e => { document.title = 'echo: ' + e.data; };"
            "ws.onclose = e => { document.title = document.title || ('closed ' + e.code); };"
        )
        html = f"<!doctype html><title></title><p>A socket page, no article.</p><script>{script}</script>"
        return web.Response(text=html, content_type="text/html")

    async def ws_echo(request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        async for message in ws:
            if message.type is aiohttp.WSMsgType.TEXT:
                await ws.send_str(message.data)
            elif message.type is aiohttp.WSMsgType.BINARY:
                await ws.send_bytes(message.data)
        return ws

    async def to_https(request: web.Request) -> web.Response:
        if secure:  # the https side: the page itself
            site.upgraded.append(request.path_qs)
            return web.Response(text=ARTICLE_HTML, content_type="text/html")
        raise web.HTTPMovedPermanently(
            f"https://{request.host.split(':')[0]}:{site.tls_port}{request.path_qs}"
        )

    app = web.Application()
    app.router.add_get("/article", article)
    app.router.add_get("/zstd", zstd_page)
    app.router.add_get("/trickle", trickle)
    app.router.add_get("/ws-page", ws_page)
    app.router.add_get("/ws", ws_echo)
    app.router.add_get("/upgrade/{rest:.*}", to_https)
    return app


@contextlib.asynccontextmanager
async def serve_site(tmp_path: Path) -> AsyncIterator[Site]:
    """The test site on http and https (a fresh test CA in `tmp_path`), until the block ends."""
    ca_key, ca_cert = make_ca("readerproxy transport test CA")
    leaf_key = ec.generate_private_key(ec.SECP256R1())
    leaf = make_leaf("secure.test", ca_key, ca_cert, leaf_key)
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "site-ca.pem").write_bytes(pem(ca_cert))
    (tmp_path / "site.pem").write_bytes(pem(leaf) + pem(ca_cert) + key_pem(leaf_key))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tmp_path / "site.pem")
    result = Site(ca_file=tmp_path / "site-ca.pem", ca_spki=spki_sha256(ca_cert))
    runners = [web.AppRunner(site_app(result, secure=False)), web.AppRunner(site_app(result, secure=True))]
    for runner in runners:
        await runner.setup()
    plain = web.TCPSite(runners[0], "127.0.0.1", 0)
    secure = web.TCPSite(runners[1], "127.0.0.1", 0, ssl_context=context)
    await plain.start()
    await secure.start()
    result.port = plain._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    result.tls_port = secure._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield result
    finally:
        for runner in runners:
            await runner.cleanup()


@pytest.fixture
async def site(tmp_path: Path) -> AsyncIterator[Site]:
    async with serve_site(tmp_path) as running:
        yield running


def trusting(*pem_files: Path) -> ssl.SSLContext:
    context = ssl.create_default_context()
    for path in pem_files:
        context.load_verify_locations(cafile=str(path))
    return context


# ---- units --------------------------------------------------------------------------------------


def test_host_patterns_globs_and_regexes() -> None:
    assert split_patterns("a.test, *.b.test  c.test:8443") == ("a.test", "*.b.test", "c.test:8443")
    assert split_patterns(["x{1,3}\\.test"]) == ("x{1,3}\\.test",)
    name = HostPattern.parse("bank.example")
    assert name.matches("bank.example", 443) and name.matches("www.BANK.example", 443)
    assert not name.matches("notbank.example", 443) and not name.matches("bank.example.evil", 443)
    sub = HostPattern.parse("*.bank.example")
    assert sub.matches("www.bank.example", 443) and not sub.matches("bank.example", 443)
    port = HostPattern.parse("bank.example:8443")
    assert port.matches("bank.example", 8443) and not port.matches("bank.example", 443)
    regex = HostPattern.parse(r"^(.+\.)?bank\.example:443$")
    assert regex.regex is not None
    assert regex.matches("bank.example", 443) and regex.matches("a.bank.example", 443)
    assert not regex.matches("bank.example", 8443) and not regex.matches("xbank.example", 443)
    with pytest.raises(ValueError):
        HostPattern.parse("(unclosed")


def test_intercept_policy() -> None:
    everything = InterceptPolicy.from_settings((), (), ())
    assert everything.intercepts("news.test", 443)
    policy = InterceptPolicy.from_settings("news.test,*.example", "secret.example", ("bank.test",))
    assert policy.intercepts("news.test", 443) and policy.intercepts("a.example", 443)
    assert not policy.intercepts("secret.example", 443)  # ignored
    assert not policy.intercepts("other.test", 443)  # not in the intercept list
    direct = InterceptPolicy.from_settings((), (), ("bank.test",))
    assert not direct.intercepts("bank.test", 443) and not direct.intercepts("www.bank.test", 443)
    assert direct.intercepts("news.test", 443)


def test_offered_encodings_only_what_is_decoded() -> None:
    decodable = ("gzip", "deflate", "br", "zstd")
    headers = [("Accept-Encoding", "gzip, deflate, br, zstd, dcb, dcz")]
    assert offered_encodings(headers, decodable) == "gzip, deflate, br, zstd"
    assert offered_encodings(headers, ("gzip", "deflate", "br")) == "gzip, deflate, br"
    assert offered_encodings([("accept-encoding", "compress;q=0.5, *")], decodable) == "identity"
    assert (
        offered_encodings([("Accept-Encoding", "br;q=1.0, gzip;q=0.8")], decodable) == "br;q=1.0, gzip;q=0.8"
    )
    assert offered_encodings([], decodable) is None


def test_zstd_is_decoded_under_the_caps() -> None:
    page = ARTICLE_HTML.encode() * 50
    compressed = zstandard.ZstdCompressor().compress(page)
    decoder = BodyDecoder("zstd", FetchSettings(), "http://a.test/")
    for i in range(0, len(compressed), 100):  # fed in wire pieces
        decoder.feed(compressed[i : i + 100])
    assert decoder.finish() == page
    bomb = zstandard.ZstdCompressor(level=19).compress(b"\0" * (64 << 20))
    with pytest.raises(FetchError) as caught:  # refused while decoding, never decoded whole
        BodyDecoder("zstd", FetchSettings(), "http://a.test/").feed(bomb)
    assert caught.value.status == 413
    with pytest.raises(FetchError) as caught:
        BodyDecoder("zstd", FetchSettings(), "http://a.test/").feed(b"not zstd at all")
    assert caught.value.status == 502
    assert "zstd" in DECODABLE_ENCODINGS


# ---- interception that spares what it must -------------------------------------------------------


async def fetch_https(proxy: RunningProxy, url: str, context: ssl.SSLContext) -> str:
    async with (
        aiohttp.ClientSession() as client,
        client.get(url, proxy=proxy.url, ssl=context, headers={"Accept": HTML_ACCEPT}) as response,
    ):
        assert response.status == 200
        return await response.text()


@pytest.mark.parametrize(
    "changes",
    [
        {"ignore_hosts": "secure.test"},
        {"ignore_hosts": r"^secure\.test:\d+$"},
        {"intercept_hosts": "news.test"},
        {"direct_hosts": ("secure.test",)},
    ],
    ids=["ignore-glob", "ignore-regex", "intercept-others", "direct-host"],
)
async def test_spared_hosts_keep_the_site_certificate(
    site: Site, tmp_path: Path, changes: dict[str, object]
) -> None:
    ca = CertificateAuthority.load_or_create(tmp_path / "ca")
    async with running_proxy(ca=ca, upstream_ca=site.ca_file, **changes) as proxy:
        # trusting only the site's own CA: this works only through a plain tunnel
        text = await fetch_https(proxy, site.https("/article"), trusting(site.ca_file))
        assert "Copyright the upstream site" in text  # the original, not read
        assert proxy.metric("reader_view") == 0  # (a tunnel is counted when it closes)


async def test_other_hosts_are_still_intercepted(site: Site, tmp_path: Path) -> None:
    ca = CertificateAuthority.load_or_create(tmp_path / "ca")
    ca_pem = tmp_path / "ca" / "readerproxy-ca.pem"
    async with running_proxy(ca=ca, upstream_ca=site.ca_file, ignore_hosts="other.test") as proxy:
        text = await fetch_https(proxy, site.https("/article"), trusting(ca_pem))
        assert ARTICLE_TITLE in text and "Copyright the upstream site" not in text
        assert proxy.metric("reader_view") == 1


async def counted(proxy: RunningProxy, outcome: str) -> float:
    """The metric once the flow is done (a WebSocket's flow ends a moment after the client closes)."""
    for _ in range(40):
        if value := proxy.metric(outcome):
            return value
        await asyncio.sleep(0.05)
    return 0.0


# ---- WebSockets ---------------------------------------------------------------------------------


async def echo_through(proxy: RunningProxy, url: str, context: ssl.SSLContext | None = None) -> list[str]:
    async with (
        aiohttp.ClientSession() as client,
        client.ws_connect(url, proxy=proxy.url, ssl=context or True) as ws,
    ):
        replies = []
        for text in ("one", "two" * 30_000):  # the second spans several TCP segments and frames
            await ws.send_str(text)
            replies.append((await ws.receive(timeout=5)).data)
        await ws.send_bytes(b"\x00\xff")
        replies.append(repr((await ws.receive(timeout=5)).data))
        return replies


async def test_websocket_plain_http(site: Site) -> None:
    async with running_proxy() as proxy:
        replies = await echo_through(proxy, site.http("/ws").replace("http:", "ws:"))
        assert await counted(proxy, "passed_through") == 1
    assert replies == ["one", "two" * 30_000, repr(b"\x00\xff")]


async def test_websocket_inside_intercepted_tls(site: Site, tmp_path: Path) -> None:
    ca = CertificateAuthority.load_or_create(tmp_path / "ca")
    async with running_proxy(ca=ca, upstream_ca=site.ca_file) as proxy:
        context = trusting(tmp_path / "ca" / "readerproxy-ca.pem")
        replies = await echo_through(proxy, site.https("/ws").replace("https:", "wss:"), context)
        assert await counted(proxy, "passed_through") == 1 and proxy.metric("tunnelled") == 0
    assert replies == ["one", "two" * 30_000, repr(b"\x00\xff")]


async def test_refused_websocket_upgrade_is_passed_on(site: Site) -> None:
    async with running_proxy() as proxy, aiohttp.ClientSession() as client:
        with pytest.raises(aiohttp.WSServerHandshakeError) as caught:
            await client.ws_connect(site.http("/article").replace("http:", "ws:"), proxy=proxy.url)
    assert caught.value.status == 200  # the site answered with its page, not 101


# ---- encodings ----------------------------------------------------------------------------------


async def test_zstd_page_becomes_a_reader_view_and_only_decodable_codings_go_upstream(site: Site) -> None:
    async with running_proxy() as proxy, aiohttp.ClientSession(auto_decompress=False) as client:
        headers = {"Accept": HTML_ACCEPT, "Accept-Encoding": "gzip, deflate, br, zstd, dcb, dcz"}
        async with client.get(site.http("/zstd"), proxy=proxy.url, headers=headers) as response:
            body = await response.text()
            assert response.headers.get("X-Readerproxy") == "reader-view"
    assert ARTICLE_TITLE in body and "Copyright the upstream site" not in body
    assert site.seen_encodings == ["gzip, deflate, br, zstd"]


# ---- slow pages stream through ------------------------------------------------------------------


async def test_trickling_page_streams_through_within_the_wait(site: Site) -> None:
    async with running_proxy(reader_wait=0.5) as proxy, aiohttp.ClientSession() as client:
        started = time.monotonic()
        async with client.get(
            site.http("/trickle?s=3"), proxy=proxy.url, headers={"Accept": HTML_ACCEPT}
        ) as response:
            first = await response.content.readany()
            first_at = time.monotonic() - started
            rest = await response.read()
            assert "X-Readerproxy" not in response.headers
        total = time.monotonic() - started
    assert b"First bytes" in first
    assert first_at < 1.2, first_at  # the wait (0.5 s) and a little, not the 3 s of the page
    assert total > 2.5
    assert (first + rest) == b"".join(trickle_page(3))  # the original, byte for byte
    assert proxy.metric("passed_through") == 1


async def test_page_in_whole_within_the_wait_is_still_a_reader_view(site: Site) -> None:
    async with (
        running_proxy(reader_wait=5.0) as proxy,
        aiohttp.ClientSession() as client,
        client.get(site.http("/trickle?s=1"), proxy=proxy.url, headers={"Accept": HTML_ACCEPT}) as response,
    ):
        assert response.headers.get("X-Readerproxy") == "reader-view"
        assert ARTICLE_TITLE in await response.text()


# ---- --upgrade-https ----------------------------------------------------------------------------


async def test_upgrade_https_serves_the_https_page_over_http(site: Site) -> None:
    url = f"http://secure.test:{site.port}/upgrade/article"
    async with (
        running_proxy(upgrade_https=True, upstream_ca=site.ca_file) as proxy,
        aiohttp.ClientSession() as client,
    ):
        async with client.get(
            url, proxy=proxy.url, headers={"Accept": HTML_ACCEPT}, allow_redirects=False
        ) as response:
            assert response.status == 200
            assert response.headers.get("X-Readerproxy") == "reader-view"
            assert ARTICLE_TITLE in await response.text()
        async with client.get(url + "?q=1", proxy=proxy.url, allow_redirects=False) as response:
            assert response.status == 200 and "Copyright the upstream site" in await response.text()
    assert site.upgraded == ["/upgrade/article", "/upgrade/article?q=1"]
    async with (
        running_proxy(upgrade_https=False) as proxy,
        aiohttp.ClientSession() as client,
        client.get(url, proxy=proxy.url, allow_redirects=False) as response,
    ):
        assert response.status == 301  # without the option, the redirect goes to the client
        assert response.headers["Location"].startswith("https://")
