"""The overlay, compare, landing page and reader footer as a phone (375 px) and a desktop (1280 px)
show them, in a real headless Chromium.

- the overlay's first screen shows a kept block: dropped menus, headers and footers are folded into
  one summary line each, so a reader does not scroll past their badges first;
- a tap on a link in the page's frame selects, never navigates (the sandbox refuses `_top`);
- the panel shows no number in exponent form, and names each top candidate differently;
- /compare names `visual`: run on the browser's render when the browser is there, marked
  unavailable with the reason when it is not;
- the landing page lists friendly names, `auto` first, the research algorithms under a heading,
  no `learned`; the reader's footer names the algorithm asked for, and its arrow stands apart.
Widths are checked against the visual viewport: on a phone, Chromium widens the layout viewport
(`innerWidth`) to what overflows. Screenshots go to artifacts/screenshots/phone-*.png.
"""

from __future__ import annotations

import asyncio
import re

import pytest
from support.chromium import SCREENSHOTS, Chromium
from support.reader_server import serve, test_settings
from support.upstream import Upstream
from test_overlay_browser import RIGHTMOST, VIEWPORTS, Framed

pytestmark = pytest.mark.browser

#: In the page's frame: the kept marks on the first screen, the folds, a link inside a mark.
FIRST_SCREEN = (
    """
(() => {
  const rightmost = """
    + RIGHTMOST.strip()
    + """;
  const visible = (e) => {
    const r = e.getBoundingClientRect();
    return r.bottom > 0 && r.top < innerHeight && r.width > 0 && r.height > 0
      && getComputedStyle(e).visibility !== 'hidden';
  };
  const kept = [...document.querySelectorAll('.rpo-mark.rpo-k')].filter(visible);
  return {
    keptOnFirstScreen: kept.length,
    folds: [...document.querySelectorAll('details.rpo-fold > summary')].map(s => s.textContent),
    foldHeights: [...document.querySelectorAll('details.rpo-fold > summary')].map(s => s.getBoundingClientRect().height),
    innerHeight: innerHeight,
    scrollY: scrollY,
    scrollWidth: document.documentElement.scrollWidth,
    clientWidth: document.documentElement.clientWidth,
    contentRight: rightmost.right,
  };
})()
"""
)
LINK = """
(() => {
  const link = [...document.querySelectorAll('.rpo-mark a[href^="http"]')].find(a => !a.closest('details'));
  if (!link) return null;
  link.scrollIntoView({block: 'center'});
  const r = link.getBoundingClientRect();
  return {x: r.x + Math.min(r.width / 2, 10), y: r.y + r.height / 2, href: link.href};
})()
"""


async def test_overlay_first_screen_on_a_phone_shows_a_kept_block(
    chromium: Chromium, upstream: Upstream
) -> None:
    upstream.require_datasets()
    async with serve(test_settings()) as server:
        framed = await Framed.open(chromium)
        for route in ("/rd/guardian-1", "/rd/mozilla-1"):
            for width, height, mobile in VIEWPORTS:
                await framed.page.set_viewport(width, height, mobile)
                await framed.page.set_color_scheme("light")
                overlay = server.read_url(upstream.url(route), algo="auto", view="overlay")
                await framed.navigate(overlay)
                state = await framed.evaluate_in_frame(FIRST_SCREEN)
                name = route.rsplit("/", 1)[-1]
                await framed.page.screenshot(SCREENSHOTS / f"phone-overlay-{name}-{width}x{height}.png")
                assert state["keptOnFirstScreen"] > 0, f"{route} {width} {state}"
                # nothing of the page clipped sideways, and no width added by the marks
                assert state["contentRight"] <= state["scrollWidth"] + 1, (route, width, state)
                assert state["scrollWidth"] <= max(state["clientWidth"], state["contentRight"]) + 1, state
                assert all(
                    re.fullmatch(r"\w+: \d+ (links|words) dropped, tap to show", f) for f in state["folds"]
                )
                assert all(h >= 44 for h in state["foldHeights"]), state["foldHeights"]
                panel = await framed.evaluate("document.getElementById('rpo-panel').innerText")
                assert not re.search(r"\d\.?\d*e[-+]\d", panel), "a number in exponent form in the panel"
                top = await framed.evaluate(
                    "[...document.querySelectorAll('ol.rpo-top li')].map(l => l.innerText)"
                )
                assert len(set(top)) == len(top), top

                # the top of the page: each fold is one line, and a tap on it shows what it holds
                summary = await framed.evaluate_in_frame(
                    "(() => { scrollTo(0, 0); const s = document.querySelector('details.rpo-fold > summary');"
                    " if (!s) return null; const r = s.getBoundingClientRect();"
                    " return {x: r.x + 20, y: r.y + r.height / 2}; })()"
                )
                await framed.page.screenshot(SCREENSHOTS / f"phone-overlay-{name}-top-{width}x{height}.png")
                if summary is not None:
                    x0, y0 = await framed.frame_offset()
                    await framed.mouse("mousePressed", x0 + summary["x"], y0 + summary["y"])
                    await framed.mouse("mouseReleased", x0 + summary["x"], y0 + summary["y"])
                    opened = await framed.evaluate_in_frame("document.querySelector('details.rpo-fold').open")
                    assert opened, f"a tap on a fold's summary did not open it: {summary}"

                # a tap on a link of the page selects: the tab stays on the overlay
                link = await framed.evaluate_in_frame(LINK)
                if link is not None:
                    x0, y0 = await framed.frame_offset()
                    await framed.mouse("mousePressed", x0 + link["x"], y0 + link["y"])
                    await framed.mouse("mouseReleased", x0 + link["x"], y0 + link["y"])
                    await asyncio.sleep(0.5)
                    here = await framed.evaluate("location.href")
                    assert "view=overlay" in here, (link, here)


CARDS = """
({names: [...document.querySelectorAll('.rpc-card')].map(c => c.dataset.algorithm),
  visual: (() => { const c = document.querySelector('.rpc-card[data-algorithm="visual"]');
    return c ? {text: c.innerText, score: !!c.querySelector('.rpc-score'), overlay: !!c.querySelector('a[href*="view=overlay"]')} : null; })(),
  overflow: document.documentElement.scrollWidth - visualViewport.width})
"""


@pytest.mark.parametrize("browser", ["chromium", "missing"])
async def test_compare_names_visual(chromium: Chromium, upstream: Upstream, browser: str) -> None:
    upstream.require_datasets()
    settings = test_settings() if browser == "chromium" else test_settings(browser="/nonexistent/chromium")
    async with serve(settings) as server:
        page = await chromium.new_page()
        for width, height, mobile in VIEWPORTS:
            await page.set_viewport(width, height, mobile)
            await page.navigate(server.url("/compare", url=upstream.url("/rd/mozilla-1")))
            state = await page.evaluate(CARDS)
            await page.screenshot(
                SCREENSHOTS / f"phone-compare-{browser}-{width}x{height}.png", full_page=True
            )
            assert (
                state["names"][0] == "auto" and "visual" in state["names"] and "learned" not in state["names"]
            )
            assert state["overflow"] <= 0
            visual = state["visual"]
            if browser == "chromium":
                assert visual["score"] and visual["overlay"], visual
            else:
                assert not visual["score"] and not visual["overlay"], visual
                assert "unavailable: no browser at /nonexistent/chromium" in visual["text"], visual


LANDING = """
(() => {
  const select = document.getElementById('algo');
  const first = select.options[0];
  const group = select.querySelector('optgroup');
  const rect = (e) => e.getBoundingClientRect().height;
  return {
    first: [first.value, first.text],
    group: group ? group.label : null,
    grouped: group ? [...group.querySelectorAll('option')].map(o => o.value) : [],
    values: [...select.options].map(o => o.value),
    texts: [...select.options].map(o => o.text),
    proxy: [...document.querySelectorAll('h2')].some(h => h.textContent === 'Proxy mode'),
    setup: document.body.innerText.includes('http://readerproxy/'),
    bookmarklet: !!document.querySelector('a.bookmarklet'),
    selectHeight: rect(select),
    overflow: document.documentElement.scrollWidth - visualViewport.width,
  };
})()
"""
FOOTER = r"""
(() => {
  const badge = document.querySelector('.article-foot .badge');
  const original = document.querySelector('.article-foot .original');
  const arrow = original ? original.querySelector('span') : null;
  const range = document.createRange();
  if (original) {  // the text without its trailing spaces: where the last letter ends
    const text = original.firstChild;
    range.setStart(text, 0);
    range.setEnd(text, text.textContent.replace(/[\s\u00a0]+$/, '').length);
  }
  const textEnd = original ? range.getBoundingClientRect().right : 0;
  return {
    badge: badge ? badge.textContent.trim() : null,
    gap: arrow ? arrow.getBoundingClientRect().left - textEnd : null,
  };
})()
"""


async def test_landing_and_reader_footer(chromium: Chromium, upstream: Upstream) -> None:
    upstream.require_datasets()
    async with serve(test_settings()) as server:
        page = await chromium.new_page()
        for width, height, mobile in VIEWPORTS:
            await page.set_viewport(width, height, mobile)
            await page.navigate(server.url("/"))
            state = await page.evaluate(LANDING)
            await page.screenshot(SCREENSHOTS / f"phone-landing-{width}x{height}.png")
            await page.evaluate("document.querySelector('details.algorithms-help').open = true")
            assert await page.evaluate("document.documentElement.scrollWidth - visualViewport.width") <= 0
            await page.evaluate("[...document.querySelectorAll('h2')].pop().scrollIntoView()")
            await page.screenshot(SCREENSHOTS / f"phone-landing-proxy-{width}x{height}.png")
            await page.evaluate("document.querySelector('details.algorithms-help').scrollIntoView()")
            await page.screenshot(SCREENSHOTS / f"phone-landing-algorithms-{width}x{height}.png")
            assert state["first"] == ["auto", "Automatic (best)"], state
            assert state["group"] == "Research algorithms" and "heuristic" in state["grouped"], state
            assert "learned" not in state["values"] and "visual" in state["values"]
            assert all(text != value for text, value in zip(state["texts"], state["values"], strict=True))
            assert state["proxy"] and state["setup"] and state["bookmarklet"]
            assert state["selectHeight"] >= 44 and state["overflow"] <= 0, state

            await page.navigate(server.read_url(upstream.url("/rd/guardian-1"), algo="auto"))
            footer = await page.evaluate(FOOTER)
            await page.evaluate("document.querySelector('.article-foot').scrollIntoView()")
            await page.screenshot(SCREENSHOTS / f"phone-reader-footer-{width}x{height}.png")
            assert footer["badge"] == "auto", footer
            assert footer["gap"] is not None and footer["gap"] >= 2, footer
