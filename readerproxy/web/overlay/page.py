"""The whole overlay page, from the templates.

`frame_document`: the page on its own for the sandboxed frame (`templates/overlay_frame.html`).
`overlay_page`: readerproxy's own document around that frame (`templates/overlay.html`), with the
panel: the algorithm, the parameters form, the share selected, every block's features, the charts
(their top candidates named by `block_namer`) and a fallback told in words (`fallback_note`).
`overlay_file`: a self-contained overlay of a page, for a file.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2

from ...engine.extraction import Extraction
from ...engine.parse.document import TEXT, Document
from ...engine.parse.layout import LayoutSnapshot
from .. import charts as charts_module
from ..sanitize import FILE_CSP, base_url, frame_csp, page_site, page_styles, safe_url
from .body import _attributes, feature_rows, page_body, with_boundary_lines
from .features import block_features, element_path, selected_share
from .inspection import Inspection, inspect
from .marks import block_marks

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
    from ..templating import TEMPLATES_DIR

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
    from ...engine.extractors.auto import MIN_CHARS, MIN_SHARE, AutoParams, enough_chars

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
    from ...api import algorithms
    from ..templating import STATIC_DIR

    insp = inspect(
        source, url=url, content_type=content_type, algorithm=algorithm, params=params, layout=layout
    )
    css = (STATIC_DIR / "overlay-panel.css").read_text(encoding="utf-8")
    links = OverlayLinks(url=url or "", original=safe_url(url, None) if url else None, form_action=None)
    page, _ = overlay_page(insp, links, algorithms(), inline_css=css)
    return page
