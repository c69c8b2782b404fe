"""Line-Block (Pan Ei San): line-blocks, TTR / ATTR / TKD, both threshold kinds, and pages whose answer is known."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import readerproxy
from readerproxy.engine.extraction import get_extractor
from readerproxy.engine.extractors.lineblock import (
    LineBlockParams,
    LineBlocks,
    get_line_blocks,
    threshold_check,
    thresholds,
    title_keywords,
)
from readerproxy.engine.extractors.linkfilters import BodyLines
from readerproxy.engine.parse.document import parse

FIXTURES = Path(__file__).parents[1] / "fixtures"
NAV_ARTICLE = (FIXTURES / "nav_article.html").read_text()
ARTICLE = (
    "After an absence of almost forty years",
    "The first clue came",
    "Otters disappeared",
    "The trust is asking",
)
NAVIGATION = ("Obituaries", "Classifieds", "Subscribe", "Bridge closure", "Family bakery", "Advertise")


def lines_with_text(text_chars: list[int]) -> BodyLines:
    n = len(text_chars)
    zeros = np.zeros(n)
    return BodyLines(0, np.array(text_chars, dtype=np.float64), zeros, zeros, zeros)


def blocks(ttr: list[float], attr: list[float], tkd: list[float]) -> LineBlocks:
    n = len(ttr)
    return LineBlocks(np.arange(n), np.arange(n), np.array(ttr), np.array(attr), np.array(tkd), np.ones(n))


def test_line_blocks_join_text_lines_at_most_max_gap_apart() -> None:
    lines = lines_with_text([0, 5, 5, 0, 0, 7, 0, 3])
    first, last = get_line_blocks(lines, 0)
    assert list(zip(first.tolist(), last.tolist(), strict=True)) == [(1, 2), (5, 5), (7, 7)]
    first, last = get_line_blocks(lines, 1)
    assert list(zip(first.tolist(), last.tolist(), strict=True)) == [(1, 2), (5, 7)]
    first, last = get_line_blocks(lines, 2)
    assert list(zip(first.tolist(), last.tolist(), strict=True)) == [(1, 7)]
    first, last = get_line_blocks(lines_with_text([0, 0]), 0)
    assert len(first) == 0 and len(last) == 0


def test_title_keywords_drop_short_words_and_the_site_name() -> None:
    assert title_keywords("River Otters Return to the Lower Valley - Valley Courier") == {
        "river",
        "otters",
        "return",
        "lower",
        "valley",
    }
    assert title_keywords("Breaking | Ein Fluss kehrt zurück") == {"fluss", "kehrt", "zurück"}
    assert title_keywords("") == frozenset()


def test_fixed_thresholds_are_the_papers() -> None:
    params = LineBlockParams()
    assert (params.ttr_threshold, params.attr_threshold, params.tkd_threshold) == (30.0, 0.2, 2.0)
    assert thresholds(blocks([1, 2], [0, 0], [0, 0]), params) == (30.0, 0.2, 2.0)


def test_adaptive_thresholds_are_lambda_times_sigma() -> None:
    features = blocks([10.0, 50.0, 90.0], [0.0, 0.5, 1.0], [0.0, 2.0, 4.0])
    params = LineBlockParams(adaptive=True, lambda_ttr=0.5, lambda_tkd=2.0)
    t1, t2, t3 = thresholds(features, params)
    assert t1 == pytest.approx(0.5 * np.std([10.0, 50.0, 90.0]))
    assert t2 == 0.2  # ATTR is already a ratio and keeps its fixed threshold
    assert t3 == pytest.approx(2.0 * np.std([0.0, 2.0, 4.0]))


def test_threshold_check_and_versus_rescue() -> None:
    features = blocks(
        ttr=[40.0, 40.0, 5.0, 5.0, 40.0],
        attr=[0.0, 0.5, 0.0, 0.0, 0.1],
        tkd=[3.0, 3.0, 3.0, 0.0, 0.0],
    )
    # Step 4 as printed: all three tests.
    assert threshold_check(features, 30, 0.2, 2, True, "and").tolist() == [True, False, False, False, False]
    # Step 3's rescue: a block with title keywords and few links is kept despite a low TTR.
    assert threshold_check(features, 30, 0.2, 2, True, "rescue").tolist() == [True, False, True, False, True]
    # No title: TKD is not tested.
    assert threshold_check(features, 30, 0.2, 2, False, "and").tolist() == [True, False, False, False, True]


def test_article_beside_link_dense_navigation() -> None:
    text = readerproxy.extract(NAV_ARTICLE, algorithm="lineblock").text
    assert all(sentence in text for sentence in ARTICLE)
    assert not any(word in text for word in NAVIGATION)
    assert "Copyright Valley Courier" not in text  # the site name is not a title keyword


def test_adaptive_thresholds_on_the_page() -> None:
    text = readerproxy.extract(NAV_ARTICLE, algorithm="lineblock", adaptive=True).text
    assert all(sentence in text for sentence in ARTICLE)
    assert not any(word in text for word in NAVIGATION)


def test_tkd_and_rule_drops_paragraphs_that_do_not_repeat_the_title() -> None:
    html = NAV_ARTICLE.replace(
        "<title>River Otters Return to the Lower Valley - Valley Courier</title>",
        "<title>Webbed footprints below the footbridge - Valley Courier</title>",
    ).replace(  # a figure on lines of its own makes the last paragraph a line-block of its own
        "sewage works.</p>\n", 'sewage works.</p>\n<figure>\n<img src="otter.jpg">\n</figure>\n'
    )
    rescued = readerproxy.extract(html, algorithm="lineblock")
    strict = readerproxy.extract(html, algorithm="lineblock", tkd_rule="and")
    assert rescued.extraction.signals["tkd"].tolist() == [0, 0, 0, 0, 4, 0, 0, 0]
    assert all(sentence in rescued.text for sentence in ARTICLE)
    # Step 4 as printed: the first block names "webbed footprints below the footbridge" (4 >= 2)
    # and stays; the last paragraph never mentions the title and is dropped.
    assert all(sentence in strict.text for sentence in ARTICLE[:3])
    assert ARTICLE[3] not in strict.text


def test_a_page_where_no_block_passes_keeps_its_best_block() -> None:
    html = "<html><body>\n<ul><li><a href='/'>Home</a></li></ul>\n\n<p>One short paragraph, two tags.</p>\n</body></html>"
    text = readerproxy.extract(html, algorithm="lineblock").text
    assert text == "One short paragraph, two tags."


def test_single_line_minified_page() -> None:
    html = re.sub(r">\s+<", "><", NAV_ARTICLE).replace("\n", " ")
    assert parse(html).rebroken
    text = readerproxy.extract(html, algorithm="lineblock").text
    assert all(sentence in text for sentence in ARTICLE)
    assert not any(word in text for word in ("Obituaries", "Classifieds", "Advertise", "Privacy"))


def test_comments_longer_than_the_article_keep_the_article() -> None:
    html = (FIXTURES / "comments_longer.html").read_text()
    text = readerproxy.extract(html, algorithm="lineblock").text
    assert "A volunteer group has published the firmware" in text
    assert "Hardware" not in text and "Read the 4 comments" not in text
    assert "A volunteer group has published" not in readerproxy.extract(html, algorithm="density").text


def test_extraction_carries_block_features_and_a_score() -> None:
    doc = parse(NAV_ARTICLE)
    extraction = get_extractor("lineblock").run(doc)
    signals = extraction.signals
    assert len(signals["ttr"]) == len(signals["attr"]) == len(signals["tkd"]) == len(extraction.blocks)
    assert signals["thresholds"].tolist() == [30.0, 0.2, 2.0]
    assert 0.0 < extraction.score <= 1.0
    for block, ttr in zip(extraction.blocks, signals["ttr"].tolist(), strict=True):
        assert block.score == ttr
        inside = extraction.selection[block.start : block.end + 1]
        assert inside.any() if block.selected else not inside.any()


def test_bad_parameters_are_refused() -> None:
    with pytest.raises(ValueError):
        readerproxy.extract(NAV_ARTICLE, algorithm="lineblock", max_gap=-1)
    with pytest.raises(ValueError):
        readerproxy.extract(NAV_ARTICLE, algorithm="lineblock", tkd_rule="or")
