"""The one parse of a page that every extractor shares.

A `Document` is built once per page with selectolax's Lexbor parser. It carries the cleaned DOM
(`tree`, `elements` in document order) and a *linear view* of it: tag and text tokens in document
order, each with a source line number, a length (characters of text, or the code length of the
tag), whether it sits inside an anchor, and the element it belongs to. Line-based algorithms read
the linear view as "the HTML source"; DOM-based ones read the elements; any selection of tokens
maps back to elements through `LinearView.element`, so the reader can render real HTML.

How the linear view is built: the cleaned tree is serialised by Lexbor (C, fast) and that
well-formed serialisation is tokenised with one regular expression. The n-th start tag of the
serialisation is the n-th element of `tree.css("*")`, which is how tokens link to elements without
a Python walk over node objects.
"""

from __future__ import annotations

import html as html_lib
import re
from dataclasses import dataclass, field
from functools import cached_property
from urllib.parse import urljoin

import numpy as np
from selectolax.lexbor import LexborHTMLParser, LexborNode

TEXT, OPEN, CLOSE = 0, 1, 2

#: Elements removed before anything else sees the page (scripts, styles, raw-text containers).
REMOVED_TAGS = (
    "script",
    "style",
    "noscript",
    "template",
    "iframe",
    "noembed",
    "noframes",
    "xmp",
    "plaintext",
    "object",
    "embed",
    "applet",
    "frameset",
)
#: Elements hidden from a reader: `hidden`, `aria-hidden="true"` and inline `display:none`.
HIDDEN_SELECTOR = (
    '[hidden], [aria-hidden="true" i], [style*="display:none" i], [style*="display: none" i], '
    '[style*="visibility:hidden" i], [style*="visibility: hidden" i]'
)
VOID_TAGS = frozenset(
    "area base br col embed hr img input link meta param source track wbr keygen basefont "
    "bgsound frame".split()
)
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

_TOKEN = re.compile(
    r'(<(?:(/?)([A-Za-z][^\t\n\f\r />]*)(?:[^>"]|"[^"]*")*>|!--.*?-->|![^>]*>|\?[^>]*>))', re.S
)
_BAD_ATTRIBUTE_NAME = re.compile(r'["\'<>=/`]')
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
    url: str | None = None
    base_url: str | None = None
    title: str = ""
    lang: str | None = None
    dir: str | None = None
    source_length: int = 0  # characters of the page as given, before cleaning
    rebroken: bool = False  # lines were re-broken because the source had almost none
    json_ld: list[str] = field(default_factory=list)  # <script type="application/ld+json"> bodies

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

    def sum_descendants(self, element_values: np.ndarray) -> np.ndarray:
        """Per element, the sum of a per-element array over the element and everything inside it."""
        at_start = np.zeros(len(self.tokens), dtype=np.float64)
        np.add.at(at_start, self.start, element_values)
        return self.sum_within(at_start)

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

    def element_text(self, index: int) -> str:
        """Whitespace-normalised text of one element."""
        t = self.tokens
        parts = [t.text[i] for i in range(int(self.start[index]), int(self.end[index]) + 1)]
        return _WS.sub(" ", "".join(parts)).strip()

    def mask_elements(self, elements: np.ndarray | list[int]) -> np.ndarray:
        """Token mask covering the given elements with everything inside them."""
        idx = np.asarray(elements, dtype=np.int64)
        return ranges_mask(len(self.tokens), self.start[idx], self.end[idx])

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


def ranges_mask(size: int, first: np.ndarray, last: np.ndarray) -> np.ndarray:
    """Boolean mask of length `size` covering every inclusive range first[i]..last[i]."""
    marks = np.zeros(size + 1, dtype=np.int32)
    np.add.at(marks, first, 1)
    np.add.at(marks, np.asarray(last) + 1, -1)
    return np.cumsum(marks[:-1]) > 0


def parse(html: str, url: str | None = None) -> Document:
    """Parse a page once: clean it, tokenise it, link tokens to elements."""
    tree = LexborHTMLParser(html)
    title = _title(tree)
    json_ld = [node.text() for node in tree.css('script[type="application/ld+json" i]')]
    _clean(tree)
    elements = tree.css("*")
    tag = [node.tag.lower() if node.tag else "" for node in elements]
    serialised = tree.html or ""
    try:
        doc = _build(tree, elements, tag, serialised, url, title, len(html))
    except _Misaligned:
        # Attribute names with quotes or angle brackets break the tokeniser's view of the
        # serialisation; drop those attributes (no browser would honour them) and try again.
        for node in elements:
            for name in list(node.attributes):
                if _BAD_ATTRIBUTE_NAME.search(name):
                    del node.attrs[name]
        doc = _build(tree, elements, tag, tree.html or "", url, title, len(html))
    doc.json_ld = json_ld
    return doc


class _Misaligned(Exception):
    pass


def _clean(tree: LexborHTMLParser) -> None:
    """Remove scripts, styles, raw-text containers and hidden elements (comments are skipped later)."""
    tree.strip_tags(list(REMOVED_TAGS))
    for node in tree.css(HIDDEN_SELECTOR):
        if node.tag in ("html", "body"):
            continue
        classes = node.attributes.get("class") or ""
        if "fallback-image" in classes:  # Readability.js keeps these despite aria-hidden
            continue
        node.decompose()


def _title(tree: LexborHTMLParser) -> str:
    node = tree.css_first("title")
    return _WS.sub(" ", node.text()).strip() if node is not None else ""


def _build(
    tree: LexborHTMLParser,
    elements: list[LexborNode],
    tag: list[str],
    serialised: str,
    url: str | None,
    title: str,
    source_length: int,
) -> Document:
    n_elements = len(elements)
    parent = np.full(n_elements, -1, dtype=np.int32)
    start = np.zeros(n_elements, dtype=np.int32)
    end = np.zeros(n_elements, dtype=np.int32)

    kinds: list[int] = []
    owners: list[int] = []
    lengths: list[int] = []
    texts: list[str] = []
    anchors: list[bool] = []
    newline_after: list[bool] = []  # the token ends its source line

    stack: list[int] = []
    open_anchors = 0
    next_element = 0
    unescape = html_lib.unescape
    # _TOKEN.split gives [text, tag, slash, name, text, tag, slash, name, ..., text]; a comment,
    # doctype or processing instruction has name None.
    parts = _TOKEN.split(serialised)
    for k in range(0, len(parts), 4):
        raw = parts[k]
        if raw:
            text = unescape(raw) if "&" in raw else raw
            owner = stack[-1] if stack else -1
            inside = open_anchors > 0
            if "\n" in text:
                pieces = text.split("\n")
                last = len(pieces) - 1
                for i, piece in enumerate(pieces):
                    if i < last:
                        piece += "\n"
                    if piece:
                        kinds.append(TEXT)
                        owners.append(owner)
                        lengths.append(len(piece))
                        texts.append(piece)
                        anchors.append(inside)
                        newline_after.append(i < last)
            else:
                kinds.append(TEXT)
                owners.append(owner)
                lengths.append(len(text))
                texts.append(text)
                anchors.append(inside)
                newline_after.append(False)
        if k + 3 >= len(parts):
            break
        name = parts[k + 3]
        if name is None:  # comment, doctype, processing instruction
            continue
        name = name.lower()
        token_index = len(kinds)
        if parts[k + 2]:  # end tag
            # Pop down to the matching element; an end tag that matches nothing open (e.g. </image>
            # in SVG, where "image" is not void) is ignored rather than closing everything.
            depth = len(stack) - 1
            while depth >= 0 and tag[stack[depth]] != name:
                depth -= 1
            if depth < 0:
                continue
            while len(stack) > depth:
                element = stack.pop()
                end[element] = token_index
                if tag[element] == "a":
                    open_anchors -= 1
            kinds.append(CLOSE)
            owners.append(element)
            anchors.append(open_anchors > 0 or name == "a")
        else:
            element = next_element
            next_element += 1
            if element >= n_elements or tag[element] != name:
                raise _Misaligned(name)
            parent[element] = stack[-1] if stack else -1
            start[element] = end[element] = token_index
            if name == "a":
                open_anchors += 1
            if name not in VOID_TAGS:
                stack.append(element)
            kinds.append(OPEN)
            owners.append(element)
            anchors.append(open_anchors > 0)
        lengths.append(len(parts[k + 1]))
        texts.append("")
        newline_after.append(False)
    if next_element != n_elements:
        raise _Misaligned("element count")
    while stack:  # the serialisation is well formed, but stay total
        end[stack.pop()] = len(kinds) - 1

    kind = np.array(kinds, dtype=np.int8)
    length = np.array(lengths, dtype=np.int32)
    lines, rebroken = _line_numbers(kind, length, np.array(newline_after, dtype=bool))
    chars = np.array([len("".join(t.split())) if t else 0 for t in texts], dtype=np.int32)
    tokens = LinearView(
        kind=kind,
        element=np.array(owners, dtype=np.int32),
        line=lines,
        length=length,
        chars=chars,
        in_anchor=np.array(anchors, dtype=bool),
        text=texts,
    )
    root = tree.css_first("html")
    lang = (root.attributes.get("lang") or root.attributes.get("xml:lang")) if root else None
    direction = root.attributes.get("dir") if root else None
    base = tree.css_first("base[href]")
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
        parent=parent,
        start=start,
        end=end,
        tokens=tokens,
        url=url,
        base_url=base_url,
        title=title,
        lang=(lang or "").strip() or None,
        dir=(direction or "").strip().lower() or None,
        source_length=source_length,
        rebroken=rebroken,
    )


def _line_numbers(kind: np.ndarray, length: np.ndarray, newline_after: np.ndarray) -> tuple[np.ndarray, bool]:
    """Line of every token from the source newlines; re-break one-line pages after tag ends (CETR)."""
    n = len(kind)
    if n == 0:
        return np.zeros(0, dtype=np.int32), False
    breaks = newline_after.copy()
    total = int(length.sum())
    rebroken = total / (int(breaks.sum()) + 1) > REBREAK_MEAN_LINE
    if rebroken:
        breaks |= _rebreak(kind, length, newline_after)
    line = np.zeros(n, dtype=np.int32)
    line[1:] = np.cumsum(breaks[:-1])
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
