"""The signal charts: SVG that parses, with plotted points equal to the Extraction's arrays."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from readerproxy.web.charts import MAX_POINTS, charts_for, format_number, nice_ticks, svg
from readerproxy.web.overlay import inspect

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SVG = "{http://www.w3.org/2000/svg}"
ALGORITHMS = (
    "density",
    "cetr",
    "cetr-km",
    "cetr-tm",
    "lineblock",
    "danag",
    "accb",
    "heuristic",
    "auto",
    "baseline",
)


def _page() -> bytes:
    return (FIXTURES / "wiki_links.html").read_bytes()


def _invert(scale: str, values: list[float]) -> np.ndarray:
    d0, d1, r0, r1 = map(float, scale.split())
    return d0 + (np.asarray(values) - r0) * (d1 - d0) / (r1 - r0)


def plotted(element: ET.Element, plot: ET.Element) -> tuple[np.ndarray, np.ndarray]:
    """The data values of one series, read back through the plot's scales."""
    tag = element.tag.removeprefix(SVG)
    if tag == "polyline":
        pairs = [p.split(",") for p in (element.get("points") or "").split()]
        px, py = [float(a) for a, _ in pairs], [float(b) for _, b in pairs]
    elif tag == "path":  # bars: M x base V y
        px, py = [], []
        for part in (element.get("d") or "").split("M")[1:]:
            x_base, y = part.split("V")
            px.append(float(x_base.split()[0]))
            py.append(float(y))
    else:  # points
        circles = list(element)
        px = [float(c.get("cx") or 0) for c in circles]
        py = [float(c.get("cy") or 0) for c in circles]
    return _invert(plot.get("data-x") or "", px), _invert(plot.get("data-y") or "", py)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_charts_parse_and_plot_the_extraction_arrays(algorithm: str) -> None:
    insp = inspect(_page(), url="https://example.org/wiki", algorithm=algorithm)
    ex = insp.extraction
    charts = charts_for(ex)
    assert charts
    for chart in charts:
        root = ET.fromstring(svg(chart))  # well-formed SVG
        assert root.tag == SVG + "svg" and root.get("viewBox")
        texts = [t.text for t in root.iter(SVG + "text")]
        assert chart.x_label in texts and chart.y_label in texts
        plot = root.find(f"{SVG}g[@class='rpo-plot']")
        assert plot is not None
        drawn = {el.get("data-series"): el for el in plot if el.get("data-series")}
        assert set(drawn) == {s.name for s in chart.series}
        for series in chart.series:
            if len(series.x) > MAX_POINTS:
                assert drawn[series.name].get("data-decimated") == "1"
                continue
            x, y = plotted(drawn[series.name], plot)
            dx = float(plot.get("data-x", "0 1 0 1").split()[1]) - float(plot.get("data-x", "0").split()[0])
            dy = float(plot.get("data-y", "0 1 0 1").split()[1]) - float(plot.get("data-y", "0").split()[0])
            np.testing.assert_allclose(x, series.x, atol=abs(dx) * 0.0002 + 1e-9)
            np.testing.assert_allclose(y, series.y, atol=abs(dy) * 0.0002 + 1e-9)
    # The series are the Extraction's own arrays (or the blocks' scores when there is no signal).
    name = ex.algorithm
    by_name = {s.name: s for c in charts for s in c.series}
    if name == "density":
        np.testing.assert_array_equal(by_name["density"].y, ex.signals["density"])
    elif name.startswith("cetr"):
        np.testing.assert_array_equal(by_name["smoothed"].y, ex.signals["smoothed"])
        np.testing.assert_array_equal(by_name["ttr"].y, ex.signals["ttr"])
        if "derivative" in ex.signals:
            np.testing.assert_array_equal(by_name["derivative"].y, ex.signals["derivative"])
            clusters = [s for s in by_name.values() if s.name.startswith("cluster-")]
            assert sum(len(s.x) for s in clusters) == len(ex.signals["cluster"])
    elif name == "lineblock":
        np.testing.assert_array_equal(by_name["ttr"].y, ex.signals["ttr"])
        np.testing.assert_array_equal(by_name["attr"].y, ex.signals["attr"])
    elif name == "danag":
        np.testing.assert_array_equal(by_name["smoothed"].y, ex.signals["smoothed"])
    elif name == "accb":
        np.testing.assert_array_equal(by_name["ccr"].y, ex.signals["ccr"])
    else:
        scores = sorted((b.score for b in ex.blocks), reverse=True)
        drawn_scores = sorted(
            np.concatenate([by_name["kept"].y, by_name["dropped"].y]).tolist(), reverse=True
        )
        assert drawn_scores == scores


def test_thresholds_are_drawn() -> None:
    insp = inspect(_page(), algorithm="cetr-tm")
    (chart, *_) = charts_for(insp.extraction)
    root = ET.fromstring(svg(chart))
    lines = [el for el in root.iter(SVG + "line") if el.get("class") == "rpo-hline"]
    assert [float(el.get("data-value") or 0) for el in lines] == pytest.approx(
        [float(insp.extraction.signals["threshold"][0])], rel=1e-5
    )


def test_nice_ticks() -> None:
    assert nice_ticks(0, 97).tolist() == [0, 20, 40, 60, 80, 100]
    assert nice_ticks(-0.3, 1.2)[0] <= -0.3 and nice_ticks(-0.3, 1.2)[-1] >= 1.2
    assert len(nice_ticks(5, 5)) >= 2


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (0.0077, "0.0077"),
        (0.001, "0.001"),
        (0.5, "0.5"),
        (1.0, "1"),
        (12.34, "12.3"),
        (1234.0, "1.2k"),
        (-0.0077, "-0.0077"),
        (1e-7, "≈0"),
        (float("nan"), "–"),
    ],
)
def test_numbers_read_without_exponents(value: float, shown: str) -> None:
    assert format_number(value) == shown and "e" not in format_number(value)
