"""Candidate blocks of a page and their features, all in numpy.

A block is a *text holder* of the DOM heuristic (`elements.TEXT_HOLDERS`: a block-level element,
credited with the text of the inline markup inside it) that owns visible text; its tokens are the
text tokens it owns. Every block gets one row of `FEATURES`, drawn from every seed algorithm and
from the page's structure:

- size: characters and words of the block's own text and of its subtree;
- link density of the own text and of the parent's and grandparent's subtrees (DANAg, Filter 3:
  text inside anchors does not count as content);
- tag/text ratio of the block's span (CETR, Weninger, Hsu, Han 2010, §3: text characters per tag);
- text density, words per 80-character wrapped line (Kohlschütter, Frankhauser, Nejdl 2010, §4.2);
- the DOM heuristic's score, its context (semantic tags, ARIA roles, class/id hints inherited),
  its own-tag weight, Readability.js's unlikely-candidate rule, whether the heuristic selects the
  block and whether it lies inside the heuristic's article root (Berg 2020, §5–6);
- the semantic containers around the block (article, main, nav, aside, footer, header, form, li,
  table, figure) and the block's own tag;
- depth, relative position in the page, punctuation and digit shares of the text;
- siblings: how many blocks share the parent, their mean size, how many share the block's tag;
- neighbours: the previous and next block's score, link density and selection, and the heuristic
  selection smoothed over five blocks;
- the page: its text size, link density, number of blocks and the share the heuristic selected.
- sections (`section_columns`): the text and headings since the nearest heading that opens a list
  of other pages ("Related articles", "More from ...") or the comments, and whether such a heading
  comes after the page's first h1.

The features are cheap: prefix sums over the token view, `np.bincount` per block and one pass of
numpy over the code points of the page's text. Choices made for speed (each gives the same numbers
as the direct way): tags are compared as small integer codes, never as numpy object arrays; "inside
a container" is counted for every container tag at once with two `np.searchsorted` over range ends
(`_containing`) rather than one token mask per tag; character classes come from one lookup table.
With the optional C kernels (`readerproxy._speedups`), `_containing`, `_character_counts`,
`_element_counts`, `repeated_items` and the same-tag sibling counts count in C (`_native.containing`,
`class_counts`, `element_counts`, `repeated_items`, `key_counts`) and the numpy code is their
reference. For speed, a page's fixed cost (a few hundred numpy calls on arrays of a few dozen
entries) is cut the same way: `_columns` and `structure_columns` (with `page_type_columns`' item
counts) are written straight into the feature matrix by `_native.block_columns`, `block_neighbours`
and `structure_columns` (`_place_columns`, `_place_structure`), and `context_features` comes from
`_native.context_columns`; the numpy functions stay as their references, numpy still takes every
logarithm, and the tests compare both on every dataset page, bit for bit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from ..._speedups import native
from ..elements import ElementFeatures, features_of, tag_ids
from ..extraction import Extraction, block_columns
from ..parse.document import TEXT, Document
from ..parse.scan import code_points
from ..schema import BLOCK_KIND_TYPES, script_values, text_types, walk

#: Own tags that get a feature of their own (one-hot); any other tag leaves them all 0.
OWN_TAGS = (
    "p",
    "li",
    "h1",
    "h2",
    "h3",
    "h4 h5 h6",
    "td th",
    "div",
    "pre",
    "blockquote",
    "dd dt",
    "figcaption caption",
    "section article main",
    "button label option legend select textarea",
    "span a",
)
#: Containers whose presence around a block is a feature (one token-range mask each).
CONTAINERS = ("article", "main", "nav", "aside", "footer", "header", "form", "li", "table", "figure", "a")
_CONTAINER_INDEX = {name: index for index, name in enumerate(CONTAINERS)}
_OWN_TAG_GROUP = {name: index for index, group in enumerate(OWN_TAGS) for name in group.split()}
_TAG_COLUMNS = tuple(f"tag_{group.replace(' ', '_')}" for group in OWN_TAGS)
_IN_COLUMNS = tuple(f"in_{name}" for name in CONTAINERS)
#: Characters counted as punctuation of running text.
PUNCTUATION = ".,;:!?\u3002\uff0c"
#: Wrap width of Kohlschütter et al.'s text density (2010, §4.2).
WRAP_WIDTH = 80

#: Form controls: a reply box or a search form around a block is chrome, not content.
CONTROL_TAGS = frozenset(("input", "button", "textarea", "select"))
HEADING_TAGS = frozenset(("h1", "h2", "h3", "h4", "h5", "h6"))
#: Kinds of elements counted inside a block's ancestors: controls, headings, images, times.
_KINDS = (CONTROL_TAGS, HEADING_TAGS, frozenset(("img", "picture", "svg")), frozenset(("time",)))
#: Ancestors (the block itself is level 0) searched for a repeated item (a post, teaser, product card).
REPEAT_LEVELS = 6
#: Structure features (`structure_columns`), appended after the original ones.
STRUCTURE_FEATURES: tuple[str, ...] = (
    "log_repeat",
    "repeat_level",
    "repeat_item_log_chars",
    "repeat_item_link_density",
    "repeat_group_chars_share",
    "repeat_item_index",
    "log_controls_grandparent",
    "log_controls_ancestor4",
    "log_headings_grandparent",
    "log_images_grandparent",
    "log_time_grandparent",
    "position_from_h1",
    "title_overlap",
    "depth_below_root",
)
#: Page-type features (`page_type_columns`), appended after the structure features.
PAGE_TYPE_FEATURES: tuple[str, ...] = (
    "ld_product",
    "ld_article",
    "ld_discussion",
    "ld_list",
    "og_article",
    "og_product",
    "page_log_h1",
    "page_log_forms",
    "page_log_controls",
    "page_log_times",
    "page_repeat_share",
    "after_comment_heading",
    "comment_heading_position",
    "item_log_headings",
    "item_log_images",
    "item_log_times",
    "item_log_controls",
    "item_log_links",
    "ld_body_log_chars",
    "ld_body_share",
)
#: Section features (`section_columns`), appended after the page-type features: where the block
#: stands after the nearest heading that opens a list of other pages ("Related articles", "More
#: from ...", "Most popular", "Customers also viewed") or the readers' comments.
SECTION_FEATURES: tuple[str, ...] = (
    "after_related_heading",
    "log_chars_since_related",
    "log_chars_since_comment",
    "log_headings_since_related",
)

FEATURES: tuple[str, ...] = (
    "log_chars",
    "log_words",
    "link_density",
    "log_subtree_chars",
    "tag_ratio",
    "text_density",
    "heuristic_score",
    "heuristic_context",
    "heuristic_own_tag",
    "unlikely",
    "heuristic_selected",
    "in_heuristic_root",
    "depth",
    "position",
    "punctuation_share",
    "digit_share",
    "upper_share",
    "chars_share",
    *_TAG_COLUMNS,
    *_IN_COLUMNS,
    "parent_link_density",
    "grandparent_link_density",
    "parent_chars_share",
    "grandparent_chars_share",
    "log_parent_blocks",
    "parent_mean_log_chars",
    "log_same_tag_siblings",
    "prev_score",
    "next_score",
    "prev_link_density",
    "next_link_density",
    "prev_selected",
    "next_selected",
    "selected_smoothed",
    "log_prev_chars",
    "log_next_chars",
    "page_log_chars",
    "page_link_density",
    "page_log_blocks",
    "page_selected_share",
    "root_chars_share",
    "position_in_root",
    *STRUCTURE_FEATURES,
    *PAGE_TYPE_FEATURES,
    *SECTION_FEATURES,
)


#: A feature column: one value per block, or one number for every block of the page.
Column = np.ndarray | float


@dataclass(frozen=True, slots=True)
class PageBlocks:
    """The blocks of one page: their elements and one feature row each."""

    elements: np.ndarray  # int64: element index of each block (a text holder with own text)
    features: np.ndarray  # float64, shape (blocks, len(FEATURES))
    holder: np.ndarray  # int32 per element: the text holder owning its text (heuristic.ElementFeatures)
    own_words: np.ndarray  # float64 per block: words of own text
    parent: np.ndarray  # int64 per block: its parent element (-1: none)
    grandparent: np.ndarray  # int64 per block: its grandparent element (-1: none)


def own_texts(doc: Document, blocks: PageBlocks, chosen: np.ndarray | None = None) -> dict[int, str]:
    """The own text of blocks (the text tokens each one's holder owns, joined by spaces), by block
    index in block order, for the blocks of the mask `chosen` (all when None) that have any. For
    speed, the body's tokens are matched to blocks by numpy, and only the chosen blocks' tokens are
    read in Python."""
    t = doc.tokens
    chosen = np.ones(len(blocks.elements), dtype=bool) if chosen is None else chosen
    block_of = np.full(len(doc.elements), -1, dtype=np.int64)
    block_of[blocks.elements[chosen]] = np.flatnonzero(chosen)
    first, last = doc.body
    span = np.arange(first, last + 1)
    span = span[(t.kind[span] == TEXT) & (t.element[span] >= 0)]
    owner = block_of[blocks.holder[t.element[span]]]
    parts: dict[int, list[str]] = {}
    for token, block in zip(span[owner >= 0].tolist(), owner[owner >= 0].tolist(), strict=True):
        parts.setdefault(block, []).append(t.text[token])
    return {block: " ".join(words) for block, words in sorted(parts.items())}


def signed_log(values: np.ndarray) -> np.ndarray:
    """sign(x)·log1p(|x|): heuristic scores span -4000..4000, the trees need only their order."""
    return np.sign(values) * np.log1p(np.abs(values))


def _article_root(heuristic: Extraction) -> int:
    """The element the heuristic took for the article's root (its `article_element` signal), or -1."""
    roots = heuristic.signals.get("article_element")
    return int(roots[0]) if roots is not None and len(roots) else -1


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    return np.divide(
        numerator, denominator, out=np.zeros(np.shape(numerator), dtype=np.float64), where=denominator > 0
    )


#: Character class by code point (the last entry stands for everything above it): 1 punctuation,
#: 2 ASCII digit, 3 ASCII upper-case letter, 0 anything else.
_CHARACTER_CLASS = np.zeros(0x10000, dtype=np.uint8)
_CHARACTER_CLASS[[ord(c) for c in PUNCTUATION]] = 1
_CHARACTER_CLASS[ord("0") : ord("9") + 1] = 2
_CHARACTER_CLASS[ord("A") : ord("Z") + 1] = 3


def _character_counts(
    doc: Document, tokens: np.ndarray, block: np.ndarray, n_blocks: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Punctuation, digits and upper-case letters of the given text tokens, summed per block
    (`block`: the block of each token): one lookup and one `np.bincount` over the code points."""
    if len(tokens) == 0:
        zero = np.zeros(n_blocks, dtype=np.float64)
        return zero, zero, zero
    if native is not None:  # the same counts in C (`_native.class_counts`), no joined copy of the text
        counts = np.frombuffer(
            native.class_counts(
                doc.tokens.text, tokens.astype(np.int64), block.astype(np.int64), n_blocks, _CHARACTER_CLASS
            ),
            dtype=np.float64,
        ).reshape(n_blocks, 4)
        return counts[:, 1], counts[:, 2], counts[:, 3]
    texts = [doc.tokens.text[i] for i in tokens.tolist()]
    codes = code_points("".join(texts))
    if codes.dtype.itemsize > 2:
        codes = np.minimum(codes, len(_CHARACTER_CLASS) - 1)
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    key = np.repeat(block * 4, lengths) + _CHARACTER_CLASS[codes]
    counts = np.bincount(key, minlength=4 * n_blocks).reshape(n_blocks, 4).astype(np.float64)
    return counts[:, 1], counts[:, 2], counts[:, 3]


def _containing(
    kind: np.ndarray, first: np.ndarray, last: np.ndarray, kinds: int, position: np.ndarray
) -> np.ndarray:
    """For each kind k < `kinds` and each position p, how many ranges first[i]..last[i] (inclusive)
    of kind k hold p; shape (kinds, positions). A range with first = last + 1 is empty.

    Counted as #(first <= p) - #(last < p) (every range with last < p also has first <= p, the
    empty ones included) with one sorted key per range, kind-major: `kind * stride + offset`.
    """
    if native is not None:  # the same counts in C (`_native.containing`: one difference array per kind)
        counted = native.containing(
            kind.astype(np.int64),
            first.astype(np.int64),
            last.astype(np.int64),
            kinds,
            position.astype(np.int64),
        )
        if counted is not None:
            return np.frombuffer(counted, dtype=np.int64).reshape(kinds, len(position))
    stride = int(max(first.max(initial=0), last.max(initial=0), position.max(initial=0))) + 2
    base = kind.astype(np.int64) * stride
    query = (np.arange(kinds, dtype=np.int64)[:, None] * stride + position[None, :]).ravel()
    opened = np.searchsorted(np.sort(base + first), query, side="right")
    closed = np.searchsorted(np.sort(base + last), query, side="left")
    return (opened - closed).reshape(kinds, len(position))


def _pad_edge(values: np.ndarray, width: int) -> np.ndarray:
    """`np.pad(values, width, mode="edge")` for a non-empty 1-d array, at a tenth of its overhead."""
    return np.concatenate((np.repeat(values[:1], width), values, np.repeat(values[-1:], width)))


def _previous_next(rows: np.ndarray, edge: tuple[float, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Each row's previous and next block's value (`edge[k]` for row k where there is none). For
    speed, all rows shifted at once."""
    fill = np.array(edge, dtype=np.float64)[:, None]
    return (
        np.concatenate((fill, rows[:, :-1]), axis=1),
        np.concatenate((rows[:, 1:], fill), axis=1),
    )


def page_blocks(doc: Document, heuristic: Extraction) -> PageBlocks:
    """Blocks and features of a page, given the heuristic's Extraction on the same Document."""
    features = features_of(doc)
    elements = np.flatnonzero(features.chars > 0)
    n_blocks = len(elements)
    if n_blocks == 0:
        none = np.zeros(0, dtype=np.int64)
        return PageBlocks(elements, np.zeros((0, len(FEATURES))), features.holder, np.zeros(0), none, none)
    codes = tag_codes(doc, features)  # the codes the heuristic made
    # For speed: the columns written into one preallocated array, feature by feature, then one
    # transposing copy (what np.column_stack(...).astype(np.float64) gives, without its per-column
    # reshaping); a column that is the same for every block of the page is given as one number and
    # broadcast. With the C kernels, `_columns`' share is written there directly (`_place_columns`).
    by_feature = np.empty((len(FEATURES), n_blocks), dtype=np.float64)
    code_table = _code_table(codes) if native is not None else None
    placed = None
    if code_table is not None:
        placed = _place_columns(doc, heuristic, features, elements, codes, by_feature, code_table)
    if placed is not None:
        parent, grandparent = placed
        columns: dict[str, Column] = {}
        read: dict[str, Column] = {
            "log_chars": by_feature[_ROW["log_chars"]],
            "depth": by_feature[_ROW["depth"]],
        }
    else:
        columns = read = _columns(doc, heuristic, features, elements, codes)
        parent = doc.parent[elements].astype(np.int64)
        grandparent = np.where(parent >= 0, doc.parent[np.maximum(parent, 0)], -1).astype(np.int64)
    items = repeated_items(doc, elements, codes)
    placed_structure = (
        placed is not None
        and code_table is not None
        and _place_structure(doc, heuristic, elements, items, codes, by_feature, code_table)
    )
    if not placed_structure:
        columns.update(structure_columns(doc, heuristic, elements, np.asarray(read["depth"]), items, codes))
    titles = section_titles(doc, codes.starts(doc, HEADING_TAGS)[0])  # read once for both
    columns.update(
        page_type_columns(doc, elements, read, items, features.holder, codes, titles, not placed_structure)
    )
    columns.update(section_columns(doc, elements, codes, titles))
    for name, column in columns.items():
        by_feature[_ROW[name]] = column
    # every row written once, by the kernels or from the columns: np.empty's garbage never reaches
    # the trees (a check, not an assert, so that it holds under `python -O` too)
    placed_rows = len(_COLUMNS) if placed is not None else 0
    placed_rows += len(_STRUCTURE_KERNEL_COLUMNS) + 1 if placed_structure else 0  # + title_overlap
    if len(columns) + placed_rows != len(FEATURES):
        raise RuntimeError(f"page_blocks wrote {len(columns) + placed_rows} of {len(FEATURES)} feature rows")
    matrix = np.ascontiguousarray(by_feature.T)
    return PageBlocks(
        elements,
        matrix if np.isfinite(matrix).all() else np.nan_to_num(matrix, copy=False),
        features.holder,
        features.words[elements],
        parent,
        grandparent,
    )


#: Row of each feature in `page_blocks`' feature-major matrix.
_ROW = {name: k for k, name in enumerate(FEATURES)}
#: The columns `_columns` gives, in the order `_native.block_columns` writes them (see its header):
#: the raw argument where `_place_columns` then takes a logarithm, and the neighbours, the smoothed
#: selection, the parent's mean and the page's size and block count, which `_place_columns` adds.
_KERNEL_COLUMNS = (
    *FEATURES[: FEATURES.index("parent_link_density")],  # log_chars ... chars_share, tag_*, in_*
    "parent_link_density",
    "grandparent_link_density",
    "parent_chars_share",
    "grandparent_chars_share",
    "log_parent_blocks",
    "log_same_tag_siblings",
    "position_in_root",
    "page_link_density",
    "page_selected_share",
    "root_chars_share",
)
_KERNEL_ROWS = np.array([_ROW[name] for name in _KERNEL_COLUMNS], dtype=np.int64)
#: The neighbours' columns (`_previous_next` in `_columns`): source rows, previous and next rows, and
#: what a block without a previous or next one reads.
_NEIGHBOUR_SOURCES = np.array(
    [_ROW[name] for name in ("heuristic_score", "link_density", "heuristic_selected", "log_chars")],
    dtype=np.int64,
)
_PREVIOUS_ROWS = np.array(
    [_ROW[name] for name in ("prev_score", "prev_link_density", "prev_selected", "log_prev_chars")],
    dtype=np.int64,
)
_NEXT_ROWS = np.array(
    [_ROW[name] for name in ("next_score", "next_link_density", "next_selected", "log_next_chars")],
    dtype=np.int64,
)
_NEIGHBOUR_EDGE = np.array([0.0, 1.0, 0.0, 0.0])
#: The smoothing kernel of `selected_smoothed` (what `_columns` makes each time).
_SMOOTHING = np.ones(5) / 5
#: Every column of `_columns`: the features before the structure features.
_COLUMNS = FEATURES[: FEATURES.index(STRUCTURE_FEATURES[0])]
# The log rows `_place_columns` transforms two at a time must be neighbours in FEATURES.
assert _ROW["log_words"] == _ROW["log_chars"] + 1 and _ROW["tag_ratio"] == _ROW["log_subtree_chars"] + 1
assert _ROW["heuristic_context"] == _ROW["heuristic_score"] + 1


def _place_columns(
    doc: Document,
    heuristic: Extraction,
    features: ElementFeatures,
    elements: np.ndarray,
    codes: TagCodes,
    by_feature: np.ndarray,
    code_table: np.ndarray,
) -> tuple[np.ndarray, np.ndarray] | None:
    """`_columns`, written straight into the rows of `by_feature` (features x blocks) by the C kernel
    `_native.block_columns` and a few numpy operations on whole rows; the blocks' parents and
    grandparents, or None when the kernel declines (the caller then runs `_columns`).

    For speed: one pass in C instead of about 120 numpy calls on arrays of a few hundred entries, and
    no dictionary of columns to copy. `code_table` is `_code_table(codes)`. The same numbers: the kernel does the divisions, products and
    comparisons in `_columns`' order, and every logarithm is still numpy's, on whole contiguous rows."""
    assert native is not None
    t = doc.tokens
    n_elements = len(doc.elements)
    score_of, chosen_of = block_columns(heuristic.blocks, n_elements)
    root = _article_root(heuristic)
    first, last = doc.body
    placed = native.block_columns(
        by_feature,
        _KERNEL_ROWS,
        len(OWN_TAGS),
        len(CONTAINERS),
        elements.astype(np.int64),
        doc.start,
        doc.end,
        doc.parent,
        t.kind.view(np.uint8),
        doc.subtree_chars,
        doc.subtree_anchor_chars,
        features.chars,
        features.words,
        features.anchor_chars,
        features.own,
        features.context,
        features.unlikely,
        score_of,
        chosen_of,
        codes.tag_id,
        code_table,
        features.text_tokens,
        features.text_owner,
        _CHARACTER_CLASS,
        t.text,
        root,
        first,
        max(1, last - first + 1),
        float(WRAP_WIDTH),
    )
    if placed is None:
        return None
    parent = np.frombuffer(placed[0], dtype=np.int64)
    grandparent = np.frombuffer(placed[1], dtype=np.int64)
    page_chars: float = placed[2]
    row = _ROW
    # The logarithms, numpy's as in `_columns`, two neighbouring rows at a time.
    logs = slice(row["log_chars"], row["log_words"] + 1)
    np.log1p(by_feature[logs], out=by_feature[logs])
    logs = slice(row["log_subtree_chars"], row["tag_ratio"] + 1)
    np.log1p(by_feature[logs], out=by_feature[logs])
    logs = slice(row["heuristic_score"], row["heuristic_context"] + 1)
    by_feature[logs] = signed_log(by_feature[logs])
    # The previous and next block's values (copies), the parent's mean log size (summed in block
    # order, as np.bincount in `_columns`) and the smoothed selection (each window's dot product
    # added left to right, as np.convolve does), in C (`_native.block_neighbours`); then the logs.
    native.block_neighbours(
        by_feature,
        _NEIGHBOUR_SOURCES,
        _PREVIOUS_ROWS,
        _NEXT_ROWS,
        _NEIGHBOUR_EDGE,
        parent,
        row["log_chars"],
        row["log_parent_blocks"],
        row["parent_mean_log_chars"],
        row["heuristic_selected"],
        row["selected_smoothed"],
        _SMOOTHING[0],
        len(_SMOOTHING) // 2,
    )
    for counts in (row["log_parent_blocks"], row["log_same_tag_siblings"]):
        np.log(by_feature[counts], out=by_feature[counts])
    by_feature[row["page_log_chars"]] = np.log1p(page_chars)
    by_feature[row["page_log_blocks"]] = np.log(len(elements))
    return parent, grandparent


def _columns(
    doc: Document, heuristic: Extraction, features: ElementFeatures, elements: np.ndarray, codes: TagCodes
) -> dict[str, Column]:
    t = doc.tokens
    n_elements = len(doc.elements)
    n_blocks = len(elements)
    first, last = doc.body
    body_tokens = max(1, last - first + 1)
    chars = features.chars[elements]
    words = features.words[elements]
    anchor = features.anchor_chars[elements]
    page_chars = float(features.chars.sum()) or 1.0
    subtree_chars = doc.subtree_chars.astype(np.float64)
    subtree_anchor = doc.subtree_anchor_chars.astype(np.float64)
    start, end = doc.start[elements], doc.end[elements]
    own_subtree_chars = subtree_chars[elements]

    # Tags per span (CETR's tag ratio) from prefix sums over the token kinds.
    tag_csum = np.concatenate((np.zeros(1, dtype=np.int64), np.cumsum(t.kind != TEXT)))
    tags_in_span = (tag_csum[end + 1] - tag_csum[start]).astype(np.float64)

    # Character classes of the own text, per block.
    text_tokens, owner = features.text_tokens, features.text_owner  # read once by the heuristic
    block_of_element = np.full(n_elements, -1, dtype=np.int64)
    block_of_element[elements] = np.arange(n_blocks)
    owner_block = block_of_element[owner]
    owned = owner_block >= 0
    punct, digit, upper = _character_counts(doc, text_tokens[owned], owner_block[owned], n_blocks)
    # For speed: the four shares of the block's own characters in one division.
    link_density, punct_share, digit_share, upper_share = _ratio(
        np.stack((anchor, punct, digit, upper)), chars
    )

    # The heuristic's answer: its scores, its selection and its article root.
    score_of, chosen_of = block_columns(heuristic.blocks, n_elements)
    score = score_of[elements]
    selected = chosen_of[elements].astype(np.float64)
    root = _article_root(heuristic)
    if root >= 0:
        in_root = ((start >= doc.start[root]) & (end <= doc.end[root])).astype(np.float64)
        root_span = max(1, int(doc.end[root] - doc.start[root]))
        # np.minimum(np.maximum(...)): np.clip's values (no NaN or signed zero here), without its overhead
        position_in_root = np.minimum(np.maximum((start - doc.start[root]) / root_span, -1.0), 2.0)
        root_share = float(subtree_chars[root]) / page_chars
    else:
        in_root = np.zeros(n_blocks)
        position_in_root = np.full(n_blocks, -1.0)
        root_share = 0.0

    # Tags as small integer codes (`tag_codes`, shared with the structure and page-type features).
    tag_code = codes.tag_id
    own_code = tag_code[elements]
    container_of_code = np.array([_CONTAINER_INDEX.get(name, -1) for name in codes.names], dtype=np.int64)
    group_of_code = np.array([_OWN_TAG_GROUP.get(name, -1) for name in codes.names], dtype=np.int64)

    # Containers around each block, strictly around: a block's own tag does not count (its
    # one-hot says that), so the range of a container is the tokens after its start tag to its end.
    # For speed, two more kinds of range are counted in the same pass: every element's, the same
    # way (the block's depth: how many elements hold its start tag, their own start tag excluded),
    # and each Readability.js unlikely candidate's, its start tag included (`unlikely`: the block is
    # inside one or is one).
    container_kind = container_of_code[tag_code]
    around = np.flatnonzero(container_kind >= 0)
    unlikely = np.flatnonzero(features.unlikely)
    depth_kind, unlikely_kind = len(CONTAINERS), len(CONTAINERS) + 1
    counted = _containing(
        np.concatenate(
            (container_kind[around], np.full(n_elements, depth_kind), np.full(len(unlikely), unlikely_kind))
        ),
        np.concatenate((doc.start[around] + 1, doc.start + 1, doc.start[unlikely])),
        np.concatenate((doc.end[around], doc.end, doc.end[unlikely])),
        len(CONTAINERS) + 2,
        start,
    )
    in_container = (counted[: len(CONTAINERS)] > 0).astype(np.float64)  # one row per container
    depth = counted[depth_kind].astype(np.float64)
    in_unlikely = (counted[unlikely_kind] > 0).astype(np.float64)
    own_group = group_of_code[own_code]
    is_group = (own_group[None, :] == np.arange(len(OWN_TAGS))[:, None]).astype(np.float64)

    # Parents, grandparents and siblings.
    parent = doc.parent[elements].astype(np.int64)
    grandparent = np.where(parent >= 0, doc.parent[np.maximum(parent, 0)], -1).astype(np.int64)

    def of(values: np.ndarray, index: np.ndarray) -> np.ndarray:
        return np.where(index >= 0, values[np.maximum(index, 0)], 0.0)

    parent_chars, grandparent_chars = of(subtree_chars, parent), of(subtree_chars, grandparent)

    log_chars = np.log1p(chars)
    # For speed: parent + 1 numbers the groups as well as np.unique's inverse did, without a sort
    # (np.bincount adds a group's weights in input order either way: the same sums).
    parent_key = parent + 1
    parent_blocks = np.bincount(parent_key)[parent_key].astype(np.float64)
    parent_mean = np.bincount(parent_key, weights=log_chars)[parent_key] / parent_blocks
    pair = parent_key * len(codes.names) + own_code
    if native is not None:  # the same counts in C (`_native.key_counts`: a hash table, no sort)
        same_tag = np.frombuffer(native.key_counts(pair.astype(np.int64)), dtype=np.float64)
    else:
        pair_key = np.unique(pair, return_inverse=True)[1]
        same_tag = np.bincount(pair_key)[pair_key].astype(np.float64)

    scaled = signed_log(score)
    # a block without a previous or next one reads 0 there, or 1 for the link density
    before, after = _previous_next(
        np.stack((scaled, link_density, selected, log_chars)), (0.0, 1.0, 0.0, 0.0)
    )
    kernel = np.ones(5) / 5
    smoothed = np.convolve(_pad_edge(selected, 2), kernel, mode="valid")
    page_anchor = float(features.anchor_chars.sum())
    selected_chars = float(chars[selected > 0].sum())
    return {
        "log_chars": log_chars,
        "log_words": np.log1p(words),
        "link_density": link_density,
        "log_subtree_chars": np.log1p(own_subtree_chars),
        "tag_ratio": np.log1p(own_subtree_chars / np.maximum(tags_in_span, 1.0)),
        "text_density": words / np.maximum(np.ceil(chars * 1.2 / WRAP_WIDTH), 1.0),
        "heuristic_score": scaled,
        "heuristic_context": signed_log(features.context[elements]),
        "heuristic_own_tag": features.own[elements],
        "unlikely": in_unlikely,
        "heuristic_selected": selected,
        "in_heuristic_root": in_root,
        "depth": depth,
        "position": (start - first) / body_tokens,
        "punctuation_share": punct_share,
        "digit_share": digit_share,
        "upper_share": upper_share,
        "chars_share": chars / page_chars,
        **dict(zip(_TAG_COLUMNS, is_group, strict=True)),
        **dict(zip(_IN_COLUMNS, in_container, strict=True)),
        "parent_link_density": _ratio(of(subtree_anchor, parent), parent_chars),
        "grandparent_link_density": _ratio(of(subtree_anchor, grandparent), grandparent_chars),
        "parent_chars_share": parent_chars / page_chars,
        "grandparent_chars_share": grandparent_chars / page_chars,
        "log_parent_blocks": np.log(parent_blocks),
        "parent_mean_log_chars": parent_mean,
        "log_same_tag_siblings": np.log(same_tag),
        "prev_score": before[0],
        "next_score": after[0],
        "prev_link_density": before[1],
        "next_link_density": after[1],
        "prev_selected": before[2],
        "next_selected": after[2],
        "selected_smoothed": smoothed,
        "log_prev_chars": before[3],
        "log_next_chars": after[3],
        "page_log_chars": np.log1p(page_chars),
        "page_link_density": page_anchor / page_chars,
        "page_log_blocks": np.log(n_blocks),
        "page_selected_share": selected_chars / page_chars,
        "root_chars_share": root_share,
        "position_in_root": position_in_root,
    }


def _element_counts(starts: np.ndarray, doc: Document, index: np.ndarray) -> np.ndarray:
    """Per entry of `index` (element, -1 = none): how many elements starting at `starts` (sorted token
    positions) lie strictly inside it."""
    if native is not None:  # the same counts in C (`_native.element_counts`: two binary searches)
        counted = native.element_counts(
            np.ascontiguousarray(starts, dtype=np.int64),  # no copy when it is one already
            np.ascontiguousarray(doc.start, dtype=np.int32),
            np.ascontiguousarray(doc.end, dtype=np.int32),
            np.ascontiguousarray(index, dtype=np.int64),
        )
        return np.frombuffer(counted, dtype=np.float64)
    safe = np.maximum(index, 0)
    inside = np.searchsorted(starts, doc.end[safe], "right") - np.searchsorted(
        starts, doc.start[safe], "right"
    )
    return np.where(index >= 0, inside, 0).astype(np.float64)


@dataclass(frozen=True, slots=True)
class RepeatedItems:
    """Each block's repeated item (see `structure_columns`): how many same-tag siblings it has, the
    item element, how many levels above the block it is, and its index among its siblings."""

    count: np.ndarray  # float64 per block: same-tag siblings of the item, itself included (>= 1)
    item: np.ndarray  # int64 per block: the item element (the block itself when nothing repeats)
    level: np.ndarray  # float64 per block: 0 = the block itself
    index: np.ndarray  # float64 per block: the item's index among its same-tag siblings


@dataclass(frozen=True, slots=True)
class TagCodes:
    """The page's tags as small integer codes (its distinct tag names, numbered in order of
    appearance), computed once per page for all the block features that read tags."""

    names: list[str]
    ids: dict[str, int]
    tag_id: np.ndarray  # int64 per element
    # For speed: `starts` per group of tag names, kept (the structure, page-type and section
    # features ask for the same groups; `page_blocks` asks for all of them in one pass first).
    _starts: dict[frozenset[str], np.ndarray] = field(default_factory=dict, repr=False, compare=False)

    def count(self, name: str) -> int:
        """How many elements have this tag."""
        code = self.ids.get(name)
        return 0 if code is None else int(np.count_nonzero(self.tag_id == code))

    def starts(self, doc: Document, *groups: tuple[str, ...] | frozenset[str]) -> list[np.ndarray]:
        """Per group of tag names, the start tokens of its elements (sorted: elements are in
        document order)."""
        keys = [frozenset(group) for group in groups]
        start_of: np.ndarray | None = None
        for key in keys:
            if key not in self._starts:
                start_of = doc.start.astype(np.int64) if start_of is None else start_of
                member = np.zeros(len(self.names), dtype=bool)
                member[[self.ids[name] for name in key if name in self.ids]] = True
                self._starts[key] = start_of[member[self.tag_id]]
        return [self._starts[key] for key in keys]


def tag_codes(doc: Document, features: ElementFeatures | None = None) -> TagCodes:
    """The page's `TagCodes` (`heuristic.tag_ids`), taken from its element features when given."""
    names, tag_id = (features.tag_names, features.tag_id) if features is not None else tag_ids(doc.tag)
    return TagCodes(names, dict(zip(names, range(len(names)), strict=True)), tag_id)


def repeated_items(doc: Document, elements: np.ndarray, codes: TagCodes | None = None) -> RepeatedItems:
    """The repeated item of every block: the ancestor (up to `REPEAT_LEVELS` up, the block itself
    first) with the most same-tag siblings, the first such one when several tie."""
    codes = codes or tag_codes(doc)
    if native is not None:  # the same in C (`_native.repeated_items`: a hash table of (parent, tag) groups)
        count, item, level, index = native.repeated_items(
            np.ascontiguousarray(doc.parent, dtype=np.int32),
            codes.tag_id.astype(np.int64),
            max(len(codes.names), 1),
            elements.astype(np.int64),
            REPEAT_LEVELS,
        )
        return RepeatedItems(
            np.frombuffer(count, dtype=np.float64),
            np.frombuffer(item, dtype=np.int64),
            np.frombuffer(level, dtype=np.float64),
            np.frombuffer(index, dtype=np.float64),
        )
    n_elements = len(doc.tag)
    ids, tag_id = codes.ids, codes.tag_id
    parent = doc.parent.astype(np.int64)
    # Groups of same-tag siblings: one stable sort by (parent, tag) keeps document order within a group.
    sibling_key = (parent + 1) * len(ids) + tag_id
    sort = np.argsort(sibling_key, kind="stable")
    ordered = sibling_key[sort]
    group_of_sorted = np.cumsum(np.concatenate(([True], ordered[1:] != ordered[:-1]))) - 1
    group_size = np.bincount(group_of_sorted)
    repeat = np.empty(n_elements, dtype=np.float64)
    repeat[sort] = group_size[group_of_sorted]
    order = np.empty(n_elements, dtype=np.float64)  # index of each element among its same-tag siblings
    first_of_group = np.concatenate(([0], np.cumsum(group_size)[:-1]))
    order[sort] = np.arange(n_elements) - first_of_group[group_of_sorted]

    # Walk up: level 0 is the block; its item is the first ancestor with the most same-tag siblings
    # (the block itself when none has more than one). Index n_elements stands for "no ancestor".
    up = np.append(parent, n_elements)
    up[up < 0] = n_elements
    chain = np.empty((REPEAT_LEVELS, len(elements)), dtype=np.int64)
    chain[0] = elements
    for step in range(1, REPEAT_LEVELS):
        chain[step] = up[chain[step - 1]]
    counts = np.append(repeat, 0.0)[chain]
    counts[0] = np.maximum(counts[0], 1.0)
    level_of = counts.argmax(axis=0)
    columns = np.arange(len(elements))
    item = chain[level_of, columns]
    return RepeatedItems(counts[level_of, columns], item, level_of.astype(np.float64), order[item])


def _title_overlap(
    doc: Document, elements: np.ndarray, codes: TagCodes, found: np.ndarray | None = None
) -> np.ndarray:
    """Per block, the share of a heading's words found in the page title (the headline repeats it;
    section titles do not); 0 for a block that is no heading. `found`: the heading blocks (indices
    into `elements`), when known."""
    ids = codes.ids
    title_words = set(doc.title.lower().split())
    text = doc.tokens.text
    title_overlap = np.zeros(len(elements))
    if title_words:
        if found is None:
            heading_ids = [ids[name] for name in HEADING_TAGS if name in ids]
            # A lookup by tag code (np.isin's overhead is larger).
            is_heading = np.zeros(len(codes.names), dtype=bool)
            is_heading[heading_ids] = True
            found = np.flatnonzero(is_heading[codes.tag_id[elements]])
        # For speed: the headings' token ranges as Python ints, read once (not a numpy scalar each).
        titled = elements[found]
        ranges = zip(found.tolist(), doc.start[titled].tolist(), doc.end[titled].tolist(), strict=True)
        for i, first_token, last_token in ranges:
            # the heading's text (as doc.element_text, without its regex)
            words = "".join(text[first_token : last_token + 1]).lower().split()
            if words:
                title_overlap[i] = sum(map(title_words.__contains__, words)) / len(words)
    return title_overlap


def structure_columns(
    doc: Document,
    heuristic: Extraction,
    elements: np.ndarray,
    depth: np.ndarray,
    items: RepeatedItems | None = None,
    codes: TagCodes | None = None,
) -> dict[str, np.ndarray]:
    """`STRUCTURE_FEATURES`: repeated sibling structure, chrome and headings around a block, its place
    relative to the first h1 and the heuristic's root, and a heading's overlap with the page title.

    A *repeated item* is an element whose parent has other children of the same tag: the posts of a
    thread, the teasers of a list, the cards of a catalogue (Zhai, Liu 2005, DEPTA §3: data records are
    sibling subtrees of one shape; here the shape is only the tag). For each block the ancestor (up to
    `REPEAT_LEVELS` up) with the most same-tag siblings is its item (`repeated_items`); the item's size,
    link density, the share of the page its group covers and its index in the group describe it.
    """
    tags = doc.tag
    n_elements = len(tags)
    codes = codes or tag_codes(doc)
    ids = codes.ids
    parent = doc.parent.astype(np.int64)
    if items is None:
        items = repeated_items(doc, elements, codes)
    best, item, level = items.count, items.item, items.level
    subtree_chars = doc.subtree_chars.astype(np.float64)
    subtree_anchor = doc.subtree_anchor_chars.astype(np.float64)
    page_chars = float(subtree_chars[parent < 0].sum()) or 1.0
    item_parent = parent[item]
    group_chars = np.where(item_parent >= 0, subtree_chars[np.maximum(item_parent, 0)], subtree_chars[item])

    # Elements of a kind inside a block's ancestors (sorted start positions, binary search per block).
    start_of = doc.start.astype(np.int64)
    control, heading, image, time = codes.starts(doc, *_KINDS)
    grandparent = parent[np.maximum(parent[elements], 0)]
    grandparent = np.where(parent[elements] >= 0, grandparent, -1)
    ancestor4 = grandparent
    for _ in range(2):
        ancestor4 = np.where(ancestor4 >= 0, parent[np.maximum(ancestor4, 0)], -1)
    ancestor4 = np.where(ancestor4 >= 0, ancestor4, grandparent)

    # Position after the first h1 (headline), in body tokens.
    first, last = doc.body
    body_tokens = max(1, last - first + 1)
    block_start = start_of[elements]
    h1 = ids.get("h1")
    if h1 is not None:
        from_h1 = (block_start - int(doc.start[tags.index("h1")])) / body_tokens
    else:
        from_h1 = np.full(len(elements), -2.0)

    title_overlap = _title_overlap(doc, elements, codes)

    root = _article_root(heuristic)
    root_depth = 0
    ancestor = root
    while ancestor >= 0 and root_depth < n_elements:  # bounded by the tree's depth
        ancestor = int(parent[ancestor])
        root_depth += ancestor >= 0
    below_root = depth - root_depth if root >= 0 else np.full(len(elements), -1.0)
    return {
        "log_repeat": np.log(best),
        "repeat_level": level,
        "repeat_item_log_chars": np.log1p(subtree_chars[item]),
        "repeat_item_link_density": _ratio(subtree_anchor[item], subtree_chars[item]),
        "repeat_group_chars_share": group_chars / page_chars,
        "repeat_item_index": np.log1p(items.index),
        "log_controls_grandparent": np.log1p(_element_counts(control, doc, grandparent)),
        "log_controls_ancestor4": np.log1p(_element_counts(control, doc, ancestor4)),
        "log_headings_grandparent": np.log1p(_element_counts(heading, doc, grandparent)),
        "log_images_grandparent": np.log1p(_element_counts(image, doc, grandparent)),
        "log_time_grandparent": np.log1p(_element_counts(time, doc, grandparent)),
        "position_from_h1": from_h1,
        "title_overlap": title_overlap,
        "depth_below_root": below_root,
    }


#: JSON-LD `@type` values (schema.org) by page kind: what a page says it is, in any page's markup.
LD_KINDS = BLOCK_KIND_TYPES
#: A type name the page-type features count: letters only, after any vocabulary prefix ending in
#: "/", "#" or ":" (so "Web Page" or "Product/" count as no type, as the model was trained).
_LD_NAME = re.compile(r"(?:.*[/#:])?([A-Za-z]+)", re.DOTALL)
#: A heading that opens the readers' comments ("12 Comments", "Leave a Reply", "Kommentare"...).
COMMENT_HEADING = re.compile(
    r"\b(comments?|responses?|replies|reactions|leave a reply|join the (?:conversation|discussion)|"
    r"kommentare?|commentaires?|comentarios?|commenti|reacties|komentarze?|коммента\w*)\b",
    re.IGNORECASE,
)
#: Headings longer than this (words) are not a comment section's title.
COMMENT_HEADING_WORDS = 8
_IMAGE_TAGS = ("img", "picture", "svg")
#: JSON-LD properties that hold a page's own text: an article's body, a product's or page's
#: description, a post's or answer's text.
LD_TEXT_KEYS = frozenset(("articleBody", "description", "text"))
#: Deepest nesting of JSON-LD objects whose `LD_TEXT_KEYS` are read (`schema.walk`'s depth).
LD_TEXT_DEPTH = 20
#: Below this many words the JSON-LD text is a summary, not a body to compare blocks with.
LD_BODY_MIN_WORDS = 50
#: Text pieces (between tags) of fewer words are not looked up in the JSON-LD text.
LD_PIECE_MIN_WORDS = 3
_WORD = re.compile(r"\w+")


def json_ld_types(doc: Document) -> set[str]:
    """Lower-case schema.org type names of every `@type` in the page's JSON-LD (no JSON parsing:
    `schema.text_types`, so broken JSON-LD still says what the page is), those of `_LD_NAME`'s form."""
    return {
        found[1].lower()
        for raw in doc.json_ld
        for name in text_types(raw)
        if (found := _LD_NAME.fullmatch(name)) is not None
    }


def json_ld_text(doc: Document) -> str:
    """The page's own text as its JSON-LD gives it (`LD_TEXT_KEYS` anywhere in the objects), as
    lower-case words joined by single spaces; "" when it has fewer than `LD_BODY_MIN_WORDS` words.
    The strings are read as the scripts hold them, character references undecoded ("&quot;" gives
    the word "quot"), as the shipped model was trained: decoded (`schema.ld_text`) without
    retraining, 6 pages of the shared sets moved (a forum thread's page lost its
    replies, shingle F1 0.78 -> 0.47, wcxb-dev -0.0003 out of fold, ScrapingHub +0.0001)."""
    found = [
        value
        for index, raw in enumerate(doc.json_ld)
        if any(f'"{key}"' in raw for key in LD_TEXT_KEYS)
        for parsed in script_values(doc, index)
        for key, value in walk(parsed, max_depth=LD_TEXT_DEPTH, members=True)
        if key in LD_TEXT_KEYS and isinstance(value, str)
    ]
    words = _WORD.findall(" ".join(found).lower())
    return " ".join(words) if len(words) >= LD_BODY_MIN_WORDS else ""


def ld_body_share(doc: Document, elements: np.ndarray, holder: np.ndarray, body: str) -> np.ndarray:
    """Per block, the share of its own text (in pieces of at least `LD_PIECE_MIN_WORDS` words, the
    text between two tags) found word for word in the JSON-LD text `body`; 0 when it has no such
    piece, -1 for every block when the page has no JSON-LD text."""
    if not body:
        return np.full(len(elements), -1.0)
    t = doc.tokens
    first, last = doc.body
    block_of_element = np.full(len(doc.elements), -1, dtype=np.int64)
    block_of_element[elements] = np.arange(len(elements))
    span = np.arange(first, last + 1)
    pieces = span[(t.kind[span] == TEXT) & (t.chars[span] >= 4 * LD_PIECE_MIN_WORDS) & (t.element[span] >= 0)]
    block = block_of_element[holder[t.element[pieces]]]
    pieces, block = pieces[block >= 0], block[block >= 0]
    padded = f" {body} "
    checked = np.zeros(len(elements))
    found = np.zeros(len(elements))
    for token, b in zip(pieces.tolist(), block.tolist(), strict=True):
        words = _WORD.findall(t.text[token].lower())
        if len(words) < LD_PIECE_MIN_WORDS:
            continue
        size = float(t.chars[token])
        checked[b] += size
        if f" {' '.join(words)} " in padded:
            found[b] += size
    return _ratio(found, checked)


def section_titles(doc: Document, headings: np.ndarray) -> list[tuple[int, str]]:
    """(first token, text) of every heading short enough to title a section: at most
    `COMMENT_HEADING_WORDS` words. For speed, headings of more tokens than a section title has are
    not read at all. What `page_type_columns` and `section_columns` look for comment and related
    headings among (read once per page by `page_blocks`)."""
    if len(headings) == 0:
        return []
    text = doc.tokens.text
    heading_end = doc.end[doc.tokens.element[headings]].astype(np.int64)
    titles: list[tuple[int, str]] = []
    for start, end in zip(headings.tolist(), heading_end.tolist(), strict=True):
        if end - start > 4 * COMMENT_HEADING_WORDS:
            continue
        raw = "".join(text[start : end + 1])
        if len(raw.split()) <= COMMENT_HEADING_WORDS:
            titles.append((start, raw))
    return titles


def page_type_columns(
    doc: Document,
    elements: np.ndarray,
    columns: dict[str, Column],
    items: RepeatedItems,
    holder: np.ndarray,
    codes: TagCodes | None = None,
    titles: list[tuple[int, str]] | None = None,
    item_counts: bool = True,
) -> dict[str, Column]:
    """`PAGE_TYPE_FEATURES`: what kind of page this is, for every block (so the trees can learn that
    content on a product page is not content on an article), a comment section's heading before the
    block, and what the block's repeated item holds (teasers: a heading link and an image; comments:
    a time and a reply control).

    The page's kind comes from signals any page may carry: JSON-LD `@type`, OpenGraph's `og:type`,
    how many h1s, forms, form controls and `<time>` elements it has, and the share of its text in
    repeated items (`repeated_items` above the block, with at least three siblings). Where the
    JSON-LD carries the page's text (an `articleBody`, a long `description`), each block's share
    found in it (`ld_body_share`): teasers and comments around an article are not in its body.
    Without `item_counts`, the `item_log_*` columns are left out (`_place_structure` wrote them).
    """
    n_blocks = len(elements)
    codes = codes or tag_codes(doc)
    headings, images, times, controls, links = codes.starts(
        doc, HEADING_TAGS, _IMAGE_TAGS, ("time",), CONTROL_TAGS, ("a",)
    )
    types = json_ld_types(doc)
    og = next((attrs for attrs in doc.meta if attrs.get("property") == "og:type"), None)
    og_type = ((og.get("content") or "") if og is not None else "").strip().lower()
    chars = np.expm1(columns["log_chars"])
    repeat_share = float(chars[(items.count >= 3) & (items.level >= 1)].sum() / max(chars.sum(), 1.0))
    ld_body = json_ld_text(doc)

    # The first heading that opens a comment section, and which blocks come after it.
    first, last = doc.body
    body_tokens = max(1, last - first + 1)
    block_start = doc.start[elements].astype(np.int64)
    titles = section_titles(doc, headings) if titles is None else titles
    opened = next((start for start, raw in titles if COMMENT_HEADING.search(raw)), -1)
    after = (block_start > opened).astype(np.float64) if opened >= 0 else np.zeros(n_blocks)
    position = (opened - first) / body_tokens if opened >= 0 else -1.0

    def in_item(starts: np.ndarray) -> np.ndarray:
        return np.log1p(_element_counts(starts, doc, items.item))

    # For speed: the page's counts through one np.log1p (the same function on each number).
    page_counts = np.log1p(
        np.array(
            [codes.count("h1"), codes.count("form"), len(controls), len(times), len(ld_body)],
            dtype=np.float64,
        )
    )
    held: dict[str, Column] = {}
    if item_counts:
        held = {
            "item_log_headings": in_item(headings),
            "item_log_images": in_item(images),
            "item_log_times": in_item(times),
            "item_log_controls": in_item(controls),
            "item_log_links": in_item(links),
        }
    return {
        **{name: float(bool(types & kinds)) for name, kinds in LD_KINDS.items()},
        "og_article": float(og_type == "article"),
        "og_product": float("product" in og_type),
        "page_log_h1": page_counts[0],
        "page_log_forms": page_counts[1],
        "page_log_controls": page_counts[2],
        "page_log_times": page_counts[3],
        "page_repeat_share": repeat_share,
        "after_comment_heading": after,
        "comment_heading_position": position,
        **held,
        "ld_body_log_chars": page_counts[4],
        "ld_body_share": ld_body_share(doc, elements, holder, ld_body),
    }


#: The tag groups `_native.structure_columns` counts (bit g of a tag's group bits), in its order.
_COUNTED_GROUPS = (
    CONTROL_TAGS,
    HEADING_TAGS,
    frozenset(_IMAGE_TAGS),
    frozenset(("time",)),
    frozenset(("a",)),
)
_GROUP_BITS = {name: 1 << g for g, group in enumerate(_COUNTED_GROUPS) for name in group}  # disjoint groups
#: The columns `_native.structure_columns` writes, in its order (a logarithm's argument where one is taken).
_STRUCTURE_KERNEL_COLUMNS = (
    *(name for name in STRUCTURE_FEATURES if name != "title_overlap"),  # the title overlap stays in Python
    *PAGE_TYPE_FEATURES[
        PAGE_TYPE_FEATURES.index("item_log_headings") : PAGE_TYPE_FEATURES.index("item_log_links") + 1
    ],
)
#: Per tag name, packed in one int64 as the C kernels read it: its container kind (`CONTAINERS`) + 1
#: in bits 0-7, its own-tag group (`OWN_TAGS`) + 1 in bits 8-15, its counted groups' bits from bit 16.
_TAG_INFO = {
    name: (_CONTAINER_INDEX.get(name, -1) + 1)
    | (_OWN_TAG_GROUP.get(name, -1) + 1) << 8
    | _GROUP_BITS.get(name, 0) << 16
    for name in {*_CONTAINER_INDEX, *_OWN_TAG_GROUP, *_GROUP_BITS}
}
assert len(CONTAINERS) < 255 and len(OWN_TAGS) < 255


def _code_table(codes: TagCodes) -> np.ndarray:
    """int64 per tag code: its `_TAG_INFO` (0 for a tag that is in no container, group or counted
    group). For speed, one flat list of ints (numpy reads it at a tenth of the cost of tuples)."""
    return np.array([_TAG_INFO.get(name, 0) for name in codes.names], dtype=np.int64)


_STRUCTURE_KERNEL_ROWS = np.array([_ROW[name] for name in _STRUCTURE_KERNEL_COLUMNS], dtype=np.int64)
# The rows `_place_structure` takes log1p of in one call must be neighbours in FEATURES.
assert _ROW["log_time_grandparent"] - _ROW["repeat_item_index"] == 5
assert _ROW["item_log_links"] - _ROW["item_log_headings"] == 4


def _place_structure(
    doc: Document,
    heuristic: Extraction,
    elements: np.ndarray,
    items: RepeatedItems,
    codes: TagCodes,
    by_feature: np.ndarray,
    code_table: np.ndarray,
) -> bool:
    """`structure_columns` and the `item_log_*` columns of `page_type_columns`, written straight into
    the rows of `by_feature` (features x blocks, its depth row already written) by the C kernel
    `_native.structure_columns`, and its tag groups' starts kept in `codes`; False when the kernel
    declines (the caller then runs the numpy code).

    For speed, as `_place_columns`: one pass in C instead of about 50 numpy calls, with the same
    numbers (counts, one division each, and numpy's logarithms on whole rows)."""
    assert native is not None
    root = _article_root(heuristic)
    first, last = doc.body
    starts = native.structure_columns(
        by_feature,
        _STRUCTURE_KERNEL_ROWS,
        elements.astype(np.int64),
        doc.parent,
        doc.start,
        doc.end,
        doc.subtree_chars,
        doc.subtree_anchor_chars,
        codes.tag_id,
        code_table,
        items.count,
        items.item,
        items.level,
        items.index,
        by_feature[_ROW["depth"]],
        codes.ids.get("h1", -1),
        root,
        first,
        max(1, last - first + 1),
    )
    if starts is None:
        return False
    for group, found in zip(_COUNTED_GROUPS, starts[:-1], strict=True):
        codes._starts.setdefault(group, np.frombuffer(found, dtype=np.int64))  # what codes.starts finds
    headings = np.frombuffer(starts[-1], dtype=np.int64)
    row = _ROW
    np.log(by_feature[row["log_repeat"]], out=by_feature[row["log_repeat"]])
    np.log1p(by_feature[row["repeat_item_log_chars"]], out=by_feature[row["repeat_item_log_chars"]])
    for logs in (
        slice(row["repeat_item_index"], row["log_time_grandparent"] + 1),
        slice(row["item_log_headings"], row["item_log_links"] + 1),
    ):
        np.log1p(by_feature[logs], out=by_feature[logs])
    by_feature[row["title_overlap"]] = _title_overlap(doc, elements, codes, headings)
    return True


#: A heading that opens a list of other pages: related or recommended articles, "more from" lists,
#: most-read boxes, a shop's "also viewed" carousels (English and a few other languages).
RELATED_HEADING = re.compile(
    r"^\W*more\b|\b(?:related|recommended|recommendations?|popular|trending|most (?:read|viewed|watched|"
    r"shared|commented)|more (?:from|in|on|stories|articles|news|like this|to explore|videos|posts)|"
    r"you (?:may|might|could) (?:also )?(?:like|enjoy|be interested)|read (?:next|also)|also (?:read|viewed|"
    r"bought|like)|latest (?:news|stories|articles|posts|videos)|top stories|don.t miss|must (?:watch|read)|"
    r"sponsored|similar (?:items|products|articles|posts|stories)|further reading|recent posts|editors.? picks|"
    r"lesen sie auch|mehr zum thema|à lire aussi|lire aussi|sur le même sujet|leia também|você pode gostar|"
    r"te puede interesar|relacionad[oa]s|potrebbe interessarti|correlati|gerelateerd|czytaj także)\b",
    re.IGNORECASE,
)


def _nearest_before(marks: np.ndarray, position: np.ndarray) -> np.ndarray:
    """Per position, the index into `marks` (sorted token positions) of the last mark at or before it;
    -1 where there is none."""
    return np.searchsorted(marks, position, side="right") - 1


def section_columns(
    doc: Document,
    elements: np.ndarray,
    codes: TagCodes | None = None,
    titles: list[tuple[int, str]] | None = None,
) -> dict[str, np.ndarray]:
    """`SECTION_FEATURES`: where a block stands after the nearest heading (h1-h6 of at most
    `COMMENT_HEADING_WORDS` words) that opens a list of other pages (`RELATED_HEADING`) or the
    comments (`COMMENT_HEADING`): whether one comes before the block after the page's first h1 (a
    "Trending" bar above the headline says nothing of the article below it), and how much text and
    how many headings lie between that heading and the block. Teasers and comments follow such a
    heading closely; an article's paragraphs after a navigation box's "Most popular" are far from it.
    The comment feature of `page_type_columns` reads only the first comment heading of the page.
    """
    n_blocks = len(elements)
    codes = codes or tag_codes(doc)
    (headings,) = codes.starts(doc, HEADING_TAGS)
    t = doc.tokens
    related: list[int] = []
    comment: list[int] = []
    for start, raw in section_titles(doc, headings) if titles is None else titles:
        if len(raw) > 12 * COMMENT_HEADING_WORDS:
            continue
        if RELATED_HEADING.search(raw):
            related.append(start)
        elif COMMENT_HEADING.search(raw):
            comment.append(start)
    block_start = doc.start[elements].astype(np.int64)
    if not related and not comment:
        none = np.full(n_blocks, -1.0)
        return {
            "after_related_heading": np.zeros(n_blocks),
            "log_chars_since_related": none,
            "log_chars_since_comment": none,
            "log_headings_since_related": none,
        }
    # Text characters before each token position (prefix sums over the token view).
    chars_before = np.concatenate(([0], np.cumsum(np.where(t.kind == TEXT, t.chars, 0))))
    h1 = codes.ids.get("h1")
    first_h1 = int(doc.start[int(np.argmax(codes.tag_id == h1))]) if h1 is not None else -1

    def since(marks: list[int]) -> tuple[np.ndarray, np.ndarray]:
        if not marks:
            return np.full(n_blocks, -1.0), np.full(n_blocks, -1)
        at = np.array(marks, dtype=np.int64)
        nearest = _nearest_before(at, block_start)
        mark = at[np.maximum(nearest, 0)]
        chars = np.log1p(np.maximum(chars_before[block_start] - chars_before[mark], 0))
        return np.where(nearest >= 0, chars, -1.0), np.where(nearest >= 0, mark, -1)

    related_chars, related_mark = since(related)
    comment_chars, _ = since(comment)
    headings_between = np.searchsorted(headings, block_start, side="right") - np.searchsorted(
        headings, related_mark, side="right"
    )
    return {
        "after_related_heading": ((related_mark >= 0) & (related_mark > first_h1)).astype(np.float64),
        "log_chars_since_related": related_chars,
        "log_chars_since_comment": comment_chars,
        "log_headings_since_related": np.where(related_mark >= 0, np.log1p(headings_between), -1.0),
    }


#: Features of the second stage: the first stage's probability in the block's neighbourhood.
CONTEXT_FEATURES: tuple[str, ...] = (
    "p",
    "prev_p",
    "next_p",
    "window_mean_p",
    "window_max_p",
    "window_min_p",
    "parent_mean_p",
    "grandparent_mean_p",
    "page_mean_p",
    "page_max_p",
)
#: Blocks on each side in the window of the context features.
CONTEXT_RADIUS = 2


def _group_mean(values: np.ndarray, group: np.ndarray) -> np.ndarray:
    # For speed: element indices (-1: none) are their own keys after + 1, without np.unique's sort;
    # np.bincount adds each group's values in input order either way (the same sums).
    key = group + 1 if group.min() >= -1 else np.unique(group, return_inverse=True)[1]
    return np.bincount(key, weights=values)[key] / np.bincount(key)[key]


def context_features(
    probability: np.ndarray, chars: np.ndarray, parent: np.ndarray, grandparent: np.ndarray
) -> np.ndarray:
    """Stacked generalisation (Wolpert 1992): each block's first-stage probability beside those of its
    neighbours, siblings and page, so the second stage can smooth over runs of blocks and subtrees."""
    n = len(probability)
    if n == 0:
        return np.zeros((0, len(CONTEXT_FEATURES)))
    weight = chars + 1.0
    page_mean = float((probability * weight).sum() / weight.sum())
    if native is not None:  # for speed: every column in one C pass (`_native.context_columns`), same floats
        columns = native.context_columns(
            np.ascontiguousarray(probability, dtype=np.float64),
            np.ascontiguousarray(parent, dtype=np.int64),
            np.ascontiguousarray(grandparent, dtype=np.int64),
            page_mean,
            CONTEXT_RADIUS,
        )
        if columns is not None:
            return np.frombuffer(columns, dtype=np.float64).reshape(n, len(CONTEXT_FEATURES))
    padded = _pad_edge(probability, CONTEXT_RADIUS)
    # One row of the window per block (a small copy: cheaper to make than a strided view).
    window = np.empty((n, 2 * CONTEXT_RADIUS + 1))
    for k in range(2 * CONTEXT_RADIUS + 1):
        window[:, k] = padded[k : k + n]
    # For speed: the columns written into one array (what np.column_stack gives, without its
    # per-column reshaping); the previous and next block's probability are 0 at the ends.
    before, after = _previous_next(probability[None, :], (0.0,))
    out = np.empty((n, len(CONTEXT_FEATURES)))
    out[:, 0] = probability
    out[:, 1] = before[0]
    out[:, 2] = after[0]
    out[:, 3] = window.mean(axis=1)
    out[:, 4] = window.max(axis=1)
    out[:, 5] = window.min(axis=1)
    out[:, 6] = _group_mean(probability, parent)
    out[:, 7] = _group_mean(probability, grandparent)
    out[:, 8] = page_mean
    out[:, 9] = float(probability.max())
    return out
