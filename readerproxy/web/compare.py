"""Compare: every registered algorithm on one page, side by side.

Pure functions over one `Document` (parsed once, read by every extractor through the pipeline's
`resolve` and `run_extractor`): words kept, the share of the text kept, score (each algorithm's own
0-1 measure, explained per algorithm in `SCORE_MEANINGS`), time, the pairwise agreement of the
selections (overlap of the selected text, |A and B| / |A or B| in characters) and a thumbnail of
each selection over the page's outline (SVG, no script). `visual` reads the layout of one browser
render, whose DOM every other algorithm reads too; without a browser it is listed as unavailable,
with the reason. `readerproxy eval --report` does the same for many pages at once.
"""

from __future__ import annotations

import html
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..api import MENU_HIDDEN
from ..engine.extraction import Extraction, registry
from ..engine.parse.document import TEXT, Document
from ..engine.parse.layout import LayoutSnapshot, align
from ..engine.pipeline import decode, parse, resolve, run_extractor
from .charts import format_number

THUMB_BINS = 60
THUMB_WIDTH = 44
THUMB_HEIGHT = 180

#: What each algorithm's score means, by the algorithm that made the selection (every one is 0-1,
#: but measured its own way: not comparable across algorithms; the share of text kept is).
SCORE_MEANINGS = {
    "learned": "confidence: the trained scorer's mean probability over the kept blocks",
    "heuristic": "the share of the page's positive element score that was kept",
    "visual": "the share of the page's positive element score that was kept (after the layout penalties)",
    "density": "the share of the chosen region's text in strings above the length cutoff",
    "cetr": "the variance of the tag ratios that the content/boilerplate split explains",
    "cetr-km": "the variance of the tag ratios that the content/boilerplate split explains",
    "cetr-tm": "the variance of the tag ratios that the content/boilerplate split explains",
    "lineblock": "the share of the text of line blocks that was kept",
    "danag": "the share of content characters in the chosen area",
    "accb": "the mean content/code ratio of the kept text",
    "baseline": "always 1: it keeps all the text and scores nothing",
}


@dataclass(slots=True)
class Run:
    """One algorithm's result on the page."""

    name: str
    ran: str  # the algorithm that produced the selection (auto names another)
    extraction: Extraction | None
    words: int = 0
    chars: int = 0
    share: float = 0.0
    error: str = ""
    unavailable: bool = False  # could not run here (the browser), `error` says why

    @property
    def score(self) -> float:
        return self.extraction.score if self.extraction is not None else 0.0

    @property
    def elapsed_ms(self) -> float:
        return self.extraction.elapsed_ms if self.extraction is not None else 0.0


@dataclass(slots=True)
class Comparison:
    url: str | None
    title: str
    doc: Document
    runs: list[Run]
    agreement: np.ndarray  # (n, n) overlap of selected text characters
    parse_ms: float = 0.0
    rendered: bool = False  # the Document is a browser render's DOM, with its layout


def algorithm_names() -> list[str]:
    """Every registered algorithm, auto first (`learned`, auto by its own name, left out); those
    that need the browser's layout (`visual`) are listed too, run or marked unavailable."""
    names = sorted(name for name in registry() if name not in MENU_HIDDEN)
    return ["auto", *[n for n in names if n != "auto"]] if "auto" in names else names


def browser_algorithms() -> frozenset[str]:
    """The algorithms that read a browser's layout (`visual`)."""
    return frozenset(name for name, extractor in registry().items() if extractor.needs_browser)


def _text_chars(doc: Document) -> np.ndarray:
    t = doc.tokens
    return np.where((t.kind == TEXT) & doc.body_mask, t.chars, 0).astype(np.int64)


def _words(doc: Document) -> np.ndarray:
    t = doc.tokens
    return np.fromiter((len(s.split()) if s else 0 for s in t.text), dtype=np.int64, count=len(t))


def run_all(doc: Document, names: Sequence[str] | None = None, unavailable: str | None = None) -> list[Run]:
    """Every algorithm with its default parameters on the same Document. Those that need the
    browser run only on a Document with a layout; without one they are marked unavailable, with
    `unavailable` as the reason."""
    chars = _text_chars(doc)
    words = _words(doc) * (doc.tokens.kind == TEXT)
    total = int(chars.sum())
    runs = []
    needs_browser = browser_algorithms()
    for name in names or algorithm_names():
        if name in needs_browser and doc.layout is None:
            reason = f"unavailable: {unavailable or 'the page was not rendered in a browser'}"
            runs.append(Run(name, name, None, error=reason, unavailable=True))
            continue
        try:
            extractor, params = resolve(name)
            extraction = run_extractor(doc, extractor, params)
        except Exception as exc:  # one failing algorithm does not hide the others
            runs.append(Run(name, name, None, error=f"{type(exc).__name__}: {exc}"))
            continue
        selection = extraction.selection
        kept = int(chars[selection].sum()) if len(selection) == len(chars) else 0
        runs.append(
            Run(
                name,
                extraction.algorithm or name,
                extraction,
                words=int(words[selection].sum()) if len(selection) == len(words) else 0,
                chars=kept,
                share=kept / total if total else 0.0,
            )
        )
    return runs


def agreement(doc: Document, runs: Sequence[Run]) -> np.ndarray:
    """Pairwise overlap of the selected text: characters in both / characters in either (1 on the diagonal)."""
    chars = _text_chars(doc)
    n = len(runs)
    masks = np.zeros((n, len(chars)), dtype=bool)
    for i, run in enumerate(runs):
        if run.extraction is not None and len(run.extraction.selection) == len(chars):
            masks[i] = run.extraction.selection & (chars > 0)
    weighted = masks * chars
    both = weighted.astype(np.float64) @ masks.T.astype(np.float64)
    sizes = np.diag(both)
    either = sizes[:, None] + sizes[None, :] - both
    with np.errstate(invalid="ignore", divide="ignore"):
        result = np.where(either > 0, both / either, 1.0)
    return np.asarray(result)


def compare_document(
    doc: Document, names: Sequence[str] | None = None, unavailable: str | None = None
) -> Comparison:
    runs = run_all(doc, names, unavailable)
    return Comparison(doc.url, doc.title, doc, runs, agreement(doc, runs), rendered=doc.layout is not None)


def compare_page_source(
    source: str | bytes,
    *,
    url: str | None = None,
    content_type: str | None = None,
    names: Sequence[str] | None = None,
    layout: LayoutSnapshot | None = None,
    unavailable: str | None = None,
) -> Comparison:
    """Decode and parse once, then run every algorithm (the CPU part of /compare). `layout` is a
    browser's snapshot of this very source (a render's DOM): every algorithm reads that Document,
    and `visual` its layout; without it, `visual` is unavailable because of `unavailable`."""
    began = time.perf_counter()
    doc = parse(decode(source, content_type), url)
    if layout is not None:
        doc.layout = align(layout, doc)
    parsed = time.perf_counter()
    comparison = compare_document(doc, names, unavailable)
    comparison.parse_ms = (parsed - began) * 1000
    return comparison


def outline_bins(
    doc: Document, selection: np.ndarray | None, bins: int = THUMB_BINS
) -> tuple[np.ndarray, np.ndarray]:
    """Text characters of the body per bin of token positions, and the selected characters per bin."""
    chars = _text_chars(doc)
    span = doc.body_span
    body = chars[span]
    if len(body) == 0:
        return np.zeros(bins), np.zeros(bins)
    edges = np.linspace(0, len(body), bins + 1).astype(np.int64)
    csum = np.concatenate(([0], np.cumsum(body)))
    page = csum[edges[1:]] - csum[edges[:-1]]
    if selection is None or len(selection) != len(chars):
        return page.astype(np.float64), np.zeros(bins)
    chosen = np.concatenate(([0], np.cumsum(np.where(selection[span], body, 0))))
    kept = chosen[edges[1:]] - chosen[edges[:-1]]
    return page.astype(np.float64), kept.astype(np.float64)


def thumbnail_svg(doc: Document, selection: np.ndarray | None, label: str) -> str:
    """The page's outline as a column (grey: text per stretch of the page) with the selection in colour."""
    page, kept = outline_bins(doc, selection)
    top = float(page.max()) or 1.0
    scale = np.sqrt(page / top) * (THUMB_WIDTH - 4)  # square root: short stretches stay visible
    chosen = np.where(page > 0, scale * np.divide(kept, page, out=np.zeros_like(kept), where=page > 0), 0.0)
    row = THUMB_HEIGHT / len(page)

    def bars(widths: np.ndarray) -> str:
        return "".join(
            f"M2 {i * row:.1f}h{w:.1f}v{row:.1f}h{-w:.1f}z" for i, w in enumerate(widths.tolist()) if w > 0
        )

    grey, green = bars(scale), bars(chosen)
    return (
        f'<svg class="rpc-thumb" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {THUMB_WIDTH} {THUMB_HEIGHT}" '
        f'role="img" aria-label="{html.escape(label)}"><title>{html.escape(label)}</title>'
        f'<rect x="0.5" y="0.5" width="{THUMB_WIDTH - 1}" height="{THUMB_HEIGHT - 1}" fill="none" '
        f'stroke="currentColor" stroke-opacity="0.4"/>'
        f'<path d="{grey}" fill="#9ca3af" fill-opacity="0.6"/>'
        f'<path class="rpc-kept" d="{green}" fill="#15803d"/></svg>'
    )


def comparison_context(comparison: Comparison, links: Mapping[str, Mapping[str, str]]) -> dict[str, object]:
    """What templates/compare.html shows (links: per algorithm, its `read` and `overlay` URLs)."""
    rows = []
    for i, run in enumerate(comparison.runs):
        rows.append(
            {
                "name": run.name,
                "ran": run.ran,
                "words": run.words,
                "score": format_number(run.score),
                "score_means": SCORE_MEANINGS.get(run.ran, "the algorithm's own measure of its selection"),
                "unavailable": run.unavailable,
                "time": f"{run.elapsed_ms:.1f}",
                "share": f"{run.share:.0%}",
                "error": run.error,
                "thumb": thumbnail_svg(
                    comparison.doc,
                    run.extraction.selection if run.extraction else None,
                    f"{run.name}: selected text over the page",
                ),
                "read": links.get(run.name, {}).get("read"),
                "overlay": links.get(run.name, {}).get("overlay"),
                "agreement": [
                    f"{v:.2f}" if run.extraction is not None and other.extraction is not None else "–"
                    for v, other in zip(comparison.agreement[i].tolist(), comparison.runs, strict=True)
                ],
            }
        )
    return {
        "rows": rows,
        "names": [r.name for r in comparison.runs],
        "title": comparison.title,
        "url": comparison.url,
        "parse_ms": f"{comparison.parse_ms:.1f}",
        "rendered": comparison.rendered,
        "ran": [r.name for r in comparison.runs if r.extraction is not None],
    }
