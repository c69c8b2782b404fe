"""is_probably_readerable: Readability.js's check plus a concentration / link-density condition."""

from __future__ import annotations

from collections.abc import Iterator

from selectolax.lexbor import LexborNode

from readerproxy.engine.kind.readerable import (
    MAX_LINK_DENSITY,
    MIN_SCORE,
    MIN_SIBLING_SCORE,
    is_probably_readerable,
    link_density,
    paragraph_lengths,
    readerable_scores,
)
from readerproxy.engine.parse.document import parse

PARAGRAPH = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt. " * 4


def test_an_article_is_readerable() -> None:
    page = f"<body><nav><a href='/'>Home</a></nav><article>{''.join(f'<p>{PARAGRAPH}</p>' for _ in range(6))}</article></body>"
    assert is_probably_readerable(parse(page))


def test_a_short_page_is_not() -> None:
    assert not is_probably_readerable(parse("<body><p>Hello world.</p></body>"))


def test_paragraphs_in_list_items_and_boilerplate_do_not_count() -> None:
    items = "".join(f"<li><p>{PARAGRAPH}</p></li>" for _ in range(8))
    comments = "".join(f'<p class="comment">{PARAGRAPH}</p>' for _ in range(8))
    assert readerable_scores(parse(f"<body><ul>{items}</ul>{comments}</body>"))[0] == 0
    assert not is_probably_readerable(parse(f"<body><ul>{items}</ul>{comments}</body>"))


def test_div_with_br_counts_as_a_paragraph() -> None:
    text = "<br>".join([PARAGRAPH] * 2)
    assert is_probably_readerable(parse(f"<body><div>{text}</div><div>{text}</div><div>{text}</div></body>"))


def test_a_listing_of_linked_teasers_is_not() -> None:
    """Each teaser is long enough for Readability.js, but they sit apart and the page is links."""
    card = (
        f"<div class='card'><h2><a href='/x'>A story title</a></h2><p><a href='/x'>{PARAGRAPH}</a></p></div>"
    )
    doc = parse(f"<body><main>{card * 6}</main></body>")
    total, together = readerable_scores(doc)
    assert total > 20 and together < 20
    assert not is_probably_readerable(doc)


def test_paragraph_lengths_are_the_stripped_text_of_each_paragraph() -> None:
    """`paragraph_lengths` gives, for every paragraph it looks at, the length of the paragraph's
    text stripped, as Readability.js's `textContent.trim()`, and leaves out paragraphs inside list
    items at any depth (the list-item walk remembers ancestors: a second paragraph in the same item
    and one outside it after it must both be answered right)."""
    page = (
        "<body><p>  padded\u00a0 text \n</p><p> \n </p><p></p>"
        "<p> <b> bold </b> and <i>italic\u2003</i> </p><pre>\n  code\n</pre>"
        "<ul><li><div><p>inside an item</p><p>and another</p></div></li></ul><div><p>after it</p></div>"
        "<article> whole <p>inner</p> </article>"
        "<div>broken<br>by a line <span> </span></div><p>&amp; entities &lt;kept&gt;</p></body>"
    )
    doc = parse(page)
    expected = []
    for node in doc.tree.css("p, pre, article, div"):
        index = doc.elements.index(node)
        if node.tag == "div" and node.css_first("br") is None:
            continue
        if node.tag == "p" and any(a.tag == "li" for a in _ancestors(node)):
            continue
        expected.append((index, len(node.text().strip())))
    assert sorted(paragraph_lengths(doc)) == sorted(expected)
    assert (doc.tag.index("pre"), len("code")) in expected  # the cases are all there
    assert [length for index, length in expected if doc.tag[index] == "p"][:3] == [
        len("padded\u00a0 text"),
        0,
        0,
    ]


def _ancestors(node: LexborNode) -> Iterator[LexborNode]:
    above = node.parent
    while above is not None:
        yield above
        above = above.parent


def test_the_early_stop_decides_as_the_whole_score(shared_datasets) -> None:
    """`is_probably_readerable` stops summing once the score passes (when the page is not mostly
    links): on real pages it answers what the whole sums say, yes and no both among them."""
    answers = set()
    pages = sorted((shared_datasets / "readability").glob("*/source.html"))[::4]
    for path in pages:
        doc = parse(path.read_text(encoding="utf-8"))
        total, together = readerable_scores(doc)
        whole = total > MIN_SCORE and (together > MIN_SIBLING_SCORE or link_density(doc) < MAX_LINK_DENSITY)
        assert is_probably_readerable(doc) == whole, path.parent.name
        answers.add(whole)
    assert answers == {True, False}
