"""CETR, CETR-KM and CETR-TM (Weninger, Hsu, Han 2010): the steps on known numbers, then pages whose answer is known."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import readerproxy
from readerproxy.engine.extraction import get_extractor
from readerproxy.engine.extractors.cetr import (
    content_clusters,
    derivative,
    explained_variance,
    kmeans,
    smooth,
    tag_ratio,
)
from readerproxy.engine.extractors.numeric import gaussian_kernel
from readerproxy.engine.parse.document import parse

FIXTURES = Path(__file__).parents[1] / "fixtures"
VARIANTS = ("cetr", "cetr-km", "cetr-tm")

NAV_ARTICLE = (FIXTURES / "nav_article.html").read_text()
ARTICLE = (
    "After an absence of almost forty years",
    "The first clue came",
    "Otters disappeared",
    "The trust is asking",
)
HEADER_NAVIGATION = ("Obituaries", "Classifieds", "Subscribe", "Weather")
NAVIGATION = (*HEADER_NAVIGATION, "Bridge closure", "Family bakery", "Advertise", "Copyright")


def minified(html: str) -> str:
    """The same page as one line, as minifiers serve it."""
    return re.sub(r">\s+<", "><", html).replace("\n", " ")


def test_tag_ratio_reproduces_the_papers_table() -> None:
    # Weninger, Hsu, Han 2010, "Tag Ratios" table: "James Smith" with 2 tags is 5.5; 37 characters without tags is 37; 41 / 2.
    ratios = tag_ratio(np.array([0, 11, 37, 41, 0]), np.array([1, 2, 0, 2, 2]))
    assert ratios.tolist() == [0.0, 5.5, 37.0, 20.5, 0.0]


def test_gaussian_kernel_is_normalised_and_symmetric() -> None:
    kernel = gaussian_kernel(3, 2.0)
    assert len(kernel) == 7
    assert kernel.sum() == pytest.approx(1.0)
    assert np.allclose(kernel, kernel[::-1])
    assert kernel.argmax() == 3


def test_smoothing_keeps_a_constant_and_spreads_a_spike() -> None:
    assert np.allclose(smooth(np.full(20, 4.0), 3, 2.0), 4.0)
    spike = np.zeros(21)
    spike[10] = 70.0
    smoothed = smooth(spike, 3, 2.0)
    assert smoothed.sum() == pytest.approx(70.0)
    assert smoothed[10] < 70.0
    assert (smoothed[7:14] > 0).all() and (smoothed[:7] == 0).all() and (smoothed[14:] == 0).all()
    # Shorter than the kernel: still one value per line.
    assert smooth(np.array([1.0, 5.0]), 3, 2.0).shape == (2,)


def test_derivative_marks_where_content_starts_and_stops() -> None:
    step = np.concatenate((np.zeros(10), np.full(10, 50.0), np.zeros(10)))
    gradient = derivative(step, 3)
    assert gradient[:6].max() == 0.0
    assert gradient[12:16].max() == 0.0  # flat inside the content
    assert gradient[7:10].min() > 0.0  # rising edge ahead
    assert gradient[17:20].min() > 0.0  # falling edge ahead
    assert np.allclose(derivative(np.full(8, 3.0), 3), 0.0)


def test_kmeans_is_deterministic_and_finds_separated_groups() -> None:
    rng = np.random.default_rng(7)
    points = np.concatenate(
        (rng.normal(0, 1, (50, 2)), rng.normal((40, 10), 1, (30, 2)), rng.normal((90, 30), 1, (20, 2)))
    )
    labels, centroids = kmeans(points, 3)
    again, _ = kmeans(points, 3)
    assert np.array_equal(labels, again)
    assert len(set(labels[:50].tolist())) == 1 and len(set(labels[50:80].tolist())) == 1
    assert len(set(labels.tolist())) == 3
    assert sorted(np.round(centroids[:, 0], -1).tolist()) == [0.0, 40.0, 90.0]


def test_the_cluster_nearest_the_origin_is_non_content() -> None:
    points = np.array([[0.0, 0.0], [1.0, 0.5], [0.5, 1.0], [60.0, 5.0], [65.0, 3.0], [120.0, 40.0]])
    content, _ = content_clusters(points, 3)
    assert content.tolist() == [False, False, False, True, True, True]
    two_groups = np.array([[0.0, 0.0], [1.0, 0.5], [0.5, 1.0], [60.0, 5.0], [65.0, 3.0], [70.0, 8.0]])
    content2, _ = content_clusters(two_groups, 2)
    assert content2.tolist() == [False, False, False, True, True, True]
    assert 0.9 < explained_variance(two_groups, content2) <= 1.0
    assert explained_variance(two_groups, content2) > explained_variance(two_groups, np.arange(6) % 2 == 0)
    assert explained_variance(points, np.ones(len(points), dtype=bool)) == 0.0


@pytest.mark.parametrize("algorithm", VARIANTS)
def test_article_beside_link_dense_navigation(algorithm: str) -> None:
    text = readerproxy.extract(NAV_ARTICLE, algorithm=algorithm).text
    assert all(sentence in text for sentence in ARTICLE)
    assert not any(word in text for word in NAVIGATION)


@pytest.mark.parametrize("algorithm", VARIANTS)
def test_single_line_minified_page_is_re_broken(algorithm: str) -> None:
    html = minified(NAV_ARTICLE)
    assert html.count("\n") == 0
    assert parse(html).rebroken
    text = readerproxy.extract(html, algorithm=algorithm).text
    assert all(sentence in text for sentence in ARTICLE)
    assert not any(word in text for word in HEADER_NAVIGATION)
    # Re-broken lines are short (~60 characters), so the radius-3 smoothing spreads the article's
    # high ratios over a few neighbouring lines (a sidebar headline, a footer link): the article
    # is still nearly all of the selection.
    article_chars = sum(len(p) for p in text.split("\n\n") if len(p) > 200)
    assert article_chars / len(text) > 0.9


@pytest.mark.parametrize("algorithm", VARIANTS)
def test_comments_longer_than_the_article_keep_the_article(algorithm: str) -> None:
    # Density's failure case (Moreno et al. 2009, §5.3, Slashdot): every comment is longer than the story.
    # CETR labels lines, not one region, so the story stays (and the long comments come along).
    html = (FIXTURES / "comments_longer.html").read_text()
    text = readerproxy.extract(html, algorithm=algorithm).text
    assert "A volunteer group has published the firmware" in text
    assert "Hardware" not in text and "Read the 4 comments" not in text
    assert "A volunteer group has published" not in readerproxy.extract(html, algorithm="density").text


def test_k_2_is_allowed_and_k_1_is_refused() -> None:
    text = readerproxy.extract(NAV_ARTICLE, algorithm="cetr", k=2).text
    assert all(sentence in text for sentence in ARTICLE)
    with pytest.raises(ValueError, match=r"k must be in \[2, 10\], got 1"):
        readerproxy.extract(NAV_ARTICLE, algorithm="cetr", k=1)


def test_tau_moves_the_cetr_tm_threshold() -> None:
    low = readerproxy.extract(NAV_ARTICLE, algorithm="cetr-tm", tau=0.0)
    high = readerproxy.extract(NAV_ARTICLE, algorithm="cetr-tm", tau=2.0)
    assert low.extraction.selection.sum() > high.extraction.selection.sum()
    assert low.extraction.signals["threshold"][0] == 0.0


@pytest.mark.parametrize("algorithm", VARIANTS)
def test_extraction_carries_lines_signals_and_a_score(algorithm: str) -> None:
    doc = parse(NAV_ARTICLE)
    extractor = get_extractor(algorithm)
    extraction = extractor.run(doc)
    signals = extraction.signals
    n = len(signals["line"])
    assert n > 0 and len(signals["ttr"]) == n and len(signals["smoothed"]) == n
    if algorithm == "cetr":
        assert len(signals["derivative"]) == n and len(signals["cluster"]) == n
    assert 0.0 <= extraction.score <= 1.0
    assert extraction.selected_blocks
    for block in extraction.blocks:
        inside = extraction.selection[block.start : block.end + 1]
        assert inside.all() if block.selected else not inside.any()
    # Nothing outside <body> is ever selected.
    first, last = doc.body
    assert not extraction.selection[:first].any() and not extraction.selection[last + 1 :].any()
