"""The C kernels (readerproxy/_native.c) against their Python references, the switch that picks them
(readerproxy._speedups) and the build hook that compiles them (hatch_build.py)."""

from __future__ import annotations

import contextlib
import functools
import importlib
import importlib.util
import logging
import os
import random
import re
import subprocess
import sys
import zlib
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import numpy as np
import pytest
import selectolax.lexbor
from hypothesis import given, settings
from hypothesis import strategies as st
from selectolax.lexbor import LexborHTMLParser, LexborNode

import readerproxy.engine.learn.blocks.columns as blocks_columns
import readerproxy.engine.learn.blocks.context as blocks_context
import readerproxy.engine.learn.blocks.page as blocks_page
import readerproxy.engine.learn.blocks.page_type as blocks_page_type
import readerproxy.engine.learn.blocks.structure as blocks_structure
import readerproxy.engine.learn.blocks.tags as blocks_tags
import readerproxy.engine.learn.model as model_module
from readerproxy import _speedups
from readerproxy.engine import elements as element_module
from readerproxy.engine.extraction import get_extractor
from readerproxy.engine.extractors.auto import first_extractor
from readerproxy.engine.kind import pagekind, pagewords
from readerproxy.engine.kind.pagewords import BITS
from readerproxy.engine.learn.blocks import CONTEXT_FEATURES, FEATURES, context_features, page_blocks
from readerproxy.engine.learn.model import TreeModel, load_model
from readerproxy.engine.parse import clean as clean_module
from readerproxy.engine.parse import document, scan
from readerproxy.engine.parse.clean import clean, read_before_cleaning
from readerproxy.engine.parse.document import parse
from readerproxy.engine.parse.nesting import cap_depth
from readerproxy.engine.parse.scan import VOID_TAGS, _scan_fast, _scan_native, _tag_names
from readerproxy.engine.views import posts as posts_module
from readerproxy.research.datasets import datasets_root, load_dataset

REPO = Path(__file__).resolve().parents[2]
#: The modules of `learn.blocks` that call the C kernels, each reading `native` for its own functions.
LEARN_BLOCKS = (blocks_columns, blocks_structure, blocks_context, blocks_page)


@pytest.fixture(autouse=True)
def implementation() -> str:
    """These tests set kernels against their numpy twins themselves: one run, not the engine
    folder's two (`tests/engine/conftest.py`)."""
    return "kernels"


def _assert_rejects(
    function: Callable[..., object], cases: list[tuple[tuple[Any, ...], type[Exception]]]
) -> None:
    """Each (arguments, error): `function(*arguments)` raises that error (never a crash)."""
    for args, error in cases:
        with pytest.raises(error):
            function(*args)


def _compiled() -> ModuleType:
    """The compiled kernels, built from the `_native.c` of this tree (else the test is skipped)."""
    try:
        module = importlib.import_module("readerproxy._native")
    except ImportError:
        pytest.skip("readerproxy._native is not built (python hatch_build.py)")
    if Path(module.__file__ or "").resolve().parent != _speedups.HERE:
        pytest.skip(f"{module.__file__} is another tree's build: python hatch_build.py")
    if _speedups.source_hash() != module.SOURCE_HASH:
        pytest.skip(f"{module.__file__} is stale: rebuild it (python hatch_build.py)")
    return module


@pytest.fixture(scope="module")
def native() -> ModuleType:
    return _compiled()


# --- scan ------------------------------------------------------------------------------------------

_SCAN_FIELDS = (
    "kind",
    "owner",
    "length",
    "text",
    "chars",
    "in_anchor",
    "newline_after",
    "parent",
    "start",
    "end",
)


def _assert_same_scan(serialised: str, tag: list[str]) -> bool:
    """Native scan == _scan_fast field by field (dtype included), or both None; True when they answered."""
    reference = _scan_fast(serialised, tag)
    got = _scan_native(serialised, tag)
    if reference is None or got is None:
        assert reference is None and got is None, (serialised[:300], reference is None)
        return False
    for name in _SCAN_FIELDS:
        expected, actual = getattr(reference, name), getattr(got, name)
        if name == "text":
            assert actual == expected
        else:
            assert actual.dtype == expected.dtype and np.array_equal(actual, expected), name
    _assert_reads_the_names(serialised, tag, got)
    return True


def _reads_every_name(tag: list[str]) -> bool:
    """Whether the scan's read mode takes these names (printable ASCII without a quote or slash)."""
    return all(name and all(" " < c < "\x7f" and c not in '"/' for c in name) for name in tag)


def _assert_reads_the_names(serialised: str, tag: list[str], given: object) -> None:
    """Told only the number of elements, the kernel reads the names `_tag_names` gives and the same
    fields as when it is given them; it declines only pages with a name it does not read."""
    read = _scan_native(serialised, len(tag))
    if read is None:
        assert not _reads_every_name(tag), serialised[:300]
        return
    assert read.tag == tag
    for name in (*_SCAN_FIELDS, "attributes", "unsure"):
        expected, actual = getattr(given, name), getattr(read, name)
        if isinstance(expected, np.ndarray):
            assert actual.dtype == expected.dtype and np.array_equal(actual, expected), name
        else:
            assert actual == expected, name


def _cleaned(html: str) -> tuple[str, list[str]]:
    """The serialisation and tag names `parse` hands to the scanners."""
    tree = LexborHTMLParser(cap_depth(html).html)
    clean(tree, read_before_cleaning(tree, tree.html or ""))
    return tree.html or "", _tag_names(tree.css("*"))


@pytest.mark.parametrize(
    "html",
    [
        "<p>one &amp; two &lt;three&gt;&nbsp;four</p>",
        '<div title="a > b">x<a href="/">in <b>bold</b>\nlink</a>\n\n after</div><br><img src="x.png">',
        "<!-- a > b --><p>after a comment</p><!--x--><p>\n</p>",
        "<svg><image href='x'></image><path d='M0 0'/></svg><math><mi>x</mi></math>",
        "<table><tr><td>é ü ☃ 😀 \u3000 \u2028</td></tr></table>",
        "<custom-Element data-x='\"'>text</custom-Element><a><a>nested</a></a>",
        "",
        "plain text only",
    ],
)
def test_scan_matches_scan_fast_on_parsed_pages(native: ModuleType, html: str) -> None:
    _assert_same_scan(*_cleaned(html))


@pytest.mark.parametrize(
    ("serialised", "tag"),
    [
        ("<p>x</p>", ["p"]),
        ("<P>x</P>", ["p"]),
        ("<p>x</div>", ["p"]),  # an end tag naming another element
        ("<p>x", ["p"]),  # never closed
        ("</p><p>", ["p"]),  # closes nothing
        ("<p>x</p>", ["p", "b"]),  # fewer start tags than elements
        ("<p>x</p>", ['p"']),  # a quoted name
        ("<p>x\x00</p>", ["p"]),  # a NUL
        ("<p>a < b</p>", ["p"]),  # a "<" that is text
        ('<p title="<b>">x</p>', ["p"]),  # a "<" and ">" in an attribute value
        ("<p><!-- <b> -->x</p>", ["p"]),  # a tag inside a comment
        ('<p a"b="c>d">x</p>', ["p"]),  # a quote in an attribute name
        ('<a"b c="d>">x</a>', ["a"]),
        ("<p>x</p >", ["p"]),
        ("<br>", ["br"]),
        ("<p><br></p>", ["p", "br"]),
        ("<?xml x?><!DOCTYPE html><p>x</p>", ["p"]),
        ("<!---><p>x</p>", ["p"]),
        ("<p/>x</p>", ["p"]),
        ("<p>x</p>", []),
        ("<p>&amp;lt; &nbsp &#38;</p>", ["p"]),
    ],
)
def test_scan_matches_scan_fast_on_edge_cases(native: ModuleType, serialised: str, tag: list[str]) -> None:
    if _other_escape(serialised):
        assert native.scan(serialised, tag, VOID_TAGS) is None
    else:
        _assert_same_scan(serialised, tag)


_ESCAPE = re.compile(r"&(?!amp;|lt;|gt;|nbsp;)")


def _other_escape(serialised: str) -> bool:
    """A "&" in text that is none of Lexbor's four escapes: the kernel leaves it to html.unescape."""
    return any(_ESCAPE.search(text) for text in re.split(r"<[^>]*>", serialised))


_PIECES = st.sampled_from(
    [
        "<p>", "</p>", "<a href=\"x\">", "</a>", "<br>", "<div class='c'>", "</div>", "<B>", "</b>", '"', ">",
        "<", "<!--", "-->", "<!doctype html>", "&amp;", "&lt;", "&nbsp;", "&", "\n", " ", "text", "é", "☃", "😀",
        "\x00", "<p title=\"a>b\">", "</",
    ]
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES, max_size=40))
def test_scan_agrees_with_scan_fast_on_random_markup(pieces: list[str]) -> None:
    native = _compiled()
    serialised = "".join(pieces)
    # The elements `_TOKEN` reads, so that the scanners often answer rather than decline.
    tag = [m.group(3).lower() for m in scan._TOKEN.finditer(serialised) if m.group(3) and not m.group(2)]
    if _other_escape(serialised) and native.scan(serialised, tag, VOID_TAGS) is None:
        return
    _assert_same_scan(serialised, tag)


_NAMES = ("p", "a", "div", "span", "b", "svg", "image", "custom-el", "td", "Li", "pre")
_TEXTS = (
    "x",
    "hello world",
    " ",
    "\n",
    "\n\n",
    "&amp;",
    "&lt;tag&gt;",
    "&nbsp;",
    "é",
    "☃",
    "😀",
    "\u3000",
    "\xa0",
    "a\nb",
)
_ATTRIBUTES = (
    "",
    ' class="c"',
    ' title="a > b"',
    ' title="a < b"',
    " data-x='\"'",
    ' href="/x?a=1&amp;b=2"',
    ' x="-->"',
)
_MARKUP = ("<!-- c -->", "<!-- a > b -->", "<!---->", "<!-- <p> -->", "<?pi x?>")


def _random_page(rng: random.Random) -> tuple[str, list[str]]:
    """A well-formed serialisation like Lexbor's (nested elements, void ones, comments, escapes,
    ">" and "<" in attribute values and comments) and its elements' tag names."""
    out: list[str] = ["<!DOCTYPE html>"] if rng.random() < 0.3 else []
    tag: list[str] = []

    def element(depth: int) -> None:
        name = rng.choice(_NAMES)
        tag.append(name.lower())
        out.append(f"<{name}{rng.choice(_ATTRIBUTES)}>")
        for _ in range(rng.randint(0, 4 if depth < 5 else 0)):
            draw = rng.random()
            if draw < 0.4:
                out.append(rng.choice(_TEXTS))
            elif draw < 0.55:
                void = rng.choice(("br", "img", "hr", "input", "wbr"))
                tag.append(void)
                out.append(f"<{void}{rng.choice(_ATTRIBUTES)}>")
            elif draw < 0.62:
                out.append(rng.choice(_MARKUP))
            else:
                element(depth + 1)
        out.append(f"</{name}>")

    element(0)
    if rng.random() < 0.05:  # an element the serialisation does not have: both decline
        tag[rng.randrange(len(tag))] = "q"
    return "".join(out), tag


@settings(max_examples=300, deadline=None)
@given(st.randoms(use_true_random=False))
def test_scan_agrees_with_scan_fast_on_random_pages(rng: random.Random) -> None:
    _compiled()
    _assert_same_scan(*_random_page(rng))


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200), st.lists(st.text(max_size=8), max_size=10))
def test_scan_takes_any_string_without_crashing(serialised: str, tag: list[str]) -> None:
    for tags in (tag, len(tag)):
        result = _compiled().scan(serialised, tags, VOID_TAGS)
        assert result is None or (isinstance(result, tuple) and len(result) == len(_SCAN_FIELDS) + 5)
        if result is not None:  # id, class, role: one entry per element; unsure: element indices
            assert [len(values) for values in result[-5:-2]] == [len(tag)] * 3
            assert all(0 <= index < len(tag) for index in result[-2])
            assert result[-1] == tag  # the names, given or read


def test_scan_rejects_bad_arguments(native: ModuleType) -> None:
    with pytest.raises(TypeError):
        native.scan(b"<p>", ["p"], VOID_TAGS)
    with pytest.raises(TypeError):
        native.scan("<p>", ("p",), VOID_TAGS)
    with pytest.raises(TypeError):
        native.scan("<p>", ["p", 1], VOID_TAGS)

    class Name(str):
        pass

    with pytest.raises(TypeError):
        native.scan("<p>", [Name("p")], VOID_TAGS)
    with pytest.raises(TypeError):
        native.scan("<p>", ["p"], ["br"])
    with pytest.raises(TypeError):
        native.scan("<p>", ["p"])
    with pytest.raises(TypeError):
        native.scan("<p>", 1.0, VOID_TAGS)
    with pytest.raises(ValueError):
        native.scan("<p>", -1, VOID_TAGS)
    with pytest.raises(OverflowError):
        native.scan("<p>", 2**80, VOID_TAGS)


@pytest.mark.parametrize(
    ("serialised", "n_elements", "names"),
    [
        ("<html><body><p>x</p><br><a>y</a></body></html>", 5, ["html", "body", "p", "br", "a"]),
        ("<html><body><P>x</P></body></html>", 3, ["html", "body", "p"]),
        ("<svg><foreignObject></foreignObject></svg>", 2, ["svg", "foreignobject"]),
        ("<p>x</p>", 2, None),  # fewer start tags than elements
        ("<p>x</p><p>y</p>", 1, None),  # more
        ("<café>x</café>", 1, None),  # a name _tag_names might lower-case differently
        ("<p>x</p>", 0, None),
    ],
)
def test_scan_reads_the_tag_names_when_told_their_number(
    native: ModuleType, serialised: str, n_elements: int, names: list[str] | None
) -> None:
    result = native.scan(serialised, n_elements, VOID_TAGS)
    assert (result[-1] if result is not None else None) == names
    if result is not None:
        assert len(set(map(id, result[-1]))) == len(set(result[-1]))  # one str object per distinct name


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="<aAsSiIcCrRpPtTéK\u212a😀 >", max_size=60))
def test_tags_in_source_finds_what_the_regular_expression_finds(html: str) -> None:
    names = ("script", "style", "iframe", "i", "sc", "p")
    expected = [name for name in names if re.search("<" + name, html, re.ASCII | re.IGNORECASE)]
    assert _compiled().tags_in_source(html, names) == expected


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="<aAsSiIcCrRpPtTéK\u212a😀 >", max_size=60))
def test_source_tags_is_tags_in_source_and_the_count_of_lt(html: str) -> None:
    names = ("script", "style", "iframe", "i", "sc", "p")
    expected = [name for name in names if re.search("<" + name, html, re.ASCII | re.IGNORECASE)]
    assert _compiled().source_tags(html, names) == (expected, html.count("<"))


def test_source_tags_on_every_kind_of_string(native: ModuleType) -> None:
    for filler in ("", "é", "☃", "😀", "\u013c\u3c3c"):  # the last ones hold the byte of "<"
        html = filler * 7 + "<p>" + filler + "<SCRIPT>x</script><Sty"
        assert native.source_tags(html, ("style", "script", "p", "sty")) == (["script", "p", "sty"], 4)
    assert native.source_tags("<", ("p",)) == ([], 1) and native.source_tags("", ("p",)) == ([], 0)
    with pytest.raises(TypeError):
        native.source_tags("<p>", ["p"])


def _hidden_by_query(tree: LexborHTMLParser) -> tuple[list[int], list[int], list[int]]:
    """What `_native.hidden_candidates` must give: the query's matches (each once, in document
    order) among `tree.css("*")`, the index after each one's subtree, the `[aria-controls]` elements."""
    elements = tree.css("*")
    position = {node.mem_id: index for index, node in enumerate(elements)}
    matches = list(
        dict.fromkeys(position[node.mem_id] for node in tree.css(clean_module._HIDDEN_OR_SCREEN_READER))
    )
    ends = [index + len(elements[index].css("*")) for index in matches]
    return matches, ends, [position[node.mem_id] for node in tree.css("[aria-controls]")]


def _assert_hidden_candidates(native: ModuleType, html: str) -> bool:
    """The kernel on `html` gives the query's answer, or declines (None); whether it answered."""
    scan._walk_setup()
    tree = LexborHTMLParser(html)
    assert tree.root is not None
    assert [n.mem_id for n in clean_module.elements_of(tree)] == [n.mem_id for n in tree.css("*")]
    read = native.hidden_candidates(tree.root, len(clean_module.elements_of(tree)))
    if read is None:
        return False
    assert read == _hidden_by_query(tree)
    return True


def test_hidden_candidates_read_the_check_page_as_the_query(native: ModuleType) -> None:
    assert _assert_hidden_candidates(native, clean_module._CANDIDATES_CHECK_PAGE)
    assert clean_module._candidates_check(clean_module._CANDIDATES_CHECK_PAGE)


@settings(max_examples=300, deadline=None)
@given(st.randoms(use_true_random=False))
def test_hidden_candidates_match_the_query_on_random_sources(rng: random.Random) -> None:
    extra = rng.choice(
        (
            "<div hidden><p aria-hidden=true>x</p></div>",
            "<span style='display:none'>y</span><b class='sr-only'>z</b>",
            "<em id=printHeader class=visually-hidden aria-controls=q>w</em>",
        )
    )
    _assert_hidden_candidates(_compiled(), _random_source(rng) + extra)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["scrapinghub", "readability", "wcxb-dev"])
def test_hidden_candidates_and_source_tags_on_every_dataset_page(native: ModuleType, name: str) -> None:
    pages = _dataset_pages(name)
    answered = [_assert_hidden_candidates(native, html) for html in pages]
    assert sum(answered) > 0.99 * len(answered)  # the kernel is the path almost every page takes
    for html in pages:
        names = clean_module._STRIPPED_TAGS
        expected = [n for n in names if re.search("<" + re.escape(n), html, re.ASCII | re.IGNORECASE)]
        assert native.source_tags(html, names) == (expected, html.count("<"))


def _assert_attributed(native: ModuleType, html: str, first: int) -> bool:
    """`_native.attributed_elements` on `html` from element `first` on gives what `node.attributes`
    holds of the thread finder's names (`posts.attributed_reference`), or declines (None); whether
    it answered. Another element count always declines."""
    scan._walk_setup()
    tree = LexborHTMLParser(html)
    assert tree.root is not None
    elements = tree.css("*")
    names = posts_module._ANCHOR_NAMES
    assert native.attributed_elements(tree.root, len(elements) + 1, first, names) is None
    read = native.attributed_elements(tree.root, len(elements), first, names)
    if read is None:
        return False
    assert read == posts_module.attributed_reference(elements, first, names)
    return True


def test_attributed_elements_read_the_check_page_as_node_attributes(native: ModuleType) -> None:
    page = posts_module._ATTRIBUTED_CHECK_PAGE
    for first in range(12):
        assert _assert_attributed(native, page, first)
    assert posts_module._attributed_agrees()
    tree = LexborHTMLParser(page)
    read = native.attributed_elements(tree.root, len(tree.css("*")), 0, ("href", "data-timestamp"))
    assert (
        read is not None and {"href": "/u/1"} in read.values() and {"data-timestamp": None} in read.values()
    )
    _assert_rejects(
        native.attributed_elements,
        [
            ((tree.root, 5, 0, ["href"]), TypeError),
            ((tree.root, 5, 0, (1,)), TypeError),
            ((tree.root, 5, 0, ("a",) * 33), ValueError),
            (("<p>", 5, 0, ("a",)), TypeError),
        ],
    )


@settings(max_examples=300, deadline=None)
@given(st.randoms(use_true_random=False))
def test_attributed_elements_match_node_attributes_on_random_sources(rng: random.Random) -> None:
    extra = rng.choice(
        (
            "<a href=/u/x title=2020-01-01>x</a>",
            "<time datetime>y</time><b rel=author itemprop=''>z</b>",
            "<svg><a xlink:href=#q title=t>w</a></svg>",
        )
    )
    _assert_attributed(_compiled(), _random_source(rng) + extra, rng.randrange(0, 40))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["scrapinghub", "readability"])
def test_attributed_elements_on_every_dataset_page(
    native: ModuleType, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The kernel answers on every page and agrees with `node.attributes`; and the thread finder's
    anchors are the same by the kernel and by the query it replaces (which finds also elements
    matched by a namespaced attribute alone, and no `href` off a link)."""
    for html in _dataset_pages(name):
        assert _assert_attributed(native, html, 0)
        doc = parse(html)
        after = int(doc.tokens.kind.shape[0]) // 2
        with_kernel = posts_module._Page(doc, after)
        with_query = posts_module._Page.__new__(posts_module._Page)
        with_query.doc, with_query.first = doc, with_kernel.first
        expected = with_kernel._attribute_anchors()
        with monkeypatch.context() as patched:
            patched.setattr(posts_module, "native", None)
            assert with_query._attribute_anchors() == expected


def _assert_early_read(native: ModuleType, html: str) -> bool:
    """`_native.early_read` on `html` gives what the query `clean._BEFORE_CLEANING` reads (or
    declines: None), and `clean` leaves the same tree either way; whether it answered."""
    scan._walk_setup()
    tree = LexborHTMLParser(html)
    assert tree.root is not None
    read = native.early_read(tree.root)
    if read is None:
        return False
    title, json_ld, noscript, styles = read
    expected = clean_module._read_by_query(tree, [])
    assert (clean_module._collapsed_title(title), json_ld, styles) == (
        expected.title,
        expected.json_ld,
        expected.styles,
    )
    assert not expected.boundaries and not expected.fragments
    assert [n.mem_id for n in tree.tags("noscript")] == [n.mem_id for n in expected.noscripts]
    assert noscript in (0, 1, 2) and (noscript == 0) == (not expected.noscripts)
    if noscript == 1:  # every <noscript> outlives the stripping of the other raw-text containers
        stripped = LexborHTMLParser(html)
        stripped.strip_tags(list(clean_module._STRIPPED_TAGS))
        assert len(stripped.tags("noscript")) == len(expected.noscripts)
    cleaned = [LexborHTMLParser(html), LexborHTMLParser(html)]
    stripped_tags = clean_module._tags_in_source(html, clean_module._STRIPPED_TAGS)
    clean(cleaned[0], read_before_cleaning(cleaned[0], html, stripped_tags))
    clean(cleaned[1], clean_module._read_by_query(cleaned[1], stripped_tags))
    assert cleaned[0].html == cleaned[1].html
    return True


def test_early_read_reads_the_check_page_as_the_query(native: ModuleType) -> None:
    assert _assert_early_read(native, clean_module._EARLY_CHECK_PAGE)
    assert clean_module._early_check(clean_module._EARLY_CHECK_PAGE)
    for page in (
        "<object><noscript>x</noscript></object><noscript>y</noscript>",
        "<svg><style><noscript>x</noscript></style></svg>",
        "<noscript><noscript>a</noscript></noscript><p>b</p>",
        "<title>a<b>b</b></title><svg><title>c<b>d</b></title></svg>",
    ):
        _assert_early_read(native, page)
    assert native.early_read(LexborHTMLParser("<object><noscript></noscript></object>").root)[2] == 2
    assert native.early_read(LexborHTMLParser("<p>x</p>").root) == (None, [], 0, [])
    for streamed in ("<div hidden id='S:1'>x</div>", "<div id=afph1 style='display:none'>x</div>"):
        assert native.early_read(LexborHTMLParser(streamed).root) is None
    with pytest.raises(TypeError):
        native.early_read("<p>")


@settings(max_examples=300, deadline=None)
@given(st.randoms(use_true_random=False))
def test_early_read_matches_the_query_on_random_sources(rng: random.Random) -> None:
    extra = rng.choice(
        (
            "<title> a  b </title><script type='application/LD+json'>{}</script>",
            "<style>@media print{.x{display:none}}</style><noscript><img src=a.png></noscript>",
            "<object><noscript><p>z</p></noscript></object><noscript>w</noscript>",
            "<svg><title>t</title><style>print</style><script type=application/ld+json>[]</script></svg>",
        )
    )
    _assert_early_read(_compiled(), _random_source(rng) + extra)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["scrapinghub", "readability", "wcxb-dev"])
def test_early_read_on_every_dataset_page(native: ModuleType, name: str) -> None:
    answered = [_assert_early_read(native, html) for html in _dataset_pages(name)]
    assert sum(answered) > 0.9 * len(answered)  # the kernel is the path most pages take


def test_tags_in_source_on_every_kind_of_string_and_bad_arguments(native: ModuleType) -> None:
    for filler in ("", "é", "☃", "😀", "\u013c\u3c3c"):  # the last ones hold the byte of "<"
        html = filler * 7 + "<p>" + filler + "<SCRIPT>x</script><Sty"
        assert native.tags_in_source(html, ("style", "script", "p", "sty")) == ["script", "p", "sty"]
    assert native.tags_in_source("<", ("p",)) == [] and native.tags_in_source("", ("p",)) == []
    with pytest.raises(TypeError):
        native.tags_in_source("<p>", ["p"])
    with pytest.raises(TypeError):
        native.tags_in_source("<p>", ("",))
    with pytest.raises(TypeError):
        native.tags_in_source("<p>", ("é",))
    with pytest.raises(ValueError):
        native.tags_in_source("<p>", ("P",))
    with pytest.raises(ValueError):
        native.tags_in_source("<p>", tuple(f"n{i}" for i in range(65)))


# --- id, class and role from the start tags -----------------------------------------------------------


@pytest.mark.parametrize(
    ("serialised", "expected"),
    [
        ("<p>x</p>", [(None, None, None)]),
        ('<p id="a" class="b c" role="main" title="t">x</p>', [("a", "b c", "main")]),
        ('<p role="r" id="i">x</p>', [("i", None, "r")]),
        ('<p id="a&amp;b&quot;c&nbsp;d&lt;e&gt;f">x</p>', [('a&b"c\xa0d<e>f', None, None)]),
        ('<p title="&copy;" id="x">x</p>', [("x", None, None)]),  # other attributes are not decoded
        ('<p id="&copy;">x</p>', "unsure"),  # not one of Lexbor's escapes: html.unescape would decide
        ('<p id="&amp">x</p>', "unsure"),
        ('<p id="">x</p>', "unsure"),  # valueless (None) or empty ("") serialise alike
        ('<p class="">x</p>', "unsure"),
        ('<p ID="x">x</p>', "unsure"),  # attributes are keyed by the name as it is
        ('<p id="a" id="b">x</p>', "unsure"),
        ('<p id="a"id="b">x</p>', "unsure"),
        ("<p id=a>x</p>", "unsure"),
        ('<p  id="a">x</p>', "unsure"),
        ('<p hidden id="a">x</p>', "unsure"),  # Lexbor writes hidden=""
        ('<p a"b"="c" id="d">x</p>', "unsure"),
        ('<p a\'b="c" id="d">x</p>', "unsure"),
        ('<p =x="1" id="d">x</p>', "unsure"),
        ('<svg xlink:role="x" id="s">', [("s", None, None)]),
        ('<p data-id="x" classes="y" xrole="z">x</p>', [(None, None, None)]),
        ('<p id="é☃😀">x</p>', [("é☃😀", None, None)]),
    ],
)
def test_scan_reads_id_class_role_from_start_tags(
    native: ModuleType, serialised: str, expected: list[tuple[str | None, ...]] | str
) -> None:
    tag = ["svg" if serialised.startswith("<svg") else "p"]
    if tag == ["svg"]:
        serialised += "</svg>"
    result = native.scan(serialised, tag, VOID_TAGS)
    assert result is not None
    ident, classes, role, unsure = result[-5:-1]
    if expected == "unsure":
        assert (unsure, ident, classes, role) == ([0], [None], [None], [None])
    else:
        assert unsure == []
        assert list(zip(ident, classes, role, strict=True)) == expected


_ATTRIBUTE_NAMES = (
    "id",
    "ID",
    "Id",
    "class",
    "CLASS",
    "role",
    "Role",
    "xlink:role",
    "xml:id",
    "data-id",
    "title",
)
_ATTRIBUTE_VALUES = (
    None,  # valueless
    "",
    "x",
    " a  b ",
    "main",
    "&amp;",
    "&amp;amp;",
    "&quot;",
    '"',
    "'",
    "&nbsp;",
    "\xa0",
    "&lt;b&gt;",
    "<b>",
    ">",
    "&copy",
    "&copy;",
    "&#65;",
    "&",
    "a\nb\rc\td",
    "é☃😀",
)
_SOURCE_TAGS = ("div", "p", "span", "DIV", "a", "svg", "circle", "math", "mi", "foreignObject", "img", "br")


def _random_source(rng: random.Random) -> str:
    """HTML source (not a serialisation) whose elements carry tricky id, class and role attributes."""
    out: list[str] = []

    def attributes() -> str:
        parts = []
        for _ in range(rng.randint(0, 4)):
            name, value = rng.choice(_ATTRIBUTE_NAMES), rng.choice(_ATTRIBUTE_VALUES)
            quote = rng.choice(("'", '"'))
            parts.append(name if value is None else f"{name}={quote}{value.replace(quote, '')}{quote}")
        return "".join(" " + part for part in parts)

    def element(depth: int) -> None:
        name = rng.choice(_SOURCE_TAGS)
        out.append(f"<{name}{attributes()}>")
        for _ in range(rng.randint(0, 3 if depth < 5 else 0)):
            if rng.random() < 0.4:
                out.append(rng.choice(("text", "a &amp; b", "\n")))
            else:
                element(depth + 1)
        out.append(f"</{name}>")

    for _ in range(rng.randint(1, 3)):
        element(0)
    return "".join(out)


@settings(max_examples=300, deadline=None)
@given(st.randoms(use_true_random=False))
def test_id_class_role_match_the_nodes_on_random_sources(rng: random.Random) -> None:
    _compiled()
    assert scan.native is not None
    doc = parse(_random_source(rng))
    for name, values in (("id", doc.ident), ("class", doc.classes), ("role", doc.role)):
        assert values == [node.attributes.get(name) for node in doc.elements], name


def _dataset_pages(name: str) -> list[str]:
    if datasets_root() is None:
        pytest.skip("datasets not available")
    return [page.read_html() for page in load_dataset(name)]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["scrapinghub", "readability"])
def test_scan_matches_scan_fast_on_every_dataset_page(native: ModuleType, name: str) -> None:
    answered = [_assert_same_scan(*_cleaned(html)) for html in _dataset_pages(name)]
    assert sum(answered) > 0.9 * len(answered)  # the kernel is the path most pages take


@pytest.mark.slow
@pytest.mark.parametrize("name", ["scrapinghub", "readability", "wcxb-dev"])
def test_scan_reads_id_class_role_of_almost_every_element(native: ModuleType, name: str) -> None:
    """Where the kernel answers, it is unsure of few elements (the values themselves are checked
    against the nodes in tests/engine/test_document.py, on every page)."""
    elements = unsure = 0
    for html in _dataset_pages(name):
        serialised, tag = _cleaned(html)
        result = native.scan(serialised, tag, VOID_TAGS)
        if result is not None:
            elements += len(tag)
            unsure += len(result[-2])
    assert elements > 0 and unsure < 0.05 * elements


# --- walk: the scan's fields read from the tree ------------------------------------------------------


def _assert_walk_is_the_scan(html: str) -> bool:
    """For a page cleaned as `parse` cleans it, the walk gives exactly the scan's fields, with the id,
    class and role the scan was unsure of read from the nodes (`_id_class_role`, as `parse` reads
    them), or declines; True when it answered."""
    assert scan._WALK, "Lexbor's functions were not found in selectolax's module"
    tree = LexborHTMLParser(cap_depth(html).html)
    clean(tree, read_before_cleaning(tree, tree.html or ""))
    elements = tree.css("*")
    walked = scan._walk_native(tree, len(elements))
    if walked is None:
        return False
    scanned = _scan_native(tree.html or "", len(elements))
    assert scanned is not None, html[:300]
    for name in (*_SCAN_FIELDS, "tag"):
        expected, actual = getattr(scanned, name), getattr(walked, name)
        if isinstance(expected, np.ndarray):
            assert actual.dtype == expected.dtype and np.array_equal(actual, expected), (name, html[:300])
        else:
            assert actual == expected, (name, html[:300])
    assert walked.unsure == []
    assert document._id_class_role(elements, walked) == document._id_class_role(elements, scanned), html[:300]
    return True


def test_walk_reads_every_blank_text_as_the_scan_does() -> None:
    """Short ASCII whitespace texts come from the walk's store of blanks (one str for the same
    bytes): more distinct blanks than it has slots, of every length about its longest, and texts
    that are blank but not ASCII or not short, all read as the scan reads them."""
    blanks = [" " * (n % 40) + "\t" * (n // 40) + "\n" for n in range(120)]
    pieces = [f"<b>{blank}</b>{blank}<i>x{blank}</i>" for blank in blanks + blanks[::-1]]
    html = "<div>" + "".join(pieces) + "\u3000\u00a0 <p>\n\n\n</p>" + " " * 100 + "</div>"
    assert _assert_walk_is_the_scan(html)


@pytest.mark.parametrize(
    "html",
    [
        "<p>one &amp; two &lt;three&gt;&nbsp;four</p>",
        '<div title="a > b &amp; &quot;c&quot;\u00a0d">x<a href="/">in <b>bold</b>\nlink</a>\n\n after</div><br><img src="x.png">',
        "<!-- a > b --><p>after a comment</p><!--x--><p>\n</p>text<!--split-->text",
        "<svg viewBox='0 0 1 1'><image xlink:href='x'></image><path d='M0 0'/><foreignObject>f</foreignObject></svg>",
        "<math><mi>x</mi></math><table><tr><td>é ü ☃ 😀 \u3000 \u2028 \x85</td></tr></table>",
        "<custom-Element data-x='\"' données='é'>text</custom-Element><a><a>nested</a></a>",
        "<p hidden2 id='' class role=main>valueless and empty</p><pre>\n\nlines\n</pre><textarea>a &lt; b</textarea>",
        "<title>T &amp; t</title><p>",
        '<p>lone \ud800 surrogates <span class="x\udc00">in text and class</span></p>',
        "",
        "plain text only",
    ],
)
def test_walk_gives_the_scans_fields(native: ModuleType, html: str) -> None:
    assert _assert_walk_is_the_scan(html)


@pytest.mark.parametrize(
    "html",
    [
        "<template><p>inside</p></template><p>after</p>",  # a template's content is not its children
        "<noscript><p>" + "the page without scripts " * 60 + "</p></noscript><p>x</p>",  # unwrapped
        '<div a"b="1">a name parse drops</div>',
        "<p>a\x00b</p>",
    ],
)
def test_walk_declines_or_agrees_where_the_scan_reads_otherwise(
    native: ModuleType, html: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pages the walk may decline (then `parse` serialises and scans): where it answers, it agrees."""
    _assert_walk_is_the_scan(html)
    walked = parse(html)
    monkeypatch.setattr(scan, "_WALK", False)
    scanned = parse(html)
    assert walked.tag == scanned.tag and walked.tokens.text == scanned.tokens.text
    assert (walked.ident, walked.classes, walked.role) == (scanned.ident, scanned.classes, scanned.role)
    for name in ("kind", "element", "line", "length", "chars", "in_anchor"):
        assert np.array_equal(getattr(walked.tokens, name), getattr(scanned.tokens, name)), name


def test_walk_takes_only_a_lexbor_node(native: ModuleType) -> None:
    tree = LexborHTMLParser("<p>hi</p>")
    _assert_rejects(
        native.walk,
        [
            ((12345, 3, VOID_TAGS), TypeError),  # never a bare address
            (("<p>", 3, VOID_TAGS), TypeError),
            ((tree.root, 3, ["br"]), TypeError),
            ((tree.root,), TypeError),
        ],
    )
    paragraph = tree.css_first("p")
    assert paragraph is not None
    assert native.walk(tree.root, 99, VOID_TAGS) is None  # another element count
    assert native.walk(tree.root, 0, VOID_TAGS) is None
    assert native.walk(paragraph, 1, VOID_TAGS)[3] == ["", "hi", ""]  # a subtree of a document
    paragraph.decompose()
    assert native.walk(paragraph, 1, VOID_TAGS) is None  # no document above it


@pytest.fixture
def walk_setup(native: ModuleType, caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    """For tests that break `_walk_setup`: afterwards Lexbor's functions and node type are set up
    again with the real ones (lexbor_setup keeps them in the C module)."""
    caplog.set_level(logging.WARNING, logger="readerproxy.engine.parse.scan")
    yield caplog
    assert native.lexbor_setup(selectolax.lexbor.__file__ or "", LexborNode)
    assert scan._walk_setup()


def _walk_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "C walk of Lexbor's tree is off" in r.getMessage()]


def test_the_walk_is_on_after_its_self_check(walk_setup: pytest.LogCaptureFixture) -> None:
    assert scan._WALK and scan._walk_setup()
    assert scan._walk_check(scan._WALK_CHECK_PAGE) is None
    assert _assert_walk_is_the_scan(scan._WALK_CHECK_PAGE)  # the check page is one the walk answers
    assert _walk_warnings(walk_setup) == []


def _with_walk(native: ModuleType, walk: Callable[..., Any]) -> SimpleNamespace:
    """The kernels with `walk` replaced."""
    return SimpleNamespace(**{**{name: getattr(native, name) for name in dir(native)}, "walk": walk})


@pytest.mark.parametrize(
    "change",
    [
        lambda fields: (fields[0], fields[1], bytearray(fields[2][:-1]) + b"\x7f", *fields[3:]),  # a length
        lambda fields: (*fields[:3], [*fields[3][:-1], "x"], *fields[4:]),  # a text
        lambda fields: (*fields[:11], ["changed", *fields[11][1:]], *fields[12:]),  # a class value
        lambda fields: (*fields[:-1], ["div", *fields[-1][1:]]),  # a tag name
        lambda fields: None,  # declined
    ],
)
def test_a_walk_that_differs_from_the_scan_on_the_check_page_stays_off(
    native: ModuleType,
    walk_setup: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
    change: Callable[[Any], Any],
) -> None:
    """As a selectolax whose Lexbor changed what a function returns would make it: one warning, and
    `parse` gives the document the scan gives."""
    monkeypatch.setattr(scan, "native", _with_walk(native, lambda *args: change(native.walk(*args))))
    assert scan._walk_setup() is False
    assert len(_walk_warnings(walk_setup)) == 1


@pytest.mark.parametrize(
    "failure",
    [
        "no mem_id",  # renamed upstream: walk raises AttributeError
        "walk raises OSError",
        "lexbor_setup raises",
        "no lexbor_setup",
        "Lexbor's functions not found",
        "LexborNode has no mem_id",
    ],
)
def test_every_failure_of_the_walks_set_up_falls_back(
    native: ModuleType, walk_setup: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch, failure: str
) -> None:
    kernels = _with_walk(native, native.walk)
    if failure == "no mem_id":

        def walk(root: Any, *args: Any) -> Any:
            raise AttributeError("'selectolax.lexbor.LexborNode' object has no attribute 'mem_id'")

        kernels.walk = walk
    elif failure == "walk raises OSError":
        kernels.walk = lambda *args: (_ for _ in ()).throw(OSError("dlsym"))
    elif failure == "lexbor_setup raises":
        kernels.lexbor_setup = lambda *args: (_ for _ in ()).throw(RuntimeError("changed"))
    elif failure == "no lexbor_setup":
        del kernels.lexbor_setup
    elif failure == "Lexbor's functions not found":
        kernels.lexbor_setup = lambda *args: False
    else:
        monkeypatch.setattr(scan, "LexborNode", type("LexborNode", (), {}))
    monkeypatch.setattr(scan, "native", kernels)
    assert scan._walk_setup() is False
    assert len(_walk_warnings(walk_setup)) == 1
    monkeypatch.setattr(scan, "_WALK", False)
    page = "<p id=a class='b c'>x &amp; y</p>"
    doc = parse(page)
    assert doc.tokens.text == parse(page).tokens.text and doc.classes[-1] == "b c"


def test_a_build_without_dlfcn_turns_the_walk_off_without_a_warning(
    native: ModuleType, walk_setup: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    kernels = _with_walk(native, native.walk)
    kernels.lexbor_setup, kernels.HAVE_WALK = (lambda *args: False), 0
    monkeypatch.setattr(scan, "native", kernels)
    assert scan._walk_setup() is False
    assert _walk_warnings(walk_setup) == []


def test_a_missing_selectolax_module_only_turns_the_walk_off(
    native: ModuleType, walk_setup: pytest.LogCaptureFixture
) -> None:
    assert native.lexbor_setup("/nonexistent/lexbor.so", LexborNode) is False  # not loaded: no dlopen
    assert native.walk(LexborHTMLParser("<p>x</p>").root, 4, VOID_TAGS) is None
    assert _walk_warnings(walk_setup) == []


def test_without_dlfcn_only_the_walk_is_lost(native: ModuleType, tmp_path: Path) -> None:
    """Built with -DREADERPROXY_NO_DLFCN (as where there is no <dlfcn.h>), the module builds and
    imports, every other kernel answers, and lexbor_setup answers False: the walk declines."""
    hook = _hatch_build()
    target = tmp_path / "readerproxy" / hook.MODULE_NAME
    hook.compile_native(target, extra_args=["-DREADERPROXY_NO_DLFCN"])
    check = (
        "import importlib.util, sys\n"
        "from selectolax.lexbor import LexborHTMLParser, LexborNode\n"
        "spec = importlib.util.spec_from_file_location('readerproxy._native', sys.argv[1])\n"
        "n = importlib.util.module_from_spec(spec); spec.loader.exec_module(n)\n"
        "import selectolax.lexbor as lx\n"
        "print(n.HAVE_WALK, n.lexbor_setup(lx.__file__, LexborNode))\n"
        "print(n.walk(LexborHTMLParser('<p>x</p>').root, 4, frozenset()))\n"
        "print(n.scan('<p>x</p>', ['p'], frozenset())[3])\n"
        "print(sorted(k for k in dir(n) if not k.startswith('_')))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", check, str(target)], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[:3] == ["0 False", "None", "['', 'x', '']"]
    assert lines[3] == str(sorted(k for k in dir(native) if not k.startswith("_")))
    assert native.HAVE_WALK == 1


@pytest.mark.slow
@pytest.mark.parametrize("name", ["scrapinghub", "readability", "wcxb-dev"])
def test_walk_matches_the_scan_on_every_dataset_page(native: ModuleType, name: str) -> None:
    answered = [_assert_walk_is_the_scan(html) for html in _dataset_pages(name)]
    assert sum(answered) > 0.9 * len(answered)  # the walk is the path most pages take


# --- tree_leaves -----------------------------------------------------------------------------------


def _log_odds_both_ways(
    model: TreeModel, x: np.ndarray, monkeypatch: pytest.MonkeyPatch
) -> tuple[np.ndarray, ...]:
    native_scores = model.log_odds(x)
    with monkeypatch.context() as patch:
        patch.setattr(model_module, "native", None)
        pure_scores = model.log_odds(x)
    return native_scores, pure_scores


@pytest.mark.slow
def test_tree_leaves_give_bit_identical_scores_on_real_blocks(
    native: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert model_module.native is not None
    scorer = load_model()
    extractor, params = first_extractor()
    rows = 0
    for html in _dataset_pages("scrapinghub")[:40]:
        doc = parse(html)
        blocks = page_blocks(doc, extractor.run(doc, params))
        x = blocks.features
        first_native, first_pure = _log_odds_both_ways(scorer.first, x, monkeypatch)
        assert first_native.tobytes() == first_pure.tobytes()
        chars = np.expm1(x[:, FEATURES.index("log_chars")])
        probability = 1.0 / (1.0 + np.exp(-first_pure))
        second_x = np.hstack([x, context_features(probability, chars, blocks.parent, blocks.grandparent)])
        assert second_x.shape[1] == len(FEATURES) + len(CONTEXT_FEATURES)
        second_native, second_pure = _log_odds_both_ways(scorer.second, second_x, monkeypatch)
        assert second_native.tobytes() == second_pure.tobytes()
        rows += len(x)
    assert rows > 1000


@pytest.mark.slow
@pytest.mark.parametrize("name", ["scrapinghub", "readability"])
def test_context_columns_equal_context_features_on_every_dataset_page(
    native: ModuleType, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """The second stage's context (`_native.context_columns`) against its numpy reference, bit for
    bit, on the first stage's real probabilities."""
    scorer = load_model()
    extractor, params = first_extractor()
    rows = 0
    for html in _dataset_pages(name):
        doc = parse(html)
        blocks = page_blocks(doc, extractor.run(doc, params))
        x = blocks.features
        probability = scorer.first.probability(x)
        chars = np.expm1(x[:, FEATURES.index("log_chars")])
        got, expected = _both_ways(
            LEARN_BLOCKS,
            monkeypatch,
            functools.partial(context_features, probability, chars, blocks.parent, blocks.grandparent),
        )
        _assert_same_arrays((got,), (expected,))
        rows += len(x)
    assert rows > 10_000


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.floats(0.0, 1.0), min_size=1, max_size=40),
    st.randoms(use_true_random=False),
)
def test_context_columns_equal_context_features_on_any_probabilities(
    values: list[float], rng: random.Random
) -> None:
    """Any probabilities (NaN included) and any parents (-1: none)."""
    _compiled()
    probability = np.array(values)
    if rng.random() < 0.2:
        probability[rng.randrange(len(values))] = np.nan
    parent = np.array([rng.randrange(-1, 4) for _ in values], dtype=np.int64)
    grandparent = np.array([rng.randrange(-1, 3) for _ in values], dtype=np.int64)
    chars = np.array([float(rng.randrange(0, 50)) for _ in values])
    with pytest.MonkeyPatch.context() as monkeypatch:
        got, expected = _both_ways(
            LEARN_BLOCKS,
            monkeypatch,
            lambda: context_features(probability, chars, parent, grandparent),
        )
    _assert_same_arrays((got,), (expected,))


def test_context_columns_decline_other_groups_and_reject_bad_arguments(native: ModuleType) -> None:
    p = np.array([0.5, 0.25])
    none = np.array([-1, -1], dtype=np.int64)
    assert native.context_columns(p, none - 1, none, 0.5, 2) is None  # numpy numbers such groups
    _assert_rejects(
        native.context_columns,
        [
            ((p, none[:1].copy(), none, 0.5, 2), ValueError),
            ((p, none, none, 0.5, -1), ValueError),
            ((p.astype(np.float32), none, none, 0.5, 2), ValueError),
            ((p, none.astype(np.int32), none, 0.5, 2), ValueError),
            ((p, none, none, "0.5", 2), TypeError),
        ],
    )


def _random_model(rng: np.random.Generator, trees: int, depth: int, width: int) -> TreeModel:
    """Complete random trees of `depth` (leaves point to themselves, as from_lightgbm_dump makes them)."""
    feature: list[int] = []
    threshold: list[float] = []
    left: list[int] = []
    right: list[int] = []
    value: list[float] = []

    def grow(level: int) -> int:
        index = len(feature)
        feature.append(0)
        threshold.append(np.inf)
        left.append(index)
        right.append(index)
        value.append(0.0)
        if level == depth or (level > 1 and rng.random() < 0.15):
            value[index] = float(rng.normal())
            return index
        feature[index] = int(rng.integers(width))
        threshold[index] = float(rng.normal())
        left[index] = grow(level + 1)
        right[index] = grow(level + 1)
        return index

    roots = [grow(0) for _ in range(trees)]
    return TreeModel(
        feature=np.array(feature, dtype=np.int32),
        threshold=np.array(threshold),
        left=np.array(left, dtype=np.int32),
        right=np.array(right, dtype=np.int32),
        value=np.array(value),
        roots=np.array(roots, dtype=np.int32),
        init=0.25,
        features=tuple(f"f{i}" for i in range(width)),
        max_depth=depth,
    )


@pytest.mark.parametrize(("trees", "depth", "width"), [(1, 0, 3), (7, 3, 2), (250, 9, 40)])
def test_tree_leaves_follow_any_shape_of_model(
    native: ModuleType, monkeypatch: pytest.MonkeyPatch, trees: int, depth: int, width: int
) -> None:
    rng = np.random.default_rng(trees)
    model = _random_model(rng, trees, depth, width)
    x = rng.normal(size=(301, width))
    x[rng.random(x.shape) < 0.05] = np.nan  # NaN goes right, as in the numpy walk
    x[::17] = np.inf
    native_scores, pure_scores = _log_odds_both_ways(model, x, monkeypatch)
    assert native_scores.tobytes() == pure_scores.tobytes()
    leaves = np.frombuffer(
        native.tree_leaves(x, model._feature, model.threshold, model._child, model.value, model._roots, depth)
    ).reshape(len(x), trees)
    assert np.isin(leaves, model.value[model.left == np.arange(len(model.left))]).all()


def test_tree_leaves_rejects_bad_tables(native: ModuleType) -> None:
    x = np.zeros((3, 2))
    feature = np.array([1, 0, 0], dtype=np.intp)
    threshold = np.array([0.5, np.inf, np.inf])
    child = np.array([2, 1, 1, 1, 2, 2], dtype=np.intp)
    value = np.array([0.0, 1.0, 2.0])
    roots = np.array([0], dtype=np.intp)
    good = (x, feature, threshold, child, value, roots, 1)
    assert np.frombuffer(native.tree_leaves(*good)).tolist() == [1.0, 1.0, 1.0]

    def bad(position: int, replacement: object) -> tuple[object, ...]:
        return (*good[:position], replacement, *good[position + 1 :])

    _assert_rejects(
        native.tree_leaves,
        [
            (bad(0, x.astype(np.float32)), ValueError),  # x not float64
            (bad(0, np.zeros(6)), ValueError),  # x not 2-D
            (bad(0, np.zeros((3, 4))[:, ::2]), TypeError),  # not contiguous
            (bad(0, [[0.0, 0.0]]), TypeError),  # not a buffer
            (bad(1, feature.astype(np.int32)), ValueError),
            (bad(1, np.array([2, 0, 0], dtype=np.intp)), ValueError),  # feature beyond the row
            (bad(1, np.array([-1, 0, 0], dtype=np.intp)), ValueError),
            (bad(2, threshold[:2]), ValueError),
            (bad(3, np.array([2, 1, 1, 1, 2, 3], dtype=np.intp)), ValueError),  # child beyond the table
            (bad(3, child[:4]), ValueError),
            (bad(4, value[:2]), ValueError),
            (bad(5, np.array([3], dtype=np.intp)), ValueError),  # root beyond the table
            (bad(6, -1), ValueError),
            (bad(6, "1"), TypeError),
            (good[:6], TypeError),
        ],
    )


# --- complete_tree_leaves ------------------------------------------------------------------------------


@pytest.mark.parametrize(("trees", "depth", "width"), [(1, 0, 3), (7, 3, 2), (250, 9, 40), (40, 6, 5)])
def test_complete_trees_reach_the_leaves_of_the_node_walk(
    native: ModuleType, trees: int, depth: int, width: int
) -> None:
    rng = np.random.default_rng(depth)
    model = _random_model(rng, trees, depth, width)
    assert model._complete is not None
    x = rng.normal(size=(203, width))
    x[rng.random(x.shape) < 0.05] = np.nan
    x[::13] = np.inf
    x[::29] = -np.inf
    by_nodes = native.tree_leaves(
        x, model._feature, model.threshold, model._child, model.value, model._roots, depth
    )
    assert native.complete_tree_leaves(x, *model._complete, depth) == by_nodes


def test_too_deep_trees_walk_the_nodes(native: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(11)
    model = _random_model(rng, 3, model_module.COMPLETE_MAX_DEPTH + 1, 4)
    assert model._complete is None
    x = rng.normal(size=(50, 4))
    native_scores, pure_scores = _log_odds_both_ways(model, x, monkeypatch)
    assert native_scores.tobytes() == pure_scores.tobytes()


def test_complete_tree_leaves_rejects_bad_tables(native: ModuleType) -> None:
    x = np.zeros((3, 2))
    feature = np.array([[1]], dtype=np.int32)
    threshold = np.array([[0.5]])
    value = np.array([[1.0, 2.0]])
    good = (x, feature, threshold, value, 1)
    assert np.frombuffer(native.complete_tree_leaves(*good)).tolist() == [1.0, 1.0, 1.0]

    def bad(position: int, replacement: object) -> tuple[object, ...]:
        return (*good[:position], replacement, *good[position + 1 :])

    _assert_rejects(
        native.complete_tree_leaves,
        [
            (bad(0, x.astype(np.float32)), ValueError),
            (bad(0, np.zeros(6)), ValueError),
            (bad(0, np.zeros((3, 4))[:, ::2]), TypeError),
            (bad(1, feature.astype(np.int64)), ValueError),
            (bad(1, np.array([[2]], dtype=np.int32)), ValueError),  # beyond the row
            (bad(1, np.array([[2**31 - 1]], dtype=np.int32)), ValueError),
            (bad(1, np.array([[-1]], dtype=np.int32)), ValueError),
            (bad(1, np.array([[0, 0]], dtype=np.int32)), ValueError),  # not 2**depth - 1 nodes
            (bad(2, np.array([[0.5], [0.5]])), ValueError),  # another number of trees
            (bad(3, np.array([[1.0, 2.0, 3.0]])), ValueError),
            (bad(4, -1), ValueError),
            (bad(4, 21), ValueError),
            (bad(4, 2), ValueError),
            (good[:4], TypeError),
        ],
    )


# --- element features: inherit, word_counts ---------------------------------------------------------


def _both_ways(
    module: ModuleType | tuple[ModuleType, ...], monkeypatch: pytest.MonkeyPatch, run: Any
) -> tuple[Any, Any]:
    """run() with the kernels, then with `module.native` (of each module, for a tuple) set to None
    (the numpy/Python reference)."""
    modules = module if isinstance(module, tuple) else (module,)
    assert all(each.native is not None for each in modules)
    with_native = run()
    with monkeypatch.context() as patch:
        for each in modules:
            patch.setattr(each, "native", None)
        return with_native, run()


def _assert_same_arrays(got: tuple[np.ndarray, ...], expected: tuple[np.ndarray, ...]) -> None:
    assert len(got) == len(expected)
    for actual, wanted in zip(got, expected, strict=True):
        assert actual.dtype == wanted.dtype and actual.shape == wanted.shape
        assert actual.tobytes() == wanted.tobytes()


def _element_features_both_ways(doc: document.Document, monkeypatch: pytest.MonkeyPatch) -> None:
    fields = (
        "holder",
        "words",
        "chars",
        "anchor_chars",
        "own",
        "context",
        "unlikely",
        "text_tokens",
        "text_owner",
        "tag_id",
    )
    native_features, pure_features = _both_ways(
        element_module, monkeypatch, lambda: element_module.element_features(doc)
    )
    _assert_same_arrays(
        tuple(getattr(native_features, name) for name in fields),
        tuple(getattr(pure_features, name) for name in fields),
    )
    assert list(native_features.label) == list(pure_features.label)
    assert native_features.tag_names == pure_features.tag_names


@pytest.mark.slow
@pytest.mark.parametrize("name", ["scrapinghub", "readability"])
def test_element_features_are_identical_with_the_kernels_on_every_dataset_page(
    native: ModuleType, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    for html in _dataset_pages(name):
        _element_features_both_ways(parse(html), monkeypatch)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.floats(allow_nan=False, width=64), min_size=1, max_size=60), st.randoms(use_true_random=False)
)
def test_inherit_adds_floats_in_the_same_order_as_python(values: list[float], rng: random.Random) -> None:
    """Random parents (each before its child, as in document order), context and hint values of every
    magnitude: the same holder and the same bits of context as the Python loop."""
    _compiled()
    n = len(values)
    tags = [rng.choice(["div", "p", "span", "a", "li", "section"]) for _ in range(n)]
    html = "".join(f"<{tag}>x" for tag in tags)
    doc = parse(html)
    semantic = [rng.choice(values) for _ in doc.tag]
    hints = [rng.choice(values) for _ in doc.tag]
    decay = rng.choice([0.5, 0.3, 1 / 3, 0.0, 1.0])
    with pytest.MonkeyPatch.context() as monkeypatch, np.errstate(over="ignore", invalid="ignore"):
        native_result, pure_result = _both_ways(
            element_module, monkeypatch, lambda: element_module.inherit(doc, semantic, hints, decay)
        )
    _assert_same_arrays(native_result, pure_result)


_SPACES = "".join(chr(c) for c in range(0x3100) if chr(c).isspace())


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from([*_SPACES, "a", "é", "☃", "😀", "\x00", "_"]), max_size=30)))
def test_word_counts_split_like_str_split(texts: list[str]) -> None:
    index = np.arange(len(texts), dtype=np.int64)[::-1].copy()
    counts = np.frombuffer(_compiled().word_counts(texts, index))
    assert counts.tolist() == [float(len(texts[i].split())) for i in index.tolist()]


def test_word_counts_rejects_bad_arguments(native: ModuleType) -> None:
    good_index = np.array([0], dtype=np.int64)
    assert np.frombuffer(native.word_counts(["a b"], good_index)).tolist() == [2.0]
    _assert_rejects(
        native.word_counts,
        [
            ((["a"], np.array([1], dtype=np.int64)), ValueError),  # past the list
            ((["a"], np.array([-1], dtype=np.int64)), ValueError),
            ((["a"], np.array([0], dtype=np.int32)), ValueError),
            ((["a"], [0]), TypeError),
            ((("a",), good_index), TypeError),
            (([b"a"], good_index), TypeError),
            ((["a"],), TypeError),
        ],
    )


# --- block features: class_counts, containing --------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("name", ["scrapinghub", "readability"])
def test_block_features_are_identical_with_the_kernels_on_every_dataset_page(
    native: ModuleType, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """page_blocks with the block kernels on and off (the element features computed once: they are
    checked on their own above), every array bit for bit."""
    extractor, params = first_extractor()
    for html in _dataset_pages(name):
        doc = parse(html)
        first = extractor.run(doc, params)
        native_blocks, pure_blocks = _both_ways(
            LEARN_BLOCKS, monkeypatch, functools.partial(page_blocks, doc, first)
        )
        fields = ("elements", "features", "holder", "own_words", "parent", "grandparent")
        _assert_same_arrays(
            tuple(getattr(native_blocks, f) for f in fields), tuple(getattr(pure_blocks, f) for f in fields)
        )


@settings(max_examples=200, deadline=None)
@given(st.randoms(use_true_random=False))
def test_containing_counts_like_searchsorted(rng: random.Random) -> None:
    _compiled()
    kinds = rng.randrange(0, 5)
    ranges = rng.randrange(0, 40)
    size = rng.choice([1, 5, 50, 1000])
    kind = np.array([rng.randrange(max(kinds, 1)) for _ in range(ranges if kinds else 0)], dtype=np.int64)
    first = np.array([rng.randrange(size) for _ in kind], dtype=np.int64)
    last = np.maximum(
        first + np.array([rng.randrange(-1, size // 2 + 1) for _ in kind], dtype=np.int64), first - 1
    )
    position = np.array(sorted(rng.randrange(size) for _ in range(rng.randrange(0, 30))), dtype=np.int64)
    with pytest.MonkeyPatch.context() as monkeypatch:
        got, expected = _both_ways(
            LEARN_BLOCKS, monkeypatch, lambda: blocks_columns._containing(kind, first, last, kinds, position)
        )
    _assert_same_arrays((got,), (expected,))


def test_containing_declines_a_huge_span_and_rejects_bad_arguments(native: ModuleType) -> None:
    one = np.array([0], dtype=np.int64)
    assert np.frombuffer(native.containing(one, one, one, 1, one), dtype=np.int64).tolist() == [1]
    assert native.containing(one, one, one, 1, np.array([0, 2**30], dtype=np.int64)) is None
    _assert_rejects(
        native.containing,
        [
            ((one, one, one, 1, np.array([-1], dtype=np.int64)), ValueError),
            ((one, one, one, 1, np.array([2**31], dtype=np.int64)), ValueError),
            ((one + 1, one, one, 1, one), ValueError),  # a kind >= kinds
            ((one - 1, one, one, 1, one), ValueError),
            ((one, one, one, -1, one), ValueError),
            ((one, np.array([0, 1], dtype=np.int64), one, 1, one), ValueError),
            ((one, one.astype(np.int32), one, 1, one), ValueError),
            ((one, one, [0], 1, one), TypeError),
            ((one, one, one, 1), TypeError),
        ],
    )


@settings(max_examples=200, deadline=None)
@given(st.randoms(use_true_random=False))
def test_element_counts_count_like_searchsorted(rng: random.Random) -> None:
    _compiled()
    n = rng.randrange(1, 30)
    start = np.array(sorted(rng.randrange(100) for _ in range(n)), dtype=np.int32)
    end = start + np.array([rng.randrange(-1, 40) for _ in range(n)], dtype=np.int32)

    doc = SimpleNamespace(start=start, end=end)
    starts = np.array(sorted(rng.randrange(120) for _ in range(rng.randrange(0, 40))), dtype=np.int64)
    index = np.array([rng.randrange(-1, n) for _ in range(rng.randrange(0, 20))], dtype=np.int64)
    with pytest.MonkeyPatch.context() as monkeypatch:
        got, expected = _both_ways(
            LEARN_BLOCKS,
            monkeypatch,
            lambda: blocks_structure._element_counts(starts, doc, index),  # type: ignore[arg-type]
        )
    _assert_same_arrays((got,), (expected,))


def test_element_counts_rejects_bad_arguments(native: ModuleType) -> None:
    starts = np.array([1, 2, 5], dtype=np.int64)
    start, end = np.array([0, 1], dtype=np.int32), np.array([4, 1], dtype=np.int32)
    index = np.array([0, 1, -1], dtype=np.int64)
    assert np.frombuffer(native.element_counts(starts, start, end, index)).tolist() == [2.0, 0.0, 0.0]
    _assert_rejects(
        native.element_counts,
        [
            ((starts[::-1].copy(), start, end, index), ValueError),  # not sorted
            ((starts, start, end, np.array([2], dtype=np.int64)), ValueError),  # not an element
            ((starts, start, end[:1], index), ValueError),
            ((starts, start.astype(np.int64), end, index), ValueError),
            ((starts.astype(np.int32), start, end, index), ValueError),
            ((starts, start, end, [0]), TypeError),
            ((starts, start, end), TypeError),
        ],
    )


@settings(max_examples=200, deadline=None)
@given(st.randoms(use_true_random=False))
def test_repeated_items_match_the_numpy_grouping(rng: random.Random) -> None:
    """Random trees (each parent before its children) with few tags, so that siblings repeat."""
    _compiled()
    n = rng.randrange(1, 80)
    parent = np.array([rng.randrange(-1, i) if i else -1 for i in range(n)], dtype=np.int32)
    names = ["div", "p", "li", "a"][: rng.randrange(1, 5)]
    tag = [rng.choice(names) for _ in range(n)]

    doc = SimpleNamespace(parent=parent, tag=tag)
    codes = blocks_tags.tag_codes(doc)  # type: ignore[arg-type]
    elements = np.array(sorted(rng.sample(range(n), rng.randrange(0, n + 1))), dtype=np.int64)
    with pytest.MonkeyPatch.context() as monkeypatch:
        got, expected = _both_ways(
            LEARN_BLOCKS,
            monkeypatch,
            lambda: blocks_structure.repeated_items(doc, elements, codes),  # type: ignore[arg-type]
        )
    fields = ("count", "item", "level", "index")
    _assert_same_arrays(tuple(getattr(got, f) for f in fields), tuple(getattr(expected, f) for f in fields))


def test_repeated_items_rejects_bad_arguments(native: ModuleType) -> None:
    parent = np.array([-1, 0, 0], dtype=np.int32)
    tag = np.array([0, 1, 1], dtype=np.int64)
    elements = np.array([1, 2], dtype=np.int64)
    count, item, level, index = native.repeated_items(parent, tag, 2, elements, 6)
    assert np.frombuffer(count).tolist() == [2.0, 2.0] and np.frombuffer(index).tolist() == [0.0, 1.0]
    assert np.frombuffer(item, dtype=np.int64).tolist() == [1, 2] and np.frombuffer(level).tolist() == [
        0.0,
        0.0,
    ]
    _assert_rejects(
        native.repeated_items,
        [
            ((parent, tag, 1, elements, 6), ValueError),  # a tag >= n_tags
            ((parent, tag - 1, 2, elements, 6), ValueError),
            ((np.array([-1, 0, 3], dtype=np.int32), tag, 2, elements, 6), ValueError),  # parent past the end
            ((parent, tag, 2, np.array([3], dtype=np.int64), 6), ValueError),
            ((parent, tag, 2, np.array([-1], dtype=np.int64), 6), ValueError),
            ((parent, tag[:2], 2, elements, 6), ValueError),
            ((parent, tag, 2, elements, 0), ValueError),
            ((parent, tag, 0, elements, 6), ValueError),
            ((parent.astype(np.int64), tag, 2, elements, 6), ValueError),
            ((parent, tag, 2, [1], 6), TypeError),
            ((parent, tag, 2, elements), TypeError),
        ],
    )


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-(2**63), 2**63 - 1) | st.integers(-3, 3), max_size=60))
def test_key_counts_count_like_unique_and_bincount(keys: list[int]) -> None:
    array = np.array(keys, dtype=np.int64)
    got = np.frombuffer(_compiled().key_counts(array), dtype=np.float64)
    inverse = np.unique(array, return_inverse=True)[1]
    expected = np.bincount(inverse)[inverse].astype(np.float64) if len(array) else np.zeros(0)
    _assert_same_arrays((got,), (expected,))


def test_key_counts_rejects_bad_arguments(native: ModuleType) -> None:
    _assert_rejects(
        native.key_counts,
        [
            ((np.array([1, 2], dtype=np.int32),), ValueError),
            ((np.zeros((2, 2), dtype=np.int64),), ValueError),
            (([1, 2],), TypeError),
            ((), TypeError),
        ],
    )


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(max_size=20), max_size=20), st.randoms(use_true_random=False))
def test_class_counts_match_the_code_point_lookup(texts: list[str], rng: random.Random) -> None:
    _compiled()
    n_blocks = rng.randrange(1, 4)
    tokens = np.array([i for i in range(len(texts)) if rng.random() < 0.8], dtype=np.int64)
    block = np.array([rng.randrange(n_blocks) for _ in tokens], dtype=np.int64)

    class Tokens:
        text = texts

    class Doc:
        tokens = Tokens

    with pytest.MonkeyPatch.context() as monkeypatch:
        got, expected = _both_ways(
            LEARN_BLOCKS,
            monkeypatch,
            lambda: blocks_columns._character_counts(Doc, tokens, block, n_blocks),  # type: ignore[arg-type]
        )
    _assert_same_arrays(got, expected)


def test_class_counts_rejects_bad_arguments(native: ModuleType) -> None:
    index = np.array([0], dtype=np.int64)
    table = blocks_columns._CHARACTER_CLASS
    counts = np.frombuffer(native.class_counts(["A1.😀"], index, index, 1, table)).tolist()
    assert counts == [1.0, 1.0, 1.0, 1.0]  # other, punctuation, digit, upper case
    # The entries are checked as the texts read them: a bad one that no text reads does no harm.
    unread = table.copy()
    unread[ord("~") + 1] = 9
    assert np.frombuffer(native.class_counts(["a"], index, index, 1, unread)).tolist() == [1.0, 0.0, 0.0, 0.0]
    read = table.copy()
    read[ord("a")] = 9
    with pytest.raises(ValueError, match="entries must be < 4"):
        native.class_counts(["xa"], index, index, 1, read)
    _assert_rejects(
        native.class_counts,
        [
            ((["a"], index, index + 1, 1, table), ValueError),  # block >= n_blocks
            ((["a"], index, index - 1, 1, table), ValueError),
            ((["a"], index + 1, index, 1, table), ValueError),  # past the texts
            ((["a"], index, np.array([0, 0], dtype=np.int64), 1, table), ValueError),
            ((["a"], index, index, -1, table), ValueError),
            ((["a"], index, index, 1, np.array([4], dtype=np.uint8)), ValueError),  # a class beyond 3
            ((["a"], index, index, 1, np.zeros(0, dtype=np.uint8)), ValueError),
            ((["a"], index, index, 1, table.astype(np.int32)), ValueError),
            (([1], index, index, 1, table), TypeError),
            ((["a"], index, index, 1), TypeError),
        ],
    )


# --- page kind: word_buckets, count_parts, count_prices ------------------------------------------------


def _reference_buckets(text: str, start: int, size: int) -> list[int]:
    """pagewords._add_words' buckets of `text` (already lower-cased) in `size` buckets."""
    return sorted(
        {
            zlib.crc32(word.encode("utf-8", "surrogatepass"), start) & (size - 1)
            for word in set(re.findall(r"\w+", text))
            if len(word) > 1 and not word.isdigit()
        }
    )


def _kernel_buckets(native: ModuleType, text: str, start: int, size: int, *spans: np.ndarray) -> list[int]:
    buckets = np.zeros(size, dtype=np.uint8)
    native.word_buckets(text, start, buckets, *spans)
    return np.flatnonzero(buckets).tolist()


def test_word_buckets_hash_the_words_of_every_code_point(native: ModuleType) -> None:
    r"""Every code point, in a word, alone, doubled and beside a digit: \w, str.isdigit, UTF-8 with
    lone surrogates and CRC-32 as the Python reference has them (2 ** 20 buckets: few collisions)."""
    size = 1 << 20
    for low in range(0, 0x110000, 8192):
        text = " ".join(
            f"a{chr(c)}b {chr(c)}{chr(c)} {chr(c)}1 {chr(c)}" for c in range(low, min(low + 8192, 0x110000))
        )
        assert _kernel_buckets(native, text, 12345, size) == _reference_buckets(text, 12345, size), hex(low)


def test_word_buckets_lower_case_every_code_point_as_str_lower(native: ModuleType) -> None:
    """lower=True: each character lower-cased as str.lower does, but U+0130 and the capital sigma,
    which str.lower does not lower alone: there the kernel declines (False)."""
    size = 1 << 20
    for low in range(0, 0x110000, 8192):
        codes = [c for c in range(low, min(low + 8192, 0x110000)) if c not in (0x130, 0x3A3)]
        text = " ".join(f"a{chr(c)}b {chr(c)}{chr(c)} {chr(c)}1 {chr(c)}" for c in codes)
        buckets = np.zeros(size, dtype=np.uint8)
        spans = np.array([0], dtype=np.int64), np.array([len(text)], dtype=np.int64)
        assert native.word_buckets(text, 7, buckets, *spans, True) is True
        assert np.flatnonzero(buckets).tolist() == _reference_buckets(text.lower(), 7, size), hex(low)
    for text in ("\u0130stanbul", "ΟΔΟΣ", "x \u03a3"):
        assert native.word_buckets(text, 7, np.zeros(8, dtype=np.uint8), None, None, True) is False
        assert native.word_buckets(text.lower(), 7, np.zeros(8, dtype=np.uint8)) is True


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet=st.sampled_from("ab_1٣²½ -σé中\ud800\U0001f600\t\u00a0.x"), max_size=40),
    st.integers(0, 2**32 - 1),
    st.randoms(use_true_random=False),
)
def test_word_buckets_match_add_words_by_text_and_by_spans(text: str, start: int, rng: random.Random) -> None:
    native = _compiled()
    assert _kernel_buckets(native, text, start, 1 << BITS) == _reference_buckets(text, start, 1 << BITS)
    cuts = sorted(rng.randrange(len(text) + 1) for _ in range(2 * rng.randrange(4)))
    first, last = np.array(cuts[::2], dtype=np.int64), np.array(cuts[1::2], dtype=np.int64)
    expected = sorted(
        {
            b
            for a, z in zip(cuts[::2], cuts[1::2], strict=True)
            for b in _reference_buckets(text[a:z], start, 64)
        }
    )
    assert _kernel_buckets(native, text, start, 64, first, last) == expected


def test_word_buckets_rejects_bad_arguments(native: ModuleType) -> None:
    buckets = np.zeros(8, dtype=np.uint8)
    spans = np.array([0], dtype=np.int64)
    _assert_rejects(
        native.word_buckets,
        [
            (("ab", 2**32, buckets), ValueError),
            (("ab", 0, np.zeros(6, dtype=np.uint8)), ValueError),  # not a power of two
            (("ab", 0, np.zeros(0, dtype=np.uint8)), ValueError),
            (("ab", 0, np.zeros(8, dtype=np.int32)), ValueError),
            (("ab", 0, np.zeros((2, 4), dtype=np.uint8)), ValueError),
            (("ab", 0, buckets[::2]), TypeError),
            (("ab", 0, bytes(8)), TypeError),  # read-only
            (("ab", 0, buckets, spans), TypeError),  # first without last
            (("ab", 0, buckets, spans, spans + 3), ValueError),  # past the text
            (("ab", 0, buckets, spans + 1, spans), ValueError),  # first after last
            (("ab", 0, buckets, spans, np.array([1, 2], dtype=np.int64)), ValueError),
            (("ab", 0, buckets, spans.astype(np.int32), spans), ValueError),
            ((b"ab", 0, buckets), TypeError),
            (("ab", -1, buckets), ValueError),
        ],
    )
    assert not buckets.any()


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet=st.sampled_from("aabpostx-é"), max_size=60),
    st.lists(st.text(alphabet=st.sampled_from("abpostxé"), min_size=1, max_size=4), max_size=8),
)
def test_count_parts_count_like_str_count(text: str, parts: list[str]) -> None:
    assert _compiled().count_parts(text, parts) == [text.count(part) for part in parts]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("$€ 1.\u00a0EURUSDkrzłRs٣x₫"), max_size=30))
def test_count_prices_count_like_the_regular_expressions(text: str) -> None:
    _compiled()
    with pytest.MonkeyPatch.context() as monkeypatch:
        got, expected = _both_ways(pagekind, monkeypatch, lambda: pagekind.count_prices(text))
    assert got == expected


def test_count_parts_and_prices_reject_bad_arguments(native: ModuleType) -> None:
    _assert_rejects(
        native.count_parts,
        [
            (("ab", [""]), ValueError),
            (("ab", [1]), ValueError),
            (("ab", ("a",)), TypeError),
            ((1, []), TypeError),
        ],
    )
    _assert_rejects(
        native.count_prices,
        [
            (("1$", "$", [""]), ValueError),
            (("1$", "$", ["a"] * 17), ValueError),
            (("1$", "$", ("a",)), TypeError),
            (("1$", 1, []), TypeError),
        ],
    )
    assert native.count_prices("$ 1 and 2 €, EUR3", "$€", ["EUR"]) == 3


@pytest.mark.slow
@pytest.mark.parametrize("name", ["scrapinghub", "readability"])
def test_page_kind_features_are_identical_with_the_kernels_on_every_dataset_page(
    native: ModuleType, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """pagekind.page_features with the kernels (pagewords' spans, class parts, prices) and with the
    Python references, bit for bit; the word ids also against the strings path on the same page."""
    extractor = get_extractor("auto")
    model = pagekind.load_model()
    for html in _dataset_pages(name):
        doc = parse(html)
        selection = extractor.run(doc, extractor.defaults()).selection

        def features(doc: document.Document = doc, selection: np.ndarray = selection) -> np.ndarray:
            return pagekind.page_features(doc, selection, model.words)

        with monkeypatch.context() as patch:
            patch.setattr(pagewords, "native", None)
            got, expected = _both_ways(pagekind, monkeypatch, features)
        assert got.tobytes() == features().tobytes() == expected.tobytes()
        sources = pagewords._sources(doc, selection)
        spans = pagewords._spans_words(doc, sources)
        assert spans is None or spans.tobytes() == pagewords._strings_words(doc, sources).tobytes()


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(
        [
            "inherit",
            "word_counts",
            "class_counts",
            "containing",
            "element_counts",
            "repeated_items",
            "key_counts",
            "complete_tree_leaves",
            "block_columns",
            "structure_columns",
            "block_neighbours",
            "context_columns",
            "word_buckets",
            "count_parts",
            "count_prices",
        ]
    ),
    st.lists(
        st.one_of(
            st.integers(-3, 3),
            st.floats(),
            st.just(["a b", "c"]),
            st.sampled_from([np.int8, np.int32, np.int64, np.uint8, np.float64, np.bool_]).map(
                lambda dtype: np.arange(3).astype(dtype)
            ),
            st.sampled_from([np.int32, np.int64, np.float64]).map(lambda dtype: np.ones((2, 3), dtype=dtype)),
            st.none(),
        ),
        max_size=6,
    ),
)
def test_new_kernels_take_any_arguments_without_crashing(name: str, args: list[object]) -> None:
    """Whatever they are given, the kernels answer or raise TypeError/ValueError (never crash)."""
    with contextlib.suppress(TypeError, ValueError):
        getattr(_compiled(), name)(*args)


# --- block_columns: _columns written into the feature matrix ---------------------------------------


def _place_both_ways(
    doc: document.Document, first: Any, monkeypatch: pytest.MonkeyPatch
) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray] | None, bool, dict[str, Any], np.ndarray]:
    """The feature rows `_place_columns` and `_place_structure` write (NaN elsewhere), the parents and
    whether the structure kernel answered, and the columns they stand for (`_columns`,
    `structure_columns` and `page_type_columns`' item counts) run on the numpy reference (every
    kernel off), for the same page."""
    features = element_module.features_of(doc)
    elements = np.flatnonzero(features.chars > 0)
    codes = blocks_tags.tag_codes(doc, features)
    by_feature = np.full((len(FEATURES), len(elements)), np.nan)
    code_table = blocks_tags._code_table(codes)
    placed = blocks_columns._place_columns(doc, first, features, elements, codes, by_feature, code_table)
    items = blocks_structure.repeated_items(doc, elements, codes)
    structured = blocks_structure._place_structure(doc, first, elements, items, codes, by_feature, code_table)
    kept_starts = dict(codes._starts)
    with monkeypatch.context() as patch:
        for module in LEARN_BLOCKS:
            patch.setattr(module, "native", None)
        codes = blocks_tags.tag_codes(doc, features)
        columns = blocks_columns._columns(doc, first, features, elements, codes)
        items = blocks_structure.repeated_items(doc, elements, codes)
        columns.update(
            blocks_structure.structure_columns(doc, first, elements, columns["depth"], items, codes)
        )
        page_type = blocks_page_type.page_type_columns(doc, elements, columns, items, features.holder, codes)
        columns.update({name: column for name, column in page_type.items() if name.startswith("item_log_")})
        for group, starts in kept_starts.items():  # the kernel's starts, as TagCodes.starts finds them
            _assert_same_arrays((starts,), tuple(codes.starts(doc, group)))
    return by_feature, placed, structured, columns, elements


@pytest.mark.slow
@pytest.mark.parametrize("name", ["scrapinghub", "readability"])
def test_block_kernels_write_what_the_numpy_columns_compute_on_every_dataset_page(
    native: ModuleType, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """Every column of `_columns`, `structure_columns` and the item counts (their numpy reference)
    equals the row the kernels wrote, bit for bit, and the kernels answer on every page (they never
    decline a parsed page)."""
    extractor, params = first_extractor()
    rows = 0
    for html in _dataset_pages(name):
        doc = parse(html)
        first = extractor.run(doc, params)
        if not (element_module.features_of(doc).chars > 0).any():
            continue
        by_feature, placed, structured, columns, elements = _place_both_ways(doc, first, monkeypatch)
        assert placed is not None and structured
        kernel_columns = {
            *blocks_columns._COLUMNS,
            *blocks_structure._STRUCTURE_KERNEL_COLUMNS,
            "title_overlap",
        }
        assert set(columns) == kernel_columns
        for column_name, column in columns.items():
            expected = np.broadcast_to(np.asarray(column, dtype=np.float64), (len(elements),))
            assert by_feature[FEATURES.index(column_name)].tobytes() == expected.tobytes(), column_name
        parent = doc.parent[elements].astype(np.int64)
        grandparent = np.where(parent >= 0, doc.parent[np.maximum(parent, 0)], -1).astype(np.int64)
        _assert_same_arrays(placed, (parent, grandparent))
        rows += len(elements)
    assert rows > 10_000


def _kernel_calls(
    native: ModuleType, monkeypatch: pytest.MonkeyPatch, kernel: str, html: str
) -> tuple[list[list[Any]], Any]:
    """The arguments of every call `page_blocks` makes to the kernel `_native.<kernel>` on `html` (the
    heuristic's Extraction as `auto` makes it), and the PageBlocks it returned."""
    doc = parse(html)
    extractor, params = first_extractor()
    first = extractor.run(doc, params)
    calls: list[list[Any]] = []

    def spy(*args: Any) -> Any:
        calls.append(list(args))
        return getattr(native, kernel)(*args)

    with monkeypatch.context() as patch:
        spied = SimpleNamespace(**{**vars(native), kernel: spy})
        for module in LEARN_BLOCKS:
            patch.setattr(module, "native", spied)
        blocks = page_blocks(doc, first)
    return calls, blocks


def _replaced(arguments: Sequence[Any], index: int, value: Any) -> tuple[Any, ...]:
    """`arguments` with the one at `index` replaced by `value`."""
    changed = list(arguments)
    changed[index] = value
    return tuple(changed)


def _block_columns_arguments(native: ModuleType, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The arguments `page_blocks` gives `_native.block_columns` on a small page."""
    html = (
        "<html><head><title>A title</title></head><body><nav><a href='/'>Home</a></nav><article>"
        "<h1>A title here</h1><p>First paragraph, with words: 12 of them, A B C.</p>"
        "<p>Second <a href='/x'>link</a> paragraph.</p><ul><li>one</li><li>two</li></ul></article>"
        "<footer><p>Footer text</p></footer></body></html>"
    )
    calls, blocks = _kernel_calls(native, monkeypatch, "block_columns", html)
    assert len(calls) == 1 and len(blocks.elements) == calls[0][0].shape[1] >= 4
    return calls[0]


def test_block_columns_declines_fractions_and_rejects_bad_arguments(
    native: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    good = _block_columns_arguments(native, monkeypatch)
    assert native.block_columns(*good) is not None

    changed = partial(_replaced, good)

    fractional = good[11].copy()
    fractional[np.flatnonzero(fractional > 0)[0]] += 0.5  # chars: no longer whole numbers
    assert native.block_columns(*changed(11, fractional)) is None  # the caller then runs _columns
    readonly = good[0].copy()
    readonly.flags.writeable = False
    bad_table = np.full(0x10000, 7, dtype=np.uint8)
    far_element = good[4].copy()
    far_element[0] = len(good[5])
    _assert_rejects(
        native.block_columns,
        [
            (changed(0, readonly), ValueError),
            (changed(0, good[0].astype(np.float32)), ValueError),
            (changed(0, good[0][:, :-1].copy()), ValueError),  # a column short
            (changed(1, good[1][:-1].copy()), ValueError),  # a row short
            (changed(1, good[1] + len(FEATURES)), ValueError),  # rows past the matrix
            (changed(4, far_element), ValueError),
            (changed(6, good[6][:-1].copy()), ValueError),  # end: one element short
            (changed(19, good[19] + 100), ValueError),  # tag codes past the code table
            (changed(20, good[20] + 200), ValueError),  # container kinds past n_containers
            (changed(20, good[20] + (100 << 8)), ValueError),  # own-tag groups past n_groups
            (changed(21, good[21] + 10**9), ValueError),  # text tokens past the texts
            (changed(23, bad_table), ValueError),
            (changed(24, tuple(good[24])), TypeError),
            (changed(25, len(good[5])), ValueError),  # the root is not an element
            (changed(27, 0.0), ValueError),  # no body tokens
            (tuple(good[:-1]), TypeError),
        ],
    )


def test_block_neighbours_shift_rows_and_average_over_parents(native: ModuleType) -> None:
    out = np.array([[1.0, 2.0, 3.0, 4.0], [0.0] * 4, [0.0] * 4, [1.0, 1.0, 2.0, 1.0], [0.0] * 4])
    one = np.array([0], dtype=np.int64)
    parent = np.array([5, 5, -1, 7], dtype=np.int64)
    out = np.vstack((out, [[1.0, 0.0, 0.0, 1.0], [0.0] * 4]))
    good = (out, one, one + 1, one + 2, np.array([9.0]), parent, 0, 3, 4, 5, 6, 0.25, 1)
    assert native.block_neighbours(*good) is None
    assert out[1].tolist() == [9.0, 1.0, 2.0, 3.0] and out[2].tolist() == [2.0, 3.0, 4.0, 9.0]
    assert out[4].tolist() == [3.0 / 1.0, 3.0 / 1.0, 3.0 / 2.0, 4.0 / 1.0]  # sums per parent / counts row
    assert out[6].tolist() == [0.5, 0.25, 0.25, 0.5]  # windows (1, 1, 0), (1, 0, 0), (0, 0, 1), (0, 1, 1)
    readonly = out.copy()
    readonly.flags.writeable = False

    changed = partial(_replaced, good)

    _assert_rejects(
        native.block_neighbours,
        [
            (changed(0, readonly), ValueError),
            (changed(1, one + 7), ValueError),  # a row past out
            (changed(2, one), ValueError),  # shifted onto its own source
            (changed(3, np.array([2, 2], dtype=np.int64)), ValueError),
            (changed(4, np.array([9.0, 9.0])), ValueError),
            (changed(5, parent[:-1].copy()), ValueError),
            (changed(5, parent - 5), ValueError),  # a parent below -1
            (changed(8, 0), ValueError),  # the mean written over what it averages
            (changed(6, 9), ValueError),
            (changed(10, 5), ValueError),  # smoothed onto its own source
            (changed(12, -1), ValueError),
            (good[:-1], TypeError),
        ],
    )


def test_structure_columns_declines_unsorted_starts_and_rejects_bad_arguments(
    native: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    html = (
        "<html><body><article><h1>Title</h1><p>One <a href='/a'>link</a> here.</p><form><input name=q>"
        "<button>Go</button></form><p><img src=x.png> <time>today</time> and text.</p></article></body></html>"
    )
    (good,), _ = _kernel_calls(native, monkeypatch, "structure_columns", html)
    found = native.structure_columns(*good)
    # input and button, h1, img, time, a; one heading block (the h1)
    assert [len(starts) // 8 for starts in found] == [2, 1, 1, 1, 1, 1]

    changed = partial(_replaced, good)

    unsorted = good[4].copy()  # element starts: the first two controls swapped
    controls = np.flatnonzero(good[9][good[8]] >> 16 & 1)
    unsorted[controls[0]], unsorted[controls[1]] = unsorted[controls[1]], unsorted[controls[0]]
    assert native.structure_columns(*changed(4, unsorted)) is None  # numpy's code decides then
    readonly = good[0].copy()
    readonly.flags.writeable = False
    _assert_rejects(
        native.structure_columns,
        [
            (changed(0, readonly), ValueError),
            (changed(1, good[1][:-1].copy()), ValueError),
            (changed(1, good[1] + len(FEATURES)), ValueError),
            (changed(2, good[2] + len(good[3])), ValueError),  # blocks past the elements
            (changed(3, good[3] + len(good[3])), ValueError),  # parents past the elements
            (changed(8, good[8] + 1000), ValueError),  # tag codes past the group bits
            (changed(11, good[11] - 10**6), ValueError),  # items that are not elements
            (changed(14, good[14][:-1].copy()), ValueError),
            (changed(16, len(good[3])), ValueError),  # the root is not an element
            (changed(18, 0.0), ValueError),
            (tuple(good[:-1]), TypeError),
        ],
    )


# --- _speedups: which code runs --------------------------------------------------------------------


def test_the_native_kernels_are_used_when_built(native: ModuleType) -> None:
    if os.environ.get("READERPROXY_PURE", "") not in ("", "0"):
        pytest.skip("READERPROXY_PURE is set")
    assert (
        _speedups.native is native
        and scan.native is native
        and clean_module.native is native
        and model_module.native is native
    )
    assert element_module.native is native and all(module.native is native for module in LEARN_BLOCKS)
    assert _speedups.describe() == "yes"
    assert _speedups.source_hash() == native.SOURCE_HASH


def test_pure_python_is_forced_by_the_environment(
    native: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("READERPROXY_PURE", "1")
    assert _speedups.load_native() is None
    monkeypatch.setenv("READERPROXY_PURE", "0")
    assert _speedups.load_native() is native


def test_a_process_with_readerproxy_pure_parses_and_scores_with_numpy(tmp_path: Path) -> None:
    code = (
        "import readerproxy.engine.parse.scan as d, readerproxy.engine.learn.model as m, readerproxy._speedups as s\n"
        "import readerproxy.engine.learn.blocks.columns as b, readerproxy.engine.elements as h\n"
        "from readerproxy.api import extract\n"
        "print(s.describe(), d.native is None, m.native is None, b.native is None, h.native is None)\n"
        "print(extract('<html><body><article><p>' + 'Some words of an article. ' * 40 + '</p></article></body></html>',"
        " algorithm='auto').text[:24])\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO), "READERPROXY_PURE": "1"}
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["no True True True True", "Some words of an article"]


def test_parse_gives_the_same_document_with_and_without_the_kernel(
    native: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    html = "<html><head><title>T</title></head><body><p>One <a href='/x'>link</a>&amp; more\ntext</p></body></html>"
    with_native = parse(html)
    monkeypatch.setattr(clean_module, "native", None)
    monkeypatch.setattr(scan, "native", None)
    without = parse(html)
    for name in ("kind", "element", "line", "length", "chars", "in_anchor"):
        assert np.array_equal(getattr(with_native.tokens, name), getattr(without.tokens, name))
    assert with_native.tokens.text == without.tokens.text
    assert np.array_equal(with_native.parent, without.parent) and np.array_equal(with_native.end, without.end)


def test_a_stale_module_is_refused_with_a_warning(native: ModuleType, tmp_path: Path) -> None:
    edited = tmp_path / "_native.c"
    edited.write_bytes(_speedups.SOURCE.read_bytes() + b"/* edited */\n")
    with pytest.warns(RuntimeWarning, match="not built from this _native.c"):
        assert _speedups.load_native(edited) is None
    assert _speedups.load_native(tmp_path / "absent.c") is native  # an install without the source


def test_a_module_from_another_tree_is_not_used(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """An editable install's import hook can find /work/main's build for a worktree on PYTHONPATH."""
    import readerproxy

    elsewhere = ModuleType("readerproxy._native")
    elsewhere.__file__ = str(tmp_path / "_native.so")
    elsewhere.SOURCE_HASH = _speedups.source_hash()  # type: ignore[attr-defined]
    monkeypatch.setattr(readerproxy, "_native", elsewhere, raising=False)
    assert _speedups.load_native() is None
    beside = ModuleType("readerproxy._native")
    beside.__file__ = str(_speedups.HERE / "_native.so")
    beside.SOURCE_HASH = _speedups.source_hash()  # type: ignore[attr-defined]
    monkeypatch.setattr(readerproxy, "_native", beside, raising=False)
    assert _speedups.load_native() is beside


# --- hatch_build.py ----------------------------------------------------------------------------------


def _hatch_build() -> ModuleType:
    spec = importlib.util.spec_from_file_location("hatch_build", REPO / "hatch_build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_build_hook_compiles_a_module_carrying_its_source_hash(tmp_path: Path) -> None:
    hook = _hatch_build()
    target = tmp_path / "readerproxy" / hook.MODULE_NAME
    assert hook.try_compile(target)
    # Loaded from that very file: by import name, an editable install's path entry (or finder) may
    # resolve `readerproxy` to the working tree, whose regular package outranks this directory.
    check = (
        "import importlib.util, sys; "
        "spec = importlib.util.spec_from_file_location('readerproxy._native', sys.argv[1]); "
        "n = importlib.util.module_from_spec(spec); spec.loader.exec_module(n); "
        "print(n.__file__); print(n.SOURCE_HASH)"
    )
    result = subprocess.run(
        [sys.executable, "-c", check, str(target)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    path, source_hash = result.stdout.splitlines()
    assert path == str(target) and source_hash == _speedups.source_hash()


def test_the_build_hook_warns_and_goes_on_without_a_compiler(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hook = _hatch_build()
    real = hook.sysconfig.get_config_var
    monkeypatch.setattr(
        hook.sysconfig, "get_config_var", lambda name: "/nonexistent/cc" if name == "CC" else real(name)
    )
    messages: list[str] = []
    assert hook.try_compile(tmp_path / hook.MODULE_NAME, messages.append) is False
    assert not (tmp_path / hook.MODULE_NAME).exists()
    assert len(messages) == 1 and "pure-Python" in messages[0]
