"""`Article`: the main content of a page and what a reader view shows around it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .extraction import Extraction
from .metadata import Metadata
from .output import escape_markdown, html_to_markdown, markdown_url
from .readingtime import reading_time


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
    timings: dict[str, float] = field(default_factory=dict)  # decode, parse, extract, render: ms
    readerable: bool | None = None  # is the page an article at all (None: not checked)
    page_kind: str = (
        ""  # article, forum, product, listing, collection, documentation, service ("": not decided)
    )
    page_kind_confidence: float = 0.0  # the probability of `page_kind` (`pagekind.page_kind`)

    @property
    def word_count(self) -> int:
        return reading_time(self.text).words

    @property
    def reading_minutes(self) -> int:
        return reading_time(self.text).minutes

    @property
    def markdown(self) -> str:
        return markdown_document(self.title, self.html)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready view used by the CLI, the JSON API and the server's result cache."""
        m = self.metadata
        length = reading_time(self.text)  # one pass over the text for both counts
        # The metadata's fields by name, in their order, as `dataclasses.asdict` gives them (less
        # the title): for speed, asdict copies every value recursively (0.1 ms a page); these are
        # all strings or None. `test_to_dict_keeps_every_metadata_field` pins the list.
        return {
            "url": self.url,
            "title": self.title,
            "byline": m.byline,
            "published": m.published,
            "site_name": m.site_name,
            "excerpt": m.excerpt,
            "image": m.image,
            "lang": m.lang,
            "dir": m.dir,
            "next_page_url": m.next_page_url,
            "date": m.date,
            "author": m.author,
            "readerable": self.readerable,
            "page_kind": self.page_kind,
            "page_kind_confidence": self.page_kind_confidence,
            "text": self.text,
            "html": self.html,
            "word_count": length.words,
            "reading_minutes": length.minutes,
            "algorithm": self.algorithm,
            "score": self.extraction.score,
            "parameters": self.extraction.params,
            "timings_ms": self.timings,
        }


def markdown_document(title: str | None, html: str, source: str | None = None) -> str:
    """The article as a Markdown document: the title as a heading, an optional source line, the body."""
    heading = f"# {escape_markdown(' '.join(title.split()))}\n\n" if title and title.strip() else ""
    link = markdown_url(source)
    origin = f"Source: [{escape_markdown(source or '')}]({link})\n\n" if link else ""
    return heading + origin + html_to_markdown(html)
