"""`--public-url` (readerproxy/web/public.py): every link, the bookmarklet, the PAC file and the
setup page name the public address, a path prefix included. Behind a real HAProxy that strips
the prefix: tests/web/test_instances.py."""

from __future__ import annotations

import re

import aiohttp
import pytest
from support.reader_server import serve, test_settings
from support.upstream import Upstream

from readerproxy.app import load_settings
from readerproxy.web.public import PublicURL, parse_public_url, rooted
from readerproxy.web.settings import SettingsError

PREFIXED = "https://example.org/reader/"
#: A root-relative URL in an attribute: after rooting, each must start with the prefix.
ROOT_RELATIVE = re.compile(r'\s(?:href|src|action|srcset)="(/[^"]*)"')


def root_links(page: str) -> list[str]:
    return ROOT_RELATIVE.findall(page)


def test_parse_public_url() -> None:
    assert parse_public_url("https://reader.example/") == PublicURL("https", "reader.example", None, "")
    prefixed = parse_public_url("https://Example.org:8443/reader/")
    assert prefixed is not None
    assert prefixed.base == "https://example.org:8443/reader" and prefixed.cookie_path == "/reader"
    assert parse_public_url("https://example.org:443/a/b").base == "https://example.org/a/b"  # type: ignore[union-attr]
    assert parse_public_url("") is None


@pytest.mark.parametrize(
    "value",
    [
        "reader.example",
        "ftp://reader.example/",
        "https:///reader/",
        "https://reader.example/?x=1",
        "https://reader.example/#top",
        "https://user:pw@reader.example/",
        "https://reader.example/a b/",
        "https://reader.example/../x/",
        "https://reader.example:99999/",
    ],
)
def test_a_bad_public_url_is_a_settings_error(value: str) -> None:
    with pytest.raises(SettingsError, match="public-url"):
        load_settings({"public_url": value}, env={})


def test_rooted() -> None:
    page = (
        '<html lang="en"><a href="/read?url=x">r</a> <a href="//cdn.example/x">c</a> '
        '<a href="https://a.example/">a</a> <img src="/image?w=1" srcset="/image?w=1 1x, /image?w=2 2x">'
        '<form action="/read"></form><a href="#top">t</a></html>'
    )
    out = rooted(page, "/reader")
    assert '<html data-root="/reader" lang="en">' in out
    assert 'href="/reader/read?url=x"' in out and 'href="//cdn.example/x"' in out
    assert 'srcset="/reader/image?w=1 1x, /reader/image?w=2 2x"' in out
    assert 'action="/reader/read"' in out and 'href="#top"' in out
    assert rooted(page, "") == page


async def test_every_link_of_the_pages_is_under_the_prefix(upstream: Upstream) -> None:
    settings = test_settings(public_url=PREFIXED, proxy_port=0)
    async with serve(settings) as server, aiohttp.ClientSession() as http:
        async with http.get(server.url("/")) as response:
            index = await response.text()
        assert "https://example.org/reader/read?url=" in index  # the bookmarklet
        links = root_links(index)
        assert links and all(link.startswith("/reader/") for link in links), links
        async with http.get(server.url("/read", url=upstream.url("/article"), theme="dark")) as response:
            page = await response.text()
            cookies = response.headers.getall("Set-Cookie")
        links = root_links(page)
        assert any(link.startswith("/reader/static/") for link in links)
        assert any(link.startswith("/reader/read?") for link in links)
        assert all(link.startswith("/reader/") for link in links), links
        assert '<html data-root="/reader"' in page
        assert cookies and all("Path=/reader" in cookie for cookie in cookies)
        async with http.get(server.url("/read", url="http://[::1/")) as response:
            error = await response.text()
        assert response.status == 400 and all(link.startswith("/reader/") for link in root_links(error))
        async with http.get(server.url("/proxy.pac"), headers={"Host": "127.0.0.1:1"}) as response:
            assert '"PROXY example.org:0; DIRECT"' in await response.text()
