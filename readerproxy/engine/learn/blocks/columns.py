"""The block's own features, the first rows of `FEATURES` (`_columns`).

The size of the block's own text and of its subtree; the link density of its own text and of its
parent's and grandparent's subtrees (DANAg, Filter 3); the tag/text ratio of its span (CETR,
Weninger, Hsu, Han 2010, §3); text density, words per 80-character wrapped line (Kohlschütter,
Frankhauser, Nejdl 2010, §4.2); the DOM heuristic's score, context, own-tag weight,
unlikely-candidate rule, selection and article root (Berg 2020, §5–6); the containers around the
block and its own tag; depth, position, punctuation, digit and upper-case shares; its siblings, the
neighbouring blocks and the page. `_columns` is the numpy reference; `_place_columns` writes the same
numbers straight into the feature matrix with the C kernels `_native.block_columns` and
`block_neighbours`.
"""

from __future__ import annotations

import numpy as np

from ...._speedups import native
from ...elements import ElementFeatures
from ...extraction import Extraction, block_columns
from ...parse.document import TEXT, Document
from ...parse.scan import code_points
from .features import (
    _IN_COLUMNS,
    _ROW,
    _TAG_COLUMNS,
    FEATURES,
    STRUCTURE_FEATURES,
    Column,
    _article_root,
    _ratio,
    signed_log,
)
from .tags import _CONTAINER_INDEX, _OWN_TAG_GROUP, CONTAINERS, OWN_TAGS, TagCodes

#: Characters counted as punctuation of running text.
PUNCTUATION = ".,;:!?\u3002\uff0c"
#: Wrap width of Kohlschütter et al.'s text density (2010, §4.2).
WRAP_WIDTH = 80

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
