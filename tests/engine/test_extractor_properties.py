"""Properties every registered extractor keeps, on arbitrary bytes and broken HTML (hypothesis).

The extractors are read from `readerproxy.engine.extraction.registry()`, so an algorithm added later is
covered without touching this file. Through `readerproxy.extract` an extractor must never raise on
any input, its text must be a subsequence of the document's text in document order, and the same
input must give the same output.
"""

from __future__ import annotations

import dataclasses
import gzip

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import readerproxy
from readerproxy.api import to_text
from readerproxy.engine.extraction import registry
from readerproxy.engine.parse.decoding import DecompressionError
from readerproxy.engine.parse.document import parse

GZIP_MAGIC = b"\x1f\x8b"
EXTRACTORS = sorted(registry())
#: Extractors that take the hyperlink filter of Ghorbani, Mohammadzadeh, Nazemi 2014.
LINK_FILTERED = sorted(
    name
    for name, extractor in registry().items()
    if "link_filter" in {f.name for f in dataclasses.fields(extractor.params_type)}
)

PROPERTY_SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

#: Pieces that pages are made of, including broken ones: unclosed tags, stray end tags, bad nesting,
#: unterminated comments and attributes, entities, raw-text elements, and plenty of text.
FRAGMENTS = st.sampled_from(
    [
        "<html>",
        "<head>",
        "<title>",
        "</title>",
        "<body>",
        "</body>",
        "</html>",
        "<div>",
        "</div>",
        "<p>",
        "</p>",
        "<p class='x'>",
        "<a href='/x'>",
        '<a href="http://e.org/a b" title=t>',
        "</a>",
        "<ul><li>",
        "</li>",
        "</ul>",
        "<table><tr><td>",
        "</td></tr></table>",
        "<br>",
        "<br/>",
        "<img src=x>",
        "<script>var x = '<p>';</script>",
        "<style>p{}</style>",
        "<!-- comment -->",
        "<!-- open",
        "<b><i>",
        "</b></i>",
        "<h1>",
        "</h2>",
        "<pre>",
        "</pre>",
        "<nav>",
        "</nav>",
        "<article>",
        "<span hidden>",
        "<div aria-hidden=true>",
        "<a",
        "<p title='unterminated>",
        "&amp;",
        "&lt;",
        "&#x41;",
        "&bogus;",
        "<",
        ">",
        "\n",
        "\n\n",
        "   ",
        "\t",
        "<svg><text>",
        "</svg>",
        "<noscript>x</noscript>",
        "<iframe>",
        "<textarea>",
        "<select><option>o</option></select>",
        "\u00a0",
        "\u200b",
        "\u05d0\u05d1",
        "漢字",
        "<![CDATA[x]]>",
        "<?xml?>",
        "<!DOCTYPE html>",
    ]
)
TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=60)
BROKEN_HTML = st.lists(st.one_of(FRAGMENTS, TEXT), max_size=60).map("".join)


def document_text(html: str | bytes) -> str:
    """All text of the parsed page in document order (what an extraction selects from)."""
    return "".join(parse(to_text(html)).tokens.text)


def is_subsequence(needle: str, haystack: str) -> bool:
    """Whether needle's characters appear in haystack in order (whitespace ignored)."""
    remaining = iter("".join(haystack.split()))
    return all(char in remaining for char in "".join(needle.split()))


def check_extractor(name: str, page: str | bytes, **params: object) -> None:
    first = readerproxy.extract(page, algorithm=name, **params)
    assert is_subsequence(first.text, document_text(page))
    selection = first.extraction.selection
    assert selection.dtype == np.bool_
    assert 0.0 <= first.extraction.score <= 1.0
    second = readerproxy.extract(page, algorithm=name, **params)
    assert second.text == first.text
    assert second.html == first.html
    assert np.array_equal(second.extraction.selection, selection)


def test_every_line_based_extractor_takes_link_filter() -> None:
    assert {"density", "cetr", "cetr-km", "cetr-tm", "lineblock", "danag"} <= set(LINK_FILTERED)


@pytest.mark.parametrize("name", EXTRACTORS)
@PROPERTY_SETTINGS
@given(page=st.binary(max_size=3000))
def test_arbitrary_bytes_never_raise(name: str, page: bytes) -> None:
    # Bytes that start with the gzip magic are gunzipped, and a corrupt stream is refused by design
    # (test_decoding); every other byte string is a page.
    assume(not page.startswith(GZIP_MAGIC))
    check_extractor(name, page)


@pytest.mark.parametrize("name", EXTRACTORS)
def test_corrupt_gzip_is_refused_with_the_documented_error(name: str) -> None:
    with pytest.raises(DecompressionError):
        readerproxy.extract(GZIP_MAGIC + b"\x00garbage", algorithm=name)
    check_extractor(name, gzip.compress(b"<p>Hello <b>gzip</b> page</p>"))


@pytest.mark.parametrize("name", EXTRACTORS)
@PROPERTY_SETTINGS
@given(page=BROKEN_HTML)
def test_broken_html_never_raises_and_selects_document_text(name: str, page: str) -> None:
    check_extractor(name, page)


@pytest.mark.parametrize("name", LINK_FILTERED)
@PROPERTY_SETTINGS
@given(page=BROKEN_HTML, link_filter=st.sampled_from([0, 1, 2, 3]))
def test_every_hyperlink_filter_on_broken_html(name: str, page: str, link_filter: int) -> None:
    check_extractor(name, page, link_filter=link_filter)


@pytest.mark.parametrize("name", EXTRACTORS)
@PROPERTY_SETTINGS
@given(
    paragraphs=st.lists(
        st.text(alphabet="abcdefghij klmnop", min_size=1, max_size=400), min_size=1, max_size=12
    ),
    links=st.lists(st.text(alphabet="xyz", min_size=1, max_size=12), max_size=30),
    one_line=st.booleans(),
)
def test_generated_pages_with_navigation(
    name: str, paragraphs: list[str], links: list[str], one_line: bool
) -> None:
    nav = "\n".join(f'<li><a href="/{i}">{link}</a></li>' for i, link in enumerate(links))
    body = "\n".join(f"<p>{paragraph}</p>" for paragraph in paragraphs)
    page = f"<html><head><title>t</title></head><body>\n<ul>\n{nav}\n</ul>\n<article>\n{body}\n</article>\n</body></html>"
    if one_line:
        page = page.replace("\n", "")
    check_extractor(name, page)


@pytest.mark.parametrize("name", EXTRACTORS)
def test_edge_pages(name: str) -> None:
    for page in ("<html><body><p>Hello <a href='/'>world</a></p></body></html>", b"", "", "<p>", "text only"):
        check_extractor(name, page)
