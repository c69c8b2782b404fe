"""Article metadata: title, byline, published date, site name, excerpt, language and direction.

Sources in order of trust, as Readability.js does: JSON-LD (schema.org Article), then <meta>
(OpenGraph, Twitter, Dublin Core, article:*), then the page itself (<title> cleaned of the site
name, the first <h1>, rel=author links).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from .document import Document

_WS = re.compile(r"\s+")
_ARTICLE_TYPES = re.compile(
    r"^(Article|AdvertiserContentArticle|NewsArticle|AnalysisNewsArticle|AskPublicNewsArticle|"
    r"BackgroundNewsArticle|OpinionNewsArticle|ReportageNewsArticle|ReviewNewsArticle|Report|"
    r"SatiricalArticle|ScholarlyArticle|MedicalScholarlyArticle|SocialMediaPosting|BlogPosting|"
    r"LiveBlogPosting|DiscussionForumPosting|TechArticle|APIReference|WebPage)$"
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


def _clean(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    value = _WS.sub(" ", value).strip()
    return value or None


def meta_values(doc: Document) -> dict[str, str]:
    """<meta name|property|itemprop=… content=…> as a lower-cased key -> first value map."""
    values: dict[str, str] = {}
    for node in doc.tree.css("meta[content]"):
        attrs = node.attributes
        content = _clean(attrs.get("content"))
        if not content:
            continue
        for key in ("property", "name", "itemprop"):
            names = attrs.get(key)
            if not names:
                continue
            for name in names.lower().split():
                values.setdefault(name, content)
    return values


def json_ld_article(doc: Document) -> dict[str, Any]:
    """The first schema.org article-like object in the page's JSON-LD, or {}."""
    for raw in doc.json_ld:
        try:
            data = json.loads(raw.strip().removeprefix("<![CDATA[").removesuffix("]]>"))
        except (ValueError, RecursionError):
            continue
        stack: list[Any] = [data]
        while stack:
            item = stack.pop(0)
            if isinstance(item, list):
                stack.extend(item)
            elif isinstance(item, dict):
                kind = item.get("@type")
                kinds = kind if isinstance(kind, list) else [kind]
                if any(isinstance(k, str) and _ARTICLE_TYPES.match(k) for k in kinds):
                    return item
                if "@graph" in item:
                    stack.extend(item["@graph"] if isinstance(item["@graph"], list) else [item["@graph"]])
    return {}


def _names(value: Any) -> str | None:
    if isinstance(value, str):
        return _clean(value)
    if isinstance(value, dict):
        return _clean(value.get("name"))
    if isinstance(value, list):
        names = [n for n in (_names(v) for v in value) if n]
        return ", ".join(names) or None
    return None


_HAS_SEPARATOR = re.compile(r" [|\-\\/>»] ")
_HIERARCHICAL = re.compile(r" [\\/>»] ")
_BEFORE_LAST_SEPARATOR = re.compile(r"(.*)[|\-\\/>»] .*")
_AFTER_FIRST_SEPARATOR = re.compile(r"[^|\-\\/>»]*[|\-\\/>»](.*)")
_SEPARATOR_RUN = re.compile(r"[|\-\\/>»]+")


def _word_count(text: str) -> int:
    return len(text.split())


def clean_title(raw: str, doc: Document) -> str:
    """Readability.js's _getArticleTitle: cut the site name at a separator, or use the lone <h1>."""
    original = _clean(raw) or ""
    title = original
    hierarchical = False
    if _HAS_SEPARATOR.search(title):
        hierarchical = bool(_HIERARCHICAL.search(title))
        title = _BEFORE_LAST_SEPARATOR.sub(r"\1", original)
        if _word_count(title) < 3:
            title = _AFTER_FIRST_SEPARATOR.sub(r"\1", original)
    elif ": " in title:
        headings = {_clean(h.text()) for h in doc.tree.css("h1, h2")}
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
    title = _clean(title) or ""
    words = _word_count(title)
    if words <= 4 and (
        not hierarchical or words != _word_count(_SEPARATOR_RUN.sub("", original)) - 1
    ):
        title = original
    return title


def _ld_title(ld: dict[str, Any], page_title: str) -> str | None:
    """JSON-LD name or headline; when both exist and differ, the one closer to <title> wins."""
    name, headline = _clean(ld.get("name")), _clean(ld.get("headline"))
    if name and headline and name != headline:
        page_words = set(page_title.lower().split())

        def overlap(candidate: str) -> float:
            words = set(candidate.lower().split())
            return len(words & page_words) / max(len(words), 1)

        return headline if overlap(headline) > overlap(name) else name
    return name or headline


def extract_metadata(doc: Document, text: str = "") -> Metadata:
    """Metadata from JSON-LD, <meta> and the page, most trusted source first."""
    ld = json_ld_article(doc)
    meta = meta_values(doc)

    def first(*keys: str) -> str | None:
        for key in keys:
            if key in meta:
                return meta[key]
        return None

    title = (
        _ld_title(ld, doc.title) or
        first("dc:title", "dcterm:title", "og:title", "weibo:article:title", "weibo:webpage:title", "title", "twitter:title")
    )
    if not title:
        title = clean_title(doc.title, doc)
    byline = _names(ld.get("author")) or first("dc:creator", "dcterm:creator", "author", "parsely-author", "article:author")
    if byline and byline.startswith(("http://", "https://")):
        byline = None
    if not byline:
        author = doc.tree.css_first('[rel="author"], [itemprop~="author"], .byline, .author')
        byline = _clean(author.text()) if author is not None else None
        if byline and len(byline) > 100:
            byline = None
    published = _clean(ld.get("datePublished")) or first(
        "article:published_time", "parsely-pub-date", "datepublished", "date", "dc.date", "pubdate"
    )
    if not published:
        time_node = doc.tree.css_first("time[datetime]")
        published = _clean(time_node.attributes.get("datetime")) if time_node is not None else None
    publisher = ld.get("publisher")
    site_name = _names(publisher) if isinstance(publisher, dict) else None
    site_name = site_name or first("og:site_name", "application-name")
    excerpt = _clean(ld.get("description")) or first(
        "dc:description", "dcterm:description", "og:description", "weibo:article:description",
        "weibo:webpage:description", "description", "twitter:description",
    )
    if not excerpt and text:
        excerpt = _clean(text.split("\n\n", 1)[0][:300])
    image = ld.get("image")
    image_url = _clean(image.get("url")) if isinstance(image, dict) else _clean(image)
    image_url = doc.absolute_url(image_url or first("og:image", "twitter:image"))
    return Metadata(
        title=title or "",
        byline=byline,
        published=published,
        site_name=site_name,
        excerpt=excerpt,
        image=image_url,
        lang=doc.lang,
        dir=doc.dir,
    )
