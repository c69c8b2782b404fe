"""Data saver in proxy mode: `Save-Data: on` makes the proxy's reader views lite and halves the
images' widths at `http://readerproxy/image`, as on `/read`; lite chosen as a stored preference
applies to the proxy's reader views too. An upstream page with a 2,000 px image (tests/web/test_images'
ImageSite) is read through the proxy as `news.test`, with aiohttp and with real Chromium at 375 and
1280 px (screenshots in artifacts/screenshots/)."""

from __future__ import annotations

import asyncio
import html
import io
import re
from collections.abc import AsyncIterator

import aiohttp
import pytest
from PIL import Image
from support.chromium import SCREENSHOTS
from support.proxy_browser import browser_through
from support.reader_server import serve_app
from test_images import ImageSite
from test_proxy import HTML_ACCEPT
from test_proxy_setup import setup_proxy

ARTICLE_IMAGE = re.compile(r'<img\b[^>]*\bsrc="(http://readerproxy/image\?[^"]+)"')
LITE_CHIP = re.compile(
    r'<a class="chip on"[^>]*aria-current="true">[^<]*<[^>]*>[^<]*</span>Hide \(Lite\)</a>'
)


@pytest.fixture
async def image_site() -> AsyncIterator[tuple[ImageSite, int]]:
    served = ImageSite()
    async with serve_app(served.app()) as base:
        yield served, int(base.rsplit(":", 1)[1])


async def reader_view(http: aiohttp.ClientSession, proxy_url: str, url: str, **headers: str) -> str:
    async with http.get(url, proxy=proxy_url, headers={"Accept": HTML_ACCEPT, **headers}) as r:
        assert r.status == 200 and r.headers["X-Readerproxy"] == "reader-view"
        return await r.text()


async def image_width(http: aiohttp.ClientSession, proxy_url: str, url: str, **headers: str) -> int:
    async with http.get(url, proxy=proxy_url, headers={"Accept": "image/webp,*/*", **headers}) as r:
        assert r.status == 200 and r.headers["Content-Type"] in ("image/webp", "image/jpeg")
        return Image.open(io.BytesIO(await r.read())).width


async def test_save_data_makes_proxied_reader_views_lite_and_images_half_as_wide(
    image_site: tuple[ImageSite, int], http: aiohttp.ClientSession
) -> None:
    served, port = image_site
    article = f"http://news.test:{port}/article"
    async with setup_proxy() as proxy:
        full = await reader_view(http, proxy.url, article)
        lite = await reader_view(http, proxy.url, article, **{"Save-Data": "on"})
        (image,) = ARTICLE_IMAGE.findall(full)
        image = html.unescape(image)
        normal_width = await image_width(http, proxy.url, image)
        saving_width = await image_width(http, proxy.url, image, **{"Save-Data": "on"})
    assert 'class="lite-image"' not in full and not LITE_CHIP.search(full)
    assert 'class="lite-image"' in lite and LITE_CHIP.search(lite)  # each image behind a tap
    assert "w=750&" in image and normal_width == 750  # the plain src: 750 px of the 2,000
    assert saving_width == normal_width // 2
    assert served.counts["big.jpg"] >= 1 and served.counts["small.png"] == 0  # the widest, resized


async def test_lite_chosen_as_a_preference_applies_to_proxied_reader_views(
    image_site: tuple[ImageSite, int], http: aiohttp.ClientSession
) -> None:
    _, port = image_site
    article = f"http://news.test:{port}/article"
    async with setup_proxy() as proxy:
        choose = f"http://readerproxy/view?url={article}&lite=1"
        async with http.get(choose, proxy=proxy.url, allow_redirects=False) as r:
            assert r.status == 303 and r.headers["Location"] == article
        lite = await reader_view(http, proxy.url, article)
        choose = f"http://readerproxy/view?url={article}&lite=0"
        async with http.get(choose, proxy=proxy.url, allow_redirects=False) as r:
            assert r.status == 303
        full = await reader_view(http, proxy.url, article)
    assert 'class="lite-image"' in lite and LITE_CHIP.search(lite)
    assert 'class="lite-image"' not in full


IMAGES = """
(() => [...document.querySelectorAll('.content img')].map(i => ({
  src: i.currentSrc, natural: i.naturalWidth, complete: i.complete,
})))()
"""
IMAGE_REQUESTS = (
    "performance.getEntriesByType('resource').filter(e => e.name.includes('/image?')).map(e => e.name)"
)


@pytest.mark.browser
@pytest.mark.parametrize("width", [375, 1280])
async def test_a_phone_with_data_saver_gets_lite_views_and_half_width_images(
    image_site: tuple[ImageSite, int], width: int
) -> None:
    """Chromium sending `Save-Data: on` on every request (as a browser's data saver does): the
    reader view is lite (nothing fetched until the tap), and the image the tap shows is half the
    width the same screen gets without data saver."""
    _, port = image_site
    article = f"http://news.test:{port}/article"
    widths: dict[bool, int] = {}
    async with setup_proxy() as proxy, browser_through(proxy) as (_, page):
        await page.send("Network.enable")
        await page.send("Network.setCacheDisabled", {"cacheDisabled": True})  # each view fetches its own
        await page.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": 812, "deviceScaleFactor": 2, "mobile": width < 800},
        )
        for save_data in (True, False):
            await page.send(
                "Network.setExtraHTTPHeaders", {"headers": {"Save-Data": "on"} if save_data else {}}
            )
            await page.navigate(article)
            folded = await page.evaluate("document.querySelectorAll('details.lite-image').length")
            assert folded == (1 if save_data else 0)
            if save_data:
                assert await page.evaluate(IMAGE_REQUESTS) == []  # nothing fetched before the tap
                await page.evaluate(
                    "document.querySelector('details.lite-image').scrollIntoView({block: 'center'})"
                )
                await page.screenshot(SCREENSHOTS / f"proxy-save-data-{width}-closed.png")
                await page.evaluate("document.querySelector('details.lite-image summary').click()")
            shown: list[dict[str, object]] = []
            async with asyncio.timeout(30):
                while not (shown and all(image["complete"] and image["natural"] for image in shown)):
                    await asyncio.sleep(0.05)
                    shown = await page.evaluate(IMAGES)
            (image,) = shown
            assert str(image["src"]).startswith("http://readerproxy/image?w=")
            widths[save_data] = int(str(image["natural"]))
            if save_data:
                await page.evaluate(
                    "document.querySelector('details.lite-image').scrollIntoView({block: 'center'})"
                )
                await page.screenshot(SCREENSHOTS / f"proxy-save-data-{width}-open.png")
    assert widths[True] == widths[False] // 2, widths
