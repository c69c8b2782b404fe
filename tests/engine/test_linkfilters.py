"""Hyperlink Filters 1-3 of Ghorbani, Mohammadzadeh, Nazemi 2014 over the linear view, and the per-line sums the line-based extractors read."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import readerproxy
from readerproxy.engine.extractors.linkfilters import (
    LinkFilter,
    body_lines,
    filter_links,
    line_token_mask,
    line_token_ranges,
    link_filter_value,
)
from readerproxy.engine.parse.document import OPEN, TEXT, Document, parse

FIXTURES = Path(__file__).parents[1] / "fixtures"

PAGE = """<html><head><title>t</title></head><body>
<p>Plain text before <a href="https://example.org/a/very/long/path" class="x">Spiegel Web Site</a> and after.</p>
<p><a href="/b">ab</a></p>
</body></html>"""


def anchor_tokens(doc: Document) -> list[tuple[int, int, int]]:
    """(start tag token, end tag token, anchor text chars) of every <a>."""
    out = []
    for element, name in enumerate(doc.tag):
        if name == "a":
            start, end = int(doc.start[element]), int(doc.end[element])
            chars = int(doc.tokens.chars[start : end + 1][doc.tokens.kind[start : end + 1] == TEXT].sum())
            out.append((start, end, chars))
    return out


def test_filter_0_is_the_page_as_it_is() -> None:
    doc = parse(PAGE)
    view = filter_links(doc, 0)
    assert view.present.all()
    assert np.array_equal(view.length, doc.tokens.length)
    assert np.array_equal(view.chars, np.where(doc.tokens.kind == TEXT, doc.tokens.chars, 0))


def test_filter_1_removes_anchors_with_their_text() -> None:
    doc = parse(PAGE)
    view = filter_links(doc, 1)
    for start, end, _ in anchor_tokens(doc):
        assert not view.present[start : end + 1].any()
        assert view.chars[start : end + 1].sum() == 0
        assert view.length[start : end + 1].sum() == 0
    kept_text = "".join(t for t, keep in zip(doc.tokens.text, view.present, strict=True) if keep)
    assert "Spiegel" not in kept_text
    assert "Plain text before" in kept_text and "and after." in kept_text


def test_filter_2_leaves_a_bare_start_tag() -> None:
    doc = parse(PAGE)
    view = filter_links(doc, 2)
    anchors = anchor_tokens(doc)
    assert anchors
    for start, end, _ in anchors:
        assert doc.tokens.kind[start] == OPEN
        assert view.length[start] == len("<a>")
        assert view.length[end] == len("</a>")
    assert view.present.all()
    # Nothing but anchor start tags changes.
    others = np.ones(len(doc.tokens), dtype=bool)
    others[[start for start, _, _ in anchors]] = False
    assert np.array_equal(view.length[others], doc.tokens.length[others])


def test_filter_3_makes_hyperlink_code_as_long_as_its_anchor_text() -> None:
    doc = parse(PAGE)
    view = filter_links(doc, 3)
    (long_start, long_end, long_chars), (short_start, short_end, short_chars) = anchor_tokens(doc)
    # "Spiegel Web Site": 14 non-whitespace characters, so <a + 7 spaces + > and </a> = 14.
    assert long_chars == 14
    assert view.length[long_start] + view.length[long_end] == long_chars
    # An anchor text shorter than 7 keeps the bare <a></a>.
    assert short_chars == 2
    assert view.length[short_start] + view.length[short_end] == 7


def test_unknown_filter_number_is_refused() -> None:
    for bad in (-1, 4, 7, "7", "x", 1.5, True):
        with pytest.raises(ValueError, match="link_filter must be one of 0 \\(none\\), 1"):
            link_filter_value(bad)
    with pytest.raises(ValueError, match="link_filter"):
        readerproxy.extract(PAGE, algorithm="cetr", link_filter=5)


def test_filter_numbers_and_names_from_strings() -> None:
    assert [link_filter_value(str(n)) for n in range(4)] == list(LinkFilter)
    assert link_filter_value(" 3 ") is LinkFilter.PAD_ATTRIBUTES
    assert link_filter_value("remove-links") is LinkFilter.REMOVE_LINKS
    assert link_filter_value(2) is LinkFilter.STRIP_ATTRIBUTES
    assert filter_links(parse(PAGE), 1).link_filter is LinkFilter.REMOVE_LINKS


def test_body_lines_sum_the_body_tokens_per_line() -> None:
    doc = parse((FIXTURES / "nav_article.html").read_text())
    lines = body_lines(doc, filter_links(doc, 0))
    t = doc.tokens
    body = doc.body_span
    is_text = t.kind[body] == TEXT
    line = t.line[body] - lines.first_line
    assert lines.first_line == int(t.line[body.start])
    assert len(lines) == int(line[-1]) + 1
    assert lines.tags.sum() == np.count_nonzero(~is_text)
    assert lines.text_chars.sum() == t.chars[body].sum()
    assert lines.anchor_chars.sum() == t.chars[body][t.in_anchor[body] & is_text].sum()
    assert lines.code_length.sum() == t.length[body][~is_text].sum()
    for number in (0, len(lines) // 2, len(lines) - 1):
        on_line = line == number
        assert lines.text_chars[number] == t.chars[body][on_line & is_text].sum()
        assert lines.tags[number] == np.count_nonzero(on_line & ~is_text)


def test_filter_1_zeroes_anchor_text_per_line() -> None:
    doc = parse((FIXTURES / "nav_article.html").read_text())
    plain = body_lines(doc, filter_links(doc, 0))
    filtered = body_lines(doc, filter_links(doc, 1))
    assert plain.anchor_chars.sum() > 0
    assert filtered.anchor_chars.sum() == 0
    assert np.array_equal(filtered.text_chars, plain.text_chars - plain.anchor_chars)


def test_line_masks_and_ranges_cover_the_selected_lines() -> None:
    doc = parse((FIXTURES / "nav_article.html").read_text())
    view = filter_links(doc, 0)
    lines = body_lines(doc, view)
    starts, ends = line_token_ranges(doc, lines)
    chosen = np.zeros(len(lines), dtype=bool)
    line = int(np.argmax(lines.text_chars))
    chosen[line] = True
    mask = line_token_mask(doc, view, lines, chosen)
    assert np.array_equal(np.flatnonzero(mask), np.arange(starts[line], ends[line] + 1))
    assert (doc.tokens.line[mask] == line + lines.first_line).all()


def test_filter_1_output_loses_anchor_text_as_the_paper_says() -> None:
    html = (
        (FIXTURES / "nav_article.html")
        .read_text()
        .replace("old mill.</p>", 'old <a href="/mill">mill</a> near the weir.</p>')
    )
    with_links = readerproxy.extract(html, algorithm="cetr").text
    without = readerproxy.extract(html, algorithm="cetr", link_filter=1).text
    assert "old mill near the weir" in with_links
    assert "old  near the weir" in without or "old near the weir" in without


class TestWikipediaStylePage:
    """Ghorbani, Mohammadzadeh, Nazemi 2014, §4-5: on hyperlink-rich pages (Wikipedia) the filters recover the article."""

    html = (FIXTURES / "wiki_links.html").read_text()
    article = (
        "was a medieval",
        "Salt from the",
        "The route declined in the",
        "Markers along the way explain the",
    )
    boilerplate = ("Random article", "Bergen", "Amber Road", "Privacy policy", "Categories")

    def found(self, text: str) -> list[bool]:
        return [probe in text for probe in self.article]

    def test_danag_without_a_filter_loses_the_link_rich_article(self) -> None:
        text = readerproxy.extract(self.html, algorithm="danag", link_filter=0).text
        assert not all(self.found(text))

    def test_filter_3_recovers_it_for_danag(self) -> None:
        text = readerproxy.extract(self.html, algorithm="danag", link_filter=3).text
        assert all(self.found(text))
        assert "Lübeck" in text  # anchor text stays, unlike Filter 1
        assert not any(word in text for word in self.boilerplate)

    def test_filter_1_recovers_it_for_lineblock_whose_ratios_count_tags(self) -> None:
        plain = readerproxy.extract(self.html, algorithm="lineblock", link_filter=0).text
        filtered = readerproxy.extract(self.html, algorithm="lineblock", link_filter=1).text
        assert not any(self.found(plain))
        assert all(self.found(filtered))
        assert not any(word in filtered for word in self.boilerplate)
