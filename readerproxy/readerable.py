"""Is this page an article at all? `is_probably_readerable(doc)`.

Readability.js's `isProbablyReaderable`: walk the paragraphs of the page (<p>, <pre>, <article>, and
<div>s holding text broken by <br>), skip those inside list items and those whose class or id says
boilerplate (comment, sidebar, footer ...); each paragraph longer than 140 characters adds
sqrt(length - 140) to a score; the page is readerable once the score passes 20. Hidden elements are
already gone from the `Document`.

Measured on WCXB's page types, that check says yes to about half of the listings and collections
(their item teasers are long paragraphs too). We add one condition: the long paragraphs must
either sit together (the paragraphs sharing one parent score above `MIN_SIBLING_SCORE`, as an
article body does) or the page must not be mostly links (anchor text below `MAX_LINK_DENSITY` of
the body's text). Two thresholds, chosen on wcxb-dev: Readability's test pages 0.992 -> 0.985,
WCXB articles 0.986 -> 0.97 readerable, listings 0.54 -> 0.40, collections 0.56 -> 0.44.
"""

from __future__ import annotations

from itertools import compress

import numpy as np

from .document import TEXT, Document, ranges_mask
from .readability_rules import MAYBE_CANDIDATE_READERABLE, unlikely_by_class_id

MIN_CONTENT_LENGTH = 140
MIN_SCORE = 20.0
MIN_SIBLING_SCORE = 40.0
MAX_LINK_DENSITY = 0.4
_PARAGRAPH_TAGS = frozenset(("p", "pre", "article"))
_MARKED_TAGS = _PARAGRAPH_TAGS | {"br", "li"}


def paragraph_lengths(doc: Document) -> list[tuple[int, int]]:
    """(element, trimmed text length) of every paragraph Readability.js's check looks at.

    For speed, from the Document's arrays rather than per paragraph in Python: "inside a list item"
    is whether the paragraph's start tag lies within some <li>'s tokens, and the length of the
    paragraph's text, stripped, is the text characters from its first to its last token holding
    more than whitespace (`tokens.chars > 0`), less the whitespace at the outer ends of those two.
    """
    tags = doc.tag
    parents = doc.parent
    # The elements of the five tags read here, found in one pass in C (for speed: a `list.index`
    # scan per tag name cost twice as much).
    marked = list(compress(range(len(tags)), map(_MARKED_TAGS.__contains__, tags)))
    candidates = {i for i in marked if tags[i] in _PARAGRAPH_TAGS}
    for br in (i for i in marked if tags[i] == "br"):
        parent = int(parents[br])
        if parent >= 0 and tags[parent] == "div":
            candidates.add(parent)
    if not candidates:
        return []
    t = doc.tokens
    elements = sorted(candidates)
    starts, ends = doc.start[elements], doc.end[elements]
    items = [i for i in marked if tags[i] == "li"]
    in_item = (
        ranges_mask(len(t), doc.start[items] + 1, doc.end[items])[starts].tolist()
        if items
        else [False] * len(elements)
    )
    # Text tokens holding more than whitespace (tags have no characters), and the text
    # characters before each token (a tag's `length` is its code length, so text only).
    solid = np.flatnonzero(t.chars > 0)
    before = np.concatenate(([0], np.cumsum(np.where(t.kind == TEXT, t.length, 0))))
    first = solid[np.minimum(np.searchsorted(solid, starts), len(solid) - 1)] if len(solid) else starts
    last = solid[np.maximum(np.searchsorted(solid, ends, side="right") - 1, 0)] if len(solid) else starts
    spans = (before[last + 1] - before[first]).tolist()
    text = t.text
    found: list[tuple[int, int]] = []
    for index, inside, a, b, span, begin, end in zip(
        elements, in_item, first.tolist(), last.tolist(), spans, starts.tolist(), ends.tolist(), strict=True
    ):
        if inside and tags[index] == "p":
            continue
        # For speed: the class and id from the parse, not a dict of the node's attributes.
        if unlikely_by_class_id(
            f"{doc.classes[index] or ''} {doc.ident[index] or ''}", MAYBE_CANDIDATE_READERABLE
        ):
            continue
        if not len(solid) or a < begin or a > end:  # only whitespace inside
            found.append((index, 0))
            continue
        head, tail = text[a], text[b]
        found.append((index, span - (len(head) - len(head.lstrip())) - (len(tail) - len(tail.rstrip()))))
    return found


def readerable_scores(doc: Document) -> tuple[float, float]:
    """Readability.js's score (sum of sqrt(length - 140) over paragraphs longer than 140 characters)
    and the largest part of it held by the paragraphs of one parent."""
    total = 0.0
    by_parent: dict[int, float] = {}
    for index, length in paragraph_lengths(doc):
        if length >= MIN_CONTENT_LENGTH:
            score = (length - MIN_CONTENT_LENGTH) ** 0.5
            total += score
            parent = int(doc.parent[index])
            by_parent[parent] = by_parent.get(parent, 0.0) + score
    return total, max(by_parent.values(), default=0.0)


def link_density(doc: Document) -> float:
    """Share of the body's text characters inside links."""
    body = doc.tag.index("body") if "body" in doc.tag else 0
    if not len(doc.elements):
        return 0.0
    chars = float(doc.subtree_chars[body])
    return float(doc.subtree_anchor_chars[body]) / chars if chars else 0.0


def is_probably_readerable(doc: Document) -> bool:
    """Whether the page looks like an article a reader view can show."""
    total, together = readerable_scores(doc)
    if total <= MIN_SCORE:
        return False
    return together > MIN_SIBLING_SCORE or link_density(doc) < MAX_LINK_DENSITY
