"""The listing view in a real headless Chromium at 375 and 1280 px, on a real listing page (an
engineering blog's index) and a real collection page (a shop's category grid) of wcxb-dev.

Every item shows its title as a link through the reader over the whole row (a tap target of at
least 44 px), its picture beside it through readerproxy's /image route; nothing scrolls sideways.
In Lite no picture is fetched until its own tap asks. Screenshots go to
artifacts/screenshots/listing-*.png for a person to look at.
"""

from __future__ import annotations

from typing import Any

import pytest
from support.chromium import SCREENSHOTS, Chromium, Page, wait_for
from support.reader_server import serve, test_settings

pytestmark = pytest.mark.browser

#: (wcxb-dev page, kind, fewest items shown): pages whose pictures are on the page's own site.
PAGES = (
    ("2901", "listing", 10),
    ("2951", "collection", 25),
)

SHOWN = """
(() => {
  // The list scrolled to just under the top bar: since 2026-12-07 a listing shows the extracted
  // content above its items (a blog's featured post), so the first item may start below the fold.
  const list = document.querySelector('.listing');
  if (list) window.scrollTo(0, list.getBoundingClientRect().top + scrollY - 60);
  const items = [...document.querySelectorAll('.listing > .item')];
  const visible = items.filter(li => li.getBoundingClientRect().top >= 44 && li.getBoundingClientRect().bottom < innerHeight);
  return {
    items: items.length,
    h1: document.querySelectorAll('h1').length,
    titles: items.map(li => (li.querySelector('.item-title a') || {}).textContent || ''),
    hrefs: items.map(li => (li.querySelector('.item-title a') || {}).getAttribute('href') || ''),
    // A tap anywhere on a row (here: its middle, and beside its title) lands on the title's link.
    tapped: visible.map(li => {
      const r = li.getBoundingClientRect();
      const hit = document.elementFromPoint(r.left + r.width * 0.5, r.top + r.height * 0.5);
      return !!(hit && hit.closest('.item-title a') && hit.closest('.item') === li);
    }),
    heights: visible.map(li => li.getBoundingClientRect().height),
    images: visible.filter(li => li.querySelector('.item-image img')).map(li => {
      const img = li.querySelector('.item-image img'), r = img.getBoundingClientRect();
      const text = li.querySelector('.item-text').getBoundingClientRect();
      return {src: img.currentSrc, complete: img.complete, natural: img.naturalWidth,
              width: r.width, beside: r.left >= text.right - 1};
    }),
    folded: document.querySelectorAll('.listing details.lite-image').length,
    over: document.documentElement.scrollWidth - innerWidth,
  };
})()
"""
RESOURCES = "performance.getEntriesByType('resource').map(e => e.name)"


async def show(page: Page, url: str, width: int) -> dict[str, Any]:
    await page.set_viewport(width, 812 if width < 800 else 800, width < 800)
    await page.navigate(url)
    return dict(await page.evaluate(SHOWN))


IMAGES_LOADED = f"""
(() => {{ const s = {SHOWN.strip()}; return s.images.length && s.images.every(i => i.complete && i.natural > 0); }})()
"""


@pytest.mark.parametrize("width", [375, 1280])
async def test_listing_and_collection_items_at_each_width(
    chromium: Chromium, wcxb_base: str, width: int
) -> None:
    problems: list[str] = []
    async with serve(test_settings(rate_limit=0)) as server:
        page = await chromium.new_page()
        for page_id, kind, fewest in PAGES:
            where = f"{kind} {page_id} at {width}px"
            shown = await show(page, server.read_url(f"{wcxb_base}/wcxb/{page_id}"), width)
            if shown["items"] < fewest:
                problems.append(f"{where}: {shown['items']} items")
                continue
            if shown["h1"] != 1 or shown["over"] > 0:
                problems.append(f"{where}: {shown['h1']} h1, overflows by {shown['over']}px")
            if not all(title.strip() for title in shown["titles"]):
                problems.append(f"{where}: an item without a title")
            if not all(href.startswith("/read?url=") for href in shown["hrefs"]):
                problems.append(f"{where}: a title does not link through the reader: {shown['hrefs'][:3]}")
            if not all(shown["tapped"]) or min(shown["heights"]) < 44:
                problems.append(f"{where}: rows {shown['heights']} not all one tap target {shown['tapped']}")
            if not await wait_for(page, IMAGES_LOADED, seconds=10.0):
                problems.append(f"{where}: the pictures in view did not load")
            shown = dict(await page.evaluate(SHOWN))
            for image in shown["images"]:
                if not image["src"].startswith(server.base + "/image?w="):
                    problems.append(f"{where}: a picture not through the image route: {image['src']}")
                if not image["beside"] or not 90 <= image["width"] <= 200:
                    problems.append(
                        f"{where}: a picture {image['width']}px wide, beside the text: {image['beside']}"
                    )
            path = await page.screenshot(SCREENSHOTS / f"listing-{kind}-{page_id}-{width}.png")
            assert path.stat().st_size > 1000
    assert not problems, problems


@pytest.mark.parametrize("width", [375, 1280])
async def test_lite_listing_fetches_no_picture_until_a_tap(
    chromium: Chromium, wcxb_base: str, width: int
) -> None:
    page_id, _, fewest = PAGES[1]
    async with serve(test_settings(rate_limit=0)) as server:
        page = await chromium.new_page()
        shown = await show(
            page, server.read_url(f"{wcxb_base}/wcxb/{page_id}", lite="1", theme="dark"), width
        )
        assert shown["items"] >= fewest and shown["over"] <= 0
        # every picture behind its tap, none loaded
        assert shown["folded"] >= fewest and not [image for image in shown["images"] if image["src"]]
        assert not [name for name in await page.evaluate(RESOURCES) if "/image?" in name]
        await page.screenshot(SCREENSHOTS / f"listing-lite-{page_id}-{width}.png")
        # The tap opens the picture (above the row's link), and only then is it fetched, resized.
        await page.evaluate("document.querySelector('.listing details.lite-image summary').click()")
        assert await wait_for(
            page, "document.querySelector('.listing details.lite-image').open", seconds=10.0
        )
        loaded = await wait_for(
            page,
            "(() => { const i = document.querySelector('.listing details.lite-image[open] img');"
            " return i && i.complete && i.naturalWidth > 0 && i.currentSrc; })()",
            seconds=10.0,
        )
        assert str(loaded).startswith(server.base + "/image?w=")
        await page.screenshot(SCREENSHOTS / f"listing-lite-{page_id}-{width}-open.png")
