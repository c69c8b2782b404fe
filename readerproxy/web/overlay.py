"""Overlays: the original page, sanitised, with every scored block of an `Extraction` outlined.

Works from the `Document` and the `Extraction` only (blocks, selection, signals, score, params);
it never looks inside an algorithm. Pure functions, I/O at the edges:

- `inspect(source, …)` runs the one pipeline (`pipeline.process_page`) and keeps what an overlay
  needs: the text, the Document, the Extraction and the Article.
- `block_marks(doc, blocks)` finds where each block sits in the page. An element block marks its
  element. A range of tokens (a line, a string, a segment: Block.start/end index the linear view)
  becomes the run of sibling nodes under the lowest element containing both ends; a run of several
  siblings is wrapped in a `<span>`, a run of one is that element. Runs that would cross one
  another (or sit where a span cannot, e.g. between table rows) mark the enclosing element.
- `page_body(doc, extraction)` rebuilds the page's body from the linear view with the marks (class
  `rpo-mark`, `data-rpo-blocks`, a score badge per block) and puts it through nh3 with a broad
  allowlist (`sanitize.clean_page`): no script, event handler, `javascript:` URL, frame, object or form survives. Dropped
  navigation, menus, headers, footers and sidebars (`folds`) sit in a `<details>` whose summary
  says what was dropped ("navigation: 120 links dropped, tap to show"), and the first kept mark
  outside them is where the frame opens (`rpo-first`, CSS `scroll-initial-target`).
- `block_namer`, `fallback_note`: the panel's top candidates by element path and first words, and
  a fallback (auto's learned scorer, auto-heuristic's tries) told in words.
- `sanitize.page_styles(text, base)` the page's own stylesheets (links and `<style>` bodies, which the
  Document drops), so the page still looks like itself; the CSP allows styles and images but no
  script of the page.
- `frame_document(...)` the page on its own: `templates/overlay_frame.html`, the marked body with
  the page's stylesheets, a feature card per badge (shown by CSS on hover, focus or tap) and a CSP
  of its own. It is shown in a sandboxed `<iframe srcdoc>` (no `allow-scripts`, no
  `allow-same-origin`): the page's CSS applies inside the frame's box only.
- `overlay_page(...)` the whole page: `templates/overlay.html`, readerproxy's own document, with
  the frame and the panel (algorithm, parameters form, time, share selected, every block's
  features, charts from `charts.py`); no page markup or CSS reaches it.
- `blocks_json(doc, extraction)` the blocks for `/api/extract?blocks=1`.
"""

from __future__ import annotations

import functools
import html
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import jinja2
import numpy as np

from ..engine.article import Article
from ..engine.extraction import Block, Extraction, Extractor, params_dict
from ..engine.parse.document import BLOCK_TAGS, CLOSE, OPEN, TEXT, Document
from ..engine.parse.layout import LayoutSnapshot
from ..engine.parse.scan import VOID_TAGS
from ..engine.pipeline import process_page
from ..engine.urls import LAZY_SOURCES, LAZY_SRCSETS
from . import charts as charts_module
from .sanitize import (
    FILE_CSP,
    URL_ATTRIBUTES,
    base_url,
    clean_page,
    fragment_url,
    frame_csp,
    page_site,
    page_styles,
    safe_css,
    safe_image_url,
    safe_srcset,
    safe_url,
)

#: Elements under which a wrapping <span> would be moved by the HTML parser: blocks inside mark the element.
NO_WRAP = frozenset("table thead tbody tfoot tr colgroup select optgroup datalist html head svg math".split())
#: Elements that take no badge inside them (void, tables' inner structure, replaced content).
NO_BADGE = VOID_TAGS | frozenset(
    "table thead tbody tfoot tr colgroup select optgroup datalist textarea "
    "svg math video audio picture iframe object".split()
)
#: Foreign content is replaced by an empty placeholder (nh3 would drop it; SVG can carry script).
FOREIGN = frozenset({"svg", "math"})
RENAMED = {"form": "div", "body": "div", "html": "div", "dialog": "div"}
# --------------------------------------------------------------------------------------------
# Running the pipeline's phases and keeping the Document.


@dataclass(slots=True)
class Inspection:
    """What the overlay reads: the decoded text, the Document, the Extraction and the Article."""

    text: str
    doc: Document
    extraction: Extraction
    article: Article
    requested: str  # the algorithm asked for (auto names another in extraction.algorithm)
    params: dict[str, Any]  # the requested algorithm's parameters, as validated
    url: str | None = None


def inspect(
    source: str | bytes,
    *,
    url: str | None = None,
    content_type: str | None = None,
    algorithm: str | Extractor[Any] = "auto",
    params: Mapping[str, Any] | object | None = None,
    layout: LayoutSnapshot | None = None,
) -> Inspection:
    """The pipeline on one page, keeping its Document (for overlays, compare and the blocks JSON)."""
    done = process_page(
        source, url=url, content_type=content_type, algorithm=algorithm, params=params, layout=layout
    )
    params_used = params_dict(done.params)
    return Inspection(
        done.text, done.doc, done.extraction, done.article, done.extractor.name, params_used, url
    )


# --------------------------------------------------------------------------------------------
# Where each block sits in the page.


@dataclass(frozen=True, slots=True)
class Mark:
    """Where blocks are drawn: on an element, or on a wrapped run of sibling tokens."""

    element: int  # the marked element, or for a wrap the element the run sits in
    first: int  # token range of the run (wraps); the element's own range otherwise
    last: int
    wrap: bool


def _depths(doc: Document) -> np.ndarray:
    depth = np.zeros(len(doc.parent), dtype=np.int32)
    parent = doc.parent.tolist()
    for i, p in enumerate(parent):  # parents come before their children in document order
        depth[i] = depth[p] + 1 if p >= 0 else 0
    return depth


def _owner(doc: Document, token: int) -> int:
    return int(doc.tokens.element[token])


def _lca(parent: np.ndarray, depth: np.ndarray, a: int, b: int) -> int:
    while depth[a] > depth[b]:
        a = int(parent[a])
    while depth[b] > depth[a]:
        b = int(parent[b])
    while a != b:
        a, b = int(parent[a]), int(parent[b])
    return a


def _child_toward(parent: np.ndarray, depth: np.ndarray, node: int, ancestor: int) -> int:
    while depth[node] > depth[ancestor] + 1:
        node = int(parent[node])
    return node


def block_marks(doc: Document, blocks: Sequence[Block]) -> list[Mark]:
    """One Mark per block (several blocks may share one), laminar: marks nest, never cross."""
    n_tokens = len(doc.tokens)
    if not blocks or n_tokens == 0 or not doc.elements:
        return []
    depth = _depths(doc)
    parent, start, end = doc.parent, doc.start, doc.end
    body = doc.tag.index("body") if "body" in doc.tag else 0
    body_first, body_last = int(start[body]), int(end[body])
    foreign_root = np.full(len(doc.tag), -1, dtype=np.int64)
    for i, name in enumerate(doc.tag):
        p = int(parent[i])
        if p >= 0 and foreign_root[p] >= 0:
            foreign_root[i] = foreign_root[p]
        elif name in FOREIGN:
            foreign_root[i] = i

    def element_mark(element: int) -> Mark:
        if element < 0 or not (body_first < start[element] and end[element] <= body_last):
            element = body  # outside the body (head, html): drawn on the page itself
        if foreign_root[element] >= 0:
            element = int(foreign_root[element])
        return Mark(element, int(start[element]), int(end[element]), False)

    def wanted_mark(block: Block) -> Mark:
        s = max(0, min(block.start, n_tokens - 1))
        e = max(s, min(block.end, n_tokens - 1))
        if block.element is not None:
            return element_mark(block.element)
        a, b = _owner(doc, s), _owner(doc, e)
        if a < 0 or b < 0:
            return element_mark(body)
        common = _lca(parent, depth, a, b)
        if s == start[common] or e == end[common] or doc.tag[common] in NO_WRAP or foreign_root[common] >= 0:
            return element_mark(common)
        child_a = _child_toward(parent, depth, a, common) if a != common else None
        child_b = _child_toward(parent, depth, b, common) if b != common else None
        if child_a is not None and child_a == child_b:
            return element_mark(child_a)
        first = int(start[child_a]) if child_a is not None else s
        last = int(end[child_b]) if child_b is not None else e
        whole_body = common == body and first <= body_first + 1 and last >= body_last - 1
        if whole_body or not (body_first < first and last < body_last):
            return element_mark(body)
        return Mark(common, first, last, True)

    result = [wanted_mark(block) for block in blocks]
    # Wraps must nest with one another: a run crossing an accepted one marks its element instead.
    order = sorted(range(len(result)), key=lambda i: (result[i].first, -result[i].last))
    stack: list[Mark] = []
    for i in order:
        mark = result[i]
        if not mark.wrap:
            continue
        while stack and stack[-1].last < mark.first:
            stack.pop()
        if stack and mark.last > stack[-1].last:
            result[i] = element_mark(mark.element)
            continue
        stack.append(mark)
    return result


# --------------------------------------------------------------------------------------------
# Features of a block (shown on hover, in the badge's title, in the API).


@dataclass(frozen=True, slots=True)
class Features:
    tag: str
    words: int
    chars: int
    link_density: float
    text_code_ratio: float
    element_score: float | None

    def describe(self, block: Block) -> str:
        parts = [
            f"{block.label or self.tag}",
            f"<{self.tag}>",
            f"{self.words} words",
            f"links {self.link_density:.0%}",
            f"text/code {self.text_code_ratio:.2f}",
            f"score {charts_module.format_number(block.score)}",
        ]
        if self.element_score is not None:
            parts.append(f"element score {charts_module.format_number(self.element_score)}")
        parts.append("kept" if block.selected else "dropped")
        return " · ".join(parts)


class _Sums:
    """Prefix sums over the linear view: text characters, anchor characters, tag code, words."""

    def __init__(self, doc: Document) -> None:
        t = doc.tokens
        text = t.kind == TEXT
        words = np.fromiter((len(s.split()) if s else 0 for s in t.text), dtype=np.int64, count=len(t))

        def prefix(values: np.ndarray) -> np.ndarray:
            return np.concatenate(([0], np.cumsum(values, dtype=np.int64)))

        self.chars = prefix(np.where(text, t.chars, 0))
        self.anchor = prefix(np.where(text & t.in_anchor, t.chars, 0))
        self.code = prefix(np.where(text, 0, t.length))
        self.words = prefix(words)

    def between(self, array: np.ndarray, first: int, last: int) -> int:
        return int(array[last + 1] - array[first])


def block_features(
    doc: Document, extraction: Extraction, marks: Sequence[Mark] | None = None
) -> list[Features]:
    """Tag, words, link density, text/code ratio (and the element's score when the signals carry one)."""
    if not extraction.blocks or len(doc.tokens) == 0:
        return []
    sums = _Sums(doc)
    marks = block_marks(doc, extraction.blocks) if marks is None else marks
    element_score = extraction.signals.get("element_score")
    per_element = element_score is not None and len(element_score) == len(doc.elements)
    n = len(doc.tokens)
    out = []
    for block, mark in zip(extraction.blocks, marks, strict=True):
        first, last = max(0, block.start), min(max(block.start, block.end), n - 1)
        chars = sums.between(sums.chars, first, last)
        code = sums.between(sums.code, first, last)
        element = block.element if block.element is not None else mark.element
        out.append(
            Features(
                tag=doc.tag[element] if 0 <= element < len(doc.tag) else "",
                words=sums.between(sums.words, first, last),
                chars=chars,
                link_density=sums.between(sums.anchor, first, last) / chars if chars else 0.0,
                text_code_ratio=chars / code if code else float(chars),
                element_score=float(element_score[block.element])  # type: ignore[index]
                if per_element and block.element is not None
                else None,
            )
        )
    return out


def element_path(doc: Document, element: int) -> str:
    """A CSS path to an element of the cleaned document: `body > div#main > p:nth-of-type(3)`."""
    if not 0 <= element < len(doc.tag):
        return ""
    nth = _nth_of_type(doc)
    parts = []
    node = element
    while node >= 0:
        name = doc.tag[node]
        ident = doc.elements[node].id
        if ident and re.fullmatch(r"[A-Za-z][\w-]*", ident):
            parts.append(f"{name}#{ident}")
        elif name in ("html", "body", "head"):
            parts.append(name)
        else:
            parts.append(f"{name}:nth-of-type({nth[node]})")
        node = int(doc.parent[node])
    return " > ".join(reversed(parts))


def _nth_of_type(doc: Document) -> list[int]:
    cached = doc.__dict__.get("_rpo_nth")
    if cached is not None:
        return cast(list[int], cached)
    counts: dict[tuple[int, str], int] = {}
    nth = []
    for i, name in enumerate(doc.tag):
        key = (int(doc.parent[i]), name)
        counts[key] = counts.get(key, 0) + 1
        nth.append(counts[key])
    doc.__dict__["_rpo_nth"] = nth
    return nth


def selected_share(doc: Document, selection: np.ndarray) -> float:
    """Share of the body's text characters that the selection keeps."""
    t = doc.tokens
    text = (t.kind == TEXT) & doc.body_mask
    total = int(t.chars[text].sum())
    return int(t.chars[text & selection].sum()) / total if total else 0.0


def _json_number(value: float) -> float | None:
    return float(value) if np.isfinite(value) else None


def blocks_json(doc: Document, extraction: Extraction) -> dict[str, Any]:
    """Blocks (label, score, selected, text length, element path, token range) and signals, JSON-ready."""
    marks = block_marks(doc, extraction.blocks)
    features = block_features(doc, extraction, marks)
    blocks = []
    for block, mark, feature in zip(extraction.blocks, marks, features, strict=True):
        element = block.element if block.element is not None else mark.element
        blocks.append(
            {
                "label": block.label,
                "score": _json_number(block.score),
                "selected": block.selected,
                "text_length": feature.chars,
                "words": feature.words,
                "link_density": round(feature.link_density, 4),
                "start": block.start,
                "end": block.end,
                "element": block.element,
                "path": element_path(doc, element),
            }
        )
    signals = {
        name: [_json_number(v) for v in np.asarray(values, dtype=np.float64).ravel().tolist()]
        for name, values in extraction.signals.items()
    }
    return {"blocks": blocks, "signals": signals}


# --------------------------------------------------------------------------------------------
# The page body with its marks, sanitised.


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


# --------------------------------------------------------------------------------------------
# The whole overlay page.

#: The sandbox of the page's frame: no script, an opaque origin (no allow-same-origin), no form, no
#: popup, no navigation of the tab. Every link of the page targets the tab (`_top`), which the
#: sandbox refuses, so a tap that selects a block never follows its link; a long-press on a link
#: opens the browser's own menu (open in a new tab, copy the address).
FRAME_SANDBOX = ""
#: The panel lists at most this many blocks (the frame marks every one).
PANEL_BLOCKS = 500


@dataclass(frozen=True, slots=True)
class ParamField:
    name: str
    value: str
    kind: str  # "number" | "bool" | "text"


@dataclass(frozen=True, slots=True)
class OverlayLinks:
    """Where the panel's links and forms go (None: leave the link out, e.g. in a file)."""

    url: str  # the page's address, for the forms
    reader: str | None = None
    compare: str | None = None
    original: str | None = None
    form_action: str | None = "/read"


def param_fields(params: Mapping[str, Any]) -> list[ParamField]:
    out = []
    for name, value in params.items():
        if isinstance(value, bool):
            out.append(ParamField(name, "true" if value else "false", "bool"))
        elif isinstance(value, int | float):
            out.append(
                ParamField(name, f"{value:g}" if isinstance(value, float) else str(int(value)), "number")
            )
        else:
            out.append(ParamField(name, "" if value is None else str(value), "text"))
    return out


@functools.lru_cache(maxsize=4)
def _environment(templates_dir: str) -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(templates_dir), autoescape=True, trim_blocks=True, lstrip_blocks=True
    )


def templates_dir() -> Path:
    from .templating import TEMPLATES_DIR

    return TEMPLATES_DIR


@dataclass(frozen=True, slots=True)
class BlockRow:
    """One block in the panel's list of every block."""

    index: int
    kept: bool
    rows: list[tuple[str, str]]


def frame_document(insp: Inspection, template_dir: Path | None = None) -> tuple[str, int]:
    """The page on its own, for the overlay's sandboxed frame: the marked, sanitised body with the
    page's stylesheets, the marks' CSS and the frame's CSP; and the number of marks drawn."""
    doc, extraction = insp.doc, insp.extraction
    content, drawn = page_body(doc, extraction)
    content = with_boundary_lines(content, extraction)
    root = doc.tag.index("html") if "html" in doc.tag else -1
    root_attrs = _attributes(doc, root, "html") if root >= 0 else {}
    body = doc.tag.index("body") if "body" in doc.tag else -1
    body_attrs = {
        k: v
        for k, v in (_attributes(doc, body, "body") if body >= 0 else {}).items()
        if k in ("class", "id", "style", "lang", "dir")
    }
    frame = (
        _environment(str(template_dir or templates_dir()))
        .get_template("overlay_frame.html")
        .render(
            lang=doc.lang,
            dir=doc.dir,
            root_class=root_attrs.get("class", ""),
            styles=page_styles(insp.text, base_url(doc), page_site(doc.url)),
            content=content,
            body_attrs=body_attrs,
            csp=frame_csp(doc.url),
        )
    )
    return frame, drawn


def first_words(doc: Document, first: int, last: int, count: int = 8) -> str:
    """The first `count` words of the text tokens first..last ("…" when there are more)."""
    t = doc.tokens
    words: list[str] = []
    for k in range(max(0, first), min(last, len(t) - 1) + 1):
        if t.kind[k] == TEXT and t.text[k]:
            words.extend(t.text[k].split())
            if len(words) > count:
                return " ".join(words[:count]) + "…"
    return " ".join(words)


def short_path(doc: Document, element: int, steps: int = 3) -> str:
    """The last `steps` steps of an element's path (`… > div#main > p:nth-of-type(3)`)."""
    parts = element_path(doc, element).split(" > ")
    return ("… > " if len(parts) > steps else "") + " > ".join(parts[-steps:])


def block_namer(doc: Document, extraction: Extraction) -> Callable[[int], str]:
    """Names block i by its element path and first words, for the chart's top candidates."""
    marks = block_marks(doc, extraction.blocks)

    def describe(index: int) -> str:
        block = extraction.blocks[index]
        element = block.element if block.element is not None else marks[index].element
        text = first_words(doc, block.start, block.end)
        return f"{short_path(doc, element)} “{text}”" if text else short_path(doc, element)

    return describe


#: How auto-heuristic's tries (`auto.FALLBACKS`, in order) are told in the panel.
FALLBACK_NAMES = (
    "heuristic after removing unlikely candidates",
    "heuristic on the whole page",
    "accb",
    "baseline (every visible text run)",
)


def fallback_note(insp: Inspection) -> str | None:
    """In words, why the selection comes from a fallback (auto's learned scorer or auto-heuristic's
    first try kept too little text), or None when it does not."""
    from ..engine.extractors.auto import MIN_CHARS, MIN_SHARE, AutoParams, enough_chars

    signals, extraction = insp.extraction.signals, insp.extraction
    tried = signals.get("auto_tried")
    learned = "learned_probability" in signals and extraction.algorithm != "learned"
    if tried is None or (len(tried) <= 1 and not learned):
        return None
    params = AutoParams(
        min_chars=int(insp.params.get("min_chars", MIN_CHARS)),
        min_share=float(insp.params.get("min_share", MIN_SHARE)),
    )
    enough = enough_chars(insp.doc, params)
    names = [FALLBACK_NAMES[int(i)] if int(i) < len(FALLBACK_NAMES) else "?" for i in tried]
    parts = []
    if learned:
        parts.append(
            f"The learned scorer kept less than {enough} characters of text, the least an article needs"
        )
    failed = names[:-1]
    if failed:
        lead = "then " if learned else ""
        parts.append(f"{lead}{', then '.join(failed)} kept too little")
    last = names[-1]
    if int(tried[-1]) == len(FALLBACK_NAMES) - 1:
        parts.append(f"so the last resort, {last}, keeps all the page's visible text as one selection")
    else:
        parts.append(f"so the selection shown is the one of {last}")
    return "; ".join(parts) + "."


def overlay_page(
    insp: Inspection,
    links: OverlayLinks,
    algorithms: Mapping[str, str],
    *,
    asset: Callable[[str], str] | None = None,
    inline_css: str | None = None,
    template_dir: Path | None = None,
) -> tuple[str, int]:
    """The overlay page's HTML and the number of marks drawn.

    readerproxy's own document: the panel, and the page in a sandboxed `<iframe srcdoc>` (see
    `frame_document`). With `asset` it links /static/overlay-panel.css; with `inline_css` it is
    self-contained (a file: CSS inline, charts inline, a CSP meta forbidding every script).
    """
    doc, extraction = insp.doc, insp.extraction
    frame, drawn = frame_document(insp, template_dir)
    chart_list = charts_module.charts_for(extraction, block_namer(doc, extraction))
    charts = [
        {"chart": c, "svg": charts_module.svg(c), "legend": charts_module.legend(c)} for c in chart_list
    ]
    kept = sum(1 for b in extraction.blocks if b.selected)
    features = block_features(doc, extraction)
    block_rows = [
        BlockRow(i, block.selected, feature_rows(i, block, feature)[1:])
        for i, (block, feature) in enumerate(zip(extraction.blocks, features, strict=True))
        if i < PANEL_BLOCKS
    ]
    page = (
        _environment(str(template_dir or templates_dir()))
        .get_template("overlay.html")
        .render(
            title=doc.title or links.url,
            frame=frame,
            sandbox=FRAME_SANDBOX,
            requested=insp.requested,
            algorithm=extraction.algorithm or insp.requested,
            score=charts_module.format_number(extraction.score),
            elapsed=f"{extraction.elapsed_ms:.1f}",
            share=f"{selected_share(doc, extraction.selection):.0%}",
            n_blocks=len(extraction.blocks),
            n_kept=kept,
            drawn=drawn,
            block_rows=block_rows,
            params=param_fields(insp.params),
            ran_params=extraction.params if extraction.algorithm != insp.requested else {},
            fallback=fallback_note(insp),
            charts=charts,
            algorithms=algorithms,
            links=links,
            asset=asset,
            inline_css=inline_css,
            csp=FILE_CSP if inline_css is not None else None,
        )
    )
    return page, drawn


def overlay_file(
    source: str | bytes,
    *,
    url: str | None = None,
    content_type: str | None = None,
    algorithm: str = "auto",
    params: Mapping[str, Any] | None = None,
    layout: LayoutSnapshot | None = None,
) -> str:
    """A self-contained overlay of a page (CSS and SVG inline, no script): `readerproxy extract --overlay`."""
    from ..api import algorithms
    from .templating import STATIC_DIR

    insp = inspect(
        source, url=url, content_type=content_type, algorithm=algorithm, params=params, layout=layout
    )
    css = (STATIC_DIR / "overlay-panel.css").read_text(encoding="utf-8")
    links = OverlayLinks(url=url or "", original=safe_url(url, None) if url else None, form_action=None)
    page, _ = overlay_page(insp, links, algorithms(), inline_css=css)
    return page
