"""Which blocks of a page are content: the reference text labels them by word-shingle overlap.

A block's *overlap* is the share of its word 4-shingles (the ScrapingHub metric's unit) found among
the reference's; a block of fewer than four words counts as one shingle of all its words, found if
those words stand together in the reference. Whitespace, markup and the order of blocks do not
matter, and a block of navigation whose words happen to occur in the article ("Share", "Home")
only counts as content where its words stand in the same sequence there. A block is content when
its overlap reaches `CONTENT_OVERLAP`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...engine.learn.blocks import PageBlocks, own_texts
from ...engine.parse.document import Document
from ..metrics import SHINGLE_SIZE, tokenize

#: A block is content when at least this share of its shingles is in the reference.
CONTENT_OVERLAP = 0.5


@dataclass(frozen=True, slots=True)
class BlockLabels:
    """Per block: overlap with the reference (0..1), word tokens, and the binary label."""

    overlap: np.ndarray
    tokens: np.ndarray
    content: np.ndarray  # bool


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
    return BlockLabels(share, tokens, share >= CONTENT_OVERLAP)
