"""A page whose text sits in closed accordion panels, read in a real headless Chromium at 375 and
1280 px: the reader view shows every panel open, in the page's order, without sideways scrolling.

The page is wcxb-dev's solar installation guide (energysage.com), whose steps ("Week 1", "Weeks
3-4") are an accordion of `display:none` panels that buttons open by `aria-controls`
(`clean._collapsed_panels`). Screenshots go to artifacts/screenshots/collapsed-*.png.
"""

from __future__ import annotations

import pytest
from support.chromium import SCREENSHOTS, Chromium
from support.reader_server import serve, test_settings

pytestmark = pytest.mark.browser

#: Sentences of three closed panels, in the page's order, and a line the page shows open.
PANELS = (
    "Gather 12 months of electric bills",
    "An engineer visit differs from a general site visit",
    "Your solar installer preps your roof",
)


@pytest.mark.parametrize("width", [375, 1280])
async def test_closed_accordion_panels_read_open(chromium: Chromium, wcxb_base: str, width: int) -> None:
    async with serve(test_settings(rate_limit=0)) as server:
        page = await chromium.new_page()
        await page.set_viewport(width, 812 if width < 800 else 800, width < 800)
        await page.navigate(server.read_url(f"{wcxb_base}/wcxb/4193"))
        shown = await page.evaluate(
            "({text: document.querySelector('.content')?.innerText || '',"
            " over: document.documentElement.scrollWidth - innerWidth,"
            " h1: document.querySelectorAll('h1').length})"
        )
        text = " ".join(shown["text"].split())
        places = [text.find(sentence) for sentence in PANELS]
        assert all(place >= 0 for place in places), list(zip(PANELS, places, strict=True))
        assert places == sorted(places)  # in the page's order
        assert shown["over"] <= 0 and shown["h1"] == 1
        await page.evaluate(
            "document.evaluate(\"//*[contains(text(), 'Gather 12 months')]\", document, null, 9, null)"
            ".singleNodeValue?.scrollIntoView({block: 'center'})"
        )
        path = await page.screenshot(SCREENSHOTS / f"collapsed-energysage-{width}.png")
        assert path.stat().st_size > 1000
