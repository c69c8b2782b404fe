"""Article metadata: title, byline, published date, site name, excerpt, language, direction, lead image.

The rules are Mozilla Readability.js's (`_getJSONLD`, `_getArticleMetadata`, `_getArticleTitle`,
`_checkByline`, the excerpt from the article's first paragraph, the direction from the article's
ancestors), so that a reader view built on us shows what Firefox's reader view shows:

1. JSON-LD: the first schema.org object of an article type (`@context` schema.org, `@graph`
   searched) gives title (name or headline, the one closer to <title>), byline (author names),
   excerpt (description), site name (publisher name) and published date;
2. <meta>: `property` values matching `(article|dc|dcterm|og|twitter):(author|creator|description|
   published_time|title|site_name)` (each of several space-separated properties counts), else `name`
   values like `author`, `description`, `dc.creator`, `parsely-author`, `twitter:title`; a later
   tag overrides an earlier one of the same key; entities left encoded in the content are decoded;
3. the page: <title> cut at its site-name separator or the lone <h1>; the byline from the first
   element marked as one (rel=author, itemprop=author, class or id byline/author/dateline/
   writtenby), read from its itemprop=name part when it has one, skipping elements a reader drops
   (sidebars, footers, menus ...); the excerpt from the first paragraph of the extracted article;
   the direction from the nearest `dir` attribute above the article.

The lead image (not part of Readability.js) comes from JSON-LD `image`, og:image, twitter:image,
`link rel=image_src`, else the first image of the article.

Beyond Readability.js, for the modern web: `author` is the person's name alone (`author_names`:
JSON-LD `author` as object, list or Text, a thread's starter, `<meta>`, link previews' "Written
by", author markup and bylines shown around the headline; a person before an organisation, never
a reviewer's or a commenter's name), and `date` the day of publication (`dates.py`).

The steps live beside this module: `tags.py` (the `<meta>` maps and the JSON-LD article object),
`title.py`, `authors.py` (byline and author names), `dates.py`, `pagination.py`; this module
holds `Metadata`, the excerpt, direction and lead image, and `extract_metadata`, which runs them.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from ..parse.document import OPEN, TEXT, Document, indices_of
from ..parse.text import squash
from ..views.facts import web_url
from .authors import author_names, page_byline_element, thread_starter
from .dates import parse_day, publication_day
from .pagination import next_page_url
from .tags import IMAGE_KEYS, clean_value, json_ld_article, ld_author, meta_maps, unescape
from .title import clean_title, heading_over_site_name, ld_title, without_site_name

#: Phrasing content (Readability.js PHRASING_ELEMS plus a, del, ins): a run of these inside a <div>
#: is a paragraph; any other tag ends one.
_PHRASING = frozenset(
    "abbr audio b bdo br button cite code data datalist dfn em embed i img input kbd label mark math "
    "meter noscript object output progress q ruby samp script select small span strong sub sup "
    "textarea time var wbr a del ins font u s strike big tt".split()
)


@dataclass(frozen=True, slots=True)
class Metadata:
    """What a reader view shows around the content."""

    title: str = ""
    byline: str | None = None
    published: str | None = None
    site_name: str | None = None
    excerpt: str | None = None
    image: str | None = None
    lang: str | None = None
    dir: str | None = None
    next_page_url: str | None = None  # the next page of a multi-page article (pagination.py)
    date: str | None = None  # the day of publication, YYYY-MM-DD, from every source (dates.py)
    author: str | None = None  # the author's name(s) alone: no "By", date, role or site (author_names)


# --- The article: excerpt, direction, lead image --------------------------------------------------


def _selected_text_tokens(doc: Document, selection: np.ndarray | None) -> np.ndarray:
    tokens = doc.tokens
    mask = (tokens.kind == TEXT) & (tokens.chars > 0)
    if selection is not None and len(selection) == len(mask):
        mask &= selection
    else:
        mask &= doc.body_mask
    return np.flatnonzero(mask)


def _block_ancestor(doc: Document, element: int) -> int:
    """The nearest element at or above `element` that is not phrasing content."""
    while element >= 0 and doc.tag[element] in _PHRASING:
        element = int(doc.parent[element])
    return element


def _run_text(doc: Document, token: int, block: int) -> tuple[str, int, bool]:
    """The phrasing run around a text token inside `block`: its text, last token, and whether a
    double <br> opened it (Readability.js turns what follows a <br><br> into a paragraph)."""
    tokens = doc.tokens
    first, last = int(doc.start[block]) + 1, int(doc.end[block]) - 1

    def boundary(i: int) -> bool:
        return tokens.kind[i] != TEXT and doc.tag[int(tokens.element[i])] not in _PHRASING

    def double_br(i: int, step: int) -> bool:
        """Token i is a <br> with another <br> next to it (whitespace between allowed)."""
        j = i + step
        while first <= j <= last and tokens.kind[j] == TEXT and tokens.chars[j] == 0:
            j += step
        return first <= j <= last and tokens.kind[j] == OPEN and doc.tag[int(tokens.element[j])] == "br"

    start = token
    after_breaks = False
    while start - 1 >= first and not boundary(start - 1):
        i = start - 1
        if tokens.kind[i] == OPEN and doc.tag[int(tokens.element[i])] == "br" and double_br(i, -1):
            after_breaks = True
            break
        start = i
    end = token
    while end + 1 <= last and not boundary(end + 1):
        i = end + 1
        if tokens.kind[i] == OPEN and doc.tag[int(tokens.element[i])] == "br" and double_br(i, 1):
            break
        end = i
    text = "".join(tokens.text[i] for i in range(start, end + 1) if tokens.kind[i] == TEXT)
    return squash(text), end, after_breaks


def first_paragraph(doc: Document, selection: np.ndarray | None = None, text: str = "") -> str | None:
    """The text of the article's first paragraph, as Readability.js takes its excerpt: the first <p>,
    or a run of inline content in a <div> (Readability turns those into paragraphs), or the text
    after a double <br>. Headings, list items and table cells are not paragraphs."""
    tokens = doc.tokens
    candidates = _selected_text_tokens(doc, selection)
    within = squash(text) if selection is None and text else None
    skip_until = -1
    for token in candidates:
        token = int(token)
        if token <= skip_until:
            continue
        owner = int(tokens.element[token])
        block = _block_ancestor(doc, owner)
        if block < 0:
            continue
        if doc.tag[block] == "p":
            paragraph, skip_until = doc.element_text(block), int(doc.end[block])
        else:
            paragraph, skip_until, after_breaks = _run_text(doc, token, block)
            if doc.tag[block] != "div" and not after_breaks:
                continue
        if paragraph and (within is None or paragraph in within):
            return paragraph
    return None


def article_root(doc: Document, selection: np.ndarray | None) -> int:
    """The smallest element holding all selected text (the body without a selection), or -1."""
    texts = _selected_text_tokens(doc, selection)
    if not len(texts):
        return doc.tag.index("body") if "body" in doc.tag else -1
    a, b = int(doc.tokens.element[texts[0]]), int(doc.tokens.element[texts[-1]])
    ancestors = set()
    while a >= 0:
        ancestors.add(a)
        a = int(doc.parent[a])
    while b >= 0 and b not in ancestors:
        b = int(doc.parent[b])
    return b


def article_dir(doc: Document, root: int) -> str | None:
    """The nearest `dir` attribute on the article root or above it (Readability.js's _articleDir)."""
    element = root
    while element >= 0:
        value = clean_value(doc.elements[element].attributes.get("dir"))
        if value:
            return value
        element = int(doc.parent[element])
    return doc.dir if root < 0 else None


def lead_image(
    doc: Document, ld: dict[str, Any], meta: dict[str, str], selection: np.ndarray | None
) -> str | None:
    """JSON-LD image, og:image, twitter:image, link rel=image_src, else the article's first image:
    the first of them that is an http(s) URL once made absolute (`facts.web_url`; a `javascript:`
    or `data:` og:image gives way to the next)."""
    image = ld.get("image")
    if isinstance(image, list):
        image = image[0] if image else None
    url = web_url(doc, clean_value(image.get("url")) if isinstance(image, dict) else clean_value(image))
    url = url or next(
        (found for key in IMAGE_KEYS if key in meta and (found := web_url(doc, meta[key]))), None
    )
    if not url:
        link = doc.tree.css_first('link[rel~="image_src" i][href]')
        url = web_url(doc, clean_value(link.attributes.get("href"))) if link is not None else None
    if not url:
        within = selection if selection is not None and len(selection) == len(doc.tokens) else doc.body_mask
        # The <img> elements in document order whose start tag is within (for speed, rather than
        # every start tag of the article).
        for element in indices_of(doc.tag, "img"):
            if within[doc.start[element]]:
                attrs = doc.elements[element].attributes
                url = web_url(doc, clean_value(attrs.get("src") or attrs.get("data-src")))
                if url:
                    break
    return url


_T = TypeVar("_T")


def _once(read: Callable[[], _T]) -> Callable[[], _T]:
    """`read`, called the first time the function given back is, and its answer kept. For speed:
    `functools.cache` makes a wrapper with its own dict and copies attributes onto it (4 us, twice
    per page)."""
    answer: list[_T] = []

    def once() -> _T:
        if not answer:
            answer.append(read())
        return answer[0]

    return once


def extract_metadata(doc: Document, text: str = "", selection: np.ndarray | None = None) -> Metadata:
    """Metadata from JSON-LD, <meta> and the page, most trusted source first.

    `selection` (the extraction's token mask) places the article in the page: its first paragraph
    is the excerpt when no description is given, its ancestors give `dir`, its first image the lead
    image. Without it the excerpt is the first paragraph of the body found in `text`.
    """
    ld = json_ld_article(doc)
    meta, other_meta, contents = meta_maps(doc)
    # read once, when first asked (most pages never ask): Readability's byline element, the
    # thread's first post
    byline_element = _once(functools.partial(page_byline_element, doc))
    starter = _once(functools.partial(thread_starter, doc))

    def first(*keys: str) -> str | None:
        for key in keys:
            if key in meta:
                return meta[key]
        return None

    title = ld_title(ld, doc) or first(
        "dc:title",
        "dcterm:title",
        "og:title",
        "weibo:article:title",
        "weibo:webpage:title",
        "title",
        "twitter:title",
        "parsely-title",
    )
    if not title:
        title = clean_title(doc.title, doc)
    article_author = meta.get("article:author")
    if article_author and re.match(r"^[a-z][a-z0-9+.-]*://", article_author, re.I):
        article_author = None
    byline = (
        ld_author(ld.get("author"))
        or first("dc:creator", "dcterm:creator", "author", "parsely-author")
        or article_author
        or (found[1] if (found := byline_element()) else None)
    )
    published = clean_value(ld.get("datePublished")) or first("article:published_time", "parsely-pub-date")
    publisher = ld.get("publisher")
    site_name = (clean_value(publisher.get("name")) if isinstance(publisher, dict) else None) or first(
        "og:site_name"
    )
    excerpt = clean_value(ld.get("description")) or first(
        "dc:description",
        "dcterm:description",
        "og:description",
        "weibo:article:description",
        "weibo:webpage:description",
        "description",
        "twitter:description",
    )
    root = article_root(doc, selection)
    if not excerpt:
        excerpt = first_paragraph(doc, selection, text)
    title = clean_value(unescape(title)) or ""
    title = without_site_name(title, doc, clean_value(unescape(site_name)))
    title = heading_over_site_name(
        title,
        doc,
        [
            clean_value(unescape(site_name)),
            meta.get("og:site_name"),
            contents.get("application-name"),
            contents.get("apple-mobile-web-app-title"),
        ],
    )
    return Metadata(
        title=title,
        byline=clean_value(unescape(byline)),
        published=clean_value(unescape(published)),
        site_name=clean_value(unescape(site_name)),
        excerpt=clean_value(unescape(excerpt)),
        image=lead_image(doc, ld, other_meta, selection),
        lang=doc.lang,
        dir=article_dir(doc, root),
        next_page_url=web_url(doc, next_page_url(doc, selection)),  # http(s) only, as `image`
        # the byline's own date ("By Joshua Sokol May 20, 2019") last: a page that states its day
        # nowhere else still shows it in the reader's header
        date=publication_day(
            doc, lambda: (post.date_text or post.date) if (post := starter()) else None, contents
        )
        or parse_day(byline),
        author=author_names(
            doc, ld, meta, clean_value(unescape(site_name)), byline, starter, byline_element, contents
        ),
    )
