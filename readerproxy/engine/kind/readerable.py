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

from collections.abc import Iterator

from ..parse.document import Document, indices_of
from .readability_rules import MAYBE_CANDIDATE_READERABLE, unlikely_by_class_id

MIN_CONTENT_LENGTH = 140
MIN_SCORE = 20.0
MIN_SIBLING_SCORE = 40.0
MAX_LINK_DENSITY = 0.4


def paragraph_lengths(doc: Document) -> Iterator[tuple[int, int]]:
    """(element, trimmed text length) of every paragraph Readability.js's check looks at, in document
    order (one at a time: the check may stop early)."""
    tags = doc.tag
    parents = doc.parent.tolist()
    candidates = {i for name in ("p", "pre", "article") for i in indices_of(tags, name)}
    for br in indices_of(tags, "br"):
        parent = parents[br]
        if parent >= 0 and tags[parent] == "div":
            candidates.add(parent)
    text = doc.tokens.text
    in_item: dict[int, bool] = {}  # element -> whether a list item holds it
    for index in sorted(candidates):
        if tags[index] == "p" and _inside_item(tags, parents, index, in_item):
            continue
        # For speed: the class and id from the parse, not a dict of the node's attributes.
        if unlikely_by_class_id(
            f"{doc.classes[index] or ''} {doc.ident[index] or ''}", MAYBE_CANDIDATE_READERABLE
        ):
            continue
        length = len("".join(text[int(doc.start[index]) : int(doc.end[index]) + 1]).strip())
        yield index, length


def _inside_item(tags: list[str], parents: list[int], index: int, known: dict[int, bool]) -> bool:
    """Whether an <li> is among the ancestors of `index`. For speed, what a walk learns about each
    ancestor is kept in `known`: the paragraphs of a page share most of their ancestors, so each
    walk stops where an earlier one passed (a walk per paragraph to the root was most of the check)."""
    chain: list[int] = []
    parent = parents[index]
    answer = False
    while parent >= 0:
        if parent in known:
            answer = known[parent]
            break
        if tags[parent] == "li":
            answer = True
            break
        chain.append(parent)
        parent = parents[parent]
    for element in chain:  # below the li (or the root, or a known element): the same answer
        known[element] = answer
    return answer


def paragraph_scores(doc: Document) -> Iterator[tuple[int, float]]:
    """(element, sqrt(length - 140)) of every paragraph of at least `MIN_CONTENT_LENGTH` characters:
    the terms of Readability.js's score, in document order."""
    for index, length in paragraph_lengths(doc):
        if length >= MIN_CONTENT_LENGTH:
            yield index, (length - MIN_CONTENT_LENGTH) ** 0.5


def readerable_scores(doc: Document) -> tuple[float, float]:
    """Readability.js's score (sum of sqrt(length - 140) over paragraphs longer than 140 characters)
    and the largest part of it held by the paragraphs of one parent."""
    total = 0.0
    by_parent: dict[int, float] = {}
    for index, score in paragraph_scores(doc):
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
    if link_density(doc) < MAX_LINK_DENSITY:
        return _passes_min_score(doc)
    total, together = readerable_scores(doc)
    return total > MIN_SCORE and together > MIN_SIBLING_SCORE


def _passes_min_score(doc: Document) -> bool:
    """Whether Readability.js's score passes `MIN_SCORE`: the same sum as `readerable_scores`, in the
    same order, stopped as soon as it passes, as Readability.js's check stops (the terms are never
    negative). For speed: an article passes within its first paragraphs, and the rest of the walk
    was half of the check (0.17 -> 0.09 ms at the ScrapingHub median)."""
    total = 0.0
    for _, score in paragraph_scores(doc):
        total += score
        if total > MIN_SCORE:
            return True
    return False
