"""Density (Moreno, Deschacht, Moens 2009): string list, highest-density region, c1/c2 overrides and hyperlink filters."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import readerproxy
from readerproxy.engine.extraction import get_extractor
from readerproxy.engine.extractors.density import highest_density_region, split_strings
from readerproxy.engine.parse.document import parse

FIXTURES = Path(__file__).parents[1] / "fixtures"
NAV_ARTICLE = (FIXTURES / "nav_article.html").read_text()
COMMENTS = (FIXTURES / "comments_longer.html").read_text()
ARTICLE = (
    "After an absence of almost forty years",
    "The first clue came",
    "Otters disappeared",
    "The trust is asking",
)
NAVIGATION = (
    "Obituaries",
    "Classifieds",
    "Subscribe",
    "Bridge closure",
    "Family bakery",
    "Advertise",
    "Copyright",
)


def test_region_grows_from_the_longest_string_within_c2() -> None:
    lengths = np.array([0, 10, 100, 50, 5, 40, 0, 0, 0, 0, 60])
    left, right, cutoff = highest_density_region(lengths, 0.333, 4)
    assert (left, right) == (2, 5)
    assert cutoff == pytest.approx(33.3)
    assert highest_density_region(lengths, 0.333, 6)[:2] == (2, 10)  # index 10 is 5 away from 5
    assert highest_density_region(lengths, 0.6, 4)[:2] == (2, 2)  # only the longest beats 60
    assert highest_density_region(np.zeros(3, dtype=np.int64), 0.333, 4)[:2] == (0, -1)


def test_strings_split_at_structural_tags_only() -> None:
    doc = parse(
        "<html><body><div><p>one <b>two</b> three</p><p>four</p></div><ul><li>x</li></ul></body></html>"
    )
    _, lengths = split_strings(doc)
    # <b> is not structural, so "one two three" is one string; runs of structural tags start one string.
    assert lengths[lengths > 0].tolist() == [len("onetwothree"), len("four"), len("x")]


def test_article_beside_link_dense_navigation() -> None:
    text = readerproxy.extract(NAV_ARTICLE, algorithm="density").text
    assert all(sentence in text for sentence in ARTICLE)
    assert not any(word in text for word in NAVIGATION)


def test_comments_longer_than_the_article_is_where_density_fails() -> None:
    # Moreno, Deschacht, Moens 2009, §5.3 (Slashdot): each comment is longer than the story, so the region starts at the
    # longest comment and never reaches the story c2 strings away.
    text = readerproxy.extract(COMMENTS, algorithm="density").text
    assert "A volunteer group has published" not in text
    assert "tipping bucket" in text and "calibration data" in text


def test_c2_override_widens_the_region() -> None:
    wide = readerproxy.extract(COMMENTS, algorithm="density", c2=20).text
    assert "A volunteer group has published" in wide
    assert "Hardware" not in wide


def test_c1_override_raises_the_cutoff() -> None:
    strict = readerproxy.extract(NAV_ARTICLE, algorithm="density", c1=0.95)
    loose = readerproxy.extract(NAV_ARTICLE, algorithm="density")
    assert strict.extraction.selection.sum() < loose.extraction.selection.sum()
    assert strict.text.startswith("Otters disappeared")  # the longest string is always in the region
    assert strict.extraction.signals["cutoff_length"][0] > loose.extraction.signals["cutoff_length"][0]


def test_parameter_values_are_checked() -> None:
    with pytest.raises(ValueError):
        readerproxy.extract(NAV_ARTICLE, algorithm="density", c2=0)
    with pytest.raises(ValueError):
        readerproxy.extract(NAV_ARTICLE, algorithm="density", link_filter=9)


def test_link_filter_1_drops_anchor_text_before_and_after_the_region() -> None:
    html = NAV_ARTICLE.replace("near the old mill.</p>", 'near the <a href="/mill">old mill</a>.</p>')
    plain = readerproxy.extract(html, algorithm="density").text
    filtered = readerproxy.extract(html, algorithm="density", link_filter=1).text
    assert "near the old mill." in plain
    assert "old mill" not in filtered and "near the" in filtered
    assert all(sentence in filtered for sentence in ARTICLE)


def test_link_filters_2_and_3_change_only_code_which_density_does_not_read() -> None:
    doc = parse((FIXTURES / "wiki_links.html").read_text())
    extractor = get_extractor("density")
    base = extractor.run(doc, extractor.make_params({})).selection
    for link_filter in (2, 3):
        selection = extractor.run(doc, extractor.make_params({"link_filter": link_filter})).selection
        assert np.array_equal(selection, base)


def test_link_filter_1_on_a_link_rich_page() -> None:
    # Wikipedia-style: with anchors removed the link lists vanish and the article stays the region.
    text = readerproxy.extract(
        (FIXTURES / "wiki_links.html").read_text(), algorithm="density", link_filter=1
    ).text
    assert "The route declined in the" in text
    assert "Random article" not in text and "Bergen" not in text
