"""A page whose content arrives as Marko's streamed `<await>` fragments, read in a real headless
Chromium at 375 and 1280 px: the reader view shows the items a browser's inline script would have
moved into place, without sideways scrolling.

The page is wcxb-dev's eBay category page (Collectibles & Art): the server sends a shell of
placeholders and the listing in 43 hidden divs at the end of the body
(`clean._place_async_fragments`); before 2026-12-02 the reader showed eBay's menus only.
Screenshots go to artifacts/screenshots/fragments-*.png.
"""

from __future__ import annotations

import pytest
from support.chromium import SCREENSHOTS, Chromium
from support.reader_server import serve, test_settings

pytestmark = pytest.mark.browser

#: Item titles of the category's grid, first and last, as the page's fragments hold them.
ITEMS = ("GABBIE CARTER #50 - 8.5x11 Art Print", "Edgy and Stylish 4 x 6 inch Unreal Print")


@pytest.mark.parametrize("width", [375, 1280])
async def test_streamed_fragments_read_in_place(chromium: Chromium, wcxb_base: str, width: int) -> None:
    async with serve(test_settings(rate_limit=0)) as server:
        page = await chromium.new_page()
        await page.set_viewport(width, 812 if width < 800 else 800, width < 800)
        await page.navigate(server.read_url(f"{wcxb_base}/wcxb/0658"))
        shown = await page.evaluate(
            "({text: document.body.innerText, h1: document.querySelector('h1')?.innerText || '',"
            " over: document.documentElement.scrollWidth - innerWidth})"
        )
        text = " ".join(shown["text"].split())
        assert shown["h1"] == "Collectibles & Art" and "60 items" in text
        places = [text.find(title) for title in ITEMS]
        assert all(place >= 0 for place in places) and places == sorted(places), places
        assert "Purchase History" not in text  # eBay's account menu, all the reader had before
        assert shown["over"] <= 0
        await page.screenshot(SCREENSHOTS / f"fragments-ebay-{width}.png")
