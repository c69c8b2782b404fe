"""What a page states only in its structured data: a product description the DOM does not show.

Shops often render a product's description with scripts, from the JSON-LD `Product` object the page
also carries (schema.org/Product `description`). A reader without scripts then has the name, the
price and the reviews, but not what the product is. `missing_description(doc, text)` gives that
description, as paragraphs, when the page's own text lacks most of it; `pipeline.render` ends the
article with it, as a browser that ran the page's scripts would show it.

"Lacks most of it": fewer than `SHOWN_SHARE` of the description's word trigrams occur in the text of
the page's body. A description the page does show, but outside what the extractor kept, is left out
(the extractor judged that part of the page). The description must also have at least `MIN_WORDS`
words (a one-line summary adds nothing). Measured out of fold on the WCXB dev product pages
(docs/benchmarks.md, "Product descriptions from JSON-LD").
"""

from __future__ import annotations

import html as html_lib
import json
import re
import weakref
from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote

import numpy as np

from ..parse.document import TEXT, Document

#: Share of the description's word trigrams the text must hold for the description to count as shown.
SHOWN_SHARE = 0.5
#: Fewer words than this: not a description worth adding. Longer than a search snippet (about 160
#: characters, 25-30 words: what shops write for search engines), so a summary is not taken for one.
MIN_WORDS = 40
#: Deepest nesting of JSON-LD objects searched (a `@graph`, an `offers` list, ...).
MAX_DEPTH = 12

_WORD = re.compile(r"\w+")
_TAG = re.compile(r"<[^>]*>")
_BREAK = re.compile(r"<br\s*/?>|</p\s*>|</li\s*>|\n", re.IGNORECASE)
_SPACE = re.compile(r"[ \t\r\f\v\u00a0]+")


def _products(node: object, depth: int = 0) -> Iterator[dict[str, object]]:
    """Every object whose `@type` names a product (Product, ProductGroup, IndividualProduct, ...)."""
    if depth > MAX_DEPTH:
        return
    if isinstance(node, dict):
        kind = node.get("@type")
        kinds = kind if isinstance(kind, list) else [kind]
        if any(isinstance(k, str) and "product" in k.lower() for k in kinds):
            yield node
        for value in node.values():
            yield from _products(value, depth + 1)
    elif isinstance(node, list):
        for value in node:
            yield from _products(value, depth + 1)


def walk_ld(
    value: Any,
    descend: tuple[str, ...] = ("@graph", "mainEntity"),
    max_depth: int | None = None,
    depth: int = 0,
) -> Iterator[dict[str, Any]]:
    """Every JSON-LD object in a parsed value, in document order: list items, and the objects under
    the `descend` keys (a `@graph`, a page's `mainEntity`, ...), each list or key one level deeper,
    no deeper than `max_depth` (None: no limit)."""
    if max_depth is not None and depth > max_depth:
        return
    if isinstance(value, list):
        for item in value:
            yield from walk_ld(item, descend, max_depth, depth + 1)
    elif isinstance(value, dict):
        yield value
        for key in descend:
            if key in value:
                yield from walk_ld(value[key], descend, max_depth, depth + 1)


#: Each Document's parsed JSON-LD: per script (`script_values`), and all of them (`parsed_json_ld`),
#: kept while the Document lives.
_SCRIPT_LD: weakref.WeakKeyDictionary[Document, dict[int, list[Any]]] = weakref.WeakKeyDictionary()
_PARSED_LD: weakref.WeakKeyDictionary[Document, list[Any]] = weakref.WeakKeyDictionary()


def script_values(doc: Document, index: int) -> list[Any]:
    """The values of the page's `index`-th JSON-LD script (`doc.json_ld[index]`, `load_json_ld`),
    parsed once per Document for every reader: the readers that look at a script's text first (for
    speed: no parse of a script without the keys they need) share the parses. Read the values, do
    not change them."""
    parsed = _SCRIPT_LD.setdefault(doc, {})
    values = parsed.get(index)
    if values is None:
        values = parsed[index] = load_json_ld(doc.json_ld[index])
    return values


def parsed_json_ld(doc: Document) -> list[Any]:
    """Each `<script type="application/ld+json">` of the page parsed (`script_values`), in document
    order, for every reader (metadata, dates, facts): read the values, do not change them."""
    cached = _PARSED_LD.get(doc)
    if cached is None:
        cached = _PARSED_LD[doc] = [
            value for index in range(len(doc.json_ld)) for value in script_values(doc, index)
        ]
    return cached


#: A JSON string, or a JavaScript line comment (`//` to the end of the line): strings are matched so
#: that a "//" inside one ("https://...") is not taken for a comment. Linear in the text: the two
#: string alternatives never match the same character, and no `/* ... */` form (an unclosed one
#: would be searched for to the end of the text from every "/*").
_STRING_OR_COMMENT = re.compile(r'("(?:\\.|[^"\\])*")|//[^\n]*')
_JSON = json.JSONDecoder(strict=False)


def load_json_ld(raw: str) -> list[Any]:
    """The JSON values of one JSON-LD script, read as leniently as search engines read them: without
    a `<![CDATA[ ... ]]>` wrapper; control characters (a line break) inside strings allowed; a
    template's JavaScript comments ("// hardcoded value") dropped; several values one after the other
    (`{...},{...}`) each read. [] for a script that is still not JSON. The strict parse first, for
    speed: most scripts are valid (of the 1,604 pages of the three shared sets, 13 have a
    script only the lenient reading reads, 8 one it cannot)."""
    # for speed: the wrapper is looked for only where its marks are there at all
    if "<![CDATA[" in raw or "]]>" in raw:
        raw = raw.strip().removeprefix("<![CDATA[").removesuffix("]]>")
    try:
        return [json.loads(raw)]
    except RecursionError:
        return []
    except ValueError:
        pass
    text = _STRING_OR_COMMENT.sub(lambda found: found.group(1) or "", raw) if "/" in raw else raw
    values: list[Any] = []
    position, end = 0, len(text)
    try:
        while True:
            while position < end and (text[position].isspace() or text[position] in ",;"):
                position += 1
            if position >= end:
                return values
            value, position = _JSON.raw_decode(text, position)
            values.append(value)
    except (ValueError, RecursionError):
        return values


#: A character reference (`&#8217;`, `&#x2019;`, `&rsquo;`) left in a string after decoding once.
_REFERENCE = re.compile(r"&(?:#\d{1,7}|#x[0-9a-fA-F]{1,6}|[a-zA-Z]{2,31});")


def ld_text(value: str) -> str:
    """A JSON-LD string as the page shows it: its HTML character references decoded, twice when
    the first pass leaves one. A script's text is not decoded by the HTML parser, and templates write
    entities into it: once ("L&#8217;atelier", WordPress's texturised titles, "&quot;") or escaped
    once more ("L&amp;#8217;atelier", WooCommerce's brands), both shown as "L’atelier". Every
    reader that shows JSON-LD text uses it (facts, listings, threads, product descriptions); the
    learned scorer's `json_ld_text` reads the scripts as its model was trained, undecoded."""
    if "&" not in value:
        return value
    once = html_lib.unescape(value)
    return html_lib.unescape(once) if "&" in once and _REFERENCE.search(once) else once


def ld_type_names(item: dict[str, Any]) -> set[str]:
    """The schema.org type names of a JSON-LD object, without a vocabulary URL ("Product" for
    "https://schema.org/Product"); `@type` may be one name or a list."""
    kind = item.get("@type")
    names = kind if isinstance(kind, list) else [kind]
    return {str(name).rsplit("/", 1)[-1] for name in names if name}


def product_description(doc: Document) -> list[str]:
    """The first product description in the page's JSON-LD, as plain-text paragraphs ([] for none).

    Descriptions are sometimes HTML (escaped or not) or percent-encoded: tags are dropped, breaks end
    paragraphs."""
    for index, raw in enumerate(doc.json_ld):
        if "description" not in raw or "roduct" not in raw:  # for speed: no JSON parse for other objects
            continue
        for product in (found for parsed in script_values(doc, index) for found in _products(parsed)):
            description = product.get("description")
            if isinstance(description, str) and description.strip():
                text = ld_text(description)
                if "%20" in text:  # percent-encoded by the shop's template
                    text = unquote(text)
                lines = (_SPACE.sub(" ", _TAG.sub(" ", line)).strip() for line in _BREAK.split(text))
                return [line for line in lines if line]
    return []


def _trigrams(words: list[str]) -> set[tuple[str, str, str]]:
    return set(zip(words, words[1:], words[2:], strict=False))


def page_text(doc: Document) -> str:
    """The text of the page's body, every text token joined by spaces."""
    t = doc.tokens
    texts = t.text
    return " ".join(texts[i] for i in np.flatnonzero((t.kind == TEXT) & doc.body_mask).tolist())


def missing_description(doc: Document) -> list[str]:
    """The page's product description (`product_description`) when the page's body lacks most of it
    (rendered by scripts), else []."""
    if not doc.json_ld:
        return []
    paragraphs = product_description(doc)
    words = _WORD.findall(" ".join(paragraphs).lower())
    if len(words) < MIN_WORDS:
        return []
    wanted = _trigrams(words)
    shown = wanted & _trigrams(_WORD.findall(page_text(doc).lower()))
    return paragraphs if len(shown) < SHOWN_SHARE * len(wanted) else []
