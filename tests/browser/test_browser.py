"""The reader view in a real headless Chromium: phone and desktop sizes, light and dark.

For each page: no horizontal scrolling (document scrollWidth <= innerWidth), body text >= 16 px, the
article text visible, the theme following prefers-color-scheme, and on desktop a line length of
about 60-75 characters. Screenshots are kept in artifacts/screenshots/ (gitignored).
"""

from __future__ import annotations

from typing import Any

import pytest
from support.chromium import SCREENSHOTS, Chromium
from support.reader_server import serve, test_settings
from support.upstream import Upstream

pytestmark = pytest.mark.browser

VIEWPORTS = ((375, 812, True), (1280, 800, False))
SCHEMES = ("light", "dark")

#: Measured in the page: overflow, font size, visible article text, background luminance, line length.
MEASURE = """
(() => {
  const content = document.querySelector('.content');
  const body = getComputedStyle(document.body);
  const rgb = body.backgroundColor.match(/\\d+(\\.\\d+)?/g).slice(0, 3).map(Number);
  const luminance = (0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2]) / 255;
  let charsPerLine = null;
  const paragraphs = [...document.querySelectorAll('.content p')]
    .filter(p => p.innerText.trim().length > 400);
  if (paragraphs.length) {
    const p = paragraphs[0];
    const lines = p.getBoundingClientRect().height / parseFloat(getComputedStyle(p).lineHeight);
    // the last line is partly filled: count it as half a line
    if (lines >= 3) charsPerLine = p.innerText.trim().length / (Math.round(lines) - 0.5);
  }
  const rect = content ? content.getBoundingClientRect() : null;
  const firstText = content ? [...content.querySelectorAll('p, li, pre, td')].find(e => e.innerText.trim()) : null;
  const visible = !!(firstText && firstText.getBoundingClientRect().height > 0
    && getComputedStyle(firstText).visibility === 'visible' && getComputedStyle(firstText).opacity !== '0');
  return {
    scrollWidth: document.documentElement.scrollWidth,
    innerWidth: window.innerWidth,
    fontSize: parseFloat(body.fontSize),
    contentText: content ? content.innerText.trim().length : 0,
    contentWidth: rect ? rect.width : 0,
    visible: visible,
    luminance: luminance,
    charsPerLine: charsPerLine,
    title: (document.querySelector('article.reader h1') || {}).innerText || '',
  };
})()
"""


async def measure_page(browser: Chromium, url: str, name: str) -> list[dict[str, Any]]:
    """Load the page at every viewport and color scheme; a screenshot and the measurements of each."""
    page = await browser.new_page()
    results = []
    for width, height, mobile in VIEWPORTS:
        for scheme in SCHEMES:
            await page.set_viewport(width, height, mobile)
            await page.set_color_scheme(scheme)
            await page.navigate(url)
            measured = await page.evaluate(MEASURE)
            shot = await page.screenshot(SCREENSHOTS / f"{name}-{width}x{height}-{scheme}.png")
            results.append({**measured, "width": width, "scheme": scheme, "mobile": mobile, "shot": shot})
    return results


def check(results: list[dict[str, Any]], line_length: bool = True) -> None:
    for r in results:
        where = f"{r['width']}px {r['scheme']}"
        assert r["scrollWidth"] <= r["innerWidth"], f"horizontal overflow at {where}: {r}"
        assert r["fontSize"] >= 16, f"body text below 16px at {where}"
        assert r["visible"] and r["contentText"] > 200, f"article text not visible at {where}"
        assert r["title"], f"no title at {where}"
        if r["scheme"] == "dark":
            assert r["luminance"] < 0.2, f"dark scheme not dark at {where}"
        else:
            assert r["luminance"] > 0.8, f"light scheme not light at {where}"
        if line_length and not r["mobile"] and r["charsPerLine"] is not None:
            assert 55 <= r["charsPerLine"] <= 78, f"line length {r['charsPerLine']:.0f} chars at {where}"
        assert r["shot"].stat().st_size > 1000


@pytest.mark.parametrize(
    ("name", "route", "line_length"),
    [
        ("wikipedia", "/rd/wikipedia", True),  # long article, wide tables and figures
        ("keep-tabular-data", "/rd/keep-tabular-data", True),  # a wide data table
        ("rtl-1", "/rd/rtl-1", False),  # right to left (Arabic letters are narrower: no chars check)
        ("mozilla-1", "/rd/mozilla-1", True),
    ],
)
async def test_reader_view_fits_phone_and_desktop(
    chromium: Chromium, upstream: Upstream, name: str, route: str, line_length: bool
) -> None:
    upstream.require_datasets()
    async with serve(test_settings()) as server:
        results = await measure_page(chromium, server.read_url(upstream.url(route)), name)
    check(results, line_length)


async def test_scrapinghub_page_and_code_blocks(chromium: Chromium, upstream: Upstream) -> None:
    upstream.require_datasets()
    async with serve(test_settings()) as server:
        page_id = upstream.scrapinghub_ids()[0]
        check(await measure_page(chromium, server.read_url(upstream.url(f"/sh/{page_id}")), f"sh-{page_id}"))
        # Code blocks keep their lines and scroll inside their own box rather than widening the page.
        check(
            await measure_page(chromium, server.read_url(upstream.url("/rd/001")), "code-001"),
            line_length=False,
        )


async def test_sepia_large_lite_and_error_page(chromium: Chromium, upstream: Upstream) -> None:
    upstream.require_datasets()
    async with serve(test_settings()) as server:
        page = await chromium.new_page()
        await page.set_viewport(375, 812, True)
        await page.set_color_scheme("dark")  # an explicit theme wins over the system's
        await page.navigate(
            server.read_url(upstream.url("/rd/keep-images"), theme="sepia", size="xl", lite="1")
        )
        state = await page.evaluate(
            "({bg: getComputedStyle(document.body).backgroundColor,"
            " size: parseFloat(getComputedStyle(document.body).fontSize),"
            " images: document.querySelectorAll('.content img').length,"
            " folded: document.querySelectorAll('.content details.lite-image:not([open]) > img').length,"
            " loaded: [...document.querySelectorAll('.content img')].filter(i => i.naturalWidth).length,"
            " overflow: document.documentElement.scrollWidth - innerWidth})"
        )
        await page.screenshot(SCREENSHOTS / "keep-images-375x812-sepia-xl-lite.png")
        assert state["bg"] == "rgb(244, 236, 216)" and state["size"] >= 22
        # lite: every image behind a closed "Show image" tap, none of them fetched
        assert state["images"] == state["folded"] > 0 and state["loaded"] == 0 and state["overflow"] <= 0
        await page.navigate(server.read_url(upstream.url("/pdf")))
        error = await page.evaluate("document.querySelector('.error h1').innerText")
        await page.screenshot(SCREENSHOTS / "error-415-375x812.png")
        assert error == "This is not a web page"
