"""`PAGE_TYPE_FEATURES` (`page_type_columns`): what kind of page a block is on and what its repeated
item holds.

The page's kind comes from its JSON-LD types (`json_ld_types`), its OpenGraph type and its counts of
h1s, forms, form controls and times; then a comment section's heading before the block, the
headings, images, times, controls and links of the block's repeated item, and the share of the
block's text found in the page's JSON-LD text (`json_ld_text`, `ld_body_share`).
"""

from __future__ import annotations

import re

import numpy as np

from ...parse.document import TEXT, Document
from ...schema import BLOCK_KIND_TYPES, script_values, text_types, walk
from .features import Column, _ratio
from .sections import COMMENT_HEADING, section_titles
from .structure import RepeatedItems, _element_counts
from .tags import _IMAGE_TAGS, CONTROL_TAGS, HEADING_TAGS, TagCodes, tag_codes

#: JSON-LD `@type` values (schema.org) by page kind: what a page says it is, in any page's markup.
LD_KINDS = BLOCK_KIND_TYPES
#: A type name the page-type features count: letters only, after any vocabulary prefix ending in
#: "/", "#" or ":" (so "Web Page" or "Product/" count as no type, as the model was trained).
_LD_NAME = re.compile(r"(?:.*[/#:])?([A-Za-z]+)", re.DOTALL)

#: JSON-LD properties that hold a page's own text: an article's body, a product's or page's
#: description, a post's or answer's text.
LD_TEXT_KEYS = frozenset(("articleBody", "description", "text"))
#: Deepest nesting of JSON-LD objects whose `LD_TEXT_KEYS` are read (`schema.walk`'s depth).
LD_TEXT_DEPTH = 20
#: Below this many words the JSON-LD text is a summary, not a body to compare blocks with.
LD_BODY_MIN_WORDS = 50
#: Text pieces (between tags) of fewer words are not looked up in the JSON-LD text.
LD_PIECE_MIN_WORDS = 3
_WORD = re.compile(r"\w+")


def json_ld_types(doc: Document) -> set[str]:
    """Lower-case schema.org type names of every `@type` in the page's JSON-LD (no JSON parsing:
    `schema.text_types`, so broken JSON-LD still says what the page is), those of `_LD_NAME`'s form."""
    return {
        found[1].lower()
        for raw in doc.json_ld
        for name in text_types(raw)
        if (found := _LD_NAME.fullmatch(name)) is not None
    }


def json_ld_text(doc: Document) -> str:
    """The page's own text as its JSON-LD gives it (`LD_TEXT_KEYS` anywhere in the objects), as
    lower-case words joined by single spaces; "" when it has fewer than `LD_BODY_MIN_WORDS` words.
    The strings are read as the scripts hold them, character references undecoded ("&quot;" gives
    the word "quot"), as the shipped model was trained: decoded (`schema.ld_text`) without
    retraining, 6 pages of the shared sets moved (a forum thread's page lost its
    replies, shingle F1 0.78 -> 0.47, wcxb-dev -0.0003 out of fold, ScrapingHub +0.0001)."""
    found = [
        value
        for index, raw in enumerate(doc.json_ld)
        if any(f'"{key}"' in raw for key in LD_TEXT_KEYS)
        for parsed in script_values(doc, index)
        for key, value in walk(parsed, max_depth=LD_TEXT_DEPTH, members=True)
        if key in LD_TEXT_KEYS and isinstance(value, str)
    ]
    words = _WORD.findall(" ".join(found).lower())
    return " ".join(words) if len(words) >= LD_BODY_MIN_WORDS else ""


def ld_body_share(doc: Document, elements: np.ndarray, holder: np.ndarray, body: str) -> np.ndarray:
    """Per block, the share of its own text (in pieces of at least `LD_PIECE_MIN_WORDS` words, the
    text between two tags) found word for word in the JSON-LD text `body`; 0 when it has no such
    piece, -1 for every block when the page has no JSON-LD text."""
    if not body:
        return np.full(len(elements), -1.0)
    t = doc.tokens
    first, last = doc.body
    block_of_element = np.full(len(doc.elements), -1, dtype=np.int64)
    block_of_element[elements] = np.arange(len(elements))
    span = np.arange(first, last + 1)
    pieces = span[(t.kind[span] == TEXT) & (t.chars[span] >= 4 * LD_PIECE_MIN_WORDS) & (t.element[span] >= 0)]
    block = block_of_element[holder[t.element[pieces]]]
    pieces, block = pieces[block >= 0], block[block >= 0]
    padded = f" {body} "
    checked = np.zeros(len(elements))
    found = np.zeros(len(elements))
    for token, b in zip(pieces.tolist(), block.tolist(), strict=True):
        words = _WORD.findall(t.text[token].lower())
        if len(words) < LD_PIECE_MIN_WORDS:
            continue
        size = float(t.chars[token])
        checked[b] += size
        if f" {' '.join(words)} " in padded:
            found[b] += size
    return _ratio(found, checked)


def page_type_columns(
    doc: Document,
    elements: np.ndarray,
    columns: dict[str, Column],
    items: RepeatedItems,
    holder: np.ndarray,
    codes: TagCodes | None = None,
    titles: list[tuple[int, str]] | None = None,
    item_counts: bool = True,
) -> dict[str, Column]:
    """`PAGE_TYPE_FEATURES`: what kind of page this is, for every block (so the trees can learn that
    content on a product page is not content on an article), a comment section's heading before the
    block, and what the block's repeated item holds (teasers: a heading link and an image; comments:
    a time and a reply control).

    The page's kind comes from signals any page may carry: JSON-LD `@type`, OpenGraph's `og:type`,
    how many h1s, forms, form controls and `<time>` elements it has, and the share of its text in
    repeated items (`repeated_items` above the block, with at least three siblings). Where the
    JSON-LD carries the page's text (an `articleBody`, a long `description`), each block's share
    found in it (`ld_body_share`): teasers and comments around an article are not in its body.
    Without `item_counts`, the `item_log_*` columns are left out (`_place_structure` wrote them).
    """
    n_blocks = len(elements)
    codes = codes or tag_codes(doc)
    headings, images, times, controls, links = codes.starts(
        doc, HEADING_TAGS, _IMAGE_TAGS, ("time",), CONTROL_TAGS, ("a",)
    )
    types = json_ld_types(doc)
    og = next((attrs for attrs in doc.meta if attrs.get("property") == "og:type"), None)
    og_type = ((og.get("content") or "") if og is not None else "").strip().lower()
    chars = np.expm1(columns["log_chars"])
    repeat_share = float(chars[(items.count >= 3) & (items.level >= 1)].sum() / max(chars.sum(), 1.0))
    ld_body = json_ld_text(doc)

    # The first heading that opens a comment section, and which blocks come after it.
    first, last = doc.body
    body_tokens = max(1, last - first + 1)
    block_start = doc.start[elements].astype(np.int64)
    titles = section_titles(doc, headings) if titles is None else titles
    opened = next((start for start, raw in titles if COMMENT_HEADING.search(raw)), -1)
    after = (block_start > opened).astype(np.float64) if opened >= 0 else np.zeros(n_blocks)
    position = (opened - first) / body_tokens if opened >= 0 else -1.0

    def in_item(starts: np.ndarray) -> np.ndarray:
        return np.log1p(_element_counts(starts, doc, items.item))

    # For speed: the page's counts through one np.log1p (the same function on each number).
    page_counts = np.log1p(
        np.array(
            [codes.count("h1"), codes.count("form"), len(controls), len(times), len(ld_body)],
            dtype=np.float64,
        )
    )
    held: dict[str, Column] = {}
    if item_counts:
        held = {
            "item_log_headings": in_item(headings),
            "item_log_images": in_item(images),
            "item_log_times": in_item(times),
            "item_log_controls": in_item(controls),
            "item_log_links": in_item(links),
        }
    return {
        **{name: float(bool(types & kinds)) for name, kinds in LD_KINDS.items()},
        "og_article": float(og_type == "article"),
        "og_product": float("product" in og_type),
        "page_log_h1": page_counts[0],
        "page_log_forms": page_counts[1],
        "page_log_controls": page_counts[2],
        "page_log_times": page_counts[3],
        "page_repeat_share": repeat_share,
        "after_comment_heading": after,
        "comment_heading_position": position,
        **held,
        "ld_body_log_chars": page_counts[4],
        "ld_body_share": ld_body_share(doc, elements, holder, ld_body),
    }
