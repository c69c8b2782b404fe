"""Headless Chromium through readerproxy's proxy, for the proxy mode browser tests.

`browser_through(proxy, *flags)` starts the tests' Chromium (`support.chromium`) with the proxy as
its HTTP proxy, loopback included (`--proxy-bypass-list=<-loopback>`), and yields the browser and
one page; `text_of(page)` is the page's visible text.

`recording_site()` serves a small site on 127.0.0.1 (in the test's event loop) that keeps a log of
every request it got (path and Cookie header): articles under several Content-Security-Policies
and a page that is no article, for the proxy's bar back to the reader view and its cookie rules.
"""

from __future__ import annotations

import contextlib
import gzip
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Protocol

import pytest
from aiohttp import web
from aiohttp.typedefs import Handler

from support.chromium import CHROMIUM, Chromium, Page
from support.upstream import ARTICLE_HTML, PLAIN_HTML

__all__ = ["CSP_PAGES", "RecordingSite", "browser_through", "recording_site", "text_of"]


class _Listening(Protocol):
    @property
    def port(self) -> int: ...


class _RunningProxy(Protocol):
    """What `browser_through` needs of a running proxy (tests/proxy/test_proxy.py's RunningProxy)."""

    @property
    def proxy(self) -> _Listening: ...


@contextlib.asynccontextmanager
async def browser_through(proxy: _RunningProxy, *flags: str) -> AsyncIterator[tuple[Chromium, Page]]:
    """Chromium with the proxy as its HTTP proxy, loopback included; skipped without Chromium."""
    if not CHROMIUM.exists():
        pytest.skip("/usr/bin/chromium is not installed")
    browser = Chromium(
        extra_flags=(
            f"--proxy-server=127.0.0.1:{proxy.proxy.port}",
            "--proxy-bypass-list=<-loopback>",
            *flags,
        )
    )
    try:
        await browser.start()
        yield browser, await browser.new_page()
    finally:
        await browser.close()


async def text_of(page: Page) -> str:
    """The page's visible text (`document.body.innerText`)."""
    return str(await page.evaluate("document.body.innerText"))


#: The test article as a phone-ready site serves it (a viewport meta), and with a strict CSP in a meta.
ARTICLE = ARTICLE_HTML.replace(
    '<meta charset="utf-8">',
    '<meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">',
)
STRICT_META = ARTICLE.replace(
    '<meta charset="utf-8">',
    '<meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="default-src \'none\'">',
)
#: Article pages of the recording site by path: (Content-Security-Policy header or None, the page).
CSP_PAGES: dict[str, tuple[str | None, str]] = {
    "/csp/none": (None, ARTICLE),
    "/csp/self": ("default-src 'self'; img-src *", ARTICLE),
    "/csp/strict": ("default-src 'none'; style-src 'sha256-AAAA'; base-uri 'none'", ARTICLE),
    "/csp/meta": (None, STRICT_META),
}


@dataclass
class SeenRequest:
    """One request the recording site got."""

    path: str
    cookie: str | None


@dataclass
class RecordingSite:
    """The recording site on `port`, and the log of every request it got (`seen`)."""

    port: int = 0
    seen: list[SeenRequest] = field(default_factory=list)

    def url(self, path: str, host: str = "news.test") -> str:
        return f"http://{host}:{self.port}{path}"

    def cookies(self) -> list[str]:
        """Every Cookie header the site got, in order."""
        return [each.cookie for each in self.seen if each.cookie is not None]

    def served(self, path: str) -> bytes:
        """The exact bytes the site answers for an article or the plain page."""
        return (CSP_PAGES[path][1] if path in CSP_PAGES else PLAIN_HTML).encode("utf-8")


def recording_app(site: RecordingSite) -> web.Application:
    @web.middleware
    async def record(request: web.Request, handler: Handler) -> web.StreamResponse:
        site.seen.append(SeenRequest(request.path_qs, request.headers.get("Cookie")))
        return await handler(request)

    async def page(request: web.Request) -> web.Response:
        path = request.path
        if path.startswith("/article/"):  # any number of articles, all alike
            path = "/csp/none"
        policy = CSP_PAGES.get(path, (None, ""))[0]
        headers = {"Content-Security-Policy": policy} if policy else {}
        return web.Response(
            body=site.served(path), content_type="text/html", charset="utf-8", headers=headers
        )

    async def encoded(request: web.Request) -> web.Response:  # the article gzip-encoded, with a validator
        body = gzip.compress(site.served("/csp/none"))
        headers = {"Content-Encoding": "gzip", "ETag": '"v1"', "Content-Type": "text/html; charset=utf-8"}
        return web.Response(body=body, headers=headers)

    app = web.Application(middlewares=[record])
    app.router.add_get("/encoded", encoded)
    for path in (*CSP_PAGES, "/plain"):
        app.router.add_get(path, page)
    app.router.add_get("/article/{name}", page)
    return app


@contextlib.asynccontextmanager
async def recording_site() -> AsyncIterator[RecordingSite]:
    """The recording site on 127.0.0.1 (ephemeral port) until the block ends."""
    site = RecordingSite()
    runner = web.AppRunner(recording_app(site))
    await runner.setup()
    tcp = web.TCPSite(runner, "127.0.0.1", 0)
    await tcp.start()
    site.port = tcp._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield site
    finally:
        await runner.cleanup()
