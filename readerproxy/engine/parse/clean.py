"""The cleaning of a parsed page: what no reader sees is removed before the Document is built.

`read_before_cleaning` reads what `parse` needs from the page before it changes (the title, JSON-LD,
`<noscript>` images, streamed fragments, print stylesheets); `clean` then applies its steps in one
listed order: streamed content moved into place, scripts, styles and raw-text containers removed
(`<noscript>` unwrapped where it is the page), and hidden, screen-reader-only and print-only
elements removed, with the exceptions a reader needs (anti-flicker wrappers and gates shown later
by a script, collapsed accordion and tab panels).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from selectolax.lexbor import LexborHTMLParser, LexborNode

from ..._speedups import native

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
#: `REMOVED_TAGS` but `<noscript>`, which `clean` removes only when it is not the page (`_noscript_page`).
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


#: What `parse` reads from the tree before cleaning it. One selector list, so one walk of the tree;
#: chosen for speed: four separate walks (`css`, `css_first`) cost about 0.06 ms more per page at the
#: ScrapingHub median. Each selector matches its own tag name, so the tag tells which one matched.
_BEFORE_CLEANING = (
    'title, script[type="application/ld+json" i], noscript, div[hidden][id^="S:"], div[id^="af"][style], '
    "style"
)


@dataclass(slots=True)
class Early:
    """The elements `parse` reads before cleaning, each list in document order."""

    title: str  # the first `<title>`'s text, spaces collapsed ("" for none)
    json_ld: list[str]  # the texts of the JSON-LD scripts
    noscripts: list[LexborNode]
    boundaries: list[LexborNode]  # React's streamed Suspense boundaries (`_place_streamed_boundaries`)
    fragments: list[LexborNode]  # Marko's streamed `<await>` fragments, maybe (`_place_async_fragments`)
    stripped_tags: list[str]  # those of `_STRIPPED_TAGS` that the page may hold (`_tags_in_source`)
    styles: list[str] = field(default_factory=list)  # inline stylesheets that mention `print`
    #: `noscripts` are all the tree's `<noscript>` elements (`tree.tags("noscript")`), and none lies in
    #: an element of `REMOVED_TAGS`: `_strip_raw_text` leaves every one of them in the tree
    noscripts_kept: bool = False


def read_before_cleaning(tree: LexborHTMLParser, html: str, stripped_tags: list[str] | None = None) -> Early:
    """What `parse` reads before `clean` changes the tree (one walk, `_BEFORE_CLEANING`). `html`: the
    markup parsed; `stripped_tags`: `_tags_in_source(html, _STRIPPED_TAGS)` when read already
    (`source_tags`)."""
    if stripped_tags is None:
        stripped_tags = _tags_in_source(html, _STRIPPED_TAGS)
    root = tree.root
    # Chosen for speed: the C kernel reads the texts the query's matches give without the query (0.14
    # of Lexbor's parse at the Readability median) and without a node object per match; the
    # `<noscript>` elements, whose nodes `parse` reads, are then listed alone, on the pages that have
    # one, by `tree.tags` (no selector engine: 0.024 of the parse against 0.036 for `css`), which is
    # the list `strip_tags` removes. Where it declines (a streamed fragment, maybe), the query.
    read = native.early_read(root) if native is not None and root is not None and _early_agrees() else None
    if read is not None:
        title, json_ld, noscript, styles = read
        noscripts = tree.tags("noscript") if noscript else []
        early = Early(_collapsed_title(title), json_ld, noscripts, [], [], stripped_tags, styles)
        early.noscripts_kept = noscript == 1
        return early
    return _read_by_query(tree, stripped_tags)


def _read_by_query(tree: LexborHTMLParser, stripped_tags: list[str]) -> Early:
    """`read_before_cleaning` by the query `_BEFORE_CLEANING` (the reference of `_native.early_read`)."""
    titles: list[LexborNode] = []
    json_ld: list[LexborNode] = []
    early = Early("", [], [], [], [], stripped_tags)
    for node in tree.css(_BEFORE_CLEANING):
        if node.tag == "style":
            # for speed, only a stylesheet that can say anything about print is kept to be read
            if "print" in (css := node.text() or ""):
                early.styles.append(css)
        elif node.tag == "title":
            titles.append(node)
        elif node.tag == "script":
            json_ld.append(node)
        elif node.tag == "noscript":
            early.noscripts.append(node)
        elif (node.attributes.get("id") or "").startswith("S:"):
            early.boundaries.append(node)
        elif _DISPLAY_NONE.search(node.attributes.get("style") or ""):
            early.fragments.append(node)
    early.title = _collapsed_title(titles[0].text() if titles else None)
    early.json_ld = [node.text() for node in json_ld]
    return early


_WS = re.compile(r"\s+")


def _collapsed_title(text: str | None) -> str:
    """A `<title>`'s text with its spaces collapsed ("" for no title)."""
    return _WS.sub(" ", text).strip() if text is not None else ""


#: A page that `_early_agrees` reads both ways: each selector of `_BEFORE_CLEANING` met and missed
#: (a second title, a title of SVG, case in a script's type, a style without "print", a `<noscript>`).
_EARLY_CHECK_PAGE = (
    "<!DOCTYPE html><html><head><title> A\n page &amp; \u00e9</title><title>second</title>"
    "<script type='Application/LD+JSON'>{\"a\": 1}</script><script type='text/javascript'>x</script>"
    "<script type=application/ld+json></script><style>p{}</style><style>@media print{p{}}</style></head>"
    "<body><noscript><img src=a.png></noscript><svg><title>svg</title><style>print{}</style></svg>"
    "<script type='application/ld+json '>[]</script><div id=x hidden>y</div></body></html>"
)


@functools.cache
def _early_agrees() -> bool:
    """Whether `_native.early_read` reads `_EARLY_CHECK_PAGE` as the query does, asked once per
    process: it calls Lexbor's functions as the walk does (set up by `scan._walk_setup`)."""
    from . import scan  # noqa: F401  (its import sets Lexbor's functions up)

    return _early_check(_EARLY_CHECK_PAGE)


def _early_check(page: str) -> bool:
    """Whether the kernel gives, on `page`, what `_read_by_query` reads."""
    assert native is not None
    tree = LexborHTMLParser(page)
    root = tree.root
    try:
        read = native.early_read(root) if root is not None else None
    except Exception:  # any failure keeps the query, never reaches a caller
        return False
    if read is None:
        return False
    title, json_ld, noscript, styles = read
    expected = _read_by_query(tree, [])
    nested = LexborHTMLParser("<object><noscript></noscript></object>").root  # a `<noscript>` stripped
    inside = native.early_read(nested) if nested is not None else None
    return (
        len(expected.json_ld) == 2
        and (_collapsed_title(title), json_ld, noscript, styles)
        == (expected.title, expected.json_ld, 1, expected.styles)
        and inside is not None
        and inside[2] == 2
    )


def _word_count(node: LexborNode) -> int:
    return len(node.text(deep=True).split())


#: Words a page's `<noscript>` must hold before it can be the page a reader sees (`_noscript_page`).
NOSCRIPT_PAGE_WORDS = 100
#: ... and at most this many words may stand outside it (a script-rendered shell).
NOSCRIPT_SHELL_WORDS = 1000


def _noscript_page(blocks: list[LexborNode], body: LexborNode | None) -> bool:
    """True when the page without scripts is its `<noscript>` content: a shell rendered by scripts
    (a few hundred words of chrome) around a `<noscript>` holding more text than everything else
    (a forum's crawler view of the thread, a server-rendered copy). A browser without scripts shows
    that content, and so does a reader. Called after scripts and styles are gone (which may have
    taken `<noscript>` elements with them: `blocks` are those left, `body` the tree's)."""
    if not blocks:
        return False
    inside = sum(_word_count(node) for node in blocks if node.parent is None or node.parent.tag != "noscript")
    if inside < NOSCRIPT_PAGE_WORDS or body is None:
        return False
    outside = _word_count(body) - inside
    return outside < min(inside, NOSCRIPT_SHELL_WORDS)


#: Share of the body's words above which a `visibility: hidden` element is the page itself.
ANTI_FLICKER_SHARE = 0.9
_VISIBILITY_HIDDEN = re.compile(r"visibility\s*:\s*hidden", re.IGNORECASE)
_DISPLAY_NONE = re.compile(r"display\s*:\s*none", re.IGNORECASE)


def _shown_later(
    node: LexborNode,
    attributes: dict[str, str | None],
    body_words: Callable[[], float],
    landmark_words: Callable[[LexborNode], int],
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
    of swatches inside its `<main>`). `attributes`: the node's, read once (`_hidden_and_screen_reader_only`)."""
    style = attributes.get("style") or ""
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


def clean(tree: LexborHTMLParser, early: Early) -> list[LexborNode]:
    """Remove scripts, styles, raw-text containers and hidden elements (comments are skipped later).
    `<noscript>` is removed too, unless it is the page a browser without scripts would show
    (`_noscript_page`): then its content stays in place. `early`: what `read_before_cleaning` read.
    Returns the cleaned tree's elements in document order: what `tree.css("*")` then gives.

    The steps, in this order (each reads the tree the one before left):
    1. `_place_streamed_boundaries`: React's streamed Suspense boundaries moved into place;
    2. `_place_async_fragments`: Marko's streamed `<await>` fragments moved into place;
    3. `_strip_raw_text`: scripts, styles and raw-text containers removed, `<noscript>` removed or
       unwrapped;
    4. `_remove_unseen`: hidden, screen-reader-only and print-only elements removed."""
    _place_streamed_boundaries(tree, early.boundaries)
    _place_async_fragments(tree, early.fragments)
    _strip_raw_text(tree, early)
    return _remove_unseen(tree, early)


def _strip_raw_text(tree: LexborHTMLParser, early: Early) -> None:
    """Remove scripts, styles and raw-text containers (`REMOVED_TAGS`); `<noscript>` too, unless it
    is the page (`_noscript_page`): then it is unwrapped, its content kept in place."""
    # For speed, only the names the page may hold: `strip_tags` walks the whole tree once per name.
    tree.strip_tags(early.stripped_tags)
    if not early.noscripts:
        return
    # For speed, the `<noscript>` elements read before (`Early.noscripts_kept`) where they are all
    # still in the tree: no query, and no walk to strip them (`strip_tags` removes each element of
    # `tree.tags(name)` as `decompose(recursive=False)` does, in this order).
    kept = early.noscripts_kept
    if _noscript_page(early.noscripts if kept else tree.css("noscript"), tree.body):
        for node in tree.css("noscript"):
            node.unwrap()
    elif kept:
        for node in early.noscripts:
            node.decompose(recursive=False)
    else:
        tree.strip_tags(["noscript"])


def _remove_unseen(tree: LexborHTMLParser, early: Early) -> list[LexborNode]:
    """Remove the elements no reader sees on screen: hidden ones (unless a script shows them later,
    `_shown_later`, or they are collapsed panels, `_collapsed_panels`), text for screen readers only
    and blocks shown on paper only (`_print_only`). All three are told apart before any is removed.
    Returns the elements left, in document order (what `tree.css("*")` gives after)."""
    body = tree.body
    # The body's word count, counted once if needed (no body: no element is the page), and each
    # landmark's, once per landmark (by its node, as a `LexborNode` hashes). For speed, closures
    # over a list and a dict: two `functools.cache` wrappers cost 4 us a page to make.
    body_count: list[float] = []
    landmark_counts: dict[int, int] = {}

    def body_words() -> float:
        if not body_count:
            body_count.append(_word_count(body) if body is not None else math.inf)
        return body_count[0]

    def landmark_words(landmark: LexborNode) -> int:
        count = landmark_counts.get(landmark.mem_id)
        if count is None:
            count = landmark_counts[landmark.mem_id] = _word_count(landmark)
        return count

    elements, found, subtrees, controls = _unseen_candidates(tree)
    hidden, screen_reader, print_named = _hidden_and_screen_reader_only(found)
    collapsed = _collapsed_panels(tree, hidden, controls)
    removed: list[LexborNode] = []
    for node, attributes in hidden:
        if node.tag in ("html", "body") or _shown_later(node, attributes, body_words, landmark_words):
            continue
        classes = attributes.get("class") or ""
        if "fallback-image" in classes:  # Readability.js keeps these despite aria-hidden
            continue
        if collapsed and attributes.get("id") in collapsed:
            continue
        node.decompose()
        removed.append(node)
    for node in screen_reader:
        node.decompose()
        removed.append(node)
    for node in _print_only(tree, print_named, early.styles, body_words):
        node.decompose()
        removed.append(node)
    if elements is None:
        return elements_of(tree)
    return _elements_left(tree, elements, subtrees, removed)


def elements_of(tree: LexborHTMLParser) -> list[LexborNode]:
    """Every element of the tree in document order: what `tree.css("*")` gives. Chosen for speed:
    `tree.tags("*")`, Lexbor's getElementsByTagName("*") (the same list), parses no selector and
    sets up no selector engine for the page: 19 us against 31 us at the ScrapingHub median."""
    return tree.tags("*")


def _unseen_candidates(
    tree: LexborHTMLParser,
) -> tuple[list[LexborNode] | None, list[LexborNode], dict[int, tuple[int, int]], list[LexborNode] | None]:
    """The matches of `_HIDDEN_OR_SCREEN_READER`, in document order; with the C kernel, each once,
    with the tree's elements (`elements_of`), per match (by `mem_id`) the span of its subtree among
    them (`_elements_left`) and the elements with an `aria-controls` attribute (`_collapsed_panels`);
    else (None, the query's matches, {}, None).

    Chosen for speed: at the ScrapingHub median the query cost 0.127 ms (its nine selectors parsed
    and tried on every element), the kernel's walk (`_native.hidden_candidates`, the same tests on
    the same attribute values, whose reading from memory is most of its time) 0.024 ms; and the
    elements it numbers are those `parse` lists anyway, read once, before the removal, not after."""
    root = tree.root
    if native is not None and root is not None and _kernel_agrees():
        elements = elements_of(tree)
        read = native.hidden_candidates(root, len(elements))
        if read is not None:
            indices, ends, controls = read
            found = [elements[index] for index in indices]
            spans = {
                node.mem_id: span for node, span in zip(found, zip(indices, ends, strict=True), strict=True)
            }
            return elements, found, spans, [elements[index] for index in controls]
    return None, tree.css(_HIDDEN_OR_SCREEN_READER), {}, None


#: The page `_kernel_agrees` reads both ways: each selector of `_HIDDEN_OR_SCREEN_READER` met and
#: missed (case, whitespace in a class, a valueless attribute, nesting, SVG), and `[aria-controls]`.
_CANDIDATES_CHECK_PAGE = (
    "<!DOCTYPE html><html><body><div hidden><p aria-hidden='TRUE'>a</p></div><p aria-hidden=' true'>b</p>"
    "<span style='COLOR:red;Display: None'>c</span><i style='visibility:hidden'>d</i><i style>e</i>"
    "<b class='x\tsr-only\n'>f</b><b class='sr-onlyx visually-hidden'>g</b><u class=screen-reader-text>"
    "<u class=visuallyhidden>h</u></u><em class=blueprint>i</em><em id=PrintHeader>j</em><s class>k</s>"
    "<svg><g class=sr-only></g><g aria-hidden=true></g></svg><p aria-hidden>l</p>"
    "<button aria-controls='x y'>m</button><div aria-controls>n</div></body></html>"
)


@functools.cache
def _kernel_agrees() -> bool:
    """Whether `_native.hidden_candidates` reads `_CANDIDATES_CHECK_PAGE` as the query does (the same
    matches and subtrees), asked once per process: it calls Lexbor's functions as the walk does (set
    up by `scan._walk_setup`), and a selectolax whose selectors read otherwise keeps the query."""
    from . import scan  # noqa: F401  (its import sets Lexbor's functions up)

    return _candidates_check(_CANDIDATES_CHECK_PAGE)


def _candidates_check(page: str) -> bool:
    """Whether the kernel gives, on `page`, the query's matches (each once) and their subtrees, among
    the elements `elements_of` lists as `tree.css("*")` does."""
    assert native is not None
    tree = LexborHTMLParser(page)
    root = tree.root
    try:
        elements = elements_of(tree)
        read = native.hidden_candidates(root, len(elements)) if root is not None else None
    except Exception:  # any failure keeps the query, never reaches a caller
        return False
    if read is None or [node.mem_id for node in elements] != [node.mem_id for node in tree.css("*")]:
        return False
    position = {node.mem_id: index for index, node in enumerate(elements)}
    expected = list(dict.fromkeys(position[node.mem_id] for node in tree.css(_HIDDEN_OR_SCREEN_READER)))
    ends = [index + len(elements[index].css("*")) for index in expected]
    controls = [position[node.mem_id] for node in tree.css("[aria-controls]")]
    return len(expected) > 5 and len(controls) > 1 and read == (expected, ends, controls)


def _elements_left(
    tree: LexborHTMLParser,
    elements: list[LexborNode],
    subtrees: dict[int, tuple[int, int]],
    removed: list[LexborNode],
) -> list[LexborNode]:
    """`elements` (the tree's, read before the removal) without the `removed` subtrees, each
    `elements[first:after]` for its span in `subtrees`; the tree is read again when a removed
    element has none there (`_print_only`'s, found by the page's stylesheet)."""
    if not removed:
        return elements
    spans = []
    for node in removed:
        span = subtrees.get(node.mem_id)
        if span is None:
            return elements_of(tree)
        spans.append(span)
    left: list[LexborNode] = []
    at = 0
    for first, after in sorted(spans):
        if first < at:  # inside a subtree removed already
            continue
        left.extend(elements[at:first])
        at = after
    left.extend(elements[at:])
    return left


def _hidden_and_screen_reader_only(
    found: list[LexborNode],
) -> tuple[list[tuple[LexborNode, dict[str, str | None]]], list[LexborNode], list[LexborNode]]:
    """`found` (the matches of `_HIDDEN_OR_SCREEN_READER`) split into the hidden elements
    (`HIDDEN_SELECTOR`'s, by their attributes), the screen-reader-only ones to remove (each of
    the others, unless its parent holds an `aria-hidden` element with text: the visible twin that
    is removed as hidden) and those whose class or id speaks of print (`_print_only` decides on
    them). Told apart before anything is removed, while the twins are there. Each hidden element
    comes with its attributes: for speed, `node.attributes` (a dict built per call) is read once
    per candidate, not by each step that asks (`_collapsed_panels`, `_shown_later`, the removal)."""
    hidden: list[tuple[LexborNode, dict[str, str | None]]] = []
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
        attributes = node.attributes
        if _hidden_by_attributes(attributes):
            hidden.append((node, attributes))
            continue
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
#: The `@media` preludes `print_only_names` reads anything from: one naming print, or a bare
#: "screen" ("only" aside). A page whose sheets have neither has no print-only name.
_PRINT_OR_SCREEN_MEDIA = re.compile(r"@media[^{]*print|@media(?:\s|only)*screen(?:\s|only)*\{", re.IGNORECASE)


def print_only_names(styles: list[str]) -> frozenset[tuple[str, str]]:
    """The classes and ids (as (".", name) or ("#", name)) that a page's inline stylesheets hide
    on screen and show on paper: `display: none` in a rule outside any `@media` (or in an
    `@media screen` one), and a `display` other than none in an `@media print` rule; or hidden in
    `@media screen` alone (no width: a rule for narrow or wide screens is responsive, not print). Only rules whose selector is one class or one id are read (a cheap
    reading, not a cascade: what a print header needs)."""
    screen_none: set[tuple[str, str]] = set()
    print_shown: set[tuple[str, str]] = set()
    screen_media: set[tuple[str, str]] = set()
    sheets = [_CSS_COMMENT.sub("", css) for css in styles]
    # For speed: without a print or bare-screen `@media` in any sheet the answer is empty (a hidden
    # name needs one, and may come from another sheet than its rule's), and the rule-by-rule
    # reading below, a Python step per rule of a theme's stylesheet, is skipped: this function took
    # 4 % of `extract(auto)`'s samples on ScrapingHub; over the 20 of its pages whose sheets mention
    # print, 20.7 ms -> 11.9 ms in all (9 of them skip), their parses 48.9 -> 40.7 ms.
    if not any(map(_PRINT_OR_SCREEN_MEDIA.search, sheets)):
        return frozenset()
    for css in sheets:
        for media, selectors, display in _css_rules(css):
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


def _collapsed_panels(
    tree: LexborHTMLParser,
    hidden: Iterable[tuple[LexborNode, dict[str, str | None]]],
    controls: list[LexborNode] | None = None,
) -> frozenset[str]:
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
        (ident, node.tag, _role(attributes)) for node, attributes in hidden if (ident := attributes.get("id"))
    ]
    if not named:
        return frozenset()
    opened: set[str] = set()
    # `controls`: the elements of `tree.css("[aria-controls]")` when the C kernel listed them (for
    # speed: no query, no selector engine set up for the page)
    for control in tree.css("[aria-controls]") if controls is None else controls:
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


#: The names `source_tags` looks for: `_STRIPPED_TAGS`, then "base".
_SOURCE_NAMES = (*_STRIPPED_TAGS, "base")


def source_tags(html: str) -> tuple[list[str], int, bool]:
    """`_tags_in_source(html, _STRIPPED_TAGS)`, `html.count("<")` (which `nesting.cap_depth` reads
    first) and whether a `<base>` element may be there (`_tags_in_source` finds "base"): the C
    kernel `source_tags` when built, one pass for all. Chosen for speed: `str.count` alone took 0.04
    ms at the ScrapingHub median (0.13 of Lexbor's parse), its pass over every "<" about a third of
    that; and a page without "<base" needs no look for the element among its tag names (`"base" in
    tag` took 0.017 of Lexbor's parse at the Readability median)."""
    if native is not None:
        found, count = native.source_tags(html, _SOURCE_NAMES)
    else:
        found, count = _tags_in_source(html, _SOURCE_NAMES), html.count("<")
    if found and found[-1] == "base":  # in the order of `_SOURCE_NAMES`: last
        return found[:-1], count, True
    return found, count, False


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
