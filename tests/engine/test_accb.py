"""ACCB (Gottron 2008): the content code vector, the blurring and pages whose answer is known."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from readerproxy import extract
from readerproxy.engine.extraction import get_extractor
from readerproxy.engine.extractors.accb import blur, content_code_vector, gaussian_kernel
from readerproxy.engine.parse.document import TEXT, parse

FIXTURES = Path(__file__).parents[1] / "fixtures"


def page(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def test_content_code_vector_ignores_anchor_tags() -> None:
    doc = parse("<body><p>one two <a href='/x'>three four</a></p></body>")
    vector = content_code_vector(doc, anchors="ignore", unit="token")
    # <body> <p> "one two " "three four" </p> </body>: <a> and </a> have no entry.
    assert vector.ccv.tolist() == [0, 0, 1, 1, 1, 1, 0, 0]
    anchor_tags = [
        i
        for i in vector.tokens.tolist()
        if doc.tokens.kind[i] != TEXT and doc.tag[doc.tokens.element[i]] == "a"
    ]
    assert anchor_tags == []


def test_anchors_remove_is_filter_one() -> None:
    doc = parse("<body><p>one two <a href='/x'>three four</a></p></body>")
    vector = content_code_vector(doc, anchors="remove", unit="token")
    assert vector.ccv.tolist() == [0, 0, 1, 1, 0, 0]  # the anchor text went with its tags


def test_char_unit_counts_text_and_code_characters() -> None:
    doc = parse("<body><p>ab  cd</p></body>")
    vector = content_code_vector(doc, anchors="ignore", unit="char")
    # "<body>" 6, "<p>" 3, 4 non-whitespace text characters, "</p>" 4, "</body>" 7
    assert vector.sizes.tolist() == [6, 3, 4, 4, 7]
    assert vector.ccv.sum() == 4 and len(vector.ccv) == 24


def test_blur_keeps_constants_and_spreads_edges() -> None:
    kernel = gaussian_kernel(radius=5, sigma=5 / 3)
    assert kernel.sum() == pytest.approx(1.0) and kernel[5] == kernel.max()
    flat = blur(np.ones(30), kernel, iterations=4)
    assert np.allclose(flat, 1.0)  # edges normalised: a page of pure text stays pure text
    step = np.concatenate((np.zeros(20), np.ones(20)))
    once = blur(step, kernel, iterations=1)
    thrice = blur(step, kernel, iterations=3)
    assert np.all(np.diff(once) >= -1e-12) and once.min() >= 0.0 and once.max() <= 1.0
    assert thrice[21] < once[21] < 1.0  # more iterations spread the code further into the text
    assert blur(np.ones(3), gaussian_kernel(40, 13.3), iterations=3).shape == (3,)


def test_link_dense_navigation_beside_long_article() -> None:
    text = extract(page("accb_navigation.html"), algorithm="accb").text
    assert "hundred and twelve steps" in text and "supply boat" in text and "rowing boat" in text
    for noise in ("Section one", "Section nine", "Privacy", "Help", "Updated"):
        assert noise not in text


def test_link_rich_wiki_text_is_kept_because_anchor_tags_are_ignored() -> None:
    html = page("accb_wiki.html")
    adapted = extract(html, algorithm="accb").text
    assert "coastal ecosystem in the upper intertidal zone" in adapted
    assert "aquatic food web" in adapted
    assert "Main page" not in adapted and "Cookie statement" not in adapted
    removed = extract(html, algorithm="accb", anchors="remove").text
    assert "aquatic food web" not in removed  # Filter 1 drops anchor text with its links
    assert len(removed) < len(adapted)


def test_signals_and_blocks() -> None:
    doc = parse(page("accb_navigation.html"))
    extraction = get_extractor("accb").run(doc)
    ccv, ccr = extraction.signals["ccv"], extraction.signals["ccr"]
    assert ccv.shape == ccr.shape and set(np.unique(ccv)) <= {0.0, 1.0}
    assert ccr.min() >= 0.0 and ccr.max() <= 1.0 + 1e-9
    assert extraction.blocks and all(doc.tokens.kind[b.start] == TEXT for b in extraction.blocks)
    assert all(b.selected == (b.score >= 0.7) for b in extraction.blocks)
    assert 0.7 <= extraction.score <= 1.0


def test_threshold_override() -> None:
    html = page("accb_navigation.html")
    everything = extract(html, algorithm="accb", threshold=0.0)
    default = extract(html, algorithm="accb")
    nothing = extract(html, algorithm="accb", threshold=1.0)  # no token is all content around it
    assert "Section one" in everything.text and "Section one" not in default.text
    assert nothing.text == "" and not nothing.extraction.selection.any()
    assert default.extraction.selection.sum() < everything.extraction.selection.sum()
    assert extract(html, algorithm="accb", unit="char").text.count("rowing boat") == 1


def test_invalid_parameters_raise() -> None:
    with pytest.raises(ValueError):
        extract("<p>x</p>", algorithm="accb", iterations=0)
    with pytest.raises(ValueError):
        extract("<p>x</p>", algorithm="accb", anchors="drop")


def test_deterministic() -> None:
    html = page("accb_wiki.html")
    first = get_extractor("accb").run(parse(html))
    second = get_extractor("accb").run(parse(html))
    assert np.array_equal(first.selection, second.selection)
    assert np.array_equal(first.signals["ccr"], second.signals["ccr"])


@pytest.mark.parametrize("html", ["", "   ", "<html></html>", "<p>", "plain text only", "<a href=x>link</a>"])
def test_degenerate_pages_do_not_raise(html: str) -> None:
    doc = parse(html)
    extraction = get_extractor("accb").run(doc)
    assert extraction.selection.shape == (len(doc.tokens),)
    assert 0.0 <= extraction.score <= 1.0
