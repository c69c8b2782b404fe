"""The publication day from every place a page states it (`readerproxy.engine.dates`)."""

from __future__ import annotations

import pytest

from readerproxy.engine.dates import parse_day, publication_day
from readerproxy.engine.document import parse

BODY = "<p>" + "Words of the article that make it long enough to read. " * 10 + "</p>"


@pytest.mark.parametrize(
    ("text", "day"),
    [
        ("2025-09-04T10:00:00+02:00", "2025-09-04"),
        ("Published June 29, 2020", "2020-06-29"),
        ("Aug. 04, 2025", "2025-08-04"),
        ("29 June 2020", "2020-06-29"),
        ("20 December, 2025", "2025-12-20"),
        ("Nov 21st, 2018", "2018-11-21"),
        ("29.06.2020", "2020-06-29"),
        ("2024/03/05", "2024-03-05"),
        ("03/05/2024", None),  # day-first or month-first: never guessed
        ("11-29-2024, 09:03 AM", "2024-11-29"),  # 29 can only be the day (vBulletin)
        ("29/11/2024", "2024-11-29"),
        ("Sun Dec 17, 2023 11:23 am", "2023-12-17"),
        ("30th March 2025, 16:26", "2025-03-30"),
        ("4. März 2025", "2025-03-04"),
        ("12 décembre 2025", "2025-12-12"),
        ("5 de mayo de 2024", "2024-05-05"),
        ("7 ottobre 2023", "2023-10-07"),
        ("1er janvier 2024", "2024-01-01"),
        ("2025-02-30", None),  # no such day
        ("June 29, 1850", None),  # before the web
        ("no date here", None),
        (None, None),
    ],
)
def test_parse_day(text: str | None, day: str | None) -> None:
    assert parse_day(text) == day


def _page(head: str = "", body: str = "", url: str = "https://example.org/story") -> str:
    return f"<html><head><title>T</title>{head}</head><body>{body}{BODY}</body></html>", url


@pytest.mark.parametrize(
    ("head", "body", "url", "day"),
    [
        # JSON-LD datePublished, in a @graph and on a WebPage too
        (
            '<script type="application/ld+json">{"@context":"https://schema.org","@graph":'
            '[{"@type":"WebPage","datePublished":"2024-02-01T15:46:14+00:00"}]}</script>',
            "",
            None,
            "2024-02-01",
        ),
        (
            '<meta property="article:published_time" content="2023-05-17T00:00:00+0000">',
            "",
            None,
            "2023-05-17",
        ),
        (
            '<meta name="cludo:date" content="x"><meta name="date" content="2021-04-21">',
            "",
            None,
            "2021-04-21",
        ),
        (
            "",
            '<time class="entry-date published" datetime="2020-06-29T15:00:23-05:00">June 29</time>',
            None,
            "2020-06-29",
        ),
        # the update is skipped when a plain <time> stands beside it
        (
            "",
            '<time class="updated" datetime="2021-11-12">x</time><time datetime="2020-01-02">y</time>',
            None,
            "2020-01-02",
        ),
        ("", '<div class="post-hero__date">December 17, 2025</div>', None, "2025-12-17"),
        ("", "<h1>The headline</h1><p>By Ana Writer · March 3, 2026</p>", None, "2026-03-03"),
        ("", "", "https://example.org/2025/09/04/a-story/", "2025-09-04"),
        # a site's own <meta> key for the publication ("published", "w-published-date")
        ('<meta name="published" content="July 17, 2025">', "", None, "2025-07-17"),
        ('<meta name="w-published-date" content="2025-05-27T06:03:43.274Z">', "", None, "2025-05-27"),
        # a dated line set just above the headline
        ("", "<p>Published Oct 14, 2025</p><h1>The headline</h1>", None, "2025-10-14"),
        (
            '<meta property="article:modified_time" content="2025-04-19T23:02:46+00:00">',
            "",
            None,
            "2025-04-19",
        ),
        ("", "", None, None),
    ],
)
def test_publication_day(head: str, body: str, url: str | None, day: str | None) -> None:
    html, default = _page(head, body)
    assert publication_day(parse(html, url or default)) == day


def test_published_beats_modified_and_the_url() -> None:
    html, _ = _page(
        '<meta property="article:modified_time" content="2025-04-19">'
        '<meta property="article:published_time" content="2024-02-01">'
    )
    assert publication_day(parse(html, "https://example.org/2019/01/01/x")) == "2024-02-01"
