"""auto-heuristic: the DOM heuristic with fallbacks, so that a reader never gets an empty page.

This was `auto` until the learned block scorer (`extractors/learned/`) measured better out of
fold on all three shared sets; `auto` now runs that scorer and falls back to this chain, which
stays available by this name, unchanged.

`heuristic` (DOM scoring, Berg 2020) measures best of our extractors on both shared datasets, and
best of all with two steps from Readability.js: unlikely-candidate removal (comment sections,
related-story lists, footers dropped by class/id before the article is chosen) and the article
root found from the top candidate (see `heuristic.top_candidate_element`), inside which every
text holder with a positive score is kept (`inner_threshold=0`: short paragraphs of the article). Like Readability.js, which
retries without that flag when the result is too short, `auto` tries each entry of FALLBACKS in
turn until one selects enough text: heuristic without the removal, then accb, then `baseline`,
which keeps all visible text. The Extraction returned is the one accepted, so `Article.algorithm`
and `.extraction.params` name what really produced the text.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..convert import check_range
from ..extraction import Extraction, Extractor, get_extractor, register
from ..parse.document import TEXT, Document

#: (algorithm, parameters), tried in order; the first whose selection is large enough wins.
FALLBACKS: tuple[tuple[str, dict[str, object]], ...] = (
    ("heuristic", {"unlikely_candidates": True, "article_root": "top-candidate", "inner_threshold": 0.0}),
    ("heuristic", {}),
    ("accb", {}),
    ("baseline", {}),
)


MIN_CHARS = 200
MIN_SHARE = 0.5


@dataclass(frozen=True, slots=True)
class AutoParams:
    """When a selection counts as an article rather than a miss.

    Ranges: min_chars in [0, 10_000_000] characters (the fetcher's 10 MB body cap); min_share in [0, 1].
    """

    min_chars: int = MIN_CHARS  # non-whitespace characters of selected text …
    min_share: float = MIN_SHARE  # … or this share of the page's text, whichever is smaller

    def __post_init__(self) -> None:
        check_range("min_chars", self.min_chars, 0, 10_000_000)
        check_range("min_share", self.min_share, 0, 1)


@functools.cache
def _fallback(index: int) -> tuple[Extractor[Any], object]:
    """Extractor and checked parameters of FALLBACKS[index], made once (for speed: `make_params`
    reads the parameter type hints, which cost more than a small page's extraction)."""
    name, overrides = FALLBACKS[index]
    extractor = get_extractor(name)
    return extractor, extractor.make_params(overrides)


def first_extractor() -> tuple[Extractor[Any], object]:
    """The extractor and parameters `auto` tries first (the learned scorer reads its answer)."""
    return _fallback(0)


def enough_chars(doc: Document, params: AutoParams) -> int:
    """Characters a selection needs to be accepted: min_chars, or min_share of the page if smaller."""
    page_chars = selected_chars(doc, doc.body_mask)
    return max(1, min(params.min_chars, int(page_chars * params.min_share)))


def selected_chars(doc: Document, selection: np.ndarray) -> int:
    """Non-whitespace characters of the selected text tokens."""
    t = doc.tokens
    return int(t.chars[selection & (t.kind == TEXT)].sum())


@register(
    "auto-heuristic",
    "The heuristic after removing unlikely candidates, with fallbacks when it finds too little (auto before the learned scorer).",
    AutoParams,
    reference="measured with readerproxy eval on both shared datasets (docs/benchmarks.md)",
)
def extract_auto_heuristic(doc: Document, params: AutoParams) -> Extraction:
    """Run the extractors of FALLBACKS in order and return the first acceptable Extraction."""
    return fall_back(doc, params)


def fall_back(doc: Document, params: AutoParams, first: Extraction | None = None) -> Extraction:
    """auto-heuristic's chain; `first` is FALLBACKS[0]'s Extraction of `doc` when the caller has
    already run it (the learned scorer has), so it is not run again."""
    enough = enough_chars(doc, params)
    extraction: Extraction | None = None
    tried = 0
    for index in range(len(FALLBACKS)):
        if index == 0 and first is not None:
            extraction = first
        else:
            extractor, fallback_params = _fallback(index)
            extraction = extractor.run(doc, fallback_params)
        tried += 1
        if selected_chars(doc, extraction.selection) >= enough:
            break
    assert extraction is not None
    extraction.signals["auto_tried"] = np.arange(tried)  # indices into FALLBACKS
    return extraction
