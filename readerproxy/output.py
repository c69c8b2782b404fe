"""From a token selection back to a reader's article: sanitised HTML, plain text and markdown.

Every extractor ends in a boolean mask over the document's linear view. `render_html` keeps the
elements that contain a selected token (so the result is a well-nested subtree of the real page),
writes only allowlisted tags and attributes with absolute URLs, and passes the fragment through nh3
(the ammonia sanitiser) as the last word on safety. `render_text` gives one block per paragraph.
"""

from __future__ import annotations

import html as html_lib
import re
from collections.abc import Callable

import nh3
import numpy as np
from selectolax.lexbor import LexborHTMLParser, LexborNode

from .document import BLOCK_TAGS, OPEN, TEXT, Document

#: Tags written as they are (without attributes unless listed in ATTRIBUTES).
ALLOWED_TAGS = frozenset(
    "a abbr b bdi bdo blockquote br caption cite code col colgroup dd del details dfn div dl dt "
    "em figcaption figure h1 h2 h3 h4 h5 h6 hr i img ins kbd li mark ol p picture pre q rp rt "
    "ruby s samp section small source strong sub summary sup table tbody td tfoot th thead time "
    "tr u ul var wbr article".split()
)
#: Structural containers written as <div> so that their text stays in separate blocks.
AS_DIV = frozenset("main header footer aside nav center address hgroup fieldset menu dir".split())
#: Elements dropped with everything inside them: interactive or embedded, never reader content.
DROPPED = frozenset(
    "form input button select option optgroup textarea label svg math canvas audio video "
    "map area head title meta link base frame frameset dialog".split()
)
#: Media kept when they lie inside the selected range, even if the algorithm did not select them.
MEDIA_TAGS = frozenset({"figure", "picture", "img"})
ATTRIBUTES: dict[str, frozenset[str]] = {
    "a": frozenset({"href", "title"}),
    "img": frozenset({"src", "srcset", "alt", "title", "width", "height", "sizes"}),
    "source": frozenset({"srcset", "media", "type", "sizes"}),
    "td": frozenset({"colspan", "rowspan"}),
    "th": frozenset({"colspan", "rowspan", "scope"}),
    "col": frozenset({"span"}),
    "colgroup": frozenset({"span"}),
    "ol": frozenset({"start", "reversed"}),
    "time": frozenset({"datetime"}),
    "abbr": frozenset({"title"}),
    "bdo": frozenset({"dir"}),
    "blockquote": frozenset({"cite"}),
    "q": frozenset({"cite"}),
    "pre": frozenset(),
    "code": frozenset(),
}
_URL_ATTRIBUTES = frozenset({"href", "src", "cite"})
_LAZY_SOURCES = ("data-src", "data-original", "data-lazy-src", "data-url", "data-hi-res-src")
_LAZY_SRCSETS = ("data-srcset", "data-lazy-srcset")
_SAFE_SCHEMES = frozenset({"http", "https", "mailto", "tel", "data"})
_WS = re.compile(r"[ \t\r\f\v\u00a0\u2000-\u200b\u3000]+")
_BLANK_LINES = re.compile(r"\n{3,}")

LinkRewriter = Callable[[str], str]


def kept_elements(doc: Document, selection: np.ndarray) -> np.ndarray:
    """Elements that contain at least one selected token (ancestor-closed by construction)."""
    return doc.sum_within(selection.astype(np.int64)) > 0


def selected_range(selection: np.ndarray) -> tuple[int, int]:
    """Indices of the first and last selected token (the selection must not be empty)."""
    return int(np.argmax(selection)), len(selection) - 1 - int(np.argmax(selection[::-1]))


def render_html(
    doc: Document,
    selection: np.ndarray,
    rewrite_link: LinkRewriter | None = None,
    images: bool = True,
) -> str:
    """Sanitised HTML of the selected tokens, keeping the page's structure, images and links."""
    if not selection.any():
        return ""
    keep = kept_elements(doc, selection).tolist()
    t = doc.tokens
    kinds = t.kind.tolist()
    owners = t.element.tolist()
    selected = selection.tolist()
    first, last = selected_range(selection)
    out: list[str] = []
    # Open the kept ancestors of the first selected token, then walk the selected range.
    ancestors = _ancestors(doc, owners[first] if kinds[first] == TEXT else int(doc.parent[owners[first]]))
    opened_before = set(ancestors)
    for element in ancestors:
        out.append(_start_tag(doc, element, rewrite_link, images))
    skip_until = -1
    media_until = -1  # inside a media element of the selected range: written whole
    for i in range(first, last + 1):
        if i <= skip_until:
            continue
        kind = kinds[i]
        inside_media = i <= media_until
        if kind == TEXT:
            if selected[i] or inside_media:
                out.append(html_lib.escape(t.text[i], quote=False))
            continue
        element = owners[i]
        name = doc.tag[element]
        if not (keep[element] or inside_media):
            if kind == OPEN and images and name in MEDIA_TAGS and not _is_tracking_pixel(doc, element):
                # Figures and images between selected text are part of the article even when the
                # algorithm scored only text (DOM scorers select paragraphs, not pictures).
                media_until = int(doc.end[element])
                out.append(_start_tag(doc, element, rewrite_link, images))
            continue
        if kind == OPEN:
            if name in DROPPED:
                skip_until = int(doc.end[element])
                continue
            out.append(_start_tag(doc, element, rewrite_link, images))
        elif inside_media or doc.start[element] >= first or element in opened_before:
            out.append(_end_tag(name))
    for element in reversed(ancestors):
        if doc.end[element] > last:
            out.append(_end_tag(doc.tag[element]))
    return sanitize("".join(out))


def _is_tracking_pixel(doc: Document, element: int) -> bool:
    attrs = doc.elements[element].attributes
    return any((attrs.get(size) or "").strip() in ("0", "1") for size in ("width", "height"))


def _ancestors(doc: Document, element: int) -> list[int]:
    chain: list[int] = []
    while element >= 0:
        chain.append(element)
        element = int(doc.parent[element])
    return chain[::-1]


def _output_name(name: str) -> str | None:
    if name in ALLOWED_TAGS:
        return name
    if name in AS_DIV:
        return "div"
    return None


def _start_tag(doc: Document, element: int, rewrite_link: LinkRewriter | None, images: bool) -> str:
    name = _output_name(doc.tag[element])
    if name is None or (name in ("img", "picture", "source") and not images):
        return ""
    allowed = ATTRIBUTES.get(name)
    if not allowed:
        return f"<{name}>"
    attrs = doc.elements[element].attributes
    values: dict[str, str] = {}
    if name in ("img", "source"):
        values.update(_image_sources(attrs))
    for key in allowed:
        if key in values:
            continue
        value = attrs.get(key)
        if value is None:
            continue
        values[key] = value
    parts = [name]
    for key, value in sorted(values.items()):  # a stable order (sets iterate in hash order)
        if key in _URL_ATTRIBUTES:
            url = _safe_url(doc, value)
            if url is None:
                continue
            if key == "href" and rewrite_link is not None and url.startswith(("http://", "https://")):
                url = rewrite_link(url)
            value = url
        elif key == "srcset":
            value = _absolute_srcset(doc, value)
        parts.append(f'{key}="{html_lib.escape(value, quote=True)}"')
    if name == "img" and not any(p.startswith("src=") for p in parts[1:]):
        return ""
    return "<" + " ".join(parts) + ">"


def _end_tag(name: str) -> str:
    out = _output_name(name)
    if out is None or out in ("img", "br", "hr", "wbr", "source", "col"):
        return ""
    return f"</{out}>"


def _image_sources(attrs: dict[str, str | None]) -> dict[str, str]:
    """The real image behind lazy-loading placeholders (data-src, data-srcset, …)."""
    found: dict[str, str] = {}
    src = (attrs.get("src") or "").strip()
    if not src or src.startswith("data:") or "placeholder" in src or "blank." in src:
        for key in _LAZY_SOURCES:
            lazy = (attrs.get(key) or "").strip()
            if lazy:
                found["src"] = lazy
                break
    for key in _LAZY_SRCSETS:
        lazy = (attrs.get(key) or "").strip()
        if lazy and not (attrs.get("srcset") or "").strip():
            found["srcset"] = lazy
            break
    return found


def _safe_url(doc: Document, value: str) -> str | None:
    url = doc.absolute_url(value.strip())
    if not url:
        return None
    scheme = url.split(":", 1)[0].lower() if ":" in url.split("/", 1)[0] else ""
    if scheme and scheme not in _SAFE_SCHEMES:
        return None
    if scheme == "data" and not url.lower().startswith("data:image/"):
        return None
    return url


def _absolute_srcset(doc: Document, srcset: str) -> str:
    candidates = []
    for candidate in srcset.split(","):
        pieces = candidate.strip().split()
        if not pieces:
            continue
        url = _safe_url(doc, pieces[0])
        if url:
            candidates.append(" ".join([url, *pieces[1:]]))
    return ", ".join(candidates)


def sanitize(fragment: str) -> str:
    """The allowlist, enforced by nh3: no scripts, handlers, forms, frames or unsafe URLs."""
    return nh3.clean(
        fragment,
        tags=set(ALLOWED_TAGS),
        attributes={tag: set(names) for tag, names in ATTRIBUTES.items()},
        url_schemes=set(_SAFE_SCHEMES),
        link_rel="noopener noreferrer",
        strip_comments=True,
    )


def render_text(doc: Document, selection: np.ndarray) -> str:
    """Plain text of the selected tokens: one block per paragraph, a blank line between blocks."""
    if not selection.any():
        return ""
    t = doc.tokens
    kinds = t.kind.tolist()
    owners = t.element.tolist()
    selected = selection.tolist()
    first, last = selected_range(selection)
    blocks: list[str] = []
    current: list[str] = []
    preformatted = 0

    def flush() -> None:
        if current:
            text = "".join(current)
            if not preformatted:
                text = "\n".join(_WS.sub(" ", line).strip() for line in text.split("\n"))
                text = re.sub(r"\n+", "\n", text).strip()
            if text.strip():
                blocks.append(text.strip("\n"))
            current.clear()

    for i in range(first, last + 1):
        kind = kinds[i]
        if kind == TEXT:
            if selected[i]:
                text = t.text[i]
                current.append(text if preformatted else text.replace("\n", " "))
            continue
        name = doc.tag[owners[i]]
        if name == "br":
            current.append("\n")
        elif name in ("td", "th"):
            current.append(" ")
        elif name == "pre":
            flush()
            preformatted += 1 if kind == OPEN else -1
            preformatted = max(preformatted, 0)
        elif name in BLOCK_TAGS:
            flush()
    flush()
    return _BLANK_LINES.sub("\n\n", "\n\n".join(blocks))


def html_to_markdown(fragment: str) -> str:
    """Markdown of a sanitised fragment: headings, lists, quotes, code, links, images, emphasis."""
    if not fragment:
        return ""
    root = LexborHTMLParser(f"<body>{fragment}</body>").body
    if root is None:
        return ""
    text = _markdown_children(root, list_depth=0)
    text = re.sub(r"[ \t]+\n", "\n", text)
    return _BLANK_LINES.sub("\n\n", text).strip() + "\n"


def _markdown_children(node: LexborNode, list_depth: int) -> str:
    parts: list[str] = []
    child = node.child
    while child is not None:
        parts.append(_markdown_node(child, list_depth))
        child = child.next
    return "".join(parts)


def _markdown_node(node: LexborNode, list_depth: int) -> str:
    tag = node.tag
    if tag == "-text":
        return _WS.sub(" ", (node.text_content or "").replace("\n", " "))
    if tag is None or tag.startswith("-"):
        return ""
    inner = _markdown_children(node, list_depth)
    if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
        return f"\n\n{'#' * int(tag[1])} {inner.strip()}\n\n"
    if tag in ("p", "div", "section", "article", "figure", "table", "details", "dl"):
        return f"\n\n{inner.strip()}\n\n"
    if tag in ("tr", "figcaption", "caption", "summary", "dt", "dd"):
        return f"\n{inner.strip()}\n"
    if tag in ("td", "th"):
        return f" {inner.strip()} |"
    if tag == "br":
        return "  \n"
    if tag == "hr":
        return "\n\n---\n\n"
    if tag in ("strong", "b"):
        return f"**{inner.strip()}**" if inner.strip() else ""
    if tag in ("em", "i"):
        return f"*{inner.strip()}*" if inner.strip() else ""
    if tag == "code":
        return f"`{inner}`"
    if tag == "pre":
        return f"\n\n```\n{node.text(deep=True).strip(chr(10))}\n```\n\n"
    if tag == "blockquote":
        lines = inner.strip().splitlines()
        return "\n\n" + "\n".join(f"> {line}" if line else ">" for line in lines) + "\n\n"
    if tag in ("ul", "ol"):
        items = []
        number = 1
        child = node.child
        while child is not None:
            if child.tag == "li":
                marker = f"{number}." if tag == "ol" else "-"
                body = _markdown_children(child, list_depth + 1).strip()
                body = body.replace("\n", "\n" + "  " * (list_depth + 1))
                items.append("  " * list_depth + f"{marker} {body}")
                number += 1
            child = child.next
        return "\n\n" + "\n".join(items) + "\n\n"
    if tag == "a":
        href = node.attributes.get("href")
        label = inner.strip()
        return f"[{label}]({href})" if href and label else inner
    if tag == "img":
        src = node.attributes.get("src")
        alt = node.attributes.get("alt") or ""
        return f"![{alt}]({src})" if src else ""
    return inner
