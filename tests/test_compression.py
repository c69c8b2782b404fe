"""Response compression: negotiation, variants made once, and the server's answers by Accept-Encoding."""

from __future__ import annotations

import gzip

import aiohttp
import brotli
import pytest
from support.reader_server import RunningServer
from support.upstream import Upstream

from readerproxy.compression import MIN_SIZE, Encoded, negotiate


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
    from readerproxy.server import RENDERED

    target = upstream.url("/cached/compressed-once")
    first = await _raw_get(reader_server.read_url(target), "br")
    assert reader_server.app is not None
    rendered = reader_server.app[RENDERED]
    (key,) = [key for key in rendered._entries if target in key[0]]
    page = rendered.get(key)
    assert page is not None and set(page.variants) == {"br"}  # only the coding asked for, on a miss
    charged = rendered._entries[key][2]
    assert charged == len(key[0]) + page.size + rendered.ENTRY_OVERHEAD
    stored = page.variants["br"]
    second = await _raw_get(reader_server.read_url(target), "br")
    assert first[2] == second[2] == stored
    assert rendered.get(key) is page and page.variants["br"] is stored  # a hit sends the stored bytes
    # another coding is made once, on its first request, and the entry is charged for it
    gzipped = await _raw_get(reader_server.read_url(target), "gzip")
    assert set(page.variants) == {"br", "gzip"} and gzipped[2] == page.variants["gzip"]
    assert rendered._entries[key][2] == charged + len(page.variants["gzip"])
    again = await _raw_get(reader_server.read_url(target), "gzip")
    assert again[2] == gzipped[2]
