"""`STRUCTURE_FEATURES` (`structure_columns`): repeated sibling structure, chrome and headings
around a block, its place after the first h1 and below the heuristic's root, and a heading's
overlap with the page title.

`repeated_items` finds each block's repeated item (Zhai, Liu 2005, DEPTA §3) and `_element_counts`
counts the elements of a kind inside an element; `_place_structure` writes these columns and
`page_type_columns`' item counts straight into the feature matrix with the C kernel
`_native.structure_columns`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...._speedups import native
from ...extraction import Extraction
from ...parse.document import Document
from .features import _ROW, PAGE_TYPE_FEATURES, STRUCTURE_FEATURES, _article_root, _ratio
from .tags import _COUNTED_GROUPS, CONTROL_TAGS, HEADING_TAGS, TagCodes, tag_codes

#: Kinds of elements counted inside a block's ancestors: controls, headings, images, times.
_KINDS = (CONTROL_TAGS, HEADING_TAGS, frozenset(("img", "picture", "svg")), frozenset(("time",)))
#: Ancestors (the block itself is level 0) searched for a repeated item (a post, teaser, product card).
REPEAT_LEVELS = 6


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


#: The columns `_native.structure_columns` writes, in its order (a logarithm's argument where one is taken).
_STRUCTURE_KERNEL_COLUMNS = (
    *(name for name in STRUCTURE_FEATURES if name != "title_overlap"),  # the title overlap stays in Python
    *PAGE_TYPE_FEATURES[
        PAGE_TYPE_FEATURES.index("item_log_headings") : PAGE_TYPE_FEATURES.index("item_log_links") + 1
    ],
)

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
