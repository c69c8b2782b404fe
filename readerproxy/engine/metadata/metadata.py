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
"""

from __future__ import annotations

import functools
import html as html_lib
import itertools
import re
import string
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlsplit

import numpy as np

from ..kind.readability_rules import UNLIKELY_ROLES, unlikely_by_class_id
from ..parse.document import OPEN, TEXT, Document, indices_of
from ..parse.text import join_runs, runs_hit, squash
from ..views.facts import web_url
from ..views.thread import MIN_POSTS, Post, detect_engine, read_thread
from .dates import headline_texts, ld_objects, meta_contents, parse_day, publication_day
from .pagination import next_page_url
from .structured import parsed_json_ld

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


def meta_maps(doc: Document) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    """Readability.js's <meta> map (`meta_values`), the first content of each of `IMAGE_KEYS`
    in <meta property|name|itemprop> (for the lead image), and every key's first content
    (`dates.meta_contents`). One walk over the <meta> tags serves all three, for speed."""
    values: dict[str, str] = {}
    images: dict[str, str] = {}
    contents: dict[str, str] = {}
    for attrs in doc.meta:
        if "content" not in attrs:
            continue
        raw = attrs.get("content")
        if raw:  # as dates.meta_contents
            for attribute in ("property", "name", "itemprop", "http-equiv"):
                if named := attrs.get(attribute):
                    contents.setdefault(named.strip().lower(), raw)
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
        key = _property_key(prop) if prop else None
        if key is None and name:
            key = _name_key(name)
        if key is not None:
            values[key] = content
    return values, images, contents


#: Keys read per distinct `property` or `name` value (pages repeat the same few: "og:title").
_KEY_MEMO_SIZE = 4096


@functools.lru_cache(maxsize=_KEY_MEMO_SIZE)
def _property_key(prop: str) -> str | None:
    """Readability.js's map key for a <meta property> value, or None (`_PROPERTY`)."""
    found = _PROPERTY.search(prop)
    return _WS.sub("", found.group(0).lower()) if found else None


@functools.lru_cache(maxsize=_KEY_MEMO_SIZE)
def _name_key(name: str) -> str | None:
    """Readability.js's map key for a <meta name> value, or None (`_NAME`)."""
    return _WS.sub("", name.lower()).replace(".", ":") if _NAME.match(name) else None


def _is_article_type(kind: Any) -> bool:
    kinds = kind if isinstance(kind, list) else [kind]
    return any(isinstance(k, str) and _ARTICLE_TYPES.search(k) for k in kinds)


def json_ld_article(doc: Document) -> dict[str, Any]:
    """The first schema.org article-like object in the page's JSON-LD, or {} (Readability's rules;
    the scripts parsed once per Document, `structured.parsed_json_ld`)."""
    for parsed in parsed_json_ld(doc):
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


def _letters(text: str) -> str:
    """A name compared by its letters and digits alone, without case ("Vue.js" = "vuejs")."""
    return re.sub(r"\W+", "", text.casefold())


#: The marks of a heading's permalink, which documentation generators write into the heading.
_PERMALINK_MARKS = " ¶#§🔗⚓\u200b"


def _lone_heading(doc: Document) -> str | None:
    """The text of the page's one `<h1>` with text (2 to 200 characters, without a permalink's
    mark), or None when it has none or several."""
    found = None
    for index in indices_of(doc.tag, "h1"):
        text = squash(doc.element_text(index)).strip(_PERMALINK_MARKS)
        if not text:
            continue
        if found is not None:
            return None
        found = text
    return found if found is not None and 2 <= len(found) <= 200 else None


def heading_over_site_name(title: str, doc: Document, site_names: list[str | None]) -> str:
    """The page's one `<h1>` instead of a title that is only the site's name: documentation
    pages give every page the site's og:title ("Vue Router", "Vue.js") while the `<h1>` names the
    topic ("Getting Started").

    A title is the site's name when its letters are those of one of `site_names` (og:site_name,
    the JSON-LD publisher, the application-name), of a label of the page's host, or of the last
    part of the `<title>` split at its separators (where sites put their name) while the parts
    before it say what the `<h1>` says ("Getting Started | Vue Router"). The `<h1>` must be the
    page's only one and name something else (a logo's `<h1>` holding the site's name changes
    nothing), and the page not the site's home page, which its name rightly titles (measured on
    wcxb-dev 2026-12-07: the first part of the `<title>` taken for the brand too, or home pages,
    took more right titles than they gave)."""
    key = _letters(title)
    path = urlsplit(doc.url or "").path if doc.url else ""
    if not key or path.strip("/") == "":  # a site's home page is rightly titled by its name
        return title
    heading = _lone_heading(doc)
    if heading is None or _letters(heading) == key:
        return title
    names = {_letters(name) for name in site_names if name}
    host = (doc.url or "").split("//", 1)[-1].split("/", 1)[0].split(":", 1)[0].casefold()
    names.update(label for label in host.split(".") if len(label) > 2)
    if key not in names:
        parts = [part.strip() for part in _SITE_SEPARATOR.split(doc.title or "") if part.strip()]
        rest = " ".join(parts[:-1])
        if (
            len(parts) < 2
            or _letters(parts[-1]) != key
            or (_similarity(rest, heading) < 0.6 and _similarity(heading, rest) < 0.6)
        ):
            return title
    return heading


# --- Byline from the page -------------------------------------------------------------------------


#: The words whose presence in a class or id (in any ASCII case) marks a byline candidate.
_BYLINE_WORDS = ("byline", "author", "dateline", "writtenby")
_BYLINE_SELECTOR = ", ".join(
    ['[rel="author"]', '[itemprop*="author"]']
    + [f'[{attr}*="{hint}" i]' for attr in ("class", "id") for hint in _BYLINE_WORDS]
)
#: The part of `_BYLINE_SELECTOR` that reads attributes the Document does not keep.
_BYLINE_MARKUP = '[rel="author"], [itemprop*="author"]'
#: ASCII upper case to lower case only, as CSS's `i` flag compares (`str.lower` maps more).
_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


def _holding(values: list[str], words: tuple[str, ...]) -> set[str]:
    """The `values` (class or id values, none empty) that hold one of `words` (lower-case) in any
    ASCII case, as CSS's `[class*=WORD i]` tests. For speed, the values are joined, lower-cased
    once (`text.join_runs`) and searched with `str.find`: about 3.5x faster than a memoised
    lower-casing and word loop per value, which it replaced on 2026-12-01 (wcxb-dev pages, 211
    distinct values at the median)."""
    lowered = join_runs(values).translate(_ASCII_LOWER)
    hits: list[int] = []
    for word in words:
        at = lowered.find(word)
        while at >= 0:
            hits.append(at)
            at = lowered.find(word, at + 1)
    return {values[position] for position in runs_hit(values, hits)} if hits else set()


def _classed(doc: Document, words: tuple[str, ...], ident: bool = False) -> list[int]:
    """The elements (indices, in document order) whose class, or id when `ident`, holds one of
    `words` in any ASCII case: what `[class*=WORD i]` (and `[id*=WORD i]`) selectors find. For speed
    (Lexbor tests each such selector on every element: 100 us for the byline's eight at the median
    page), from the values the parse read (`Document.classes`, `.ident`), each distinct one tested
    once."""
    columns = (doc.classes, doc.ident) if ident else (doc.classes,)
    named = _holding([value for value in set(columns[0]).union(*columns[1:]) if value], words)
    if not named:
        return []
    if not ident:
        return [i for i, value in enumerate(doc.classes) if value in named]
    return [i for i, c, d in zip(itertools.count(), doc.classes, doc.ident) if c in named or d in named]


def _with_marked(doc: Document, found: list[int], marked: list[Any], selector: str) -> list[Any]:
    """The elements `found` (indices, in order) and the nodes `marked` (a query's, in document
    order), in document order, each once: what `doc.tree.css(selector)` finds, when `found` and
    `marked` are its parts (without the repeats of an element matching two of its selectors)."""
    if not marked:
        return [doc.elements[i] for i in found]
    if not found:
        return list({node.mem_id: node for node in marked}.values())
    position = {node.mem_id: i for i, node in enumerate(doc.elements)}
    if any(node.mem_id not in position for node in marked):
        # an element added to the tree after the parse: the query's own answer
        return list({node.mem_id: node for node in doc.tree.css(selector)}.values())
    return [doc.elements[i] for i in sorted({*found, *(position[node.mem_id] for node in marked)})]


def _byline_candidates(doc: Document) -> list[Any]:
    """The elements `doc.tree.css(_BYLINE_SELECTOR)` finds, in document order, each once: its
    class and id parts by `_classed`, only `rel` and `itemprop` left to Lexbor. On 1,604 pages
    (ScrapingHub, Readability, wcxb-dev), the same elements as the query."""
    found = _classed(doc, _BYLINE_WORDS, ident=True)
    return _with_marked(doc, found, doc.tree.css(_BYLINE_MARKUP), _BYLINE_SELECTOR)


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
    found = page_byline_element(doc)
    return found[1] if found else None


def page_byline_element(doc: Document) -> tuple[Any, str | None] | None:
    """`page_byline`'s element and its text."""
    for node in _byline_candidates(doc):
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
            return node, squash(name.text() or "") or None
        return node, text
    return None


# --- The author's name alone -----------------------------------------------------------------------

#: Words that open a byline before the name, in several languages ("By", "Written by", "Von", "Par").
_BYLINE_LEAD = re.compile(
    r"^(?i:(?:written|posted|published|reviewed|edited|authored|story|words|text|photos?|recipe|guide|"
    r"review|article|interview)\s+)?"
    r"(?i:by|von|par|por|di|door|av|af|przez|автор)(?:\b|(?=[A-Z]))\s*:?\s*"
    r"|^(?i:author|autor|auteur|autore|read more about|more from|about)(?:\b|(?=[A-Z]))\s*:?\s*",
)
#: A byline that opens with its date ("Sep 16 Written By Ana", "Dec. 19, 2025 · Ana"): the date
#: and its separator go.
_DATE_FIRST = re.compile(
    r"^(?i:(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}(?:st|nd|rd|th)?"
    r"(?:,?\s+\d{4})?|\d{1,2}\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?(?:\s+\d{4})?"
    r"|\d{4}-\d{2}-\d{2})\s*(?:[|·•–—-]\s*)?"
    r"(?=(?i:written|posted|by)\b|\S)"
)
#: What a name is followed by and is not part of it ("Niko Matsakis on behalf of the team").
_NAME_TAIL = re.compile(r"\s+on behalf of\b.*$", re.I)
#: Where a byline's name ends: a separator, a date, "Published"/"Updated"/"on <date>", a role line.
_BYLINE_END = re.compile(
    r"\s+[|·•–—]\s*|\s*-\s*(?=\w+\.?\s+\d)|\s+-\s+|\s*[|·•]|\s+(?:on|am|le|el)\s+\w+\.?\s+\d"
    r"|\s+(?:on|am|le|el)\s+\d{1,4}[./-]"
    r"|\s+\d{1,2}(?:st|nd|rd|th)?\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{4}"
    r"|\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{1,2}(?:st|nd|rd|th)?,?\s+\d{4}"
    r"|\s+(?:published|updated|last updated|posted|reviewed|fact checked|read time|min read)\b"
    r"|\s*\d{1,4}[./-]\d{1,2}[./-]\d{1,4}",
    re.I,
)
#: A job title written after the name ("Emma Ryan Writer", "Liz Kenny Former McKinsey Consultant"):
#: cut when at least two words of name stand before it.
_ROLE = re.compile(
    r"(?:(?<=\S)\s+|(?<=[a-z])(?=[A-Z]))(?i:(?:(?:senior|staff|contributing|former|lead|chief|managing|deputy|freelance|tech|ai|"
    r"guest|content|associate|executive|head|digital|news)\s+)*"
    r"(?:writer|editor|reporter|contributor|journalist|founder|co-founder|ceo|cto|director|manager|"
    r"consultant|expert|specialist|correspondent|columnist|strategist|analyst|winemaker)|former)\b.*$",
)
#: A date label glued to the name by the markup ("Cazzy MagennisLast updated").
_GLUED_LABEL = re.compile(
    r"(?<=[a-z])(?:Last|Updated|Published|Posted|Reviewed)\b.*$|\s+(?i:sponsored|advertorial)$"
    r"|(?<=[a-z])(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)\b.*$"
)
_MONTH_TAIL = re.compile(
    r"\s+(?:january|february|march|april|may|june|july|august|september|october|november|december|"
    r"jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)\.?$",
    re.I,
)
#: Texts that stand where a name should be and are not one.
_NOT_A_NAME = re.compile(
    r"^(?:by|author|authors|the author|about the author|about|admin|administrator|staff|guest|"
    r"anonymous|unknown|posted|written|published|updated|last updated|share|follow|sign in|log in|"
    r"sign up|subscribe|join us|contact us|\d+\s*mins?\s+read)$",
    re.I,
)


#: A list of credits by role ("content: MarketingSherpa, design: Scott McDaniel"), not a byline.
_CREDITS = re.compile(r"\w:\s.*,\s*\w+:\s")


def person_names(raw: str | None, site: str | None = None) -> str | None:
    """The name(s) in a byline: without "By"/"Written by", and cut where a date, a separator or a
    "Published …" line begins; never a URL, a date, a placeholder ("Author"), or the site's own
    name standing in for a person."""
    if not raw:
        return None
    text = squash(html_lib.unescape(raw))
    if "://" in text or text.startswith("www.") or "@" in text or _CREDITS.search(text):
        return None
    text = _DATE_FIRST.sub("", text)
    for _ in range(2):
        text = _BYLINE_LEAD.sub("", text).strip(" :,-–—|")
    end = _BYLINE_END.search(text)
    if end:
        text = text[: end.start()]
    text = _NAME_TAIL.sub("", text)
    text = _GLUED_LABEL.sub("", text).strip(" :,-–—|·\"'“”")
    if len(text.split()) > 2:
        text = _MONTH_TAIL.sub("", text)
    role = _ROLE.search(text)
    if role and len(text[: role.start()].split()) >= 2:
        text = text[: role.start()].rstrip(" ,")
        # "Brett Cruz , Privacy and Digital Security Expert": the role's field went with it
        text = text.split(" , ", 1)[0]
    text = _without_avatar_initials(text)
    text = _repeated_name(text)
    if site and text.casefold().endswith(" " + site.casefold()):
        text = text[: -len(site)].rstrip(" ,|-")  # "Brian Truitt USA TODAY": the site after the name
    if re.fullmatch(r"[a-z]{2,}(?:\.[a-z]{2,}){2,}", text):
        return None  # a template's placeholder left unfilled ("page.head.extra.author")
    text = re.sub(r"(?<=\b[A-Z]{2})\.$|(?<=\b[A-Z]{3})\.$|(?<=\b[A-Z]{4})\.$", "", text)
    if (
        not text
        or _NOT_A_NAME.match(text)
        or _MONTH_TAIL.fullmatch(" " + text)
        or len(text) > 80
        or len(text.split()) > 10
    ):
        return None
    if sum(ch.isdigit() for ch in text) > 2 and not _HANDLE.fullmatch(text):
        return None  # a date or a count, not a name (a user name such as "user3080392" is one)
    return text


#: A publishing tool's login name standing where the author's name should be: one lower-case word
#: with a dot or an underscore ("andrew.keaveney", "john_doe"). A thread's starter is named so on
#: purpose and is not one. (Capitals glued to a word, "KatieS", are as often a forum's chosen
#: name, "AtlanG": not taken for a login.)
_LOGIN = re.compile(r"[a-z][a-z0-9]*[._][a-z0-9._]+")
#: A user name as forums show it: one word of letters, digits and . _ - ("beijingwalker").
_USER_NAME = re.compile(r"[^\W_][\w.-]{1,39}")
#: A user name: one word of letters (and . _ -) ending in digits ("user3080392", "ggailey777",
#: "Ejp55230"), as forums and documentation sites name their authors; digits inside the letters
#: ("mdelatorreq6vkpg2ma0ci") make a generated id, not a name.
_HANDLE = re.compile(r"[^\W\d_][^\W\d]*(?:[._-][^\W\d]+)*[._-]?\d{1,8}")


def _repeated_name(text: str) -> str:
    """A name said twice in a row by the markup, then what follows ("Ellen O'Brien Ellen O'Brien
    Ellen is an editor"): the name once."""
    words = text.split()
    for size in range(1, min(4, len(words) // 2) + 1):
        if words[:size] == words[size : 2 * size]:
            return " ".join(words[:size])
    return text


def _without_avatar_initials(text: str) -> str:
    """A name without the initials of its avatar read before it ("CM Craig McCarthy")."""
    words = text.split()
    if len(words) >= 3 and words[0].isupper() and words[0] == "".join(w[0] for w in words[1:]).upper():
        return " ".join(words[1:])
    return text


def _is_site(name: str, site: str | None, host: str) -> bool:
    """Whether a name is the site's own (its og:site_name or its host's name), not a person's."""
    letters = re.sub(r"\W+", "", name.casefold())
    if not letters:
        return False
    if site and letters == re.sub(r"\W+", "", site.casefold()):
        return True
    labels = [label for label in host.split(".") if len(label) > 3 and label not in ("www", "blog")]
    return any(letters == label or (len(letters) > 5 and letters in label) for label in labels)


#: Classes naming an element the author's name, and the rest of `_element_author`'s query.
_AUTHOR_NAME_CLASSES = ("author-name", "author__name", "authorname", "byline__name", "byline-name")
_AUTHOR_MARKUP = '[itemprop~="author"] [itemprop~="name"], [rel~="author"], [itemprop~="author"]'
_AUTHOR_SELECTOR = ", ".join([_AUTHOR_MARKUP, *(f'[class*="{word}" i]' for word in _AUTHOR_NAME_CLASSES)])


def _element_author(doc: Document) -> str | None:
    """A name marked up as the author: `rel=author`, `itemprop=author` (its `name` part), or an
    element classed as the author's name, read with spaces between its parts."""
    found = _classed(doc, _AUTHOR_NAME_CLASSES)
    for node in _with_marked(doc, found, doc.tree.css(_AUTHOR_MARKUP), _AUTHOR_SELECTOR):
        text = node.attributes.get("content") or node.text(separator=" ") or ""
        name = squash(text)
        if 0 < len(name) < 100 and not _in_testimonial(node):
            return name
    return None


_ORGANISATION = re.compile(r"Organi[sz]ation|Corporation|NewsMedia|Brand|LocalBusiness|WebSite", re.I)


def _is_organisation(value: Any) -> bool:
    kinds = value.get("@type") if isinstance(value, dict) else None
    kinds = kinds if isinstance(kinds, list) else [kinds]
    return any(isinstance(k, str) and _ORGANISATION.search(k) for k in kinds)


def ld_people(value: Any) -> tuple[str | None, bool]:
    """A JSON-LD `author` (object, list, or Text, which Readability.js skips) as names, and whether
    they are an organisation's: a list keeps its people when it has any."""
    if isinstance(value, str):
        return (_clean(value) if "://" not in value else None), False
    if isinstance(value, dict):
        return _clean(value.get("name")), _is_organisation(value)
    if isinstance(value, list):
        items = [v for v in value if isinstance(v, dict) and _clean(v.get("name"))]
        people = [v for v in items if not _is_organisation(v)] or items
        names = [n for n in (_clean(v.get("name")) for v in people) if n]
        texts = [n for n in (_clean(v) for v in value if isinstance(v, str) and "://" not in v) if n]
        joined = ", ".join(names or texts) or None
        return joined, bool(names) and all(_is_organisation(v) for v in people)
    return None, False


def ld_referenced(doc: Document, value: Any) -> Any:
    """A JSON-LD value with its references resolved: an object that is only an `@id` (`{"@id":
    "https://site/#/schema/person/53"}`, as Yoast writes an article's author) is replaced by the
    object of the page's JSON-LD with that `@id`; a list item by item. Other values are as given."""
    if isinstance(value, dict) and "name" not in value and isinstance(value.get("@id"), str):
        return next(
            (item for item in ld_objects(doc) if item.get("@id") == value["@id"] and item is not value), value
        )
    if isinstance(value, list) and any(isinstance(v, dict) and "name" not in v for v in value):
        return [ld_referenced(doc, v) for v in value]
    return value


#: The <meta> names of a scholarly page's authors, one tag each (Google Scholar's tags).
CITATION_AUTHOR_KEYS = ("citation_author", "citation_authors")


def citation_authors(doc: Document, contents: dict[str, str]) -> str | None:
    """Every author a scholarly page names in its `citation_author` tags, in order, "Roy, Aniruddha"
    read as "Aniruddha Roy", joined by ", " (None where the page has no such tag)."""
    if not any(key in contents for key in CITATION_AUTHOR_KEYS):  # for speed: most pages
        return None
    names: list[str] = []
    for attrs in doc.meta:
        if (attrs.get("name") or "").strip().lower() in CITATION_AUTHOR_KEYS and (
            name := _clean(attrs.get("content"))
        ):
            last, comma, first = name.partition(",")
            if comma and "," not in first and first.strip():
                name = f"{first.strip()} {last.strip()}"
            if name not in names:
                names.append(name)
    return ", ".join(names) or None


def labelled_author(doc: Document) -> str | None:
    """The name a page gives link previews beside a "Written by" label (`twitter:label1` and
    `twitter:data1`, as Yoast and other publishing tools write them)."""
    labels: dict[str, str] = {}
    data: dict[str, str] = {}
    for attrs in doc.meta:
        key = (attrs.get("name") or attrs.get("property") or "").lower()
        content = attrs.get("content") or ""
        if key.startswith("twitter:label"):
            labels[key.removeprefix("twitter:label")] = content
        elif key.startswith("twitter:data"):
            data[key.removeprefix("twitter:data")] = content
    for number, label in labels.items():
        if re.match(r"^\s*(?:written by|author|by)\s*$", label, re.I) and data.get(number):
            return data[number]
    return None


#: A line of the page that opens a byline: "By", "Written by", "Author:" (then the name, on the
#: same line or as the next text).
_SHOWN_LEAD = re.compile(
    r"^(?:(?:written|posted|authored|reported|words|article)\s+by|by|von|par|por|door|author|autor|auteur"
    r"|(?P<thread>thread starter|started by|asked by))"
    r"\b\s*:?\s*(?P<rest>.*)$",
    re.I,
)
#: Lower-case words a person's name may hold ("Marna van der Merwe").
_PARTICLES = frozenset("van der den de da di du del della la le von bin al ibn y e and & und et the".split())
#: Characters of page text read around the headline for a byline.
BYLINE_WINDOW = 1200


def looks_like_name(text: str | None, least_words: int = 1) -> bool:
    """Whether a text shown on the page reads as a person's name: one (`least_words`) to five
    words, each capitalised (or a particle), none shouted ("DEFAULT"), no digits, not cut off."""
    if not text or text.endswith(("...", "…")):
        return False
    words = text.replace(",", " ").split()
    return (
        least_words <= len(words) <= 5
        and not any(ch.isdigit() for ch in text)
        and all(w[0].isupper() or w.lower() in _PARTICLES for w in words)
        and not (len(words) == 1 and len(text) > 3 and text.isupper())
    )


def _name_after_lead(runs: list[str], site: str | None) -> str | None:
    """The first name written after a byline's lead in these text runs: on the lead's own run
    ("By Ana Writer") or as the next run ("Written by", "Ana Writer")."""
    for index, run in enumerate(runs):
        found = _SHOWN_LEAD.match(run)
        if not found:
            continue
        rest = found.group("rest") or next(
            (later for later in runs[index + 1 : index + 3] if later.strip(",:|·")), ""
        )
        name = person_names(rest, site)
        # a bare "By" opens other phrases too ("Shop by Category"): a name of two words at least
        bare = " " not in run[: found.start("rest")].strip()
        if name and looks_like_name(name, least_words=2 if bare else 1):
            return name
        # a thread's starter is named by the user name they chose ("beijingwalker")
        if name and found.group("thread") and (" " not in name and _USER_NAME.fullmatch(name)):
            return name
    return None


def shown_byline(doc: Document, site: str | None = None) -> str | None:
    """The name in a byline the page shows around its headline ("By Ana Writer · March 3", or
    "Written by" and the name as the next text), else after a "Written by" anywhere in the body
    (an author box at the article's end), else a name set beside the story's date just under the
    headline (`name_by_date`), where no markup names the author."""
    after: list[str] = []
    for texts in (headline_texts(doc, after=False, window=300), headline_texts(doc, window=BYLINE_WINDOW)):
        runs = [run for run in (squash(text) for text in texts or ()) if run]
        name = _name_after_lead(runs, site)
        if name:
            return name
        after = runs
    return written_by(doc, site) or name_by_date(after[1:], site, doc)


#: Text runs under the headline read for a name set beside the date.
DATELINE_RUNS = 8
#: What stands between a byline's name and its date ("Ana Writer · March 3, 2025").
_DATELINE_SEPARATORS = frozenset("• · | – — - / ,".split())
#: What stands between a breadcrumb's steps ("Nutrition > Meal Plans").
_BREADCRUMB_SEPARATORS = frozenset("> » › / \\".split())


#: Two or three capitalised words of letters (an initial, an apostrophe or a hyphen allowed):
#: "Elliot Raba", "Lisa D. Ellis", "Ana de Souza"; not "Nutrition & Recipes", "Link Copied!".
_PLAIN_NAME = re.compile(
    r"[^\W\d_][^\W\d_'’.-]*(?:[-'’][^\W\d_]+)*\.?(?:\s[^\W\d_](?:[^\W\d_'’-]*[^\W\d_A-Z])?\.?){1,2}"
)


def name_by_date(runs: list[str], site: str | None = None, doc: Document | None = None) -> str | None:
    """A byline without a lead: among the first `DATELINE_RUNS` text runs under the headline, a
    run that is a person's name of two or three words, next to a run that is a date (separators
    between them aside): "Elliot Raba" then "23.07.2025"; "Dec 26, 2025", "•", "Mahua Das". With
    `doc`, the page must also picture the person: an image whose alternative text opens with the
    name (the byline's avatar, "Elliot Raba Image"); a tag, a blog's or a shop's name set beside
    the date is seldom pictured so."""
    # a breadcrumb's last step ("Nutrition", ">", "Meal Plans") is no byline
    crumbs = {index + 1 for index, run in enumerate(runs) if run in _BREADCRUMB_SEPARATORS}
    runs = [run for index, run in enumerate(runs[:DATELINE_RUNS]) if index not in crumbs]
    runs = [run for run in runs if run not in _DATELINE_SEPARATORS]
    for index, run in enumerate(runs):
        words = run.split()
        if not 2 <= len(words) <= 3 or len(run) > 40 or not _PLAIN_NAME.fullmatch(run):
            continue
        if any(len(word) > 1 and word.isupper() for word in words):  # "HR Strategy": a label
            continue
        beside = runs[index - 1 : index] + runs[index + 1 : index + 2]
        if (
            looks_like_name(run, least_words=2)
            and any(len(other) < 40 and parse_day(other) for other in beside)
            and person_names(run, site) == run
            and (doc is None or _pictured(doc, run))
        ):
            return run
    return None


def _pictured(doc: Document, name: str) -> bool:
    """Whether an image of the page has an alternative text that opens with `name`."""
    wanted = name.casefold()
    for element in indices_of(doc.tag, "img"):
        alt = doc.elements[element].attributes.get("alt")
        if alt and squash(alt).casefold().startswith(wanted):
            return True
    return False


#: "Written by" lines read at most in the whole body (for speed on pages full of them).
WRITTEN_BY_READ = 3


def written_by(doc: Document, site: str | None = None) -> str | None:
    """The name after the first "Written by" (or "Article by") in the body's text."""
    texts = doc.tokens.text[doc.body_span]  # "" for tags
    # for speed: one search over the joined, lower-cased text finds the few places to read
    joined = "\x00".join(texts).lower()
    read = 0
    for lead in ("written by", "article by"):
        at = joined.find(lead)
        while at >= 0 and read < WRITTEN_BY_READ:
            read += 1
            start = joined.rfind("\x00", 0, at) + 1
            index = joined.count("\x00", 0, start)
            # the run from the lead on ("This post was written by Ana" -> "written by Ana"), then the next
            lead_run = texts[index][at - start :]
            # the next text runs, past the tags and whitespace between them (at most 60 tokens)
            following = (squash(text) for text in texts[index + 1 : index + 60])
            runs = list(itertools.islice((run for run in (squash(lead_run), *following) if run), 4))
            name = _name_after_lead(runs, site) if runs and _SHOWN_LEAD.match(runs[0]) else None
            if name:
                return name
            at = joined.find(lead, at + len(lead))
    return None


#: Elements classed as the author's read at most (for speed on pages listing many authors).
CLASSED_AUTHORS_READ = 12


def classed_author(doc: Document, site: str | None, host: str) -> str | None:
    """The first short element whose class names it the author's ("text__author",
    "video-post_author-name") and whose text reads as a person's name of two words or more,
    never the site's own name."""
    for node in [doc.elements[i] for i in _classed(doc, ("author",))[:CLASSED_AUTHORS_READ]]:
        text = squash(node.text(separator=" ") or "")
        if not 0 < len(text) < 60 or _in_testimonial(node):
            continue
        name = person_names(text, site)
        if name and looks_like_name(name, least_words=2) and not _is_site(name, site, host):
            return name
    return None


#: Class or id words of the containers whose authors are not the page's: reviews, testimonials,
#: comments and quotes.
_OTHERS_WORDS = re.compile(
    r"review|testimonial|comment|quote|rating|customer|feedback|related|recommend", re.I
)


def _in_testimonial(node: Any, levels: int = 10) -> bool:
    """Whether an element sits inside a review, testimonial, comment or quote (its author is a
    customer's or a commenter's, not the page's)."""
    while node is not None and levels > 0:
        attrs = node.attributes
        words = f"{attrs.get('class') or ''} {attrs.get('id') or ''}"
        if words.strip() and _OTHERS_WORDS.search(words):
            return True
        node = node.parent
        levels -= 1
    return False


_OWN_BLOG = re.compile(r"^(?P<name>.+?)['’]s\s+(?:blog|weblog|notes|site|website|journal|homepage)$", re.I)


_PROFILE_HANDLE = re.compile(r"^https?://[^/]+/(?:~|@)(?P<handle>[\w.-]{2,40})/?$")


def profile_handle(address: str | None) -> str | None:
    """The user name in the address of an author's profile given as `article:author`
    ("https://lobste.rs/~scvalex", "https://medium.com/@ana"): the site names its author by it."""
    found = _PROFILE_HANDLE.match(address.strip()) if address else None
    return found.group("handle") if found else None


def site_owner(doc: Document, site: str | None) -> str | None:
    """The person a personal site belongs to, as its <title> or site name says: "Colin Watson's
    blog". (A name merely matching the host is no sign: companies name their sites too, "Green
    Roads" at greenroads.com as often as "Polly Barks" at pollybarks.com: measured on wcxb-dev,
    2026-11-26, taking a two-word site name its address spells named 4 more authors and gave a
    company's name on 70 pages without one.)"""
    phrases = [part.strip() for part in re.split(r"\s[|\-–—·•:»/]\s|[()]", doc.title or "")]
    for phrase in [site or "", *phrases]:
        own = _OWN_BLOG.match(phrase)
        if own and looks_like_name(own.group("name"), least_words=2):
            return own.group("name")
    return None


def thread_starter(doc: Document) -> Post | None:
    """The first post of a discussion thread in a known forum engine's markup (the page's author
    and date are its starter's), or None."""
    if detect_engine(doc) is None:  # most pages: its plain substring test alone (`thread.has_markers`)
        return None
    posts = read_thread(doc, images=False)[1]
    return posts[0] if len(posts) >= MIN_POSTS else None


def author_names(
    doc: Document,
    ld: dict[str, Any],
    meta: dict[str, str],
    site: str | None,
    byline: str | None,
    starter: Callable[[], Post | None] | None = None,
    byline_element: Callable[[], tuple[Any, str | None] | None] | None = None,
    contents: dict[str, str] | None = None,
) -> str | None:
    """The author, most trusted source first: the article's JSON-LD `author`, any JSON-LD object's
    `author` or a QAPage question's asker (a reference by `@id` read from the object it names),
    a scholarly page's `citation_author` tags, `<meta>` author keys (and `article:author` given as
    a name, not a profile's address), a thread's starter (`starter`, read only when asked), the
    "Written by" of link previews, author markup in the page, the byline already read
    (`byline`), Readability's byline element, an element classed as the author's, a byline
    shown around the headline, a "Written by" in the body or a pictured name beside the date
    (`shown_byline`), the user in an `article:author` profile address, and a personal blog's
    owner; each cleaned by `person_names`, and never from inside a review, testimonial or
    comment. A person wins over an organisation or the site's own name standing in for one
    (kept as the site writes it), which is the answer only when no source names a person; a
    publishing tool's login ("andrew.keaveney") is the answer only when no later source names
    one either. The sources are read one at a time, for speed: most pages stop at the first.
    `contents` is `dates.meta_contents(doc)`, when the caller has it already."""
    host = (doc.url or "").split("//", 1)[-1].split("/", 1)[0].casefold()

    def any_ld_author() -> tuple[str | None, bool]:
        fallback: tuple[str | None, bool] = (None, False)
        for item in ld_objects(doc):
            value = item.get("author")
            entity = item.get("mainEntity")
            if value is None and isinstance(entity, dict):
                value = entity.get("author")  # a QAPage's question: its asker
            found = ld_people(ld_referenced(doc, value))
            if found[0] and not found[1]:
                return found
            fallback = fallback if fallback[0] else found
        return fallback

    article_author = ld_people(ld_referenced(doc, ld.get("author")))
    named_meta = contents if contents is not None else meta_contents(doc)
    element = byline_element or functools.partial(page_byline_element, doc)

    def from_starter() -> tuple[str | None, bool]:
        post = starter() if starter else None
        return (post.author if post else None), False

    def readability_byline() -> tuple[str | None, bool]:
        """The byline Readability.js shows, unless a testimonial's or an organisation's."""
        if byline and byline == article_author[0]:
            return article_author
        found = element()
        if found and found[1] == byline and _in_testimonial(found[0]):
            return None, False
        return byline, False

    def page_person() -> tuple[str | None, bool]:
        """Readability.js's byline element read from the page, when its text reads as a name."""
        found = element()
        if not found or _in_testimonial(found[0]):
            return None, False
        name = person_names(found[1], site)
        return (name if looks_like_name(name) else None), False

    candidates: tuple[Callable[[], tuple[str | None, bool]], ...] = (
        lambda: article_author,
        any_ld_author,
        lambda: (citation_authors(doc, named_meta), False),
        lambda: (meta.get("author"), False),
        lambda: (meta.get("dc:creator"), False),
        lambda: (meta.get("dcterm:creator"), False),
        lambda: (meta.get("parsely-author"), False),
        lambda: (named_meta.get("article:author"), False),
        from_starter,
        lambda: (labelled_author(doc), False),
        lambda: (_element_author(doc), False),
        readability_byline,
        page_person,
        lambda: (classed_author(doc, site, host), False),
        lambda: (shown_byline(doc, site), False),
        lambda: (profile_handle(named_meta.get("article:author")), False),
        lambda: (site_owner(doc, site), False),
    )
    stand_in: str | None = None
    login: str | None = None  # a publishing tool's login name: a person's name shown later wins
    for candidate in candidates:
        raw, organisation = candidate()
        name = person_names(raw, site)
        if not name:
            continue
        if organisation or _is_site(name, site, host):
            # the site's own name as it writes it ("Luxury Travel Expert"), not cut as a person's
            whole = squash(raw or "")
            stand_in = stand_in or (whole if whole != name and _is_site(whole, site, host) else name)
            continue
        if candidate is not from_starter and _LOGIN.fullmatch(name):
            login = login or name
            continue
        return name
    return login or stand_in


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
    """JSON-LD image, og:image, twitter:image, link rel=image_src, else the article's first image:
    the first of them that is an http(s) URL once made absolute (`facts.web_url`; a `javascript:`
    or `data:` og:image gives way to the next)."""
    image = ld.get("image")
    if isinstance(image, list):
        image = image[0] if image else None
    url = web_url(doc, _clean(image.get("url")) if isinstance(image, dict) else _clean(image))
    url = url or next(
        (found for key in IMAGE_KEYS if key in meta and (found := web_url(doc, meta[key]))), None
    )
    if not url:
        link = doc.tree.css_first('link[rel~="image_src" i][href]')
        url = web_url(doc, _clean(link.attributes.get("href"))) if link is not None else None
    if not url:
        within = selection if selection is not None and len(selection) == len(doc.tokens) else doc.body_mask
        # The <img> elements in document order whose start tag is within (for speed, rather than
        # every start tag of the article).
        for element in indices_of(doc.tag, "img"):
            if within[doc.start[element]]:
                attrs = doc.elements[element].attributes
                url = web_url(doc, _clean(attrs.get("src") or attrs.get("data-src")))
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
        or (found[1] if (found := byline_element()) else None)
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
    title = heading_over_site_name(
        title,
        doc,
        [
            _clean(unescape(site_name)),
            meta.get("og:site_name"),
            contents.get("application-name"),
            contents.get("apple-mobile-web-app-title"),
        ],
    )
    return Metadata(
        title=title,
        byline=_clean(unescape(byline)),
        published=_clean(unescape(published)),
        site_name=_clean(unescape(site_name)),
        excerpt=_clean(unescape(excerpt)),
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
            doc, ld, meta, _clean(unescape(site_name)), byline, starter, byline_element, contents
        ),
    )
