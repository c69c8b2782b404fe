"""The public library API: `extract(html, url, algorithm, **params) -> Article`. Stable."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from .decoding import decode_html, maybe_gunzip
from .document import Document, parse
from .extraction import Extraction, Extractor, get_extractor, registry
from .metadata import Metadata, extract_metadata
from .output import LinkRewriter, html_to_markdown, render_html, render_text

WORDS_PER_MINUTE = 230


@dataclass(slots=True)
class Article:
    """The main content of a page, with what the reader view shows around it."""

    text: str
    html: str
    title: str
    algorithm: str
    extraction: Extraction
    metadata: Metadata
    url: str | None = None
    timings: dict[str, float] = field(default_factory=dict)  # parse and extract, ms

    @property
    def word_count(self) -> int:
        return len(self.text.split())

    @property
    def reading_minutes(self) -> int:
        return max(1, round(self.word_count / WORDS_PER_MINUTE)) if self.text else 0

    @property
    def markdown(self) -> str:
        heading = f"# {self.title}\n\n" if self.title else ""
        return heading + html_to_markdown(self.html)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready view used by the CLI and the API."""
        meta = self.metadata
        return {
            "url": self.url,
            "title": self.title,
            "byline": meta.byline,
            "published": meta.published,
            "site_name": meta.site_name,
            "lang": meta.lang,
            "dir": meta.dir,
            "excerpt": meta.excerpt,
            "image": meta.image,
            "text": self.text,
            "html": self.html,
            "word_count": self.word_count,
            "reading_minutes": self.reading_minutes,
            "algorithm": self.algorithm,
            "score": self.extraction.score,
            "parameters": self.extraction.params,
            "timings_ms": self.timings,
        }


def algorithms() -> dict[str, str]:
    """Stable algorithm names with a one-line description each (`auto` first)."""
    described = {name: spec.description for name, spec in sorted(registry().items())}
    return {"auto": described.pop("auto"), **described}


def resolve_algorithm(name: str) -> Extractor[Any]:
    """The extractor registered under a name (`auto` included); ValueError naming the valid ones."""
    return get_extractor(name)


def to_text(html: str | bytes, content_type: str | None = None) -> str:
    """Decode page bytes (gzip accepted) to text; strings pass through."""
    if isinstance(html, str):
        return html
    return decode_html(maybe_gunzip(bytes(html)), content_type).text


def extract(
    html: str | bytes,
    url: str | None = None,
    algorithm: str = "auto",
    **params: Any,
) -> Article:
    """Extract the main content of a page with the named algorithm (see `algorithms()`)."""
    extractor = resolve_algorithm(algorithm)
    settings = extractor.make_params(params)
    began = time.perf_counter()
    doc = parse(to_text(html), url)
    parsed = time.perf_counter()
    return article_from(doc, extractor.run(doc, settings), parse_ms=(parsed - began) * 1000)


def article_from(
    doc: Document,
    extraction: Extraction,
    parse_ms: float = 0.0,
    rewrite_link: LinkRewriter | None = None,
    images: bool = True,
) -> Article:
    """Render an extraction of a parsed document into an Article."""
    began = time.perf_counter()
    text = render_text(doc, extraction.selection)
    fragment = render_html(doc, extraction.selection, rewrite_link=rewrite_link, images=images)
    metadata = extract_metadata(doc, text)
    rendered = time.perf_counter()
    return Article(
        text=text,
        html=fragment,
        title=metadata.title,
        algorithm=extraction.algorithm,
        extraction=extraction,
        metadata=metadata,
        url=doc.url,
        timings={
            "parse": round(parse_ms, 3),
            "extract": round(extraction.elapsed_ms, 3),
            "render": round((rendered - began) * 1000, 3),
        },
    )
