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
"""

from __future__ import annotations

import html as html_lib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .dates import ld_objects, publication_day
from .document import OPEN, TEXT, Document, indices_of
from .pagination import next_page_url
from .readability_rules import UNLIKELY_ROLES, unlikely_by_class_id
from .text import squash

_WS = re.compile(r"\s+")
#: Readability.js's jsonLdArticleTypes, alternation unanchored as there (a type containing one of
#: these names counts).
_ARTICLE_TYPES = re.compile(
    r"^Article|AdvertiserContentArticle|NewsArticle|AnalysisNewsArticle|AskPublicNewsArticle|"
    r"BackgroundNewsArticle|OpinionNewsArticle|ReportageNewsArticle|ReviewNewsArticle|Report|"
    r"SatiricalArticle|ScholarlyArticle|MedicalScholarlyArticle|SocialMediaPosting|BlogPosting|"
    r"LiveBlogPosting|DiscussionForumPosting|TechArticle|APIReference$"
)
_SCHEMA_ORG = re.compile(r"^https?://schema\.org/?$")
_PROPERTY = re.compile(
    r"\s*(article|dc|dcterm|og|twitter)\s*:\s*(author|creator|description|published_time|title|site_name)\s*",
    re.I,
)
_NAME = re.compile(
    r"^\s*(?:(dc|dcterm|og|twitter|parsely|weibo:(article|webpage))\s*[-.:]\s*)?"
    r"(author|creator|pub-date|description|title|site_name)\s*$",
    re.I,
)
_BYLINE_HINT = re.compile(r"byline|author|dateline|writtenby|p-author", re.I)
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


def _clean(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    return squash(value) or None


def unescape(value: str | None) -> str | None:
    """Decode entities still encoded in a value (`&amp;#x1F62D;` in the source arrives as `&#x1F62D;`)."""
    if value is None or "&" not in value:
        return value
    return html_lib.unescape(value)


def meta_values(doc: Document) -> dict[str, str]:
    """Readability.js's <meta> map: normalised key -> content (a later tag of the same key wins)."""
    return meta_maps(doc)[0]


#: The <meta> keys the lead image is read from, in order of trust.
IMAGE_KEYS = ("og:image", "og:image:url", "twitter:image", "twitter:image:src")


def meta_maps(doc: Document) -> tuple[dict[str, str], dict[str, str]]:
    """Readability.js's <meta> map (`meta_values`), and the first content of each of `IMAGE_KEYS`
    in <meta property|name|itemprop> (for the lead image). One walk over the <meta> tags serves
    both, for speed."""
    values: dict[str, str] = {}
    images: dict[str, str] = {}
    for attrs in doc.meta:
        if "content" not in attrs:
            continue
        raw = attrs.get("content")
        prop, name = attrs.get("property"), attrs.get("name")
        # Every word of the three attributes names this one content.
        words = f"{prop or ''} {name or ''} {attrs.get('itemprop') or ''}".lower()
        if "image" in words:  # for speed: other words cannot be an image key
            for word in words.split():
                if word in IMAGE_KEYS and word not in images and (cleaned := _clean(raw)):
                    images[word] = cleaned
        content = (raw or "").strip()
        if not content:
            continue
        matched = False
        if prop:
            found = _PROPERTY.search(prop)
            if found:
                matched = True
                values[_WS.sub("", found.group(0).lower())] = content
        if not matched and name and _NAME.match(name):
            values[_WS.sub("", name.lower()).replace(".", ":")] = content
    return values, images


def _is_article_type(kind: Any) -> bool:
    kinds = kind if isinstance(kind, list) else [kind]
    return any(isinstance(k, str) and _ARTICLE_TYPES.search(k) for k in kinds)


_CDATA = re.compile(r"^\s*<!\[CDATA\[|\]\]>\s*$")


def json_ld_article(doc: Document) -> dict[str, Any]:
    """The first schema.org article-like object in the page's JSON-LD, or {} (Readability's rules)."""
    for raw in doc.json_ld:
        # The regex scans the whole text, slowly: for speed, only when a CDATA mark is there at all.
        text = _CDATA.sub("", raw) if "<![CDATA[" in raw or "]]>" in raw else raw
        try:
            parsed = json.loads(text)
        except (ValueError, RecursionError):
            continue
        if isinstance(parsed, list):
            parsed = next(
                (it for it in parsed if isinstance(it, dict) and _is_article_type(it.get("@type"))), None
            )
        if not isinstance(parsed, dict):
            continue
        context = parsed.get("@context")
        if isinstance(context, dict):
            context = context.get("@vocab")
        if not isinstance(context, str) or not _SCHEMA_ORG.match(context):
            continue
        graph = parsed.get("@graph")
        if not parsed.get("@type") and isinstance(graph, list):
            parsed = next(
                (it for it in graph if isinstance(it, dict) and _is_article_type(it.get("@type"))), None
            )
        if isinstance(parsed, dict) and _is_article_type(parsed.get("@type")):
            return parsed
    return {}


def _ld_author(value: Any) -> str | None:
    if isinstance(value, dict):
        return _clean(value.get("name"))
    if (
        isinstance(value, list)
        and value
        and isinstance(value[0], dict)
        and isinstance(value[0].get("name"), str)
    ):
        names = [n for n in (_clean(v.get("name")) for v in value if isinstance(v, dict)) if n]
        return ", ".join(names) or None
    return None


# --- Title ----------------------------------------------------------------------------------------

_SEPARATORS = r"|\-–—\\/>»"
_SEPARATOR = re.compile(rf"\s[{_SEPARATORS}]\s")
_HIERARCHICAL = re.compile(r"\s[\\/>»]\s")
_FIRST_PART = re.compile(rf"^[^{_SEPARATORS}]*[{_SEPARATORS}]")


def _word_count(text: str) -> int:
    return len(re.split(r"\s+", text))


def clean_title(raw: str, doc: Document) -> str:
    """Readability.js's _getArticleTitle: cut the site name at a separator, or use the lone <h1>."""
    original = raw.strip()
    title = original
    hierarchical = False
    separators = list(_SEPARATOR.finditer(original))
    if separators:
        hierarchical = bool(_HIERARCHICAL.search(original))
        title = original[: separators[-1].start()]
        if _word_count(title) < 3:
            title = _FIRST_PART.sub("", original, count=1)
    elif ": " in title:
        headings = {h.text().strip() for h in doc.tree.css("h1, h2")}
        if title not in headings:
            title = original[original.rfind(":") + 1 :]
            if _word_count(title) < 3:
                title = original[original.find(":") + 1 :]
            elif _word_count(original[: original.find(":")]) > 5:
                title = original
    elif len(title) > 150 or len(title) < 15:
        h1s = doc.tree.css("h1")
        if len(h1s) == 1:
            title = _clean(h1s[0].text()) or title
    title = squash(title)
    words = _word_count(title)
    if words <= 4 and (not hierarchical or words != _word_count(_SEPARATOR.sub("", original)) - 1):
        title = original
    return title


def _similarity(a: str, b: str) -> float:
    """Readability.js's _textSimilarity: 1 - share of b's (joined) words not found in a."""
    tokens_a = [t for t in re.split(r"\W+", a.lower()) if t]
    tokens_b = [t for t in re.split(r"\W+", b.lower()) if t]
    if not tokens_a or not tokens_b:
        return 0.0
    known = set(tokens_a)
    unique_b = [t for t in tokens_b if t not in known]
    return 1 - len(" ".join(unique_b)) / len(" ".join(tokens_b))


def _ld_title(ld: dict[str, Any], doc: Document) -> str | None:
    """JSON-LD name or headline; when both exist and differ, the headline if only it matches <title>."""
    name, headline = ld.get("name"), ld.get("headline")
    if isinstance(name, str) and isinstance(headline, str) and name != headline:
        title = clean_title(doc.title, doc)
        if _similarity(headline, title) > 0.75 and not _similarity(name, title) > 0.75:
            return _clean(headline)
        return _clean(name)
    if isinstance(name, str):
        return _clean(name)
    return _clean(headline) if isinstance(headline, str) else None


_SITE_SEPARATOR = re.compile(r"\s+[|\-–—·•:»/]\s+|\s*[|·•»]\s*")


def _site_words(doc: Document, site_name: str | None) -> set[str]:
    """Lower-case word sets that name the site: its og:site_name and its host's labels."""
    words: set[str] = set()
    if site_name:
        words.add(re.sub(r"\W+", "", site_name.casefold()))
    host = (doc.url or "").split("//", 1)[-1].split("/", 1)[0].split(":", 1)[0].casefold()
    for label in host.split("."):
        if label not in ("www", "com", "org", "net", "co", "uk", "io", "de", "blog", "en"):
            words.add(label)
    return {w for w in words if len(w) > 2}


def without_site_name(title: str, doc: Document, site_name: str | None) -> str:
    """The title without the site's name at either end, whatever separates them ("X | GraphQL",
    "AWS CloudFormation - X", "X — Greenhouse Studio"): a part is the site's when its letters hold
    the site's name or a label of the page's host (or the reverse)."""
    parts = _SITE_SEPARATOR.split(title)
    if len(parts) < 2:
        return title
    site = _site_words(doc, site_name)

    def is_site(part: str) -> bool:
        letters = re.sub(r"\W+", "", part.casefold())
        return bool(letters) and any(w in letters or letters in w for w in site)

    separators = [m.group(0) for m in _SITE_SEPARATOR.finditer(title)]
    while len(parts) > 1 and is_site(parts[-1]):
        parts.pop()
        separators.pop()
    while len(parts) > 1 and is_site(parts[0]):
        parts.pop(0)
        separators.pop(0)
    kept = parts[0]
    for separator, part in zip(separators, parts[1:], strict=False):
        kept += separator + part
    return kept.strip() or title


def headline(title: str, doc: Document) -> str:
    """The page's own headline when it has one that says the same as the title: the first <h1>
    sharing most of its words with the title (the title is then the headline plus the site's
    name, or a shortened form of it)."""
    for node in doc.tree.css("h1")[:3]:
        text = squash(node.text(separator=" ") or "")
        if not 2 <= len(text) <= 200:
            continue
        if _similarity(title, text) >= 0.6 or _similarity(text, title) >= 0.6:
            return text
    return title


# --- Byline from the page -------------------------------------------------------------------------


_BYLINE_SELECTOR = ", ".join(
    ['[rel="author"]', '[itemprop*="author"]']
    + [
        f'[{attr}*="{hint}" i]'
        for attr in ("class", "id")
        for hint in ("byline", "author", "dateline", "writtenby")
    ]
)


def _dropped(node: Any) -> bool:
    """Whether Readability.js drops this element as an unlikely candidate (its class, id or role)."""
    if node.tag in ("body", "a", "html"):
        return False
    attrs = node.attributes
    if attrs.get("role") in UNLIKELY_ROLES:
        return True
    match = f"{attrs.get('class') or ''} {attrs.get('id') or ''}"
    if not unlikely_by_class_id(match):
        return False
    above = node.parent
    while above is not None:
        if above.tag in ("table", "code"):
            return False
        above = above.parent
    return True


def page_byline(doc: Document) -> str | None:
    """Readability.js's _checkByline: the first element marked as a byline (rel=author, itemprop
    author, class or id byline/author/dateline/writtenby) with 1-99 characters of text, read from
    its itemprop=name part if it has one, outside what Readability drops as unlikely first."""
    for node in doc.tree.css(_BYLINE_SELECTOR):
        attrs = node.attributes
        match = f"{attrs.get('class') or ''} {attrs.get('id') or ''}"
        if not (
            attrs.get("rel") == "author"
            or "author" in (attrs.get("itemprop") or "")
            or _BYLINE_HINT.search(match)
        ):
            continue
        text = squash(node.text() or "")
        if not 0 < len(text) < 100:
            continue
        above = node.parent
        while above is not None and not _dropped(above):
            above = above.parent
        if above is not None:
            continue
        name = node.css_first('[itemprop*="name"]')
        if name is not None:
            return squash(name.text() or "") or None
        return text
    return None


# --- The author's name alone -----------------------------------------------------------------------

#: Words that open a byline before the name, in several languages ("By", "Written by", "Von", "Par").
_BYLINE_LEAD = re.compile(
    r"^(?i:(?:written|posted|published|reviewed|edited|authored|story|words|text|photos?)\s+)?"
    r"(?i:by|von|par|por|di|door|av|af|przez|автор)(?:\b|(?=[A-Z]))\s*:?\s*"
    r"|^(?i:author|autor|auteur|autore)\b\s*:?\s*",
)
#: Where a byline's name ends: a separator, a date, "Published"/"Updated"/"on <date>", a role line.
_BYLINE_END = re.compile(
    r"\s+[|·•–—]\s*|\s*-\s*(?=\w+\.?\s+\d)|\s+-\s+|\s*[|·•]|\s+(?:on|am|le|el)\s+\w+\.?\s+\d"
    r"|\s+(?:published|updated|last updated|posted|reviewed|fact checked|read time|min read)\b"
    r"|\s*\d{1,4}[./-]\d{1,2}[./-]\d{1,4}",
    re.I,
)
#: Texts that stand where a name should be and are not one.
_NOT_A_NAME = re.compile(
    r"^(?:by|author|authors|the author|about the author|about|admin|administrator|staff|guest|"
    r"anonymous|unknown|posted|written|published|updated|last updated|share|follow|\d+\s*mins?\s+read)$",
    re.I,
)


def person_names(raw: str | None, site: str | None = None) -> str | None:
    """The name(s) in a byline: without "By"/"Written by", and cut where a date, a separator or a
    "Published …" line begins; never a URL, a date, a placeholder ("Author"), or the site's own
    name standing in for a person."""
    if not raw:
        return None
    text = squash(html_lib.unescape(raw))
    if "://" in text or text.startswith("www.") or "@" in text:
        return None
    for _ in range(2):
        text = _BYLINE_LEAD.sub("", text).strip(" :,-–—|")
    end = _BYLINE_END.search(text)
    if end:
        text = text[: end.start()]
    text = text.strip(" :,-–—|·")
    if not text or _NOT_A_NAME.match(text) or len(text) > 80 or len(text.split()) > 10:
        return None
    if sum(ch.isdigit() for ch in text) > 2:  # a date or a count, not a name
        return None
    return text


def _element_author(doc: Document) -> str | None:
    """A name marked up as the author: `rel=author`, `itemprop=author` (its `name` part), or an
    element classed as the author's name, read with spaces between its parts."""
    for node in doc.tree.css(
        '[itemprop~="author"] [itemprop~="name"], [rel~="author"], [itemprop~="author"], '
        '[class*="author-name" i], [class*="author__name" i], [class*="authorname" i], '
        '[class*="byline__name" i], [class*="byline-name" i]'
    ):
        text = node.attributes.get("content") or node.text(separator=" ") or ""
        name = squash(text)
        if 0 < len(name) < 100:
            return name
    return None


def _any_author(value: Any) -> str | None:
    """A JSON-LD `author` as a string too (schema.org allows Text), which Readability.js skips."""
    if isinstance(value, str) and "://" not in value:
        return _clean(value)
    return _ld_author(value)


def author_names(
    doc: Document, ld: dict[str, Any], meta: dict[str, str], site: str | None, byline: str | None
) -> str | None:
    """The author, most trusted source first: the article's JSON-LD `author`, any JSON-LD object's
    `author`, `<meta>` author keys, author markup in the page, then the byline already read
    (`byline`); each cleaned by `person_names`, and the first that is a name wins. The sources are
    read one at a time, for speed: most pages stop at the first."""
    candidates: tuple[Callable[[], str | None], ...] = (
        lambda: _ld_author(ld.get("author")),
        lambda: next((found for item in ld_objects(doc) if (found := _any_author(item.get("author")))), None),
        lambda: meta.get("author"),
        lambda: meta.get("dc:creator"),
        lambda: meta.get("dcterm:creator"),
        lambda: meta.get("parsely-author"),
        lambda: _element_author(doc),
        lambda: byline,
    )
    for candidate in candidates:
        name = person_names(candidate(), site)
        if name:
            return name
    return None


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
        value = _clean(doc.elements[element].attributes.get("dir"))
        if value:
            return value
        element = int(doc.parent[element])
    return doc.dir if root < 0 else None


def lead_image(
    doc: Document, ld: dict[str, Any], meta: dict[str, str], selection: np.ndarray | None
) -> str | None:
    """JSON-LD image, og:image, twitter:image, link rel=image_src, else the article's first image."""
    image = ld.get("image")
    if isinstance(image, list):
        image = image[0] if image else None
    url = _clean(image.get("url")) if isinstance(image, dict) else _clean(image)
    url = url or next((meta[key] for key in IMAGE_KEYS if key in meta), None)
    if not url:
        link = doc.tree.css_first('link[rel~="image_src" i][href]')
        url = _clean(link.attributes.get("href")) if link is not None else None
    if not url:
        within = selection if selection is not None and len(selection) == len(doc.tokens) else doc.body_mask
        # The <img> elements in document order whose start tag is within (for speed, rather than
        # every start tag of the article).
        for element in indices_of(doc.tag, "img"):
            if within[doc.start[element]]:
                attrs = doc.elements[element].attributes
                url = _clean(attrs.get("src") or attrs.get("data-src"))
                if url and not url.startswith("data:"):
                    break
                url = None
    return doc.absolute_url(url) if url else None


def extract_metadata(doc: Document, text: str = "", selection: np.ndarray | None = None) -> Metadata:
    """Metadata from JSON-LD, <meta> and the page, most trusted source first.

    `selection` (the extraction's token mask) places the article in the page: its first paragraph
    is the excerpt when no description is given, its ancestors give `dir`, its first image the lead
    image. Without it the excerpt is the first paragraph of the body found in `text`.
    """
    ld = json_ld_article(doc)
    meta, other_meta = meta_maps(doc)

    def first(*keys: str) -> str | None:
        for key in keys:
            if key in meta:
                return meta[key]
        return None

    title = _ld_title(ld, doc) or first(
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
        _ld_author(ld.get("author"))
        or first("dc:creator", "dcterm:creator", "author", "parsely-author")
        or article_author
        or page_byline(doc)
    )
    published = _clean(ld.get("datePublished")) or first("article:published_time", "parsely-pub-date")
    publisher = ld.get("publisher")
    site_name = (_clean(publisher.get("name")) if isinstance(publisher, dict) else None) or first(
        "og:site_name"
    )
    excerpt = _clean(ld.get("description")) or first(
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
    title = _clean(unescape(title)) or ""
    title = without_site_name(title, doc, _clean(unescape(site_name)))
    return Metadata(
        title=title,
        byline=_clean(unescape(byline)),
        published=_clean(unescape(published)),
        site_name=_clean(unescape(site_name)),
        excerpt=_clean(unescape(excerpt)),
        image=lead_image(doc, ld, other_meta, selection),
        lang=doc.lang,
        dir=article_dir(doc, root),
        next_page_url=next_page_url(doc, selection),
        date=publication_day(doc),
        author=author_names(doc, ld, meta, _clean(unescape(site_name)), byline),
    )
