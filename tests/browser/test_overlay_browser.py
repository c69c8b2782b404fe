"""Overlay and compare pages in a real headless Chromium, at phone (375 px) and desktop (1280 px) width.

The overlay is readerproxy's own document (the panel) with the page in a sandboxed `<iframe srcdoc>`;
Chromium runs that frame out of process, so the tests attach to it (`Framed`) to look inside.

- no horizontal overflow at either width in the overlay; in its frame, nothing of the page clipped
  (a page wider than the frame scrolls sideways to its rightmost element) and no width added by
  the marks;
- the frame is sandboxed without allow-scripts or allow-same-origin, and the panel is beside it;
- every scored block is outlined: the union of `data-rpo-blocks` over the page's marks equals the
  blocks of the same extraction (from `/api/extract?blocks=1`);
- a fixture whose own scripts (inline, external, handlers, `javascript:` URLs, srcdoc iframe, SVG
  onload, meta refresh, base) would change the title or write into the page shows they did not run,
  while its stylesheets (linked and inline) still apply;
- the charts are drawn (SVG with a size); hovering a block or tapping its badge shows its features
  (CSS only: no script runs anywhere in the overlay);
- compare lists every registered algorithm.
Screenshots go to artifacts/screenshots/overlay-*.png.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from support.chromium import SCREENSHOTS, Chromium, Page
from support.reader_server import serve, serve_app, test_settings
from support.upstream import PNG_BYTES, Upstream

from readerproxy.web.compare import algorithm_names

pytestmark = pytest.mark.browser

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
VIEWPORTS = ((375, 812, True), (1280, 800, False))

#: Measured in readerproxy's document: the panel, the frame, the charts.
MEASURE_SHELL = """
(() => {
  const panel = document.getElementById('rpo-panel');
  const rect = panel ? panel.getBoundingClientRect() : null;
  const frame = document.getElementById('rpo-frame');
  const box = frame ? frame.getBoundingClientRect() : null;
  const charts = [...document.querySelectorAll('svg.rpo-chart')].map(s => s.getBoundingClientRect().width);
  const inPanel = (x, y) => { const e = document.elementFromPoint(x, y); return !!e && !!panel && panel.contains(e); };
  return {
    scrollWidth: document.documentElement.scrollWidth,
    innerWidth: window.innerWidth,
    innerHeight: window.innerHeight,
    title: document.title,
    shellScripts: document.querySelectorAll('script').length,
    shellIframes: document.querySelectorAll('iframe').length,
    sandbox: frame ? frame.getAttribute('sandbox') : null,
    frame: box ? {x: box.x, y: box.y, width: box.width, height: box.height} : null,
    panel: rect ? {x: rect.x, y: rect.y, width: rect.width, height: rect.height} : null,
    panelWidth: rect ? rect.width : 0,
    panelVisible: !!rect && rect.height > 40 && rect.top < window.innerHeight
      && getComputedStyle(panel).visibility === 'visible' && getComputedStyle(panel).display !== 'none',
    panelOnTop: !!rect && inPanel(rect.x + rect.width / 2, rect.y + Math.min(rect.height, window.innerHeight - rect.y) / 2),
    panelText: panel ? panel.innerText.slice(0, 200) : '',
    charts: charts,
  };
})()
"""
#: Inside the page's frame: the rightmost edge of the page's own elements (not the overlay's badges
#: and cards), in document coordinates, over the elements the page itself shows whole: those not
#: fixed to the viewport and not inside an element of the page that clips or scrolls sideways.
RIGHTMOST = """
(() => {
  const page = document.querySelector('.rpo-page');
  const clips = (e) => getComputedStyle(e).overflowX !== 'visible' || getComputedStyle(e).position === 'fixed';
  let right = 0, element = null;
  const walk = (parent) => {
    for (const e of parent.children) {
      if (e.matches('.rpo-badge, .rpo-fc') || getComputedStyle(e).position === 'fixed') continue;
      const r = e.getBoundingClientRect();
      if (r.width > 0 && r.height > 0 && r.right + scrollX > right) { right = r.right + scrollX; element = e; }
      if (!clips(e)) walk(e);
    }
  };
  walk(page);
  return {right: right, path: element ? element.tagName + '.' + element.className : ''};
})()
"""
#: Measured inside the page's frame: the marks, what the page's scripts would have done, its styles.
MEASURE_FRAME = (
    """
(() => {
  const RIGHTMOST = """
    + RIGHTMOST.strip()
    + """;
  const ids = new Set();
  document.querySelectorAll('.rpo-mark').forEach(m =>
    (m.getAttribute('data-rpo-blocks') || '').split(' ').filter(Boolean).forEach(i => ids.add(Number(i))));
  const h1 = document.querySelector('h1');
  const story = document.querySelector('.story');
  return {
    frameScrollWidth: document.documentElement.scrollWidth,
    frameClientWidth: document.documentElement.clientWidth,
    contentRight: RIGHTMOST.right,
    origin: String(self.origin),
    blocks: [...ids].sort((a, b) => a - b),
    marks: document.querySelectorAll('.rpo-mark').length,
    pwned: !!document.getElementById('pwned') || document.title !== '',
    scripts: document.querySelectorAll('script').length,
    iframes: document.querySelectorAll('iframe').length,
    jsLinks: [...document.querySelectorAll('a[href]')].filter(a => /^\\s*javascript:/i.test(a.getAttribute('href'))).length,
    handlers: [...document.querySelectorAll('*')].filter(e => [...e.attributes].some(a => /^on/i.test(a.name))).length,
    h1Color: h1 ? getComputedStyle(h1).color : '',
    storyBorder: story ? getComputedStyle(story).borderLeftColor : '',
  };
})()
"""
)


class Framed:
    """A tab that also attaches to the out-of-process frames of its page (the overlay's sandboxed
    frame), so a test can evaluate inside the frame."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.browser = page.browser
        self._attached = page.browser.subscribe("Target.attachedToTarget", page.session)
        self._frame: str | None = None

    @classmethod
    async def open(cls, chromium: Chromium) -> Framed:
        framed = cls(await chromium.new_page())
        await framed.page.send(
            "Target.setAutoAttach", {"autoAttach": True, "waitForDebuggerOnStart": False, "flatten": True}
        )
        return framed

    async def navigate(self, url: str) -> None:
        """Navigate the tab and take the frame the new page made."""
        self._frame = None
        await self.page.navigate(url)
        deadline = asyncio.get_running_loop().time() + 10
        while True:
            while not self._attached.empty():
                event = self._attached.get_nowait()
                if event.get("targetInfo", {}).get("type") == "iframe":
                    self._frame = event["sessionId"]
            if self._frame is not None or asyncio.get_running_loop().time() > deadline:
                break
            with contextlib.suppress(asyncio.TimeoutError):
                event = await asyncio.wait_for(self._attached.get(), 0.5)
                if event.get("targetInfo", {}).get("type") == "iframe":
                    self._frame = event["sessionId"]
        assert self._frame is not None, "the overlay's page frame was not attached"
        await self.settled()

    async def settled(self) -> None:
        """Wait until the frame has loaded and laid out (its opening scroll position taken), so
        that what a test measures or taps is where it stays."""
        deadline = asyncio.get_running_loop().time() + 10
        while asyncio.get_running_loop().time() < deadline:
            with contextlib.suppress(AssertionError):
                if await self.evaluate_in_frame("document.readyState") == "complete":
                    break
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.2)  # its layout, and the opening scroll position, after the load

    async def evaluate(self, expression: str) -> Any:
        return await self.page.evaluate(expression)

    async def evaluate_in_frame(self, expression: str) -> Any:
        assert self._frame is not None
        result = await self.browser.send(
            "Runtime.evaluate", {"expression": expression, "returnByValue": True}, session=self._frame
        )
        if "exceptionDetails" in result:
            raise AssertionError(f"{expression!r} raised {result['exceptionDetails']}")
        return result["result"].get("value")

    async def frame_offset(self) -> tuple[float, float]:
        """Where the frame's viewport starts in the tab."""
        box = await self.evaluate(
            "(() => { const r = document.getElementById('rpo-frame').getBoundingClientRect();"
            " return [r.x, r.y]; })()"
        )
        return float(box[0]), float(box[1])

    async def mouse(self, kind: str, x: float, y: float) -> None:
        params: dict[str, Any] = {"type": kind, "x": x, "y": y}
        if kind != "mouseMoved":
            params.update(button="left", clickCount=1)
        await self.page.send("Input.dispatchMouseEvent", params)


@contextlib.asynccontextmanager
async def fixture_site() -> AsyncIterator[str]:
    """The script fixture, its stylesheet, a pixel and an 'evil' script on 127.0.0.1."""
    app = web.Application()
    page = (FIXTURES / "overlay_script.html").read_bytes()
    css = (FIXTURES / "overlay_fixture.css").read_bytes()

    async def serve_page(request: web.Request) -> web.Response:
        return web.Response(body=page, content_type="text/html", charset="utf-8")

    async def serve_css(request: web.Request) -> web.Response:
        return web.Response(body=css, content_type="text/css")

    async def serve_pixel(request: web.Request) -> web.Response:
        return web.Response(body=PNG_BYTES, content_type="image/png")

    async def serve_js(request: web.Request) -> web.Response:
        return web.Response(text="document.title = 'EXTERNAL RAN';", content_type="application/javascript")

    app.router.add_get("/story", serve_page)
    app.router.add_get("/fixture.css", serve_css)
    app.router.add_get("/pixel.png", serve_pixel)
    app.router.add_get("/evil.js", serve_js)
    async with serve_app(app) as base:
        yield base


async def scored_blocks(base: str, url: str, algorithm: str) -> int:
    async with (
        aiohttp.ClientSession() as http,
        http.get(base + "/api/extract", params={"url": url, "algo": algorithm, "blocks": "1"}) as response,
    ):
        assert response.status == 200
        data = await response.json()
    return len(data["blocks"])


async def measure(browser: Chromium, url: str, name: str) -> list[dict[str, Any]]:
    framed = await Framed.open(browser)
    page = framed.page
    results = []
    for width, height, mobile in VIEWPORTS:
        await page.set_viewport(width, height, mobile)
        await page.set_color_scheme("light")
        await framed.navigate(url)
        measured = await framed.evaluate(MEASURE_SHELL)
        measured.update(await framed.evaluate_in_frame(MEASURE_FRAME))
        shot = await page.screenshot(SCREENSHOTS / f"overlay-{name}-{width}x{height}.png")
        results.append({**measured, "width": width, "mobile": mobile, "shot": shot})
    return results


def check_fits(results: list[dict[str, Any]], n_blocks: int) -> None:
    for r in results:
        where = f"{r['width']}px"
        assert r["scrollWidth"] <= r["innerWidth"], f"horizontal overflow at {where}"
        assert r["contentRight"] <= r["frameScrollWidth"] + 1, f"the page clipped sideways at {where}: {r}"
        assert r["frameScrollWidth"] <= max(r["frameClientWidth"], r["contentRight"]) + 1, (
            f"the marks widen the frame at {where}: {r}"
        )
        assert r["blocks"] == list(range(n_blocks)), f"outlined blocks != scored blocks at {where}"
        assert r["panelVisible"] and r["panelOnTop"], f"panel not visible at {where}"
        assert r["shellScripts"] == 0 and r["shellIframes"] == 1 and r["origin"] == "null"
        sandbox = (r["sandbox"] or "").split()
        assert r["sandbox"] is not None and "allow-scripts" not in sandbox
        assert "allow-same-origin" not in sandbox
        frame, panel = r["frame"], r["panel"]
        if r["mobile"]:  # a bottom sheet under the frame
            assert frame["width"] == r["innerWidth"] and panel["y"] >= frame["y"] + frame["height"] - 1
            assert frame["height"] >= r["innerHeight"] * 0.45
        else:  # a side column beside it
            assert panel["x"] >= frame["x"] + frame["width"] - 1 and 300 <= panel["width"] <= 420
            assert frame["height"] == r["innerHeight"]
        assert r["charts"] and min(r["charts"]) > 250, (
            f"charts missing or too small at {where}: {r['charts']}"
        )
        assert r["shot"].stat().st_size > 1000


async def test_script_fixture_does_not_run_and_keeps_its_styles(chromium: Chromium) -> None:
    async with fixture_site() as site, serve(test_settings()) as server:
        target = site + "/story"
        for algorithm in ("heuristic", "density"):
            n_blocks = await scored_blocks(server.base, target, algorithm)
            results = await measure(
                chromium,
                server.read_url(target, algo=algorithm, view="overlay"),
                f"script-fixture-{algorithm}",
            )
            check_fits(results, n_blocks)
            for r in results:
                assert r["title"].startswith("Harmless fixture page"), r["title"]
                assert not r["pwned"] and r["scripts"] == 0 and r["iframes"] == 0
                assert r["jsLinks"] == 0 and r["handlers"] == 0
                assert r["h1Color"] == "rgb(128, 0, 128)"  # the page's inline <style>
                assert r["storyBorder"] == "rgb(0, 128, 128)"  # the page's linked stylesheet


@pytest.mark.parametrize(
    ("route", "algorithm"),
    [
        ("/rd/wikipedia", "cetr"),
        ("/rd/wikipedia", "heuristic"),
        ("/rd/mozilla-1", "density"),
        ("/rd/mozilla-1", "lineblock"),
        ("/rd/001", "danag"),
        ("/rd/001", "accb"),
        ("/rd/keep-tabular-data", "auto"),
    ],
)
async def test_overlay_outlines_every_block_at_phone_and_desktop(
    chromium: Chromium, upstream: Upstream, route: str, algorithm: str
) -> None:
    upstream.require_datasets()
    async with serve(test_settings()) as server:
        target = upstream.url(route)
        n_blocks = await scored_blocks(server.base, target, algorithm)
        assert n_blocks > 0
        name = f"{route.rsplit('/', 1)[-1]}-{algorithm}"
        check_fits(
            await measure(chromium, server.read_url(target, algo=algorithm, view="overlay"), name), n_blocks
        )


#: In the frame, scrolled as far right as it goes: where the page's rightmost element now is.
FAR_RIGHT = (
    """
(() => {
  scrollTo(document.documentElement.scrollWidth, scrollY);
  const rightmost = """
    + RIGHTMOST.strip()
    + """;
  return {scrollX: scrollX, right: rightmost.right - scrollX, path: rightmost.path,
          clientWidth: document.documentElement.clientWidth};
})()
"""
)


@pytest.mark.parametrize("route", ["/rd/qq", "/rd/mozilla-1"])
async def test_a_page_wider_than_the_frame_is_whole(
    chromium: Chromium, upstream: Upstream, route: str
) -> None:
    """A page laid out wider than the frame (qq's 1002 px, mozilla-1's 943 px) against the 875 px the
    desktop panel leaves it: nothing of it is clipped, the frame scrolls sideways to its right edge."""
    upstream.require_datasets()
    async with serve(test_settings()) as server:
        framed = await Framed.open(chromium)
        name = route.rsplit("/", 1)[-1]
        for width, height, mobile in VIEWPORTS:
            await framed.page.set_viewport(width, height, mobile)
            await framed.page.set_color_scheme("light")
            await framed.navigate(server.read_url(upstream.url(route), algo="auto", view="overlay"))
            frame = await framed.evaluate_in_frame(MEASURE_FRAME)
            assert frame["contentRight"] > frame["frameClientWidth"], f"{route} fits the frame at {width}px"
            # it opens at the page's left edge (its first kept block starts there, as on these pages)
            assert await framed.evaluate_in_frame("scrollX") == 0, (route, width)
            assert frame["contentRight"] <= frame["frameScrollWidth"] + 1, (route, width, frame)
            shell = await framed.evaluate(MEASURE_SHELL)
            assert shell["scrollWidth"] <= shell["innerWidth"], (route, width, shell)

            far = await framed.evaluate_in_frame(FAR_RIGHT)
            await framed.page.screenshot(SCREENSHOTS / f"overlay-wide-{name}-right-{width}x{height}.png")
            assert far["scrollX"] > 0, (route, width, far)
            assert 0 < far["right"] <= far["clientWidth"] + 1, f"{far['path']} out of reach: {far}"


BADGE = """
(() => {
  const badge = document.querySelector('.rpo-mark.rpo-k > .rpo-badge');
  badge.scrollIntoView({block: 'center'});
  const r = badge.getBoundingClientRect();
  return {x: r.x + r.width / 2, y: r.y + r.height / 2};
})()
"""
CARD = """
(() => {
  const card = document.querySelector('.rpo-mark.rpo-k > .rpo-badge + .rpo-fc');
  const r = card.getBoundingClientRect();
  return {shown: getComputedStyle(card).display === 'block' && r.width > 50 && r.height > 40,
          text: card.innerText};
})()
"""


async def test_hover_and_tap_show_features(chromium: Chromium, upstream: Upstream) -> None:
    """Without any script: hovering a badge's block shows its card; tapping the badge (focus) too."""
    upstream.require_datasets()
    async with serve(test_settings()) as server:
        framed = await Framed.open(chromium)
        for width, height, mobile in VIEWPORTS:
            await framed.page.set_viewport(width, height, mobile)
            await framed.navigate(
                server.read_url(upstream.url("/rd/mozilla-1"), algo="heuristic", view="overlay")
            )
            hidden = await framed.evaluate_in_frame(CARD)
            assert not hidden["shown"]
            badge = await framed.evaluate_in_frame(BADGE)
            x0, y0 = await framed.frame_offset()
            await framed.mouse("mouseMoved", x0 + badge["x"], y0 + badge["y"])
            hovered = await framed.evaluate_in_frame(CARD)
            await framed.page.screenshot(SCREENSHOTS / f"overlay-hover-{width}x{height}.png")
            assert hovered["shown"], hovered
            assert "words" in hovered["text"] and "link density" in hovered["text"]
            await framed.mouse("mouseMoved", 1, 1)  # away (the frame's top left corner)
            await framed.mouse("mousePressed", x0 + badge["x"], y0 + badge["y"])
            await framed.mouse("mouseReleased", x0 + badge["x"], y0 + badge["y"])
            await framed.mouse("mouseMoved", 1, 1)
            tapped = await framed.evaluate_in_frame(CARD)
            focused = await framed.evaluate_in_frame(
                "document.activeElement && document.activeElement.className"
            )
            assert "rpo-badge" in (focused or "") and tapped["shown"], (focused, tapped)


async def test_compare_lists_every_algorithm(chromium: Chromium, upstream: Upstream) -> None:
    upstream.require_datasets()
    async with serve(test_settings()) as server:
        page = await chromium.new_page()
        for width, height, mobile in VIEWPORTS:
            await page.set_viewport(width, height, mobile)
            await page.navigate(server.url("/compare", url=upstream.url("/rd/mozilla-1")))
            state = await page.evaluate(
                "({names: [...document.querySelectorAll('.rpc-card')].map(c => c.dataset.algorithm),"
                " overlays: [...document.querySelectorAll('.rpc-links a')].filter(a => a.href.includes('view=overlay')).length,"
                " thumbs: document.querySelectorAll('svg.rpc-thumb').length,"
                " rows: document.querySelectorAll('.rpc-agree tbody tr').length,"
                " overflow: document.documentElement.scrollWidth - innerWidth})"
            )
            await page.screenshot(SCREENSHOTS / f"compare-mozilla-1-{width}x{height}.png")
            names = algorithm_names()
            assert state["names"] == names
            assert (
                state["overlays"] == len(names)
                and state["thumbs"] == len(names)
                and state["rows"] == len(names)
            )
            assert state["overflow"] <= 0
