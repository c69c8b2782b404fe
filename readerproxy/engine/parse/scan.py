"""The tokenisers that read a cleaned tree into the Document's linear view.

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
(`document._id_class_role`). Before all of them, where it can, `_walk_native` reads the same view
from the tree itself, through Lexbor's own functions, without serialising (the serialisation defines
the view; the walk reproduces what the scan of it would give, and declines where it could not be
sure). `scan_tree` tries them in that order.
"""

from __future__ import annotations

import html as html_lib
import logging
import re
from dataclasses import dataclass, field
from itertools import compress
from operator import attrgetter
from typing import Any

import numpy as np
import selectolax.lexbor
from selectolax.lexbor import LexborHTMLParser, LexborNode

from ..._speedups import native
from .clean import clean, read_before_cleaning
from .nesting import cap_depth

#: The kinds of tokens of the linear view (`LinearView.kind`).
TEXT, OPEN, CLOSE = 0, 1, 2
VOID_TAGS = frozenset(
    "area base br col embed hr img input link meta param source track wbr keygen basefont "
    "bgsound frame".split()
)

_TOKEN = re.compile(
    r'(<(?:(/?)([A-Za-z][^\t\n\f\r />]*)(?:[^>"]|"[^"]*")*>|!--.*?-->|![^>]*>|\?[^>]*>))', re.S
)
_BAD_ATTRIBUTE_NAME = re.compile(r'["\'<>=/`]')
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


class _Misaligned(Exception):
    pass


def scan_tree(tree: LexborHTMLParser, elements: list[LexborNode]) -> tuple[list[str], Scan]:
    """The elements' lower-case tag names and the linear view of the cleaned `tree` (`elements`:
    its `tree.css("*")`), from the first reader that answers: the C walk of the tree, the C scan of
    its serialisation, the numpy scan, and the general tokeniser (the module docstring)."""
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
    return tag, scan


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


@dataclass(slots=True)
class Scan:
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


def _scan_fast(serialised: str, tag: list[str]) -> Scan | None:
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
    return Scan(
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
    clean(tree, read_before_cleaning(tree, capped))
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


def _walk_native(tree: LexborHTMLParser, n_elements: int) -> Scan | None:
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


def _scan_native(serialised: str, tag: list[str] | int) -> Scan | None:
    """`_scan_fast` in C (`_native.scan`, one pass over the serialisation), or None where it declines.

    Chosen for speed: the numpy passes of `_scan_fast` are each fast, but there are about eighty of
    them. The C kernel gives the same fields, as bytearrays this wraps without copying. `tag`: the
    elements' tag names (checked as `_scan_fast` checks them), or their number: then the kernel reads
    each name from its start tag (`Scan.tag`); it declines a name `_tag_names` might lower-case
    differently (any character outside printable ASCII), and the n-th start tag is the n-th element
    because their counts agree (the module docstring).
    """
    assert native is not None
    fields = native.scan(serialised, tag, VOID_TAGS)
    return None if fields is None else _wrap_scan(fields)


def _wrap_scan(fields: tuple[Any, ...]) -> Scan:
    """The fields of `_native.scan` or `_native.walk` as a `Scan`, the arrays wrapped without copying."""
    kind, owner, length, text, chars, in_anchor, newline_after, parent, start, end, *attributes = fields
    ident, classes, role, unsure, names = attributes
    return Scan(
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


def _scan(serialised: str, tag: list[str]) -> Scan:
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

    return Scan(
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
