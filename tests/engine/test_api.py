"""The public API: extract(), Article, algorithms(), and its errors."""

from __future__ import annotations

import gzip
import json

import pytest

import readerproxy
from readerproxy import Article, extract

ARTICLE = "<p>" + "The quick brown fox jumps over the lazy dog near the river bank. " * 12 + "</p>"
PAGE = f"""<html><head><title>Fox news | Site</title></head><body>
<ul><li><a href="/a">Menu A</a></li><li><a href="/b">Menu B</a></li><li><a href="/c">Menu C</a></li></ul>
<div><h1>Fox jumps</h1>{ARTICLE}{ARTICLE}<p>{"Another sentence about foxes and dogs. " * 8}</p></div>
<footer><a href="/about">About</a> <a href="/legal">Legal</a></footer>
</body></html>"""


def test_extract_returns_an_article() -> None:
    article = extract(PAGE, url="https://news.example/story")
    assert isinstance(article, Article)
    assert article.algorithm in readerproxy.algorithms()
    assert article.algorithm != "auto"  # says which algorithm really ran
    assert "quick brown fox" in article.text
    assert "Menu A" not in article.text and "Legal" not in article.text
    assert "<p>" in article.html
    assert article.extraction.selection.any()
    assert article.word_count > 100
    assert article.reading_minutes >= 1
    data = article.to_dict()
    json.dumps(data)
    assert data["algorithm"] == article.algorithm


def test_text_has_blank_lines_between_paragraphs() -> None:
    article = extract(PAGE, algorithm="baseline")
    assert article.algorithm == "baseline"
    assert "Menu A\n\nMenu B" in article.text
    assert "\n\n\n" not in article.text


def test_bytes_and_gzip_input() -> None:
    data = PAGE.encode("utf-8")
    assert extract(data).text == extract(PAGE).text
    assert extract(gzip.compress(data)).text == extract(PAGE).text


def test_parameters_are_passed_and_validated() -> None:
    article = extract(PAGE, algorithm="density", c1=0.9, c2=1)
    assert article.extraction.params["c1"] == 0.9 and article.extraction.params["c2"] == 1
    assert extract(PAGE, algorithm="density", c1="0.5").extraction.params["c1"] == 0.5
    with pytest.raises(ValueError, match=r"valid: .*c1.*c2"):
        extract(PAGE, algorithm="density", nope=1)
    with pytest.raises(ValueError, match="expects float"):
        extract(PAGE, algorithm="density", c1="abc")


def test_unknown_algorithm_names_the_valid_ones() -> None:
    with pytest.raises(ValueError) as caught:
        extract(PAGE, algorithm="nope")
    message = str(caught.value)
    assert "nope" in message
    for name in readerproxy.algorithms():
        assert name in message


def test_algorithms_lists_descriptions() -> None:
    listing = readerproxy.algorithms()
    assert next(iter(listing)) == "auto"
    assert {"baseline", "density"} <= set(listing)
    assert all(isinstance(d, str) and d for d in listing.values())


def test_empty_and_garbage_input() -> None:
    for page in ("", b"", b"\xff\xfe\x00garbage", "<html><body></body></html>", "just text"):
        article = extract(page)
        assert isinstance(article.text, str) and isinstance(article.html, str)


def test_the_article_says_whether_the_page_is_readerable_and_links_the_next_page() -> None:
    from pathlib import Path

    fixture = Path(__file__).parents[1] / "fixtures" / "pagination_rel_next.html"
    article = extract(fixture.read_text(), url="https://news.example.com/features/river-changed-course")
    data = article.to_dict()
    assert data["readerable"] is article.readerable
    assert isinstance(article.readerable, bool)
    assert data["next_page_url"] == "https://news.example.com/features/river-changed-course?page=2"
    menu = extract(
        "<html><body><ul><li><a href='/a'>A</a></li><li><a href='/b'>B</a></li></ul></body></html>"
    )
    assert menu.readerable is False and menu.to_dict()["next_page_url"] is None
