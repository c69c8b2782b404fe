"""`Article`: its JSON view and its Markdown document."""

from __future__ import annotations

import dataclasses

from readerproxy import extract
from readerproxy.engine.article import markdown_document
from readerproxy.engine.metadata.metadata import Metadata


def test_to_dict_keeps_every_metadata_field() -> None:
    """`to_dict` names the metadata fields itself (for speed, not `dataclasses.asdict`): the same
    keys, values and order as asdict less the title, which the article's own title stands for."""
    page = (
        "<html lang='en'><head><title>A title for the page</title>"
        "<meta name='author' content='Jane Writer'><meta property='og:site_name' content='Site'>"
        "<meta property='og:image' content='/lead.jpg'>"
        "<meta property='article:published_time' content='2024-03-05'></head>"
        "<body dir='ltr'><article>"
        + "<p>Some words of the article that make it long enough to read as one. </p>" * 8
        + "</article><a rel='next' href='/story?page=2'>Next</a></body></html>"
    )
    article = extract(page, url="https://example.org/story")
    data = article.to_dict()
    expected = dataclasses.asdict(article.metadata)
    expected.pop("title")
    assert all(value is not None for value in expected.values())  # every field is really read here
    keys = list(data)
    assert keys[:2] == ["url", "title"] and keys[2 : 2 + len(expected)] == list(expected)
    assert {key: data[key] for key in expected} == expected
    assert [f.name for f in dataclasses.fields(Metadata)] == ["title", *expected]


def test_markdown_document_has_the_title_and_the_source() -> None:
    text = markdown_document("A *title*", "<p>Body</p>", "https://example.org/a")
    assert text == "# A \\*title\\*\n\nSource: [https://example.org/a](https://example.org/a)\n\nBody\n"


def test_readability_check_is_made_once_when_asked_and_is_the_readerable_check() -> None:
    """Readability.js's check is made on first use, not by `extract`: the answer it gives is the
    check of the page's own Document, and asking again reads the same answer without the Document."""
    from pathlib import Path

    from readerproxy.engine.kind.readerable import is_probably_readerable
    from readerproxy.engine.parse.document import parse

    html = (Path(__file__).parents[1] / "fixtures" / "pagination_rel_next.html").read_text()
    url = "https://news.example.com/features/river-changed-course"
    article = extract(html, url=url)
    assert article.decide_readability is not None  # not checked yet
    expected = is_probably_readerable(parse(html, url))
    assert article.readability_check is expected
    assert article.decide_readability is None  # the Document let go
    assert article.readability_check is expected
    menu = extract(
        "<html><body><ul><li><a href='/a'>A</a></li><li><a href='/b'>B</a></li></ul></body></html>"
    )
    assert menu.readability_check is False


def test_metadata_and_html_are_made_once_when_asked() -> None:
    """`extract` gives the text without reading the metadata or rendering the HTML; the first use of `title` or
    `metadata` reads it from the page's own Document (the same as `extract_metadata` gives), times
    it, and lets the Document go."""
    from pathlib import Path

    from readerproxy.engine.metadata.metadata import extract_metadata
    from readerproxy.engine.parse.document import parse

    html = (Path(__file__).parents[1] / "fixtures" / "pagination_rel_next.html").read_text()
    url = "https://news.example.com/features/river-changed-course"
    article = extract(html, url=url)
    assert article.decide_metadata is not None and "metadata" not in article.timings
    assert article.decide_html is not None and "html" not in article.timings  # nor its HTML
    assert "<p>" in article.html and article.decide_html is None and article.timings["html"] >= 0
    title = article.title
    assert article.decide_metadata is None and article.timings["metadata"] >= 0
    doc = parse(html, url)
    expected = extract_metadata(doc, article.text, selection=article.extraction.selection)
    assert article.metadata == expected and title == expected.title and title
    assert article.to_dict()["title"] == title
