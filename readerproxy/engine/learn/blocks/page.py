"""A page's blocks and their feature matrix.

`page_blocks` finds the blocks (text holders that own visible text) and writes every family's
columns into one matrix, with the C kernels where they are built; `PageBlocks` holds the result and
`own_texts` reads the blocks' own text.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...._speedups import native
from ...elements import features_of
from ...extraction import Extraction
from ...parse.document import TEXT, Document
from .columns import _COLUMNS, _columns, _place_columns
from .features import _ROW, FEATURES, Column
from .page_type import page_type_columns
from .sections import section_columns, section_titles
from .structure import _STRUCTURE_KERNEL_COLUMNS, _place_structure, repeated_items, structure_columns
from .tags import HEADING_TAGS, _code_table, tag_codes


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
