"""The `visual` extractor (Berg 2020, §6.1): pure scoring on synthetic layout arrays, then on pages
rendered by the real browser and served by the upstream test site."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import aiohttp
import numpy as np
import pytest
from support.chromium import SCREENSHOTS, Chromium, Page
from support.reader_server import REPO, RunningServer
from support.upstream import Upstream

from readerproxy.engine.extraction import get_extractor, registry
from readerproxy.engine.extractors.visual import VisualParams, content_boundary, hidden_elements
from readerproxy.engine.parse.document import parse
from readerproxy.engine.parse.layout import Layout, contrast_ratio, relative_luminance

FIXTURES = Path(__file__).parents[1] / "fixtures"


def test_wcag_contrast_of_known_pairs() -> None:
    black = np.array([0.0, 0.0, 0.0, 1.0])
    white = np.array([255.0, 255.0, 255.0])
    assert contrast_ratio(black, white) == pytest.approx(21.0)
    assert contrast_ratio(np.array([255.0, 255.0, 255.0, 1.0]), white) == pytest.approx(1.0)
    # #767676 on white is the classic 4.54:1 (WCAG AA's lightest grey for body text)
    assert contrast_ratio(np.array([118.0, 118.0, 118.0, 1.0]), white) == pytest.approx(4.54, abs=0.01)
    # half-transparent black text on white paints mid grey
    half = contrast_ratio(np.array([0.0, 0.0, 0.0, 0.5]), white)
    assert 3.5 < half < 4.5
    assert relative_luminance(np.array([255.0, 0.0, 0.0])) == pytest.approx(0.2126)


def test_boundary_trims_ten_percent_of_the_weight_at_each_end() -> None:
    # three columns: weak boxes at 0-240 and 1000-1240, the heavy article at 260-960
    left = np.array([0.0, 260.0, 260.0, 260.0, 1000.0])
    right = np.array([240.0, 960.0, 960.0, 960.0, 1240.0])
    weight = np.array([10.0, 100.0, 100.0, 100.0, 10.0])
    assert content_boundary(left, right, weight, 0.1) == (260.0, 960.0)
    # without trimming, every position counts
    assert content_boundary(left, right, weight, 0.0) == (0.0, 1240.0)
    # a side column heavier than the trimmed share stays inside
    heavy = np.array([200.0, 100.0, 100.0, 100.0, 10.0])
    assert content_boundary(left, right, heavy, 0.1)[0] == 0.0
    assert np.isnan(content_boundary(left, right, np.zeros(5), 0.1)[0])


def _synthetic_layout(n: int, page_width: float = 1280.0) -> dict[str, np.ndarray]:
    return {
        "known": np.ones(n, dtype=bool),
        "box": np.tile(np.array([300.0, 100.0, 600.0, 20.0], dtype=np.float32), (n, 1)),
        "visible": np.ones(n, dtype=bool),
        "clipped": np.zeros(n, dtype=bool),
        "color": np.tile(np.array([34.0, 34.0, 34.0, 1.0], dtype=np.float32), (n, 1)),
        "background": np.tile(np.array([255.0, 255.0, 255.0], dtype=np.float32), (n, 1)),
        "font_size": np.full(n, 16.0, dtype=np.float32),
    }


def _layout(arrays: dict[str, np.ndarray]) -> Layout:
    return Layout(**arrays, page_width=1280.0, page_height=4000.0, viewport_width=1280.0)


def test_scoring_on_synthetic_arrays_drops_side_columns_low_contrast_and_hidden() -> None:
    doc = parse((FIXTURES / "visual_columns.html").read_text())
    classes = [node.attributes.get("class") or "" for node in doc.elements]
    arrays = _synthetic_layout(len(doc.elements))
    parent = doc.parent.tolist()

    def inside(index: int, cls: str) -> bool:
        while index >= 0:
            if cls in classes[index]:
                return True
            index = parent[index]
        return False

    for i in range(len(doc.elements)):
        if inside(i, "col-a"):
            arrays["box"][i] = [20, 100, 240, 20]
        elif inside(i, "col-c"):
            arrays["box"][i] = [1000, 100, 240, 20]
    heuristic = get_extractor("heuristic").run(doc)
    plain = get_extractor("visual").run(doc)  # no layout: the plain evaluation
    assert np.array_equal(plain.selection, heuristic.selection)
    assert plain.signals["layout_elements"][0] == 0

    doc.layout = _layout(arrays)
    visual = get_extractor("visual").run(doc)
    side = [
        i
        for i in range(len(doc.elements))
        if doc.tag[i] == "p" and (inside(i, "col-a") or inside(i, "col-c"))
    ]
    middle = [i for i in range(len(doc.elements)) if doc.tag[i] == "p" and inside(i, "col-b")]
    assert heuristic.selection[doc.start[side]].all()  # heuristic alone keeps the ad columns
    assert not visual.selection[doc.start[side]].any()
    assert visual.selection[doc.start[middle]].all()
    assert (visual.signals["visual_position"][side] == -1000).all()
    left, right = visual.signals["visual_boundary"]
    assert 240 <= left <= 300 and 900 <= right <= 1000  # inside the side columns' centres

    # one article paragraph in light grey: penalised against the page's most common contrast
    grey = middle[2]
    arrays["color"][grey] = [200, 200, 200, 1]
    doc.layout = _layout(arrays)
    greyed = get_extractor("visual").run(doc, VisualParams(contrast_penalty=-5000))
    assert greyed.signals["visual_contrast_score"][grey] == -5000
    assert greyed.signals["visual_contrast_default"][0] == pytest.approx(15.9, abs=0.1)
    assert not greyed.selection[doc.start[grey]]

    # invisible, zero-size and off-screen paragraphs are dropped
    arrays["color"][grey] = [34, 34, 34, 1]
    arrays["visible"][middle[0]] = False
    arrays["box"][middle[1]] = [300, 100, 600, 0]
    arrays["box"][middle[3]] = [-9999, 100, 600, 20]
    doc.layout = _layout(arrays)
    hidden = hidden_elements(doc, doc.layout)
    assert hidden[[middle[0], middle[1], middle[3]]].all() and not hidden[middle[4]]
    dropped = get_extractor("visual").run(doc)
    assert not dropped.selection[doc.start[[middle[0], middle[1], middle[3]]]].any()
    assert dropped.selection[doc.start[middle[4]]]


def test_visual_is_registered_as_needing_the_browser() -> None:
    needs = {name for name, extractor in registry().items() if extractor.needs_browser}
    assert needs == {"visual"}


# --------------------------------------------------------------------------------------------
# The real browser, pages from the upstream test site.


async def _text(http: aiohttp.ClientSession, server: RunningServer, url: str, **query: str) -> str:
    async with http.get(server.url("/api/extract", url=url, **query)) as response:
        data = await response.json()
        assert response.status == 200, data
        return str(data["text"])


async def _heuristic_and_visual(
    http: aiohttp.ClientSession, server: RunningServer, url: str
) -> tuple[str, str]:
    """The page's text by `heuristic` and by `visual`."""
    return await _text(http, server, url, algo="heuristic"), await _text(http, server, url, algo="visual")


@pytest.mark.browser
async def test_visual_keeps_the_article_between_two_ad_columns(
    reader_server: RunningServer, upstream: Upstream, http: aiohttp.ClientSession, chromium_path: str
) -> None:
    url = upstream.url("/fixture/visual_columns.html")
    heuristic, visual = await _heuristic_and_visual(http, reader_server, url)
    assert "Glacier garden cinder" in heuristic and "Bargain exclusive subscribe" in heuristic
    assert "Glacier garden cinder" in visual and "Winter orbit ember" in visual
    assert "Bargain exclusive subscribe" not in visual and "Coupon savings voucher" not in visual
    # the column layout came from the page's own stylesheet, fetched through readerproxy's fetcher
    assert upstream.count("/fixture/visual_columns.css") >= 1


@pytest.mark.browser
async def test_low_contrast_boilerplate_is_dropped(
    reader_server: RunningServer, upstream: Upstream, http: aiohttp.ClientSession, chromium_path: str
) -> None:
    url = upstream.url("/fixture/visual_contrast.html")
    heuristic, visual = await _heuristic_and_visual(http, reader_server, url)
    assert "Boilerplate notice 1" in heuristic
    assert "Boilerplate notice" not in visual
    assert len(visual.split()) > 300  # the article itself is kept


@pytest.mark.browser
async def test_elements_hidden_by_a_stylesheet_rule_are_dropped(
    reader_server: RunningServer, upstream: Upstream, http: aiohttp.ClientSession, chromium_path: str
) -> None:
    url = upstream.url("/fixture/visual_hidden.html")
    heuristic, visual = await _heuristic_and_visual(http, reader_server, url)
    for word in ("displaynone", "visibilityhidden", "offscreen", "clippedaway"):
        assert word in heuristic, word  # the parse alone sees no inline style on them
        assert word not in visual, word
    assert len(visual.split()) > 300


@pytest.mark.browser
async def test_text_written_by_the_page_script_is_read_only_with_render(
    reader_server: RunningServer, upstream: Upstream, http: aiohttp.ClientSession, chromium_path: str
) -> None:
    url = upstream.url("/fixture/visual_script.html")
    assert "Scripted" not in await _text(http, reader_server, url, algo="heuristic")
    assert "Scripted" not in await _text(http, reader_server, url, algo="visual")  # JavaScript off
    rendered = await _text(http, reader_server, url, algo="heuristic", render="1")
    assert rendered.count("Scripted") >= 5
    async with http.get(reader_server.read_url(url, algo="visual", render="1", format="json")) as response:
        data = await response.json()
    assert data["text"].count("Scripted") >= 5
    assert data["rendered"] == {"javascript": True, "layout": True}
    async with http.get(reader_server.read_url(url, render="1")) as response:
        page = await response.text()
    assert response.status == 200 and "Scripted story" in page


async def _in_page_frame(page: Page, expression: str) -> Any:
    """`expression`'s value in the overlay's page frame, a sandboxed frame without scripts (which
    bind the page, not DevTools): in the frame's own target when it runs in a process of its own
    (site isolation puts sandboxed frames apart), else in an isolated world of the frame."""
    tree = await page.send("Page.getFrameTree")
    children = tree["frameTree"].get("childFrames", [])
    if children:
        world = await page.send(
            "Page.createIsolatedWorld", {"frameId": children[0]["frame"]["id"], "worldName": "test"}
        )
        result = await page.send(
            "Runtime.evaluate",
            {"expression": expression, "contextId": world["executionContextId"], "returnByValue": True},
        )
        return result["result"].get("value")
    targets = await page.browser.send("Target.getTargets")
    frame = next(t for t in targets["targetInfos"] if t["type"] == "iframe")
    attached = await page.browser.send(
        "Target.attachToTarget", {"targetId": frame["targetId"], "flatten": True}
    )
    try:
        result = await page.browser.send(
            "Runtime.evaluate", {"expression": expression, "returnByValue": True}, attached["sessionId"]
        )
    finally:
        await page.browser.send("Target.detachFromTarget", {"sessionId": attached["sessionId"]})
    return result["result"].get("value")


@pytest.mark.browser
async def test_overlay_draws_the_boundary_lines_and_the_chart(
    reader_server: RunningServer, upstream: Upstream, chromium: Chromium
) -> None:
    url = reader_server.read_url(upstream.url("/fixture/visual_columns.html"), algo="visual", view="overlay")
    page = await chromium.new_page()
    for width, height, mobile in ((375, 812, True), (1280, 900, False)):
        await page.set_viewport(width, height, mobile)
        await page.navigate(url)
        found = await page.evaluate(
            "({chart: document.querySelectorAll('#rpo-panel svg').length,"
            " figures: [...document.querySelectorAll('.rpo-ct')].map((e) => e.textContent)})"
        )
        # the page and its outlines are in a sandboxed frame without scripts: read it from DevTools
        found |= await _in_page_frame(
            page,
            "({lines: [...document.querySelectorAll('.rpo-boundary')].map((e) => e.getBoundingClientRect().height),"
            " title: (document.querySelector('.rpo-boundary') || {}).title || ''})",
        )
        await page.screenshot(SCREENSHOTS / f"overlay-visual-{width}x{height}.png")
        assert len(found["lines"]) == 2 and min(found["lines"]) > 100  # drawn down the page
        assert "main-content boundary: x = " in found["title"]
        assert "Blocks across the rendered page" in found["figures"] and found["chart"] >= 2


@pytest.mark.browser
async def test_landing_page_shows_visual_unavailable(chromium: Chromium) -> None:
    from support.reader_server import serve, test_settings

    async with serve(test_settings(browser="/nonexistent/chromium")) as server:
        page = await chromium.new_page()
        for width, height, mobile in ((375, 812, True), (1280, 900, False)):
            await page.set_viewport(width, height, mobile)
            await page.navigate(server.url("/"))
            state = await page.evaluate(
                "(() => { document.querySelector('details.algorithms-help').open = true;"
                " const option = document.querySelector('option[value=visual]');"
                " return {disabled: option.disabled, text: document.querySelector('dl.algorithms').innerText,"
                " overflow: document.documentElement.scrollWidth > window.innerWidth}; })()"
            )
            await page.evaluate(
                "[...document.querySelectorAll('dl.algorithms dt')].find((d) => d.textContent === 'visual')"
                ".previousElementSibling.scrollIntoView()"
            )
            await page.screenshot(SCREENSHOTS / f"landing-visual-unavailable-{width}x{height}.png")
            assert state["disabled"] and not state["overflow"]
            assert "Unavailable: no browser at /nonexistent/chromium" in state["text"]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "readerproxy.cli", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=120,
    )


@pytest.mark.browser
def test_cli_render_and_visual(chromium_path: str) -> None:
    page = str(FIXTURES / "visual_script.html")
    assert "Scripted" not in _cli("extract", page, "--algo", "heuristic").stdout
    rendered = _cli("extract", page, "--algo", "heuristic", "--render")
    assert rendered.returncode == 0 and rendered.stdout.count("Scripted") >= 5
    hidden = _cli("extract", str(FIXTURES / "visual_hidden.html"), "--algo", "visual", "--format", "json")
    assert hidden.returncode == 0 and "displaynone" not in json.loads(hidden.stdout)["text"]
    missing = _cli("extract", page, "--algo", "visual", "--browser", "/nonexistent/chromium")
    assert missing.returncode == 3 and "visual rendering is unavailable: no browser at" in missing.stderr
