"""auto: the best measured extractor, with fallbacks so that a reader never gets an empty page.

`heuristic` (DOM scoring, seed 001) measures best of our extractors on both shared datasets. It
selects text holders above a threshold, so on very small or unusual pages (a few lines of text, no
paragraphs) it can select nothing. `auto` then tries the next extractor in `fallbacks`; the last
one, `baseline`, keeps all visible text. The Extraction returned is the one that was accepted, so
`Article.algorithm` names the algorithm that really produced the text.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..document import TEXT, Document
from ..extraction import Extraction, get_extractor, register

#: Tried in order; the first whose selection is large enough wins. `baseline` always is.
FALLBACKS = ("heuristic", "accb", "baseline")


@dataclass(frozen=True, slots=True)
class AutoParams:
    """When a selection counts as an article rather than a miss."""

    min_chars: int = 200  # non-whitespace characters of selected text …
    min_share: float = 0.5  # … or this share of the page's text, whichever is smaller


def selected_chars(doc: Document, selection: np.ndarray) -> int:
    """Non-whitespace characters of the selected text tokens."""
    t = doc.tokens
    return int(t.chars[selection & (t.kind == TEXT)].sum())


@register(
    "auto",
    "The best measured extractor (heuristic), falling back to accb, then all text, when it finds too little.",
    AutoParams,
    reference="measured with readerproxy eval on both shared datasets (docs/benchmarks.md)",
)
def extract_auto(doc: Document, params: AutoParams) -> Extraction:
    """Run the extractors of FALLBACKS in order and return the first acceptable Extraction."""
    page_chars = selected_chars(doc, doc.body_mask)
    enough = max(1, min(params.min_chars, int(page_chars * params.min_share)))
    tried: list[str] = []
    extraction: Extraction | None = None
    for name in FALLBACKS:
        extraction = get_extractor(name).run(doc)
        tried.append(name)
        if selected_chars(doc, extraction.selection) >= enough:
            break
    assert extraction is not None
    extraction.signals["auto_tried"] = np.array([FALLBACKS.index(name) for name in tried])
    return extraction
