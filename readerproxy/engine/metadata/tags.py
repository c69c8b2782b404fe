"""What a page states about itself in `<meta>` tags and its JSON-LD article object: the readers
the title, author and date steps share (Readability.js `_getJSONLD`, `_getArticleMetadata`).
"""

from __future__ import annotations

import functools
import html as html_lib
import re
from typing import Any

from ..parse.document import Document
from ..parse.text import SPACE, squash
from ..schema import READABILITY_ARTICLE_TYPES, parsed_json_ld, type_values

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


def clean_value(value: Any) -> str | None:
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
                if word in IMAGE_KEYS and word not in images and (cleaned := clean_value(raw)):
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
    return SPACE.sub("", found.group(0).lower()) if found else None


@functools.lru_cache(maxsize=_KEY_MEMO_SIZE)
def _name_key(name: str) -> str | None:
    """Readability.js's map key for a <meta name> value, or None (`_NAME`)."""
    return SPACE.sub("", name.lower()).replace(".", ":") if _NAME.match(name) else None


def _is_article_type(item: dict[str, Any]) -> bool:
    """Whether a JSON-LD object's `@type` names an article as Readability.js reads it: as written,
    the vocabulary's URL included (`READABILITY_ARTICLE_TYPES`)."""
    return any(isinstance(k, str) and READABILITY_ARTICLE_TYPES.search(k) for k in type_values(item))


def json_ld_article(doc: Document) -> dict[str, Any]:
    """The first schema.org article-like object in the page's JSON-LD, or {} (Readability's rules;
    the scripts parsed once per Document, `schema.parsed_json_ld`)."""
    for parsed in parsed_json_ld(doc):
        if isinstance(parsed, list):
            parsed = next((it for it in parsed if isinstance(it, dict) and _is_article_type(it)), None)
        if not isinstance(parsed, dict):
            continue
        context = parsed.get("@context")
        if isinstance(context, dict):
            context = context.get("@vocab")
        if not isinstance(context, str) or not _SCHEMA_ORG.match(context):
            continue
        graph = parsed.get("@graph")
        if not parsed.get("@type") and isinstance(graph, list):
            parsed = next((it for it in graph if isinstance(it, dict) and _is_article_type(it)), None)
        if isinstance(parsed, dict) and _is_article_type(parsed):
            return parsed
    return {}


def ld_author(value: Any) -> str | None:
    if isinstance(value, dict):
        return clean_value(value.get("name"))
    if (
        isinstance(value, list)
        and value
        and isinstance(value[0], dict)
        and isinstance(value[0].get("name"), str)
    ):
        names = [n for n in (clean_value(v.get("name")) for v in value if isinstance(v, dict)) if n]
        return ", ".join(names) or None
    return None
