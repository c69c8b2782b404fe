"""Overlay and compare pages in a real headless Chromium, at phone (375 px) and desktop (1280 px) width.

- no horizontal overflow at either width;
- every scored block is outlined: the union of `data-rpo-blocks` over the page's marks equals the
  blocks of the same extraction (from `/api/extract?blocks=1`);
- a fixture whose own scripts (inline, external, handlers, `javascript:` URLs, srcdoc iframe, SVG
  onload, meta refresh, base) would change the title or write into the page shows they did not run,
  while its stylesheets (linked and inline) still apply;
- the charts are drawn (SVG with a size), hovering a block shows its features (our one script);
- compare lists every registered algorithm.
Screenshots go to artifacts/screenshots/overlay-*.png.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from support.chromium import SCREENSHOTS, Chromium
from support.reader_server import serve, serve_app, test_settings
from support.upstream import PNG_BYTES, Upstream

from readerproxy.compare import algorithm_names

pytestmark = pytest.mark.browser

FIXTURES = Path(__file__).resolve().parent / "fixtures"
VIEWPORTS = ((375, 812, True), (1280, 800, False))

MEASURE = """
(() => {
  const ids = new Set();
  document.querySelectorAll('.rpo-mark').forEach(m =>
    (m.getAttribute('data-rpo-blocks') || '').split(' ').filter(Boolean).forEach(i => ids.add(Number(i))));
  const panel = document.getElementById('rpo-panel');
  const rect = panel ? panel.getBoundingClientRect() : null;
  const charts = [...document.querySelectorAll('svg.rpo-chart')].map(s => s.getBoundingClientRect().width);
  const h1 = document.querySelector('h1');
  const story = document.querySelector('.story');
  return {
    scrollWidth: document.documentElement.scrollWidth,
    innerWidth: window.innerWidth,
    blocks: [...ids].sort((a, b) => a - b),
    marks: document.querySelectorAll('.rpo-mark').length,
    title: document.title,
    pwned: !!document.getElementById('pwned'),
    scripts: document.querySelectorAll('script:not([src*="/static/overlay.js"])').length,
    iframes: document.querySelectorAll('iframe').length,
    jsLinks: [...document.querySelectorAll('a[href]')].filter(a => /^\\s*javascript:/i.test(a.getAttribute('href'))).length,
    handlers: [...document.querySelectorAll('*')].filter(e => [...e.attributes].some(a => /^on/i.test(a.name))).length,
    panelWidth: rect ? rect.width : 0,
    panelVisible: !!rect && rect.height > 40 && rect.top < window.innerHeight,
    charts: charts,
    h1Color: h1 ? getComputedStyle(h1).color : '',
    storyBorder: story ? getComputedStyle(story).borderLeftColor : '',
  };
})()
"""


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
    page = await browser.new_page()
    results = []
    for width, height, mobile in VIEWPORTS:
        await page.set_viewport(width, height, mobile)
        await page.set_color_scheme("light")
        await page.navigate(url)
        measured = await page.evaluate(MEASURE)
        shot = await page.screenshot(SCREENSHOTS / f"overlay-{name}-{width}x{height}.png")
        results.append({**measured, "width": width, "shot": shot})
    return results


def check_fits(results: list[dict[str, Any]], n_blocks: int) -> None:
    for r in results:
        where = f"{r['width']}px"
        assert r["scrollWidth"] <= r["innerWidth"], f"horizontal overflow at {where}"
        assert r["blocks"] == list(range(n_blocks)), f"outlined blocks != scored blocks at {where}"
        assert r["panelVisible"], f"panel not visible at {where}"
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


async def test_hover_shows_features(chromium: Chromium, upstream: Upstream) -> None:
    upstream.require_datasets()
    async with serve(test_settings()) as server:
        page = await chromium.new_page()
        await page.set_viewport(375, 812, True)
        await page.navigate(server.read_url(upstream.url("/rd/mozilla-1"), algo="heuristic", view="overlay"))
        card = await page.evaluate(
            "(() => { const m = document.querySelector('.rpo-mark.rpo-k');"
            " m.dispatchEvent(new MouseEvent('mouseover', {bubbles: true}));"
            " const c = document.getElementById('rpo-card'); return {hidden: c.hidden, text: c.innerText}; })()"
        )
        await page.screenshot(SCREENSHOTS / "overlay-hover-375x812.png")
        assert not card["hidden"] and "words" in card["text"] and "link density" in card["text"]


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
