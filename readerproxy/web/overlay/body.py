"""The page's body with its marks, sanitised (`page_body`).

The body is rebuilt from the linear view with a mark, a score badge and a feature card per block;
dropped navigation, menus, headers, footers and sidebars are folded into a `<details>` with a
one-line summary (`folds`); the result goes through nh3 (`sanitize.clean_page`).
`with_boundary_lines` draws `visual`'s main-content boundary over it.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence

import numpy as np

from ...engine.extraction import Block, Extraction
from ...engine.parse.document import BLOCK_TAGS, CLOSE, OPEN, TEXT, Document
from ...engine.parse.scan import VOID_TAGS
from ...engine.urls import LAZY_SOURCES, LAZY_SRCSETS
from .. import charts as charts_module
from ..sanitize import (
    URL_ATTRIBUTES,
    base_url,
    clean_page,
    fragment_url,
    page_site,
    safe_css,
    safe_image_url,
    safe_srcset,
    safe_url,
)
from .features import Features, _Sums, block_features
from .marks import FOREIGN, NO_WRAP, block_marks

#: Elements that take no badge inside them (void, tables' inner structure, replaced content).
NO_BADGE = VOID_TAGS | frozenset(
    "table thead tbody tfoot tr colgroup select optgroup datalist textarea "
    "svg math video audio picture iframe object".split()
)

RENAMED = {"form": "div", "body": "div", "html": "div", "dialog": "div"}


def _attributes(doc: Document, element: int, name: str) -> dict[str, str]:
    """The element's attributes without handlers, scripts' URLs or our own names; URLs absolute."""
    base = base_url(doc)
    raw = doc.elements[element].attributes
    out: dict[str, str] = {}
    for key, value in raw.items():
        key = key.lower()
        if key.startswith("on") or key in ("srcdoc", "formaction", "action", "ping", "target"):
            continue
        value = value or ""
        if key in URL_ATTRIBUTES:
            cleaned = (
                safe_srcset(value, base)
                if key == "srcset"
                else (safe_image_url(value, base) if name in ("img", "source") else safe_url(value, base))
            )
            if cleaned is None:
                continue
            value = cleaned
        elif key == "style":
            value = safe_css(value, base, page_site(doc.url))
        elif key == "class":
            value = " ".join(c for c in value.split() if not c.startswith("rpo-"))
        elif key == "id" and value.startswith("rpo-"):
            continue
        if key == "href" and value.startswith("#"):  # in the frame "#x" would load readerproxy's address
            value = fragment_url(value, base)
            if not value:
                continue
        out[key] = value
    if name == "img":  # lazy-loaded images: their script would have copied the real source over
        src = out.get("src", "")
        if not src or src.startswith("data:"):
            for lazy in LAZY_SOURCES:
                real = raw.get(lazy)
                if real and (url := safe_image_url(real, base)):
                    out["src"] = url
                    break
        for lazy in LAZY_SRCSETS if not out.get("srcset") else ():
            lazy_set = safe_srcset(raw.get(lazy) or "", base)
            if lazy_set:
                out["srcset"] = lazy_set
                break
    return out


def _badges(block_ids: Sequence[int], blocks: Sequence[Block], features: Sequence[Features]) -> str:
    out = []
    for i in block_ids:
        block = blocks[i]
        sign = "✓" if block.selected else "✗"
        kind = "rpo-bk" if block.selected else "rpo-bd"
        out.append(
            f'<span class="rpo-badge {kind}" data-rpo-block="{i}" tabindex="0" '
            f'title="{html.escape(features[i].describe(block), quote=True)}">'
            f"{sign}\u2009{charts_module.format_number(block.score)}</span>"
            + _feature_card(i, block, features[i])
        )
    return "".join(out)


def feature_rows(index: int, block: Block, feature: Features) -> list[tuple[str, str]]:
    """A block's features as (name, value) rows: the card in the frame and the panel's table."""
    rows = [
        ("block", f"#{index} {'✓ kept' if block.selected else '✗ dropped'}"),
        ("label", block.label or feature.tag),
        ("tag", f"<{feature.tag}>"),
        ("score", charts_module.format_number(block.score)),
    ]
    if feature.element_score is not None:
        rows.append(("element score", charts_module.format_number(feature.element_score)))
    rows += [
        ("words", str(feature.words)),
        ("link density", f"{feature.link_density:.0%}"),
        ("text / code", f"{feature.text_code_ratio:.2f}"),
    ]
    return rows


def _feature_card(index: int, block: Block, feature: Features) -> str:
    """The card shown beside a badge (by CSS: hovering the block, hovering or focusing the badge)."""
    lines = "".join(
        f'<span class="rpo-fl"><b class="rpo-fn">{html.escape(name)}</b> {html.escape(value)}</span>'
        for name, value in feature_rows(index, block, feature)
    )
    return f'<span class="rpo-fc" role="note" aria-hidden="true">{lines}</span>'


def _mark_attributes(
    block_ids: Sequence[int], blocks: Sequence[Block], features: Sequence[Features]
) -> tuple[str, str]:
    """The data attributes and the classes of a mark."""
    kept = any(blocks[i].selected for i in block_ids)
    attributes = f' data-rpo-blocks="{" ".join(map(str, block_ids))}"'
    return attributes, "rpo-mark rpo-k" if kept else "rpo-mark rpo-d"


def _open_tag(name: str, attributes: Mapping[str, str], extra_class: str = "", extra: str = "") -> str:
    attrs = dict(attributes)
    if extra_class:
        attrs["class"] = (attrs.get("class", "") + " " + extra_class).strip()
    text = "".join(
        f' {k}="{html.escape(v, quote=True)}"'
        for k, v in attrs.items()
        if re.fullmatch(r"[a-z][a-z0-9_:.-]*", k)
    )
    return f"<{name}{text}{extra}>"


#: Elements inside which a wrapped run stays inline (a <div> there would end a paragraph).
INLINE_PARENTS = frozenset(
    "p a span b i em strong small code label h1 h2 h3 h4 h5 h6 pre q s u sub sup".split()
)


def _holds_blocks(doc: Document, parent: int, first: int, last: int) -> bool:
    """Whether a run of the parent's children holds block elements (then it is wrapped in a <div>)."""
    if doc.tag[parent] in INLINE_PARENTS:
        return False
    t = doc.tokens
    for k in range(first, last + 1):
        if t.kind[k] == OPEN:
            element = int(t.element[k])
            if (
                int(doc.parent[element]) == parent
                and doc.tag[element] in BLOCK_TAGS
                and doc.tag[element] not in ("br", "img")
            ):
                return True
    return False


#: What a dropped region is called in its one-line summary, by tag, ARIA role or class/id word.
FOLD_TAGS = {"nav": "navigation", "menu": "menu", "header": "header", "footer": "footer", "aside": "sidebar"}
FOLD_ROLES = {
    "navigation": "navigation",
    "menu": "menu",
    "menubar": "menu",
    "banner": "header",
    "contentinfo": "footer",
    "complementary": "sidebar",
    "search": "search",
}
FOLD_WORDS = {
    "nav": "menu",
    "navbar": "menu",
    "navigation": "navigation",
    "menu": "menu",
    "footer": "footer",
    "sidebar": "sidebar",
    "masthead": "header",
    "header": "header",
}
#: Elements that may be folded: blocks that already end an open <p>, so a <details> around them
#: leaves the page's structure as the parser built it.
FOLDABLE = frozenset("nav menu header footer aside div section ul ol".split())
_FOLD_WORD = re.compile(r"(?:^|[-_])(" + "|".join(FOLD_WORDS) + r")(?:$|[-_])")
#: A region is folded when it holds this many links, or (footers, sidebars) this many characters.
FOLD_MIN_LINKS = 3
FOLD_MIN_CHARS = 80


def _fold_kind(doc: Document, element: int) -> str | None:
    name = doc.tag[element]
    if name not in FOLDABLE:
        return None
    if name in FOLD_TAGS:
        return FOLD_TAGS[name]
    role = (doc.role[element] or "").strip().lower()
    if role in FOLD_ROLES:
        return FOLD_ROLES[role]
    words = f"{doc.ident[element] or ''} {doc.classes[element] or ''}".lower().split()
    for word in words:
        if match := _FOLD_WORD.search(word):
            return FOLD_WORDS[match[1]]
    return None


def folds(doc: Document, extraction: Extraction) -> dict[int, str]:
    """Dropped navigation, menus, headers, footers and sidebars, each folded into one summary line
    ("navigation: 120 links dropped, tap to show"): element -> the summary. Only regions with no
    kept text at all, the outermost of nested ones, and not where a `<details>` cannot sit."""
    n = len(doc.tokens)
    selection = extraction.selection
    if n == 0 or len(selection) != n or not doc.elements:
        return {}
    t = doc.tokens
    kept = np.concatenate(([0], np.cumsum((selection & (t.kind == TEXT)) * t.chars, dtype=np.int64)))
    anchors = np.asarray([int(doc.start[i]) for i, name in enumerate(doc.tag) if name == "a"], dtype=np.int64)
    body = doc.tag.index("body") if "body" in doc.tag else -1
    body_first, body_last = (int(doc.start[body]), int(doc.end[body])) if body >= 0 else (0, n - 1)
    chars = doc.subtree_chars
    words = _Sums(doc).words
    out: dict[int, str] = {}
    covered_until = -1
    for element in range(len(doc.tag)):
        first, last = int(doc.start[element]), int(doc.end[element])
        if first <= covered_until or not (body_first < first and last < body_last) or first == last:
            continue
        kind = _fold_kind(doc, element)
        parent = int(doc.parent[element])
        if kind is None or (parent >= 0 and doc.tag[parent] in NO_WRAP) or kept[last + 1] > kept[first]:
            continue
        links = int(
            np.searchsorted(anchors, last, side="right") - np.searchsorted(anchors, first, side="left")
        )
        if links >= FOLD_MIN_LINKS:
            summary = f"{kind}: {links} links dropped, tap to show"
        elif kind in ("footer", "sidebar") and int(chars[element]) >= FOLD_MIN_CHARS:
            summary = f"{kind}: {int(words[last + 1] - words[first])} words dropped, tap to show"
        else:
            continue
        out[element] = summary
        covered_until = last
    return out


def page_body(doc: Document, extraction: Extraction) -> tuple[str, int]:
    """The page's body as sanitised HTML with every block marked; and the number of marks drawn."""
    if len(doc.tokens) == 0:
        return "", 0
    blocks = extraction.blocks
    marks = block_marks(doc, blocks)
    features = block_features(doc, extraction, marks)
    body = doc.tag.index("body") if "body" in doc.tag else -1
    if body < 0:
        first_token, last_token = 0, len(doc.tokens) - 1
    else:
        first_token, last_token = int(doc.start[body]) + 1, int(doc.end[body]) - 1
    on_element: dict[int, list[int]] = {}
    wraps: dict[tuple[int, int], list[int]] = {}
    for i, mark in enumerate(marks):
        if mark.wrap:
            wraps.setdefault((mark.first, mark.last), []).append(i)
        else:
            on_element.setdefault(mark.element, []).append(i)
    opens: dict[int, list[tuple[int, int]]] = {}
    closes: dict[int, list[tuple[int, int]]] = {}
    for first, last in wraps:
        opens.setdefault(first, []).append((first, last))
        closes.setdefault(last, []).append((first, last))
    for values in opens.values():
        values.sort(key=lambda r: -r[1])  # outermost first
    for values in closes.values():
        values.sort(key=lambda r: -r[0])  # innermost first

    t = doc.tokens
    kind, owner = t.kind, t.element
    out: list[str] = []
    body_ids = on_element.get(body, []) if body >= 0 else []
    if body >= 0:
        extra, cls = _mark_attributes(body_ids, blocks, features) if body_ids else ("", "")
        out.append(_open_tag("div", {}, ("rpo-page " + cls).strip(), extra))
        out.append(_badges(body_ids, blocks, features))
    else:
        out.append('<div class="rpo-page">')
    drawn = len(body_ids) and 1
    folded = folds(doc, extraction)
    fold_ends = {int(doc.end[e]): e for e in folded}
    fold_until = -1  # the last token of the fold being written
    first_kept = True  # the first kept mark outside the folds is where the frame opens

    def opening(cls: str) -> str:
        nonlocal first_kept
        if first_kept and "rpo-k" in cls.split() and k > fold_until:
            first_kept = False
            return cls + " rpo-first"
        return cls

    skip_until = -1
    wrap_tags: dict[tuple[int, int], str] = {}
    k = first_token
    while k <= last_token:
        for span in opens.get(k, ()):
            ids = wraps[span]
            extra, cls = _mark_attributes(ids, blocks, features)
            cls = opening(cls)
            tag = "div" if _holds_blocks(doc, marks[ids[0]].element, span[0], span[1]) else "span"
            out.append(f'<{tag} class="{cls} rpo-wrap"{extra}>{_badges(ids, blocks, features)}')
            wrap_tags[span] = tag
            drawn += 1
        token_kind = kind[k]
        if token_kind == TEXT:
            out.append(html.escape(t.text[k], quote=False))
        else:
            element = int(owner[k])
            name = doc.tag[element]
            if token_kind == OPEN and element in folded:
                fold_until = int(doc.end[element])
                out.append(
                    f'<details class="rpo-fold"><summary class="rpo-fold-s">{html.escape(folded[element])}</summary>'
                )
            if token_kind == OPEN:
                ids = on_element.get(element, [])
                extra, cls = _mark_attributes(ids, blocks, features) if ids else ("", "")
                cls = opening(cls)
                drawn += 1 if ids else 0
                if name in FOREIGN:  # an empty placeholder; nothing inside is kept
                    out.append(
                        f'<span class="rpo-foreign {cls}"{extra}>{_badges(ids, blocks, features)}</span>'
                    )
                    skip_until = int(doc.end[element])
                    for span in closes.get(skip_until, ()):  # a wrap ending on the skipped part
                        out.append(f"</{wrap_tags.get(span, 'span')}>")
                    k = skip_until + 1
                    continue
                attributes = _attributes(doc, element, name)
                if ids and name in NO_BADGE:  # no badge inside: the features go in its title
                    attributes["title"] = "\n".join(features[i].describe(blocks[i]) for i in ids)
                out.append(_open_tag(RENAMED.get(name, name), attributes, cls, extra))
                if ids and name not in NO_BADGE:
                    out.append(_badges(ids, blocks, features))
            elif token_kind == CLOSE and name not in VOID_TAGS:
                out.append(f"</{RENAMED.get(name, name)}>")
                if fold_ends.get(k) == element:
                    out.append("</details>")
        for span in closes.get(k, ()):
            out.append(f"</{wrap_tags.get(span, 'span')}>")
        k += 1
    out.append("</div>")
    cleaned = clean_page("".join(out))
    return cleaned, drawn


def with_boundary_lines(content: str, extraction: Extraction) -> str:
    """The main-content boundary of `visual` (Berg 2020, Fig. 6.3: "the green lines show the
    boundary") drawn over the page: two vertical lines at the boundary's x in the rendered page
    (`BrowserSettings.viewport_width` wide). The overlay lays the page out again at the reader's width,
    so the lines match where the page's layout is as wide as the render (fixed-width pages on a
    desktop); the panel's chart gives the exact positions."""
    boundary = extraction.signals.get("visual_boundary")
    width = extraction.signals.get("page_width")
    if boundary is None or width is None or len(boundary) != 2 or len(width) != 1:
        return content
    left, right, page = float(boundary[0]), float(boundary[1]), float(width[0])
    if not all(np.isfinite([left, right, page])) or page <= 0 or not content.endswith("</div>"):
        return content
    lines = "".join(
        f'<div class="rpo-boundary" style="left:{min(max(x, 0.0), page):.0f}px" '
        f'title="main-content boundary: x = {x:.0f} px of the {page:.0f} px wide render" aria-hidden="true">'
        "</div>"
        for x in (left, right)
    )
    return content[: -len("</div>")] + lines + "</div>"
