"""is_probably_readerable: Readability.js's check plus a concentration / link-density condition."""

from __future__ import annotations

from readerproxy.document import parse
from readerproxy.readerable import is_probably_readerable, readerable_scores

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
