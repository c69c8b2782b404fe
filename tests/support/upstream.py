"""The `upstream` fixture: a real aiohttp test site on 127.0.0.1 (ephemeral port) for fetch/cache/server tests.

It runs in its own thread with its own event loop, so it serves sync tests, async tests (any loop) and
server subprocesses alike. Every request is counted by path (`upstream.count(path)`); requests that carry
a validator (If-None-Match / If-Modified-Since) are also counted in `upstream.conditional(path)`.

Routes:
  /sh/<id>               scrapinghub page (gzip-encoded when the client accepts gzip); skipped if absent
  /rd/<name>             readability test page (source.html)
  /article               a small well-formed article page
  /gzip, /deflate, /br   the article, content-encoded
  /slow?s=SECONDS        sleeps before answering (default 60, past every timeout)
  /slow-body?s=SECONDS   sends headers and a first chunk, then stalls (read timeout)
  /huge?cl=1             streams 11 MB of HTML (no Content-Length unless cl=1)
  /bomb?enc=gzip|deflate|br   tiny compressed body, 128 MB decoded
  /redirect-loop         redirects to itself
  /redirect/<n>          a chain of n redirects ending at /redirect/0 (an article); relative Locations
  /redirect-to?url=U     redirects to U (any URL)
  /redirect-to-private   redirects to http://169.254.169.254/latest/meta-data/
  /wrong-charset         declares utf-8, sends windows-1252 bytes
  /wrong-charset/reverse declares windows-1252, sends utf-8 bytes
  /binary                image/png;   /pdf  application/pdf
  /status/<code>         answers with that status and a small HTML body
  /etag/<key>            ETag validator, Cache-Control: max-age=0 (304 on a matching If-None-Match)
  /lastmod/<key>         Last-Modified validator, Cache-Control: max-age=0 (304 on If-Modified-Since)
  /etag, /lastmod        the same with key ""
  /cached/<key>          Cache-Control: max-age=60
  /expires/<key>         Expires header 60 s ahead, no Cache-Control
  /nostore/<key>         Cache-Control: no-store
  /counter/<name>?delay=S  counts hits (sleeps S, default 0.2, so concurrent callers overlap)
  /broken                broken HTML (unclosed tags, stray end tags)
  /fixture/<name>?delay=S  a file of tests/fixtures (.html, .css, .js), after S seconds (default 0)
Proxy-mode routes:
  /echo                  any method: JSON of the method, path, query, headers, body length and SHA-256
  /download?mb=N         N MB (default 20) of application/octet-stream, streamed, Content-Length set
  /plain                 a non-article page with an image (/binary) and a stylesheet (/plain.css)
  /form                  a page with a POST form to /echo
  /chunked               an HTML page sent chunked (no Content-Length)
  /set-cookie            sets a cookie and echoes the Cookie header it got
The `tls_upstream` fixture serves the same site over HTTPS with a certificate for `secure.test`
from a test CA (`ca_file`, `ca_spki`).
"""

from __future__ import annotations

import asyncio
import functools
import gzip
import hashlib
import json
import ssl
import threading
import time
import zlib
from collections import Counter
from collections.abc import Iterator
from email.utils import formatdate
from functools import cache
from pathlib import Path

import brotli
import pytest
from aiohttp import web
from aiohttp.typedefs import Handler

DATASETS = Path(__file__).resolve().parents[2].parent / "shared" / "datasets"
SCRAPINGHUB = DATASETS / "scrapinghub" / "html"
READABILITY = DATASETS / "readability"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
FIXTURE_TYPES = {".html": "text/html; charset=utf-8", ".css": "text/css", ".js": "text/javascript"}

HUGE_BYTES = 11 * 1024 * 1024
BOMB_DECODED_BYTES = 128 * 1024 * 1024
LAST_MODIFIED = formatdate(1_700_000_000, usegmt=True)  # a fixed date in the past

ARTICLE_TITLE = "The Upstream Test Article"
ARTICLE_TEXT = (
    "Reader mode proxies fetch a page, find its main content and show it without the clutter. "
    "This paragraph is long enough to be recognised as the body of the article by every extractor. "
)
ARTICLE_HTML = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{ARTICLE_TITLE}</title></head>
<body><nav><a href="/">Home</a> <a href="/about">About</a></nav>
<article><h1>{ARTICLE_TITLE}</h1>
<p>{ARTICLE_TEXT * 3}</p>
<p>{ARTICLE_TEXT * 2}</p>
<p>A third paragraph with <a href="/other">a link</a> and more words to read through.</p>
</article>
<footer>Copyright the upstream site</footer></body></html>
"""
#: The text of /wrong-charset: its non-ASCII letters differ between windows-1252 and utf-8.
WRONG_CHARSET_TEXT = "Café crème, naïve façade — “quoted” déjà vu. "
PNG_BYTES = (
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"
    b"\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82"
)
PDF_BYTES = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"
BROKEN_HTML = (
    "<html><head><title>Broken page</head><body><div><p>First paragraph of a broken page "
    "<b>bold <i>both</b> italic</i><p>Second paragraph</div></span></table>" + ARTICLE_TEXT * 3 + "<div"
)


def _html(text: str, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(text=text, status=status, content_type="text/html", charset="utf-8", headers=headers)


def _page(title: str, body: str) -> str:
    return (
        f"<!doctype html><html><head><title>{title}</title></head><body><article><h1>{title}</h1>"
        f"<p>{body}</p><p>{ARTICLE_TEXT * 3}</p></article></body></html>"
    )


@cache
@functools.cache
def bomb_body(encoding: str) -> bytes:
    """BOMB_DECODED_BYTES of spaces, compressed (~130 KB gzip, far less brotli).

    Made once per encoding (about a second for gzip, several under load: computed per request it
    held the answer past the test server's read timeout, a 504 where the test expects 413)."""
    chunk = b" " * (1024 * 1024)
    if encoding == "br":
        compressor = brotli.Compressor(quality=1)
        parts = [compressor.process(chunk) for _ in range(BOMB_DECODED_BYTES // len(chunk))]
        return b"".join([*parts, compressor.finish()])
    wbits = 31 if encoding == "gzip" else 15
    compressor = zlib.compressobj(9, zlib.DEFLATED, wbits)
    parts = [compressor.compress(chunk) for _ in range(BOMB_DECODED_BYTES // len(chunk))]
    parts.append(compressor.flush())
    return b"".join(parts)


class Upstream:
    """A running upstream test site: `url(path)`, request counters, and the app routes."""

    def __init__(self, ssl_context: ssl.SSLContext | None = None) -> None:
        self.host = "127.0.0.1"
        self.port = 0
        self.ssl_context = ssl_context
        self.ca_file: Path | None = None
        self.ca_spki = ""
        self.counts: Counter[str] = Counter()
        self.conditionals: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None

    # ---- public helpers -------------------------------------------------------------------------
    def url(self, path: str) -> str:
        """Absolute URL of `path` on this site."""
        return f"http://{self.host}:{self.port}/{path.lstrip('/')}"

    def count(self, path: str) -> int:
        """Requests seen for `path` (without query), e.g. "/counter/x"."""
        with self._lock:
            return self.counts["/" + path.lstrip("/")]

    def conditional(self, path: str) -> int:
        """Requests for `path` that carried If-None-Match or If-Modified-Since."""
        with self._lock:
            return self.conditionals["/" + path.lstrip("/")]

    def scrapinghub_ids(self) -> list[str]:
        """Ids served under /sh/<id>; the calling test is skipped, saying why, without ../shared/datasets."""
        if not SCRAPINGHUB.is_dir():
            pytest.skip(f"{SCRAPINGHUB} is missing (../shared/datasets is not beside the repository)")
        return sorted(p.name.removesuffix(".html.gz") for p in SCRAPINGHUB.glob("*.html.gz"))

    def require_datasets(self) -> None:
        """Skip the calling test when ../shared/datasets is absent (so /sh/ and /rd/ would 404)."""
        if not DATASETS.is_dir():
            pytest.skip("../shared/datasets is not beside the repository")

    def readability_names(self) -> list[str]:
        """Names served under /rd/<name>; the calling test is skipped, saying why, without ../shared/datasets."""
        if not READABILITY.is_dir():
            pytest.skip(f"{READABILITY} is missing (../shared/datasets is not beside the repository)")
        return sorted(p.parent.name for p in READABILITY.glob("*/source.html"))

    # ---- lifecycle ------------------------------------------------------------------------------
    def start(self) -> None:
        started = threading.Event()
        errors: list[BaseException] = []
        loop = asyncio.new_event_loop()
        self._loop = loop

        def serve() -> None:
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self._start_site())
            except BaseException as exc:  # reported to the starting thread
                errors.append(exc)
                started.set()
                return
            started.set()
            loop.run_forever()
            pending = asyncio.all_tasks(loop)
            for task in pending:
                task.cancel()
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.close()

        self._thread = threading.Thread(target=serve, name="upstream-site", daemon=True)
        self._thread.start()
        started.wait(30)
        if errors:
            raise errors[0]

    def stop(self) -> None:
        if self._loop is None or self._thread is None:
            return
        asyncio.run_coroutine_threadsafe(self._stop_site(), self._loop).result(30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(30)

    async def _start_site(self) -> None:
        self._runner = web.AppRunner(self.app(), shutdown_timeout=0.5, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, 0, ssl_context=self.ssl_context)
        await site.start()
        server = site._server
        assert server is not None and isinstance(server, asyncio.base_events.Server)
        self.port = server.sockets[0].getsockname()[1]

    async def _stop_site(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    # ---- the site -------------------------------------------------------------------------------
    def app(self) -> web.Application:
        app = web.Application(middlewares=[self._count])
        r = app.router
        r.add_get("/sh/{id}", self.scrapinghub)
        r.add_get("/rd/{name}", self.readability)
        r.add_get("/article", self.article)
        r.add_get("/gzip", self.encoded)
        r.add_get("/deflate", self.encoded)
        r.add_get("/br", self.encoded)
        r.add_get("/slow", self.slow)
        r.add_get("/slow-body", self.slow_body)
        r.add_get("/huge", self.huge)
        r.add_get("/bomb", self.bomb)
        r.add_get("/redirect-loop", self.redirect_loop)
        r.add_get("/redirect/{n}", self.redirect_chain)
        r.add_get("/redirect-to", self.redirect_to)
        r.add_get("/redirect-to-private", self.redirect_to_private)
        r.add_get("/wrong-charset", self.wrong_charset)
        r.add_get("/wrong-charset/reverse", self.wrong_charset_reverse)
        r.add_get("/binary", self.binary)
        r.add_get("/pdf", self.pdf)
        r.add_get("/status/{code}", self.status)
        r.add_get("/etag", self.etag)
        r.add_get("/etag/{key}", self.etag)
        r.add_get("/lastmod", self.lastmod)
        r.add_get("/lastmod/{key}", self.lastmod)
        r.add_get("/cached", self.cached)
        r.add_get("/cached/{key}", self.cached)
        r.add_get("/expires/{key}", self.expires)
        r.add_get("/nostore", self.nostore)
        r.add_get("/nostore/{key}", self.nostore)
        r.add_get("/counter/{name}", self.counter)
        r.add_get("/broken", self.broken)
        r.add_get("/fixture/{name}", self.fixture)
        r.add_get("/reset-mid-body", self.reset_mid_body)
        r.add_get("/slowloris", self.slowloris)
        r.add_get("/empty", self.empty)
        r.add_get("/no-content", self.no_content)
        r.add_get("/generated/{key}", self.generated)
        r.add_route("*", "/echo", self.echo)
        r.add_get("/download", self.download)
        r.add_get("/plain", self.plain)
        r.add_get("/plain.css", self.plain_css)
        r.add_get("/form", self.form)
        r.add_get("/chunked", self.chunked)
        r.add_get("/set-cookie", self.set_cookie)
        return app

    @web.middleware
    async def _count(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        with self._lock:
            self.counts[request.path] += 1
            if "If-None-Match" in request.headers or "If-Modified-Since" in request.headers:
                self.conditionals[request.path] += 1
        return await handler(request)

    async def scrapinghub(self, request: web.Request) -> web.StreamResponse:
        path = SCRAPINGHUB / f"{request.match_info['id']}.html.gz"
        if not path.is_file() or "/" in request.match_info["id"]:
            raise web.HTTPNotFound()
        data = path.read_bytes()
        if "gzip" in request.headers.get("Accept-Encoding", ""):
            return web.Response(
                body=data, headers={"Content-Type": "text/html; charset=utf-8", "Content-Encoding": "gzip"}
            )
        return web.Response(body=gzip.decompress(data), headers={"Content-Type": "text/html; charset=utf-8"})

    async def readability(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        path = READABILITY / name / "source.html"
        if "/" in name or ".." in name or not path.is_file():
            raise web.HTTPNotFound()
        return web.Response(body=path.read_bytes(), headers={"Content-Type": "text/html"})

    async def fixture(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        path = FIXTURES / name
        if "/" in name or ".." in name or path.suffix not in FIXTURE_TYPES or not path.is_file():
            raise web.HTTPNotFound()
        await asyncio.sleep(min(float(request.query.get("delay", "0")), 30.0))
        return web.Response(body=path.read_bytes(), headers={"Content-Type": FIXTURE_TYPES[path.suffix]})

    async def article(self, request: web.Request) -> web.Response:
        return _html(ARTICLE_HTML)

    async def encoded(self, request: web.Request) -> web.Response:
        data = ARTICLE_HTML.encode()
        encoding = request.path.lstrip("/")
        if encoding == "gzip":
            body = gzip.compress(data)
        elif encoding == "deflate":
            body = zlib.compress(data)
        else:
            body = brotli.compress(data)
        return web.Response(
            body=body, headers={"Content-Type": "text/html; charset=utf-8", "Content-Encoding": encoding}
        )

    async def slow(self, request: web.Request) -> web.Response:
        await asyncio.sleep(float(request.query.get("s", "60")))
        return _html(_page("Slow", "Finally."))

    async def slow_body(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/html; charset=utf-8"})
        await response.prepare(request)
        await response.write(b"<!doctype html><html><head><title>Slow body</title></head><body><p>")
        await asyncio.sleep(float(request.query.get("s", "60")))
        await response.write(b"done</p></body></html>")
        return response

    async def huge(self, request: web.Request) -> web.StreamResponse:
        headers = {"Content-Type": "text/html; charset=utf-8"}
        if request.query.get("cl"):
            headers["Content-Length"] = str(HUGE_BYTES)
        response = web.StreamResponse(headers=headers)
        await response.prepare(request)
        chunk = b"<p>" + b"x" * (64 * 1024 - 7) + b"</p>\n"
        try:
            for _ in range(HUGE_BYTES // len(chunk)):
                await response.write(chunk)
            await response.write(b" " * (HUGE_BYTES % len(chunk)))
            await response.write_eof()
        except ConnectionError:
            pass  # the client stopped reading at its size cap, as it should
        return response

    async def bomb(self, request: web.Request) -> web.Response:
        encoding = request.query.get("enc", "gzip")
        if encoding not in ("gzip", "deflate", "br"):
            raise web.HTTPBadRequest()
        body = await asyncio.to_thread(bomb_body, encoding)
        return web.Response(
            body=body, headers={"Content-Type": "text/html; charset=utf-8", "Content-Encoding": encoding}
        )

    async def redirect_loop(self, request: web.Request) -> web.Response:
        raise web.HTTPFound("/redirect-loop")

    async def redirect_chain(self, request: web.Request) -> web.Response:
        n = int(request.match_info["n"])
        if n <= 0:
            return _html(_page("Redirect target", "You arrived after the redirects."))
        raise web.HTTPFound(f"{n - 1}")  # relative Location, resolved against the current hop

    async def redirect_to(self, request: web.Request) -> web.Response:
        raise web.HTTPFound(request.query["url"])

    async def redirect_to_private(self, request: web.Request) -> web.Response:
        raise web.HTTPFound("http://169.254.169.254/latest/meta-data/")

    async def wrong_charset(self, request: web.Request) -> web.Response:
        body = _page("Wrong charset", WRONG_CHARSET_TEXT * 5).encode("windows-1252")
        return web.Response(body=body, headers={"Content-Type": "text/html; charset=utf-8"})

    async def wrong_charset_reverse(self, request: web.Request) -> web.Response:
        body = _page("Wrong charset", WRONG_CHARSET_TEXT * 5).encode("utf-8")
        return web.Response(body=body, headers={"Content-Type": "text/html; charset=windows-1252"})

    async def binary(self, request: web.Request) -> web.Response:
        return web.Response(body=PNG_BYTES, headers={"Content-Type": "image/png"})

    async def pdf(self, request: web.Request) -> web.Response:
        return web.Response(body=PDF_BYTES, headers={"Content-Type": "application/pdf"})

    async def status(self, request: web.Request) -> web.Response:
        code = int(request.match_info["code"])
        return _html(_page(f"Status {code}", "An error page from upstream."), status=code)

    async def etag(self, request: web.Request) -> web.Response:
        key = request.match_info.get("key", "")
        tag = f'"v1-{key}"'
        headers = {"ETag": tag, "Cache-Control": "max-age=0"}
        if request.headers.get("If-None-Match") == tag:
            return web.Response(status=304, headers=headers)
        return _html(_page(f"ETag {key}", "A page with an entity tag."), headers=headers)

    async def lastmod(self, request: web.Request) -> web.Response:
        key = request.match_info.get("key", "")
        headers = {"Last-Modified": LAST_MODIFIED, "Cache-Control": "max-age=0"}
        if request.headers.get("If-Modified-Since") == LAST_MODIFIED:
            return web.Response(status=304, headers=headers)
        return _html(_page(f"Last-Modified {key}", "A page with a modification date."), headers=headers)

    async def cached(self, request: web.Request) -> web.Response:
        key = request.match_info.get("key", "")
        return _html(_page(f"Cached {key}", "Fresh for a minute."), headers={"Cache-Control": "max-age=60"})

    async def expires(self, request: web.Request) -> web.Response:
        key = request.match_info["key"]
        return _html(
            _page(f"Expires {key}", "Fresh until the Expires date."),
            headers={"Expires": formatdate(time.time() + 60, usegmt=True)},
        )

    async def nostore(self, request: web.Request) -> web.Response:
        key = request.match_info.get("key", "")
        return _html(_page(f"No store {key}", "Never cache me."), headers={"Cache-Control": "no-store"})

    async def counter(self, request: web.Request) -> web.Response:
        await asyncio.sleep(float(request.query.get("delay", "0.2")))
        name = request.match_info["name"]
        return _html(_page(f"Counter {name}", json.dumps({"hits": self.count(request.path)})))

    async def broken(self, request: web.Request) -> web.Response:
        return _html(BROKEN_HTML)

    # ---- hardening: faults and hostile pages -------------------------------------------------------------------
    async def reset_mid_body(self, request: web.Request) -> web.StreamResponse:
        """Promises 100 KB, sends 10 KB, then resets the connection (RST)."""
        response = web.StreamResponse(
            headers={"Content-Type": "text/html; charset=utf-8", "Content-Length": "102400"}
        )
        await response.prepare(request)
        await response.write(b"<!doctype html><html><body><p>" + b"x" * 10_000)
        transport = request.transport
        if transport is not None:
            sock = transport.get_extra_info("socket")
            if sock is not None:  # SO_LINGER 0: close() sends a RST
                import socket as socket_module
                import struct as struct_module

                sock.setsockopt(
                    socket_module.SOL_SOCKET, socket_module.SO_LINGER, struct_module.pack("ii", 1, 0)
                )
            transport.abort()
        return response

    async def slowloris(self, request: web.Request) -> web.StreamResponse:
        """A byte every `every` seconds (default 0.5) for `s` seconds (default 60): never a read timeout."""
        response = web.StreamResponse(headers={"Content-Type": "text/html; charset=utf-8"})
        await response.prepare(request)
        every = float(request.query.get("every", "0.5"))
        end = asyncio.get_running_loop().time() + float(request.query.get("s", "60"))
        await response.write(b"<!doctype html><html><body><p>")
        while asyncio.get_running_loop().time() < end:
            await asyncio.sleep(every)
            await response.write(b"a")
        await response.write(b"</p></body></html>")
        return response

    async def empty(self, request: web.Request) -> web.Response:
        """200 text/html with an empty body."""
        return web.Response(body=b"", headers={"Content-Type": "text/html; charset=utf-8"})

    async def no_content(self, request: web.Request) -> web.Response:
        return web.Response(status=204)

    async def generated(self, request: web.Request) -> web.Response:
        """A distinct article of about `kb` KB (default 50) for each key: soak and load runs."""
        key = request.match_info["key"]
        size = int(request.query.get("kb", "50")) * 1024
        paragraph = (
            f"<p>Paragraph of page {key}: the quick brown fox jumps over the lazy dog, "
            "and the reader keeps reading this sentence to the end. </p>\n"
        )
        count = max(1, size // len(paragraph))
        body = (
            f"<!doctype html><html><head><title>Generated {key}</title></head><body><article>"
            f"<h1>Generated {key}</h1>{paragraph * count}</article></body></html>"
        )
        return _html(body)

    # ---- proxy mode -----------------------------------------------------------------------------
    async def echo(self, request: web.Request) -> web.Response:
        digest = hashlib.sha256()
        length = 0
        async for chunk in request.content.iter_chunked(64 * 1024):
            digest.update(chunk)
            length += len(chunk)
        return web.json_response(
            {
                "method": request.method,
                "path": request.path,
                "query": request.query_string,
                "headers": [[k, v] for k, v in request.headers.items()],
                "length": length,
                "sha256": digest.hexdigest(),
                "chunked": "chunked" in request.headers.get("Transfer-Encoding", ""),
            }
        )

    async def download(self, request: web.Request) -> web.StreamResponse:
        size = int(float(request.query.get("mb", "20")) * 1024 * 1024)
        response = web.StreamResponse(
            headers={
                "Content-Type": "application/octet-stream",
                "Content-Length": str(size),
                "Content-Disposition": 'attachment; filename="big.bin"',
            }
        )
        await response.prepare(request)
        chunk = bytes(range(256)) * 256  # 64 KiB
        sent = 0
        try:
            while sent < size:
                part = chunk[: size - sent]
                await response.write(part)
                sent += len(part)
            await response.write_eof()
        except ConnectionError:
            pass
        return response

    async def plain(self, request: web.Request) -> web.Response:
        return _html(PLAIN_HTML)

    async def plain_css(self, request: web.Request) -> web.Response:
        return web.Response(text=PLAIN_CSS, content_type="text/css")

    async def form(self, request: web.Request) -> web.Response:
        return _html(FORM_HTML)

    async def chunked(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/html; charset=utf-8"})
        response.enable_chunked_encoding()
        await response.prepare(request)
        for part in ARTICLE_HTML.encode().split(b"<p>"):
            await response.write(part + b"<p>" if part else b"<p>")
        await response.write_eof()
        return response

    async def set_cookie(self, request: web.Request) -> web.Response:
        response = web.json_response({"cookie": request.headers.get("Cookie")})
        response.set_cookie("session", "abc123", path="/")
        return response


PLAIN_HTML = """<!doctype html><html><head><meta charset="utf-8"><title>Plain page</title>
<link rel="stylesheet" href="/plain.css"></head>
<body><h1 id="title">Not an article</h1><img id="pixel" src="/binary" alt="pixel" width="10" height="10">
<ul><li><a href="/article">Article</a></li><li><a href="/form">Form</a></li></ul></body></html>
"""
PLAIN_CSS = "#title { color: rgb(1, 2, 3); }\n"
FORM_HTML = """<!doctype html><html><head><meta charset="utf-8"><title>Form</title></head>
<body><form id="f" method="post" action="/echo" enctype="application/x-www-form-urlencoded">
<input name="name" value="Zoë &amp; co"><textarea name="text">line one
line two</textarea><button type="submit">Send</button></form></body></html>
"""


def make_tls_upstream(directory: Path) -> Upstream:
    """The upstream site over HTTPS: a certificate for `secure.test` signed by a fresh test CA."""
    from readerproxy.proxy.tls import key_pem, make_ca, make_leaf, pem, spki_sha256

    ca_key, ca_cert = make_ca("readerproxy test upstream CA")
    from cryptography.hazmat.primitives.asymmetric import ec

    leaf_key = ec.generate_private_key(ec.SECP256R1())
    leaf = make_leaf("secure.test", ca_key, ca_cert, leaf_key)
    (directory / "ca.pem").write_bytes(pem(ca_cert))
    (directory / "server.pem").write_bytes(pem(leaf) + pem(ca_cert) + key_pem(leaf_key))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(directory / "server.pem")
    site = Upstream(context)
    site.ca_file = directory / "ca.pem"
    site.ca_spki = spki_sha256(ca_cert)
    return site


@pytest.fixture(scope="session")
def tls_upstream(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Upstream]:
    """The upstream site over HTTPS on 127.0.0.1, certificate for `secure.test` from a test CA."""
    site = make_tls_upstream(tmp_path_factory.mktemp("tls-upstream"))
    site.start()
    yield site
    site.stop()


@pytest.fixture(scope="session")
def upstream() -> Iterator[Upstream]:
    """A real upstream test site on 127.0.0.1 (ephemeral port), shared by the session; use unique keys."""
    site = Upstream()
    site.start()
    threading.Thread(target=lambda: [bomb_body(e) for e in ("gzip", "deflate", "br")], daemon=True).start()
    yield site
    site.stop()
