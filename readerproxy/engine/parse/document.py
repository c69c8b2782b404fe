"""The one parse of a page that every extractor shares.

A `Document` is built once per page with selectolax's Lexbor parser. It carries the cleaned DOM
(`tree`, `elements` in document order) and a *linear view* of it: tag and text tokens in document
order, each with a source line number, a length (characters of text, or the code length of the
tag), whether it sits inside an anchor, and the element it belongs to. Line-based algorithms read
the linear view as "the HTML source"; DOM-based ones read the elements; any selection of tokens
maps back to elements through `LinearView.element`, so the reader can render real HTML.

How the linear view is built: the cleaned tree is serialised by Lexbor (C, fast) and that
well-formed serialisation is tokenised. The n-th start tag of the serialisation is the n-th element
of `tree.css("*")`, which is how tokens link to elements without a Python walk over node objects.
For speed, `_scan_fast` tokenises with numpy over the serialisation's code points (no Python step
per token); `_scan`, one regular expression and a stack, is the general path for the rare pages
whose serialisation the fast one declines, and both give the same answer where both answer.
When the optional C kernels are built (`readerproxy._speedups`), `_scan_native` runs first: the same
computation as `_scan_fast` in one pass, declining exactly where it declines. The same pass reads
each start tag's `id`, `class` and `role` (`Document.ident`, `classes`, `role`), which the DOM-based
scorers read for every element; the other scans leave them to one pass over the nodes
(`_id_class_role`). Before all of them, where it can, `_walk_native` reads the same view from the
tree itself, through Lexbor's own functions, without serialising (the serialisation defines the view;
the walk reproduces what the scan of it would give, and declines where it could not be sure).
"""

from __future__ import annotations

import functools
import html as html_lib
import logging
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from itertools import compress
from operator import attrgetter
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

import numpy as np
import selectolax.lexbor
from selectolax.lexbor import LexborHTMLParser, LexborNode

from ..._speedups import native
from .nesting import cap_depth

if TYPE_CHECKING:
    from .layout import Layout

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
#: `REMOVED_TAGS` but `<noscript>`, which `_clean` removes only when it is not the page (`_noscript_page`).
_STRIPPED_TAGS = tuple(name for name in REMOVED_TAGS if name != "noscript")
#: The inline styles that hide an element (`HIDDEN_SELECTOR`, `_hidden_by_attributes`).
_HIDING_STYLES = ("display:none", "display: none", "visibility:hidden", "visibility: hidden")
#: Elements hidden from a reader: `hidden`, `aria-hidden="true"` and inline `display:none`.
HIDDEN_SELECTOR = '[hidden], [aria-hidden="true" i], ' + ", ".join(
    f'[style*="{style}" i]' for style in _HIDING_STYLES
)
#: Text for screen readers only, shown to no sighted reader: the visually-hidden utility classes of
#: Bootstrap and Tailwind (`sr-only`), Bootstrap 5 and Shopify's themes (`visually-hidden`),
#: WordPress (`screen-reader-text`) and HTML5 Boilerplate (`visuallyhidden`). Their text is a
#: control's label ("Open menu", "Share on X", "opens in a new window"), a skip link or a label of
#: what the eye reads from the layout ("Regular price", "Vendor:"). Removed unless a sibling is the
#: visible twin hidden from screen readers (`aria-hidden`, removed as hidden): then the label is the
#: text of both ("Rated 4.8 stars" beside an aria-hidden "4.8 / 5"); `_hidden_and_screen_reader_only`.
SCREEN_READER_SELECTOR = ".sr-only, .visually-hidden, .screen-reader-text, .visuallyhidden"
_SCREEN_READER_CLASSES = frozenset(("sr-only", "visually-hidden", "screen-reader-text", "visuallyhidden"))
#: Elements whose class or id speaks of print: the candidates of `_print_only` (one query with the
#: hidden and screen-reader ones, told apart in Python).
_PRINT_NAMED = '[class*="print" i], [id*="print" i]'
_HIDDEN_OR_SCREEN_READER = f"{HIDDEN_SELECTOR}, {SCREEN_READER_SELECTOR}, {_PRINT_NAMED}"
#: Utility classes that show an element on paper only (display: none on screen): Bootstrap 3's
#: `visible-print*` and `hidden-screen`, Foundation's `show-for-print`, and the names sites give
#: their own (`print-only`, `printonly`, `only-print`, ...). Compared in lower case.
PRINT_ONLY_CLASSES = frozenset(
    (
        "print-only",
        "printonly",
        "print_only",
        "only-print",
        "onlyprint",
        "only_print",
        "print-show",
        "show-print",
        "show-for-print",
        "show-on-print",
        "visible-print",
        "visible-print-block",
        "visible-print-inline",
        "visible-print-inline-block",
        "visible-print-flex",
        "hidden-screen",
        "screen-hidden",
        "hide-on-screen",
        "hide-for-screen",
        "noscreen",
        "no-screen",
    )
)
#: Classes that hide an element on screen, which a class of `_PRINT_DISPLAY` shows on paper:
#: Bootstrap 4/5's `d-none d-print-block`, Tailwind's `hidden print:block`.
_SCREEN_NONE = frozenset(("d-none", "hidden"))
_PRINT_DISPLAY = re.compile(r"d-print-(?!none)[a-z-]+|print:(?!hidden)[a-z-]+")
#: What a header or footer for paper says of itself ("Thank you for printing this page", "Printed
#: from https://...", "Date printed: ..."): not "Print" alone, which a print button says on screen.
_PRINT_WORDS = re.compile(
    r"thank(?:s| you) for printing|\bprinted (?:from|on|at)\b|\b(?:date|time) printed\b|\bprint(?:ed)? date\b",
    re.IGNORECASE,
)
#: A print-only block by its words alone (`_PRINT_WORDS` in an element whose class or id is a
#: print word) holds at most this many words: a header or footer for paper, not an article.
PRINT_BLOCK_WORDS = 40
#: Share of the body's words a print-only element must stay under to be removed: one holding the
#: page itself is not a print header (a page may mark its whole article for print).
PRINT_ONLY_SHARE = 0.5
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
_TAG_ID = attrgetter("tag_id")
#: str.isspace by code point (no whitespace above U+3000); the last entry stands for the rest.
_WHITESPACE = np.array([chr(c).isspace() for c in range(0x3002)])


def code_points(text: str) -> np.ndarray:
    """One array entry per character of `text`, in the narrowest unsigned type that holds them all.

    Chosen for speed: most pages need 8 or 16 bits, and every numpy pass of the scan over 1 or 2
    bytes per character is faster than over 4. UTF-16 has one unit per character only without
    surrogates (lone ones in a str would pair up on the way back), so those pages get 32 bits.
    """
    try:
        return np.frombuffer(text.encode("latin-1"), dtype=np.uint8)
    except UnicodeEncodeError:
        pass
    wide = text.encode("utf-16-le", "surrogatepass")
    if len(wide) == 2 * len(text):
        codes = np.frombuffer(wide, dtype=np.uint16)
        if not ((codes >= 0xD800) & (codes <= 0xDFFF)).any():
            return codes
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


_CODECS = {1: "latin-1", 2: "utf-16-le", 4: "utf-32-le"}


def _text(codes: np.ndarray) -> str:
    """The string of an array made by `code_points` (or cut from one)."""
    return codes.tobytes().decode(_CODECS[codes.dtype.itemsize], "surrogatepass")


def _ascii_letter(code: np.ndarray) -> np.ndarray:
    lower = code | 0x20
    return (lower >= ord("a")) & (lower <= ord("z"))


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


def parse(html: str, url: str | None = None) -> Document:
    """Parse a page once: clean it, tokenise it, link tokens to elements (nesting capped first)."""
    capped = cap_depth(html).html
    tree = LexborHTMLParser(capped)
    early = _read_before_cleaning(tree, capped)
    title = _title(early.titles)
    json_ld = [node.text() for node in early.json_ld]
    lazy_images = noscript_images(early.noscripts)  # before <noscript> goes
    _clean(tree, early)
    elements = tree.css("*")
    # For speed, the C walk of the tree (`_walk_native`) where it can; else the tree is serialised
    # and the C scan reads the string, tag names included (`_tag_names` reads every node).
    scan = _walk_native(tree, len(elements)) if _WALK and native is not None else None
    serialised = ""
    if scan is None:
        serialised = tree.html or ""
        scan = _scan_native(serialised, len(elements)) if native is not None else None
    tag = scan.tag if scan is not None and scan.tag is not None else _tag_names(elements)
    if scan is None:
        scan = _scan_fast(serialised, tag)
    if scan is None:
        try:
            scan = _scan(serialised, tag)
        except _Misaligned:
            # Attribute names with quotes or angle brackets break the tokeniser's view of the
            # serialisation; drop those attributes (no browser would honour them) and try again.
            for node in elements:
                for name in list(node.attributes):
                    if _BAD_ATTRIBUTE_NAME.search(name):
                        del node.attrs[name]
            scan = _scan(tree.html or "", tag)
    doc = _document(tree, elements, tag, scan, url, title, len(html))
    doc.json_ld = json_ld
    doc.noscript_images = lazy_images
    return doc


class _Misaligned(Exception):
    pass


#: What `parse` reads from the tree before cleaning it. One selector list, so one walk of the tree;
#: chosen for speed: four separate walks (`css`, `css_first`) cost about 0.06 ms more per page at the
#: ScrapingHub median. Each selector matches its own tag name, so the tag tells which one matched.
_BEFORE_CLEANING = (
    'title, script[type="application/ld+json" i], noscript, div[hidden][id^="S:"], div[id^="af"][style], '
    "style"
)


@dataclass(slots=True)
class _Early:
    """The elements `parse` reads before cleaning, each list in document order."""

    titles: list[LexborNode]
    json_ld: list[LexborNode]
    noscripts: list[LexborNode]
    boundaries: list[LexborNode]  # React's streamed Suspense boundaries (`_place_streamed_boundaries`)
    fragments: list[LexborNode]  # Marko's streamed `<await>` fragments, maybe (`_place_async_fragments`)
    stripped_tags: list[str]  # those of `_STRIPPED_TAGS` that the page may hold (`_tags_in_source`)
    styles: list[str] = field(default_factory=list)  # inline stylesheets that mention `print`


def _read_before_cleaning(tree: LexborHTMLParser, html: str) -> _Early:
    early = _Early([], [], [], [], [], _tags_in_source(html, _STRIPPED_TAGS))
    lists = {
        "title": early.titles,
        "script": early.json_ld,
        "noscript": early.noscripts,
    }
    for node in tree.css(_BEFORE_CLEANING):
        if node.tag == "style":
            # for speed, only a stylesheet that can say anything about print is kept to be read
            if "print" in (css := node.text() or ""):
                early.styles.append(css)
        elif node.tag != "div":
            lists[node.tag or ""].append(node)
        elif (node.attributes.get("id") or "").startswith("S:"):
            early.boundaries.append(node)
        elif _DISPLAY_NONE.search(node.attributes.get("style") or ""):
            early.fragments.append(node)
    return early


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


def _word_count(node: LexborNode) -> int:
    return len(node.text(deep=True).split())


#: Words a page's `<noscript>` must hold before it can be the page a reader sees (`_noscript_page`).
NOSCRIPT_PAGE_WORDS = 100
#: ... and at most this many words may stand outside it (a script-rendered shell).
NOSCRIPT_SHELL_WORDS = 1000


def _noscript_page(tree: LexborHTMLParser, any_noscript: bool) -> bool:
    """True when the page without scripts is its `<noscript>` content: a shell rendered by scripts
    (a few hundred words of chrome) around a `<noscript>` holding more text than everything else
    (a forum's crawler view of the thread, a server-rendered copy). A browser without scripts shows
    that content, and so does a reader. Called after scripts and styles are gone (which may have
    taken `<noscript>` elements with them: so they are looked up again, when the page had any)."""
    blocks = tree.css("noscript") if any_noscript else []
    if not blocks:
        return False
    inside = sum(_word_count(node) for node in blocks if node.parent is None or node.parent.tag != "noscript")
    if inside < NOSCRIPT_PAGE_WORDS or tree.body is None:
        return False
    outside = _word_count(tree.body) - inside
    return outside < min(inside, NOSCRIPT_SHELL_WORDS)


#: Share of the body's words above which a `visibility: hidden` element is the page itself.
ANTI_FLICKER_SHARE = 0.9
_VISIBILITY_HIDDEN = re.compile(r"visibility\s*:\s*hidden", re.IGNORECASE)
_DISPLAY_NONE = re.compile(r"display\s*:\s*none", re.IGNORECASE)


def _shown_later(
    node: LexborNode, body_words: Callable[[], float], landmark_words: Callable[[LexborNode], int]
) -> bool:
    """True for a hidden element that a script reveals as the page's content, which a reader shows:
    an anti-flicker wrapper, `visibility: hidden` on an element that holds nearly all of the page's
    text (at least `ANTI_FLICKER_SHARE` of `body_words()`), lifted by a script once styles or
    experiments load; or a gate's wrapper, inline `display: none` on an element inside the page's
    main landmark that holds nearly all of its text (the same share of the `<main>`'s words), shown
    by a script once it has checked the visitor (a shop's lockdown app wraps every page so: Death
    Wish Coffee's category grid and product page). The landmark, not the body, for the
    display case: a hidden menu or dialog outside it may hold as many words as the content.
    `landmark_words` counts a landmark's words, once per landmark (for speed: a shop hides hundreds
    of swatches inside its `<main>`)."""
    style = node.attributes.get("style") or ""
    if _DISPLAY_NONE.search(style):
        main = _main_landmark(node)
        return main is not None and _word_count(node) >= max(1.0, ANTI_FLICKER_SHARE * landmark_words(main))
    if not _VISIBILITY_HIDDEN.search(style):
        return False
    words = _word_count(node)
    return words > 0 and words >= ANTI_FLICKER_SHARE * body_words()


def _main_landmark(node: LexborNode) -> LexborNode | None:
    """The nearest `<main>` or `role="main"` element around `node`, or None."""
    up = node.parent
    while up is not None and up.tag != "main" and (up.attributes.get("role") or "").lower() != "main":
        up = up.parent
    return up


def _place_streamed_boundaries(tree: LexborHTMLParser, boundaries: list[LexborNode]) -> None:
    """React's streamed server rendering: each Suspense boundary's HTML arrives at the end of the body
    as `<div hidden id="S:n">` and a script moves it to its placeholder, `<template id="B:n">` (a
    boundary) or `<template id="P:n">` (a postponed segment inside one). Do the
    same (shown, in place), so a reader sees the content where the page puts it; a boundary without
    its placeholder stays hidden. `boundaries`: the page's `div[hidden][id^="S:"]`, in document order."""
    if not boundaries:
        return
    placeholders = {
        (template.attributes.get("id") or "")[2:]: template
        for template in tree.css('template[id^="B:"], template[id^="P:"]')
    }
    # Last first: a boundary's placeholder may lie in an earlier boundary's content, which must
    # still be there (it is moved, as a copy with what it holds by then, later in this loop).
    for node in reversed(boundaries):
        placeholder = placeholders.get((node.attributes.get("id") or "")[2:])
        if placeholder is None:
            continue
        del node.attrs["hidden"]
        placeholder.insert_before(node)  # a copy, in place
        node.decompose()


#: A placeholder of Marko's streamed `<await>` fragments: `af` + the runtime's id + `ph` + the
#: fragment's number (`<noscript id="afph3">`, eBay's `<span id="afbrwwebph16">`).
_ASYNC_PLACEHOLDER_ID = re.compile(r"af(.*)ph(\d+)")


def _place_async_fragments(tree: LexborHTMLParser, fragments: list[LexborNode]) -> None:
    """Marko's streamed `<await>` fragments (client reorder; eBay's pages): the server sends the
    page with placeholders, `<noscript id="af{runtime}ph{n}">`, and each fragment's HTML as it is
    ready, at the end of the body in `<div id="af{runtime}{n}" style="display:none">`, which an
    inline script (`$af{runtime}(n)`) moves into its placeholder. Do the same, so a reader sees the
    content in place (an eBay category page sends its whole listing in 43 hidden fragments). A
    fragment whose placeholder lies in another fragment is placed first, so the outer one carries
    it; one without a placeholder, or inside another fragment, stays hidden. `fragments`: the
    page's `div[id^="af"]` with an inline `display: none`, in document order."""
    if not fragments:
        return
    by_id = {node.attributes.get("id") or "": node for node in fragments}
    placeholders: dict[str, LexborNode] = {}
    for node in tree.css('[id^="af"]'):
        match = _ASYNC_PLACEHOLDER_ID.fullmatch(node.attributes.get("id") or "")
        if match is not None and f"af{match[1]}{match[2]}" in by_id:
            placeholders[f"af{match[1]}{match[2]}"] = node

    def host(node: LexborNode) -> str | None:
        """The id of the fragment `node` lies in, or None."""
        up = node.parent
        while up is not None:
            if up.tag == "div" and (ident := up.attributes.get("id") or "") in by_id:
                return ident
            up = up.parent
        return None

    depth: dict[str, int] = {}
    for ident, placeholder in placeholders.items():
        if host(by_id[ident]) is not None:
            continue  # a fragment inside another is copied with it: its node would not outlive it
        chain, at = [ident], host(placeholder)
        while at is not None and at not in chain:  # each id once: a cycle ends the walk
            chain.append(at)
            at = host(placeholders[at]) if at in placeholders else None
        if at is None:  # no cycle
            depth[ident] = len(chain)
    # Deepest first: an outer fragment is copied with the fragments already placed inside it.
    for ident in sorted(depth, key=depth.__getitem__, reverse=True):
        placeholder, node = placeholders[ident], by_id[ident]
        for child in node.iter(include_text=True):
            placeholder.insert_before(child)  # a copy, in place
        placeholder.decompose()
        node.decompose()


def _clean(tree: LexborHTMLParser, early: _Early) -> None:
    """Remove scripts, styles, raw-text containers and hidden elements (comments are skipped later).
    `<noscript>` is removed too, unless it is the page a browser without scripts would show
    (`_noscript_page`): then its content stays in place."""
    _place_streamed_boundaries(tree, early.boundaries)
    _place_async_fragments(tree, early.fragments)
    # For speed, only the names the page may hold: `strip_tags` walks the whole tree once per name.
    tree.strip_tags(early.stripped_tags)
    if _noscript_page(tree, bool(early.noscripts)):
        for node in tree.css("noscript"):
            node.unwrap()
    elif early.noscripts:
        tree.strip_tags(["noscript"])
    body = tree.body
    # The body's word count, counted once if needed (no body: no element is the page).
    body_words = functools.cache(lambda: _word_count(body) if body is not None else math.inf)
    landmark_words = functools.cache(_word_count)
    # For speed, one query for both kinds (a walk of the tree each otherwise), told apart here.
    hidden, screen_reader, print_named = _hidden_and_screen_reader_only(tree.css(_HIDDEN_OR_SCREEN_READER))
    collapsed = _collapsed_panels(tree, hidden)
    for node in hidden:
        if node.tag in ("html", "body") or _shown_later(node, body_words, landmark_words):
            continue
        classes = node.attributes.get("class") or ""
        if "fallback-image" in classes:  # Readability.js keeps these despite aria-hidden
            continue
        if collapsed and node.attributes.get("id") in collapsed:
            continue
        node.decompose()
    for node in screen_reader:
        node.decompose()
    for node in _print_only(tree, print_named, early.styles, body_words):
        node.decompose()


def _hidden_and_screen_reader_only(
    found: list[LexborNode],
) -> tuple[list[LexborNode], list[LexborNode], list[LexborNode]]:
    """`found` (the matches of `_HIDDEN_OR_SCREEN_READER`) split into the hidden elements
    (`HIDDEN_SELECTOR`'s, by their attributes), the screen-reader-only ones to remove (each of
    the others, unless its parent holds an `aria-hidden` element with text: the visible twin that
    is removed as hidden) and those whose class or id speaks of print (`_print_only` decides on
    them). Told apart before anything is removed, while the twins are there."""
    hidden: list[LexborNode] = []
    screen_reader: list[LexborNode] = []
    print_named: list[LexborNode] = []
    seen: set[int] = set()
    # Per parent, whether it holds a visible twin: asked once per parent, not once per label (a
    # page of many labels under one parent would cost their number squared).
    twins: dict[int, bool] = {}
    for node in found:
        if node.mem_id in seen:  # an element matching two of the selectors comes twice
            continue
        seen.add(node.mem_id)
        if _hidden_by_attributes(node.attributes):
            hidden.append(node)
            continue
        attributes = node.attributes
        if (
            "print" in (attributes.get("class") or "").lower()
            or "print" in (attributes.get("id") or "").lower()
        ):
            print_named.append(node)
            # matched for its name alone, or also as a screen reader's text (the test below;
            # `css_matches` would look inside it too)
            if _SCREEN_READER_CLASSES.isdisjoint((attributes.get("class") or "").split()):
                continue
        parent = node.parent
        if parent is None or node.tag in ("html", "body"):
            continue
        twin = twins.get(parent.mem_id)
        if twin is None:
            twin = twins[parent.mem_id] = any(
                (child.attributes.get("aria-hidden") or "").lower() == "true" and child.text(strip=True)
                for child in parent.iter()
            )
        if not twin:
            screen_reader.append(node)
    return hidden, screen_reader, print_named


def _print_only(
    tree: LexborHTMLParser, named: list[LexborNode], styles: list[str], body_words: Callable[[], float]
) -> list[LexborNode]:
    """The elements shown on paper only, which no reader sees on screen: a print header ("Thank
    you for printing this page"), the page's address and date as printed, a logo for paper.

    Told by structure, as the page's external stylesheets are not read:
    - a utility class of print-only display (`PRINT_ONLY_CLASSES`, Bootstrap's `d-none` with a
      `d-print-*` class, Tailwind's `hidden` with `print:*`);
    - a class or id that the page's own inline stylesheet hides on screen and shows in its
      `@media print` rules (`print_only_names`), on a short block (`PRINT_BLOCK_WORDS`) or one
      named for print;
    - a class or id that is a print word (`print-header`, `printFooter`) on a short block
      (`PRINT_BLOCK_WORDS`) that says it is printed ("Thank you for printing", `_PRINT_WORDS`).
    None holding `PRINT_ONLY_SHARE` of the body's words or more: that is the page itself."""
    found: list[LexborNode] = []
    for node in named:
        attributes = node.attributes
        classes = (attributes.get("class") or "").lower().split()
        if not PRINT_ONLY_CLASSES.isdisjoint(classes) or (
            not _SCREEN_NONE.isdisjoint(classes) and any(map(_PRINT_DISPLAY.fullmatch, classes))
        ):
            found.append(node)
            continue
        if any(_print_word(name) for name in _names(attributes)):
            text = node.text(deep=True)
            if len(text.split()) <= PRINT_BLOCK_WORDS and _PRINT_WORDS.search(text):
                found.append(node)
    hidden_names = print_only_names(styles) if styles else frozenset()
    if hidden_names:
        selector = ", ".join(f'[class~="{n}"]' if kind == "." else f'[id="{n}"]' for kind, n in hidden_names)
        # a short block, or one named for print: a long one shown on paper is rather a collapsed
        # panel that the page prints open (an FAQ's answers), which a reader shows too
        found.extend(
            node
            for node in tree.css(selector)
            if _word_count(node) <= PRINT_BLOCK_WORDS
            or any(_print_word(name) for name in _names(node.attributes))
        )
    if not found:
        return found
    return [node for node in found if _word_count(node) < PRINT_ONLY_SHARE * body_words()]


def _names(attributes: dict[str, str | None]) -> list[str]:
    """An element's classes and id, in lower case."""
    return ((attributes.get("class") or "") + " " + (attributes.get("id") or "")).lower().split()


#: Class names that hide an element on paper (a screen's chrome): "print" in them is no sign of
#: a print-only block.
_NOT_ON_PAPER = re.compile(
    r"(?:no|not|hide|hidden|none)[-_]?(?:on[-_]?|for[-_]?)?print|print[-_:]?(?:hide|hidden|none)"
)


def _print_word(name: str) -> bool:
    """Whether a (lower-case) class or id name has "print" as one of its words, not in another
    word, and does not hide its element on paper: `print-header`, `printheader` and `print_logo`
    do; `blueprint`, `imprint`, `no-print`, `display-none-print` do not."""
    return (name.startswith("print") or "-print" in name or "_print" in name) and _NOT_ON_PAPER.search(
        name
    ) is None


#: A CSS comment, and the simple selectors `print_only_names` reads: one class or one id.
_CSS_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)
_SIMPLE_SELECTOR = re.compile(r"\s*([.#])(-?[_a-zA-Z][\w-]*)\s*")
_DISPLAY = re.compile(r"display\s*:\s*([a-z-]+)", re.IGNORECASE)


def print_only_names(styles: list[str]) -> frozenset[tuple[str, str]]:
    """The classes and ids (as (".", name) or ("#", name)) that a page's inline stylesheets hide
    on screen and show on paper: `display: none` in a rule outside any `@media` (or in an
    `@media screen` one), and a `display` other than none in an `@media print` rule; or hidden in
    `@media screen` alone (no width: a rule for narrow or wide screens is responsive, not print). Only rules whose selector is one class or one id are read (a cheap
    reading, not a cascade: what a print header needs)."""
    screen_none: set[tuple[str, str]] = set()
    print_shown: set[tuple[str, str]] = set()
    screen_media: set[tuple[str, str]] = set()
    for css in styles:
        for media, selectors, display in _css_rules(_CSS_COMMENT.sub("", css)):
            names = _simple_names(selectors)
            if not names:
                continue
            if media is None:
                if display == "none":
                    screen_none.update(names)
            elif "print" in media and "not" not in media and "screen" not in media:
                if display != "none":
                    print_shown.update(names)
            elif media.replace("only", "").strip() == "screen" and display == "none":
                screen_media.update(names)  # every screen, whatever its width
    return frozenset((screen_none & print_shown) | screen_media)


def _simple_names(selectors: str) -> list[tuple[str, str]]:
    """The (kind, name) of a rule's selector list when each selector is one class or one id."""
    names = []
    for selector in selectors.split(","):
        match = _SIMPLE_SELECTOR.fullmatch(selector)
        if match is None:
            return []
        names.append((match[1], match[2]))
    return names


def _css_rules(css: str) -> Iterable[tuple[str | None, str, str]]:
    """(media query or None, selector list, display value) of each style rule with a `display`,
    in order; rules inside one level of `@media` carry its query, other at-rules are skipped."""
    position, media = 0, None
    while True:
        brace = css.find("{", position)
        close = css.find("}", position)
        if close >= 0 and (brace < 0 or close < brace):  # the end of an @media block (or a stray brace)
            media, position = None, close + 1
            continue
        if brace < 0:
            return
        prelude = css[position:brace].strip()
        if prelude.startswith("@"):
            if media is None and prelude[1:6].lower() == "media":
                media, position = prelude[6:].strip().lower(), brace + 1
            else:
                position = _matching_brace(css, brace) + 1
            continue
        close = css.find("}", brace)
        if close < 0:
            return
        found = _DISPLAY.search(css, brace, close)
        if found is not None:
            yield media, prelude, found[1].lower()
        position = close + 1


#: A brace of a stylesheet (`_matching_brace` steps from one to the next).
_BRACE = re.compile(r"[{}]")


def _matching_brace(css: str, opening: int) -> int:
    """The index of the brace closing the one at `opening` (the end of the text if none).

    For speed, from brace to brace (`_BRACE`), not character by character: an at-rule may carry a
    font as a data URL (100 KB), which a Python step per character took up to 136 ms to cross on a
    ScrapingHub page."""
    depth = 0
    for match in _BRACE.finditer(css, opening):
        if match[0] == "{":
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return match.start()
    return len(css)


def _hidden_by_attributes(attributes: dict[str, str | None]) -> bool:
    """Whether an element's attributes match `HIDDEN_SELECTOR` (the same tests, in Python)."""
    if "hidden" in attributes or (attributes.get("aria-hidden") or "").lower() == "true":
        return True
    style = (attributes.get("style") or "").lower()
    return any(rule in style for rule in _HIDING_STYLES)


#: Roles and tags of a hidden element that a control opens but that is no part of the page's text:
#: menus, dialogs, pop-ups (WAI-ARIA 1.2, §5.3).
_NOT_PANELS = frozenset(
    (
        "menu",
        "menubar",
        "navigation",
        "dialog",
        "alertdialog",
        "listbox",
        "tooltip",
        "combobox",
        "tree",
        "search",
    )
)


def _collapsed_panels(tree: LexborHTMLParser, hidden: Iterable[LexborNode]) -> frozenset[str]:
    """The ids of the hidden elements that are collapsed parts of the page: an accordion's panels
    and a tab set's other tabs, closed until a reader taps their control (WAI-ARIA 1.2, the
    accordion and tabs patterns of the Authoring Practices).

    - A control names its panel by `aria-controls` and says it opens one by `aria-expanded`, or by
      being a `tab`, a `<button>` or an element of role `button` (many accordions leave
      `aria-expanded` out).
    - An element of role `tabpanel` is a panel whatever names it (Twilio's quick-start hides each
      language's tab so).
    - A panel that is a menu, dialog or pop-up (`_NOT_PANELS`, or a `<nav>`/`<dialog>`) stays
      hidden, as does a panel without an id.

    A reader shows these panels open, as WCXB's references keep them (an installation guide's steps
    behind "Week 1", a quick-start's code for each language). For speed, the controls are looked
    for only on pages with a hidden element that has an id."""
    # each hidden element with an id: its id, tag and role, read once
    named = [
        (ident, node.tag, _role(attributes))
        for node in hidden
        if (ident := (attributes := node.attributes).get("id"))
    ]
    if not named:
        return frozenset()
    opened: set[str] = set()
    for control in tree.css("[aria-controls]"):
        attributes = control.attributes
        if "aria-expanded" in attributes or control.tag == "button" or _role(attributes) in ("tab", "button"):
            opened.update((attributes.get("aria-controls") or "").split())
    return frozenset(
        ident
        for ident, tag, role in named
        # a tab set's panel is one whether or not its tab names it (WAI-ARIA 1.2, `tabpanel`)
        if (ident in opened or role == "tabpanel")
        and tag not in ("nav", "dialog")
        and role not in _NOT_PANELS
    )


def _role(attributes: dict[str, str | None]) -> str:
    """An element's ARIA role, trimmed and in lower case ("" for none)."""
    return (attributes.get("role") or "").strip().lower()


def _tags_in_source(html: str, names: tuple[str, ...]) -> list[str]:
    """Those of `names` (lower-case ASCII) that some "<" of the page's markup is followed by, ASCII
    case aside, in the order given. Every element of one of these names comes from such a start
    tag (the tokeniser lower-cases ASCII letters only and decodes no character reference in a tag
    name; implied elements are html, head, body, tbody, colgroup and the like), so a name missing here
    names no element and needs no walk of the tree. The C kernel `tags_in_source` when built."""
    if native is not None:
        found: list[str] = native.tags_in_source(html, names)
        return found
    return [name for name in names if re.search("<" + re.escape(name), html, re.ASCII | re.IGNORECASE)]


def _tag_names(elements: list[LexborNode]) -> list[str]:
    """Lower-case tag name of every element ("" for none).

    For speed: Lexbor's numeric tag id is read per element (a plain integer), the name once per
    distinct id. Within one document the two correspond one to one (a custom element's id is its
    entry in the document's tag table), and names that differ only in case are lower-cased alike.
    """
    ids = list(map(_TAG_ID, elements))
    node_of = dict(zip(ids, elements, strict=True))
    name_of = {tag_id: (node.tag or "").lower() for tag_id, node in node_of.items()}
    return list(map(name_of.__getitem__, ids))


def _title(titles: list[LexborNode]) -> str:
    """The first `<title>`'s text, spaces collapsed."""
    return _WS.sub(" ", titles[0].text()).strip() if titles else ""


@dataclass(slots=True)
class _Scan:
    """The linear view and the element tree read from the serialisation (before line numbers)."""

    kind: np.ndarray
    owner: np.ndarray
    length: np.ndarray
    text: list[str]
    chars: np.ndarray
    in_anchor: np.ndarray
    newline_after: np.ndarray  # the token ends its source line
    parent: np.ndarray
    start: np.ndarray
    end: np.ndarray
    #: id, class and role per element (see `Document`), when the scan read them from the start tags;
    #: `unsure` lists the elements whose three values must be read from the node instead
    attributes: tuple[list[str | None], list[str | None], list[str | None]] | None = None
    unsure: list[int] = field(default_factory=list)
    #: the elements' tag names, when the scan read them from the start tags (`_scan_native`)
    tag: list[str] | None = None


def _tag_spans(serialised: str, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """First and last character of every "<...>" (tags, comments, doctype), as `_TOKEN` reads them.

    Lexbor escapes "<" and ">" in text, so a "<...>" mostly ends at the first ">" after its "<";
    the exceptions (a "<" or ">" inside an attribute value or a comment) are found with numpy and
    re-read one by one with `_TOKEN` from their "<" (their match swallows any "<" inside it).
    """
    lt = np.flatnonzero(codes == ord("<"))
    gt = np.flatnonzero(codes == ord(">"))
    if not len(lt) or not len(gt):
        return None
    after = np.searchsorted(gt, lt)
    end = gt[np.minimum(after, len(gt) - 1)]
    first, second = codes[lt + 1], codes[lt + 2]
    element = _ascii_letter(first) | ((first == ord("/")) & _ascii_letter(second))
    markup = (first == ord("!")) | (first == ord("?"))  # comment, doctype, processing instruction
    quotes = np.flatnonzero(codes == ord('"'))
    odd_quotes = (np.searchsorted(quotes, end) - np.searchsorted(quotes, lt)) % 2 == 1
    comment = (first == ord("!")) & (second == ord("-")) & (codes[lt + 3] == ord("-"))
    whole_comment = (end - lt >= 6) & (codes[end - 1] == ord("-")) & (codes[end - 2] == ord("-"))
    irregular = (
        (after == len(gt))
        | (end > np.append(lt[1:], len(codes)))  # a "<" before the first ">"
        | (element & odd_quotes)  # a ">" inside an attribute value
        | (comment & ~whole_comment)  # a ">" inside a comment
        | ~(element | markup)  # not a tag at all
    )
    if not irregular.any():
        return lt, end
    kept = np.ones(len(lt), dtype=bool)
    swallowed_until = 0
    for index in np.flatnonzero(irregular).tolist():
        at = int(lt[index])
        if at < swallowed_until:  # inside the previous match
            continue
        match = _TOKEN.match(serialised, at)
        if match is None:  # a "<" that is text: leave the page to `_scan`
            return None
        swallowed_until = match.end()
        end[index] = swallowed_until - 1
        kept[index + 1 : int(np.searchsorted(lt, swallowed_until))] = False
    return lt[kept], end[kept]


def _gather(values: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """values[starts[0]:starts[0] + lengths[0]], values[starts[1]:...], ... concatenated."""
    total = int(lengths.sum())
    offsets = np.cumsum(lengths) - lengths
    return values[np.repeat(starts - offsets, lengths) + np.arange(total)]


def _ascii_lower(codes: np.ndarray) -> np.ndarray:
    return np.where((codes >= ord("A")) & (codes <= ord("Z")), codes | 0x20, codes)


def _scan_fast(serialised: str, tag: list[str]) -> _Scan | None:
    """The linear view without a Python step per token, or None when the page needs `_scan`.

    Chosen for speed: the loop of `_scan` cost ten times Lexbor's own parse. Here the
    serialisation is read as an array of code points: numpy finds the tags (`_tag_spans`), their
    kinds and names; the text between them is cut into lines by one unescape, one replace and one
    split of a string holding only text; the nesting comes from the running depth (an element's
    end tag is the next end tag that returns to its depth). Every assumption is checked; where one
    fails (a stray end tag, a name that is not the element's, ...) the page goes to `_scan`, which
    gives the same answer as this function everywhere this function answers.
    """
    codes = code_points(serialised + "\x00\x00\x00")  # padding: peeking past a tag's "<" is safe
    if not serialised or not codes[:-3].all():  # "\x00" separates the pieces below
        return None
    spans = _tag_spans(serialised, codes)
    if spans is None:
        return None
    span_start, span_end = spans
    n_spans = len(span_start)
    first = codes[span_start + 1]
    opening = _ascii_letter(first)
    closing = first == ord("/")
    n_elements = len(tag)
    if int(opening.sum()) != n_elements:
        return None

    # Tag names against the elements' (lower-case ASCII; anything else goes to `_scan`).
    # Each start tag must hold its element's name followed by " " or ">": compare the name and
    # that character, as "\x00", with the "\x00"-terminated names.
    tag_codes = code_points("\x00".join(tag) + "\x00")
    tag_end = np.flatnonzero(tag_codes == 0)
    if len(tag_end) != n_elements or (tag_codes == ord('"')).any():  # `_TOKEN` reads quoted names differently
        return None
    tag_start = np.concatenate(([0], tag_end[:-1] + 1))
    tag_len = tag_end - tag_start
    open_start = span_start[opening] + 1
    if n_elements and int((open_start + tag_len).max()) >= len(codes):
        return None
    names = _gather(codes, open_start, tag_len + 1)
    after_name = names[tag_end]
    if not np.all((after_name == ord(" ")) | (after_name == ord(">"))):
        return None
    names[tag_end] = 0
    if not np.array_equal(_ascii_lower(names), tag_codes):
        return None

    # Text: the page with every "<...>" replaced by "\x00\x00" (an empty item between two gaps),
    # cut into lines, one item each. One unescape, one replace and one split for the page.
    marked = codes.copy()
    marked[span_start] = marked[span_end] = 0
    gap_first = np.concatenate(([0], span_end))  # each gap with the ">" before it and the "<" after it
    gap_last = np.concatenate((span_start, [len(serialised) - 1]))
    text_codes = _gather(marked, gap_first, gap_last - gap_first + 1)
    separators = np.flatnonzero(text_codes == 0)
    newlines = np.bincount(
        np.searchsorted(separators, np.flatnonzero(text_codes == ord("\n"))) // 2, minlength=n_spans + 1
    )
    joined = _text(text_codes)
    if "&" in joined:
        joined = html_lib.unescape(joined)  # only &amp; &lt; &gt; &nbsp;, never across "\x00"
        if joined.count("\n") != int(newlines.sum()):
            return None
    joined = joined.replace("\n", "\n\x00")
    items = joined.split("\x00")
    item_codes = code_points(joined + "\x00")
    item_end = np.flatnonzero(item_codes == 0)
    item_start = np.concatenate(([0], item_end[:-1] + 1))
    item_len = item_end - item_start
    if len(items) != int(newlines.sum()) + 2 * n_spans + 1:
        return None
    head_item = np.cumsum(newlines[:-1] + 2) - 1  # index of the empty item standing for each span
    is_head = np.zeros(len(items), dtype=bool)
    is_head[head_item] = True
    keep = ~is_head & (item_len > 0)
    keep[head_item] = opening | closing
    # A line of text ends with its newline unless it is the last piece of its gap.
    last_piece = np.zeros(len(items), dtype=bool)
    last_piece[head_item - 1] = True
    last_piece[-1] = True
    newline_after = ~is_head & ~last_piece
    # Non-whitespace characters per item (str.isspace, by a table over code points).
    solid = np.concatenate(([0], np.cumsum(~np.take(_WHITESPACE, item_codes, mode="clip"))))
    chars = solid[item_end] - solid[item_start]

    item_len[head_item] = span_end - span_start + 1
    item_kind = np.full(len(items), TEXT, dtype=np.int8)
    item_kind[head_item] = np.where(opening, OPEN, CLOSE)
    kind = item_kind[keep]
    n = len(kind)
    text = list(compress(items, keep))
    length = item_len[keep].astype(np.int32)

    # Nesting from the running depth: +1 at a non-void start tag, -1 at an end tag.
    open_at = np.flatnonzero(kind == OPEN)
    close_at = np.flatnonzero(kind == CLOSE)
    void = np.fromiter(map(VOID_TAGS.__contains__, tag), bool, n_elements)
    step = np.zeros(n, dtype=np.int64)
    step[open_at[~void]] = 1
    step[close_at] = -1
    depth = np.cumsum(step)  # depth after each token
    if n == 0 or depth.min() < 0 or depth[-1] != 0 or int((~void).sum()) != len(close_at):
        return None
    # Within one depth level, start and end tags alternate; sorting both by (level, position)
    # pairs each end tag with its element.
    containers = np.flatnonzero(~void)
    open_key = depth[open_at[containers]] * (n + 1) + open_at[containers]
    open_order = np.argsort(open_key)
    sorted_key, sorted_element = open_key[open_order], containers[open_order]
    close_order = np.argsort((depth[close_at] + 1) * (n + 1) + close_at)
    closed = np.empty(len(close_at), dtype=np.int64)
    closed[close_order] = sorted_element
    close_start = span_start[closing] + 2
    if not np.array_equal(span_end[closing] - close_start, tag_len[closed]):
        return None
    expected = _gather(tag_codes, tag_start[closed], tag_len[closed])
    if not np.array_equal(_ascii_lower(_gather(codes, close_start, tag_len[closed])), expected):
        return None

    def innermost(level: np.ndarray, position: np.ndarray) -> np.ndarray:
        """The element open at `level` just before `position` (-1 at level 0)."""
        if not len(sorted_element):  # only void elements: every level is 0
            return np.full(len(level), -1)
        found = sorted_element[np.searchsorted(sorted_key, level * (n + 1) + position) - 1]
        return np.where(level > 0, found, -1)

    elements = np.arange(n_elements)
    start = open_at.astype(np.int32)
    end = start.copy()
    end[closed] = close_at
    parent = innermost(depth[open_at] - step[open_at], open_at).astype(np.int32)
    owner = np.empty(n, dtype=np.int32)
    text_at = np.flatnonzero(kind == TEXT)
    owner[text_at] = innermost(depth[text_at], text_at)
    owner[open_at] = elements
    owner[close_at] = closed
    is_anchor = (tag_len == 1) & (tag_codes[tag_start] == ord("a"))
    anchor_step = np.zeros(n, dtype=np.int64)
    anchor_step[open_at[is_anchor]] = 1
    anchor_closes = close_at[is_anchor[closed]]
    anchor_step[anchor_closes] = -1
    in_anchor = np.cumsum(anchor_step) > 0
    in_anchor[anchor_closes] = True
    return _Scan(
        kind=kind,
        owner=owner,
        length=length,
        text=text,
        chars=chars[keep].astype(np.int32),
        in_anchor=in_anchor,
        newline_after=newline_after[keep],
        parent=parent,
        start=start,
        end=end,
    )


#: The page `_walk_setup` reads both ways before it lets `parse` use the walk: attributes (quoted,
#: escaped, valueless, repeated, namespaced), text escapes and named references, comments, void
#: elements, nested tables and lists, an anchor around elements, lines in `<pre>`, SVG, and text
#: outside ASCII (two-, three- and four-byte UTF-8).
_WALK_CHECK_PAGE = (
    "<!DOCTYPE html><html lang=fr><head><title>Caf\u00e9 &amp; cr\u00e8me</title>"
    "<meta charset=utf-8><link rel=stylesheet href='a.css'></head>"
    "<body class='page home' id=top><!-- a comment > with a bracket -->"
    "<div role=main data-x='a \"quoted\" &amp; <escaped> \u00a0value' data-flag>"
    "<h1 id=title class=headline>Un caf\u00e9 \u2603 &eacute;t\u00e9 \U0001f600 \u65e5\u672c\u8a9e</h1>"
    "<p>One &amp; two &lt;three&gt;&nbsp;four<br>five<img src='x.png' alt='\u00e9'><hr>"
    "<a href='/x' class=link>in <b>bold</b>\nand <i>italic</i></a> after<!--x-->text</p>"
    "<table class=outer><tr><td>1<table class=inner><tr><td>\u00e9</td><td>2</td></tr></table></td>"
    "<td><input type=checkbox checked><wbr></td></tr></table>"
    "<ul><li>a<ul><li class=x class=y>b</li></ul></li><li role=note>c</li></ul>"
    "<pre>\n\nline one\n  line two\n</pre>"
    "<svg viewBox='0 0 1 1'><image xlink:href='x'></image><path d='M0 0'/></svg>"
    "<textarea>a &lt; b</textarea></div></body></html>"
)


def _walk_setup() -> bool:
    """Whether `parse` may use `_native.walk`: the kernels are built, Lexbor's functions were found
    in selectolax's module (`_native.lexbor_setup`), and the walk of `_WALK_CHECK_PAGE`, cleaned as
    `parse` cleans it, gives exactly the scan of its serialisation (every field, with the id, class
    and role of every element as `node.attributes` gives them). This guards against a selectolax or
    Lexbor that renamed or changed what the walk relies on (the functions it calls through `dlsym`,
    `LexborNode.mem_id`): where anything differs or fails, the walk stays off, with one logged
    warning, and `parse` serialises and scans, which gives the same documents."""
    if native is None:
        return False
    try:
        if not hasattr(LexborNode, "mem_id"):  # the node's address, which the walk reads
            problem: str | None = "LexborNode has no mem_id"
        elif not native.lexbor_setup(selectolax.lexbor.__file__ or "", LexborNode):
            if not getattr(native, "HAVE_WALK", True):
                return False  # built without dlfcn: no walk, as intended
            problem = "Lexbor's functions were not found in selectolax's module"
        else:
            problem = _walk_check(_WALK_CHECK_PAGE)
    except Exception as exc:  # any failure of the set-up falls back, never reaches a caller
        problem = f"{type(exc).__name__}: {exc}"
    if problem is None:
        return True
    logging.getLogger(__name__).warning(
        "readerproxy: the C walk of Lexbor's tree is off (selectolax %s): %s; parse serialises and scans",
        getattr(selectolax, "__version__", "?"),
        problem,
    )
    return False


def _walk_check(page: str) -> str | None:
    """None when `_native.walk` and `_native.scan` read `page` (cleaned as `parse` cleans it) the
    same way, field by field; else what differs."""
    assert native is not None
    capped = cap_depth(page).html
    tree = LexborHTMLParser(capped)
    _clean(tree, _read_before_cleaning(tree, capped))
    elements = tree.css("*")
    root = tree.root
    walked = native.walk(root, len(elements), VOID_TAGS) if root is not None else None
    scanned = native.scan(tree.html or "", len(elements), VOID_TAGS)
    if walked is None or scanned is None:
        return f"the {'walk' if walked is None else 'scan'} declined the check page"
    if walked[:10] != scanned[:10] or walked[-1] != scanned[-1]:
        return "the walk's linear view differs from the scan's"
    ident, classes, role, unsure = walked[10:14]
    if unsure:
        return "the walk left elements unsure"
    for name, values in (("id", ident), ("class", classes), ("role", role)):
        if values != [node.attributes.get(name) for node in elements]:
            return f"the walk's {name} values differ from the nodes'"
    return None


def _walk_native(tree: LexborHTMLParser, n_elements: int) -> _Scan | None:
    """`_scan_native(tree.html, n_elements)` without serialising: the C kernel walks Lexbor's tree
    (`_native.walk`) and gives the same fields, with the id, class and role of every element (none
    unsure). None where it declines (its docstring: a `<template>`, text in a raw-text element, a
    name the scan would not read the same way, ...); `parse` then serialises and scans.

    Chosen for speed: serialising the cleaned tree and scanning the string cost 0.17 + 0.21 ms at the
    ScrapingHub median, the walk 0.21 ms (`benchmarks/lexbor_walk.py`). It calls Lexbor's
    exported functions, never its structs. `tests/engine/test_native.py` checks it against the scan on
    every dataset page.
    """
    assert native is not None
    root = tree.root
    fields = native.walk(root, n_elements, VOID_TAGS) if root is not None else None
    return None if fields is None else _wrap_scan(fields)


def _scan_native(serialised: str, tag: list[str] | int) -> _Scan | None:
    """`_scan_fast` in C (`_native.scan`, one pass over the serialisation), or None where it declines.

    Chosen for speed: the numpy passes of `_scan_fast` are each fast, but there are about eighty of
    them. The C kernel gives the same fields, as bytearrays this wraps without copying. `tag`: the
    elements' tag names (checked as `_scan_fast` checks them), or their number: then the kernel reads
    each name from its start tag (`_Scan.tag`); it declines a name `_tag_names` might lower-case
    differently (any character outside printable ASCII), and the n-th start tag is the n-th element
    because their counts agree (the module docstring).
    """
    assert native is not None
    fields = native.scan(serialised, tag, VOID_TAGS)
    return None if fields is None else _wrap_scan(fields)


def _wrap_scan(fields: tuple[Any, ...]) -> _Scan:
    """The fields of `_native.scan` or `_native.walk` as a `_Scan`, the arrays wrapped without copying."""
    kind, owner, length, text, chars, in_anchor, newline_after, parent, start, end, *attributes = fields
    ident, classes, role, unsure, names = attributes
    return _Scan(
        kind=np.frombuffer(kind, np.int8),
        owner=np.frombuffer(owner, np.int32),
        length=np.frombuffer(length, np.int32),
        text=text,
        chars=np.frombuffer(chars, np.int32),
        in_anchor=np.frombuffer(in_anchor, bool),
        newline_after=np.frombuffer(newline_after, bool),
        parent=np.frombuffer(parent, np.int32),
        start=np.frombuffer(start, np.int32),
        end=np.frombuffer(end, np.int32),
        attributes=(ident, classes, role),
        unsure=unsure,
        tag=names,
    )


#: Whether `parse` uses `_native.walk` (`_walk_setup`, run once at import).
_WALK = _walk_setup()


def _scan(serialised: str, tag: list[str]) -> _Scan:
    """The general tokeniser: one regular expression and a stack, one Python step per token.

    Used when `_scan_fast` declines a page (a "<" or ">" inside an attribute value or a comment,
    stray end tags, ...); both give the same answer wherever the fast one applies.
    """
    n_elements = len(tag)
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

    return _Scan(
        kind=np.array(kinds, dtype=np.int8),
        owner=np.array(owners, dtype=np.int32),
        length=np.array(lengths, dtype=np.int32),
        text=texts,
        chars=np.array([len("".join(t.split())) if t else 0 for t in texts], dtype=np.int32),
        in_anchor=np.array(anchors, dtype=bool),
        newline_after=np.array(newline_after, dtype=bool),
        parent=parent,
        start=start,
        end=end,
    )


def _document(
    tree: LexborHTMLParser,
    elements: list[LexborNode],
    tag: list[str],
    scan: _Scan,
    url: str | None,
    title: str,
    source_length: int,
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
    if "base" in tag:
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
    elements: list[LexborNode], scan: _Scan
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
