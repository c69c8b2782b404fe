"""Which blocks of a page are content: the reference text labels them by word-shingle overlap.

A block's *overlap* is the share of its word 4-shingles (the ScrapingHub metric's unit) found among
the reference's; a block of fewer than four words counts as one shingle of all its words, found if
those words stand together in the reference. Whitespace, markup and the order of blocks do not
matter, and a block of navigation whose words happen to occur in the article ("Share", "Home")
only counts as content where its words stand in the same sequence there. A block is content when
its overlap reaches `CONTENT_OVERLAP`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ...engine.learn.blocks import PageBlocks, own_texts
from ...engine.parse.document import TEXT, Document
from ..metrics import SHINGLE_SIZE, tokenize

#: A block is content when at least this share of its shingles is in the reference.
CONTENT_OVERLAP = 0.5


@dataclass(frozen=True, slots=True)
class BlockLabels:
    """Per block: overlap with the reference (0..1), word tokens, and the binary label."""

    overlap: np.ndarray
    tokens: np.ndarray
    content: np.ndarray  # bool
    known: np.ndarray  # bool: labelled (always, from a reference text; see `snippet_labels`)


def reference_shingles(reference: str) -> set[tuple[str, ...]]:
    """Every run of 1 to SHINGLE_SIZE consecutive tokens of the reference."""
    words = tokenize(reference)
    found: set[tuple[str, ...]] = set()
    for size in range(1, SHINGLE_SIZE + 1):
        found.update(tuple(words[i : i + size]) for i in range(len(words) - size + 1))
    return found


def block_texts(doc: Document, blocks: PageBlocks) -> list[str]:
    """The own text of every block (the text tokens its holder owns), in block order."""
    texts = own_texts(doc, blocks)
    return [texts.get(block, "") for block in range(len(blocks.elements))]


def overlap(text: str, reference: set[tuple[str, ...]]) -> tuple[float, int]:
    """(share of the text's shingles in the reference, number of word tokens of the text)."""
    words = tokenize(text)
    if not words:
        return 0.0, 0
    if len(words) < SHINGLE_SIZE:
        return float(tuple(words) in reference), len(words)
    grams = [tuple(words[i : i + SHINGLE_SIZE]) for i in range(len(words) - SHINGLE_SIZE + 1)]
    return sum(g in reference for g in grams) / len(grams), len(words)


def label_blocks(doc: Document, blocks: PageBlocks, reference: str) -> BlockLabels:
    """Overlap, token count and content label of every block of the page."""
    shingles = reference_shingles(reference)
    pairs = [overlap(text, shingles) for text in block_texts(doc, blocks)]
    share = np.array([p[0] for p in pairs], dtype=np.float64)
    tokens = np.array([p[1] for p in pairs], dtype=np.float64)
    return BlockLabels(share, tokens, share >= CONTENT_OVERLAP, np.ones(len(share), dtype=bool))


# --- Snippet truth (older-dev: trafilatura's evaluation set) -------------------------------------


def _squeeze(text: str) -> str:
    """The text without any whitespace: snippets are matched whatever the spacing around tags."""
    return "".join(text.split())


def page_characters(doc: Document, blocks: PageBlocks) -> tuple[str, np.ndarray]:
    """The body's visible text in document order without whitespace, and per character the block
    that owns it (-1: text of no block). Document order, not block order: a block's own text can sit
    on both sides of a nested block's, and a snippet can run from one block into the next."""
    tokens = doc.tokens
    block_of = np.full(len(doc.elements), -1, dtype=np.int64)
    block_of[blocks.elements] = np.arange(len(blocks.elements))
    first, last = doc.body
    span = np.arange(first, last + 1)
    span = span[(tokens.kind[span] == TEXT) & (tokens.element[span] >= 0)]
    owner = block_of[blocks.holder[tokens.element[span]]]
    pieces: list[str] = []
    owners: list[np.ndarray] = []
    for token, block in zip(span.tolist(), owner.tolist(), strict=True):
        piece = _squeeze(tokens.text[token])
        if piece:
            pieces.append(piece)
            owners.append(np.full(len(piece), block, dtype=np.int64))
    return "".join(pieces), (np.concatenate(owners) if owners else np.zeros(0, dtype=np.int64))


def _occurrences(text: str, snippet: str) -> list[int]:
    """Start offsets of every (possibly overlapping) occurrence of `snippet` in `text`."""
    found: list[int] = []
    start = text.find(snippet)
    while start >= 0:
        found.append(start)
        start = text.find(snippet, start + 1)
    return found


def snippet_labels(
    doc: Document, blocks: PageBlocks, with_snippets: Sequence[str], without_snippets: Sequence[str]
) -> BlockLabels:
    """Content and boilerplate labels from the snippets that must and must not appear in the output.

    Both the page's text and each snippet are compared without whitespace (the metric normalises
    whitespace; the blocks' texts are joined at tag boundaries the snippet's author did not see). A
    snippet found exactly once labels every block its occurrence covers: content for a "with"
    snippet (each of those blocks must be kept for the snippet to appear), boilerplate for a
    "without" one (dropping them keeps it out). Left unlabelled (`known` False, out of the fit):

    - blocks no snippet falls on, most of every page: about three snippets of each kind say nothing
      about the other blocks, and calling them boilerplate (or content) would teach the trees the
      annotator's choice of snippets, not the page's structure;
    - blocks of a snippet found more than once (a short "without" phrase such as "auf Twitter" can
      also stand in the article; a "with" sentence can be repeated in a teaser or the description):
      which occurrence the annotator meant is unknown;
    - blocks covered by both a "with" and a "without" snippet (one block cannot be both);
    - nothing for a snippet the page's text does not hold (text of attributes or scripts).
    """
    text, owner = page_characters(doc, blocks)
    n = len(blocks.elements)
    content = np.zeros(n, dtype=bool)
    boilerplate = np.zeros(n, dtype=bool)
    for snippets, marks in ((with_snippets, content), (without_snippets, boilerplate)):
        for snippet in snippets:
            needle = _squeeze(snippet)
            places = _occurrences(text, needle) if needle else []
            if len(places) != 1:
                continue
            covered = owner[places[0] : places[0] + len(needle)]
            marks[covered[covered >= 0]] = True
    known = content ^ boilerplate
    words = np.array([len(tokenize(t)) for t in block_texts(doc, blocks)], dtype=np.float64)
    share = np.where(known, content.astype(np.float64), 0.0)
    return BlockLabels(share, words, known & content, known)
