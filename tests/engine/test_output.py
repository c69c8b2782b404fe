"""From token selections back to sanitised HTML, plain text and markdown."""

from __future__ import annotations

import re

import numpy as np

from readerproxy.engine.output import (
    drop_dead_jump_links,
    drop_empty_items,
    html_to_markdown,
    render_html,
    render_text,
    sanitize,
)
from readerproxy.engine.parse.document import TEXT, parse

PAGE = """<html><body>
<nav><a href="/home">Home</a></nav>
<div id="main" onclick="evil()">
<h2 style="color:red">Sub heading</h2>
<p>Para with <a href="/rel/link" onmouseover="x()">a link</a> and <a href="javascript:alert(1)">bad link</a>.</p>
<figure><img src="data:image/gif;base64,R0lGOD" data-src="/img/lazy.jpg" alt="Lazy"><figcaption>Caption</figcaption></figure>
<img src="/img/a.png" srcset="/img/a-2x.png 2x, /img/a-3x.png 3x" alt="A">
<ul><li>one</li><li>two</li></ul>
<pre>line 1
  line 2</pre>
<form><input name="q"><button>Go</button></form>
<iframe src="https://ads.example/"></iframe>
<table><tr><td>c1</td><td>c2</td></tr></table>
<p>Line one<br>line two</p>
</div>
</body></html>"""


def main_selection(doc):
    return doc.mask_elements([doc.tag.index("div")])


def test_render_html_keeps_structure_and_resolves_urls() -> None:
    doc = parse(PAGE, url="https://example.org/a/page")
    fragment = render_html(doc, main_selection(doc))
    assert "<h2>Sub heading</h2>" in fragment
    assert '<a href="https://example.org/rel/link" rel="noopener noreferrer">a link</a>' in fragment
    assert 'src="https://example.org/img/lazy.jpg"' in fragment  # lazy image resolved
    assert "https://example.org/img/a-2x.png 2x" in fragment
    assert "<figcaption>Caption</figcaption>" in fragment
    assert "<li>one</li>" in fragment and "<pre>line 1\n  line 2</pre>" in fragment
    assert "<div>c1</div><div>c2</div>" in fragment  # a one-row table is layout: flattened to flow
    assert "Home" not in fragment  # not selected


def test_render_html_is_sanitised() -> None:
    doc = parse(PAGE, url="https://example.org/")
    fragment = render_html(doc, main_selection(doc))
    lowered = fragment.lower()
    for bad in (
        "onclick",
        "onmouseover",
        "javascript:",
        "<form",
        "<input",
        "<button",
        "<iframe",
        "style=",
        "<script",
    ):
        assert bad not in lowered
    assert "bad link" in fragment  # the text stays, the URL goes


def test_link_rewriting_and_lite_mode() -> None:
    doc = parse(PAGE, url="https://example.org/")
    fragment = render_html(doc, main_selection(doc), rewrite_link=lambda u: "/read?url=" + u, images=False)
    assert 'href="/read?url=https://example.org/rel/link"' in fragment
    assert "<img" not in fragment


def test_partial_selection_is_well_formed() -> None:
    doc = parse(PAGE, url="https://example.org/")
    selection = doc.mask_elements([doc.tag.index("li")])
    fragment = render_html(doc, selection)
    assert fragment == '<div id="main"><ul><li>one</li></ul></div>'  # ids stay: in-page links need them


def test_render_text_paragraphs() -> None:
    doc = parse(PAGE)
    text = render_text(doc, main_selection(doc))
    blocks = text.split("\n\n")
    assert blocks[0] == "Sub heading"
    assert blocks[1] == "Para with a link and bad link."
    assert "one" in blocks and "two" in blocks
    assert "line 1\n  line 2" in blocks  # preformatted text keeps its whitespace
    assert "Line one\nline two" in blocks
    assert "c1 c2" in text


def test_empty_selection() -> None:
    doc = parse(PAGE)
    empty = doc.tokens.kind < 0
    assert render_html(doc, empty) == "" and render_text(doc, empty) == ""


def test_markdown() -> None:
    md = html_to_markdown(
        '<h2>Title</h2><p>Some <strong>bold</strong> and <a href="https://x.org/">link</a>.</p>'
        "<ul><li>a</li><li>b</li></ul><ol><li>first</li></ol><blockquote><p>quote</p></blockquote>"
        '<pre>code\n  block</pre><img src="https://x.org/i.png" alt="pic">'
    )
    assert "## Title" in md
    assert "Some **bold** and [link](https://x.org/)." in md
    assert "- a\n- b" in md and "1. first" in md
    assert "> quote" in md
    assert "```\ncode\n  block\n```" in md
    assert "![pic](https://x.org/i.png)" in md


def test_sanitize_is_an_allowlist() -> None:
    dirty = (
        '<p onclick="x">ok</p><script>alert(1)</script><object data="x"></object><a href="vbscript:x">v</a>'
    )
    clean = sanitize(dirty)
    assert clean.startswith("<p>ok</p>")
    assert "script" not in clean and "object" not in clean and "vbscript" not in clean


def test_media_inside_the_selected_range_are_kept() -> None:
    page = """<body><div>
    <p>First paragraph of the story.</p>
    <div class="photo"><a href="/big.jpg"><img src="/photo.jpg" alt="Photo"></a></div>
    <figure><img src="/chart.png"><figcaption>A chart</figcaption></figure>
    <img src="/pixel.gif" width="1" height="1">
    <p>Second paragraph of the story.</p>
    </div><img src="/after.png"></body>"""
    doc = parse(page, url="https://example.org/")
    paragraphs = [i for i, name in enumerate(doc.tag) if name == "p"]
    fragment = render_html(doc, doc.mask_elements(paragraphs))
    assert '<img alt="Photo" src="https://example.org/photo.jpg">' in fragment
    assert "<figure><img" in fragment and "<figcaption>A chart</figcaption></figure>" in fragment
    assert "pixel.gif" not in fragment  # tracking pixels are not pictures
    assert "after.png" not in fragment  # outside the selected range
    assert "<img" not in render_html(doc, doc.mask_elements(paragraphs), images=False)


# Reader view fixes: srcset, lazy images, layout tables, lite captions, jump links, header repeats.


from readerproxy.engine.output import fit_under_header, parse_srcset  # noqa: E402


def test_srcset_is_split_as_the_html_standard_says() -> None:
    kinja = (
        "https://i.kinja-img.com/upload/c_fill,f_auto,w_320/a.jpg 320w, "
        "https://i.kinja-img.com/upload/c_fill,f_auto,w_800/a.jpg 800w"
    )
    assert parse_srcset(kinja) == [
        ("https://i.kinja-img.com/upload/c_fill,f_auto,w_320/a.jpg", "320w"),
        ("https://i.kinja-img.com/upload/c_fill,f_auto,w_800/a.jpg", "800w"),
    ]
    assert parse_srcset("a.png, b.png 2x , c.png") == [("a.png", ""), ("b.png", "2x"), ("c.png", "")]
    assert parse_srcset("a.png,b.png 2x") == [("a.png,b.png", "2x")]  # a comma inside a URL is part of it
    assert parse_srcset("a.png 1x,b.png 2x") == [("a.png", "1x"), ("b.png", "2x")]
    assert parse_srcset("  ") == []


def _render(body: str, url: str = "https://example.org/story", images: bool = True) -> str:
    doc = parse(f"<html><body><article>{body}</article></body></html>", url=url)
    return render_html(doc, doc.mask_elements([doc.tag.index("article")]), images=images)


def test_lazy_image_from_data_srcset_gets_a_real_src() -> None:
    fragment = _render(
        '<p>Text before the picture.</p><img src="data:image/gif;base64,R0lGOD" '
        'data-srcset="/up/c_fill,w_320/a.jpg 320w, /up/c_fill,w_800/a.jpg 800w" alt="A">'
    )
    assert 'src="https://example.org/up/c_fill,w_800/a.jpg"' in fragment
    assert (
        "https://example.org/up/c_fill,w_320/a.jpg 320w, https://example.org/up/c_fill,w_800/a.jpg 800w"
        in fragment
    )
    assert "/f_auto" not in fragment and "c_fill 320w" not in fragment


def test_medium_lazy_figure_keeps_only_the_full_image() -> None:
    """Medium's shape (readability's lazy-image-1): the blurred placeholder inside wrappers, an empty
    <img> slot, then the <noscript> copy; Readability.js keeps only the full image, and so do we."""
    doc = parse(
        "<html><body><article><p>Text before the figure, long enough to be the article.</p><figure>"
        '<div class="wrap"><div><img src="https://m.example/max/60/a.png?q=20" width="1894"></div>'
        '<img class="slot" width="1894"><noscript><img src="https://m.example/max/3788/a.png" '
        'width="1894"></noscript></div><figcaption>Memory leak in action</figcaption></figure>'
        "</article></body></html>",
        url="https://m.example/story",
    )
    fragment = render_html(doc, doc.mask_elements([doc.tag.index("article")]))
    assert re.findall(r'src="([^"]+)"', fragment) == ["https://m.example/max/3788/a.png"]
    assert "Memory leak in action" in fragment
    assert doc.noscript_images == {
        "https://m.example/max/60/a.png?q=20": {"src": "https://m.example/max/3788/a.png", "width": "1894"}
    }


def test_noscript_images_leave_the_linear_view_as_it_was() -> None:
    """The swap happens in the renderer: the extractors see the page's own markup."""
    page = (
        '<html><body><p>Words.</p><div><img src="https://m.example/small.png"></div>'
        '<noscript><img src="https://m.example/large-image-with-a-longer-address.png"></noscript></body></html>'
    )
    with_copy, without = parse(page), parse(page.replace("<noscript>", "<noscript><b>text</b>"))
    assert with_copy.noscript_images and not without.noscript_images
    assert with_copy.tokens.text == without.tokens.text
    assert (with_copy.tokens.line == without.tokens.line).all()


def test_layout_tables_become_flow_and_data_tables_stay() -> None:
    layout = _render(
        "<table><tr><td><table><tr><td><p>Prose of the story, a long paragraph.</p></td>"
        "<td><p>More prose.</p></td></tr></table></td></tr></table>"
    )
    assert "<table" not in layout and "<td" not in layout
    assert "<p>Prose of the story, a long paragraph.</p>" in layout
    data = _render(
        "<p>Figures:</p><table><caption>Results</caption><tr><th>Year</th><th>Sales</th></tr>"
        "<tr><td>2023</td><td>10</td></tr></table>"
    )
    assert "<table><caption>Results</caption>" in data and "<th>Year</th>" in data
    grid = "".join(f"<tr>{''.join(f'<td>{r}.{c}</td>' for c in range(6))}</tr>" for r in range(3))
    assert "<td>0.0</td>" in _render(f"<p>A grid of numbers:</p><table>{grid}</table>")  # six columns: data


def test_a_data_tables_empty_cells_keep_their_columns() -> None:
    # A comparison table marks a missing feature with an empty cell; only the cells' text is
    # selected, and the empty cells, before the first selected text and after the last too, are
    # written with their rows, or "check" would move under the wrong product.
    html = (
        "<html><body><table><tr><th></th><th>Web</th><th>Premium</th></tr>"
        "<tr><td>Corporate</td><td></td><td><i>check</i></td></tr>"
        "<tr><td>Cloud</td><td><i>check</i></td><td></td></tr></table><p>After.</p></body></html>"
    )
    doc = parse(html)
    t = doc.tokens
    selection = np.array(
        [
            kind == TEXT and bool(text.strip()) and text != "After."
            for kind, text in zip(t.kind.tolist(), t.text, strict=True)
        ]
    )
    fragment = render_html(doc, selection)
    rows = re.findall(r"<tr>(.*?)</tr>", fragment)
    assert rows == [
        "<th></th><th>Web</th><th>Premium</th>",
        "<td>Corporate</td><td></td><td><i>check</i></td>",
        "<td>Cloud</td><td><i>check</i></td><td></td>",
    ]
    assert "After." not in fragment
    # A layout table's row is the page's columns: its other cells are not written, nor their images.
    layout = parse(
        '<html><body><table><tr><td><img src="/logo.png" alt="Logo"><a href="/">Home</a></td>'
        "<td><p>The story, told in a long paragraph of prose.</p></td><td></td></tr></table></body></html>"
    )
    story = layout.mask_elements([layout.tag.index("p")])
    written = render_html(layout, story)
    assert "Logo" not in written and "Home" not in written and "<td" not in written
    assert "The story, told" in written


def test_lite_mode_drops_the_captions_of_dropped_images() -> None:
    body = (
        '<p>Intro text.</p><figure><img src="/a.jpg"><figcaption>A photo caption</figcaption></figure>'
        "<figure><pre>code</pre><figcaption>Listing 1</figcaption></figure>"
    )
    assert "A photo caption" in _render(body)
    lite = _render(body, images=False)
    assert "A photo caption" not in lite and "<img" not in lite
    assert "Listing 1" in lite  # a figure without a picture keeps its caption


def test_jump_links_to_nowhere_are_dropped() -> None:
    fragment = _render(
        '<p>Start.</p><p><a href="#story-continues-1">Continue reading the main story</a></p>'
        '<p id="notes">Notes <a href="#notes">here</a> and '
        '<a href="https://example.org/story#gone">gone</a>.</p>'
    )
    assert "Continue reading" not in fragment and "gone" not in fragment
    assert 'href="https://example.org/story#notes"' in fragment and 'id="notes"' in fragment


def test_jump_links_are_looked_for_only_in_hrefs() -> None:
    """A "#" in the text or in another attribute does not make a link in-page (the fragment is
    kept as nh3 wrote it); a dead link whose href holds an escaped "&" before the "#" still goes."""
    kept = sanitize('<p title="a#b">No. #1 on &#35;lists, <a href="https://example.org/other">x</a>.</p>')
    assert drop_dead_jump_links(kept, "https://example.org/story") == kept
    fragment = sanitize('<p>Text <a href="https://example.org/story?a=1&amp;b=2#gone">gone</a>.</p>')
    assert "gone" not in drop_dead_jump_links(fragment, "https://example.org/story?a=1&b=2")


def test_fit_under_header_drops_repeats_and_starts_headings_at_h2() -> None:
    fragment = (
        "<h1>The Story Title</h1><p>By Jane Developer · March 5, 2024</p><h6>Read Later</h6>"
        "<p>The body starts here and goes on.</p><h3>Part one</h3><p>Text.</p><h4>Detail</h4>"
    )
    fitted = fit_under_header(fragment, "The Story Title", "Jane Developer")
    assert "The Story Title" not in fitted and "Jane Developer" not in fitted and "Read Later" not in fitted
    assert "<h2>Part one</h2>" in fitted and "<h3>Detail</h3>" in fitted
    assert fit_under_header("<p>Plain</p><h2>A</h2>", "Other") == "<p>Plain</p><h2>A</h2>"
    # a date line goes only when the header shows a date
    assert "May 20, 2019" in fit_under_header("<p><em>May 20, 2019</em></p><p>Body text.</p>", "T")
    assert "May 20" not in fit_under_header("<p><em>May 20, 2019</em></p><p>Body text.</p>", "T", dated=True)


def test_fit_under_header_drops_reading_tool_labels_before_the_body() -> None:
    """A "Read Later" button marked up as a small heading goes even when no title heading repeats
    (a dek comes first); a short heading that is not a tool label stays, and so does one after the
    body has started."""
    dek = "<div>Two programmers played a pivotal role in the birth of chaos theory.</div>"
    body = "<p>" + "The body starts here and goes on. " * 10 + "</p>"
    fitted = fit_under_header(f"{dek}<h6>Read Later</h6><h5>Summary</h5>{body}", "Unrelated title")
    assert "Read Later" not in fitted and "Summary" in fitted and "pivotal role" in fitted
    late = f"{body}<h6>Share</h6><p>More.</p>"
    assert "Share" in fit_under_header(late, "Unrelated title")


def test_fit_under_header_looks_through_wrappers_but_not_into_blocks() -> None:
    """Wrapper divs are not leaf blocks (a block inside them, however deep, says so); a div holding
    only inline markup is one, so a byline line in one goes."""
    byline = '<div class="meta"><span>By</span> <a href="/jane">Jane Developer</a></div>'
    body = "<p>" + "The body starts here and goes on. " * 10 + "</p>"
    fragment = f"<div><div><section><div>{byline}{body}</div></section></div></div>"
    fitted = fit_under_header(fragment, "Unrelated title", "Jane Developer")
    assert "Jane Developer" not in fitted and "The body starts here" in fitted
    # a wrapper whose only block is deep inside inline markup is still a wrapper: nothing dropped
    wrapped = "<div><span><em><p>By Jane Developer</p></em></span><p>Body.</p></div>"
    assert "Jane Developer" not in fit_under_header(wrapped, "T", "Jane Developer")
    assert "Body." in fit_under_header(wrapped, "T", "Jane Developer")


def test_preference_links_query_is_urlencode_of_every_preference() -> None:
    from dataclasses import replace
    from urllib.parse import parse_qsl

    from readerproxy.web.templating import COOKIE_PREFIX, Preferences

    prefs = Preferences()
    for changed in (prefs, replace(prefs, theme="dark", lite=True), replace(prefs, width="wide")):
        pairs = dict(parse_qsl(changed.query()))
        assert pairs == {name.removeprefix(COOKIE_PREFIX): value for name, value in changed.cookies().items()}
        assert changed.query() is changed.query()  # made once per combination


def test_plain_paths_are_joined_exactly_as_urljoin_does() -> None:
    import random
    from urllib.parse import urljoin

    from readerproxy.engine.output import _PLAIN_PATH, _origin

    rng = random.Random(5)
    alphabet = [*"abAZ09/._-~%!$&'()*+,;=:@?#\\ \t\u00fc", "/.", "/..", "//", "./", "../"]
    bases = ["https://www.example.com/a/b/c.html?q=1#f", "http://user:pw@host:8080/x/", "HTTPS://Example.COM"]
    plain = 0
    for _ in range(20_000):
        value = "/" + "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        if _PLAIN_PATH.fullmatch(value):
            plain += 1
            for base in bases:
                assert f"{_origin(base)}{value}" == urljoin(base, value), (base, value)
    assert plain > 1000
    for tricky in ("//evil.example/x", "/a//b", "/./a", "/a/../b", "/a;p", "/a?q", "/a#f", "/ a", "/.."):
        assert not _PLAIN_PATH.fullmatch(tricky), tricky


def test_plain_absolute_urls_come_back_from_urljoin_unchanged() -> None:
    import random
    from urllib.parse import urljoin

    from readerproxy.engine.output import _PLAIN_ABSOLUTE

    rng = random.Random(7)
    alphabet = [*"abAZ09/._-~%!$&'()*+,;=:@?#\\[] \t\n\x00\x7f\u00fc", "//", "/..", "?#", "#", ":80"]
    bases = [
        "https://www.example.com/a/b/c.html?q=1#f",
        "http://user:pw@host:8080/x/",
        "HTTPS://Example.COM",
        "ftp://files.example/x",
        "http://[bad",  # urljoin raises ValueError: the URL is kept as it is
    ]
    plain = 0
    for _ in range(20_000):
        scheme = rng.choice(["http://", "https://", "HTTP://", "Https://"])
        host = "".join(rng.choice("ab.-09" * 5 + ":[]\u00fc@") for _ in range(rng.randint(0, 6)))
        value = scheme + host + "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        if _PLAIN_ABSOLUTE.fullmatch(value):
            plain += 1
            for base in bases:
                try:
                    joined = urljoin(base, value)
                except ValueError:
                    joined = value
                assert joined == value, (base, value)
    assert plain > 1000
    for tricky in (
        "HTTP://a.example/x",  # the scheme is lower-cased
        "https://a.example/x;",  # an empty parameter is dropped
        "https://a.example/x?",  # so is an empty query
        "https://a.example/x#",  # and an empty fragment
        "https://a.example/x y",
        "https://a.example/\tx",
        "https://[::1/x",
        "https://\u00fc.example/x",
    ):
        assert not _PLAIN_ABSOLUTE.fullmatch(tricky), tricky


def test_srcsets_without_parentheses_split_as_the_standard_steps_do() -> None:
    import random

    from readerproxy.engine.urls import _parse_srcset_by_character, parse_srcset

    rng = random.Random(11)
    alphabet = [*"ab1w2x, ,,\t\n\u00a0\u2003/.:", "320w", "1.5x", "https://e.example/c_fill,f_auto/x.jpg"]
    for _ in range(5_000):
        srcset = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 15)))
        assert parse_srcset(srcset) == _parse_srcset_by_character(srcset), srcset
    assert parse_srcset("a.jpg 1x, b.jpg (min-width: 2px) 2x") == [
        ("a.jpg", "1x"),
        ("b.jpg", "(min-width: 2px) 2x"),
    ]


def test_collapse_spaces_is_the_whitespace_rule_of_render_text() -> None:
    import random

    from readerproxy.engine.output import _WS, collapse_spaces

    rng = random.Random(3)
    alphabet = [
        *"ab \t\r\f\v\n\x1c\x1f\x85\u00a0\u1680\u2001\u200a\u200b\u200c\u2028\u202f\u205f\u3000",
        "“é”",
    ]
    for _ in range(50_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        assert collapse_spaces(text) == _WS.sub(" ", text).strip(), repr(text)


def test_render_text_collapses_by_the_rule_wherever_split_disagrees() -> None:
    """`render_text` collapses every block with `str.split()` unless some selected text holds a
    character where that differs from the `_WS` rule; one such character anywhere in the selection
    makes every block follow the rule (U+200B is a space to it, U+2028 and U+0085 are not)."""
    plain = parse("<body><p>a  b\t c</p><p>d<br> e  f</p></body>")
    assert render_text(plain, np.ones(len(plain.tokens), dtype=bool)) == "a b c\n\nd\ne f"
    page = "<body><p>a\u200b b</p><p>x\u2028y   z</p><p>m\x85n</p><p>p  q<br> r</p></body>"
    doc = parse(page)
    everything = np.ones(len(doc.tokens), dtype=bool)
    assert render_text(doc, everything) == "a b\n\nx\u2028y z\n\nm\x85n\n\np q\nr"


def test_srcsets_with_parentheses_split_as_the_standard_steps_do() -> None:
    """`parse_srcset` with parentheses jumps between the descriptors' parentheses and commas by
    regular expression; it must split as the standard's steps one character at a time do."""
    import random

    from readerproxy.engine.urls import _parse_srcset_by_character, parse_srcset

    rng = random.Random(5)
    alphabet = [
        *"ab1w2x, ,,()((\t\n\u00a0\u2003/.:",
        "320w",
        "(min-width: 600px)",
        "https://e.example/c,f/x.jpg",
    ]
    for _ in range(20_000):
        srcset = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 16)))
        assert parse_srcset(srcset) == _parse_srcset_by_character(srcset), srcset
    assert parse_srcset("a.jpg (x, y) 2x, b.jpg") == [("a.jpg", "(x, y) 2x"), ("b.jpg", "")]


def _selecting(doc, *texts: str) -> np.ndarray:
    """A selection of the text tokens that hold one of `texts` (an extractor's partial choice)."""
    t = doc.tokens
    return np.array(
        [
            kind == TEXT and any(x in text for x in texts)
            for kind, text in zip(t.kind.tolist(), t.text, strict=True)
        ]
    )


PRICING = (
    "<html><body><h2>Plans</h2><table><thead>"
    "<tr><th rowspan='2'>Plan</th><th colspan='2'>Rate</th></tr><tr><th></th><th></th></tr></thead><tbody>"
    "<tr><td>Day Pass</td><td>$30/Day</td><td>Hot desk</td></tr>"
    "<tr><td></td><td></td><td></td></tr>"
    "<tr><td>Monthly</td><td>$250/Month</td><td>Any desk</td></tr>"
    "<tr><td>Meeting Room</td><td>$200/Hour</td><td></td></tr></tbody></table><p>After the table.</p></body></html>"
)


def test_a_data_tables_rows_keep_their_header_their_cells_and_the_empty_rows() -> None:
    """The plans' names selected, not their prices: each selected row is written with every cell
    (each price in its column), under both header rows (the second one emptied), with the empty
    row between the plans; a row the extractor left out entirely stays out."""
    doc = parse(PRICING)
    fragment = render_html(doc, _selecting(doc, "Day Pass", "Monthly", "Meeting Room"))
    rows = re.findall(r"<tr>(.*?)</tr>", fragment)
    assert rows == [
        '<th rowspan="2">Plan</th><th colspan="2">Rate</th>',
        "<th></th><th></th>",
        "<td>Day Pass</td><td>$30/Day</td><td>Hot desk</td>",
        "<td></td><td></td><td></td>",
        "<td>Monthly</td><td>$250/Month</td><td>Any desk</td>",
        "<td>Meeting Room</td><td>$200/Hour</td><td></td>",
    ]
    assert fragment.count("$200/Hour") == 1 and "After the table." not in fragment
    # the text says what the reader shows
    text = render_text(doc, _selecting(doc, "Day Pass", "Monthly", "Meeting Room"))
    assert "Plan Rate" in text and "$30/Day" in text and "$200/Hour" in text and "$400" not in text


def test_an_unmarked_grid_keeps_the_empty_rows_between_and_those_a_rowspan_reaches() -> None:
    """A grid without header marks (six columns: data, not layout) keeps the empty rows that a
    selected row's rowspan reaches; rows with text outside the selection are the extractor's."""
    cells = "".join(f"<td>c{c}</td>" for c in range(4))
    html = (
        "<html><body><table>"
        f"<tr><td>Top</td>{cells}<td>t</td></tr>"
        f"<tr><td rowspan='3'>Span</td>{cells}<td>first</td></tr>"
        "<tr><td></td><td></td><td></td><td></td><td></td></tr>"
        f"<tr>{cells}<td>reached</td></tr>"
        f"<tr><td>Bottom</td>{cells}<td>b</td></tr></table></body></html>"
    )
    doc = parse(html)
    fragment = render_html(doc, _selecting(doc, "first", "c0"))
    rows = re.findall(r"<tr>(.*?)</tr>", fragment)
    assert len(rows) == 5 and rows[2] == "<td></td>" * 5 and "Span" in rows[1]
    fragment = render_html(doc, _selecting(doc, "first"))
    rows = re.findall(r"<tr>(.*?)</tr>", fragment)
    assert len(rows) == 2 and "Span" in rows[0] and "c3" in rows[0] and rows[1] == "<td></td>" * 5


def test_link_tables_are_not_completed() -> None:
    """A navigation box (a table mostly of links) is the extractor's to keep or drop, cell by cell."""
    links = "".join(f"<li><a href='/p{i}'>Project {i}</a></li>" for i in range(8))
    html = (
        "<html><body><table><tr><th>Mozilla</th></tr><tr><th>Projects</th>"
        f"<td><ul>{links}</ul></td></tr></table></body></html>"
    )
    doc = parse(html)
    assert "Project 3" not in render_html(doc, _selecting(doc, "Projects"))


def test_layout_tables_are_not_completed() -> None:
    html = (
        "<html><body><table><tr><td><a href='/'>Home</a> <a href='/about'>About</a></td>"
        "<td><p>The story, in a long paragraph of prose.</p></td></tr></table></body></html>"
    )
    doc = parse(html)
    fragment = render_html(doc, _selecting(doc, "The story"))
    assert "Home" not in fragment and "<table" not in fragment


WIKI = (
    "<html><body><h1>Harbor lighthouse</h1><p>The lighthouse was first lit in 1851.</p>"
    "<div id='toc'><h2>Contents</h2><ul>\n"
    "<li><a href='#History'><span class='tocnumber'>1</span> <span>History</span></a>\n"
    "<ul>\n<li><a href='#Keepers'><span>1.1</span> <span>Keepers</span></a></li>\n</ul>\n</li>\n"
    "<li><a href='#Lens'><span>2</span> <span>Lens</span></a></li>\n"
    "<li><a href='#Elsewhere'><span>3</span> <span>Elsewhere</span></a></li>\n</ul></div>"
    "<h2><span class='mw-headline' id='History'>History</span></h2><p>Built of granite.</p>"
    "<h3><span class='mw-headline' id='Keepers'>Keepers</span></h3><p>Eleven keepers served.</p>"
    "<h2><span class='mw-headline' id='Lens'>Lens</span></h2><p>A Fresnel lens.</p>"
    "<div id='Elsewhere'><p>Not selected.</p></div></body></html>"
)


def _without_links(doc) -> np.ndarray:
    """Every text token but the links' text and the last section (an extractor that dropped the
    table of contents as link-dense, keeping the spaces between its items)."""
    t = doc.tokens
    return np.array(
        [
            kind == TEXT and not in_anchor and "Not selected" not in text
            for kind, in_anchor, text in zip(t.kind.tolist(), t.in_anchor.tolist(), t.text, strict=True)
        ]
    )


def test_a_table_of_contents_kept_without_its_links_is_rebuilt_with_them() -> None:
    doc = parse(WIKI)
    fragment = render_html(doc, _without_links(doc))
    items = re.findall(r"<li>(.*?)</li>", fragment)
    assert all(re.sub(r"<[^>]+>|\s", "", item) for item in items), items
    # the links lead to their sections, whose anchors the headings take from their <span>s
    assert ">1 History</a>" in fragment and ">2 Lens</a>" in fragment and ">1.1 Keepers</a>" in fragment
    assert '<h2 id="History">' in fragment and '<h3 id="Keepers">' in fragment
    assert "Elsewhere" not in fragment  # its section is not shown: the link and its item go


def test_list_items_without_text_are_dropped() -> None:
    assert drop_empty_items("<ul><li> </li><li><a href='x'></a>&nbsp;</li></ul><p>x</p>") == "<p>x</p>"
    nested = "<ol><li>One<ul><li></li></ul></li><li><img src='a.png'></li></ol>"
    assert drop_empty_items(nested) == "<ol><li>One</li><li><img src='a.png'></li></ol>"
    # other links of a list, not into the page, are the extractor's to drop: only blanks go
    doc = parse(
        "<html><body><p>Intro text.</p><ul><li> <a href='/a'>A page</a> </li></ul><p>End.</p></body></html>"
    )
    assert "<li>" not in render_html(doc, _without_links(doc))


def test_a_table_shipped_twice_is_written_once_with_its_heading() -> None:
    """One copy for wide screens and one for narrow ones, each under the same heading: the reader
    shows the table and its heading once; a different table, and a heading that differs, stay."""
    table = PRICING[PRICING.index("<table>") : PRICING.index("</table>") + 8]
    html = (
        f"<html><body><div class='wide'><h2>Plans</h2>{table}</div><div class='narrow'><h2>Plans</h2>{table}</div>"
        "<h2>Extras</h2><table><tr><th>Locker</th><td>$20</td></tr><tr><td>Mail</td><td>$15</td></tr></table>"
        "<p>After the tables.</p></body></html>"
    )
    doc = parse(html)
    t = doc.tokens
    fragment = render_html(doc, (t.kind == TEXT) & np.array([bool(x.strip()) for x in t.text]))
    assert fragment.count("$200/Hour") == 1 and fragment.count("<h2>Plans</h2>") == 1
    assert "<h2>Extras</h2>" in fragment and "Locker" in fragment and "After the tables." in fragment


def test_a_form_holding_the_page_is_a_container_and_any_other_form_is_dropped() -> None:
    """ASP.NET wraps the whole body in one <form>: its text is the page's and is shown, its
    controls dropped one by one; a small form inside the content (a honeypot field's "leave this
    unchanged", a newsletter box) goes whole. Text and HTML then hold the same words."""
    paragraphs = "".join(
        f"<p>Paragraph {n} of the rankings page, with enough words to read.</p>" for n in range(6)
    )
    page = parse(
        "<html><body><form id='aspnetForm' action='/Default.aspx'><input type='hidden' name='__VIEWSTATE'>"
        f"<div id='main'>{paragraphs}<select><option>All areas</option></select></div></form></body></html>"
    )
    fragment = render_html(page, page.mask_elements([page.tag.index("div")]))
    for n in range(6):
        assert f"Paragraph {n} of the rankings page" in fragment
    assert "All areas" not in fragment and "<select" not in fragment and "<input" not in fragment
    # a form inside the content (HTML forms do not nest: another page)
    page = parse(
        f"<html><body><div id='main'>{paragraphs}"
        "<form class='gform'><p>Leave this field unchanged</p><input name='email'></form></div></body></html>"
    )
    fragment = render_html(page, page.mask_elements([page.tag.index("div")]))
    assert "Paragraph 5 of the rankings page" in fragment
    assert "Leave this field unchanged" not in fragment
