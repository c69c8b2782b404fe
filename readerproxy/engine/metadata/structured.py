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
(docs/experiments.md, "Product descriptions from JSON-LD").
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote

import numpy as np

from ..parse.document import TEXT, Document
from ..parse.text import WORD
from ..schema import ld_text, objects, script_values, type_values

#: Share of the description's word trigrams the text must hold for the description to count as shown.
SHOWN_SHARE = 0.5
#: Fewer words than this: not a description worth adding. Longer than a search snippet (about 160
#: characters, 25-30 words: what shops write for search engines), so a summary is not taken for one.
MIN_WORDS = 40
#: Deepest nesting of JSON-LD objects searched (a `@graph`, an `offers` list, ...).
MAX_DEPTH = 12

_TAG = re.compile(r"<[^>]*>")
_BREAK = re.compile(r"<br\s*/?>|</p\s*>|</li\s*>|\n", re.IGNORECASE)
#: Horizontal whitespace: a description's line breaks were read as paragraph ends (`_BREAK`).
_SPACE = re.compile(r"[ \t\r\f\v\u00a0]+")


def _products(value: Any) -> Iterator[dict[str, Any]]:
    """Every object whose `@type` names a product (Product, ProductGroup, IndividualProduct, ...)."""
    for node in objects(value, max_depth=MAX_DEPTH):
        if any("product" in kind.lower() for kind in type_values(node) if isinstance(kind, str)):
            yield node


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
    words = WORD.findall(" ".join(paragraphs).lower())
    if len(words) < MIN_WORDS:
        return []
    wanted = _trigrams(words)
    shown = wanted & _trigrams(WORD.findall(page_text(doc).lower()))
    return paragraphs if len(shown) < SHOWN_SHARE * len(wanted) else []
