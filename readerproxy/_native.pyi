"""Types of the optional C kernels (`readerproxy/_native.c`), for mypy; the compiled module has none.

Every kernel takes its arguments by position only (METH_VARARGS). Arrays are passed as C-contiguous
buffers of the dtype the C source names (numpy arrays in practice); arrays come back as bytearrays
for `np.frombuffer`. The kernels that may decline return None (the caller then runs its numpy or
pure-Python reference): see the header of `_native.c` and `readerproxy._speedups`.
`tests/test_native_stub.py` checks that this file names exactly what the module exports.
"""

from typing import Any, TypeAlias

import numpy as np
from _typeshed import ReadableBuffer, WriteableBuffer

#: An array a kernel reads: a C-contiguous buffer of the dtype the C source names. numpy's stubs give
#: ndarray the buffer protocol's `__buffer__` only for Python 3.12 on, hence ndarray by name.
Array: TypeAlias = np.ndarray[Any, np.dtype[Any]] | ReadableBuffer
#: An array a kernel writes into (writable, C-contiguous).
OutArray: TypeAlias = np.ndarray[Any, np.dtype[Any]] | WriteableBuffer

#: SHA-256 of the `_native.c` the module was compiled from (`readerproxy._speedups` compares it).
SOURCE_HASH: str
#: 1 when `walk` can run (built with <dlfcn.h>), else 0 (`lexbor_setup` then answers False).
HAVE_WALK: int

#: What `scan` and `walk` give: the fields of `parse.scan.Scan` (kind int8, owner, length int32, the
#: texts, chars int32, in_anchor, newline_after bool, parent, start, end int32: bytearrays but the
#: texts), then per element its "id", "class" and "role" (None: none), the elements whose three
#: values must be read from the node, and the elements' tag names.
ScanFields: TypeAlias = tuple[
    bytearray,
    bytearray,
    bytearray,
    list[str],
    bytearray,
    bytearray,
    bytearray,
    bytearray,
    bytearray,
    bytearray,
    list[str | None],
    list[str | None],
    list[str | None],
    list[int],
    list[str],
]

# ---- parsing (readerproxy.engine.parse.document) ----------------------------------------------------

def scan(
    serialised: str, tags: list[str] | int, void_tags: frozenset[str] | set[str], /
) -> ScanFields | None:
    """`document._scan_fast` of a serialised tree: `tags` is the elements' tag names or their count."""

def walk(root: Any, n_elements: int, void_tags: frozenset[str] | set[str], /) -> ScanFields | None:
    """`scan`'s fields read from the Lexbor tree under `root` (a selectolax LexborNode)."""

def lexbor_setup(path: str, node_type: type, /) -> bool:
    """Find Lexbor's functions in selectolax's loaded module at `path`; whether `walk` can run."""

def tags_in_source(html: str, names: tuple[str, ...], /) -> list[str]:
    """The names (lower-case ASCII) that follow some "<" of `html`, case aside."""

def source_tags(html: str, names: tuple[str, ...], /) -> tuple[list[str], int]:
    """`tags_in_source(html, names)` and `html.count("<")`, in one pass."""

def hidden_candidates(root: Any, n_elements: int, /) -> tuple[list[int], list[int], list[int]] | None:
    """The indices among `root`'s elements (`tree.css("*")`) of `clean._HIDDEN_OR_SCREEN_READER`'s
    matches, each once, the index after each one's last descendant, and the indices of the elements
    with an `aria-controls` attribute; None: declined."""

def attributed_elements(
    root: Any, n_elements: int, first: int, names: tuple[str, ...], /
) -> dict[int, dict[str, str | None]] | None:
    """Of `root`'s elements (`tree.css("*")`) from index `first` on, those carrying an attribute
    named (exactly) one of `names`: {index: {name: value}} with those attributes only, values as
    `node.attributes` gives them; None: declined."""

def early_read(root: Any, /) -> tuple[str | None, list[str], int, list[str]] | None:
    """What `clean._BEFORE_CLEANING` gives `clean.read_before_cleaning` on the tree of `root`: the
    first title's text (None: none), the JSON-LD scripts' texts, whether a `<noscript>` is there
    (0 none, 1 some, none inside an element of `clean.REMOVED_TAGS`, 2 some, one inside such) and
    the texts of the stylesheets that hold "print"; None: declined."""

# ---- the learned model's trees (readerproxy.engine.learn.model) --------------------------------------

def tree_leaves(
    x: Array,
    feature: Array,
    threshold: Array,
    child: Array,
    value: Array,
    roots: Array,
    max_depth: int,
    /,
) -> bytearray:
    """The leaf value per (row, tree), float64, row-major."""

def complete_tree_leaves(
    x: Array,
    feature: Array,
    threshold: Array,
    value: Array,
    depth: int,
    /,
) -> bytearray:
    """The leaf value per (row, tree) of trees in the complete layout, float64, row-major."""

# ---- the heuristic extractor (readerproxy.engine.extractors.heuristic) -------------------------------

def inherit(
    parent: Array,
    is_holder: Array,
    semantic: Array,
    hints: Array,
    decay: float,
    /,
) -> tuple[bytearray, bytearray]:
    """`elements.inherit`: (holder int32, context float64) per element."""

def word_counts(texts: list[str], index: Array, /) -> bytearray:
    """`len(texts[i].split())` for each i of `index` (int64), float64."""

# ---- the block features (readerproxy.engine.learn.blocks) --------------------------------------------

def class_counts(texts: list[str], index: Array, block: Array, n_blocks: int, table: Array, /) -> bytearray:
    """Characters per (block, character class), float64."""

def containing(kind: Array, first: Array, last: Array, kinds: int, position: Array, /) -> bytearray | None:
    """The ranges of each kind holding each position (int64, kinds x positions), or None: declined."""

def element_counts(starts: Array, start: Array, end: Array, index: Array, /) -> bytearray:
    """The sorted `starts` strictly inside each indexed element, float64."""

def repeated_items(
    parent: Array, tag: Array, n_tags: int, elements: Array, levels: int, /
) -> tuple[bytearray, bytearray, bytearray, bytearray]:
    """`blocks.repeated_items`' four columns: count float64, item int64, level and index float64."""

def key_counts(keys: Array, /) -> bytearray:
    """The entries sharing each entry's key (int64 keys), float64."""

def block_columns(
    out: OutArray,
    rows: Array,
    n_groups: int,
    n_containers: int,
    elements: Array,
    start: Array,
    end: Array,
    parent: Array,
    kind: Array,
    subtree_chars: Array,
    subtree_anchor: Array,
    chars: Array,
    words: Array,
    anchor: Array,
    own: Array,
    context: Array,
    unlikely: Array,
    score: Array,
    chosen: Array,
    tag_id: Array,
    tag_info: Array,
    text_tokens: Array,
    text_owner: Array,
    table: Array,
    texts: list[str],
    root: int,
    first: int,
    body_tokens: float,
    wrap: float,
    /,
) -> tuple[bytearray, bytearray, float] | None:
    """`blocks._columns` written into the rows of `out`: (parent, grandparent int64, page_chars), or None."""

def block_neighbours(
    out: OutArray,
    sources: Array,
    previous: Array,
    next: Array,
    edge: Array,
    parent: Array,
    chars_row: int,
    blocks_row: int,
    mean_row: int,
    selected_row: int,
    smoothed_row: int,
    weight: float,
    radius: int,
    /,
) -> None:
    """The neighbours' rows, the parent's mean and the smoothed selection, written into `out`."""

def structure_columns(
    out: OutArray,
    rows: Array,
    elements: Array,
    parent: Array,
    start: Array,
    end: Array,
    subtree_chars: Array,
    subtree_anchor: Array,
    tag_id: Array,
    group_bits: Array,
    count: Array,
    item: Array,
    level: Array,
    index: Array,
    depth: Array,
    h1: int,
    root: int,
    first: int,
    body_tokens: float,
    /,
) -> tuple[bytearray, bytearray, bytearray, bytearray, bytearray, bytearray] | None:
    """`blocks.structure_columns` written into `out`: each group's starts and the heading blocks, or None."""

def context_columns(
    probability: Array,
    parent: Array,
    grandparent: Array,
    page_mean: float,
    radius: int,
    /,
) -> bytearray | None:
    """`blocks.context_features` (float64, 10 x blocks), or None: declined."""

# ---- the page kind (readerproxy.engine.kind) ---------------------------------------------------------

def word_buckets(
    text: str,
    start: int,
    buckets: OutArray,
    first: Array | None = None,
    last: Array | None = None,
    lower: bool = False,
    /,
) -> bool:
    """Mark each word's bucket (`pagewords._add_words`); False: declined (the buckets partly marked)."""

def count_parts(text: str, parts: list[str], /) -> list[int]:
    """`[text.count(part) for part in parts]`, in one pass."""

def count_prices(text: str, signs: str, codes: list[str], /) -> int:
    """`pagekind.count_prices` with these currency signs and codes, in one pass."""
