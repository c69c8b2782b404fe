"""From token selections back to sanitised HTML, plain text and markdown."""

from __future__ import annotations

from readerproxy.document import parse
from readerproxy.output import html_to_markdown, render_html, render_text, sanitize

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
    assert "<td>c1</td>" in fragment
    assert "Home" not in fragment  # not selected


def test_render_html_is_sanitised() -> None:
    doc = parse(PAGE, url="https://example.org/")
    fragment = render_html(doc, main_selection(doc))
    lowered = fragment.lower()
    for bad in ("onclick", "onmouseover", "javascript:", "<form", "<input", "<button", "<iframe", "style=", "<script"):
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
    assert fragment == "<div><ul><li>one</li></ul></div>"


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
    dirty = '<p onclick="x">ok</p><script>alert(1)</script><object data="x"></object><a href="vbscript:x">v</a>'
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
