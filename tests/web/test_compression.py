"""Response compression: negotiation, variants made once, and the server's answers by Accept-Encoding."""

from __future__ import annotations

import gzip

import aiohttp
import brotli
import pytest
from support.reader_server import RunningServer
from support.upstream import Upstream

from readerproxy.web.compression import BROTLI_QUALITY, MIN_SIZE, Encoded, compress, negotiate


@pytest.mark.parametrize(
    ("header", "coding"),
    [
        (None, None),
        ("", None),
        ("identity", None),
        ("gzip", "gzip"),
        ("gzip, deflate, br", "br"),
        ("br;q=0, gzip", "gzip"),
        ("gzip;q=0, br;q=0", None),
        ("*", "br"),
        ("*;q=0", None),
        ("deflate", None),
        ("BR", "br"),
        ("gzip;q=bogus", None),
    ],
)
def test_negotiate(header: str | None, coding: str | None) -> None:
    assert negotiate(header) == coding


def test_variants_are_made_once_and_small_bodies_stay_identity() -> None:
    body = b"<p>reader page</p>" * 200
    encoded = Encoded(body)
    first, coding = encoded.for_coding("br")
    again, _ = encoded.for_coding("br")
    assert coding == "br" and first is again and brotli.decompress(first) == body
    zipped, coding = encoded.for_coding("gzip")
    assert coding == "gzip" and gzip.decompress(zipped) == body
    assert encoded.size == len(body) + len(first) + len(zipped)
    small = Encoded(b"x" * (MIN_SIZE - 1))
    assert small.for_coding("gzip") == (small.body, None)


def test_quick_variants_are_not_kept_and_a_kept_one_is_preferred() -> None:
    body = b"<p>reader page, sent once and quickly compressed</p>" * 400
    encoded = Encoded(body)
    quick, coding = encoded.for_coding("br", quick=True)
    assert coding == "br" and brotli.decompress(quick) == body and encoded.variants == {}
    assert quick == compress(body, "br", quick=True) != compress(body, "br")
    zipped, coding = encoded.for_coding("gzip", quick=True)
    assert coding == "gzip" and gzip.decompress(zipped) == body and encoded.variants == {}
    kept, _ = encoded.for_coding("br")
    assert encoded.for_coding("br", quick=True) == (kept, "br")
    assert Encoded(b"x").for_coding("br", quick=True) == (b"x", None) and encoded.for_coding(
        None, quick=True
    ) == (body, None)


async def test_a_missed_reader_page_is_sent_quickly_and_kept_at_full_quality(
    reader_server: RunningServer, upstream: Upstream
) -> None:
    url = reader_server.read_url(upstream.url("/counter/quick-then-kept?delay=0"))
    _, first_headers, first = await _raw_get(url, "br")
    _, second_headers, second = await _raw_get(url, "br")
    assert (first_headers["X-Cache"], second_headers["X-Cache"]) == ("miss", "hit")
    page = brotli.decompress(first)
    assert brotli.decompress(second) == page
    assert first == compress(page, "br", quick=True)  # the miss: quick
    assert second == brotli.compress(page, quality=BROTLI_QUALITY)  # kept right after it, at full quality
    assert len(second) < len(first)


async def _raw_get(url: str, accept: str | None) -> tuple[int, dict[str, str], bytes]:
    """A GET that leaves the body as sent (no automatic decompression)."""
    headers = {"Accept-Encoding": accept} if accept is not None else {"Accept-Encoding": "identity"}
    async with (
        aiohttp.ClientSession(auto_decompress=False) as session,
        session.get(url, headers=headers) as response,
    ):
        return response.status, dict(response.headers), await response.read()


@pytest.mark.parametrize("accept", ["br", "gzip", None])
async def test_reader_page_json_and_static_files_are_compressed_as_accepted(
    reader_server: RunningServer, upstream: Upstream, accept: str | None
) -> None:
    decode = {"br": brotli.decompress, "gzip": gzip.decompress, None: lambda b: b}[accept]
    target = upstream.url("/article")
    urls = [
        reader_server.read_url(target),
        reader_server.read_url(target, format="json"),
        reader_server.read_url(target, format="md"),
        reader_server.url("/static/reader.css"),
    ]
    for url in urls:
        status, headers, body = await _raw_get(url, accept)
        assert status == 200
        assert headers["Vary"] == "Accept-Encoding"
        assert headers.get("Content-Encoding") == accept
        text = decode(body)
        assert b"Reader mode proxies" in text or b"body" in text


async def test_a_cached_reader_page_is_compressed_once(
    reader_server: RunningServer, upstream: Upstream
) -> None:
    from readerproxy.web.server import RENDERED

    target = upstream.url("/cached/compressed-once")
    first = await _raw_get(reader_server.read_url(target), "br")
    assert reader_server.app is not None
    rendered = reader_server.app[RENDERED]
    (key,) = [key for key in rendered._entries if target in key[0]]
    page = rendered.get(key)
    # only the coding asked for, on a miss: sent quickly compressed, kept at full quality right after
    assert page is not None and set(page.variants) == {"br"}
    stored = page.variants["br"]
    assert first[2] == compress(page.body, "br", quick=True) and stored == compress(page.body, "br")
    charged = rendered._entries[key][2]
    assert charged == len(key[0]) + page.size + rendered.ENTRY_OVERHEAD  # charged for the kept variant
    second = await _raw_get(reader_server.read_url(target), "br")
    assert second[2] == stored
    assert rendered.get(key) is page and page.variants["br"] is stored  # a hit sends the stored bytes
    # another coding is made once, on its first request, and the entry is charged for it
    gzipped = await _raw_get(reader_server.read_url(target), "gzip")
    assert set(page.variants) == {"br", "gzip"} and gzipped[2] == page.variants["gzip"]
    assert rendered._entries[key][2] == charged + len(page.variants["gzip"])
    again = await _raw_get(reader_server.read_url(target), "gzip")
    assert again[2] == gzipped[2]
