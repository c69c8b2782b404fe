"""Images through readerproxy in a real headless Chromium: a 2,000 px upstream image reaches a
375 px phone (2× screen) at no more than 750 px wide, and a 1280 px desktop at the column's width,
always from readerproxy's own /image route (the page never asks the original site for anything).
Screenshots go to artifacts/screenshots/."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from support.chromium import SCREENSHOTS, Chromium, Page
from support.reader_server import serve, serve_app, test_settings
from test_images import ImageSite

pytestmark = pytest.mark.browser

IMAGES = """
(() => [...document.querySelectorAll('.content img')].map(i => ({
  src: i.currentSrc, natural: i.naturalWidth, shown: i.getBoundingClientRect().width,
  complete: i.complete,
})))()
"""
RESOURCES = "performance.getEntriesByType('resource').map(e => ({name: e.name, bytes: e.encodedBodySize}))"


@pytest.fixture
async def site() -> AsyncIterator[tuple[ImageSite, str]]:
    served = ImageSite()
    async with serve_app(served.app()) as base:
        yield served, base


async def open_at(page: Page, url: str, width: int, scale: int) -> list[dict[str, object]]:
    """The page at a viewport width and device pixel ratio, once its images have loaded."""
    await page.send(
        "Emulation.setDeviceMetricsOverride",
        {
            "width": width,
            "height": 812 if width < 800 else 800,
            "deviceScaleFactor": scale,
            "mobile": width < 800,
        },
    )
    await page.navigate(url)
    for _ in range(100):
        shown: list[dict[str, object]] = await page.evaluate(IMAGES)
        if shown and all(image["complete"] and image["natural"] for image in shown):
            return shown
        await asyncio.sleep(0.05)
    raise AssertionError(f"images did not load: {shown}")


@pytest.mark.parametrize(("width", "scale", "widest"), [(375, 2, 750), (375, 1, 375), (1280, 1, 750)])
async def test_a_2000px_image_reaches_the_screen_resized_through_readerproxy(
    chromium: Chromium, site: tuple[ImageSite, str], width: int, scale: int, widest: int
) -> None:
    served, base = site
    async with serve(test_settings(rate_limit=0)) as server:
        page = await chromium.new_page()
        shown = await open_at(page, server.read_url(f"{base}/article"), width, scale)
        await page.evaluate("document.querySelector('figure').scrollIntoView({block: 'center'})")
        await asyncio.sleep(0.2)
        await page.screenshot(SCREENSHOTS / f"images-{width}-{scale}x.png")
        resources = await page.evaluate(RESOURCES)
        overflow = await page.evaluate("document.documentElement.scrollWidth - innerWidth")
    (image,) = shown
    assert str(image["src"]).startswith(server.base + "/image?w=")
    assert 0 < int(str(image["natural"])) <= widest, image  # the 2,000 px original, resized
    assert float(str(image["shown"])) <= width  # drawn within the column
    assert overflow <= 0
    assert not [r for r in resources if not r["name"].startswith(server.base)]  # nothing from the site
    assert served.counts["big.jpg"] == 1  # fetched once, by readerproxy
    assert served.counts["small.png"] == 0  # the widest candidate is the one resized


@pytest.mark.parametrize("width", [375, 1280])
async def test_lite_mode_fetches_an_image_only_when_its_tap_asks(
    chromium: Chromium, site: tuple[ImageSite, str], width: int
) -> None:
    """Lite mode: the image is behind a closed "Show image" tap; nothing is fetched until the tap,
    then it arrives through readerproxy's route, resized."""
    served, base = site
    async with serve(test_settings(rate_limit=0)) as server:
        page = await chromium.new_page()
        await page.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": 812, "deviceScaleFactor": 2, "mobile": width < 800},
        )
        await page.navigate(server.read_url(f"{base}/article", lite="1"))
        await asyncio.sleep(0.5)
        before = await page.evaluate(RESOURCES)
        assert not [r for r in before if "/image?" in r["name"]], before  # nothing fetched yet
        label = await page.evaluate("document.querySelector('details.lite-image summary').textContent")
        await page.evaluate("document.querySelector('details.lite-image').scrollIntoView({block: 'center'})")
        await page.screenshot(SCREENSHOTS / f"images-lite-{width}-closed.png")
        await page.evaluate("document.querySelector('details.lite-image summary').click()")
        shown: list[dict[str, object]] = []
        for _ in range(100):
            shown = await page.evaluate(IMAGES)
            if shown and all(image["complete"] and image["natural"] for image in shown):
                break
            await asyncio.sleep(0.05)
        await page.evaluate("document.querySelector('details.lite-image').scrollIntoView({block: 'center'})")
        await page.screenshot(SCREENSHOTS / f"images-lite-{width}-open.png")
    assert str(label).startswith("Show image")
    (image,) = shown
    assert str(image["src"]).startswith(server.base + "/image?w=") and 0 < int(str(image["natural"])) <= 750
    assert served.counts["big.jpg"] == 1
