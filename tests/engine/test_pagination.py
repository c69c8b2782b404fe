"""next_page_url on fixtures made after real paginated-article patterns (tests/fixtures/pagination_*)."""

from __future__ import annotations

from pathlib import Path

import pytest

from readerproxy.engine.metadata.metadata import extract_metadata
from readerproxy.engine.metadata.pagination import MAX_LINK_CHARS, next_page_url, page_marker
from readerproxy.engine.parse.document import Document, parse

FIXTURES = Path(__file__).parents[1] / "fixtures"


def _doc(name: str, url: str | None) -> Document:
    return parse((FIXTURES / name).read_text(encoding="utf-8"), url=url)


@pytest.mark.parametrize(
    ("name", "url", "expected"),
    [
        # <link rel=next> of a news feature split with ?page=N; "Next article" and comment pages ignored
        (
            "pagination_rel_next.html",
            "https://news.example.com/features/river-changed-course",
            "https://news.example.com/features/river-changed-course?page=2",
        ),
        # WordPress <!--nextpage-->: .page-links with /2/ /3/; "Next post ›" and comment-page-2 ignored
        (
            "pagination_numbered.html",
            "https://blog.example.org/2019/05/ten-years-of-small-gardens/",
            "https://blog.example.org/2019/05/ten-years-of-small-gardens/2/",
        ),
        # page 2 of a forum-style review (?id=881&pg=2): the next is pg=3, not another review's pg=2
        (
            "pagination_query_middle.html",
            "https://reviews.example.net/reviews/view.php?id=881&pg=2",
            "https://reviews.example.net/reviews/view.php?id=881&pg=3",
        ),
        # -2.html continuation behind a bare "»"; "Chips, part 2" of another article ignored
        (
            "pagination_html_suffix.html",
            "https://tech.example.com/tech/inside-the-chip-factory.html",
            "https://tech.example.com/tech/inside-the-chip-factory-2.html",
        ),
        # a one-page post: next post, comment pages and the blog's own page 2 are not its next page
        ("pagination_none.html", "https://blog.example.org/blog/one-page-story/", None),
    ],
)
def test_next_page(name: str, url: str, expected: str | None) -> None:
    doc = _doc(name, url)
    assert next_page_url(doc) == expected
    assert extract_metadata(doc).next_page_url == expected


def test_without_a_url_only_rel_next_counts() -> None:
    assert next_page_url(_doc("pagination_rel_next.html", None)) == (
        "https://news.example.com/features/river-changed-course?page=2"
    )
    assert next_page_url(_doc("pagination_none.html", None)) is None


def test_page_markers() -> None:
    assert page_marker("https://e.example/a/story/2/") == ("https://e.example/a/story", 2)
    assert page_marker("https://e.example/a/story?page=3&x=1") == ("https://e.example/a/story?x=1", 3)
    assert page_marker("https://e.example/a/story-4.html") == ("https://e.example/a/story.html", 4)
    assert page_marker("https://e.example/blog/page/2/") == ("https://e.example/blog", 2)
    assert page_marker("https://e.example/news/12345") == ("https://e.example/news/12345", 1)


def test_superscript_digits_are_not_page_numbers() -> None:
    """ "²".isdigit() is true but int() cannot read it: a footnote link or ?page=² is no next page
    (and must not raise)."""
    story = "<p>" + "Words of the story. " * 30 + '<a href="#fn2">²</a> <a href="?page=²">more</a></p>'
    doc = parse(f"<html><body><article>{story}</article></body></html>", "https://e.example/story")
    assert next_page_url(doc) is None
    assert page_marker("https://e.example/story?page=²") == ("https://e.example/story?page=%C2%B2", 1)
    assert page_marker("https://e.example/story?page=٣") == ("https://e.example/story", 3)  # Arabic-Indic 3


def test_an_svg_link_with_only_xlink_href_is_passed_over() -> None:
    """Lexbor's `a[href]` also matches <a xlink:href> in SVG, which has no plain href."""
    story = "<p>" + "Words of the story. " * 30 + "</p>"
    svg = '<svg><a xlink:href="/story?page=2"><text>2</text></a></svg>'
    doc = parse(f"<html><body><article>{story}{svg}</article></body></html>", "https://e.example/story")
    assert next_page_url(doc) is None


def test_rel_next_is_a_word_of_rel_in_any_case() -> None:
    """Lexbor preselects rel*="next" (any case); the word test decides: "nextpage" is not "next"."""
    base = "https://example.com/story"
    page = (
        '<html><head><link rel="stylesheet" href="/s.css"><link rel="nextpage" href="/story?page=9">'
        '</head><body><p>{}</p><a rel="nofollow NEXT" href="/story?page=2">more</a></body></html>'
    ).format("Text of the story. " * 20)
    assert next_page_url(parse(page, url=base)) == "https://example.com/story?page=2"
    only_lookalike = page.replace('<a rel="nofollow NEXT" href="/story?page=2">more</a>', "")
    assert next_page_url(parse(only_lookalike, url=base)) is None


def test_a_link_with_a_long_text_is_not_a_pagination_link() -> None:
    """A headline-length text (over `MAX_LINK_CHARS` characters) is not "next page", even when it says
    next and leads to this article's page 2; a short one is."""
    url = "https://news.example.com/features/long-read"
    long_text = "Next: the second half of this very long feature, with all the charts"
    assert len(long_text.replace(" ", "")) > MAX_LINK_CHARS
    page = '<html><body><article><p>Text.</p><a href="{href}">{text}</a></article></body></html>'
    href = url + "?page=2"
    assert next_page_url(parse(page.format(href=href, text=long_text), url=url)) is None
    assert next_page_url(parse(page.format(href=href, text="Next page ›"), url=url)) == href
