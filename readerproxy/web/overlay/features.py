"""A block's features as the overlay shows them (on hover, in a badge's title, in the API).

`block_features`: tag, words, link density, text/code ratio and the element's score when the
signals carry one; `element_path`, a CSS path to a block's element; `selected_share`, the share of
the body's text a selection keeps; `blocks_json`, the blocks and signals for
`/api/extract?blocks=1`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from ...engine.extraction import Block, Extraction
from ...engine.parse.document import TEXT, Document
from .. import charts as charts_module
from .marks import Mark, block_marks


@dataclass(frozen=True, slots=True)
class Features:
    tag: str
    words: int
    chars: int
    link_density: float
    text_code_ratio: float
    element_score: float | None

    def describe(self, block: Block) -> str:
        parts = [
            f"{block.label or self.tag}",
            f"<{self.tag}>",
            f"{self.words} words",
            f"links {self.link_density:.0%}",
            f"text/code {self.text_code_ratio:.2f}",
            f"score {charts_module.format_number(block.score)}",
        ]
        if self.element_score is not None:
            parts.append(f"element score {charts_module.format_number(self.element_score)}")
        parts.append("kept" if block.selected else "dropped")
        return " · ".join(parts)


class _Sums:
    """Prefix sums over the linear view: text characters, anchor characters, tag code, words."""

    def __init__(self, doc: Document) -> None:
        t = doc.tokens
        text = t.kind == TEXT
        words = np.fromiter((len(s.split()) if s else 0 for s in t.text), dtype=np.int64, count=len(t))

        def prefix(values: np.ndarray) -> np.ndarray:
            return np.concatenate(([0], np.cumsum(values, dtype=np.int64)))

        self.chars = prefix(np.where(text, t.chars, 0))
        self.anchor = prefix(np.where(text & t.in_anchor, t.chars, 0))
        self.code = prefix(np.where(text, 0, t.length))
        self.words = prefix(words)

    def between(self, array: np.ndarray, first: int, last: int) -> int:
        return int(array[last + 1] - array[first])


def block_features(
    doc: Document, extraction: Extraction, marks: Sequence[Mark] | None = None
) -> list[Features]:
    """Tag, words, link density, text/code ratio (and the element's score when the signals carry one)."""
    if not extraction.blocks or len(doc.tokens) == 0:
        return []
    sums = _Sums(doc)
    marks = block_marks(doc, extraction.blocks) if marks is None else marks
    element_score = extraction.signals.get("element_score")
    per_element = element_score is not None and len(element_score) == len(doc.elements)
    n = len(doc.tokens)
    out = []
    for block, mark in zip(extraction.blocks, marks, strict=True):
        first, last = max(0, block.start), min(max(block.start, block.end), n - 1)
        chars = sums.between(sums.chars, first, last)
        code = sums.between(sums.code, first, last)
        element = block.element if block.element is not None else mark.element
        out.append(
            Features(
                tag=doc.tag[element] if 0 <= element < len(doc.tag) else "",
                words=sums.between(sums.words, first, last),
                chars=chars,
                link_density=sums.between(sums.anchor, first, last) / chars if chars else 0.0,
                text_code_ratio=chars / code if code else float(chars),
                element_score=float(element_score[block.element])  # type: ignore[index]
                if per_element and block.element is not None
                else None,
            )
        )
    return out


def element_path(doc: Document, element: int) -> str:
    """A CSS path to an element of the cleaned document: `body > div#main > p:nth-of-type(3)`."""
    if not 0 <= element < len(doc.tag):
        return ""
    nth = _nth_of_type(doc)
    parts = []
    node = element
    while node >= 0:
        name = doc.tag[node]
        ident = doc.elements[node].id
        if ident and re.fullmatch(r"[A-Za-z][\w-]*", ident):
            parts.append(f"{name}#{ident}")
        elif name in ("html", "body", "head"):
            parts.append(name)
        else:
            parts.append(f"{name}:nth-of-type({nth[node]})")
        node = int(doc.parent[node])
    return " > ".join(reversed(parts))


def _nth_of_type(doc: Document) -> list[int]:
    cached = doc.__dict__.get("_rpo_nth")
    if cached is not None:
        return cast(list[int], cached)
    counts: dict[tuple[int, str], int] = {}
    nth = []
    for i, name in enumerate(doc.tag):
        key = (int(doc.parent[i]), name)
        counts[key] = counts.get(key, 0) + 1
        nth.append(counts[key])
    doc.__dict__["_rpo_nth"] = nth
    return nth


def selected_share(doc: Document, selection: np.ndarray) -> float:
    """Share of the body's text characters that the selection keeps."""
    t = doc.tokens
    text = (t.kind == TEXT) & doc.body_mask
    total = int(t.chars[text].sum())
    return int(t.chars[text & selection].sum()) / total if total else 0.0


def _json_number(value: float) -> float | None:
    return float(value) if np.isfinite(value) else None


def blocks_json(doc: Document, extraction: Extraction) -> dict[str, Any]:
    """Blocks (label, score, selected, text length, element path, token range) and signals, JSON-ready."""
    marks = block_marks(doc, extraction.blocks)
    features = block_features(doc, extraction, marks)
    blocks = []
    for block, mark, feature in zip(extraction.blocks, marks, features, strict=True):
        element = block.element if block.element is not None else mark.element
        blocks.append(
            {
                "label": block.label,
                "score": _json_number(block.score),
                "selected": block.selected,
                "text_length": feature.chars,
                "words": feature.words,
                "link_density": round(feature.link_density, 4),
                "start": block.start,
                "end": block.end,
                "element": block.element,
                "path": element_path(doc, element),
            }
        )
    signals = {
        name: [_json_number(v) for v in np.asarray(values, dtype=np.float64).ravel().tolist()]
        for name, values in extraction.signals.items()
    }
    return {"blocks": blocks, "signals": signals}
