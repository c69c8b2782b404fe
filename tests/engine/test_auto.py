"""auto (the learned block scorer) and auto-heuristic (the chain it falls back to)."""

from __future__ import annotations

from pathlib import Path

import readerproxy
from readerproxy import extract
from readerproxy.engine.extraction import registry
from readerproxy.engine.extractors.auto import FALLBACKS, selected_chars
from readerproxy.engine.parse.document import parse

ARTICLE = "".join(
    f"<p>Paragraph {i} of a real article, with enough words in it to be read as content by anyone.</p>"
    for i in range(12)
)
PAGE = f"""<html><body><nav><a href="/a">Home</a> <a href="/b">News</a></nav>
<article><h1>Title</h1>{ARTICLE}</article><footer><a href="/c">Contact</a></footer></body></html>"""


NAMES = [name for name, _ in FALLBACKS]


def test_auto_runs_heuristic_after_removing_unlikely_candidates_on_an_article() -> None:
    page = PAGE.replace(
        "</article>",
        '</article><div id="comments"><p>'
        + "A long reader comment that goes on and on about it. " * 6
        + "</p></div>",
    )
    article = extract(page, algorithm="auto-heuristic")
    assert article.algorithm == NAMES[0] == "heuristic"
    assert article.extraction.params["unlikely_candidates"] is True
    assert "Paragraph 11 of a real article" in article.text
    assert "Contact" not in article.text and "reader comment" not in article.text
    assert list(article.extraction.signals["auto_tried"]) == [0]


def test_auto_falls_back_until_something_is_selected() -> None:
    tiny = "<html><body><span>Just a few words here &amp; there.</span></body></html>"
    doc = parse(tiny)
    assert selected_chars(doc, registry()["heuristic"].run(doc).selection) == 0  # the case auto exists for
    article = extract(tiny, algorithm="auto-heuristic")
    assert article.algorithm in NAMES[1:]
    assert article.text == "Just a few words here & there."
    assert len(article.extraction.signals["auto_tried"]) >= 2


def test_auto_is_the_learned_scorer_the_default_and_listed_first() -> None:
    article = extract(PAGE)
    assert article.algorithm == "learned"  # the badge reads "auto via learned"
    assert "Paragraph 11 of a real article" in article.text and "Contact" not in article.text
    assert next(iter(readerproxy.algorithms())) == "auto"
    assert extract(PAGE, algorithm="auto-heuristic").algorithm == "heuristic"
    # Too little kept: auto-heuristic's chain answers, and says which of its extractors did.
    assert extract(PAGE, algorithm="auto", min_chars=10**7, min_share=1.0).algorithm in NAMES[2:]
    assert extract(PAGE, algorithm="auto-heuristic", min_chars=10**7, min_share=1.0).algorithm in NAMES[2:]


def test_auto_falls_back_on_a_tiny_page() -> None:
    tiny = "<html><body><span>Just a few words here &amp; there.</span></body></html>"
    article = extract(tiny)
    assert article.algorithm in ("learned", *NAMES) and article.text == "Just a few words here & there."


def test_empty_page() -> None:
    for algorithm in ("auto", "auto-heuristic"):
        article = extract("<html><body></body></html>", algorithm=algorithm)
        assert article.text == "" and article.algorithm == "baseline"


def test_blocks_outside_the_main_region_need_a_surer_model(shared_datasets: Path) -> None:
    """lwn-1: the sidebar's "LWN.net Weekly Edition for …" links lie outside the heuristic's article
    root; `outside_threshold` only ever drops blocks there (a stricter rule keeps a subset), and
    auto's selection keeps the article without the sidebar."""
    page = (shared_datasets / "readability" / "lwn-1" / "source.html").read_text(encoding="utf-8")
    sidebar = "LWN.net Weekly Edition for April 23, 2015"
    lines = {
        threshold: set(extract(page, algorithm="learned", outside_threshold=threshold).text.split("\n"))
        for threshold in (None, 0.7, 1.0)
    }
    assert lines[1.0] <= lines[0.7] <= lines[None]
    article = extract(page, algorithm="auto")
    assert sidebar not in article.text and "The Arduino has been one of the biggest" in article.text


def test_the_rule_outside_the_root_needs_a_root_that_holds_text() -> None:
    """Text inside a `javascript:` link: the heuristic finds no article root holding any block, so no
    block is "outside the main region" and even `outside_threshold=1.0` keeps what the trees keep."""
    page = (
        '<html><head><title>Links</title></head><body><a href="javascript:">'
        "<p>First words of the page, a short line.</p>"
        "<p>Second line of text that says a little more.</p> and the tail.</a></body></html>"
    )
    texts = {t: extract(page, algorithm="learned", outside_threshold=t).text for t in (None, 1.0)}
    assert texts[1.0] == texts[None] and "and the tail." in texts[1.0]
