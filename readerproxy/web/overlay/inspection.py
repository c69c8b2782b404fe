"""Running the pipeline for an overlay: `inspect` runs `pipeline.process_page` on one page and
keeps what the overlay, the comparison and the blocks JSON read (`Inspection`: the decoded text,
the Document, the Extraction and the Article).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...engine.article import Article
from ...engine.extraction import Extraction, Extractor, params_dict
from ...engine.parse.document import Document
from ...engine.parse.layout import LayoutSnapshot
from ...engine.pipeline import process_page


@dataclass(slots=True)
class Inspection:
    """What the overlay reads: the decoded text, the Document, the Extraction and the Article."""

    text: str
    doc: Document
    extraction: Extraction
    article: Article
    requested: str  # the algorithm asked for (auto names another in extraction.algorithm)
    params: dict[str, Any]  # the requested algorithm's parameters, as validated
    url: str | None = None


def inspect(
    source: str | bytes,
    *,
    url: str | None = None,
    content_type: str | None = None,
    algorithm: str | Extractor[Any] = "auto",
    params: Mapping[str, Any] | object | None = None,
    layout: LayoutSnapshot | None = None,
) -> Inspection:
    """The pipeline on one page, keeping its Document (for overlays, compare and the blocks JSON)."""
    done = process_page(
        source, url=url, content_type=content_type, algorithm=algorithm, params=params, layout=layout
    )
    params_used = params_dict(done.params)
    return Inspection(
        done.text, done.doc, done.extraction, done.article, done.extractor.name, params_used, url
    )
