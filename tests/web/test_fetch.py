"""Safe fetching against the real upstream test site on 127.0.0.1 (tests/support/upstream.py).

Loopback is private, so most tests fetch with allow_private=True; the SSRF tests fetch WITHOUT it and
prove the refusal happens before any connection (the upstream's request counter does not move).
"""

from __future__ import annotations

import gzip
import socket
import tracemalloc
from collections.abc import AsyncIterator, Callable

import pytest
from support.resolver import StaticResolver
from support.upstream import (
    ARTICLE_HTML,
    BOMB_DECODED_BYTES,
    SCRAPINGHUB,
    WRONG_CHARSET_TEXT,
    Upstream,
    bomb_body,
)

from readerproxy.engine.parse.decoding import decode_html
from readerproxy.web import fetch as fetch_module
from readerproxy.web.fetch import (
    AddressRefused,
    FetchedPage,
    Fetcher,
    FetchError,
    FetchSettings,
    GuardedResolver,
    is_public_address,
    literal_address,
    validate_url,
)

LOCAL = FetchSettings(allow_private=True)


@pytest.fixture
async def fetcher() -> AsyncIterator[Fetcher]:
    async with Fetcher(LOCAL) as f:
        yield f


async def fetch_error(fetcher: Fetcher, url: str) -> FetchError:
    with pytest.raises(FetchError) as info:
        await fetcher.fetch(url)
    return info.value


# ---- URL and address checks (pure) -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("HTTP://Example.COM/a?b=1#frag", "http://example.com/a?b=1"),
        ("https://example.com:443", "https://example.com/"),
        ("http://example.com:8080/x", "http://example.com:8080/x"),
        ("  https://bücher.example/  ", "https://xn--bcher-kva.example/"),
        ("http://[2001:db8::1]:81/", "http://[2001:db8::1]:81/"),
    ],
)
def test_validate_url_normalises(url: str, expected: str) -> None:
    assert validate_url(url) == expected


@pytest.mark.parametrize(
    "url",
    [
        "",
        "   ",
        "ftp://example.com/",
        "javascript:alert(1)",
        "file:///etc/passwd",
        "http://",
        "example.com/no-scheme",
        "http://user:pw@example.com/",
        "http://exa mple.com/",
        "http://example.com:99999/",
    ],
)
def test_validate_url_rejects(url: str) -> None:
    with pytest.raises(FetchError) as info:
        validate_url(url)
    assert (info.value.kind, info.value.status) == ("bad_url", 400)


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "127.8.9.10",
        "10.1.2.3",
        "172.16.0.1",
        "192.168.1.1",
        "169.254.169.254",
        "100.64.0.1",
        "100.127.255.254",
        "224.0.0.1",
        "239.255.255.250",
        "0.0.0.0",
        "255.255.255.255",
        "240.0.0.1",
        "::1",
        "::",
        "fc00::1",
        "fd12:3456::1",
        "fe80::1",
        "fe80::1%eth0",
        "ff02::1",
        "::ffff:127.0.0.1",
        "::ffff:8.8.8.8",
        "64:ff9b::a9fe:a9fe",
        "2002:7f00:1::1",
        "not-an-address",
    ],
)
def test_non_public_addresses_are_refused(address: str) -> None:
    assert not is_public_address(address)


@pytest.mark.parametrize("address", ["8.8.8.8", "93.184.216.34", "100.128.0.1", "2606:4700:4700::1111"])
def test_public_addresses_pass(address: str) -> None:
    assert is_public_address(address)


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("127.1", "127.0.0.1"),
        ("2130706433", "127.0.0.1"),
        ("0x7f.0.0.1", "127.0.0.1"),
        ("[::1]", "::1"),
        ("10.0.0.1", "10.0.0.1"),
        ("example.com", None),
    ],
)
def test_literal_address_includes_legacy_ipv4_spellings(host: str, expected: str | None) -> None:
    assert literal_address(host) == expected


async def test_guarded_resolver_keeps_only_public_addresses() -> None:
    resolver = GuardedResolver()
    resolver._resolver = StaticResolver(["93.184.216.34", "127.0.0.1", "169.254.169.254"])  # type: ignore[assignment]
    assert [r["host"] for r in await resolver.resolve("rebind.example", 80)] == ["93.184.216.34"]
    resolver._resolver = StaticResolver(["10.0.0.7", "::1"])  # type: ignore[assignment]
    with pytest.raises(AddressRefused) as info:
        await resolver.resolve("internal.example", 80)
    assert info.value.addresses == ["10.0.0.7", "::1"]
    lenient = GuardedResolver(allow_private=True)
    lenient._resolver = StaticResolver(["10.0.0.7"])  # type: ignore[assignment]
    assert [r["host"] for r in await lenient.resolve("internal.example", 80)] == ["10.0.0.7"]


def test_fetched_page_round_trips_through_bytes() -> None:
    page = FetchedPage(
        url="http://a.example/",
        final_url="http://a.example/b",
        status=200,
        headers={"content-type": "text/html", "etag": '"x"'},
        content_type="text/html",
        body=b"<p>\x00\xff body</p>",
        etag='"x"',
        last_modified=None,
        fetched_at=1.5,
        elapsed_ms=2.5,
    )
    assert FetchedPage.from_bytes(page.to_bytes()) == page
    with pytest.raises(ValueError):
        FetchedPage.from_bytes(b"\x00\x00\x00\x09{broken}")


# ---- fetching from the upstream site -----------------------------------------------------------------


async def test_fetch_article(fetcher: Fetcher, upstream: Upstream) -> None:
    page = await fetcher.fetch(upstream.url("/article"))
    assert page.status == 200 and not page.not_modified
    assert page.body == ARTICLE_HTML.encode()
    assert page.final_url == page.url == upstream.url("/article")
    assert page.content_type.startswith("text/html") and page.headers["content-type"] == page.content_type
    assert page.etag is None and page.elapsed_ms > 0 and page.fetched_at > 0


@pytest.mark.parametrize("path", ["/gzip", "/deflate", "/br"])
async def test_content_encodings_are_decoded(fetcher: Fetcher, upstream: Upstream, path: str) -> None:
    page = await fetcher.fetch(upstream.url(path))
    assert page.headers["content-encoding"] == path.strip("/")
    assert page.body == ARTICLE_HTML.encode()


async def test_scrapinghub_page_is_gunzipped(fetcher: Fetcher, upstream: Upstream) -> None:
    upstream.require_datasets()
    page_id = upstream.scrapinghub_ids()[0]
    page = await fetcher.fetch(upstream.url(f"/sh/{page_id}"))
    assert page.body == gzip.decompress((SCRAPINGHUB / f"{page_id}.html.gz").read_bytes())


async def test_wrong_charset_body_is_kept_raw_and_decodes(fetcher: Fetcher, upstream: Upstream) -> None:
    for path, encoding in (("/wrong-charset", "windows-1252"), ("/wrong-charset/reverse", "utf-8")):
        page = await fetcher.fetch(upstream.url(path))
        assert WRONG_CHARSET_TEXT.encode(encoding) in page.body
        assert WRONG_CHARSET_TEXT in decode_html(page.body, page.content_type).text


async def test_broken_html_is_fetched(fetcher: Fetcher, upstream: Upstream) -> None:
    page = await fetcher.fetch(upstream.url("/broken"))
    assert b"Broken page" in page.body


async def test_redirect_chain_is_followed_hop_by_hop(fetcher: Fetcher, upstream: Upstream) -> None:
    before = upstream.count("/redirect/0")
    page = await fetcher.fetch(upstream.url("/redirect/10"))  # exactly the maximum
    assert page.final_url == upstream.url("/redirect/0") and page.url == upstream.url("/redirect/10")
    assert b"Redirect target" in page.body
    assert upstream.count("/redirect/0") == before + 1


async def test_too_many_redirects(fetcher: Fetcher, upstream: Upstream) -> None:
    for path in ("/redirect/11", "/redirect-loop"):
        error = await fetch_error(fetcher, upstream.url(path))
        assert (error.kind, error.status) == ("upstream", 502)
        assert "redirects" in error.message


@pytest.mark.parametrize("code", [404, 410, 500, 503])
async def test_upstream_error_status(fetcher: Fetcher, upstream: Upstream, code: int) -> None:
    error = await fetch_error(fetcher, upstream.url(f"/status/{code}"))
    assert (error.kind, error.status, error.upstream_status) == ("upstream", 502, code)
    assert str(code) in error.message


@pytest.mark.parametrize(("path", "media"), [("/binary", "image/png"), ("/pdf", "application/pdf")])
async def test_not_html_is_415_with_final_url(
    fetcher: Fetcher, upstream: Upstream, path: str, media: str
) -> None:
    error = await fetch_error(fetcher, upstream.url(f"/redirect-to?url={path}"))
    assert (error.kind, error.status, error.content_type) == ("not_html", 415, media)
    assert error.final_url == upstream.url(path)


@pytest.mark.parametrize("path", ["/huge", "/huge?cl=1"])
async def test_huge_body_is_413(fetcher: Fetcher, upstream: Upstream, path: str) -> None:
    error = await fetch_error(fetcher, upstream.url(path))
    assert (error.kind, error.status) == ("too_large", 413)


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "br"])
async def test_decompression_bomb_is_413_without_big_memory(
    fetcher: Fetcher, upstream: Upstream, encoding: str
) -> None:
    compressed = bomb_body(encoding)  # built before measuring: the upstream lives in this process
    assert len(compressed) < 200_000
    tracemalloc.start()
    try:
        error = await fetch_error(fetcher, upstream.url(f"/bomb?enc={encoding}"))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert (error.kind, error.status) == ("too_large", 413)
    assert "expands" in error.message  # the ratio cap trips once ~1 MB is decoded from a few KB
    assert peak < 8 * 1024 * 1024  # of the 128 MB the bomb decodes to


async def test_decoded_size_cap_without_ratio_cap(upstream: Upstream) -> None:
    settings = FetchSettings(allow_private=True, max_ratio=1e12)  # only the decoded-size cap can trip
    tracemalloc.start()
    try:
        async with Fetcher(settings) as fetcher:
            error = await fetch_error(fetcher, upstream.url("/bomb?enc=br"))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert (error.kind, error.status) == ("too_large", 413) and "decodes to more than" in error.message
    assert peak < settings.max_decoded_bytes + 8 * 1024 * 1024 < BOMB_DECODED_BYTES


async def test_expansion_ratio_cap_applies_before_the_size_cap(upstream: Upstream) -> None:
    settings = FetchSettings(allow_private=True, max_decoded_bytes=BOMB_DECODED_BYTES * 2, max_ratio=50)
    async with Fetcher(settings) as fetcher:
        error = await fetch_error(fetcher, upstream.url("/bomb?enc=gzip"))
    assert (error.kind, error.status) == ("too_large", 413) and "expands" in error.message


@pytest.mark.parametrize(
    ("path", "settings"),
    [
        ("/slow?s=30", FetchSettings(allow_private=True, total_timeout=0.5)),
        ("/slow-body?s=30", FetchSettings(allow_private=True, read_timeout=0.3)),
    ],
)
async def test_timeouts_are_504(upstream: Upstream, path: str, settings: FetchSettings) -> None:
    async with Fetcher(settings) as fetcher:
        error = await fetch_error(fetcher, upstream.url(path))
    assert (error.kind, error.status) == ("timeout", 504)


async def test_connection_refused_is_502(fetcher: Fetcher) -> None:
    with socket.socket() as sock:  # a port that nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    error = await fetch_error(fetcher, f"http://127.0.0.1:{port}/")
    assert (error.kind, error.status) == ("upstream", 502)


async def test_conditional_fetch_gives_not_modified(fetcher: Fetcher, upstream: Upstream) -> None:
    first = await fetcher.fetch(upstream.url("/etag/fetch"))
    assert first.etag == '"v1-fetch"'
    again = await fetcher.fetch(upstream.url("/etag/fetch"), etag=first.etag)
    assert again.not_modified and again.status == 304 and again.body == b""
    first = await fetcher.fetch(upstream.url("/lastmod/fetch"))
    again = await fetcher.fetch(upstream.url("/lastmod/fetch"), last_modified=first.last_modified)
    assert again.not_modified and first.last_modified
    assert upstream.conditional("/etag/fetch") == 1 and upstream.conditional("/lastmod/fetch") == 1


async def test_bad_url_never_reaches_the_network(fetcher: Fetcher) -> None:
    error = await fetch_error(fetcher, "gopher://127.0.0.1/")
    assert (error.kind, error.status) == ("bad_url", 400)


async def test_redirect_to_a_bad_scheme_is_refused(fetcher: Fetcher, upstream: Upstream) -> None:
    error = await fetch_error(fetcher, upstream.url("/redirect-to?url=file:///etc/passwd"))
    assert (error.kind, error.status) == ("bad_url", 400)


# ---- the SSRF guard, WITHOUT allow_private -----------------------------------------------------------


@pytest.fixture
async def guarded() -> AsyncIterator[Fetcher]:
    async with Fetcher(FetchSettings()) as f:
        yield f


async def test_loopback_literal_is_refused_before_connecting(guarded: Fetcher, upstream: Upstream) -> None:
    before = upstream.count("/article")
    for url in (
        upstream.url("/article"),
        f"http://127.1:{upstream.port}/article",
        f"http://2130706433:{upstream.port}/article",
        f"http://[::ffff:127.0.0.1]:{upstream.port}/article",
        f"http://[::1]:{upstream.port}/article",
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.1/",
        "http://100.64.0.1/",
        "http://0.0.0.0/",
    ):
        error = await fetch_error(guarded, url)
        assert (error.kind, error.status) == ("refused", 403), url
    assert upstream.count("/article") == before  # nothing reached the site


async def test_name_resolving_to_loopback_is_refused_by_the_resolver(
    guarded: Fetcher, upstream: Upstream
) -> None:
    before = upstream.count("/article")
    error = await fetch_error(guarded, f"http://localhost:{upstream.port}/article")
    assert (error.kind, error.status) == ("refused", 403)
    assert "127.0.0.1" in error.message or "::1" in error.message
    assert upstream.count("/article") == before


@pytest.fixture
def loopback_is_public(monkeypatch: pytest.MonkeyPatch) -> None:
    """Treat exactly 127.0.0.1 as public, so the guarded fetcher can reach the test site and we can watch
    it refuse the next hop; every other address keeps the real rule."""
    real: Callable[[str], bool] = fetch_module.is_public_address
    monkeypatch.setattr(fetch_module, "is_public_address", lambda a: a == "127.0.0.1" or real(a))


@pytest.mark.usefixtures("loopback_is_public")
async def test_redirect_to_metadata_address_is_refused(guarded: Fetcher, upstream: Upstream) -> None:
    page = await guarded.fetch(upstream.url("/article"))  # the guarded fetcher does reach the site
    assert page.status == 200
    error = await fetch_error(guarded, upstream.url("/redirect-to-private"))
    assert (error.kind, error.status) == ("refused", 403)
    assert "169.254.169.254" in error.message
    for target in ("http://[::1]/", "http://10.1.1.1/", f"http://127.0.0.2:{upstream.port}/article"):
        error = await fetch_error(guarded, upstream.url(f"/redirect-to?url={target}"))
        assert (error.kind, error.status) == ("refused", 403), target


async def test_socket_factory_refuses_even_without_the_literal_check(
    guarded: Fetcher, upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defence in depth: with the up-front literal-address check switched off, the connector's socket
    factory still refuses the exact address it was about to connect to."""
    monkeypatch.setattr(fetch_module, "check_host", lambda url, settings: None)
    before = upstream.count("/article")
    error = await fetch_error(guarded, upstream.url("/article"))
    assert (error.kind, error.status) == ("refused", 403) and "127.0.0.1" in error.message
    assert upstream.count("/article") == before


async def test_unasked_304_is_an_upstream_error(fetcher: Fetcher, upstream: Upstream) -> None:
    error = await fetch_error(fetcher, upstream.url("/status/304"))
    assert (error.kind, error.status, error.upstream_status) == ("upstream", 502, 304)
