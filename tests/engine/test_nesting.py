"""The nesting cap applied before parsing: pathological depth is flattened, real pages untouched."""

from __future__ import annotations

import random

import numpy as np
import pytest

from readerproxy.engine import pipeline
from readerproxy.engine.parse import nesting
from readerproxy.engine.parse.nesting import MAX_DEPTH, _tokens, cap_depth, rough_depth


def _tree_depth(html: str) -> int:
    """Depth of the Document the pipeline builds from the markup."""
    doc = pipeline.parse(html, "https://example.com/")
    depth = np.zeros(len(doc.parent), dtype=np.int64)
    for element, parent in enumerate(doc.parent.tolist()):
        if parent >= 0:
            depth[element] = depth[parent] + 1
    return int(depth.max())


def _stack_depth(html: str) -> int:
    """The deepest stack of counted open elements, by the exact rule `cap_depth` applies."""
    stack: list[str] = []
    deepest = 0
    for _, _, name, closing in _tokens(html):
        if closing:
            for index in range(len(stack) - 1, -1, -1):
                if stack[index] == name:
                    del stack[index:]
                    break
        else:
            stack.append(name)
            deepest = max(deepest, len(stack))
    return deepest


def _nested(depth: int, tag: str = "div", inner: str = "deep") -> str:
    return "<html><body>" + f"<{tag}>" * depth + inner + f"</{tag}>" * depth + "<p>after</p></body></html>"


def test_deep_nesting_is_capped_and_keeps_its_text() -> None:
    capped = cap_depth(_nested(100_000))
    assert capped.dropped == 100_000 - MAX_DEPTH
    assert _stack_depth(capped.html) == MAX_DEPTH
    article = pipeline.process(_nested(100_000), url="https://example.com/")
    assert "deep" in article.text and "after" in article.text
    assert _tree_depth(_nested(100_000)) <= MAX_DEPTH + 3  # html, body and the page's own levels


def test_shallow_pages_are_returned_as_they_are() -> None:
    page = _nested(400) * 20  # many tags, but never deeper than 400
    capped = cap_depth(page)
    assert capped.html is page and capped.dropped == 0


def test_unclosed_elements_count_until_something_closes_them() -> None:
    page = "<div>" + "<span>x" * 6000 + "</div>"  # spans left open inside one div
    capped = cap_depth(page)
    assert capped.dropped == 6001 - MAX_DEPTH
    assert _stack_depth(capped.html) == MAX_DEPTH
    assert capped.html.count("x") == 6000


def test_self_closed_svg_children_do_not_nest_but_self_closed_html_does() -> None:
    svg = "<svg>" + '<path d="M0 0"/>' * 6000 + "</svg>"
    assert cap_depth(svg).html is svg
    html_self_closed = "<div/>" * 6000  # "/" is ignored on HTML elements: these nest
    assert cap_depth(html_self_closed).dropped == 6000 - MAX_DEPTH


def test_comments_and_raw_text_are_not_markup() -> None:
    page = (
        "<!--"
        + "<div>" * 6000
        + "--><script>"
        + "<div>" * 6000
        + "</script><style>"
        + "<b>" * 6000
        + "</style>"
    )
    assert cap_depth(page).html is page
    assert _stack_depth(page) == 0


def test_rough_depth_bounds_the_exact_depth_on_random_markup() -> None:
    rng = random.Random(7)
    names = ["div", "span", "p", "b", "br", "li", "ul", "svg", "path", "table", "td"]
    forms = ["<{}>", "</{}>", "<{}/>", "<{} class=x>"]
    for _ in range(2000):
        page = "".join(rng.choice(forms).format(rng.choice(names)) for _ in range(rng.randint(1, 60)))
        assert rough_depth(page) >= _stack_depth(page), page


def test_the_cap_matches_the_exact_depth_on_random_deep_markup() -> None:
    rng = random.Random(11)
    names = ["div", "span", "section", "b"]
    for _ in range(5):
        page = "".join(
            (f"<{rng.choice(names)}>" if rng.random() < 0.8 else f"</{rng.choice(names)}>") + "Q"
            for _ in range(8000)
        )
        capped = cap_depth(page)
        assert _stack_depth(capped.html) <= MAX_DEPTH
        assert capped.html.count("Q") == page.count("Q")
        assert (capped.dropped > 0) == (_stack_depth(page) > MAX_DEPTH)


@pytest.mark.parametrize(
    "opening",
    [
        "<!-->",  # a comment that ends at once
        "<!--->",
        "<!-- x --!>",  # ended by --!>
        "<svg><foreignObject>",  # HTML again inside foreignObject: "/" is ignored
        "<svg><title>",  # svg title is an integration point, not raw text
        "<math><mtext>",
        "<svg><div>",  # a breakout tag leaves foreign content
        "<svg><foreignObject><svg><style>",  # svg style is not raw text
    ],
)
def test_the_tree_builders_contexts_cannot_hide_deep_nesting(opening: str) -> None:
    page = opening + "<div/><span>x" * 3000 + "<!-- -->"
    assert cap_depth(page).dropped > 0, opening
    assert _tree_depth(cap_depth(page).html) <= MAX_DEPTH + 12


def test_the_cap_counts_every_kind_of_string() -> None:
    """`cap_depth`'s first check is `str.count("<")` on strings of one, two and four bytes per character."""
    deep = "<p>é" + "<div>" * 5300 + "text" + "</div>" * 5300
    shallow = "<p>☃</p>" * 6000
    wide = "<p>😀" + "<div>" * 5300 + "</div>" * 5300
    assert nesting.cap_depth(deep).dropped > 0 and nesting.cap_depth(wide).dropped > 0
    assert nesting.cap_depth(shallow).dropped == 0
