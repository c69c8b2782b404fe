"""Signal charts as SVG, made on the server from an `Extraction`'s arrays with numpy.

Pure functions, no chart library and no script: `charts_for(extraction)` chooses the charts for
the *shape* of the algorithm's signals (keyed by the name of the algorithm that produced them) and
`svg(chart)` draws one. Every chart has axes with "nice" ticks, labelled in a font that stays
readable when the SVG is drawn about 340 px wide (a phone's bottom sheet, a desktop side column).

Each plot area carries its own scale as data attributes (`data-x="x0 x1 px0 px1"`, `data-y=…`), and
every series its name (`data-series`), so a test (or a person) can read the plotted values back from
the SVG. Series longer than MAX_POINTS are drawn as a min/max envelope per pixel column
(`data-decimated="1"`); shorter ones are drawn point for point.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..engine.extraction import Extraction

WIDTH = 340
HEIGHT = 200
MARGIN_LEFT = 46
MARGIN_RIGHT = 18
MARGIN_TOP = 10
MARGIN_BOTTOM = 40
MAX_POINTS = 3000
#: Colours of series and clusters (distinguishable, also for the common colour-vision deficiencies).
PALETTE = ("#2563eb", "#d97706", "#059669", "#9333ea", "#dc2626", "#0891b2", "#65a30d", "#db2777")


@dataclass(frozen=True, slots=True)
class Series:
    """One plotted array: `kind` is "line", "points" or "bars"."""

    name: str
    x: np.ndarray
    y: np.ndarray
    kind: str = "line"
    colour: str = PALETTE[0]
    label: str = ""  # legend text ("" : the name)
    width: float = 1.5


@dataclass(frozen=True, slots=True)
class Chart:
    """A chart: series on shared axes, horizontal/vertical reference lines and shaded x ranges."""

    key: str
    title: str
    x_label: str
    y_label: str
    series: Sequence[Series]
    hlines: Sequence[tuple[float, str]] = ()  # (y, label)
    vlines: Sequence[tuple[float, str]] = ()  # (x, label)
    spans: Sequence[tuple[float, float, str]] = ()  # (x0, x1, label): shaded, e.g. the selected region
    caption: str = ""
    notes: Sequence[str] = field(default_factory=tuple)  # extra lines under the chart (top candidates)


# --------------------------------------------------------------------------------------------
# Which charts: by the shape of the signals of the algorithm that produced the selection.


def charts_for(extraction: Extraction, describe: Callable[[int], str] | None = None) -> list[Chart]:
    """The charts of an extraction's signals (a score chart of the blocks when no signal fits).

    `describe(i)` names block i for the score chart's top candidates (its element path and first
    words, from the overlay, which has the Document); without it a block is named by its label."""
    signals = extraction.signals
    name = extraction.algorithm
    if name == "density" and "density" in signals:
        return [_density(extraction)]
    if name.startswith("cetr") and "smoothed" in signals:
        return _cetr(extraction)
    if name == "lineblock" and "ttr" in signals:
        return _lineblock(extraction)
    if name == "danag" and "smoothed" in signals:
        return [_danag(extraction)]
    if name == "accb" and "ccr" in signals and len(signals["ccr"]):
        return [_accb(extraction)]
    if name == "visual" and np.isfinite(signals.get("visual_center_x", np.zeros(0))).any():
        return [_visual(extraction), _scores(extraction, describe)]
    return [_scores(extraction, describe)]


def _first(signals: dict[str, np.ndarray], name: str) -> float | None:
    values = signals.get(name)
    return float(values[0]) if values is not None and len(values) else None


def _threshold_line(signals: dict[str, np.ndarray]) -> list[tuple[float, str]]:
    """The algorithm's "threshold" signal as a horizontal line (none when it has none)."""
    threshold = _first(signals, "threshold")
    return [(threshold, "threshold")] if threshold is not None else []


def _kept_and_dropped(x: np.ndarray, y: np.ndarray, kept: np.ndarray) -> list[Series]:
    """Blocks as points, the kept ones green and the dropped ones orange."""
    return [
        Series("kept", x[kept], y[kept], "points", "#15803d", "kept"),
        Series("dropped", x[~kept], y[~kept], "points", "#c2410c", "dropped"),
    ]


def _density(ex: Extraction) -> Chart:
    lengths = np.asarray(ex.signals["density"], dtype=np.float64)
    cutoff = _first(ex.signals, "cutoff_length")
    spans: list[tuple[float, float, str]] = []
    # The blocks are the non-empty strings in order: the selected region is theirs.
    nonempty = np.flatnonzero(lengths > 0)
    if len(nonempty) == len(ex.blocks) and len(nonempty):
        chosen = nonempty[np.array([b.selected for b in ex.blocks], dtype=bool)]
        if len(chosen):
            spans.append((float(chosen.min()) - 0.5, float(chosen.max()) + 0.5, "selected region"))
    return Chart(
        key="density",
        title="String length per position",
        x_label="string position",
        y_label="characters",
        series=[
            Series(
                "density",
                np.arange(len(lengths), dtype=np.float64),
                lengths,
                "bars",
                PALETTE[0],
                "string length",
            )
        ],
        hlines=[(cutoff, "cutoff")] if cutoff is not None else [],
        spans=spans,
        caption="Strings longer than the cutoff near the longest one form the selected region.",
    )


def _cetr(ex: Extraction) -> list[Chart]:
    s = ex.signals
    smoothed = np.asarray(s["smoothed"], dtype=np.float64)
    line = np.asarray(s.get("line", np.arange(len(smoothed))), dtype=np.float64)
    charts = [
        Chart(
            key="tag-ratio",
            title="Text-to-tag ratio per line",
            x_label="source line",
            y_label="text / tags",
            series=[
                Series("ttr", line, np.asarray(s["ttr"], dtype=np.float64), "line", "#9ca3af", "raw", 1.0),
                Series(
                    "smoothed",
                    line,
                    smoothed,
                    "line",
                    PALETTE[0],
                    "smoothed",
                    2.0,
                ),
            ],
            hlines=_threshold_line(s),
            caption="Lines whose (smoothed) ratio stands out are content.",
        )
    ]
    cluster = np.asarray(s.get("cluster", np.zeros(0)), dtype=np.int64)
    if "derivative" in s:
        derivative = np.asarray(s["derivative"], dtype=np.float64)
        charts.append(
            Chart(
                key="derivative",
                title="Derivative of the smoothed ratio",
                x_label="source line",
                y_label="|G|",
                series=[Series("derivative", line, derivative, "line", PALETTE[1], "derivative")],
            )
        )
        if len(cluster) == len(derivative):
            charts.append(
                Chart(
                    key="clusters",
                    title="Lines in 2-D, coloured by cluster",
                    x_label="smoothed ratio",
                    y_label="|G|",
                    series=_clustered(smoothed, derivative, cluster),
                    caption="The cluster nearest the origin is the page's boilerplate.",
                )
            )
    elif len(cluster) == len(line):
        charts.append(
            Chart(
                key="clusters",
                title="Smoothed ratio per line, coloured by cluster",
                x_label="source line",
                y_label="smoothed ratio",
                series=_clustered(line, smoothed, cluster),
            )
        )
    return charts


def _clustered(x: np.ndarray, y: np.ndarray, cluster: np.ndarray) -> list[Series]:
    return [
        Series(
            f"cluster-{c}",
            x[cluster == c],
            y[cluster == c],
            "points",
            PALETTE[i % len(PALETTE)],
            f"cluster {c}",
        )
        for i, c in enumerate(np.unique(cluster).tolist())
    ]


def _lineblock(ex: Extraction) -> list[Chart]:
    s = ex.signals
    ttr = np.asarray(s["ttr"], dtype=np.float64)
    attr = np.asarray(s.get("attr", np.zeros(0)), dtype=np.float64)
    thresholds = np.asarray(s.get("thresholds", np.zeros(0)), dtype=np.float64)
    x = np.arange(len(ttr), dtype=np.float64)
    kept = _kept_spans(ex, len(ttr))
    charts = [
        Chart(
            key="ttr",
            title="Text-to-tag ratio per line-block",
            x_label="line-block",
            y_label="TTR",
            series=[Series("ttr", x, ttr, "bars", PALETTE[0], "TTR")],
            hlines=[(float(thresholds[0]), "t1")] if len(thresholds) > 0 else [],
            spans=kept,
            caption="Content: TTR above t1 and anchor-text ratio below t2 (shaded: kept blocks).",
        )
    ]
    if len(attr) == len(ttr):
        charts.append(
            Chart(
                key="attr",
                title="Anchor-text ratio per line-block",
                x_label="line-block",
                y_label="ATTR",
                series=[Series("attr", x, attr, "bars", PALETTE[1], "ATTR")],
                hlines=[(float(thresholds[1]), "t2")] if len(thresholds) > 1 else [],
                spans=kept,
            )
        )
    return charts


def _kept_spans(ex: Extraction, n: int) -> list[tuple[float, float, str]]:
    """Shaded runs of selected blocks when there is one block per position."""
    if len(ex.blocks) != n or n == 0:
        return []
    selected = np.array([b.selected for b in ex.blocks], dtype=bool)
    edges = np.diff(np.concatenate(([0], selected.astype(np.int8), [0])))
    starts, stops = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    return [(float(a) - 0.5, float(b) - 0.5, "kept") for a, b in zip(starts, stops, strict=True)]


def _danag(ex: Extraction) -> Chart:
    s = ex.signals
    smoothed = np.asarray(s["smoothed"], dtype=np.float64)
    x = np.arange(len(smoothed), dtype=np.float64)
    series = [Series("smoothed", x, smoothed, "line", PALETTE[0], "content − code, smoothed", 2.0)]
    if "content" in s and len(s["content"]) == len(smoothed):
        series.insert(
            0,
            Series(
                "content", x, np.asarray(s["content"], dtype=np.float64), "line", PALETTE[2], "content", 1.0
            ),
        )
        series.insert(
            1, Series("code", x, np.asarray(s["code"], dtype=np.float64), "line", "#9ca3af", "code", 1.0)
        )
    area = np.asarray(s.get("area", np.zeros(0)), dtype=np.float64)
    spans = (
        [(float(area[0]) - 0.5, float(area[1]) + 0.5, "main content area")]
        if len(area) == 2 and area[1] >= area[0]
        else []
    )
    return Chart(
        key="segments",
        title="Content and code per segment",
        x_label="segment",
        y_label="characters",
        series=series,
        hlines=[(0.0, "")],
        spans=spans,
        caption="The shaded boundary encloses the main content area.",
    )


def _accb(ex: Extraction) -> Chart:
    s = ex.signals
    ccr = np.asarray(s["ccr"], dtype=np.float64)
    ccv = np.asarray(s.get("ccv", np.zeros(0)), dtype=np.float64)
    x = np.arange(len(ccr), dtype=np.float64)
    series = []
    if len(ccv) == len(ccr):
        series.append(Series("ccv", x, ccv, "line", "#d1d5db", "content (1) / code (0)", 0.8))
    series.append(Series("ccr", x, ccr, "line", PALETTE[0], "blurred ratio", 2.0))
    return Chart(
        key="ccr",
        title="Content/code ratio along the page",
        x_label="position in the content code vector",
        y_label="ratio",
        series=series,
        hlines=_threshold_line(s),
        caption="Text where the blurred ratio reaches the threshold is kept.",
    )


def _visual(ex: Extraction) -> Chart:
    """visual (Berg 2020, §6.1): each block at its horizontal centre in the rendered page against its
    score, with the main-content boundary as two vertical lines."""
    center = ex.signals["visual_center_x"]
    blocks = [b for b in ex.blocks if b.element is not None and np.isfinite(center[b.element])]
    x = np.array([center[b.element] for b in blocks], dtype=np.float64)
    y = np.array([b.score for b in blocks], dtype=np.float64)
    kept = np.array([b.selected for b in blocks], dtype=bool)
    boundary = ex.signals.get("visual_boundary", np.array([np.nan, np.nan]))
    vlines = [
        (float(v), label) for v, label in zip(boundary, ("left", "right"), strict=True) if np.isfinite(v)
    ]
    default = _first(ex.signals, "visual_contrast_default")
    contrast = (
        f" Text below the page's most common contrast ({format_number(default)}:1) is penalised too."
        if default is not None and np.isfinite(default)
        else ""
    )
    return Chart(
        key="visual",
        title="Blocks across the rendered page",
        x_label="centre x (px)",
        y_label="score",
        series=_kept_and_dropped(x, y, kept),
        vlines=vlines,
        hlines=_threshold_line(ex.signals),
        caption="The lines are the main-content boundary; blocks centred outside it get the penalty."
        + contrast,
    )


def _scores(ex: Extraction, describe: Callable[[int], str] | None = None) -> Chart:
    """Score distribution: the blocks' scores sorted from high to low, kept and dropped apart."""
    scores = np.array([b.score for b in ex.blocks], dtype=np.float64)
    selected = np.array([b.selected for b in ex.blocks], dtype=bool)
    order = np.argsort(-scores, kind="stable")
    rank = np.arange(len(scores), dtype=np.float64)
    kept = selected[order]
    name = describe or (lambda i: ex.blocks[i].label or "block")
    notes = [
        f"{name(i)} — score {format_number(ex.blocks[i].score)}, {'kept' if ex.blocks[i].selected else 'dropped'}"
        for i in order[:5].tolist()
    ]
    if len(ex.blocks) <= 1:
        caption = (
            f"{ex.algorithm or 'The algorithm'} scored the page as a single block, so there is nothing to rank: "
            "the one dot is the whole selection."
        )
    else:
        caption = "Each dot is a scored block; the line is the algorithm's threshold."
    return Chart(
        key="scores",
        title="Block scores, highest first",
        x_label="rank",
        y_label="score",
        series=_kept_and_dropped(rank, scores[order], kept),
        hlines=_threshold_line(ex.signals),
        caption=caption,
        notes=notes,
    )


# --------------------------------------------------------------------------------------------
# Drawing.


def format_number(value: float) -> str:
    """A short label: integers as such, else up to three significant digits, thousands as k; never
    in exponent form (0.0077; below 0.0001 in size, "≈0")."""
    if not math.isfinite(value):
        return "–"
    magnitude = abs(value)
    if magnitude >= 10000:
        return f"{value / 1000:.0f}k"
    if magnitude >= 1000:
        return f"{value / 1000:.1f}k"
    if value == int(value):
        return str(int(value))
    if magnitude >= 100:
        return f"{value:.0f}"
    if magnitude >= 10:
        return f"{value:.1f}"
    if magnitude >= 0.01:
        return f"{value:.2f}".rstrip("0").rstrip(".")
    if magnitude >= 0.0001:  # two significant digits, never in exponent form: 0.0077
        digits = 1 - math.floor(math.log10(magnitude))
        return f"{value:.{digits}f}".rstrip("0")
    return "≈0"


def nice_ticks(low: float, high: float, count: int = 5) -> np.ndarray:
    """Round tick values (1, 2, 5 x 10^k steps) covering [low, high]."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return np.array([0.0, 1.0])
    if high <= low:
        high = low + (abs(low) or 1.0)
    raw = (high - low) / max(1, count)
    step = 10.0 ** math.floor(math.log10(raw))
    for multiple in (1, 2, 2.5, 5, 10):
        if raw <= step * multiple:
            step *= multiple
            break
    first = math.floor(low / step) * step
    last = math.ceil(high / step) * step
    return np.round(np.arange(first, last + step * 0.5, step), 10)


def _domain(
    values: list[np.ndarray], extra: Sequence[float], include_zero: bool
) -> tuple[float, float, np.ndarray]:
    finite = [v[np.isfinite(v)] for v in values if len(v)]
    pool = np.concatenate([*finite, np.asarray(extra, dtype=np.float64)]) if finite or extra else np.zeros(0)
    pool = pool[np.isfinite(pool)]
    low = float(pool.min()) if len(pool) else 0.0
    high = float(pool.max()) if len(pool) else 1.0
    if include_zero:
        low, high = min(low, 0.0), max(high, 0.0)
    ticks = nice_ticks(low, high)
    return float(ticks[0]), float(ticks[-1]), ticks


class _Scale:
    def __init__(self, d0: float, d1: float, r0: float, r1: float) -> None:
        self.d0, self.d1, self.r0, self.r1 = d0, d1, r0, r1

    def __call__(self, v: np.ndarray) -> np.ndarray:
        span = (self.d1 - self.d0) or 1.0
        return self.r0 + (np.asarray(v, dtype=np.float64) - self.d0) * (self.r1 - self.r0) / span

    def at(self, value: float) -> float:
        """One value's position."""
        return float(self(np.array([value]))[0])

    def attribute(self) -> str:
        return f"{self.d0:g} {self.d1:g} {self.r0:g} {self.r1:g}"


def _n(v: float) -> str:
    return f"{v:.2f}".rstrip("0").rstrip(".")


def _coords(xs: np.ndarray, ys: np.ndarray) -> list[tuple[str, str]]:
    return [(_n(x), _n(y)) for x, y in zip(xs.tolist(), ys.tolist(), strict=True)]


def _envelope(x: np.ndarray, y: np.ndarray, columns: int) -> tuple[np.ndarray, np.ndarray]:
    """Min and max of y per column of x (drawn as one zig-zag line): the shape of a long series."""
    bins = np.minimum((np.arange(len(x)) * columns) // len(x), columns - 1)
    starts = np.flatnonzero(np.concatenate(([True], bins[1:] != bins[:-1])))
    low = np.minimum.reduceat(y, starts)
    high = np.maximum.reduceat(y, starts)
    xs = np.repeat(x[starts], 2)
    ys = np.column_stack((low, high)).ravel()
    return xs, ys


def svg(chart: Chart, width: int = WIDTH, height: int = HEIGHT) -> str:
    """One chart as an SVG element (no script; sized by its viewBox, scales to its container)."""
    x0, x1 = MARGIN_LEFT, width - MARGIN_RIGHT
    y0, y1 = height - MARGIN_BOTTOM, MARGIN_TOP  # y grows downwards
    xs_all = [s.x for s in chart.series] + [np.array([a, b]) for a, b, _ in chart.spans]
    ys_all = [s.y for s in chart.series]
    bars = any(s.kind == "bars" for s in chart.series)
    dx0, dx1, xticks = _domain(xs_all, [v for v, _ in chart.vlines], include_zero=False)
    if bars:  # room for the first and last bar
        dx0, dx1 = (
            min(dx0, float(min((s.x.min() for s in chart.series if len(s.x)), default=0)) - 0.5),
            dx1 + 0.5,
        )
    dy0, dy1, yticks = _domain(ys_all, [v for v, _ in chart.hlines], include_zero=bars)
    sx, sy = _Scale(dx0, dx1, x0, x1), _Scale(dy0, dy1, y0, y1)
    title = html.escape(chart.title)
    out = [
        f'<svg class="rpo-chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'role="img" aria-label="{title}" data-chart="{html.escape(chart.key)}" '
        f'font-family="system-ui, sans-serif" font-size="11">',
        f"<title>{title}</title>",
    ]
    # Shaded spans, then the grid and axes.
    for a, b, label in chart.spans:
        left, right = sx.at(a), sx.at(b)
        out.append(
            f'<rect class="rpo-span" x="{_n(left)}" y="{y1}" width="{_n(max(right - left, 1))}" '
            f'height="{y0 - y1}" fill="#16a34a" fill-opacity="0.14"><title>{html.escape(label)}</title></rect>'
        )
    for tick in yticks.tolist():
        py = _n(sy.at(tick))
        out.append(f'<line x1="{x0}" x2="{x1}" y1="{py}" y2="{py}" stroke="#e5e7eb" stroke-width="1"/>')
        out.append(
            f'<text x="{x0 - 4}" y="{py}" text-anchor="end" dominant-baseline="middle" '
            f'fill="currentColor">{format_number(tick)}</text>'
        )
    for tick in xticks.tolist():
        if not dx0 <= tick <= dx1:
            continue
        px = _n(sx.at(tick))
        out.append(
            f'<line x1="{px}" x2="{px}" y1="{y0}" y2="{y0 + 4}" stroke="currentColor" stroke-width="1"/>'
        )
        out.append(
            f'<text x="{px}" y="{y0 + 15}" text-anchor="middle" fill="currentColor">{format_number(tick)}</text>'
        )
    out.append(f'<line x1="{x0}" x2="{x1}" y1="{y0}" y2="{y0}" stroke="currentColor" stroke-width="1"/>')
    out.append(f'<line x1="{x0}" x2="{x0}" y1="{y0}" y2="{y1}" stroke="currentColor" stroke-width="1"/>')
    out.append(
        f'<text x="{(x0 + x1) / 2:g}" y="{height - 4}" text-anchor="middle" fill="currentColor">'
        f"{html.escape(chart.x_label)}</text>"
    )
    out.append(
        f'<text transform="translate(11 {(y0 + y1) / 2:g}) rotate(-90)" text-anchor="middle" '
        f'fill="currentColor">{html.escape(chart.y_label)}</text>'
    )
    # The data.
    out.append(f'<g class="rpo-plot" data-x="{sx.attribute()}" data-y="{sy.attribute()}">')
    columns = int(x1 - x0)
    for series in chart.series:
        x = np.asarray(series.x, dtype=np.float64)
        y = np.asarray(series.y, dtype=np.float64)
        keep = np.isfinite(x) & np.isfinite(y)
        x, y = x[keep], y[keep]
        name = html.escape(series.name)
        decimated = len(x) > MAX_POINTS
        marker = ' data-decimated="1"' if decimated else ""
        if series.kind == "bars":
            if decimated:
                x, y = _envelope(x, y, columns)
            base = _n(sy.at(max(dy0, 0.0)))
            bar = max(0.6, min(6.0, (x1 - x0) / max(1, len(x)) * 0.8))
            d = "".join(f"M{px} {base}V{py}" for px, py in _coords(sx(x), sy(y)))
            out.append(
                f'<path data-series="{name}"{marker} d="{d}" stroke="{series.colour}" '
                f'stroke-width="{_n(bar)}" fill="none"/>'
            )
        elif series.kind == "points":
            if decimated:
                step = math.ceil(len(x) / MAX_POINTS)
                x, y = x[::step], y[::step]
            dots = "".join(f'<circle cx="{px}" cy="{py}" r="2.2"/>' for px, py in _coords(sx(x), sy(y)))
            out.append(
                f'<g data-series="{name}"{marker} fill="{series.colour}" fill-opacity="0.75">{dots}</g>'
            )
        else:
            if decimated:
                x, y = _envelope(x, y, columns)
            points = " ".join(f"{px},{py}" for px, py in _coords(sx(x), sy(y)))
            out.append(
                f'<polyline data-series="{name}"{marker} points="{points}" fill="none" '
                f'stroke="{series.colour}" stroke-width="{_n(series.width)}" stroke-linejoin="round"/>'
            )
    out.append("</g>")
    for value, label in chart.hlines:
        py = _n(sy.at(value))
        out.append(
            f'<line class="rpo-hline" data-value="{value:g}" x1="{x0}" x2="{x1}" y1="{py}" y2="{py}" '
            f'stroke="#b91c1c" stroke-width="1.5" stroke-dasharray="5 3"/>'
        )
        if label:
            out.append(
                f'<text x="{x1 - 2}" y="{float(py) - 4:g}" text-anchor="end" fill="#b91c1c" '
                f'font-weight="600">{html.escape(label)} {format_number(value)}</text>'
            )
    for value, label in chart.vlines:
        px = _n(sx.at(value))
        out.append(
            f'<line class="rpo-vline" data-value="{value:g}" x1="{px}" x2="{px}" y1="{y0}" y2="{y1}" '
            f'stroke="#b91c1c" stroke-width="1.5" stroke-dasharray="5 3"/>'
        )
        if label:
            out.append(f'<text x="{px}" y="{y1 + 10}" fill="#b91c1c">{html.escape(label)}</text>')
    out.append("</svg>")
    return "".join(out)


def legend(chart: Chart) -> list[tuple[str, str]]:
    """(colour, label) of every series, for the HTML legend under a chart."""
    items = [(s.colour, s.label or s.name) for s in chart.series]
    if chart.spans:
        items.append(("rgba(22,163,74,0.3)", chart.spans[0][2]))
    return items
