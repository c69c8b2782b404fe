"""The one pipeline from page bytes to an `Article`, used by every caller.

The library (`readerproxy.extract`), the command line, the reader server and proxy mode (through
`reader.Reader`), the evaluation runner and the benchmarks all call `process`. It reads as its
phases, each a named function that can also be called on its own:

1. `decode`: bytes to text (gzip undone, charset from BOM, HTTP header, `<meta>`, a detector);
2. `parse`: text to the one `Document` (cleaned DOM and its linear view), with the browser's layout
   snapshot aligned to its elements when the page was rendered (`layout.align`);
3. `run_extractor`: the chosen algorithm, `Document -> Extraction`;
4. `render`: the selection to plain text, the `Article` (ended by a product description the page
   states only in its JSON-LD, `structured.missing_description`); its sanitised HTML
   (`render_fragment`), metadata, page kind, facts, posts, comments and items are made from the Document
   when first asked, and so are the view (`view.decide_view`) and the content around its items
   or posts (`view_surroundings`).
"""

from __future__ import annotations

import functools
import html as html_lib
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .article import Article
from .extraction import Extraction, Extractor, get_extractor
from .kind.pagekind import page_kind
from .kind.readerable import is_probably_readerable
from .metadata.metadata import extract_metadata
from .metadata.structured import missing_description
from .output import LinkRewriter, render_html, render_text
from .parse.decoding import decode_html, maybe_gunzip
from .parse.document import Document
from .parse.document import parse as parse_document
from .parse.layout import LayoutSnapshot, align
from .views.facts import page_facts
from .views.listing import listing_cards, listing_items
from .views.thread import comments_for, post_parts, thread_for
from .views.view import NOTHING_AROUND, Around, around_elements


def decode(source: str | bytes, content_type: str | None = None) -> str:
    """Page bytes to text (gzip accepted); strings pass through."""
    if isinstance(source, str):
        return source
    return decode_html(maybe_gunzip(bytes(source)), content_type).text


def parse(text: str, url: str | None = None) -> Document:
    """Text to the Document every extractor reads."""
    return parse_document(text, url)


def resolve(
    algorithm: str | Extractor[Any],
    params: Mapping[str, Any] | object | None = None,
) -> tuple[Extractor[Any], object]:
    """The extractor and its validated parameters: names and overrides are checked here (ValueError)."""
    extractor = get_extractor(algorithm) if isinstance(algorithm, str) else algorithm
    if params is None or (isinstance(params, Mapping) and not params):
        # For speed: `make_params` reads the parameter class's type hints, which costs more than
        # rendering a page; without overrides it would make exactly the defaults.
        return extractor, extractor.defaults()
    if isinstance(params, Mapping):
        return extractor, extractor.make_params(params)
    if not isinstance(params, extractor.params_type):
        raise TypeError(f"parameters for {extractor.name!r} must be {extractor.params_type.__name__}")
    return extractor, params


def run_extractor(doc: Document, extractor: Extractor[Any], params: object) -> Extraction:
    """The algorithm on the Document (timed by the extractor)."""
    return extractor.run(doc, params)


def render(
    doc: Document,
    extraction: Extraction,
    *,
    rewrite_link: LinkRewriter | None = None,
    images: bool = True,
    timings: Mapping[str, float] | None = None,
) -> Article:
    """An extraction of a parsed document as an Article: its text now, the rest when asked."""
    began = time.perf_counter()
    text = render_text(doc, extraction.selection)
    # bound to the text as extracted, before the JSON-LD description is added to it
    read_metadata = functools.partial(extract_metadata, doc, text, selection=extraction.selection)
    supplement = missing_description(doc)
    if supplement:
        text = "\n\n".join([text, *supplement] if text else supplement)
    rendered = time.perf_counter()
    return Article(
        text=text,
        algorithm=extraction.algorithm,
        extraction=extraction,
        url=doc.url,
        decide_metadata=read_metadata,
        decide_html=functools.partial(
            render_fragment, doc, extraction.selection, supplement, rewrite_link=rewrite_link, images=images
        ),
        decide_readability=functools.partial(is_probably_readerable, doc),
        decide_kind=functools.partial(page_kind, doc, extraction.selection),
        decide_facts=functools.partial(page_facts, doc, text),
        decide_posts=functools.partial(thread_for, doc, rewrite_link=rewrite_link, images=images),
        decide_comments=functools.partial(
            comments_for, doc, extraction.selection, rewrite_link=rewrite_link, images=images
        ),
        decide_items=functools.partial(listing_items, doc),
        decide_around=functools.partial(
            view_surroundings, doc, extraction.selection, rewrite_link=rewrite_link, images=images
        ),
        timings={
            **(timings or {}),
            "extract": round(extraction.elapsed_ms, 3),
            "render": round((rendered - began) * 1000, 3),
        },
    )


def render_fragment(
    doc: Document,
    selection: np.ndarray,
    supplement: list[str],
    *,
    rewrite_link: LinkRewriter | None = None,
    images: bool = True,
) -> str:
    """The selection as sanitised HTML (`output.render_html`), ended by the product description the
    page states only in its JSON-LD (`supplement`, the lines `render` added to the text)."""
    fragment = render_html(doc, selection, rewrite_link=rewrite_link, images=images)
    return fragment + "".join(f"<p>{html_lib.escape(line, quote=False)}</p>" for line in supplement)


def view_surroundings(
    doc: Document,
    selection: np.ndarray,
    view: str,
    *,
    rewrite_link: LinkRewriter | None = None,
    images: bool = True,
) -> Around:
    """The extracted content before and after the items of a listing view or the posts of a thread
    view (`view.around_elements`), so the view hides nothing the extraction found; nothing for
    the other views, and when the items or posts are not the page's markup (JSON-LD), whose place
    among the content is unknown."""
    elements: list[int] | tuple[int, ...] | None = None
    if view == "listing":
        elements = listing_cards(doc)
    elif view == "thread":
        parts = post_parts(doc, True)
        elements = parts.posts if parts is not None else None
    if not elements:
        return NOTHING_AROUND
    return around_elements(doc, selection, elements, rewrite_link=rewrite_link, images=images)


@dataclass(slots=True)
class Processed:
    """Everything the pipeline made for one page: most callers want only `article`; the overlay,
    compare and the blocks JSON also read the Document and the Extraction."""

    text: str
    doc: Document
    extraction: Extraction
    article: Article
    extractor: Extractor[Any]
    params: object  # the extractor's validated parameters


def process_page(
    source: str | bytes,
    *,
    url: str | None = None,
    content_type: str | None = None,
    algorithm: str | Extractor[Any] = "auto",
    params: Mapping[str, Any] | object | None = None,
    rewrite_link: LinkRewriter | None = None,
    images: bool = True,
    layout: LayoutSnapshot | None = None,
) -> Processed:
    """Bytes (or text) of a page through every phase: decode, parse, extract, render.

    `layout` is the browser's snapshot of this very text (`browser.RenderedPage`), which algorithms
    that need the browser (`visual`) read.
    """
    extractor, checked = resolve(algorithm, params)
    began = time.perf_counter()
    text = decode(source, content_type)
    decoded = time.perf_counter()
    doc = parse(text, url)
    if layout is not None:
        doc.layout = align(layout, doc)
    parsed = time.perf_counter()
    extraction = run_extractor(doc, extractor, checked)
    timings = {"decode": round((decoded - began) * 1000, 3), "parse": round((parsed - decoded) * 1000, 3)}
    article = render(doc, extraction, rewrite_link=rewrite_link, images=images, timings=timings)
    return Processed(text, doc, extraction, article, extractor, checked)


def process(
    source: str | bytes,
    *,
    url: str | None = None,
    content_type: str | None = None,
    algorithm: str | Extractor[Any] = "auto",
    params: Mapping[str, Any] | object | None = None,
    rewrite_link: LinkRewriter | None = None,
    images: bool = True,
    layout: LayoutSnapshot | None = None,
) -> Article:
    """Bytes (or text) of a page to its Article (`process_page` when you need more than the Article)."""
    return process_page(
        source,
        url=url,
        content_type=content_type,
        algorithm=algorithm,
        params=params,
        rewrite_link=rewrite_link,
        images=images,
        layout=layout,
    ).article
