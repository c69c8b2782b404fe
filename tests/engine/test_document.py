"""The one-parse Document: cleaning, line numbers, the linear view and element mapping."""

from __future__ import annotations

import gzip
import random

import numpy as np
import pytest

from readerproxy.engine.parse import clean, document, scan
from readerproxy.engine.parse.document import CLOSE, OPEN, REBREAK_WIDTH, TEXT, parse

PAGE = """<!DOCTYPE html>
<html lang="de" dir="ltr">
<head><title> A  Title </title><base href="/base/"><style>p{}</style><script>var x = "<p>no</p>";</script></head>
<body>
<nav><a href="/one">One</a> <a href="/two">Two</a></nav>
<!-- a comment that must vanish -->
<article>
<h1>Heading</h1>
<p>First paragraph with <b>bold</b> text.</p>
<div hidden>secret hidden</div>
<div aria-hidden="true">aria hidden</div>
<p style="display: none">inline hidden</p>
<noscript>enable js</noscript>
<template><p>template text</p></template>
<p>Second
paragraph over two lines.</p>
</article>
</body>
</html>"""


def token_text(doc) -> str:
    return "".join(doc.tokens.text)


def test_cleaning_removes_scripts_styles_comments_and_hidden() -> None:
    doc = parse(PAGE)
    text = token_text(doc)
    for gone in (
        "var x",
        "p{}",
        "a comment",
        "secret hidden",
        "aria hidden",
        "inline hidden",
        "enable js",
        "template text",
    ):
        assert gone not in text
    for kept in ("One", "Heading", "First paragraph with ", "bold", "Second\n", "paragraph over two lines."):
        assert kept in text
    assert "script" not in doc.tag and "style" not in doc.tag


def test_text_for_screen_readers_only_is_removed_unless_it_stands_for_a_hidden_twin() -> None:
    page = (
        '<html><body><a class="screen-reader-text" href="#main">Skip to content</a>'
        '<p>Price <span class="visually-hidden">Regular price</span>$279.95</p>'
        '<button><svg aria-hidden="true"></svg><span class="sr-only">Open menu</span></button>'
        '<p class="rating"><span aria-hidden="true">4.8 / 5</span>'
        '<span class="sr-only">Rated 4.8 stars by 27,784 users</span></p>'
        '<p><span class="visuallyhidden">Photo</span>A caption.</p></body></html>'
    )
    text = token_text(parse(page))
    for gone in ("Skip to content", "Regular price", "Open menu", "4.8 / 5", "Photo"):
        assert gone not in text
    # The label of a visible twin that screen readers skip is the only text of both: kept.
    for kept in ("$279.95", "Rated 4.8 stars by 27,784 users", "A caption."):
        assert kept in text


SHELL = """<html><head><title>Thread</title></head><body>
<header><a href="/">Forum</a> <a href="/latest">Latest</a> <button>Log in</button></header>
<div id="app"></div>
<noscript><div class="crawler"><h1>Why does the build fail?</h1>
<div class="post"><span>alice</span><p>{first}</p></div>
<div class="post"><span>bob</span><p>{second}</p></div></div></noscript>
</body></html>"""


def test_removed_elements_go_whatever_the_case_of_their_tags_and_with_the_kernels_or_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Cleaning walks the tree only for the removed names the markup holds (`_tags_in_source`):
    a start tag in any ASCII case still names its element, and the pure path finds the same names."""
    page = (
        "<html><head><TITLE>T</TITLE><Style>p{}</Style><sCrIpT>x()</sCrIpT></head><body>"
        "<p>kept</p><IFRAME src='/f'></IFRAME><ObJeCt><p>gone</p></ObJeCt><svg><STYLE>s</STYLE></svg>"
        "<NoScript><p>alt</p></NoScript><template><p>t</p></template></body></html>"
    )
    names = ("style", "script", "iframe", "object", "noscript", "template", "embed", "xmp")
    found = clean._tags_in_source(page, names)
    assert found == ["style", "script", "iframe", "object", "noscript", "template"]
    with_kernels = parse(page)
    monkeypatch.setattr(clean, "native", None)
    monkeypatch.setattr(scan, "native", None)
    assert clean._tags_in_source(page, names) == found
    without = parse(page)
    for doc in (with_kernels, without):
        assert doc.tag == ["html", "head", "title", "body", "p", "svg"]
        assert doc.title == "T"
    assert with_kernels.tree.html == without.tree.html


def test_title_json_ld_and_noscript_images_are_read_before_cleaning() -> None:
    page = (
        '<html><head><title>First</title><script type="Application/LD+JSON" hidden>{"a": 1}</script>'
        '<script type="text/javascript">{"b": 2}</script></head><body><svg><title>Second</title></svg>'
        '<div hidden><img src="p.gif"><noscript><img src="real.jpg"></noscript></div>'
        '<img src="lazy.gif"><noscript><img src="lazy.jpg" alt="a"></noscript><p>text</p></body></html>'
    )
    doc = parse(page)
    assert doc.title == "First"
    assert doc.json_ld == ['{"a": 1}']
    assert doc.noscript_images == {"p.gif": {"src": "real.jpg"}, "lazy.gif": {"src": "lazy.jpg", "alt": "a"}}


def test_noscript_stays_when_it_is_the_page_without_scripts() -> None:
    first = " ".join(f"word{i}" for i in range(80))
    second = " ".join(f"reply{i}" for i in range(80))
    doc = parse(SHELL.format(first=first, second=second))
    text = token_text(doc)
    assert first in text and second in text and "Log in" in text
    assert "noscript" not in doc.tag and doc.tag.count("p") == 2
    # A short <noscript> ("enable JavaScript") beside a real page still goes.
    short = parse(SHELL.format(first="Please enable JavaScript.", second=""))
    assert "Please enable JavaScript." not in token_text(short) and "p" not in short.tag
    # So does a long one when the page outside it holds more text than it does.
    body = " ".join(f"article{i}" for i in range(400))
    long = parse(
        SHELL.replace('<div id="app"></div>', f"<main><p>{body}</p></main>").format(
            first=first, second=second
        )
    )
    assert body in token_text(long) and first not in token_text(long)


def test_hidden_content_that_scripts_reveal_stays() -> None:
    story = " ".join(f"story{i}" for i in range(200))
    # React's streamed server rendering: the boundary's HTML arrives hidden, a script moves it to
    # its placeholder; so does parse. A hidden S:n without a placeholder stays hidden.
    streamed = parse(
        f'<html><body><nav>Menu</nav><template id="B:0"></template><footer>Foot</footer>'
        f'<div hidden id="S:0"><article><p>{story}</p></article></div>'
        f'<div hidden id="S:1"><p>no placeholder</p></div>'
        f'<div hidden id="other"><p>really hidden</p></div></body></html>'
    )
    text = token_text(streamed)
    assert story in text and text.index("Menu") < text.index(story) < text.index("Foot")
    assert "really hidden" not in text and "no placeholder" not in text and text.count(story) == 1
    # A segment postponed inside a boundary: its placeholder arrives with the boundary's content.
    nested = parse(
        '<html><body><template id="B:0"></template><p>End</p>'
        '<div hidden id="S:0"><h2>Outer</h2><template id="P:1"></template><p>After</p></div>'
        '<div hidden id="S:1"><p>Inner</p></div></body></html>'
    )
    assert token_text(nested) == "OuterInnerAfterEnd"
    # An anti-flicker wrapper around nearly all of the page's text.
    wrapper = f'<html><body><div style="visibility: hidden; min-height: 100vh"><p>{story}</p></div>{{rest}}</body></html>'
    assert story in token_text(parse(wrapper.format(rest="<p>Footer</p>")))
    # ... but not a hidden box beside a page that holds more text outside it.
    page = " ".join(f"page{i}" for i in range(400))
    assert story not in token_text(parse(wrapper.format(rest=f"<main><p>{page}</p></main>")))
    # A gate's wrapper: `display: none` around nearly all of the main landmark's text, shown by a
    # script, beside a hidden menu outside it with as many words.
    menu = " ".join(f"menu{i}" for i in range(300))
    gated = (
        f'<html><body><nav style="display:none"><p>{menu}</p></nav><main id="MainContent">'
        f'<div class="lockdown-content" style="display:none;"><p>{story}</p></div>{{rest}}</main></body></html>'
    )
    text = token_text(parse(gated.format(rest="")))
    assert story in text and "menu1 " not in text
    # ... but not a hidden part of a main that shows more of its own.
    assert story not in token_text(parse(gated.format(rest=f"<p>{page}</p>")))
    assert story not in token_text(
        parse(gated.replace("<main", "<div").replace("</main>", "</div>").format(rest=""))
    )


def test_streamed_async_fragments_are_placed() -> None:
    """Marko's streamed `<await>` fragments (eBay): each arrives at the end of the body in a hidden
    div that an inline script moves into its placeholder; so does parse, nested ones included."""
    cards = "".join(f"<li><a href='/i/{i}'>Vintage print {i}</a><span>${i}.00</span></li>" for i in range(8))
    page = parse(
        "<html><body><header>Sign in</header>"
        '<section><span id="afbrwwebph1"><div class="loader"></div></span>'
        '<noscript id="afbrwwebph2"></noscript></section><footer>Foot</footer>'
        '<div id="afbrwweb2" style="display:none"><h2>Results</h2><noscript id="afbrwwebph3"></noscript>'
        "<p>Shipping to you</p></div>"
        '<div id="afbrwweb1" style="display:none"><h1>Collectibles &amp; Art</h1></div>'
        f'<div id="afbrwweb3" style="display:none"><ul>{cards}</ul></div>'
        '<div id="afbrwweb4" style="display:none"><p>no placeholder</p></div>'
        '<div id="afother" style="display:none"><p>really hidden</p></div>'
        "<script>function $afbrwweb(d){}$afbrwweb(2);$afbrwweb(1);$afbrwweb(3,2)</script></body></html>"
    )
    text = token_text(page)
    assert text.startswith("Sign inCollectibles & ArtResultsVintage print 0$0.00")
    assert text.endswith("Vintage print 7$7.00Shipping to youFoot")
    assert "no placeholder" not in text and "really hidden" not in text
    assert "noscript" not in page.tag and text.count("Vintage print 3") == 1
    # Fragments that would place each other, or one inside another, stay hidden; the page parses.
    cycle = parse(
        '<html><body><p>Page</p><div id="afx1" style="display:none"><span id="afxph2"></span>One</div>'
        '<div id="afx2" style="display:none"><span id="afxph1"></span>Two'
        '<div id="afx3" style="display:none">Three</div></div><span id="afxph3"></span></body></html>'
    )
    assert token_text(cycle) == "Page"


def test_collapsed_panels_stay_and_hidden_menus_and_dialogs_go() -> None:
    """An accordion's closed panels and a tab set's other tabs are the page's text, closed until a
    tap (WAI-ARIA's accordion and tabs patterns): parse keeps them. What a control opens that is a
    menu, a dialog or a nav stays hidden, as does a hidden panel no control names."""
    page = parse(
        "<html><body><h1>Installing solar panels</h1>"
        '<button aria-expanded="false" aria-controls="week1">Week 1</button>'
        '<div id="week1" style="display:none" role="region"><p>Gather twelve months of bills.</p></div>'
        '<div role="tablist"><a role="tab" aria-controls="py" aria-selected="true">Python</a>'
        '<a role="tab" aria-controls="js">Node.js</a></div>'
        '<div id="py" role="tabpanel"><p>pip install twilio</p></div>'
        '<div id="js" role="tabpanel" hidden><p>npm install twilio</p></div>'
        '<button aria-expanded="false" aria-controls="menu">Menu</button>'
        '<ul id="menu" role="menu" hidden><li>Products menu item</li></ul>'
        '<button aria-expanded="false" aria-controls="site-nav">Open</button>'
        '<nav id="site-nav" hidden><a href="/">Home link</a></nav>'
        '<a aria-controls="login" aria-expanded="false">Sign in</a>'
        '<div id="login" role="dialog" aria-hidden="true"><p>Your password</p></div>'
        '<div id="promo" hidden><p>A hidden promotion</p></div>'
        '<div id="go" role="tabpanel" style="display: none"><p>go get twilio</p></div>'
        '<span aria-controls="promo">no aria-expanded, no tab</span>'
        "</body></html>"
    )
    text = token_text(page)
    assert "Gather twelve months of bills." in text and "npm install twilio" in text
    assert "pip install twilio" in text and "go get twilio" in text  # a tab panel whatever names it
    for gone in ("Products menu item", "Home link", "Your password", "A hidden promotion"):
        assert gone not in text, gone


def test_page_facts() -> None:
    doc = parse(PAGE, url="https://example.org/dir/page.html")
    assert doc.title == "A Title"
    assert doc.lang == "de" and doc.dir == "ltr"
    assert doc.base_url == "https://example.org/base/"
    assert doc.absolute_url("img.png") == "https://example.org/base/img.png"
    assert doc.absolute_url("https://other.org/x") == "https://other.org/x"


def test_line_numbers_follow_source_newlines() -> None:
    doc = parse(PAGE)
    t = doc.tokens
    lines = {t.text[i].strip(): int(t.line[i]) for i in np.flatnonzero(t.kind == TEXT) if t.text[i].strip()}
    assert lines["Heading"] + 1 == lines["First paragraph with"]
    # a text node spanning two source lines becomes two tokens on consecutive lines
    assert lines["paragraph over two lines."] == lines["Second"] + 1
    assert lines["One"] < lines["Heading"]
    assert np.all(np.diff(t.line) >= 0)  # lines never go backwards in document order


def test_tokens_link_to_elements_and_tags_have_code_length() -> None:
    doc = parse(PAGE)
    t = doc.tokens
    for element, name in enumerate(doc.tag):
        assert t.kind[doc.start[element]] == OPEN
        assert t.element[doc.start[element]] == element
        assert doc.elements[element].tag == name
        if doc.end[element] != doc.start[element]:
            assert t.kind[doc.end[element]] == CLOSE
    a = doc.tag.index("a")
    assert t.length[doc.start[a]] == len('<a href="/one">')
    assert t.length[doc.end[a]] == len("</a>")
    bold = next(i for i in range(len(t)) if t.text[i] == "bold")
    assert doc.tag[t.element[bold]] == "b"
    assert doc.tag[doc.parent[t.element[bold]]] == "p"


def test_anchor_flags() -> None:
    doc = parse(PAGE)
    t = doc.tokens
    inside = {t.text[i] for i in np.flatnonzero(t.in_anchor & (t.kind == TEXT))}
    assert inside == {"One", "Two"}


def test_subtree_aggregates_and_masks() -> None:
    doc = parse(PAGE)
    article = doc.tag.index("article")
    nav = doc.tag.index("nav")
    assert doc.subtree_chars[nav] == len("OneTwo")
    assert doc.subtree_anchor_chars[nav] == len("OneTwo")
    assert doc.subtree_anchor_chars[article] == 0
    mask = doc.mask_elements([nav])
    assert "".join(t for t, m in zip(doc.tokens.text, mask, strict=True) if m).strip() == "One Two"
    assert doc.element_text(article).startswith("Heading First paragraph with bold text.")


def test_body_span_and_mask_cover_the_body_element() -> None:
    doc = parse(PAGE)
    first, last = doc.body
    assert doc.body_span == slice(first, last + 1)
    assert doc.tag[doc.tokens.element[first]] == "body" and doc.tokens.kind[first] == OPEN
    assert np.flatnonzero(doc.body_mask).tolist() == list(range(first, last + 1))
    without_body = parse("<p>x</p>")
    assert without_body.body_span.stop - without_body.body_span.start <= len(without_body.tokens)


def test_minified_page_is_rebroken_at_tag_ends() -> None:
    body = "".join(f"<div class='c{i}'><span>item {i}</span></div>" for i in range(400))
    doc = parse(f"<html><body>{body}<p>{'word ' * 300}</p></body></html>")
    assert doc.rebroken
    assert doc.n_lines > 100
    t = doc.tokens
    ends = np.flatnonzero(np.diff(t.line) > 0)
    assert all(t.kind[i] != TEXT for i in ends)  # breaks only after tags
    widths = np.bincount(t.line, weights=t.length)
    assert np.median(widths) < REBREAK_WIDTH * 3


def test_pretty_page_is_not_rebroken() -> None:
    assert not parse(PAGE).rebroken


@pytest.mark.parametrize(
    "broken",
    [
        "",
        "<",
        "<p>unclosed <b>tags <i>everywhere",
        "</div></div><p>stray ends</p></span>",
        '<p title="x>y" a\'b="1" c"d=2>odd attributes</p>',
        "<table><tr><td>cell<p>para in cell</table>after",
        "\x00\x01 binary-ish \ufffd text",
        "<svg><path d='M0'/><text>svg text</text></svg><math><mi>x</mi></math>",
    ],
)
def test_broken_html_parses(broken: str) -> None:
    doc = parse(broken)
    assert len(doc.tokens.kind) == len(doc.tokens.text)
    assert all(doc.tokens.kind[doc.start] == OPEN)


def test_dataset_pages_align(shared_datasets) -> None:
    pages = sorted((shared_datasets / "scrapinghub" / "html").glob("*.html.gz"))[:15]
    for path in pages:
        doc = parse(gzip.decompress(path.read_bytes()).decode("utf-8", "replace"))
        assert len(doc.elements) == len(doc.tag) > 10
        assert doc.tokens.chars.sum() > 100


def test_foreign_elements_with_void_html_names_do_not_close_the_page() -> None:
    # SVG <image> has an end tag; treating it as void once closed <body> early and lost the article.
    doc = parse("<body><svg><g><image href='x.png'></image></g></svg><p>after the svg</p></body>")
    body = doc.tag.index("body")
    p = doc.tag.index("p")
    assert doc.parent[p] == body
    assert doc.start[body] < doc.start[p] < doc.end[p] < doc.end[body]
    assert "after the svg" in "".join(doc.tokens.text[doc.body[0] : doc.body[1] + 1])


def test_every_element_is_nested_in_its_parent(shared_datasets) -> None:
    for path in sorted((shared_datasets / "readability").glob("*/source.html"))[:40]:
        doc = parse(path.read_text(encoding="utf-8", errors="replace"))
        child = np.flatnonzero(doc.parent >= 0)
        parent = doc.parent[child]
        assert np.all(doc.start[parent] < doc.start[child]), path
        assert np.all(doc.end[child] <= doc.end[parent]), path


TRICKY = [
    PAGE,
    '<p title="a > b" data-x="<b>not a tag</b>">quoted angle brackets</p><p>after</p>',
    "<!-- a > b --><p>x</p><!--[if lt IE 9]><script src='x'></script><![endif]--><p>y</p><!---->",
    "<div>a &amp; b &lt;c&gt; &nbsp;d\n\n  e &amp;amp;\n</div>\n<pre>\n  two\n  lines\n</pre>",
    "<svg viewBox='0 0 1 1'><clipPath id='c'><rect/></clipPath><foreignObject><p>in svg</p></foreignObject></svg>",
    "<p>unclosed <b>tags <i>everywhere<ul><li>one<li>two</ul><table><tr><td>cell</table>",
    "<p>text\u3000with\u2009odd\xa0spaces \U0001f600 and \u00e9</p><a href='/x'>link <b>bold</b></a>",
    "<body><svg><g><image href='x.png'></image></g></svg><p>after the svg</p></body>",
    '<div a"b="1">quote in an attribute name</div><p>next</p>',
]


def _scan_input(page: str) -> tuple[str, list[str]]:
    """The cleaned page as serialised and its element tags: what `_scan` and `_scan_fast` read."""
    from selectolax.lexbor import LexborHTMLParser

    from readerproxy.engine.parse import clean

    tree = LexborHTMLParser(page)
    clean.clean(tree, clean.read_before_cleaning(tree, tree.html or ""))
    return tree.html or "", [node.tag.lower() if node.tag else "" for node in tree.css("*")]


def _assert_same_scan(fast: object, general: object, *where: str) -> None:
    """Every field of the fast scan equals the general scan's (lists as such, arrays with their dtype)."""
    for name in general.__slots__:  # type: ignore[attr-defined]
        mine, reference = getattr(fast, name), getattr(general, name)
        if reference is None or isinstance(reference, list):
            assert mine == reference, (name, *where) if where else name
        else:
            assert mine.dtype == reference.dtype and np.array_equal(mine, reference), (
                (name, *where) if where else name
            )


@pytest.mark.parametrize("page", TRICKY)
def test_fast_scan_agrees_with_the_general_scan(page: str) -> None:
    from readerproxy.engine.parse import scan

    serialised, tag = _scan_input(page)
    fast = scan._scan_fast(serialised, tag)
    if fast is None:  # declined: the general scan answers, which is also fine
        return
    _assert_same_scan(fast, scan._scan(serialised, tag))


def test_fast_scan_answers_for_ordinary_pages() -> None:
    from readerproxy.engine.parse import scan

    for page in TRICKY[:4]:
        assert scan._scan_fast(*_scan_input(page)) is not None, page


def test_a_quote_in_a_tag_name_goes_to_the_general_scan() -> None:
    # The general expression reads a quote in a tag name as part of the name, which can carry its
    # match past the first ">"; the fast scan must not guess.
    from readerproxy.engine.parse import document, scan

    assert scan._scan_fast(*_scan_input('<p"x a"b="1">odd</p"x><p>next</p>')) is None
    assert "next" in "".join(document.parse('<p"x a"b="1">odd</p"x><p>next</p>').tokens.text)


def test_fast_scan_agrees_with_the_general_scan_on_random_markup() -> None:
    import random

    from readerproxy.engine.parse import scan

    pieces = [
        "<p>", "</p>", '<div class="a>b">', "<a href='x'>", "</a>", "<br>", "<img alt='<x>'>",
        "<!-- c > d -->", "<!---->", "<!-->", "text", " ", "\n", "&amp;", "&lt;", "&nbsp;", "&#10;",
        "<", ">", '"', "<b>", "</b>", "<svg><path d='M0'/></svg>", "<table><tr><td>", "</td>",
        "<pre>\n x\n</pre>", '<p"q>', "<x-y z=1>", "</x-y>", "<li>", "é", "\u2003", "\U0001f600",
        "<image>", "</image>", "<?pi x?>", "<!DOCTYPE html>", "<textarea>a<b</textarea>",
        "<span hidden>h</span>", "\r\n", "\t", "<a\tb=c>", "</br>", "<p/>",
    ]  # fmt: skip
    rng = random.Random(7)
    answered = 0
    for _ in range(300):
        page = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 40)))
        serialised, tag = _scan_input(page)
        fast = scan._scan_fast(serialised, tag)
        if fast is None:
            continue
        answered += 1
        _assert_same_scan(fast, scan._scan(serialised, tag), page)
    assert answered > 100


@pytest.mark.parametrize(
    ("text", "width"),
    [
        ("<p>plain ASCII</p>", 1),
        ("<p>caf\u00e9 \xa0</p>", 1),
        ("<p>\u201cquoted\u201d \u3000</p>", 2),
        ("<p>\U0001f600 outside the BMP</p>", 4),
        ("<p>\ud83d\ude00 two lone surrogates</p>", 4),
        ("<p>one lone \udc00</p>", 4),
    ],
)
def test_code_points_use_the_narrowest_width_and_round_trip(text: str, width: int) -> None:
    from readerproxy.engine.parse import scan

    codes = scan.code_points(text)
    assert codes.dtype.itemsize == width
    assert len(codes) == len(text)
    assert scan._text(codes) == text


@pytest.mark.parametrize(
    "body",
    [
        "plain ASCII &amp; more",
        "caf\u00e9 &nbsp; na\u00efve",
        "\u201cquoted\u201d and \u3000 ideographic space",
        "\U0001f600 outside the BMP",
    ],
)
def test_every_width_gives_the_general_scans_answer(body: str) -> None:
    """The fast scan reads 1-, 2- or 4-byte code points by page; each agrees with the general scan."""
    from readerproxy.engine.parse import scan

    page = f"<html><body><p>{body}</p>\n<div><a href='/x'>{body}</a> tail</div></body></html>"
    serialised, tag = _scan_input(page)
    fast = scan._scan_fast(serialised, tag)
    assert fast is not None
    _assert_same_scan(fast, scan._scan(serialised, tag))


def test_tag_names_read_once_per_tag_id_match_every_elements_own_name() -> None:
    from selectolax.lexbor import LexborHTMLParser

    from readerproxy.engine.parse import scan

    page = (
        "<svg><clipPath><foreignObject><div>x</div></foreignObject></clipPath><a>svg link</a></svg>"
        "<clippath></clippath><a>link</a><my-el><MY-EL><my-El2></my-El2></MY-EL></my-el><math><mi>x</mi></math>"
    )
    elements = LexborHTMLParser(page).css("*")
    names = scan._tag_names(elements)
    assert names == [(node.tag or "").lower() for node in elements]
    assert (
        names.count("clippath") == 2
        and names.count("my-el") == 2
        and "my-el2" in names
        and names.count("a") == 2
    )


# --- id, class and role per element ----------------------------------------------------------------

ATTRIBUTE_PAGES = [
    PAGE,
    '<div id="a&amp;b" class="x&quot;y" role="r&lt;s&gt;t">escaped in the serialisation</div>',
    '<div id=\'q"q\' class="nb\u00a0sp" role="&foo; &#65; &copy">quotes, nbsp, other references</div>',
    '<div id class="" role>valueless and empty: both serialise as =""</div>',
    '<div ID="UP" Class="C" ROLE="R">upper-case names in the source</div>',
    '<div id="a" id="b" class="c1" class="c2">duplicates: the first wins</div>',
    '<svg ID="s" CLASS="c" xlink:role="xr" role="r" xml:id="xi" viewbox="0 0 1 1"><circle id="c"/></svg>',
    '<svg><foreignObject><div xlink:role="z" id="in">x</div></foreignObject></svg><math id="m"><mi class="k">x</mi></math>',
    '<div id="tab\tnl\ncr\rx" class="<b>" role=">">newlines and angle brackets in values</div>',
    '<div =foo="1" id="z">odd</div><div "id"="q" id="w">odd</div><p id="&amp;amp; &AMP; &nbsp; &lt">x</p>',
    '<div class=" a  b " role=" Main ">spaces kept</div><p class="&lt;&gt;&amp;&quot;&nbsp;">all five</p>',
]


def _assert_attributes_as_lexbor_reads_them(doc, where: str = "") -> None:
    for name, values in (("id", doc.ident), ("class", doc.classes), ("role", doc.role)):
        assert values == [node.attributes.get(name) for node in doc.elements], (name, where)


@pytest.mark.parametrize("kernels", [True, False])
@pytest.mark.parametrize("page", ATTRIBUTE_PAGES + TRICKY)
def test_id_class_role_are_what_each_node_gives(
    page: str, kernels: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    from readerproxy.engine.parse import clean, scan

    if not kernels:  # what READERPROXY_PURE=1 gives: the numpy or general scan and one pass over the nodes
        monkeypatch.setattr(clean, "native", None)
        monkeypatch.setattr(scan, "native", None)
    _assert_attributes_as_lexbor_reads_them(parse(page), page)


def test_id_class_role_values() -> None:
    doc = parse(ATTRIBUTE_PAGES[1] + ATTRIBUTE_PAGES[3] + ATTRIBUTE_PAGES[4])
    first, second, third = (i for i, name in enumerate(doc.tag) if name == "div")
    assert (doc.ident[first], doc.classes[first], doc.role[first]) == ("a&b", 'x"y', "r<s>t")
    assert (doc.ident[second], doc.classes[second], doc.role[second]) == (None, "", None)
    assert (doc.ident[third], doc.classes[third], doc.role[third]) == ("UP", "C", "R")
    body = doc.tag.index("body")
    assert (doc.ident[body], doc.classes[body], doc.role[body]) == (None, None, None)


@pytest.mark.slow
@pytest.mark.one_implementation  # `kernels` sets the implementation itself
@pytest.mark.parametrize("kernels", [True, False])
@pytest.mark.parametrize("name", ["scrapinghub", "readability", "wcxb-dev"])
def test_id_class_role_on_every_dataset_page(
    shared_datasets, name: str, kernels: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    from readerproxy.engine.parse import clean, scan
    from readerproxy.research.datasets import load_dataset

    if not kernels:
        monkeypatch.setattr(clean, "native", None)
        monkeypatch.setattr(scan, "native", None)
    pages = load_dataset(name).pages
    assert pages
    for page in pages:
        _assert_attributes_as_lexbor_reads_them(parse(page.read_html()), page.id)


def test_meta_is_every_meta_elements_attributes_in_order() -> None:
    """`Document.meta`: what `tree.css("meta")` gives, node by node, once per Document; a <meta>
    inside a hidden element is gone with it, like every node of the cleaned tree."""
    doc = parse(
        '<html><head><meta charset="utf-8"><meta property="og:type" content="article">'
        '<meta name="description" content=""></head><body><div hidden><meta name="x" content="y"></div>'
        "<p>Text</p><meta itemprop=author content='Ann'></body></html>"
    )
    assert doc.meta == [node.attributes for node in doc.tree.css("meta")]
    assert [attrs.get("content") for attrs in doc.meta] == [None, "article", "", "Ann"]
    assert doc.meta is doc.meta


def test_indices_of_reads_each_tag_list_as_asked_and_gives_lists_to_keep() -> None:
    """`indices_of` keeps the positions of the last tag list it was asked about twice: answers stay
    those of a scan for every name, whichever Document is asked in between, and a caller that
    changes the list it got changes no later answer."""
    first = parse("<html><body><p>a</p><div><p>b</p><br><p>c</p></div><meta name=x></body></html>")
    second = parse("<html><body><article><p>x</p></article><p>y</p></body></html>")

    def scanned(tags: list[str], name: str) -> list[int]:
        return [index for index, tag in enumerate(tags) if tag == name]

    for doc in (first, first, second, first, second, second, first):
        for name in ("p", "br", "meta", "article", "div", "absent"):
            answer = document.indices_of(doc.tag, name)
            assert answer == scanned(doc.tag, name)
            answer.append(-1)  # the caller's own list
            assert document.indices_of(doc.tag, name) == scanned(doc.tag, name)
    assert len(document.indices_of(first.tag, "p")) == 3


def test_print_only_utility_classes_are_removed() -> None:
    """Bootstrap's `visible-print`/`d-none d-print-block`, Tailwind's `hidden print:block` and a
    site's own `print-only` show an element on paper alone: no reader sees it on screen."""
    doc = parse(
        "<body><div class='visible-print-block'>Printed copy header</div>"
        "<div class='d-none d-print-block'>Citation for paper</div>"
        "<div class='hidden print:block'>Tailwind paper note</div>"
        "<img class='print-only' src='/logo-print.png'>"
        "<p class='d-none d-md-block'>Wide screens only</p>"
        "<p>The article itself.</p></body>"
    )
    text = token_text(doc)
    assert "Printed copy" not in text and "Citation" not in text and "Tailwind" not in text
    assert "img" not in doc.tag
    assert "Wide screens only" in text and "The article itself." in text


def test_classes_the_inline_stylesheet_shows_only_in_print_are_removed() -> None:
    """A class hidden on screen and shown by the page's own `@media print` rules (or hidden in
    `@media screen`) is a print header; one hidden on narrow screens only is responsive and stays,
    and a long block printed open (an FAQ's answer) is a collapsed panel, kept."""
    answer = "This answer explains the collection schedule in plenty of words. " * 8
    doc = parse(
        "<html><head><style>/* print */ .paper-head, #stamp { display:none }"
        "@media print { .paper-head { display: block } #stamp { display: inline !important } }"
        "@media only screen { .for-paper { display: none } }"
        "@media screen and (max-width: 600px) { .wide { display: none } }"
        ".faq-answer { display: none } @media print { .faq-answer { display: block } }"
        "</style></head><body><div class='paper-head'>Riverside Council, 1 High Street</div>"
        "<span id='stamp'>Page 1</span><div class='for-paper'>Paper only</div>"
        f"<div class='wide'>Wide note</div><div class='faq-answer'>{answer}</div>"
        "<p>Bins are collected on Mondays.</p></body></html>"
    )
    text = token_text(doc)
    assert "Riverside Council" not in text and "Page 1" not in text and "Paper only" not in text
    assert "Wide note" in text and "collection schedule" in text and "Bins are collected" in text


def test_print_only_names_reads_simple_rules_of_inline_css() -> None:
    css = (
        ".a { color: red } .head, #ph { display: none } @font-face { font-family: x }"
        "@media print { @page { margin: 0 } .head { display: block } #ph { display: block } nav { display: none } }"
        "@media not print { .screen { display: none } } div .deep { display: none }"
    )
    assert clean.print_only_names([css]) == frozenset({(".", "head"), ("#", "ph")})


@pytest.mark.parametrize(
    ("sheets", "names"),
    [
        # hidden in one sheet, shown in another's print rules: the two sheets read together
        ([".head { display: none }", "@media PRINT { .head { display: block } }"], {(".", "head")}),
        # a bare screen query hides for every screen; "only" aside; a comment inside the prelude
        (["@media only screen { .ph { display: none } }"], {(".", "ph")}),
        (["@media /* all */ screen{ .ph { display: none } }"], {(".", "ph")}),
        # no print or bare-screen query anywhere: nothing read (the shortcut), nothing found
        ([".head { display: none } @media screen and (max-width: 40em) { .x { display: none } }"], set()),
        (["/* @media print { .head { display: block } } */ .head { display: none }"], set()),
    ],
)
def test_print_only_names_across_sheets_and_queries(sheets: list[str], names: set[tuple[str, str]]) -> None:
    assert clean.print_only_names(sheets) == frozenset(names)


def _matching_brace_by_characters(css: str, opening: int) -> int:
    """`clean._matching_brace` as it was first written, a character at a time (the reference)."""
    depth = 0
    for index in range(opening, len(css)):
        if css[index] == "{":
            depth += 1
        elif css[index] == "}":
            depth -= 1
            if depth == 0:
                return index
    return len(css)


@pytest.mark.parametrize("seed", range(4))
def test_matching_brace_steps_from_brace_to_brace_as_the_character_walk(seed: int) -> None:
    rng = random.Random(seed)
    pieces = ["{", "}", "@font-face", "url(data:font/woff2;base64,AAAA)", "x", " ", ";", "@media print"]
    for _ in range(2000):
        css = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 16)))
        for opening in [i for i, char in enumerate(css) if char == "{"]:
            assert clean._matching_brace(css, opening) == _matching_brace_by_characters(css, opening), css


def test_a_print_header_is_removed_by_its_name_and_its_words_together() -> None:
    """A block named for print that says "Thank you for printing this page" is a header for paper; the
    same words elsewhere, a print button, a heading about 3D printing or a `no-print` wrapper stay."""
    doc = parse(
        "<body><div class='print-header'><img src='/logo.png'><p>Thank you for printing this page.</p></div>"
        "<div id='printFooter'>Printed from https://council.example/bins on 7 December 2026</div>"
        "<p>Thank you for printing this page is what the old header said.</p>"
        "<a class='print-link' href='#'>Print this page</a>"
        "<h3 id='3d-printed-reefs'>3D-printed reefs</h3>"
        "<div class='no-print'>Printed from memory, the recipe still works.</div>"
        "<div class='blueprint'>Printed on the plan: thank you for printing.</div></body>"
    )
    text = token_text(doc)
    assert "Thank you for printing this page." not in text and "Printed from https" not in text
    assert "what the old header said" in text and "Print this page" in text and "3D-printed reefs" in text
    assert "Printed from memory" in text and "Printed on the plan" in text
    assert doc.tag.count("img") == 0


def test_a_print_only_block_holding_the_page_itself_stays() -> None:
    body = "A long article body that the page marks for print. " * 20
    doc = parse(f"<body><div class='print-only'>{body}</div><p>Short footer.</p></body>")
    assert "marks for print" in token_text(doc)
