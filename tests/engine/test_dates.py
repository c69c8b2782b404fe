"""The publication day from every place a page states it (`readerproxy.engine.metadata.dates`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from readerproxy.engine.metadata.dates import parse_day, publication_day
from readerproxy.engine.parse.document import Document, parse

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


# --- 2026-11-26: the date the headline shows, one parse of the JSON-LD, cheaper reading ------------

REFRESHED = (
    '<script type="application/ld+json">{"@context":"https://schema.org","@type":"Article",'
    '"headline":"Fall trends","datePublished":"2025-06-12T09:00:00+00:00"}</script>'
)


@pytest.mark.parametrize(
    ("body", "day"),
    [
        # the refresh is declared as the publication; the headline still shows the first date
        ("<h1>Fall trends</h1><p>November 2, 2022</p>", "2022-11-02"),
        ("<p>Published Apr 26, 2023</p><h1>Fall trends</h1>", "2023-04-26"),
        # a later date by the headline is an update: the declared publication stays
        ("<h1>Fall trends</h1><p>Updated on August 5, 2025</p>", "2025-06-12"),
        # one day earlier is a time zone's shift, not a refresh
        ("<h1>Fall trends</h1><p>June 11, 2025</p>", "2025-06-12"),
        # a day the story mentions in a sentence is no dated line
        (
            "<h1>Fall trends</h1><p>Emirates first ordered the jets on 13 November 2017, and the "
            "airline has since changed the order twice as its plans for the fleet moved.</p>",
            "2025-06-12",
        ),
    ],
)
def test_an_earlier_date_shown_by_the_headline_wins_over_a_refresh(body: str, day: str) -> None:
    html, url = _page(REFRESHED, body)
    assert publication_day(parse(html, url)) == day


def test_json_ld_is_parsed_once_and_read_through_a_cdata_wrapper() -> None:
    from readerproxy.engine.schema import page_objects, parsed_json_ld

    html, url = _page(
        '<script type="application/ld+json">  <![CDATA[ {"@context":"https://schema.org",'
        '"@graph":[{"@type":"BlogPosting","datePublished":"2021-03-04"}]} ]]>  </script>'
        '<script type="application/ld+json">{not json</script>'
    )
    doc = parse(html, url)
    assert parsed_json_ld(doc) is parsed_json_ld(doc)  # one parse for every reader
    assert [item.get("@type") for item in page_objects(doc)] == [None, "BlogPosting"]
    assert publication_day(doc) == "2021-03-04"


def _headline_texts_token_by_token(doc: Document, after: bool, window: int) -> list[str]:
    """The reference: `headline_texts` as it read the tokens one by one before 2026-11-26."""
    from readerproxy.engine.parse.document import TEXT

    heading = doc.tag.index("h1")
    tokens = doc.tokens
    start = int(doc.start[heading])
    indices = (
        range(start, min(start + 400, len(tokens.kind)))
        if after
        else range(start - 1, max(start - 200, 0), -1)
    )
    seen = 0
    parts: list[str] = []
    for index in indices:
        if tokens.kind[index] == TEXT:
            parts.append(tokens.text[index])
            seen += len(tokens.text[index])
            if seen > window:
                break
    return parts if after else parts[::-1]


def test_headline_texts_match_the_token_by_token_reading(shared_datasets: Path) -> None:
    """On real pages (every fifth ScrapingHub page with an <h1>), both directions and windows."""
    from readerproxy.engine.metadata.dates import headline_texts
    from readerproxy.research.datasets import load_dataset

    checked = 0
    for number, page in enumerate(load_dataset("scrapinghub")):
        if number % 5:
            continue
        doc = parse(page.read_html(), page.url)
        if "h1" not in doc.tag:
            assert headline_texts(doc) is None
            continue
        for after, window in ((True, 600), (True, 1200), (False, 200), (False, 300)):
            assert headline_texts(doc, after, window) == _headline_texts_token_by_token(doc, after, window)
        checked += 1
    assert checked > 20


def test_texts_without_a_year_hold_no_date() -> None:
    assert parse_day("Posted on the 3rd of the month, 12:30") is None
    assert parse_day("Posted on 3 May 2024, 12:30") == "2024-05-03"


# --- 2026-12-01: the address's own day, dated lines away from the headline ------------------------


def _day_of(body: str) -> str | None:
    """The publication day of a page with `body` at the default address."""
    html, url = _page(body=body)
    return publication_day(parse(html, url))


@pytest.mark.parametrize(
    ("url", "day"),
    [
        ("https://blog.example.fr/articles/2025-12-15+Rust+GCC+backend", "2025-12-15"),  # a `+` ends it
        ("https://example.org/blog/2023/october/03/wine-styles/", "2023-10-03"),  # a month's name
        ("https://example.org/2024/03/05?ref=feed", "2024-03-05"),
        ("https://example.org/2024/03/", "2024-03-01"),  # a month: its first day, last of all
        ("https://example.org/2024/best-tips", None),
        ("https://example.org/archive/2024/1234", None),
    ],
)
def test_the_address_date(url: str, day: str | None) -> None:
    html, _ = _page()
    assert publication_day(parse(html, url)) == day


def test_a_full_date_in_the_address_beats_a_side_box_date() -> None:
    html, _ = _page(body='<div class="post-date">February 16, 2026</div>')
    url = "https://example.org/blog/2023/october/03/how-many-wine-styles/"
    assert publication_day(parse(html, url)) == "2023-10-03"


def test_a_utc_publication_is_the_day_the_address_gives() -> None:
    """Declared "2025-12-19T02:41Z", the address and the page say December 18 (the site's evening)."""
    html, _ = _page('<meta property="article:published_time" content="2025-12-19T02:41:41+00:00">')
    assert publication_day(parse(html, "https://example.org/2025/12/18/a-post/")) == "2025-12-18"
    # two days apart is not a time zone: the declaration stands
    assert publication_day(parse(html, "https://example.org/2025/12/17/a-post/")) == "2025-12-19"


@pytest.mark.parametrize(
    ("body", "day"),
    [
        # a lone dated line far from any headline, with a label, a time of day, in another language
        ('<div class="x"><span class="text-green">Nov 21, 2018</span></div>', "2018-11-21"),
        ('<p style="text-align:right">Last updated: November 13, 2025</p>', "2025-11-13"),
        ("<div>20 Dec 2025, 11:59</div>", "2025-12-20"),
        ("<p>Veröffentlicht am 4. März 2025</p>", "2025-03-04"),
        # the same day twice is still one day
        ("<p>Dec 20, 2025</p><p>Dec 20, 2025</p>", "2025-12-20"),
        # several days: a list of dated things (reviews, posts), not the page's date
        ("<p>Nov 29, 2025</p><p>Oct 3, 2025</p>", None),
        # inside a list item, a link or the footer: someone else's date
        ("<ul><li>Nov 29, 2025</li></ul>", None),
        ('<a href="/older">Nov 29, 2025</a>', None),
        ("<footer><p>Nov 29, 2025</p></footer>", None),
        # a sentence that mentions a day is not a dated line
        ("<p>The council met on November 29, 2025 to vote on the new budget for the city</p>", None),
    ],
)
def test_a_dated_line_in_the_body(body: str, day: str | None) -> None:
    assert _day_of(body) == day


def test_an_update_line_is_the_last_resort() -> None:
    assert _day_of('<div class="entry_update">20 Dec 2025, 11:59 and more words here</div>') == "2025-12-20"


def test_the_headline_s_dated_line_beats_a_date_classed_box() -> None:
    """A related box's classed dates come before the story's own line under its headline."""
    body = (
        '<div class="related"><span class="post-date">Dec 2, 2025</span></div>'
        "<h1>The headline</h1><p>Last updated: Dec 12, 2025</p>"
    )
    assert _day_of(body) == "2025-12-12"


def test_the_time_by_the_headline_beats_a_sidebar_s_earlier_times() -> None:
    """Every <time> classed `datetime` (a publication hint): the one by the headline is the story's."""
    sidebar = "".join(
        f'<li><time class="datetime" datetime="2025-01-{day:02d}T12:00:00Z">01/{day:02d}/2025</time></li>'
        for day in (31, 6, 2)
    )
    body = (
        f"<aside><ul>{sidebar}</ul></aside><h1>The headline</h1>"
        '<div class="node__meta"><time class="datetime" datetime="2017-03-01T12:00:00Z">03/01/2017</time></div>'
    )
    assert _day_of(body) == "2017-03-01"


def test_a_byline_s_date_under_a_dated_title_and_no_infobox_row() -> None:
    """The byline's classed date wins over the title's own date; an infobox cell is no dated line."""
    body = (
        "<h1>Weekly Edition for March 26, 2015</h1><h2>A trademark battle</h2>"
        '<div class="FeatureByline">By Nathan Willis <br>March 25, 2015</div>'
    )
    assert _day_of(body) == "2015-03-25"
    infobox = (
        '<h1>Mozilla</h1><table class="infobox"><tr><th>Initial release</th><td>February 28, 1998</td></tr>'
        '</table><div id="lastmod" class="footer-date">This page was edited on 1 May 2016</div>'
    )
    assert _day_of(infobox) == "2016-05-01"


def test_web_components_that_render_a_time_count_as_time_elements() -> None:
    # Reddit's post page without comments: the post's time is a timestamp attribute only
    reddit = '<p>The post.</p><faceplate-timeago ts="2026-03-03T09:47:05.754000+0000" format="narrow">9d ago</faceplate-timeago>'
    assert _day_of(reddit) == "2026-03-03"
    github = '<p>The issue.</p><relative-time datetime="2024-05-06T10:00:00Z">May 6, 2024</relative-time>'
    assert _day_of(github) == "2024-05-06"
    # A timestamp attribute on another element is not read
    assert _day_of('<p>The post.</p><span ts="2026-03-03T09:47:05Z">9d ago</span>') is None


def test_a_threads_first_post_shown_a_day_from_the_declared_moment_gives_the_day() -> None:
    # flyertalk: JSON-LD declares the thread in UTC, the first post shows the site's evening
    ld = '{"@type": "DiscussionForumPosting", "datePublished": "2026-02-15 03:05:48"}'
    html = f'<html><head><script type="application/ld+json">{ld}</script></head><body><p>Trip report.</p></body></html>'
    doc = parse(html, "https://forum.example/t/1")
    assert publication_day(doc, lambda: "Feb 14, 2026 | 9:05 pm #1") == "2026-02-14"
    # the same day, or days apart (a later post, a moved thread): the declaration holds
    assert publication_day(parse(html, "https://forum.example/t/1"), lambda: "Feb 15, 2026") == "2026-02-15"
    assert publication_day(parse(html, "https://forum.example/t/1"), lambda: "Feb 10, 2026") == "2026-02-15"
    # no first post: the declaration
    assert publication_day(parse(html, "https://forum.example/t/1"), lambda: None) == "2026-02-15"


def test_disagreeing_declarations_are_settled_by_the_one_the_page_shows() -> None:
    ld = '{"@type": "Article", "datePublished": "2024-08-29T10:00:00+00:00"}'
    head = f'<script type="application/ld+json">{ld}</script><meta name="date" content="November 25, 2025">'

    def day(body: str) -> str | None:
        return publication_day(
            parse(f"<html><head>{head}</head><body>{body}</body></html>", "https://example.org/a")
        )

    # pcworld.com: the JSON-LD a year before the <meta name=date>, the byline showing the latter
    assert (
        day('<h1>The best TV</h1><p class="posted-on">Nov 25, 2025 5:00 am PST</p><p>Text.</p>')
        == "2025-11-25"
    )
    # neither shown, or the first shown: the first declaration, as before
    assert day("<h1>The best TV</h1><p>Text.</p>") == "2024-08-29"
    assert (
        day("<h1>The best TV</h1><p>Published August 29, 2024. Seen November 25, 2025.</p>") == "2024-08-29"
    )
