"""The papers' baseline: all visible text of the page body."""

from __future__ import annotations

from ..extraction import Block, Extraction, NoParams, register
from ..parse.document import Document


@register(
    "baseline",
    "All visible text of the page body: the baseline every paper compares against.",
    NoParams,
    reference="Moreno, Deschacht, Moens 2009, section 5.3; ScrapingHub benchmark 'all text' row",
)
def extract_baseline(doc: Document, params: NoParams) -> Extraction:
    """Select every token of <body> (what remains after cleaning is visible text)."""
    first, last = doc.body
    selection = doc.body_mask.copy()
    chars = float(doc.tokens.chars[selection].sum())
    return Extraction(
        blocks=[Block(first, last, chars, True, element=None, label="body")],
        selection=selection,
        score=1.0,
    )
