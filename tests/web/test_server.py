"""The reader server end to end: a real server on an ephemeral port reading the real upstream test site."""

from __future__ import annotations

import asyncio
import gzip
import json
import re
from urllib.parse import parse_qs, urlsplit

import aiohttp
import pytest
from selectolax.lexbor import LexborHTMLParser
from support.reader_server import RunningServer, serve, test_settings
from support.upstream import ARTICLE_TITLE, WRONG_CHARSET_TEXT, Upstream

from readerproxy import _speedups as speedups
from readerproxy.web.reader import Reader, ReadRequest, result_key
from readerproxy.web.server import CSP

API_FIELDS = {
    "url",
    "final_url",
    "title",
    "byline",
    "published",
    "site_name",
    "lang",
    "dir",
    "excerpt",
    "text",
    "html",
    "word_count",
    "reading_minutes",
    "algorithm",
    "parameters",
    "timings_ms",
    "cache",
    "score",
}


def assert_security_headers(response: aiohttp.ClientResponse) -> None:
    assert response.headers["Content-Security-Policy"] == CSP
    assert "script-src 'self';" in CSP and "default-src 'none'" in CSP and "unsafe-inline" not in CSP
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Referrer-Policy"] == "no-referrer"


async def test_healthz_and_landing_page(reader_server: RunningServer, http: aiohttp.ClientSession) -> None:
    async with http.get(reader_server.url("/healthz")) as response:
        health = await response.json()
        assert response.status == 200 and health["status"] == "ok"
        assert health["native_kernels"] is (speedups.native is not None)
    async with http.get(reader_server.url("/")) as response:
        assert response.status == 200 and response.content_type == "text/html"
        assert_security_headers(response)
        tree = LexborHTMLParser(await response.text())
    assert tree.css_first("form").attributes["action"] == "/read"
    bookmarklet = tree.css_first("a.bookmarklet").attributes["href"] or ""
    assert bookmarklet.startswith("javascript:") and reader_server.base + "/read?url=" in bookmarklet
    assert "density" in {o.attributes["value"] for o in tree.css("select[name=algo] option")}


async def test_read_article_html_then_cached(
    reader_server: RunningServer, http: aiohttp.ClientSession, upstream: Upstream
) -> None:
    target = upstream.url("/cached/reader-article")
    before = upstream.count("/cached/reader-article")
    async with http.get(reader_server.read_url(target)) as response:
        assert response.status == 200 and response.content_type == "text/html"
        assert response.headers["X-Cache"] == "miss"
        assert_security_headers(response)
        first = await response.text()
    async with http.get(reader_server.read_url(target)) as response:
        assert response.status == 200 and response.headers["X-Cache"] == "hit"
        assert await response.text() == first
    assert upstream.count("/cached/reader-article") == before + 1
    tree = LexborHTMLParser(first)
    assert "reader-article" in tree.css_first("article.reader h1").text()
    assert "Reader mode proxies" in tree.css_first(".content").text()
    assert tree.css_first("a.original").attributes["href"] == target
    # no inline script; only our own optional script from /static/ (the CSP allows 'self' only)
    assert all(
        (s.attributes.get("src") or "").startswith("/static/") and not s.text().strip()
        for s in tree.css("script")
    )


async def test_links_go_through_read_unless_switched_off(
    reader_server: RunningServer, http: aiohttp.ClientSession, upstream: Upstream
) -> None:
    target = upstream.url("/article")
    async with http.get(reader_server.read_url(target, algo="baseline")) as response:
        tree = LexborHTMLParser(await response.text())
    hrefs = [a.attributes["href"] or "" for a in tree.css(".content a")]
    assert hrefs and all(h.startswith("/read?") for h in hrefs)
    assert {"url": [upstream.url("/other")], "algo": ["baseline"]} in [
        parse_qs(urlsplit(h).query) for h in hrefs
    ]
    async with http.get(reader_server.read_url(target, algo="baseline", links="original")) as response:
        tree = LexborHTMLParser(await response.text())
    assert upstream.url("/other") in [a.attributes["href"] for a in tree.css(".content a")]


async def test_preferences_set_cookies_that_stick(
    reader_server: RunningServer, http: aiohttp.ClientSession, upstream: Upstream
) -> None:
    target = upstream.url("/article")
    async with http.get(reader_server.read_url(target, theme="sepia", size="xl")) as response:
        assert response.cookies["rp_theme"].value == "sepia"
        root = LexborHTMLParser(await response.text()).css_first("html")
        assert root is not None and root.attributes["data-theme"] == "sepia"
    async with http.get(reader_server.read_url(target)) as response:  # the cookie jar sends them back
        root = LexborHTMLParser(await response.text()).css_first("html")
    assert root is not None and (root.attributes["data-theme"], root.attributes["data-size"]) == (
        "sepia",
        "xl",
    )


async def test_lite_mode_folds_images_behind_a_tap(
    reader_server: RunningServer, http: aiohttp.ClientSession, upstream: Upstream
) -> None:
    upstream.require_datasets()
    target = upstream.url("/rd/keep-images")
    async with http.get(reader_server.read_url(target, lite="0")) as response:
        assert response.status == 200
        images = LexborHTMLParser(await response.text()).css(".content img")
    assert images and all((img.attributes.get("src") or "").startswith("/image?") for img in images)
    async with http.get(reader_server.read_url(target, lite="1")) as response:
        assert response.status == 200
        tree = LexborHTMLParser(await response.text())
    # every image behind a closed "Show image" tap (nothing fetched until asked), the text all there
    folded = tree.css(".content details.lite-image")
    assert folded and len(folded) == len(tree.css(".content img")) == len(images)
    assert all(
        "open" not in d.attributes and d.css_first("summary").text().startswith("Show image") for d in folded
    )
    assert all(img.parent is not None and img.parent.tag == "details" for img in tree.css(".content img"))
    assert tree.css_first(".content").text().strip()


@pytest.mark.parametrize(
    ("fmt", "content_type"), [("md", "text/markdown"), ("text", "text/plain"), ("json", "application/json")]
)
async def test_read_formats(
    reader_server: RunningServer, http: aiohttp.ClientSession, upstream: Upstream, fmt: str, content_type: str
) -> None:
    async with http.get(
        reader_server.read_url(upstream.url("/article"), format=fmt, algo="baseline")
    ) as response:
        assert response.status == 200 and response.content_type == content_type
        assert response.charset == "utf-8"
        body = await response.text()
    if fmt == "md":
        assert body.startswith(f"# {ARTICLE_TITLE}\n") and f"[a link]({upstream.url('/other')})" in body
    elif fmt == "text":
        assert body.startswith(ARTICLE_TITLE) and "Reader mode proxies" in body and "<p>" not in body
    else:
        assert set(json.loads(body)) >= API_FIELDS


async def test_api_extract_get_fields(
    reader_server: RunningServer, http: aiohttp.ClientSession, upstream: Upstream
) -> None:
    target = upstream.url("/redirect/2")
    async with http.get(reader_server.url("/api/extract", url=target, algo="density", c1="0.5")) as response:
        assert response.status == 200 and response.content_type == "application/json"
        data = await response.json()
    assert set(data) >= API_FIELDS
    assert data["url"] == target and data["final_url"] == upstream.url("/redirect/0")
    assert data["algorithm"] == "density" and data["parameters"]["c1"] == 0.5
    assert data["word_count"] > 20 and data["reading_minutes"] >= 1
    assert {"fetch", "parse", "extract", "render"} <= set(data["timings_ms"])
    assert data["cache"] == {"page": "miss", "result": "miss"}
    async with http.get(reader_server.url("/api/extract", url=target, algo="density", c1="0.5")) as response:
        assert (await response.json())["cache"] == {"page": "hit", "result": "hit"}
        assert response.headers["X-Cache"] == "hit"


async def test_results_are_cached_per_algorithm_and_parameters(
    reader_server: RunningServer, http: aiohttp.ClientSession, upstream: Upstream
) -> None:
    target = upstream.url("/cached/per-algo")
    seen = []
    for query in (
        {"algo": "density"},
        {"algo": "baseline"},
        {"algo": "density", "c1": "0.9"},
        {"algo": "density"},
    ):
        async with http.get(reader_server.url("/api/extract", url=target, **query)) as response:
            data = await response.json()
            seen.append((data["algorithm"], data["cache"]["result"]))
    assert seen == [("density", "miss"), ("baseline", "miss"), ("density", "miss"), ("density", "hit")]
    assert upstream.count("/cached/per-algo") == 1


async def test_api_extract_post_html_body_and_json_body(
    reader_server: RunningServer, http: aiohttp.ClientSession
) -> None:
    html = (
        '<html lang="de"><head><title>Posted page</title></head><body><article><h1>Posted page</h1>'
        "<p>Enough text here to be the main content of the posted page, with a "
        '<a href="../other.html">relative link</a> and <a href="javascript:alert(1)">a trap</a>.</p>'
        '<p onclick="alert(1)">Another paragraph with words, words and words.<script>alert(2)</script></p>'
        '<img src="pic.png" onerror="alert(3)"><form><input name=q></form><iframe src="https://x.org"></iframe>'
        "</article></body></html>"
    )
    async with http.post(
        reader_server.url("/api/extract", url="https://example.com/a/b/page.html", algo="baseline"),
        data=html.encode(),
        headers={"Content-Type": "text/html"},
    ) as response:
        assert response.status == 200
        data = await response.json()
    assert data["title"] == "Posted page" and data["lang"] == "de" and data["algorithm"] == "baseline"
    assert 'href="https://example.com/a/other.html"' in data["html"]
    assert 'src="https://example.com/a/b/pic.png"' in data["html"]
    for unsafe in ("javascript:", "onclick", "onerror", "<script", "<form", "<input", "<iframe", "alert(2)"):
        assert unsafe not in data["html"]
    async with http.post(
        reader_server.url("/api/extract"),
        json={"html": html, "url": "https://example.com/x", "algo": "density"},
    ) as response:
        assert response.status == 200
        assert (await response.json())["algorithm"] == "density"


async def test_posted_compression_bomb_is_refused_as_too_large(
    reader_server: RunningServer, http: aiohttp.ClientSession
) -> None:
    bomb = gzip.compress(b"<p>" + b"a" * (40 * 1024 * 1024), 9)  # ~40 KB on the wire, 40 MB decoded
    headers = {"Content-Type": "text/html", "Content-Encoding": "gzip"}
    async with http.post(reader_server.url("/api/extract"), data=bomb, headers=headers) as response:
        assert response.status == 413
        assert (await response.json())["error"]["kind"] == "too_large"


@pytest.mark.parametrize(
    ("path", "query", "status", "kind"),
    [
        ("/api/extract", {"url": "ftp://example.com/file"}, 400, "bad_url"),
        ("/api/extract", {"url": "not a url"}, 400, "bad_url"),
        ("/api/extract", {}, 400, "bad_url"),
        ("/api/extract", {"url": "http://x.org/", "algo": "nonesuch"}, 400, "bad_request"),
        ("/api/extract", {"url": "http://x.org/", "algo": "density", "c1": "big"}, 400, "bad_request"),
        ("/api/extract", {"url": "http://x.org/", "algo": "density", "radius": "3"}, 400, "bad_request"),
        ("/api/extract", {"url": "http://x.org/", "algo": "density", "c1": "-1"}, 400, "bad_request"),
        (
            "/api/extract",
            {"url": "http://x.org/", "algo": "accb", "iterations": "1000000000"},
            400,
            "bad_request",
        ),
        ("/read", {"url": "http://x.org/", "algo": "nonesuch"}, 400, "bad_request"),
    ],
)
async def test_bad_requests_are_400_json(
    reader_server: RunningServer,
    http: aiohttp.ClientSession,
    path: str,
    query: dict[str, str],
    status: int,
    kind: str,
) -> None:
    query = {**query, "format": "json"} if path == "/read" else query
    async with http.get(reader_server.url(path, **query)) as response:
        assert response.status == status
        error = (await response.json())["error"]
    assert error["kind"] == kind and error["message"]


@pytest.mark.parametrize(
    ("route", "status", "kind"),
    [
        ("/slow?s=30", 504, "timeout"),
        ("/huge", 413, "too_large"),
        ("/bomb?enc=gzip", 413, "too_large"),
        ("/redirect-loop", 502, "upstream"),
        ("/binary", 415, "not_html"),
        ("/pdf", 415, "not_html"),
        ("/status/404", 502, "upstream"),
        ("/status/500", 502, "upstream"),
    ],
)
async def test_upstream_failures_are_pages_for_read_and_json_for_api(
    reader_server: RunningServer,
    http: aiohttp.ClientSession,
    upstream: Upstream,
    route: str,
    status: int,
    kind: str,
) -> None:
    target = upstream.url(route)
    async with http.get(reader_server.url("/api/extract", url=target)) as response:
        assert response.status == status and response.content_type == "application/json"
        error = (await response.json())["error"]
        assert error["kind"] == kind and error["status"] == status
    async with http.get(reader_server.read_url(target)) as response:
        assert response.status == status and response.content_type == "text/html"
        assert_security_headers(response)
        page = await response.text()
    assert "Traceback" not in page
    tree = LexborHTMLParser(page)
    assert str(status) in tree.css_first(".status").text()
    if kind == "not_html":
        assert tree.css_first("a.original").attributes["href"] == target


async def test_bad_read_request_is_an_html_page(
    reader_server: RunningServer, http: aiohttp.ClientSession
) -> None:
    async with http.get(reader_server.read_url("http://x.org/", format="pdf")) as response:
        assert response.status == 400 and response.content_type == "text/html"
        assert "Format must be one of" in await response.text()
    async with http.get(reader_server.url("/read")) as response:
        assert response.status == 400 and response.content_type == "text/html"


async def test_private_addresses_refused_without_allow_private(
    http: aiohttp.ClientSession, upstream: Upstream
) -> None:
    async with serve(test_settings(allow_private=False)) as server:
        for target in (
            upstream.url("/article"),
            upstream.url("/redirect-to-private"),
            "http://169.254.169.254/",
        ):
            async with http.get(server.url("/api/extract", url=target)) as response:
                assert response.status == 403
                assert (await response.json())["error"]["kind"] == "refused"
        async with http.get(server.read_url("http://10.1.2.3/")) as response:
            assert response.status == 403 and response.content_type == "text/html"
        async with http.get(server.url("/metrics")) as response:
            assert 'readerproxy_upstream_errors_total{kind="refused"} 4.0' in await response.text()


async def test_wrong_charset_is_read_correctly(
    reader_server: RunningServer, http: aiohttp.ClientSession, upstream: Upstream
) -> None:
    for route in ("/wrong-charset", "/wrong-charset/reverse"):
        async with http.get(
            reader_server.url("/api/extract", url=upstream.url(route), algo="baseline")
        ) as response:
            assert response.status == 200
            assert WRONG_CHARSET_TEXT.split()[0] in (await response.json())["text"]


async def test_broken_html_and_dataset_pages_read(
    reader_server: RunningServer, http: aiohttp.ClientSession, upstream: Upstream
) -> None:
    async with http.get(reader_server.read_url(upstream.url("/broken"))) as response:
        assert response.status == 200
    upstream.require_datasets()
    for page_id in upstream.scrapinghub_ids()[:3]:
        async with http.get(
            reader_server.url("/api/extract", url=upstream.url(f"/sh/{page_id}"))
        ) as response:
            assert response.status == 200
            assert (await response.json())["word_count"] > 50


async def test_refresh_bypasses_the_cache(
    reader_server: RunningServer, http: aiohttp.ClientSession, upstream: Upstream
) -> None:
    target = upstream.url("/cached/refresh-me")
    statuses = []
    for query in ({}, {}, {"refresh": "1"}, {}):
        async with http.get(reader_server.read_url(target, **query)) as response:
            statuses.append(response.headers["X-Cache"])
    assert statuses == ["miss", "hit", "miss", "hit"]
    assert upstream.count("/cached/refresh-me") == 2


async def test_concurrent_reads_make_one_upstream_fetch(
    reader_server: RunningServer, http: aiohttp.ClientSession, upstream: Upstream
) -> None:
    target = upstream.url("/counter/server-flight")

    async def one() -> int:
        async with http.get(reader_server.read_url(target)) as response:
            await response.read()
            return response.status

    assert await asyncio.gather(*(one() for _ in range(12))) == [200] * 12
    assert upstream.count("/counter/server-flight") == 1


async def test_metrics_exposition(
    reader_server: RunningServer, http: aiohttp.ClientSession, upstream: Upstream
) -> None:
    target = upstream.url("/cached/metrics")
    for _ in range(2):
        async with http.get(reader_server.read_url(target)) as response:
            assert response.status == 200
    async with http.get(reader_server.read_url(upstream.url("/status/500"))) as response:
        assert response.status == 502
    async with http.get(reader_server.url("/metrics")) as response:
        assert response.status == 200 and response.content_type.startswith("text/plain")
        text = await response.text()
    assert 'readerproxy_requests_total{route="/read",status="200"} 2.0' in text
    assert 'readerproxy_requests_total{route="/read",status="502"} 1.0' in text
    assert re.search(r'readerproxy_request_seconds_count\{route="/read"\} 3\.0', text)
    assert 'readerproxy_cache_events_total{event="hit",layer="memory"}' in text
    assert 'readerproxy_cache_events_total{event="miss",layer="memory"}' in text
    assert 'readerproxy_page_cache_total{status="hit"} 1.0' in text
    assert 'readerproxy_upstream_errors_total{kind="upstream"} 1.0' in text
    assert re.search(r'readerproxy_extraction_seconds_count\{algorithm="\w+"\} 1\.0', text)


async def test_static_assets_long_cache_and_404(
    reader_server: RunningServer, http: aiohttp.ClientSession
) -> None:
    async with http.get(reader_server.url("/")) as response:
        href = LexborHTMLParser(await response.text()).css_first('link[rel="stylesheet"]').attributes["href"]
    async with http.get(reader_server.base + (href or "")) as response:
        assert response.status == 200 and response.content_type == "text/css"
        assert "immutable" in response.headers["Cache-Control"]
        assert "--bg" in await response.text()
    async with http.get(reader_server.url("/static/nope.css")) as response:
        assert response.status == 404 and response.content_type == "text/html"
    async with http.get(reader_server.url("/no/such/route")) as response:
        assert response.status == 404
        assert "Traceback" not in await response.text()


async def test_unexpected_error_is_a_500_page_without_traceback(
    reader_server: RunningServer,
    http: aiohttp.ClientSession,
    upstream: Upstream,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def explode(self: Reader, request: ReadRequest) -> None:
        raise RuntimeError("secret internal detail")

    monkeypatch.setattr(Reader, "read", explode)
    async with http.get(reader_server.read_url(upstream.url("/article"))) as response:
        assert response.status == 500
        page = await response.text()
    assert "secret internal detail" not in page and "Traceback" not in page
    async with http.get(reader_server.url("/api/extract", url=upstream.url("/article"))) as response:
        assert response.status == 500 and (await response.json())["error"]["kind"] == "internal"


def test_result_key_sorts_parameters_and_names_render_options() -> None:
    reader = Reader(test_settings(), metrics=None)  # type: ignore[arg-type]
    extractor, params = reader.resolve_request("density", {"c2": "5", "c1": "0.5"})
    key = result_key("HTTP://Example.COM:80/a#frag", ReadRequest(url="x", images=False), extractor, params)
    assert key.startswith("result:http://example.com/a|density|c1=0.5,c2=5")
    assert key.endswith("|images=0,links=original,render=0")
    rendered = result_key("http://example.com/a", ReadRequest(url="x", render=True), extractor, params)
    assert rendered.endswith(",render=1") and rendered != key


async def test_query_keys_no_algorithm_knows_are_ignored(
    reader_server: RunningServer, http: aiohttp.ClientSession, upstream: Upstream
) -> None:
    """Links shared with tracking parameters beside `url` still read (utm_source, fbclid)."""
    url = reader_server.url(
        "/api/extract",
        url=upstream.url("/article"),
        algo="density",
        c1="0.5",
        utm_source="newsletter",
        fbclid="abc123",
    )
    async with http.get(url) as response:
        assert response.status == 200
        data = await response.json()
    assert data["algorithm"] == "density" and data["parameters"]["c1"] == 0.5


async def test_the_default_algorithm_setting_is_used(upstream: Upstream, http: aiohttp.ClientSession) -> None:
    async with (
        serve(test_settings(default_algorithm="density")) as server,
        http.get(server.url("/api/extract", url=upstream.url("/article"))) as response,
    ):
        assert response.status == 200
        assert (await response.json())["algorithm"] == "density"


async def test_an_address_without_a_scheme_is_read_as_https(
    reader_server: RunningServer, http: aiohttp.ClientSession
) -> None:
    from readerproxy.web.reader import target_url

    assert target_url("example.com/story?id=1") == "https://example.com/story?id=1"
    assert target_url("Example.COM") == "https://example.com/"
    for refused in ("notaurl", "javascript:alert(1)", "ftp://example.com/"):
        async with http.get(reader_server.url("/api/extract", url=refused)) as response:
            assert response.status == 400 and (await response.json())["error"]["kind"] == "bad_url"


async def test_an_upstream_404_says_the_site_answered_404(
    reader_server: RunningServer, http: aiohttp.ClientSession, upstream: Upstream
) -> None:
    async with http.get(reader_server.read_url(upstream.url("/status/404"))) as response:
        assert response.status == 502
        page = await response.text()
    assert "The site answered 404 Not Found" in page
