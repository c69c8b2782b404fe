"""Every navigation through the proxy is answered: when reading a page fails, for
whatever reason (the extraction pool overloaded or past its deadline, a worker that died, a bug in an
addon), the original arrives whole, as the site sent it, and `/metrics` counts the reason; a bug
before there is anything to pass on is a readable 502 page, never a connection closed with no answer.

Real parts: the upstream test site on 127.0.0.1 (`news.test` through `--resolve`), the proxy and the
reader server in this process, extraction worker processes; the client is aiohttp or a raw socket.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal

import aiohttp
import pytest
from support.upstream import ARTICLE_HTML, Upstream
from test_proxy import HTML_ACCEPT, RunningProxy, raw, running_proxy, site
from test_proxy_setup import get as navigate  # aiohttp checks the body against its Content-Length

from readerproxy.proxy.addons import Addon
from readerproxy.proxy.flow import Flow
from readerproxy.web.server import METRICS, READER


def fallbacks(proxy: RunningProxy, reason: str) -> float:
    """How many pages `/metrics` says passed through because reading them failed for `reason`."""
    assert proxy.server.app is not None
    value = proxy.server.app[METRICS].registry.get_sample_value(
        "readerproxy_proxy_reader_fallbacks_total", {"reason": reason}
    )
    return value or 0.0


async def direct(http: aiohttp.ClientSession, upstream: Upstream, path: str) -> bytes:
    """The page as the site sends it, fetched without the proxy."""
    async with http.get(upstream.url(path)) as response:
        return await response.read()


def assert_original(status: int, headers: dict[str, str], body: bytes, original: bytes) -> None:
    assert status == 200
    assert "X-Readerproxy" not in headers
    assert body == original  # the page as it came, every byte


def assert_complete(status: int, headers: dict[str, str], body: bytes, original: bytes) -> None:
    """A whole answer: the reader view (a complete page) or the original byte for byte."""
    assert status == 200
    if headers.get("X-Readerproxy") == "reader-view":
        assert body.rstrip().endswith(b"</html>")
        assert int(headers["Content-Length"]) == len(body)
    else:
        assert body == original


class Broken(Addon):
    """An addon with a bug in one hook: what any addon's unexpected exception does to a flow."""

    def __init__(self, hook: str) -> None:
        self.hook = hook

    def _fail(self, hook: str) -> None:
        if hook == self.hook:
            raise RuntimeError(f"a bug in {hook}")

    async def request(self, flow: Flow) -> None:
        if flow.request.path.startswith("/article"):
            self._fail("request")

    async def response_headers(self, flow: Flow) -> None:
        self._fail("response_headers")

    async def response(self, flow: Flow, body: bytes) -> None:
        self._fail("response")

    async def done(self, flow: Flow) -> None:
        self._fail("done")


# ---- each way reading can fail ------------------------------------------------------------------


async def test_extraction_past_its_deadline_passes_the_original(
    upstream: Upstream, http: aiohttp.ClientSession
) -> None:
    """`--extract-timeout` too short for any page: every HTML navigation got an empty reply before."""
    async with running_proxy(extract_timeout=0.001) as proxy:
        status, headers, body = await navigate(http, proxy, site(upstream, "/article"))
        assert_original(status, headers, body, ARTICLE_HTML.encode())
        assert fallbacks(proxy, "extraction_timeout") == 1
        assert proxy.metric("passed_through") == 1


async def test_a_dead_worker_passes_the_original(upstream: Upstream, http: aiohttp.ClientSession) -> None:
    """Every extraction worker killed (as the system's OOM killer would): the next page to read
    meets a dead worker, and comes through as it was."""
    async with running_proxy() as proxy:
        assert proxy.server.app is not None
        pool = proxy.server.app[READER].workers
        assert pool is not None
        for worker in list(pool._workers):
            assert worker.process.pid is not None
            os.kill(worker.process.pid, signal.SIGKILL)
            await asyncio.to_thread(worker.process.join, 5)
        status, headers, body = await navigate(http, proxy, site(upstream, "/article"))
        assert_original(status, headers, body, ARTICLE_HTML.encode())
        assert fallbacks(proxy, "extraction_failed") == 1
        # the pool replaced the worker: the next navigation is read again
        status, headers, body = await navigate(http, proxy, site(upstream, "/article?again=1"))
        assert status == 200 and headers.get("X-Readerproxy") == "reader-view"


async def test_an_overloaded_pool_passes_the_originals(
    upstream: Upstream, http: aiohttp.ClientSession
) -> None:
    """One worker, no queue: of a dozen article navigations at once, those that find the pool busy
    are passed through whole (the issue saw 9 of 30 answered with nothing)."""
    upstream.require_datasets()
    paths = [f"/rd/ars-1?overload={i}" for i in range(12)]
    originals = await asyncio.gather(*(direct(http, upstream, path) for path in paths))
    async with running_proxy(extract_workers=1, extract_queue=0, extract_per_client=1) as proxy:
        answers = await asyncio.gather(*(navigate(http, proxy, site(upstream, path)) for path in paths))
        for (status, headers, body), original in zip(answers, originals, strict=True):
            assert_complete(status, headers, body, original)
        passed = sum(1 for _, headers, _ in answers if "X-Readerproxy" not in headers)
        assert passed >= 1
        assert fallbacks(proxy, "overloaded") == passed
        assert proxy.metric("reader_view") + proxy.metric("passed_through") == len(paths)


@pytest.mark.parametrize("hook", ["response_headers", "response", "done"])
async def test_a_bug_in_an_addon_after_the_site_answered_passes_the_original(
    upstream: Upstream, http: aiohttp.ClientSession, caplog: pytest.LogCaptureFixture, hook: str
) -> None:
    async with running_proxy() as proxy:
        proxy.proxy.addons.insert(-1, Broken(hook))  # before the metrics addon
        with caplog.at_level(logging.ERROR, logger="readerproxy.proxy"):
            status, headers, body = await navigate(http, proxy, site(upstream, "/article"))
            if hook == "done":  # too late to change the answer: the reader view, and the bug logged
                assert status == 200 and headers["X-Readerproxy"] == "reader-view"
            else:
                assert_original(status, headers, body, ARTICLE_HTML.encode())
                assert fallbacks(proxy, "internal") == 1
            # the connection is still good for the next request
            status, _, body = await navigate(http, proxy, site(upstream, "/plain"))
            assert status == 200 and b"Not an article" in body
    failures = [r for r in caplog.records if "a bug in" in str(r.exc_info[1] if r.exc_info else "")]
    assert len(failures) == (2 if hook != "request" else 1)  # once per flow that met the bug


async def test_a_bug_before_the_site_was_asked_is_a_readable_502(
    upstream: Upstream, caplog: pytest.LogCaptureFixture
) -> None:
    async with running_proxy() as proxy:
        proxy.proxy.addons.insert(-1, Broken("request"))
        with caplog.at_level(logging.ERROR, logger="readerproxy.proxy"):
            request = f"GET {site(upstream, '/article')} HTTP/1.1\r\nHost: news.test\r\nAccept: {HTML_ACCEPT}\r\n\r\n"
            answer = await raw(proxy, request.encode())
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 502")
        assert b"Connection: close" in head
        assert b"text/html" in head
        assert b"readerproxy could not handle this request" in body and body.rstrip().endswith(b"</html>")
        assert proxy.metric("error") == 1
    logged = [r for r in caplog.records if r.exc_info and "a bug in request" in str(r.exc_info[1])]
    assert len(logged) == 1
    assert not [r for r in caplog.records if "Unhandled exception" in r.getMessage()]


# ---- under load ---------------------------------------------------------------------------------


async def test_fifty_article_navigations_at_once_are_all_answered_whole(upstream: Upstream) -> None:
    """50 concurrent navigations to distinct articles from one client (loopback, bounded): each one
    answered 200 with its whole body, a reader view or the original byte for byte."""
    upstream.require_datasets()
    paths = [f"/rd/ars-1?load={i}" for i in range(50)]
    connector = aiohttp.TCPConnector(limit=50)
    async with aiohttp.ClientSession(connector=connector) as http:
        originals = await asyncio.gather(*(direct(http, upstream, path) for path in paths))
        async with running_proxy() as proxy:
            answers = await asyncio.wait_for(
                asyncio.gather(*(navigate(http, proxy, site(upstream, path)) for path in paths)), 120
            )
            for (status, headers, body), original in zip(answers, originals, strict=True):
                assert_complete(status, headers, body, original)
            views = sum(1 for _, headers, _ in answers if headers.get("X-Readerproxy") == "reader-view")
            assert proxy.metric("reader_view") == views
            assert proxy.metric("passed_through") == len(paths) - views
            assert views >= 1
            reasons = ("overloaded", "extraction_timeout", "extraction_failed", "internal")
            assert sum(fallbacks(proxy, reason) for reason in reasons) == len(paths) - views
