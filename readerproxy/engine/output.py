"""From a token selection back to a reader's article: sanitised HTML, plain text and markdown.

Every extractor ends in a boolean mask over the document's linear view. `render_html` keeps the
elements that contain a selected token (so the result is a well-nested subtree of the real page),
writes only allowlisted tags and attributes with absolute URLs, and passes the fragment through nh3
(the ammonia sanitiser) as the last word on safety. `render_text` gives one block per paragraph.
"""

from __future__ import annotations

import functools
import html as html_lib
import re
from collections import Counter
from collections.abc import Callable
from urllib.parse import urlsplit

import nh3
import numpy as np
from selectolax.lexbor import LexborHTMLParser, LexborNode

from .parse.document import BLOCK_TAGS, OPEN, TEXT, Document, indices_of
from .urls import LAZY_SOURCES, LAZY_SRCSETS, SAFE_SCHEMES, choose_candidate, parse_srcset, safe_url

#: Tags written as they are (without attributes unless listed in ATTRIBUTES).
ALLOWED_TAGS = frozenset(
    "a abbr b bdi bdo blockquote br caption cite code col colgroup dd del details dfn div dl dt "
    "em figcaption figure h1 h2 h3 h4 h5 h6 hr i img ins kbd li mark ol p picture pre q rp rt "
    "ruby s samp section small source strong sub summary sup table tbody td tfoot th thead time "
    "tr u ul var wbr article".split()
)
#: Structural containers written as <div> so that their text stays in separate blocks; a `<form>`
#: holding the page (`_page_form`) is one too.
AS_DIV = frozenset("main header footer aside nav center address hgroup fieldset menu dir form".split())
#: Elements dropped with everything inside them: interactive or embedded, never reader content
#: (a `<form>` too, unless it holds the page: `_page_form`).
DROPPED = frozenset(
    "input button select option optgroup textarea label svg math canvas audio video "
    "map area head title meta link base frame frameset dialog".split()
)
#: Media kept when they lie inside the selected range, even if the algorithm did not select them.
MEDIA_TAGS = frozenset({"figure", "picture", "img"})
ATTRIBUTES: dict[str, frozenset[str]] = {
    "a": frozenset({"href", "title"}),
    "img": frozenset({"src", "srcset", "alt", "title", "width", "height", "sizes"}),
    "source": frozenset({"srcset", "media", "type", "sizes"}),
    "td": frozenset({"colspan", "rowspan"}),
    "th": frozenset({"colspan", "rowspan", "scope"}),
    "col": frozenset({"span"}),
    "colgroup": frozenset({"span"}),
    "ol": frozenset({"start", "reversed"}),
    "time": frozenset({"datetime"}),
    "abbr": frozenset({"title"}),
    "bdo": frozenset({"dir"}),
    "blockquote": frozenset({"cite"}),
    "q": frozenset({"cite"}),
    "pre": frozenset(),
    "code": frozenset(),
}
_URL_ATTRIBUTES = frozenset({"href", "src", "cite"})
#: The src of an image known only by its srcset: its widest candidate up to this width (px).
FALLBACK_WIDTH = 1200
#: What the sanitiser lets through (it cannot tell an image's data: URL from a link's; `_safe_url`
#: and `safe_image_url` have refused the rest before it runs).
_SANITISER_SCHEMES = SAFE_SCHEMES | {"data"}
#: Horizontal whitespace the renderer collapses (not `parse.text.SPACE`): line breaks are kept.
_WS = re.compile(r"[ \t\r\f\v\u00a0\u2000-\u200b\u3000]+")
_BLANK_LINES = re.compile(r"\n{3,}")
#: The characters where `str.split()` and `_WS` disagree: whitespace only `split` breaks at, and
#: U+200B, which only `_WS` matches.
_SPLIT_ONLY = "\n\x1c\x1d\x1e\x1f\x85\u1680\u2028\u2029\u202f\u205f\u200b"


def collapse_spaces(text: str) -> str:
    """`_WS.sub(" ", text).strip()`: runs of spaces as one, none at the ends. For speed, by
    `str.split()` (several times faster) when the text holds none of the characters where the two
    disagree, which gives the same string."""
    if not any(map(text.__contains__, _SPLIT_ONLY)):  # a substring test per character: fast in C
        return " ".join(text.split())
    return _WS.sub(" ", text).strip()


def _split_join(text: str) -> str:
    """`collapse_spaces` of a text known to hold none of `_SPLIT_ONLY` but the newline."""
    return " ".join(text.split())


LinkRewriter = Callable[[str], str]


def kept_elements(
    doc: Document, selection: np.ndarray, layout: dict[int, str | None] | None = None
) -> np.ndarray:
    """Elements that contain at least one selected token (ancestor-closed by construction), and
    every cell of a kept row of a data table (not one of the `layout` tables' parts,
    `layout_table_parts`): a cell the page leaves empty (a comparison table's missing check mark)
    still holds its column, or the next cell's "check" would stand under the wrong product."""
    keep = doc.sum_within(selection.astype(np.int64)) > 0
    if "tr" in doc.tag:
        cells = np.asarray(indices_of(doc.tag, "td") + indices_of(doc.tag, "th"), dtype=np.int64)
        if len(cells):
            rows = doc.parent[cells]
            cells = cells[(rows >= 0) & keep[np.maximum(rows, 0)]]
            if layout:
                cells = cells[[int(cell) not in layout for cell in cells.tolist()]]
            keep[cells] = True
    return keep


def selected_range(selection: np.ndarray) -> tuple[int, int]:
    """Indices of the first and last selected token (the selection must not be empty)."""
    return int(np.argmax(selection)), len(selection) - 1 - int(np.argmax(selection[::-1]))


#: Ancestors looked through for the table row of a token (a cell's text is rarely deeper).
_ROW_DEPTH = 8


def _row_of(doc: Document, token: int) -> int | None:
    """The <tr> the token lies in (within `_ROW_DEPTH` ancestors), or None."""
    element = int(doc.tokens.element[token])
    for _ in range(_ROW_DEPTH):
        if element < 0:
            return None
        if doc.tag[element] == "tr":
            return element
        element = int(doc.parent[element])
    return None


def _whole_rows(doc: Document, first: int, last: int, layout: dict[int, str | None]) -> tuple[int, int]:
    """The selected range `first`..`last` widened to the whole rows of data tables (not `layout`'s)
    it starts and ends in, so that the empty cells before the first selected text and after the
    last (a comparison table's blank corner, a missing check mark) are written with their row
    (`kept_elements`). A layout table's row is the page's columns: it is not widened."""
    if "tr" not in doc.tag:
        return first, last
    start_row, end_row = _row_of(doc, first), _row_of(doc, last)
    return (
        int(doc.start[start_row]) if start_row is not None and start_row not in layout else first,
        int(doc.end[end_row]) if end_row is not None and end_row not in layout else last,
    )


def _table_rows(doc: Document, table: int) -> list[int]:
    """The table's own <tr>s in document order (not those of a table inside it)."""
    rows = []
    for element in range(table + 1, int(doc.subtree_end[table])):
        if doc.tag[element] != "tr":
            continue
        up = int(doc.parent[element])
        while up >= 0 and doc.tag[up] in ("tbody", "thead", "tfoot"):
            up = int(doc.parent[up])
        if up == table:
            rows.append(element)
    return rows


def _header_rows(doc: Document, rows: list[int]) -> list[int]:
    """The header rows among a table's `rows`: those in its <thead>, and the leading rows whose
    cells are all <th> (a header of one or several rows written without a <thead>)."""
    found = [row for row in rows if doc.tag[int(doc.parent[row])] == "thead"]
    for row in rows:
        cells = [doc.tag[c] for c in range(row + 1, int(doc.subtree_end[row])) if int(doc.parent[c]) == row]
        if not cells or "td" in cells:
            break
        if row not in found:
            found.append(row)
    return found


def _rowspan_end(doc: Document, rows: list[int], last: int) -> int:
    """The index in `rows` of the last row that a cell of rows[..last] reaches down to with its
    rowspan (so that a row a cell spans into is written with it, and the grid does not shift)."""
    reach = last
    for index in range(last + 1):
        row = rows[index]
        for cell in range(row + 1, int(doc.subtree_end[row])):
            if int(doc.parent[cell]) != row:
                continue
            span = (doc.elements[cell].attributes.get("rowspan") or "").strip()
            if span.isdigit() and int(span) > 1:
                reach = max(reach, min(index + int(span) - 1, len(rows) - 1))
    return reach


#: A table or cell with at least this share of its text in links is navigation (a wiki's navbox,
#: a row's "Edit" and "Share" links): `whole_table_tokens` leaves it to the extractor.
TABLE_LINK_DENSITY = 0.5


def selected_chars(doc: Document, selection: np.ndarray) -> np.ndarray:
    """Per element, the non-whitespace characters of selected text inside it."""
    t = doc.tokens
    return doc.sum_within(np.where(selection & (t.kind == TEXT), t.chars, 0))


def whole_table_tokens(
    doc: Document, selection: np.ndarray, layout: dict[int, str | None], chosen: np.ndarray | None = None
) -> np.ndarray | None:
    """The tokens to write besides the selection so that each data table it touches keeps its
    grid (None when there are none): a reader cannot read a price without its column's header,
    nor a row whose cells shifted because a cell or a row was left out.

    Of each data table (not one of the `layout` tables, under `TABLE_LINK_DENSITY` of its text in
    links) holding selected text (not spaces alone):
    - its header rows (<thead>'s, and the leading rows of <th> alone), however many: a two-row
      header whose second row is empty is still what the columns' cells stand under;
    - in each row with selected text, the cells without any (a plan's price that the extractor
      left out while it kept the plan's name), unless they are links;
    - the empty rows from its first selected row to its last (or as far as a rowspan of those
      rows reaches): they hold no text, and the grid together.
    Rows with text the extractor left out stay out (a forum's table of posts and their toolbars:
    the learned extractor's `whole_tables` keeps a data table whole when it kept enough of it).
    Every token of what is added counts, its tags included: an empty row has no text to select.
    `chosen`: `selected_chars` of the selection, when the caller has it."""
    if "tr" not in doc.tag:
        return None
    tables = [e for e in indices_of(doc.tag, "table") if e not in layout]
    if not tables:
        return None
    chosen = selected_chars(doc, selection) if chosen is None else chosen
    chars, links = doc.subtree_chars, doc.subtree_anchor_chars
    extra = np.zeros(len(selection), dtype=bool)
    found = False

    def add(element: int) -> None:
        extra[int(doc.start[element]) : int(doc.end[element]) + 1] = True

    for table in tables:
        if chosen[table] <= 0 or links[table] >= TABLE_LINK_DENSITY * chars[table]:
            continue
        rows = _table_rows(doc, table)
        kept = [index for index, row in enumerate(rows) if chosen[row] > 0]
        if not kept:
            continue
        found = True
        for row in _header_rows(doc, rows):
            add(row)
        for index in kept:
            row = rows[index]
            for cell in range(row + 1, int(doc.subtree_end[row])):
                if (
                    int(doc.parent[cell]) == row
                    and chosen[cell] <= 0
                    and (chars[cell] == 0 or links[cell] < TABLE_LINK_DENSITY * chars[cell])
                ):
                    add(cell)
        for index in range(kept[0], _rowspan_end(doc, rows, kept[-1]) + 1):
            if chars[rows[index]] == 0:
                add(rows[index])
    return extra if found else None


def contents_list_tokens(
    doc: Document, selection: np.ndarray, text: np.ndarray | None = None
) -> np.ndarray | None:
    """The tokens of the lists that the selection keeps without their text, when that text is
    links into the page (None when there are none): a table of contents whose links the extractor
    dropped as link-dense, while keeping the spaces between them, would show as empty bullets;
    written with its links it is the page's contents again. A link whose target the reader does
    not show is dropped afterwards (`drop_dead_jump_links`), and an item left empty with it
    (`drop_empty_items`). `text`: `selected_chars` of the selection, when the caller has it."""
    if "li" not in doc.tag:
        return None
    text = selected_chars(doc, selection) if text is None else text
    chosen = doc.sum_within(selection.astype(np.int64))
    extra: np.ndarray | None = None
    lists = sorted(indices_of(doc.tag, "ul") + indices_of(doc.tag, "ol"))
    done = -1  # the end of the last list rebuilt: the lists inside it come with it
    for found in lists:
        if found < done or chosen[found] <= 0 or text[found] > 0 or doc.subtree_anchor_chars[found] <= 0:
            continue
        links = [e for e in range(found + 1, int(doc.subtree_end[found])) if doc.tag[e] == "a"]
        if not all((doc.elements[e].attributes.get("href") or "").strip().startswith("#") for e in links):
            continue
        if extra is None:
            extra = np.zeros(len(selection), dtype=bool)
        extra[int(doc.start[found]) : int(doc.end[found]) + 1] = True
        done = int(doc.subtree_end[found])
    return extra


def repeated_tables(
    doc: Document, selection: np.ndarray, chosen: np.ndarray | None = None
) -> np.ndarray | None:
    """The tokens of each selected table whose text repeats an earlier selected table's, with the
    heading just before it when that repeats the heading just before the first copy (None when
    there is none): pages ship a table twice, one copy for narrow screens and one for wide ones
    (a pricing table and its heading), and show one; a reader needs it once. `chosen`:
    `selected_chars` of the selection, when the caller has it."""
    all_tables = indices_of(doc.tag, "table")
    if len(all_tables) < 2:
        return None
    chosen = selected_chars(doc, selection) if chosen is None else chosen
    tables = [e for e in all_tables if chosen[e] > 0]
    if len(tables) < 2:
        return None
    headings = sorted(e for name in _HEADINGS for e in indices_of(doc.tag, name) if chosen[e] > 0)
    seen: dict[str, int] = {}
    drop: np.ndarray | None = None
    for table in tables:
        text = doc.element_text(table)
        if not text:
            continue
        first = seen.setdefault(text, table)
        if first == table or doc.start[table] < doc.end[first]:  # the first copy, or inside it
            continue
        if drop is None:
            drop = np.zeros(len(selection), dtype=bool)
        drop[int(doc.start[table]) : int(doc.end[table]) + 1] = True
        before, earlier = _heading_before(doc, headings, table), _heading_before(doc, headings, first)
        if (
            before is not None
            and earlier is not None
            and doc.start[before] > doc.end[first]  # between the copies
            and doc.element_text(before) == doc.element_text(earlier)
        ):
            drop[int(doc.start[before]) : int(doc.end[before]) + 1] = True
    return drop


def _heading_before(doc: Document, headings: list[int], element: int) -> int | None:
    """The last of the (selected) `headings` before `element`, or None."""
    index = int(np.searchsorted(np.asarray(headings, dtype=np.int64), element)) - 1
    return headings[index] if index >= 0 else None


def render_html(
    doc: Document,
    selection: np.ndarray,
    rewrite_link: LinkRewriter | None = None,
    images: bool = True,
) -> str:
    """Sanitised HTML of the selected tokens, keeping the page's structure, images and links.

    Besides the selection: the rest of the data tables it touches (`whole_table_tokens`) and the
    links of a table of contents whose items it keeps empty (`contents_list_tokens`); a second copy
    of a table is not written (`repeated_tables`), nor list items left without text
    (`drop_empty_items`)."""
    if not selection.any():
        return ""
    layout = layout_table_parts(doc)
    chosen = selected_chars(doc, selection) if "table" in doc.tag or "li" in doc.tag else None
    copies = repeated_tables(doc, selection, chosen) if chosen is not None else None
    if copies is not None:
        selection = selection & ~copies
        chosen = selected_chars(doc, selection)
    for extra in (
        whole_table_tokens(doc, selection, layout, chosen),
        contents_list_tokens(doc, selection, chosen),
    ):
        if extra is not None:
            selection = selection | extra
    if not selection.any():
        return ""
    borrowed = heading_anchors(doc)
    keep = kept_elements(doc, selection, layout).tolist()
    t = doc.tokens
    first, last = _whole_rows(doc, *selected_range(selection), layout)
    # For speed, only the tokens that can be written are visited: every tag, selected text, and
    # the text inside figures and pictures (written whole when they lie between selected text).
    # Skipped: unselected text elsewhere (whitespace between tags, boilerplate), which the walk
    # below would pass over anyway.
    span = slice(first, last + 1)
    visit = selection[span] | (t.kind[span] != TEXT)
    media = [e for name in ("figure", "picture") for e in indices_of(doc.tag, name)]
    if media:
        visit |= doc.mask_elements(media)[span]
    visited = np.flatnonzero(visit) + first
    kinds, owners = t.kind[visited].tolist(), t.element[visited].tolist()
    selected = selection[visited].tolist()
    tags, idents = doc.tag, doc.ident
    out: list[str] = []
    # Open the kept ancestors of the first selected token, then walk the selected range.
    ancestors = _ancestors(doc, owners[0] if kinds[0] == TEXT else int(doc.parent[owners[0]]))
    opened_before = set(ancestors)
    for element in ancestors:
        out.append(_start_tag(doc, element, rewrite_link, images, layout, borrowed.get(element)))
    skip_until = -1
    media_until = -1  # inside a media element of the selected range: written whole
    for i, kind, element, chosen in zip(visited.tolist(), kinds, owners, selected, strict=True):
        if i <= skip_until:
            continue
        inside_media = i <= media_until
        if kind == TEXT:
            if chosen or inside_media:
                text = t.text[i]
                # For speed, `escape` only where there is something to escape (most text has none).
                out.append(
                    html_lib.escape(text, quote=False) if "&" in text or "<" in text or ">" in text else text
                )
            continue
        name = tags[element]
        if not (keep[element] or inside_media):
            if kind == OPEN and images and name in MEDIA_TAGS and not _is_tracking_pixel(doc, element):
                # Figures and images between selected text are part of the article even when the
                # algorithm scored only text (DOM scorers select paragraphs, not pictures).
                media_until = int(doc.end[element])
                out.append(_start_tag(doc, element, rewrite_link, images, layout))
            continue
        if kind == OPEN:
            if (
                name in DROPPED
                or (name == "form" and not _page_form(doc, element))
                or (not images and name == "figcaption" and _captions_image(doc, element))
            ):
                skip_until = int(doc.end[element])
                continue
            # For speed, the common start tag (no attributes, no id, not in a layout table) from a
            # table rather than through `_start_tag`, which gives the same string.
            simple = (
                _PLAIN_START.get(name)
                if idents[element] is None and element not in layout and element not in borrowed
                else None
            )
            out.append(
                simple
                if simple is not None
                else _start_tag(doc, element, rewrite_link, images, layout, borrowed.get(element))
            )
        elif inside_media or doc.start[element] >= first or element in opened_before:
            out.append(_PLAIN_END.get(name, "") if element not in layout else _end_tag(doc, element, layout))
    for element in reversed(ancestors):
        if doc.end[element] > last:
            out.append(_end_tag(doc, element, layout))
    return drop_empty_items(drop_dead_jump_links(sanitize("".join(out)), doc.base_url))


#: A form holding at least this share of the body's text holds the page, not a control.
PAGE_FORM_SHARE = 0.5


def _page_form(doc: Document, element: int) -> bool:
    """Whether a `<form>` holds the page (a server framework that wraps the whole body in one, a
    search page its results): its text is the page's, written as a `<div>`, its controls dropped
    one by one. Any other form (a newsletter box, a comment box, a honeypot field's "leave this
    unchanged") is dropped whole, as before."""
    body = doc.tag.index("body") if "body" in doc.tag else 0
    return bool(doc.subtree_chars[element] >= PAGE_FORM_SHARE * max(int(doc.subtree_chars[body]), 1))


#: A list item with no text and no image in a sanitised fragment (only tags, spaces and
#: no-break spaces inside it; a nested list with text in it is text), and a list left with
#: nothing but spaces.
_EMPTY_ITEM = re.compile(r"<li(?: [^>]*)?>(?:\s|&nbsp;|<(?!img\b|/li\b|li\b)[^>]*>)*</li>")
_EMPTY_LIST = re.compile(r"<(ul|ol)(?: [^>]*)?>\s*</\1>")


def drop_empty_items(fragment: str) -> str:
    """The fragment without list items that hold no text and no image: a bullet with nothing
    after it (a table of contents whose links were dropped) tells a reader nothing. A list left
    empty goes with them."""
    if "<li" not in fragment:  # for speed: most fragments hold no list
        return fragment
    while True:
        shorter = _EMPTY_LIST.sub("", _EMPTY_ITEM.sub("", fragment))
        if shorter == fragment:
            return fragment
        fragment = shorter


def heading_anchors(doc: Document) -> dict[int, str]:
    """Per heading without an id, the id of an element inside it that is not written (a <span>):
    wikis and documentation generators put a section's anchor there (MediaWiki's
    `<h2><span class="mw-headline" id="History">`), and a table of contents links to it; on the
    heading, the reader's copy of the link still leads to its section."""
    found: dict[int, str] = {}
    for name in _HEADINGS:
        for heading in indices_of(doc.tag, name):
            if doc.ident[heading] is not None:
                continue
            for inner in range(heading + 1, int(doc.subtree_end[heading])):
                ident = doc.ident[inner]
                if (
                    ident
                    and ident.strip()
                    and _output_name(doc.tag[inner]) is None
                    and doc.tag[inner] not in DROPPED
                ):
                    found[heading] = ident
                    break
    return found


def _captions_image(doc: Document, figcaption: int) -> bool:
    """Whether a figcaption belongs to a figure whose picture Lite mode drops."""
    figure = int(doc.parent[figcaption])
    while figure >= 0 and doc.tag[figure] != "figure":
        figure = int(doc.parent[figure])
    if figure < 0:
        return False
    first, last = int(doc.start[figure]), int(doc.end[figure])
    owners = doc.tokens.element[first : last + 1]
    return any(doc.tag[int(e)] in ("img", "picture", "video") for e in set(owners.tolist()))


#: Table parts written differently inside a layout table: cells as <div>, the rest not at all.
_TABLE_PARTS = frozenset({"table", "tbody", "thead", "tfoot", "tr", "td", "th", "caption", "colgroup", "col"})
_DATA_TABLE_MARKS = frozenset({"caption", "th", "thead", "tfoot", "colgroup", "col"})


def layout_table_parts(doc: Document) -> dict[int, str | None]:
    """Elements of layout tables, mapped to what they become: a cell to "div", the rest to None.

    A table is for layout when it holds another table or has one row or one column and none of
    the marks of a data table (caption, th, thead, tfoot, col); a small grid (at most 10 cells,
    4 columns, 9 rows) of prose without those marks is layout too (Readability's rules).
    """
    if "table" not in doc.tag:
        return {}
    tables: dict[int, list[int]] = {}  # table -> its own parts (not those of nested tables)
    nested: set[int] = set()
    parents = doc.parent.tolist()
    # For speed, only the elements from the first table to the end of the last one are walked
    # (elements are in document order, so an element's descendants directly follow it).
    lo = doc.tag.index("table")
    last_table = len(doc.tag) - 1 - doc.tag[::-1].index("table")
    hi = int(np.searchsorted(doc.start, doc.end[last_table], side="right"))  # past its last descendant
    # The innermost table around each element, in one pass (a parent comes before its children).
    around: dict[int, int] = {}
    for element in range(lo, hi):
        parent = parents[element]
        if parent >= 0:
            around[element] = parent if doc.tag[parent] == "table" else around.get(parent, -1)
    for element in range(lo, hi):
        name = doc.tag[element]
        if name not in _TABLE_PARTS:
            continue
        owner = around.get(element, -1)
        if owner < 0:
            continue
        tables.setdefault(owner, []).append(element)
        if name == "table":
            nested.add(owner)
    parts: dict[int, str | None] = {}
    for table, own in tables.items():
        attrs = doc.elements[table].attributes
        role = (attrs.get("role") or "").strip().lower()
        names = [doc.tag[e] for e in own]
        if role == "presentation":
            is_layout = True
        elif attrs.get("summary") or role in ("table", "grid") or _DATA_TABLE_MARKS.intersection(names):
            is_layout = False
        elif table in nested:
            is_layout = True
        else:
            rows = names.count("tr")
            cells = names.count("td")
            cells_by_row = Counter(parents[c] for c in own if doc.tag[c] == "td")
            columns = max((cells_by_row[r] for r in own if doc.tag[r] == "tr"), default=0)
            is_layout = rows <= 1 or columns <= 1 or (rows < 10 and columns <= 4 and cells <= 10)
        if is_layout:
            parts[table] = None
            for element in own:
                if element not in tables:  # a nested table decides for itself
                    parts[element] = "div" if doc.tag[element] in ("td", "th", "caption") else None
    return parts


def _is_tracking_pixel(doc: Document, element: int) -> bool:
    attrs = doc.elements[element].attributes
    return any((attrs.get(size) or "").strip() in ("0", "1") for size in ("width", "height"))


def _ancestors(doc: Document, element: int) -> list[int]:
    chain: list[int] = []
    while element >= 0:
        chain.append(element)
        element = int(doc.parent[element])
    return chain[::-1]


def _output_name(name: str) -> str | None:
    if name in ALLOWED_TAGS:
        return name
    if name in AS_DIV:
        return "div"
    return None


def _start_tag(
    doc: Document,
    element: int,
    rewrite_link: LinkRewriter | None,
    images: bool,
    layout: dict[int, str | None] | None = None,
    anchor: str | None = None,
) -> str:
    """The element's start tag as written, or "" when it is not; `anchor`: an id it takes from an
    element inside it that is not written (`heading_anchors`)."""
    name = layout[element] if layout and element in layout else _output_name(doc.tag[element])
    if name is None or (name in ("img", "picture", "source") and not images):
        return ""
    allowed = ATTRIBUTES.get(name)
    if not allowed:
        # Only the id is written: for speed, the one the Document read rather than the node's.
        return f"<{name}{_jump_target(doc.ident[element] or anchor)}>"
    attrs = doc.elements[element].attributes
    if name == "img" and doc.noscript_images:
        attrs = doc.noscript_images.get((attrs.get("src") or "").strip(), attrs)  # the real image
    target = _jump_target(attrs.get("id") or (attrs.get("name") if name == "a" else None))
    values: dict[str, str] = {}
    if name in ("img", "source"):
        values.update(_image_sources(attrs))
    for key in allowed:
        if key in values:
            continue
        value = attrs.get(key)
        if value is None:
            continue
        values[key] = value
    parts = [name]
    for key, value in sorted(values.items()):  # a stable order (sets iterate in hash order)
        if key in _URL_ATTRIBUTES:
            url = _safe_url(doc, value)
            if url is None:
                continue
            if key == "href" and rewrite_link is not None and url.startswith(("http://", "https://")):
                url = rewrite_link(url)
            value = url
        elif key == "srcset":
            value = _absolute_srcset(doc, value)
        parts.append(f'{key}="{html_lib.escape(value, quote=True)}"')
    if name == "img" and not any(p.startswith("src=") for p in parts[1:]):
        return ""
    return "<" + " ".join(parts) + target + ">"


def _jump_target(anchor: str | None) -> str:
    """The id attribute that keeps in-page links to this element working (none past 200 characters)."""
    anchor = (anchor or "").strip()
    return f' id="{html_lib.escape(anchor, quote=True)}"' if anchor and len(anchor) < 200 else ""


#: The output elements written without an end tag (void).
_NO_END_TAG = frozenset(("img", "br", "hr", "wbr", "source", "col"))


def _end_tag(doc: Document, element: int, layout: dict[int, str | None] | None = None) -> str:
    out = layout[element] if layout and element in layout else _output_name(doc.tag[element])
    if out is None or out in _NO_END_TAG:
        return ""
    return f"</{out}>"


#: `_start_tag` of an element without an id outside layout tables, by tag name, for the tags written
#: without attributes (picture is left out: it depends on `images`); `_end_tag` likewise, "" for
#: tags not written or void. Both for speed, the per-tag work done once.
_PLAIN_START: dict[str, str] = {
    tag: f"<{out}>"
    for tag in ALLOWED_TAGS | AS_DIV
    if (out := _output_name(tag)) is not None and not ATTRIBUTES.get(out) and out != "picture"
}
_PLAIN_END: dict[str, str] = {
    tag: f"</{out}>"
    for tag in ALLOWED_TAGS | AS_DIV
    if (out := _output_name(tag)) is not None and out not in _NO_END_TAG
}


def _image_sources(attrs: dict[str, str | None]) -> dict[str, str]:
    """The real image behind lazy-loading placeholders (data-src, data-srcset, …)."""
    found: dict[str, str] = {}
    src = (attrs.get("src") or "").strip()
    if not src or src.startswith("data:") or "placeholder" in src or "blank." in src:
        for key in LAZY_SOURCES:
            lazy = (attrs.get(key) or "").strip()
            if lazy:
                found["src"] = lazy
                break
    for key in LAZY_SRCSETS:
        lazy = (attrs.get(key) or "").strip()
        if lazy and not (attrs.get("srcset") or "").strip():
            found["srcset"] = lazy
            break
    srcset = found.get("srcset") or (attrs.get("srcset") or "").strip()
    if "src" not in found and (not src or src.startswith("data:")) and srcset:
        chosen = choose_candidate(parse_srcset(srcset), at_most=FALLBACK_WIDTH)
        if chosen is not None:
            found["src"] = chosen
    return found


#: A root-relative path that `urljoin` would copy as it is onto the base's scheme and host: no "//",
#: no dot segment, no parameters, query or fragment, nothing `urlsplit` strips or escapes.
_PLAIN_PATH = re.compile(r"/(?!/)(?:[A-Za-z0-9_~%!$&'()*+,=:@-]|\.(?<!/\.)|/(?![/.]))*")


@functools.lru_cache(maxsize=64)
def _origin(base: str) -> str | None:
    """ "scheme://host" of an http(s) base URL, for joining plain paths onto it."""
    try:
        parts = urlsplit(base)
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return None
    return f"{parts.scheme}://{parts.netloc}"


#: An absolute http(s) URL that `urljoin` gives back unchanged against any base (it returns the URL
#: itself when the schemes differ, else `urlunparse(urlparse(url))`, the same string for this
#: shape): lower-case scheme, a plain ASCII host and port, no `;` (an empty one is dropped), no
#: empty query or fragment, no whitespace or control character (removed or stripped).
_PLAIN_ABSOLUTE = re.compile(
    r"https?://[A-Za-z0-9._~-]+(?::[0-9]*)?(?:/[^\x00-\x20\x7f#?;]*)?(?:\?[^\x00-\x20\x7f#]+)?(?:#[^\x00-\x20\x7f]+)?"
)


def absolute_url(doc: Document, value: str) -> str | None:
    """`doc.absolute_url`, without `urljoin` (which costs about as much as the rest of rendering a
    link) for the two common shapes, for speed: an absolute http(s) URL is kept as it is, a
    root-relative path is joined onto the base's origin. The same string either way."""
    if _PLAIN_ABSOLUTE.fullmatch(value):
        return value
    if doc.base_url and _PLAIN_PATH.fullmatch(value) and (origin := _origin(doc.base_url)) is not None:
        return origin + value
    return doc.absolute_url(value)


def _safe_url(doc: Document, value: str) -> str | None:
    """`value` made absolute against the page under the URL policy (`urls.safe_url`): a relative
    URL stays on a page without an address; a `data:image/` URL is kept (the sanitiser cannot tell
    an image's from a link's)."""
    return safe_url(absolute_url(doc, value.strip()), data_images=True)


def _absolute_srcset(doc: Document, srcset: str) -> str:
    candidates = []
    for candidate, descriptors in parse_srcset(srcset):
        url = _safe_url(doc, candidate)
        if url:
            candidates.append(f"{url} {descriptors}".strip())
    return ", ".join(candidates)


#: The sanitiser, configured once: for speed (`nh3.clean` converts its arguments on every call).
_CLEANER = nh3.Cleaner(
    tags=set(ALLOWED_TAGS),
    attributes={"*": {"id"}, **{tag: set(names) for tag, names in ATTRIBUTES.items()}},
    url_schemes=set(_SANITISER_SCHEMES),
    link_rel="noopener noreferrer",
    strip_comments=True,
)


def sanitize(fragment: str) -> str:
    """The allowlist, enforced by nh3: no scripts, handlers, forms, frames or unsafe URLs."""
    return _CLEANER.clean(fragment)


def _fragment_root(fragment: str) -> tuple[LexborHTMLParser, LexborNode] | None:
    tree = LexborHTMLParser(f"<body>{fragment}</body>")
    return (tree, tree.body) if tree.body is not None else None


#: An href with a "#" in nh3's serialisation, the fragments `drop_dead_jump_links` is given: attribute
#: values are in double quotes (a quote inside is "&quot;") and "#" is written as itself. A "#" in
#: the text (a hashtag, "No. #1") no longer costs a parse of the whole fragment.
_HASH_IN_HREF = re.compile(r'href="[^"]*#')


def drop_dead_jump_links(fragment: str, page_url: str | None = None) -> str:
    """Remove links to a spot in the page that the fragment does not contain ("#story-continues-1").

    A link counts as in-page when it is a bare `#fragment` or the page's own URL with a fragment.
    """
    if not _HASH_IN_HREF.search(fragment):  # for speed: no link can point into the page, no parse
        return fragment
    parsed = _fragment_root(fragment)
    if parsed is None:
        return fragment
    _, root = parsed
    page = page_url.split("#", 1)[0] if page_url else None
    targets = {node.attributes.get("id") for node in root.css("[id]")}
    changed = False
    for link in root.css("a[href]"):
        href = link.attributes.get("href") or ""
        base, hash_sign, name = href.partition("#")
        if not hash_sign or (base and base != page):
            continue
        if name and name in targets:
            continue
        parent = link.parent
        link.decompose()
        changed = True
        if (
            parent is not None
            and parent is not root
            and not (parent.text() or "").strip()
            and parent.css_first("img") is None
        ):
            parent.decompose()
    return (root.inner_html or "") if changed else fragment


_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
_LEADING_BLOCKS = 5  # how many leading blocks may repeat what the header shows
#: Reading-tool buttons that pages mark up as small headings ("Read Later" on Quanta): dropped
#: from the leading blocks as they are not part of the text (comparable form, whole heading).
_TOOL_LABEL = re.compile(
    r"(read later|save( for later| article| story)?|bookmark|print|share( this( article| story| page)?)?"
    r"|listen( to this( article| story)?)?|add to (reading list|favorites)|gift( this)? article)"
)


def _comparable(text: str | None) -> str:
    return re.sub(r"\W+", " ", (text or "").casefold()).strip()


#: Elements that make the block around them more than one leaf block (`_is_leaf_block`).
_INNER_BLOCKS = frozenset(
    ("p", "div", "address", *_HEADINGS, "img", "table", "ul", "ol", "pre", "blockquote")
)


def _is_leaf_block(node: LexborNode) -> bool:
    """A p, div or address with none of `_INNER_BLOCKS` inside it.

    For speed, the walk stops at the first block inside: a CSS query collected every one, which on
    a page's outer wrappers (the leading blocks are found top-down) scanned the whole article again
    for each level of nesting.
    """
    if node.tag not in ("p", "div", "address"):
        return False
    for inner in node.traverse(include_text=False):  # the node itself comes first
        if inner.tag in _INNER_BLOCKS and inner.mem_id != node.mem_id:
            return False
    return True


def _same_title(text: str, title: str) -> bool:
    return text == title or (len(text) > 15 and (title.startswith(text) or text.startswith(title)))


_MONTH = re.compile(r"\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b|\b\d{1,2}[ /.-]\d{1,2}\b")


def _is_date_line(text: str) -> bool:
    """A short line that is only a date: "may 20 2019", "2019 05 20" (comparable text)."""
    return (
        len(text) < 40
        and re.search(r"\b\d{4}\b", text) is not None
        and (_MONTH.search(text) is not None or re.fullmatch(r"[\d ]+", text) is not None)
    )


def _is_byline(text: str, byline: str) -> bool:
    """A short line naming the author: "By Jane Developer · March 5, 2024"."""
    if byline and byline in text and len(text) < len(byline) + 60:
        return True
    return len(text) < 80 and re.match(r"^by [^\W\d]", text) is not None


def fit_under_header(fragment: str, title: str | None, byline: str | None = None, dated: bool = False) -> str:
    """The article body without what the reader's header already shows, headings starting at h2.

    Among the first few blocks: a heading that repeats the title, short labels such as "Read
    Later" around it, a short line naming the byline ("By Jane Developer · March 5, 2024") and,
    when the header shows a date (`dated`), a line that is only a date. Then the headings move so
    that the highest is an h2: the header's title is the page's only h1, with no gap below it.
    """
    if not fragment:
        return fragment
    parsed = _fragment_root(fragment)
    if parsed is None:
        return fragment
    _, root = parsed
    wanted_title = _comparable(title)
    wanted_byline = _comparable(byline)
    leading: list[LexborNode] = []
    for node in root.traverse(include_text=False):
        if node is root:
            continue
        if node.tag in _HEADINGS or _is_leaf_block(node):
            leading.append(node)
        if len(leading) >= _LEADING_BLOCKS:
            break
    repeats = [
        node
        for node in leading
        if node.tag in _HEADINGS and wanted_title and _same_title(_comparable(node.text()), wanted_title)
    ]
    drop: list[LexborNode] = []
    body_started = False
    for node in leading:
        text = _comparable(node.text())
        if not text:
            continue
        if node in repeats:
            drop.append(node)
        elif node.tag in _HEADINGS:
            label = not body_started and len(text) < 25 and node.tag in ("h4", "h5", "h6")
            if label and (repeats or _TOOL_LABEL.fullmatch(text)):
                drop.append(node)  # a label beside the title: "Read Later", "Share"
        elif len(text) > 250:
            body_started = True
        elif _is_byline(text, wanted_byline) or (dated and _is_date_line(text)):
            drop.append(node)
    removed = bool(drop)
    for node in drop:
        node.decompose()
    levels = [int(node.tag[1]) for node in root.css(",".join(_HEADINGS)) if node.tag]
    shift = 2 - min(levels) if levels else 0
    if not removed and shift == 0:
        return fragment
    html = root.inner_html or ""
    if shift:
        html = re.sub(r"<(/?)h([1-6])\b", lambda m: f"<{m[1]}h{min(int(m[2]) + shift, 6)}", html)
    return html


#: What the start or end tag of an element does in `render_text`: a string is added to the running
#: block (a line break, a space between table cells); "pre" and "block" end the block.
_TEXT_BREAKS: dict[str, str] = {
    **dict.fromkeys(BLOCK_TAGS, "block"),
    "pre": "pre",
    "br": "\n",
    "td": " ",
    "th": " ",
}


def render_text(doc: Document, selection: np.ndarray) -> str:
    """Plain text of the selected tokens: one block per paragraph, a blank line between blocks;
    with the rest of the data tables the selection touches, as `render_html` writes them
    (`whole_table_tokens`), so that the text says what the reader shows."""
    if not selection.any():
        return ""
    tables = whole_table_tokens(doc, selection, layout_table_parts(doc)) if "tr" in doc.tag else None
    if tables is not None:
        selection = selection | tables
    t = doc.tokens
    first, last = selected_range(selection)
    # For speed, only the tokens that matter are visited: selected text and every tag (the
    # unselected text between them, most of the range on a page with boilerplate, is skipped).
    span = slice(first, last + 1)
    visited = np.flatnonzero(selection[span] | (t.kind[span] != TEXT)) + first
    kinds = t.kind[visited]
    tokens = zip(visited.tolist(), kinds.tolist(), t.element[visited].tolist(), strict=True)
    texts = t.text
    tags = doc.tag
    # For speed, one test for the whole selection rather than one per block: when no selected text
    # holds a character where `str.split()` and `_WS` disagree (the newline apart: text newlines
    # become spaces, and a block with <br>s is collapsed line by line), every block's spaces
    # collapse by `str.split()`, which is what `collapse_spaces` would find for each.
    selected_text = "".join(map(texts.__getitem__, visited[kinds == TEXT].tolist()))
    collapse = collapse_spaces if any(map(selected_text.__contains__, _SPLIT_ONLY[1:])) else _split_join
    blocks: list[str] = []
    current: list[str] = []
    preformatted = 0

    def flush() -> None:
        text = "".join(current)
        if preformatted:
            if text.strip():
                blocks.append(text.strip("\n"))
        elif "\n" not in text:  # the common case, the same result as the general one below
            text = collapse(text)
            if text:
                blocks.append(text)
        else:
            text = "\n".join(collapse(line) for line in text.split("\n"))
            text = re.sub(r"\n+", "\n", text).strip()
            if text.strip():
                blocks.append(text.strip("\n"))
        current.clear()

    for i, kind, owner in tokens:
        if kind == TEXT:
            text = texts[i]
            current.append(text if preformatted else text.replace("\n", " "))
            continue
        action = _TEXT_BREAKS.get(tags[owner])
        if action is None:
            continue
        if action == "block":
            if current:  # for speed: most block tags end no text
                flush()
        elif action == "pre":
            if current:
                flush()
            preformatted += 1 if kind == OPEN else -1
            preformatted = max(preformatted, 0)
        else:
            current.append(action)
    if current:
        flush()
    text = "\n\n".join(blocks)
    # Only preformatted blocks can hold blank lines; for speed, the regex (slow per character)
    # runs only when there is one.
    return _BLANK_LINES.sub("\n\n", text) if "\n\n\n" in text else text


#: Deepest element nesting rendered as Markdown structure; anything deeper comes out as its text.
MARKDOWN_DEPTH = 100
#: Characters escaped with a backslash wherever they occur in text: CommonMark's inline syntax and
#: raw HTML (`<`), entity references (`&`) and table cells (`|`).
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>&|~])")
#: What makes a block at the start of a line: ATX heading, list item, quote, setext underline, thematic break.
_MD_LINE_START = re.compile(r"^(\s*)([#+=-]|\d{1,9}(?=[.)]))([.)]?)")
_MD_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
#: Characters percent-encoded in a link destination: those that end or confuse one (spaces, parentheses,
#: angle brackets, quotes, backslash, backtick) and every control character.
_MD_URL_UNSAFE = re.compile(r"[\x00-\x20\x7f()<>\"'\\`]")


def escape_markdown(text: str) -> str:
    """Text that Markdown shows as itself: no emphasis, links, raw HTML, entities or block syntax."""
    text = _MD_SPECIAL.sub(r"\\\1", text)
    return _MD_LINE_START.sub(_escape_line_start, text)


def _escape_line_start(match: re.Match[str]) -> str:
    space, mark, after = match.groups()
    if mark.isdigit():  # "1." starts a list: escape the punctuation (digits have no escape)
        return f"{space}{mark}\\{after}"
    return f"{space}\\{mark}{after}"


def markdown_url(url: str | None) -> str | None:
    """A link destination for Markdown: http(s) or relative only (None otherwise), percent-encoded
    where a character would end the destination, `&` escaped so no entity can spell a scheme."""
    if not url:
        return None
    url = url.strip()
    cleaned = re.sub(r"[\x00-\x20\x7f]", "", url)
    for candidate in (cleaned, html_lib.unescape(cleaned)):
        match = _MD_SCHEME.match(candidate)
        if match and match.group(1).lower() not in ("http", "https"):
            return None
    if not cleaned:
        return None
    encoded = _MD_URL_UNSAFE.sub(lambda m: f"%{ord(m.group()):02X}", url)
    return encoded.replace("&", "\\&")


def _code_fence(text: str, minimum: int) -> str:
    """A run of backticks longer than any in `text` (at least `minimum`)."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(minimum, longest + 1)


def html_to_markdown(fragment: str) -> str:
    """Markdown of a sanitised fragment: headings, lists, quotes, code, links, images, emphasis.

    Safe to render with HTML allowed: text is escaped (`escape_markdown`), links and images keep
    only http(s) and relative URLs (`markdown_url`), code is fenced longer than any backtick run in it,
    and nesting deeper than MARKDOWN_DEPTH comes out as text.
    """
    if not fragment:
        return ""
    root = LexborHTMLParser(f"<body>{fragment}</body>").body
    if root is None:
        return ""
    text = _markdown_children(root, list_depth=0, depth=0)
    text = re.sub(r"[ \t]+\n", "\n", text)
    return _BLANK_LINES.sub("\n\n", text).strip() + "\n"


def _markdown_children(node: LexborNode, list_depth: int, depth: int) -> str:
    parts: list[str] = []
    child = node.child
    while child is not None:
        parts.append(_markdown_node(child, list_depth, depth + 1))
        child = child.next
    return "".join(parts)


def _markdown_node(node: LexborNode, list_depth: int, depth: int) -> str:
    tag = node.tag
    if tag == "-text":
        return escape_markdown(_WS.sub(" ", (node.text_content or "").replace("\n", " ")))
    if tag is None or tag.startswith("-"):
        return ""
    if depth > MARKDOWN_DEPTH:
        return f"\n\n{escape_markdown(_WS.sub(' ', node.text(deep=True).replace(chr(10), ' ')).strip())}\n\n"
    if tag == "code":
        code = _WS.sub(" ", node.text(deep=True).replace("\n", " "))
        fence = _code_fence(code, 1)
        return f"{fence} {code} {fence}" if code.strip() else ""
    if tag == "pre":
        code = node.text(deep=True).strip("\n")
        fence = _code_fence(code, 3)
        return f"\n\n{fence}\n{code}\n{fence}\n\n"
    inner = _markdown_children(node, list_depth, depth)
    if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
        return f"\n\n{'#' * int(tag[1])} {inner.strip()}\n\n"
    if tag in ("p", "div", "section", "article", "figure", "table", "details", "dl"):
        return f"\n\n{inner.strip()}\n\n"
    if tag in ("tr", "figcaption", "caption", "summary", "dt", "dd"):
        return f"\n{inner.strip()}\n"
    if tag in ("td", "th"):
        return f" {inner.strip()} |"
    if tag == "br":
        return "  \n"
    if tag == "hr":
        return "\n\n---\n\n"
    if tag in ("strong", "b"):
        return f"**{inner.strip()}**" if inner.strip() else ""
    if tag in ("em", "i"):
        return f"*{inner.strip()}*" if inner.strip() else ""
    if tag == "blockquote":
        lines = inner.strip().splitlines()
        return "\n\n" + "\n".join(f"> {line}" if line else ">" for line in lines) + "\n\n"
    if tag in ("ul", "ol"):
        items = []
        number = 1
        child = node.child
        while child is not None:
            if child.tag == "li":
                marker = f"{number}." if tag == "ol" else "-"
                body = _markdown_children(child, list_depth + 1, depth + 1).strip()
                body = body.replace("\n", "\n" + "  " * (list_depth + 1))
                items.append("  " * list_depth + f"{marker} {body}")
                number += 1
            child = child.next
        return "\n\n" + "\n".join(items) + "\n\n"
    if tag == "a":
        href = markdown_url(node.attributes.get("href"))
        label = inner.strip()
        return f"[{label}]({href})" if href and label else inner
    if tag == "img":
        src = markdown_url(node.attributes.get("src"))
        alt = escape_markdown(_WS.sub(" ", node.attributes.get("alt") or "").strip())
        if src is None:
            return alt
        return f"![{alt}]({src})"
    return inner
