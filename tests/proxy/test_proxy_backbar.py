"""The bar back to the reader view (`readerproxy/proxy/backbar.py`): where a page's CSP allows it,
where it goes in the page, and what the proxy sends with it, through a real proxy and site
(aiohttp as the client; Chromium in `tests/browser/test_proxy_setup_browser.py`). Also readerproxy's own
cookies kept from the sites (`setup.without_own_cookies`)."""

from __future__ import annotations

import aiohttp
import pytest
from support.proxy_browser import recording_site
from test_proxy import HTML_ACCEPT
from test_proxy_setup import get, setup_proxy

from readerproxy.proxy.addons import MARKER, READER_MARKER
from readerproxy.proxy.backbar import Origin, body_start, meta_policies, policy_allows_bar
from readerproxy.proxy.setup import without_own_cookies

HTTP = Origin("http", "news.test", 80)
HTTPS = Origin("https", "news.test", 443)


@pytest.mark.parametrize(
    ("policy", "origin", "allowed"),
    [
        ("default-src 'none'", HTTP, False),
        ("default-src 'self'", HTTP, True),
        ("default-src 'none'; style-src 'self'", HTTP, True),
        ("style-src 'self'; style-src-elem 'none'", HTTP, False),  # -elem comes first for <link>
        ("style-src 'nonce-abc' 'sha256-AAAA' 'unsafe-inline'", HTTP, False),
        ("default-src https:", HTTPS, True),
        ("default-src https:", HTTP, False),
        ("style-src http:", HTTPS, True),  # http: allows https too
        ("style-src news.test", HTTP, True),
        ("style-src news.test", Origin("http", "news.test", 8080), False),  # the default port only
        ("style-src news.test:8080", Origin("http", "news.test", 8080), True),
        ("style-src https://*.test", HTTPS, True),
        ("style-src https://*.test", HTTP, False),
        ("style-src cdn.example", HTTP, False),
        ("style-src *", HTTP, True),
        ("script-src 'none'; img-src 'none'", HTTP, True),  # nothing about stylesheets
        ("default-src *; sandbox allow-scripts", HTTP, False),  # a sandboxed page: never
        ("", HTTP, True),
    ],
)
def test_which_policies_let_the_bar_in(policy: str, origin: Origin, allowed: bool) -> None:
    assert policy_allows_bar(policy, origin) is allowed


def test_the_bar_goes_after_the_real_body_tag() -> None:
    page = (
        b"<!doctype html><head><!-- <body> --><script>let s = '<body>';</script>"
        b"<style>body{}</style><title>t</title></head><BODY class='x'><p>text</p></body>"
    )
    start = body_start(page)
    assert start is not None and page[:start].endswith(b"<BODY class='x'>")
    assert body_start(b"<p>no body tag, parser-implied</p>") is None
    assert body_start(b"<bodyguard>not a body</bodyguard>") is None


def test_meta_policies_are_read_from_the_head_only() -> None:
    page = (
        b'<head><meta http-equiv="Content-Security-Policy" content="default-src \'none\'">'
        b"<meta charset=utf-8></head><body>"
        b'<meta http-equiv="Content-Security-Policy" content="style-src *"></body>'
    )
    assert meta_policies(page) == ["default-src 'none'"]


def test_own_cookies_are_kept_from_the_sites() -> None:
    assert without_own_cookies("rp_size=l; session=abc; rp_client=x; rp_sitepref=1") == (
        "session=abc; rp_sitepref=1"
    )
    assert without_own_cookies("rp_theme=dark") == ""


async def test_bar_on_an_encoded_original_article_and_nothing_else() -> None:
    async with recording_site() as site, setup_proxy() as proxy, aiohttp.ClientSession() as http:
        status, headers, body = await get(http, proxy, f"{site.url('/encoded')}?{MARKER}")
        assert status == 200 and "Content-Encoding" not in headers and "ETag" not in headers
        assert int(headers["Content-Length"]) == len(body)
        served = site.served("/csp/none")
        bar_at = body.index(b"<readerproxy-bar")
        assert body[:bar_at] + body[body.index(b"</readerproxy-bar>") + 18 :] == served
        assert served[:bar_at].endswith(b"<body>")  # right after the body tag
        assert f'href="{site.url("/encoded")}?{READER_MARKER}"'.encode() in body
        assert b'href="/.readerproxy/static/backbar.css?v=' in body
        # the bar's stylesheet, from the page's own origin
        async with http.get(
            site.url("/.readerproxy/static/backbar.css"), proxy=proxy.url, headers={"Accept": "text/css"}
        ) as css:
            assert css.status == 200 and "readerproxy-bar" in await css.text()
        # HEAD, a request that is no navigation, and the page without the marker: no bar
        async with http.head(
            f"{site.url('/csp/none')}?{MARKER}", proxy=proxy.url, headers={"Accept": HTML_ACCEPT}
        ) as head:
            assert head.status == 200 and "Content-Encoding" not in head.headers
            assert int(head.headers["Content-Length"]) == len(served)  # the page's own length: no bar
        async with http.get(
            f"{site.url('/csp/none')}?{MARKER}", proxy=proxy.url, headers={"Accept": "*/*"}
        ) as fetched:
            assert await fetched.read() == served
        status, headers, body = await get(http, proxy, site.url("/csp/none"))
        assert headers.get("X-Readerproxy") == "reader-view" and b"<readerproxy-bar" not in body
        # the way back: the marker gives the reader view once
        status, headers, body = await get(http, proxy, f"{site.url('/csp/none')}?{READER_MARKER}")
        assert headers.get("X-Readerproxy") == "reader-view"
    assert [
        each.path for each in site.seen if "readerproxy" in each.path
    ] == []  # markers stay with the proxy


async def test_readerproxy_cookies_never_go_to_a_site() -> None:
    async with recording_site() as site, setup_proxy() as proxy, aiohttp.ClientSession() as http:
        cookie = "rp_size=xl; session=abc; rp_client=abcdefghijklmnopqrstuvwx; rp_sitepref=1"
        for accept in (HTML_ACCEPT, "*/*"):  # a navigation (the reader view) and any other request
            async with http.get(
                site.url("/plain"), proxy=proxy.url, headers={"Accept": accept, "Cookie": cookie}
            ) as r:
                assert r.status == 200
        async with http.get(
            site.url("/plain"), proxy=proxy.url, headers={"Accept": "*/*", "Cookie": "rp_theme=dark"}
        ) as r:
            assert r.status == 200
    assert [each.cookie for each in site.seen] == ["session=abc; rp_sitepref=1"] * 2 + [None]
