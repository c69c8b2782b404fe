"""Where each block sits in the page (`block_marks`).

An element block marks its element. A range of tokens becomes the run of sibling nodes under the
lowest element holding both ends, wrapped when the run is several siblings; a run that would cross
another, or sit where a wrapper cannot (between table rows, inside SVG or MathML), marks the
enclosing element. Marks nest, never cross.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ...engine.extraction import Block
from ...engine.parse.document import Document

#: Elements under which a wrapping <span> would be moved by the HTML parser: blocks inside mark the element.
NO_WRAP = frozenset("table thead tbody tfoot tr colgroup select optgroup datalist html head svg math".split())

#: Foreign content is replaced by an empty placeholder (nh3 would drop it; SVG can carry script).
FOREIGN = frozenset({"svg", "math"})


@dataclass(frozen=True, slots=True)
class Mark:
    """Where blocks are drawn: on an element, or on a wrapped run of sibling tokens."""

    element: int  # the marked element, or for a wrap the element the run sits in
    first: int  # token range of the run (wraps); the element's own range otherwise
    last: int
    wrap: bool


def _depths(doc: Document) -> np.ndarray:
    depth = np.zeros(len(doc.parent), dtype=np.int32)
    parent = doc.parent.tolist()
    for i, p in enumerate(parent):  # parents come before their children in document order
        depth[i] = depth[p] + 1 if p >= 0 else 0
    return depth


def _owner(doc: Document, token: int) -> int:
    return int(doc.tokens.element[token])


def _lca(parent: np.ndarray, depth: np.ndarray, a: int, b: int) -> int:
    while depth[a] > depth[b]:
        a = int(parent[a])
    while depth[b] > depth[a]:
        b = int(parent[b])
    while a != b:
        a, b = int(parent[a]), int(parent[b])
    return a


def _child_toward(parent: np.ndarray, depth: np.ndarray, node: int, ancestor: int) -> int:
    while depth[node] > depth[ancestor] + 1:
        node = int(parent[node])
    return node


def block_marks(doc: Document, blocks: Sequence[Block]) -> list[Mark]:
    """One Mark per block (several blocks may share one), laminar: marks nest, never cross."""
    n_tokens = len(doc.tokens)
    if not blocks or n_tokens == 0 or not doc.elements:
        return []
    depth = _depths(doc)
    parent, start, end = doc.parent, doc.start, doc.end
    body = doc.tag.index("body") if "body" in doc.tag else 0
    body_first, body_last = int(start[body]), int(end[body])
    foreign_root = np.full(len(doc.tag), -1, dtype=np.int64)
    for i, name in enumerate(doc.tag):
        p = int(parent[i])
        if p >= 0 and foreign_root[p] >= 0:
            foreign_root[i] = foreign_root[p]
        elif name in FOREIGN:
            foreign_root[i] = i

    def element_mark(element: int) -> Mark:
        if element < 0 or not (body_first < start[element] and end[element] <= body_last):
            element = body  # outside the body (head, html): drawn on the page itself
        if foreign_root[element] >= 0:
            element = int(foreign_root[element])
        return Mark(element, int(start[element]), int(end[element]), False)

    def wanted_mark(block: Block) -> Mark:
        s = max(0, min(block.start, n_tokens - 1))
        e = max(s, min(block.end, n_tokens - 1))
        if block.element is not None:
            return element_mark(block.element)
        a, b = _owner(doc, s), _owner(doc, e)
        if a < 0 or b < 0:
            return element_mark(body)
        common = _lca(parent, depth, a, b)
        if s == start[common] or e == end[common] or doc.tag[common] in NO_WRAP or foreign_root[common] >= 0:
            return element_mark(common)
        child_a = _child_toward(parent, depth, a, common) if a != common else None
        child_b = _child_toward(parent, depth, b, common) if b != common else None
        if child_a is not None and child_a == child_b:
            return element_mark(child_a)
        first = int(start[child_a]) if child_a is not None else s
        last = int(end[child_b]) if child_b is not None else e
        whole_body = common == body and first <= body_first + 1 and last >= body_last - 1
        if whole_body or not (body_first < first and last < body_last):
            return element_mark(body)
        return Mark(common, first, last, True)

    result = [wanted_mark(block) for block in blocks]
    # Wraps must nest with one another: a run crossing an accepted one marks its element instead.
    order = sorted(range(len(result)), key=lambda i: (result[i].first, -result[i].last))
    stack: list[Mark] = []
    for i in order:
        mark = result[i]
        if not mark.wrap:
            continue
        while stack and stack[-1].last < mark.first:
            stack.pop()
        if stack and mark.last > stack[-1].last:
            result[i] = element_mark(mark.element)
            continue
        stack.append(mark)
    return result
