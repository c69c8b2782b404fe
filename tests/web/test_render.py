"""The reader view's pure parts: preferences, link rewriting, pages rendered from a result."""

from __future__ import annotations

import random
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from selectolax.lexbor import LexborHTMLParser

from readerproxy.api import algorithms, extract, menu_algorithms
from readerproxy.web.templating import (
    COOKIE_MAX_AGE,
    INSTANT_KEYS,
    PREFERENCE_KEYS,
    Preferences,
    Renderer,
    _url_parameter,
    bookmarklet,
    display_date,
    display_title,
    guess_lang,
    kind_note,
    link_rewriter,
    load_static,
    preferences,
    reader_url,
    safe_base_url,
    wrap_tables,
)


@pytest.fixture(scope="module")
def renderer() -> Renderer:
    return Renderer()


def _article(html: str, url: str = "https://example.com/a/page.html", **extract_args: object) -> dict:
    data = extract(html, url=url, **extract_args).to_dict()  # type: ignore[arg-type]
    data["final_url"] = url
    return data


ARTICLE = """<html lang="en"><head><title>A Fine Article - Example Site</title>
<meta property="og:site_name" content="Example Site">
<meta name="author" content="Ada Lovelace">
<meta property="article:published_time" content="2024-03-12T08:00:00Z"></head>
<body><nav><a href="/">Home</a></nav><article><h1>A Fine Article</h1>
<p>First paragraph of the article with enough words to count as content for the extractor here.</p>
<p>Second paragraph, linking <a href="/b/other.html">another page</a> and <a href="#notes">the notes</a>.</p>
<p>Third paragraph of text that continues the article for a while longer, so it is kept.</p>
<p id="notes">Notes paragraph with more words, more words, and still more words to read.</p>
</article><footer>Footer</footer></body></html>"""


def test_preferences_default_cookie_and_query_precedence() -> None:
    prefs, changed = preferences({}, {})
    assert prefs == Preferences() and not changed
    prefs, changed = preferences({}, {"rp_theme": "sepia", "rp_size": "xl", "rp_lite": "1"})
    assert (prefs.theme, prefs.size, prefs.lite, changed) == ("sepia", "xl", True, False)
    prefs, changed = preferences({"theme": "dark", "links": "original"}, {"rp_theme": "sepia"})
    assert prefs.theme == "dark" and not prefs.reader_links and changed
    assert prefs.cookies()["rp_theme"] == "dark"


def test_preferences_ignore_unknown_values() -> None:
    prefs, changed = preferences({"theme": "neon", "size": "huge"}, {"rp_theme": "<script>"})
    assert prefs == Preferences() and not changed


def test_link_rewriter_routes_through_read_and_keeps_same_page_anchors() -> None:
    rewrite = link_rewriter("https://example.com/a/page.html", "density", lite=True)
    routed = rewrite("https://other.org/x?y=1&z=2")
    query = parse_qs(urlsplit(routed).query)
    assert routed.startswith("/read?")
    assert query == {"url": ["https://other.org/x?y=1&z=2"], "algo": ["density"], "lite": ["1"]}
    assert rewrite("https://example.com/a/page.html#notes") == "#notes"
    assert rewrite("https://EXAMPLE.com/a/page.html#top") == "#top"
    assert rewrite("https://example.com/a/other.html#top").startswith("/read?")
    assert parse_qs(urlsplit(link_rewriter(None)("https://x.org/")).query) == {"url": ["https://x.org/"]}


def test_reader_url_drops_empty_parameters() -> None:
    assert reader_url("https://e.com/?a=1", algo=None, lite="") == "/read?url=https%3A%2F%2Fe.com%2F%3Fa%3D1"


def _random_text(rng: random.Random, alphabet: str, longest: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(rng.randrange(longest)))


def test_reading_back_the_url_of_a_reader_link_agrees_with_parse_qs() -> None:
    """`_url_parameter` stands in for parse_qs (for speed): the same answer on queries made of
    what parse_qs splits on and decodes, and on every reader link `reader_url` makes."""
    rng = random.Random(3)
    alphabet = "aZ09_.-~ +%&=?#/:;,'\"<>\t\néß中😀\x7f\x00"
    for _ in range(2000):
        query = _random_text(rng, "url=&+%2075a", 30)
        assert _url_parameter(query) == parse_qs(query).get("url", [""])[0]
        url = _random_text(rng, alphabet, 40)
        link = urlsplit(reader_url(url, algo=_random_text(rng, alphabet, 5), lite="1")).query
        assert _url_parameter(link) == parse_qs(link).get("url", [""])[0]


def test_display_date() -> None:
    assert display_date("2024-03-12T08:00:00Z") == "12 March 2024"
    assert display_date("2013-09-29") == "29 September 2013"
    assert display_date("last Tuesday") == "last Tuesday"
    assert display_date(None) is None


def test_bookmarklet_and_base_url_refuse_odd_hosts() -> None:
    assert safe_base_url("http", "127.0.0.1:8080", "x") == "http://127.0.0.1:8080"
    assert safe_base_url("https", "[::1]:8443", "x") == "https://[::1]:8443"
    assert safe_base_url("http", 'evil"host/', "http://fallback:1") == "http://fallback:1"
    link = bookmarklet("http://127.0.0.1:8080")
    assert link.startswith("javascript:") and '"http://127.0.0.1:8080/read?url="' in link
    assert "encodeURIComponent(location.href)" in link


def test_reader_page_shows_metadata_content_and_badge(renderer: Renderer) -> None:
    data = _article(ARTICLE, algorithm="density")
    page = renderer.reader_page(data, Preferences(theme="sepia", size="l"))
    tree = LexborHTMLParser(page)
    root = tree.css_first("html")
    assert root is not None
    assert root.attributes["data-theme"] == "sepia" and root.attributes["data-size"] == "l"
    assert root.attributes["lang"] == "en" and root.attributes["dir"] == "ltr"
    assert data["title"] == "A Fine Article"  # the site's name cut from <title> (metadata.without_site_name)
    assert tree.css_first("article.reader h1").text() == "A Fine Article"  # the site's name is shown above it
    assert len(tree.css("h1")) == 1
    assert tree.css_first(".byline").text() == "Ada Lovelace"
    assert tree.css_first(".meta time").text() == "12 March 2024"
    assert tree.css_first(".site").text() == "Example Site"
    assert "min read" in tree.css_first(".reading-time").text()
    assert "Second paragraph" in tree.css_first(".content").text()
    # the badge names the algorithm asked for (not "auto via learned"); no score (its meaning differs per algorithm)
    assert tree.css_first(".badge").text() == "auto"  # the algorithm asked for, by its name alone
    asked = LexborHTMLParser(renderer.reader_page(data, Preferences(), "density"))
    assert asked.css_first(".badge").text() == "density"
    originals = [a.attributes["href"] for a in tree.css("a.original, a.original-top")]
    assert originals == ["https://example.com/a/page.html"] * 2
    stylesheet = tree.css_first('link[rel="stylesheet"]').attributes["href"]
    assert stylesheet.startswith("/static/reader.css?v=")
    scripts = [script.attributes.get("src") or "" for script in tree.css("script")]
    assert len(scripts) == 1 and scripts[0].startswith("/static/reader.js?v=")  # optional, deferred


def test_reader_page_links_go_through_reader_when_rewritten(renderer: Renderer) -> None:
    url = "https://example.com/a/page.html"
    from readerproxy.engine.pipeline import process

    article = process(ARTICLE, url=url, algorithm="density", rewrite_link=link_rewriter(url, "density"))
    data = article.to_dict() | {"final_url": url}
    tree = LexborHTMLParser(renderer.reader_page(data, Preferences()))
    hrefs = [a.attributes["href"] for a in tree.css(".content a")]
    assert "#notes" in hrefs
    routed = [h for h in hrefs if h and h.startswith("/read?")]
    assert routed and parse_qs(urlsplit(routed[0]).query)["url"] == ["https://example.com/b/other.html"]


def test_reader_links_carry_the_original_address(renderer: Renderer) -> None:
    """The reader page prints each rewritten link's original address (data-original), decoded from
    the /read link's url parameter, escaped as an attribute; links that stay put get none."""
    fragment = (
        '<p>See <a href="/read?url=https%3A%2F%2Fo.org%2Fx%3Fa%3D1%26b%3D%22q%22%23s&amp;algo=density">one</a>,'
        ' <a href="/read?algo=density&amp;url=http%3A%2F%2Fo.org%2F%C3%A9+t">two</a>,'
        ' <a href="/read?url=javascript%3Aalert(1)">three</a> and <a href="https://o.org/">four</a>.</p>'
    )
    data = {"url": "https://example.com/", "final_url": "https://example.com/", "html": fragment, "text": "x"}
    page = renderer.reader_page(data, Preferences())
    assert (
        '<a href="/read?url=https%3A%2F%2Fo.org%2Fx%3Fa%3D1%26b%3D%22q%22%23s&amp;algo=density"'
        ' data-original="https://o.org/x?a=1&amp;b=&quot;q&quot;#s">one</a>'
    ) in page
    assert (
        '<a href="/read?algo=density&amp;url=http%3A%2F%2Fo.org%2F%C3%A9+t" data-original="http://o.org/é t">two'
        in page
    )
    # a reader link to a javascript: URL is an action (engine/views/actions.py): plain text since 2026-12-07
    assert "<span>three</span>" in page and "javascript" not in page.split('class="content"')[1]
    assert '<a href="https://o.org/">four</a>' in page


def test_reader_page_preference_links_and_rtl(renderer: Renderer) -> None:
    rtl = ARTICLE.replace('<html lang="en">', '<html lang="ar" dir="rtl">')
    data = _article(rtl)
    tree = LexborHTMLParser(renderer.reader_page(data, Preferences(lite=True), algorithm="density"))
    root = tree.css_first("html")
    assert root is not None and root.attributes["dir"] == "rtl" and root.attributes["lang"] == "ar"
    assert tree.css_first("article.reader").attributes["dir"] == "rtl"
    themes = {
        a.text().replace("✓", "").strip(): parse_qs(urlsplit(a.attributes["href"] or "").query)
        for a in tree.css(".prefs-row a.chip")
    }
    assert themes["Dark"]["theme"] == ["dark"] and themes["Dark"]["algo"] == ["density"]
    assert themes["Dark"]["lite"] == ["1"]  # the current preferences are carried along
    assert themes["Show"]["lite"] == ["0"]  # the other choice turns lite off
    assert themes["Sans"]["font"] == ["sans"] and themes["Wide"]["width"] == ["wide"]
    assert "\u2190" in tree.css_first("a.original").text()  # the arrow points the reading way
    assert parse_qs(urlsplit(themes["Markdown"]["url"][0]).query) == {} and themes["Markdown"]["format"] == [
        "md"
    ]


def test_reader_page_marks_what_the_script_applies_at_once(renderer: Renderer) -> None:
    """Theme, size, font, width and spacing links carry data-pref/data-value for static/reader.js (it
    applies them in the page); lite and links change the markup, so theirs stay plain links. The
    controls that need the script (Listen, the player, the progress bar) start hidden."""
    tree = LexborHTMLParser(renderer.reader_page(_article(ARTICLE), Preferences(size="xl", theme="dark")))
    marked = {
        (a.attributes["data-pref"], a.attributes["data-value"]) for a in tree.css(".prefs a[data-pref]")
    }
    assert {key for key, _ in marked} == set(INSTANT_KEYS) == {"theme", "size", "font", "width", "spacing"}
    assert ("theme", "sepia") in marked and ("size", "l") in marked and ("size", "xl") not in marked
    for a in tree.css(".prefs a[data-pref]"):
        key, value = a.attributes["data-pref"], a.attributes["data-value"]
        assert parse_qs(urlsplit(a.attributes["href"] or "").query)[key or ""] == [value]
    reloading = tree.css('[aria-label="Images"] a, [aria-label="Links open"] a')
    assert len(reloading) == 4 and not [a for a in reloading if "data-pref" in a.attributes]

    def attributes(selector: str) -> dict[str, str | None]:
        node = tree.css_first(selector)
        assert node is not None, selector
        return node.attributes

    row = attributes(".size-row")
    assert row["data-sizes"] == "s m l xl" and (row["data-labels"] or "").endswith("|Extra large")
    assert attributes(".prefs-panel")["data-max-age"] == str(COOKIE_MAX_AGE)
    for selector in ("#rp-listen", "#rp-player", ".progress", ".keys-row"):
        assert "hidden" in attributes(selector), selector
    assert attributes("#rp-player")["dir"] == "ltr"  # media controls are not mirrored


def test_reader_page_of_an_empty_extraction(renderer: Renderer) -> None:
    data = _article("<html><head><title>Nothing</title></head><body></body></html>")
    tree = LexborHTMLParser(renderer.reader_page(data, Preferences()))
    assert tree.css_first(".empty") is not None
    assert tree.css_first(".content") is None


BYLINED = """<html lang="en"><head><title>Planting in autumn</title></head><body><article>
<h1>Planting in autumn</h1><p class="byline">Aug 15 Written By Tyler King</p>
<p>First paragraph of the article with enough words to count as content for the extractor here.</p>
<p>Second paragraph of text that continues the article for a while longer, so it is kept.</p>
<p>Third paragraph with more words, more words, and still more words to read in the end.</p>
</article></body></html>"""


def test_reader_page_names_the_author_not_the_raw_byline(renderer: Renderer) -> None:
    data = _article(BYLINED)
    assert data["byline"] == "Aug 15 Written By Tyler King" and data["author"] == "Tyler King"
    tree = LexborHTMLParser(renderer.reader_page(data, Preferences()))
    assert tree.css_first(".article-head .byline").text() == "Tyler King"
    assert "Written By" not in tree.css_first(".content").text()  # the header shows it, once
    # a byline that names nobody ("DECEMBER 27, 2024") is not shown as one
    tree = LexborHTMLParser(
        renderer.reader_page({**data, "byline": "DECEMBER 27, 2024", "author": None}, Preferences())
    )
    assert tree.css_first(".article-head .byline") is None
    # an article cached before `author` existed shows its byline
    old = {key: value for key, value in data.items() if key != "author"}
    tree = LexborHTMLParser(renderer.reader_page(old, Preferences()))
    assert tree.css_first(".article-head .byline").text() == "Aug 15 Written By Tyler King"


def test_reader_page_escapes_metadata(renderer: Renderer) -> None:
    data = _article(ARTICLE)
    data["title"] = "<script>alert(1)</script>"
    data["byline"] = data["author"] = '"><img src=x onerror=alert(1)>'
    page = renderer.reader_page(data, Preferences())
    assert "<script>" not in page and "<img src=x" not in page
    tree = LexborHTMLParser(page)
    scripts = [script.attributes.get("src") or "" for script in tree.css("script")]
    assert len(scripts) == 1 and scripts[0].startswith(
        "/static/reader.js?v="
    )  # only our own, optional script
    assert not tree.css(".meta img")


def test_index_page_lists_algorithms_and_bookmarklet(renderer: Renderer) -> None:
    tree = LexborHTMLParser(renderer.index_page(algorithms(), "http://127.0.0.1:9999", Preferences()))
    form = tree.css_first("form.open")
    assert form is not None and form.attributes["action"] == "/read"
    # the menu: every algorithm but `learned` (auto by another name), auto first
    options = [o.attributes["value"] for o in tree.css("select#algo option")]
    assert set(options) == set(menu_algorithms()) == set(algorithms()) - {"learned"} and options[0] == "auto"
    assert "http://127.0.0.1:9999/read?url=" in (tree.css_first("a.bookmarklet").attributes["href"] or "")


def test_error_page_links_to_original(renderer: Renderer) -> None:
    page = renderer.error_page(
        415, "This is not a web page", "It is a PDF.", Preferences(), original="https://example.com/file.pdf"
    )
    tree = LexborHTMLParser(page)
    assert tree.css_first("a.original").attributes["href"] == "https://example.com/file.pdf"
    assert "415" in tree.css_first(".status").text()


def test_static_assets_are_versioned_by_content(tmp_path: Path) -> None:
    (tmp_path / "a.css").write_text("body{}")
    (tmp_path / "b.css").write_text("body{color:red}")
    assets = load_static(tmp_path)
    assert assets["a.css"].content_type == "text/css; charset=utf-8"
    assert assets["a.css"].version != assets["b.css"].version
    assert assets["a.css"].url == f"/static/a.css?v={assets['a.css'].version}"


def test_preference_keys_and_new_preferences() -> None:
    assert PREFERENCE_KEYS == ("theme", "size", "lite", "links", "font", "width", "spacing")
    prefs, changed = preferences(
        {"font": "sans", "width": "wide"}, {"rp_spacing": "loose", "rp_width": "narrow"}
    )
    assert (prefs.font, prefs.width, prefs.spacing) == ("sans", "wide", "loose") and changed
    assert set(prefs.cookies()) == {"rp_" + key for key in PREFERENCE_KEYS}
    assert preferences({"font": "comic"}, {})[0].font == "serif"


def test_display_title_strips_the_site_name() -> None:
    assert display_title("Story – Site Name", "Site Name") == "Story"
    assert display_title("Site Name | Story", "Site Name") == "Story"
    assert display_title("Story", "Story") == "Story"
    assert display_title("A - B", None) == "A - B"


def test_display_title_without_a_site_name_looks_for_the_host() -> None:
    lwn = "LWN.net Weekly Edition for March 26, 2015 [LWN.net]"
    assert display_title(lwn, None, "https://lwn.net/Articles/637755/") == (
        "LWN.net Weekly Edition for March 26, 2015"
    )
    assert display_title("Why CPU monitoring matters | Example", None, "https://www.example.com/a") == (
        "Why CPU monitoring matters"
    )
    assert display_title("BBC - Home truths", None, "https://www.bbc.co.uk/news/1") == "Home truths"
    assert display_title("Arduino vs Arduino - Ars Technica", None, "https://arstechnica.com/x") == (
        "Arduino vs Arduino"
    )
    assert display_title("Well-known facts - a review", None, "https://example.com/") == (
        "Well-known facts - a review"
    )  # no part names the host
    assert display_title("Example", None, "https://example.com/") == "Example"
    assert display_title("Story [LWN.net]", None, "http://127.0.0.1:8080/rd/lwn-1") == "Story [LWN.net]"


def test_guess_lang_by_script() -> None:
    assert guess_lang("中文" * 40) == "zh"
    assert guess_lang("日本語のテキストです。" * 10) == "ja"
    assert guess_lang("plain English text") is None


def test_wrap_tables_keeps_the_caption_outside_the_scroll_box() -> None:
    wrapped = wrap_tables(
        "<p>x</p><table><caption>Cap</caption><tr><td><table><tr><td>in</td></tr></table></td></tr>"
        "</table><p>y</p>"
    )
    assert wrapped.startswith(
        '<p>x</p><figure class="table"><figcaption>Cap</figcaption><div class="table-scroll"'
    )
    assert wrapped.endswith("</table></td></tr></table></div></figure><p>y</p>")
    assert wrap_tables("<table><tr>") == "<table><tr>"


@pytest.mark.parametrize(
    "original", ["javascript:alert(1)", "notaurl", "data:text/html,x", "//evil.org/x", None]
)
def test_error_page_never_links_a_non_http_original(renderer: Renderer, original: str | None) -> None:
    page = renderer.error_page(400, "Not a web address", "Check the address.", Preferences(), original)
    tree = LexborHTMLParser(page)
    assert tree.css_first("a.original") is None
    assert original is None or f'href="{original}"' not in page


def test_error_page_links_an_http_original(renderer: Renderer) -> None:
    page = renderer.error_page(
        415, "This is not a web page", "It is a PDF.", Preferences(), "https://e.org/a.pdf"
    )
    assert LexborHTMLParser(page).css_first("a.original").attributes["href"] == "https://e.org/a.pdf"


def test_reader_page_marks_the_current_choices_for_screen_readers(renderer: Renderer) -> None:
    page = renderer.reader_page(_article(ARTICLE), Preferences(theme="dark", size="xl"))
    tree = LexborHTMLParser(page)
    current = [a.text(deep=True).replace("✓", "").strip() for a in tree.css('.prefs a[aria-current="true"]')]
    assert current == ["Dark", "Serif", "Medium", "Normal", "Show", "In reader"]
    assert tree.css_first(".size-now").text() == "Extra large"
    assert tree.css_first('.size-row span.chip[aria-disabled="true"]').text() == "A+"
    assert tree.css_first("form.algo-switch select option[selected]").attributes["value"] == "auto"


def test_links_to_files_that_are_not_pages_go_straight_to_the_original() -> None:
    rewrite = link_rewriter("https://example.com/story")
    assert rewrite("https://example.com/report.PDF") == "https://example.com/report.PDF"
    assert rewrite("https://example.com/data.csv?x=1") == "https://example.com/data.csv?x=1"
    assert rewrite("https://example.com/next-story").startswith("/read?url=")
    assert rewrite("https://example.com/pdf-guide/").startswith("/read?url=")


def test_the_reader_view_links_to_the_next_page_through_the_reader(renderer: Renderer) -> None:
    article = {
        "url": "https://example.com/story",
        "final_url": "https://example.com/story",
        "title": "Story",
        "html": "<p>Text</p>",
        "text": "Text",
        "next_page_url": "https://example.com/story?page=2",
    }
    tree = LexborHTMLParser(renderer.reader_page(article, Preferences()))
    link = tree.css_first(".next-page a")
    assert link is not None and link.attributes["rel"] == "next"
    assert link.attributes["href"] == "/read?url=https%3A%2F%2Fexample.com%2Fstory%3Fpage%3D2"
    for bad in ("javascript:alert(1)", None, "/relative"):
        page = LexborHTMLParser(renderer.reader_page({**article, "next_page_url": bad}, Preferences()))
        assert page.css_first(".next-page") is None


def test_a_page_that_is_no_article_says_so_at_the_top(renderer: Renderer) -> None:
    """The page-kind decision reaches the reader view: a product page is shown with a note naming
    its kind and the original one tap away; an article gets no note."""
    assert kind_note({"readerable": False, "page_kind": "product"}) == "a product page"
    assert kind_note({"readerable": True, "page_kind": "article"}) is None
    assert (
        kind_note({"readerable": False, "page_kind": ""}) is None
    )  # Readability's check alone: no kind to name
    product = {
        "title": "Moon Silver",
        "html": "<p>$168.00</p>",
        "text": "$168.00",
        "readerable": False,
        "page_kind": "product",
        "page_kind_confidence": 0.99,
        "url": "https://shop.example/p/1",
    }
    page = renderer.reader_page(product, Preferences())
    tree = LexborHTMLParser(page)
    note = tree.css_first("p.kind-note")
    assert note is not None and "product page" in note.text()
    assert note.css_first("a").attributes["href"] == "https://shop.example/p/1"
    article = {**product, "readerable": True, "page_kind": "article"}
    assert LexborHTMLParser(renderer.reader_page(article, Preferences())).css_first("p.kind-note") is None
