"""The next page of a multi-page article: `next_page_url(doc, selection)`.

In order:
1. `<link rel="next">` or `<a rel="next">` (what CMSs emit for paginated articles), unless it leads
   to comments, to another site or back to this page;
2. otherwise the best link that reads as "next page": its text says next ("Next", "Next ›", "»",
   "Weiter", "Suivant", ...; but not "next article/post/story") or is the number after the current
   page, it sits in a pagination container (class/id pagination, pager, page-numbers, ...) or after
   the article, and, above all, its URL is this article's URL with a page marker for a later page
   (`?page=2`, `?p=2`, `/2/`, `/page/2/`, `-2.html`, `/2.html`). That last test is what keeps
   links to other articles, listings and comment pages (`/comment-page-2/`, `#comments`) out.

Without the page's URL only rel=next is trusted (a link to "page 2" cannot be told from the
site's own listing pages then).
"""

from __future__ import annotations

import functools
import re
from typing import Any
from urllib.parse import parse_qsl, urlencode, urljoin, urlsplit, urlunsplit

import numpy as np

from ..parse.document import Document, indices_of
from ..parse.text import squash

_NEXT_TEXT = re.compile(
    r"^(?:next(?:\s+page)?|more|continue(?:\s+reading)?|weiter|nächste(?:\s+seite)?|suivant(?:e)?|"
    r"page\s+suivante|siguiente|próxima|successiva|volgende|следующая|下一页|次へ|次のページ)?"
    r"\s*(?:[›»→>]+|&gt;)?\s*$",
    re.I,
)
_NOT_PAGE = re.compile(
    r"article|post|story|stories|entry|chapter|video|gallery|comment|older|newer|episode|slide", re.I
)
_PAGINATION = re.compile(
    r"paginat|pager|paging|page-?nav|page-?numbers|pagelinks|pages|nav-links|multipage", re.I
)
_DIGIT = re.compile(r"\d")
_ARROWS = re.compile(r"[›»→>]+")
_COMMENTS = re.compile(r"comment|respond|reply|disqus", re.I)
#: Characters (not counting spaces) a pagination link's text has at most: "2", "Next ›", "Continue
#: reading »", "Page suivante" are far shorter; a longer text is a headline or a sentence.
MAX_LINK_CHARS = 32
_PAGE_PARAMS = ("page", "p", "pg", "paged", "pagina", "seite", "pagenum", "pn", "pagenumber")
_PATH_MARKERS = (
    re.compile(r"/page/(\d{1,3})/?$", re.I),
    re.compile(r"/(\d{1,2})/?$"),
    re.compile(r"[-_,](\d{1,2})(\.\w{2,5})$"),
    re.compile(r"/(\d{1,2})(\.\w{2,5})$"),
)


@functools.lru_cache(maxsize=256)
def page_marker(url: str) -> tuple[str, int]:
    """The URL without its page marker (scheme, host, path, other query, no fragment) and the page
    number (1 when there is none). Cached, for speed: the page's own URL is compared with every
    candidate, and a candidate's marker is read twice."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    number = 1
    kept = []
    for key, value in query:
        if key.lower() in _PAGE_PARAMS and value.isdecimal():  # what int() reads ("²" is a digit too)
            number = int(value)
        else:
            kept.append((key, value))
    path = parts.path
    if number == 1:
        for pattern in _PATH_MARKERS:
            found = pattern.search(path)
            if found:
                number = int(found.group(1))
                suffix = found.group(2) if pattern.groups > 1 else "/"
                path = path[: found.start()] + (suffix if suffix != "/" else "/")
                break
    path = path.rstrip("/") or "/"
    stem = urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, urlencode(kept), ""))
    return stem, number


def _link_text(node: Any) -> str:
    text = squash(node.text() or "")
    if not text:
        attrs = node.attributes
        text = (attrs.get("aria-label") or attrs.get("title") or "").strip()
    return text


def _in_pagination(node: Any, depth: int = 4) -> bool:
    current = node
    for _ in range(depth + 1):
        if current is None:
            return False
        attrs = current.attributes
        match = f"{attrs.get('class') or ''} {attrs.get('id') or ''} {attrs.get('aria-label') or ''}"
        if current.tag == "nav" and "page" in match.lower():
            return True
        if _PAGINATION.search(match):
            return True
        current = current.parent
    return False


def _absolute(doc: Document, href: str | None) -> str | None:
    if not href:
        return None
    href = href.strip()
    if not href or href.startswith(("#", "javascript:", "mailto:")):
        return None
    base = doc.base_url or doc.url
    try:
        url = urljoin(base, href) if base else href
    except ValueError:
        return None
    return url.split("#", 1)[0] if "#" in url else url


def _acceptable(url: str, here: str | None) -> bool:
    """Not a comments link, same site, not this very page."""
    parts = urlsplit(url)
    if _COMMENTS.search(parts.path) or _COMMENTS.search(parts.query):
        return False
    if here is None:
        return True
    this = urlsplit(here)
    if parts.scheme not in ("http", "https", "") or (
        parts.netloc and parts.netloc.lower() != this.netloc.lower()
    ):
        return False
    return page_marker(url) != page_marker(here)


def _may_lead_on(text: str) -> bool:
    """Whether a link's text can be a next page's: a number, "next" in a language, arrows."""
    return text.isdecimal() or bool(_NEXT_TEXT.match(text))  # arrows alone match _NEXT_TEXT too


def next_page_url(doc: Document, selection: np.ndarray | None = None) -> str | None:
    """The URL of the next page of this article, or None (see the module docstring)."""
    here = doc.url
    if here:
        here = here.split("#", 1)[0]
    # For speed, Lexbor picks the links whose rel holds "next" in any case (a superset of the test
    # below: no character outside ASCII lower-cases to n, e, x or t); most pages carry dozens of rels.
    for node in doc.tree.css('link[rel*="next" i][href], a[rel*="next" i][href]'):
        if "next" in (node.attributes.get("rel") or "").lower().split():
            url = _absolute(doc, node.attributes.get("href"))
            if (
                url
                and _acceptable(url, here)
                and not _NOT_PAGE.search(_link_text(node) if node.tag == "a" else "")
            ):
                return url
    if not here:
        return None
    stem_here, page_here = page_marker(here)
    best: tuple[int, str] | None = None
    # For speed, only the links with short text are read (a page has a hundred links, most of them
    # with a headline or a menu entry as their text), from the Document's elements, not a new query.
    anchors = np.asarray(indices_of(doc.tag, "a"), dtype=np.int64)
    for index in anchors[doc.subtree_chars[anchors] <= MAX_LINK_CHARS].tolist():
        # For speed, the link's text as the Document read it rules most links out before its node
        # is touched (a menu entry, a date): the decision below reads the node's own text.
        seen = doc.element_text(index)
        if seen and not _may_lead_on(seen):
            continue
        node = doc.elements[index]
        # One attribute, not the whole dict: for speed. `.get`, as an SVG <a xlink:href> has no "href".
        href = node.attrs.get("href") or ""
        if not _DIGIT.search(href):  # every page marker has a number: skip the rest cheaply
            continue
        text = _link_text(node)
        if text.isdecimal():  # not isdigit: int() cannot read "²", a footnote link
            if int(text) != page_here + 1:
                continue
            score = 30
        elif text and _NEXT_TEXT.match(text) and text.strip("›»→> ").strip():
            score = 50
        elif text and _ARROWS.fullmatch(text):
            score = 40
        else:
            continue
        url = _absolute(doc, href)
        if not url or not _acceptable(url, here):
            continue
        stem, number = page_marker(url)
        if number <= page_here or stem != stem_here:
            continue
        if number == page_here + 1:
            score += 25
        if _in_pagination(node):
            score += 25
        if score >= 50 and (best is None or score > best[0]):
            best = (score, url)
    return best[1] if best else None
