"""DANAg (Mohammadzadeh et al. 2011/2013, with the filters of Ghorbani et al. 2014): segment counts, smoothing, boundary detection, known pages."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import readerproxy
from readerproxy.engine.extraction import get_extractor
from readerproxy.engine.extractors.danag import (
    main_content_area,
    naive_smoothing,
    refine_boundaries,
    segment_counts,
)
from readerproxy.engine.parse.document import parse

FIXTURES = Path(__file__).parents[1] / "fixtures"
NAV_ARTICLE = (FIXTURES / "nav_article.html").read_text()
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


def test_segment_counts_split_tokens_at_segment_borders() -> None:
    # A 6-character tag, 10 characters of text, a 4-character tag: 20 characters, segments of 8.
    width = np.array([6.0, 10.0, 4.0])
    content = np.array([0.0, 10.0, 0.0])
    segments = segment_counts(width, content, 8)
    assert segments.content.tolist() == [2.0, 8.0, 0.0]
    assert segments.code.tolist() == [6.0, 0.0, 4.0]
    assert segments.token_begin.tolist() == [0.0, 6.0, 16.0]
    assert segments.token_end.tolist() == [6.0, 16.0, 20.0]


def test_naive_smoothing_is_a_moving_average() -> None:
    values = np.array([0.0, 3.0, 6.0, 3.0, 0.0])
    assert naive_smoothing(values, 1).tolist() == [1.5, 3.0, 4.0, 3.0, 1.5]
    assert naive_smoothing(values, 0).tolist() == values.tolist()
    assert naive_smoothing(np.array([2.0]), 3).tolist() == [2.0]


def test_area_grows_from_the_peak_over_small_gaps() -> None:
    curve = np.array([-5, 4, -1, -1, -1, 6, 9, -2, 5, -3, -3, -3, -3, 8], dtype=float)
    assert main_content_area(curve, 0) == (5, 6)
    assert main_content_area(curve, 1) == (5, 8)
    assert main_content_area(curve, 3) == (1, 8)
    assert main_content_area(curve, 4) == (1, 13)
    # Nothing with more content than code: the best segment alone.
    assert main_content_area(np.array([-3.0, -1.0, -2.0]), 2) == (1, 1)
    assert main_content_area(np.zeros(0), 2) == (0, -1)


def test_refinement_recovers_edges_the_smoothing_blurred() -> None:
    difference = np.array([-9.0, 2.0, 5.0, 7.0, 3.0, -9.0])
    assert refine_boundaries(difference, 2, 3) == (1, 4)
    assert refine_boundaries(difference, 0, -1) == (0, -1)


def test_article_beside_link_dense_navigation() -> None:
    text = readerproxy.extract(NAV_ARTICLE, algorithm="danag").text
    assert all(sentence in text for sentence in ARTICLE)
    assert not any(word in text for word in NAVIGATION)


def test_single_line_minified_page() -> None:
    # DANAg's segments do not depend on the page's own lines at all.
    html = re.sub(r">\s+<", "><", NAV_ARTICLE).replace("\n", " ")
    assert (
        readerproxy.extract(html, algorithm="danag").text
        == readerproxy.extract(NAV_ARTICLE, algorithm="danag").text
    )


def test_comments_longer_than_the_article() -> None:
    # Unlike density, the allowed gap carries the area from the longest comments back to the story.
    html = (FIXTURES / "comments_longer.html").read_text()
    text = readerproxy.extract(html, algorithm="danag").text
    assert "A volunteer group has published the firmware" in text
    assert "Hardware" not in text and "Privacy" not in text
    # With no gap allowed the area stays inside the comments, as density's region does.
    tight = readerproxy.extract(html, algorithm="danag", max_gap=0).text
    assert "A volunteer group has published" not in tight
    assert "tipping bucket" in tight


def test_extraction_carries_segment_signals_and_a_score() -> None:
    doc = parse(NAV_ARTICLE)
    extraction = get_extractor("danag").run(doc)
    signals = extraction.signals
    n = len(signals["smoothed"])
    assert len(signals["content"]) == len(signals["code"]) == n
    full = signals["content"][:-1] + signals["code"][:-1]
    assert np.allclose(full, 150.0)  # every segment but the last holds segment_length characters
    left, right = (int(v) for v in signals["area"])
    assert 0 <= left <= right < n
    assert 0.5 < extraction.score <= 1.0
    assert all(
        block.selected == (left <= int(block.label.split()[1]) <= right) for block in extraction.blocks
    )


def test_bad_parameters_are_refused() -> None:
    for bad in ({"segment_length": 0}, {"radius": -1}, {"max_gap": -2}, {"link_filter": 4}):
        with pytest.raises(ValueError):
            readerproxy.extract(NAV_ARTICLE, algorithm="danag", **bad)
