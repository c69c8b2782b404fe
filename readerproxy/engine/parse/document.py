"""The one parse of a page that every extractor shares.

A `Document` is built once per page with selectolax's Lexbor parser. It carries the cleaned DOM
(`tree`, `elements` in document order) and a *linear view* of it: tag and text tokens in document
order, each with a source line number, a length (characters of text, or the code length of the
tag), whether it sits inside an anchor, and the element it belongs to. Line-based algorithms read
the linear view as "the HTML source"; DOM-based ones read the elements; any selection of tokens
maps back to elements through `LinearView.element`, so the reader can render real HTML.

`parse` reads what it needs before cleaning, cleans the tree (`clean.py`: hidden, print-only and
screen-reader text, scripts, styles, streamed fragments put in place), reads the linear view from
the cleaned tree (`scan.py`: the tokenisers and the C walk) and numbers its lines here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING
from urllib.parse import urljoin

import numpy as np
from selectolax.lexbor import LexborHTMLParser, LexborNode

from ..._speedups import native
from .clean import clean, read_before_cleaning, source_tags
from .nesting import cap_depth
from .scan import CLOSE as CLOSE
from .scan import OPEN as OPEN
from .scan import TEXT as TEXT
from .scan import Scan, scan_tree

if TYPE_CHECKING:
    from .layout import Layout

#: Tags that start a new block of text: the "structural" tags of Moreno, Deschacht, Moens 2009 (§4) and the
#: paragraph boundaries of the plain-text output.
BLOCK_TAGS = frozenset(
    "address article aside blockquote body center dd details dialog dir div dl dt fieldset "
    "figcaption figure footer form h1 h2 h3 h4 h5 h6 header hgroup hr html li main menu nav ol "
    "p pre section summary table tbody td tfoot th thead tr ul br caption legend option "
    "select textarea title head frame picture video audio canvas img".split()
)
#: A page whose mean source line is longer than this is re-broken (CETR, "all code on one line").
REBREAK_MEAN_LINE = 400
#: Re-broken lines end at the first tag end after this many characters (CETR: "60 or so").
REBREAK_WIDTH = 60

_WS = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class LinearView:
    """Tokens of the cleaned page in document order (one array entry per token)."""

    kind: np.ndarray  # int8: TEXT, OPEN or CLOSE
    element: np.ndarray  # int32: the tag's element, or the element containing the text
    line: np.ndarray  # int32: line number, from 0
    length: np.ndarray  # int32: characters of text, or code length of the tag (e.g. 11 for <p id="x">)
    chars: np.ndarray  # int32: non-whitespace characters of text tokens (0 for tags)
    in_anchor: np.ndarray  # bool: inside an <a> (the <a> tags themselves included)
    text: list[str]  # the decoded text of text tokens; "" for tags

    def __len__(self) -> int:
        return len(self.kind)


@dataclass(eq=False)
class Document:
    """One parsed page: cleaned DOM, elements in document order and the linear view."""

    tree: LexborHTMLParser
    elements: list[LexborNode]
    tag: list[str]  # lower-case tag name per element
    parent: np.ndarray  # int32 parent element index, -1 for the root
    start: np.ndarray  # int32 token index of each element's start tag
    end: np.ndarray  # int32 token index of each element's end tag (== start for void elements)
    tokens: LinearView
    #: per element, `node.attributes.get(...)` of "id", "class" and "role" (None where absent), as
    #: parsed and cleaned: a later edit of a node's attributes is not reflected here
    ident: list[str | None]
    classes: list[str | None]
    role: list[str | None]
    url: str | None = None
    base_url: str | None = None
    title: str = ""
    lang: str | None = None
    dir: str | None = None
    source_length: int = 0  # characters of the page as given, before cleaning
    rebroken: bool = False  # lines were re-broken because the source had almost none
    json_ld: list[str] = field(default_factory=list)  # <script type="application/ld+json"> bodies
    #: placeholder src -> attributes of its real image from <noscript> (see `noscript_images`)
    noscript_images: dict[str, dict[str, str | None]] = field(default_factory=dict)
    layout: Layout | None = None  # what a browser saw of each element, when the page was rendered

    @property
    def n_lines(self) -> int:
        return int(self.tokens.line[-1]) + 1 if len(self.tokens) else 0

    @cached_property
    def body(self) -> tuple[int, int]:
        """First and last token index of <body> (the whole view if the page has none)."""
        try:
            element = self.tag.index("body")
        except ValueError:
            return 0, len(self.tokens) - 1
        return int(self.start[element]), int(self.end[element])

    @cached_property
    def body_span(self) -> slice:
        """The tokens of <body> as a slice (`first:last + 1` of `body`); empty for an empty page."""
        first, last = self.body
        return slice(first, last + 1)

    @cached_property
    def body_mask(self) -> np.ndarray:
        """Token mask of <body> and everything in it."""
        mask = np.zeros(len(self.tokens), dtype=bool)
        mask[self.body_span] = True
        return mask

    def sum_within(self, token_values: np.ndarray) -> np.ndarray:
        """Per element, the sum of a per-token array over the element's tokens (prefix sums)."""
        csum = np.concatenate(([0], np.cumsum(token_values)))
        return csum[self.end + 1] - csum[self.start]

    @cached_property
    def subtree_end(self) -> np.ndarray:
        """Per element, the index after the last element inside it (itself included): elements are in
        document order, so those inside element e are e up to the last one starting before e's end."""
        return np.searchsorted(self.start, self.end, side="right")

    def sum_descendants(self, element_values: np.ndarray) -> np.ndarray:
        """Per element, the sum of a per-element array over the element and everything inside it.

        For speed: prefix sums over the elements (a page has a third as many elements as tokens),
        with the same bits as prefix sums over the tokens holding each value at its start tag would
        give (`sum_within`): the tokens between two start tags would add only zeros (x + 0.0 is x).
        """
        before = np.concatenate((np.zeros(1), np.cumsum(element_values, dtype=np.float64)))
        return before[self.subtree_end] - before[: len(element_values)]

    @cached_property
    def subtree_chars(self) -> np.ndarray:
        """Non-whitespace text characters inside each element."""
        t = self.tokens
        return self.sum_within(np.where(t.kind == TEXT, t.chars, 0))

    @cached_property
    def subtree_anchor_chars(self) -> np.ndarray:
        """Non-whitespace text characters inside anchors within each element."""
        t = self.tokens
        return self.sum_within(np.where((t.kind == TEXT) & t.in_anchor, t.chars, 0))

    @cached_property
    def meta(self) -> list[dict[str, str | None]]:
        """The attributes of every <meta> element, in document order: read once, for metadata and the
        block features alike (for speed: from the elements, not a query over the whole tree). Shared
        by every reader of the Document: read them, do not change them."""
        return [self.elements[index].attributes for index in indices_of(self.tag, "meta")]

    def element_text(self, index: int) -> str:
        """Whitespace-normalised text of one element."""
        # for speed: the tokens' texts sliced, not indexed one by one
        joined = "".join(self.tokens.text[int(self.start[index]) : int(self.end[index]) + 1])
        return _WS.sub(" ", joined).strip()

    def mask_elements(self, elements: np.ndarray | list[int]) -> np.ndarray:
        """Token mask covering the given elements with everything inside them."""
        idx = np.asarray(elements, dtype=np.int64)
        return ranges_mask(len(self.tokens), self.start[idx], self.end[idx])

    def within(self, containers: np.ndarray | list[int], elements: np.ndarray) -> np.ndarray:
        """Per element of `elements`, whether it is one of `containers` or lies inside one."""
        if len(containers) == 0:
            return np.zeros(len(elements), dtype=bool)
        return self.mask_elements(containers)[self.start[elements]]

    def absolute_url(self, url: str | None) -> str | None:
        """Resolve a URL found in the page against its base URL."""
        if url is None:
            return None
        url = url.strip()
        if not self.base_url:
            return url
        try:
            return urljoin(self.base_url, url)
        except ValueError:
            return url


def indices_of(tags: list[str], name: str) -> list[int]:
    """Indices of the elements with this tag name (a new list: the caller may change it).

    For speed: a page's readers ask about a dozen names of the same `Document.tag` (never changed
    after `parse`), so from the second question about one list on, the positions of every name
    are read in one pass over it and kept (`_last_tags`: the last list asked about, held so that a
    list is never taken for another one at its address). At the ScrapingHub median (686 elements), the
    pass took 60 us and each scan with `list.index` 13 us.
    """
    last = _last_tags
    if last is not None and last[0] is tags:
        positions = last[1]
        if positions is None:
            positions = _positions(tags)
            _remember(tags, positions)
        found = positions.get(name)
        return found.copy() if found is not None else []
    _remember(tags, None)  # the first question about this list: a scan
    found = []
    try:
        at = tags.index(name)
        while True:
            found.append(at)
            at = tags.index(name, at + 1)
    except ValueError:
        return found


def _positions(tags: list[str]) -> dict[str, list[int]]:
    """The index of every element with each tag name, in document order."""
    positions: dict[str, list[int]] = {}
    get = positions.get
    for at, name in enumerate(tags):
        found = get(name)
        if found is None:
            positions[name] = [at]
        else:
            found.append(at)
    return positions


#: The tag list `indices_of` was asked about last, and the positions of its names once read (one
#: tuple, replaced whole, so that threads sharing the module read a list with its own positions).
_last_tags: tuple[list[str], dict[str, list[int]] | None] | None = None


def _remember(tags: list[str], positions: dict[str, list[int]] | None) -> None:
    global _last_tags
    _last_tags = (tags, positions)


def ranges_mask(size: int, first: np.ndarray, last: np.ndarray) -> np.ndarray:
    """Boolean mask of length `size` covering every inclusive range first[i]..last[i]."""
    # np.bincount rather than np.add.at: the same counts, several times faster.
    starts = np.bincount(np.asarray(first, dtype=np.int64), minlength=size + 1)[: size + 1]
    ends = np.bincount(np.asarray(last, dtype=np.int64) + 1, minlength=size + 1)[: size + 1]
    return np.cumsum(starts[:-1] - ends[:-1]) > 0


def token_word_counts(texts: list[str], index: np.ndarray) -> np.ndarray:
    """`len(texts[i].split())` for every token `i` of `index`, as float64."""
    if native is not None:  # the same counts in C (`_native.word_counts`)
        return np.frombuffer(native.word_counts(texts, index.astype(np.int64)), dtype=np.float64)
    return np.fromiter((len(texts[i].split()) for i in index.tolist()), dtype=np.float64, count=len(index))


def parse(html: str, url: str | None = None) -> Document:
    """Parse a page once: clean it, tokenise it, link tokens to elements (nesting capped first)."""
    stripped_tags, tags, may_have_base = source_tags(html)  # for speed: one pass for all (`source_tags`)
    capped = cap_depth(html, tags=tags)
    tree = LexborHTMLParser(capped.html)
    early = read_before_cleaning(tree, capped.html, None if capped.dropped else stripped_tags)
    title, json_ld = early.title, early.json_ld
    lazy_images = noscript_images(early.noscripts)  # before <noscript> goes
    elements = clean(tree, early)  # the cleaned tree's `tree.css("*")`
    tag, scan = scan_tree(tree, elements)
    doc = _document(tree, elements, tag, scan, url, title, len(html), may_have_base)
    doc.json_ld = json_ld
    doc.noscript_images = lazy_images
    return doc


_IMAGE_URL = re.compile(r"\.(jpg|jpeg|png|webp)", re.I)
_IMAGE_ATTRIBUTES = frozenset(("src", "srcset", "data-src", "data-srcset"))


def _has_image_source(img: LexborNode) -> bool:
    """An attribute that names the image: src, srcset, data-src(set), or any value ending like one."""
    return any(
        name in _IMAGE_ATTRIBUTES or (value and _IMAGE_URL.search(value))
        for name, value in img.attributes.items()
    )


def _single_image(node: LexborNode) -> LexborNode | None:
    """The one <img> of `node` when it is an image or wraps only one (no text), else None."""
    while node.tag != "img":
        children = [child for child in node.iter(include_text=False)]
        if len(children) != 1 or (node.text(deep=True) or "").strip():
            return None
        node = children[0]
    return node


def noscript_images(noscripts: list[LexborNode]) -> dict[str, dict[str, str | None]]:
    """The real images of lazy-loading placeholders: placeholder src -> the `<noscript>` copy's attributes.

    Readability.js's _unwrapNoscriptImages: a `<noscript>` holding a single image stands for the image
    before it, alone or in wrappers of one image (the blurred placeholder), skipping images that name
    no source (the empty slot a lazy loader fills in). Readability.js swaps the elements; here the
    tree is left as it is and the renderer swaps the attributes, because the linear view counts
    markup bytes per line (DANAg, Pan et al.) and a swap would change what the extractors see.
    """
    found: dict[str, dict[str, str | None]] = {}
    for noscript in noscripts:
        images = noscript.css("img")
        if len(images) != 1 or (noscript.text() or "").strip():
            continue
        previous = noscript.prev
        while previous is not None and (
            not previous.is_element_node or (previous.tag == "img" and not _has_image_source(previous))
        ):
            previous = previous.prev  # text, and the empty slot a lazy loader fills in
        placeholder = _single_image(previous) if previous is not None else None
        source = ((placeholder.attributes.get("src") or "") if placeholder is not None else "").strip()
        if source:
            found[source] = dict(images[0].attributes)
    return found


def _document(
    tree: LexborHTMLParser,
    elements: list[LexborNode],
    tag: list[str],
    scan: Scan,
    url: str | None,
    title: str,
    source_length: int,
    may_have_base: bool = True,
) -> Document:
    lines, rebroken = _line_numbers(scan.kind, scan.length, scan.newline_after)
    tokens = LinearView(
        kind=scan.kind,
        element=scan.owner,
        line=lines,
        length=scan.length,
        chars=scan.chars,
        in_anchor=scan.in_anchor,
        text=scan.text,
    )
    ident, classes, role = _id_class_role(elements, scan)
    # For speed, the first <html> and the first <base href> from the element list (document
    # order, as css_first would find them) rather than two more CSS walks of the tree.
    root = elements[tag.index("html")] if "html" in tag else None
    lang = (root.attributes.get("lang") or root.attributes.get("xml:lang")) if root else None
    direction = root.attributes.get("dir") if root else None
    base = None
    if may_have_base and "base" in tag:  # for speed, asked only where the source may hold one
        bases = (elements[i] for i, name in enumerate(tag) if name == "base")
        base = next((node for node in bases if "href" in node.attributes), None)
    base_url = url
    if base is not None:
        href = (base.attributes.get("href") or "").strip()
        try:
            base_url = urljoin(url, href) if url else href or None
        except ValueError:
            base_url = url
    return Document(
        tree=tree,
        elements=elements,
        tag=tag,
        parent=scan.parent,
        start=scan.start,
        end=scan.end,
        tokens=tokens,
        ident=ident,
        classes=classes,
        role=role,
        url=url,
        base_url=base_url,
        title=title,
        lang=(lang or "").strip() or None,
        dir=(direction or "").strip().lower() or None,
        source_length=source_length,
        rebroken=rebroken,
    )


def _id_class_role(
    elements: list[LexborNode], scan: Scan
) -> tuple[list[str | None], list[str | None], list[str | None]]:
    """The `id`, `class` and `role` of every element: from the scan where it read them (the C kernel),
    else (and for the elements it was unsure of) from `node.attributes`, which builds a dict per node."""
    if scan.attributes is not None:
        ident, classes, role = scan.attributes
        read: Iterable[int] = scan.unsure
    else:
        absent: list[str | None] = [None] * len(elements)
        ident, classes, role = absent, absent.copy(), absent.copy()
        read = range(len(elements))
    for index in read:
        attrs = elements[index].attributes
        if attrs:
            ident[index], classes[index], role[index] = attrs.get("id"), attrs.get("class"), attrs.get("role")
    return ident, classes, role


def _line_numbers(kind: np.ndarray, length: np.ndarray, newline_after: np.ndarray) -> tuple[np.ndarray, bool]:
    """Line of every token from the source newlines; re-break one-line pages after tag ends (CETR)."""
    n = len(kind)
    if n == 0:
        return np.zeros(0, dtype=np.int32), False
    total = int(length.sum())
    rebroken = total / (int(np.count_nonzero(newline_after)) + 1) > REBREAK_MEAN_LINE
    breaks = newline_after | _rebreak(kind, length, newline_after) if rebroken else newline_after
    # For speed, no copy of the breaks where none is added, and the running count summed straight
    # into the int32 lines (the same numbers: fewer than 2**31 tokens).
    line = np.empty(n, dtype=np.int32)
    line[0] = 0
    np.cumsum(breaks[:-1], dtype=np.int32, out=line[1:])
    return line, rebroken


def _rebreak(kind: np.ndarray, length: np.ndarray, newline_after: np.ndarray) -> np.ndarray:
    """Break after the first tag that ends in each new REBREAK_WIDTH-character window (vectorised).

    CETR inserts a newline "after 60 (or so) characters … after the end of the tag"; cutting the
    page into fixed windows and breaking at the first tag end in each gives lines of about that
    width without a Python loop over the tokens.
    """
    breaks = np.zeros(len(kind), dtype=bool)
    tags = np.flatnonzero(kind != TEXT)
    if len(tags) == 0:
        return breaks
    window = np.cumsum(length, dtype=np.int64)[tags] // REBREAK_WIDTH
    first_in_window = np.concatenate(([window[0] > 0], window[1:] > window[:-1]))
    breaks[tags[first_in_window]] = True
    return breaks
