"""`readerproxy eval --report FILE`: one self-contained HTML page to look at rather than read.

No external assets: inline CSS and inline SVG only (no scripts, fonts, images or links). It shows
the table, one bar chart of F1 per algorithm for each metric, a strip plot per metric of the
per-page scores of every algorithm (each dot one page, with the median and quartiles marked), a
histogram of per-page shingle F1 per algorithm, the speed, and each algorithm's worst pages.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .runner import AlgorithmResult, Evaluation, PageResult, Summary

if TYPE_CHECKING:
    from .cli import SnippetCounts

PALETTE = (
    "#4e79a7",
    "#f28e2b",
    "#e15759",
    "#76b7b2",
    "#59a14f",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
    "#bab0ac",
    "#1f77b4",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#17becf",
)
LABEL_WIDTH = 190
CHART_WIDTH = 720
ROW_HEIGHT = 22
WORST_PAGES = 5
HISTOGRAM_BINS = 10


@dataclass(frozen=True, slots=True)
class Metric:
    """A metric as the report shows it: aggregate from a Summary, per page from a PageResult."""

    title: str
    aggregate: Callable[[Summary], float | None]
    per_page: Callable[[PageResult], float]


METRICS = (
    Metric("Shingle F1 (ScrapingHub)", lambda s: s.shingles.f1, lambda p: p.shingles.f1),
    Metric("LCSequence F1 (Moreno et al. 2009)", lambda s: s.lcs_sequence.f1, lambda p: p.lcs_sequence.f1),
    Metric("LCString F1 (Moreno et al. 2009)", lambda s: s.lcs_string.f1, lambda p: p.lcs_string.f1),
    Metric("Bag-of-words F1", lambda s: s.bag_of_words.f1, lambda p: p.bag_of_words.f1),
)


def _color(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def _svg(width: int, height: int, body: list[str], title: str) -> str:
    return (
        f'<svg width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{_esc(title)}">'
        f"<title>{_esc(title)}</title>{''.join(body)}</svg>"
    )


def _x(value: float, top: float = 1.0) -> float:
    return LABEL_WIDTH + (CHART_WIDTH - LABEL_WIDTH - 50) * (value / top if top > 0 else 0.0)


def _axis(height: int, top: float = 1.0, ticks: Sequence[float] = (0, 0.25, 0.5, 0.75, 1.0)) -> list[str]:
    """Vertical grid lines with their values under the chart."""
    parts = []
    for tick in ticks:
        x = _x(tick, top)
        parts.append(f'<line x1="{x:.1f}" y1="4" x2="{x:.1f}" y2="{height - 18}" class="grid"/>')
        parts.append(f'<text x="{x:.1f}" y="{height - 4}" class="tick">{tick:g}</text>')
    return parts


def bar_chart(
    title: str,
    labels: Sequence[str],
    values: Sequence[float | None],
    top: float = 1.0,
    ticks: Sequence[float] = (0, 0.25, 0.5, 0.75, 1.0),
    fmt: str = ".3f",
) -> str:
    """Horizontal bars, one per algorithm, with the value written at the end of each bar."""
    height = ROW_HEIGHT * len(labels) + 28
    body = _axis(height, top, ticks)
    for i, (label, value) in enumerate(zip(labels, values, strict=True)):
        y = 6 + i * ROW_HEIGHT
        body.append(f'<text x="{LABEL_WIDTH - 8}" y="{y + 14}" class="label">{_esc(label)}</text>')
        if value is None:
            body.append(f'<text x="{LABEL_WIDTH + 4}" y="{y + 14}" class="value">n/a</text>')
            continue
        end = _x(min(value, top), top)
        body.append(
            f'<rect x="{LABEL_WIDTH}" y="{y + 2}" width="{max(end - LABEL_WIDTH, 0.5):.1f}" '
            f'height="{ROW_HEIGHT - 6}" fill="{_color(i)}"/>'
        )
        body.append(f'<text x="{end + 4:.1f}" y="{y + 14}" class="value">{format(value, fmt)}</text>')
    return _svg(CHART_WIDTH, height, body, title)


def strip_plot(title: str, labels: Sequence[str], samples: Sequence[Sequence[float]]) -> str:
    """Per-page scores as dots (deterministic jitter) per algorithm, with quartile box and median."""
    height = ROW_HEIGHT * 2 * len(labels) + 28
    body = _axis(height)
    rng = np.random.default_rng(0)
    for i, (label, values) in enumerate(zip(labels, samples, strict=True)):
        top = 6 + i * 2 * ROW_HEIGHT
        middle = top + ROW_HEIGHT
        body.append(f'<text x="{LABEL_WIDTH - 8}" y="{middle + 4}" class="label">{_esc(label)}</text>')
        if not values:
            continue
        q1, median, q3 = np.percentile(values, [25, 50, 75])
        body.append(
            f'<rect x="{_x(q1):.1f}" y="{top + 4}" width="{max(_x(q3) - _x(q1), 1):.1f}" '
            f'height="{2 * ROW_HEIGHT - 8}" class="box"/>'
        )
        jitter = rng.uniform(-ROW_HEIGHT * 0.7, ROW_HEIGHT * 0.7, len(values))
        for value, dy in zip(values, jitter, strict=True):
            body.append(
                f'<circle cx="{_x(value):.1f}" cy="{middle + dy:.1f}" r="2.6" '
                f'fill="{_color(i)}" fill-opacity="0.55"/>'
            )
        body.append(
            f'<line x1="{_x(median):.1f}" y1="{top + 2}" x2="{_x(median):.1f}" '
            f'y2="{top + 2 * ROW_HEIGHT - 2}" class="median"/>'
        )
    return _svg(CHART_WIDTH, height, body, title)


def histogram(title: str, values: Sequence[float], color: str, bins: int = HISTOGRAM_BINS) -> str:
    """Counts of per-page scores in equal bins over [0, 1]."""
    width, height, pad = 240, 120, 18
    counts, _ = np.histogram(np.asarray(values, dtype=float), bins=bins, range=(0.0, 1.0))
    peak = max(int(counts.max()) if len(counts) else 0, 1)
    bar = (width - 2 * pad) / bins
    body = [f'<text x="{pad}" y="12" class="hist-title">{_esc(title)}</text>']
    for k, count in enumerate(counts.tolist()):
        h = (height - 2 * pad - 8) * count / peak
        x = pad + k * bar
        body.append(
            f'<rect x="{x + 1:.1f}" y="{height - pad - h:.1f}" width="{bar - 2:.1f}" height="{h:.1f}" '
            f'fill="{color}"><title>{k / bins:.1f}-{(k + 1) / bins:.1f}: {count} pages</title></rect>'
        )
    body.append(f'<line x1="{pad}" y1="{height - pad}" x2="{width - pad}" y2="{height - pad}" class="grid"/>')
    body.append(f'<text x="{pad}" y="{height - 4}" class="tick">0</text>')
    body.append(f'<text x="{width - pad}" y="{height - 4}" class="tick">1</text>')
    return _svg(width, height, body, title)


def _table(evaluation: Evaluation) -> str:
    head = [
        "algorithm",
        "pages",
        "errors",
        "shingle P",
        "shingle R",
        "shingle F1",
        "accuracy",
        "LCSeq F1",
        "LCStr F1",
        "BoW F1",
    ]
    if evaluation.has_titles:
        head.append("title match")
    head += ["ms p50", "ms p95", "MB/s"]
    rows = []
    for result in evaluation.results:
        s = result.summary
        cells = [
            s.pages,
            s.errors,
            f"{s.shingles.precision:.3f}",
            f"{s.shingles.recall:.3f}",
            f"{s.shingles.f1:.3f}",
            f"{s.shingles.accuracy:.3f}",
            f"{s.lcs_sequence.f1:.3f}",
            f"{s.lcs_string.f1:.3f}",
            f"{s.bag_of_words.f1:.3f}",
        ]
        if evaluation.has_titles:
            cells.append("-" if s.title_accuracy is None else f"{s.title_accuracy:.3f}")
        cells += [f"{s.median_ms:.1f}", f"{s.p95_ms:.1f}", f"{s.mb_per_s:.1f}"]
        rows.append(
            "<tr><th>"
            + _esc(result.label)
            + "</th>"
            + "".join(f"<td>{_esc(c)}</td>" for c in cells)
            + "</tr>"
        )
    header = "".join(f"<th>{_esc(h)}</th>" for h in head)
    return f"<table><thead><tr>{header}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _worst_pages(result: AlgorithmResult) -> str:
    worst = sorted(result.pages, key=lambda p: p.shingles.f1)[:WORST_PAGES]
    items = "".join(
        f"<li><code>{_esc(p.page)}</code> shingle F1 {p.shingles.f1:.3f}"
        + (f", error: {_esc(p.error)}" if p.error else "")
        + "</li>"
        for p in worst
    )
    return f"<h3>{_esc(result.label)}</h3><ol>{items}</ol>"


STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222;padding:0 1em}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ddd}h3{font-size:1em}
table{border-collapse:collapse;font-variant-numeric:tabular-nums;margin:1em 0}
th,td{border:1px solid #ddd;padding:3px 7px;text-align:right}th:first-child{text-align:left}
thead th{background:#f4f4f4}
svg{display:block;margin:.5em 0 1.5em}svg text{font:12px system-ui,sans-serif;fill:#333}
svg .label{text-anchor:end}svg .tick{text-anchor:middle;fill:#777;font-size:11px}
svg .grid{stroke:#e2e2e2}svg .median{stroke:#111;stroke-width:2}
svg .box{fill:#000;fill-opacity:.06;stroke:#999}svg .hist-title{font-weight:bold}
.hists{display:flex;flex-wrap:wrap;gap:0 1em}.note{color:#666}
"""


def _snippet_table(snippets: Mapping[str, SnippetCounts]) -> str:
    head = ["algorithm", "TP", "FN", "FP", "TN", "P", "R", "F1"]
    rows = [
        f"<tr><th>{_esc(label)}</th>"
        + "".join(
            f"<td>{_esc(cell)}</td>"
            for cell in (c.tp, c.fn, c.fp, c.tn, f"{c.precision:.3f}", f"{c.recall:.3f}", f"{c.f1:.3f}")
        )
        + "</tr>"
        for label, c in snippets.items()
    ]
    header = "".join(f"<th>{_esc(h)}</th>" for h in head)
    return (
        "<h2>Snippets</h2><p class=note>`with` snippets found = TP, missing = FN; `without` snippets "
        "found = FP, absent = TN (whitespace-normalised substring match, summed over pages).</p>"
        f"<table><thead><tr>{header}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def render_report(evaluation: Evaluation, snippets: Mapping[str, SnippetCounts] | None = None) -> str:
    """The whole report as one HTML string; with `snippets`, their table too. A dataset without
    reference text (the snippets layout) gets the snippet table and the speed only."""
    labels = [result.label for result in evaluation.results]
    summaries = [result.summary for result in evaluation.results]
    pages = summaries[0].pages if summaries else 0
    title = [
        "<!doctype html><html lang=en><head><meta charset=utf-8>",
        f"<title>readerproxy eval: {_esc(evaluation.dataset)}</title><style>{STYLE}</style></head><body>",
        f"<h1>readerproxy eval: {_esc(evaluation.dataset)} ({pages} pages)</h1>",
    ]
    if not evaluation.has_reference:
        parts = [*title, _snippet_table(snippets or {}), "<h2>Speed</h2>", _speed_chart(labels, summaries)]
        parts.append("</body></html>")
        return "\n".join(parts)
    parts = [
        *title,
        "<p class=note>Shingle F1 is the ScrapingHub article-body metric (F1 of the mean precision and "
        "recall over pages); LCSequence and LCString F1 are the character metrics of Moreno, Deschacht, Moens 2009 (§5.2) with "
        "whitespace removed; their F1 and the bag-of-words F1 are means of per-page F1.</p>",
        _table(evaluation),
        "<h2>F1 per algorithm and metric</h2>",
    ]
    for metric in METRICS:
        parts.append(f"<h3>{_esc(metric.title)}</h3>")
        parts.append(bar_chart(metric.title, labels, [metric.aggregate(s) for s in summaries]))
    if evaluation.has_titles:
        parts.append("<h3>Title exact match</h3>")
        parts.append(bar_chart("Title exact match", labels, [s.title_accuracy for s in summaries]))
    parts.append(
        "<h2>Per-page scores</h2><p class=note>Each dot is one page; the box spans the middle "
        "half of the pages and the dark line is the median.</p>"
    )
    for metric in METRICS:
        samples = [[metric.per_page(p) for p in result.pages] for result in evaluation.results]
        parts.append(f"<h3>{_esc(metric.title)}, per page</h3>")
        parts.append(strip_plot(f"{metric.title} per page", labels, samples))
    parts.append("<h3>Histogram of per-page shingle F1</h3><div class=hists>")
    for i, result in enumerate(evaluation.results):
        parts.append(histogram(result.label, [p.shingles.f1 for p in result.pages], _color(i)))
    parts.append("</div>")
    if snippets:
        parts.append(_snippet_table(snippets))
    parts.append("<h2>Speed</h2>")
    parts.append(_speed_chart(labels, summaries))
    parts.append("<h2>Worst pages per algorithm (shingle F1)</h2>")
    parts.extend(_worst_pages(result) for result in evaluation.results)
    parts.append("</body></html>")
    return "\n".join(parts)


def _speed_chart(labels: list[str], summaries: list[Summary]) -> str:
    fastest = max([s.mb_per_s for s in summaries] + [1.0])
    top = float(np.ceil(fastest / 10) * 10)
    return bar_chart(
        "MB/s (parse + extract + render)",
        labels,
        [s.mb_per_s for s in summaries],
        top=top,
        ticks=[top * k / 4 for k in range(5)],
        fmt=".1f",
    )
