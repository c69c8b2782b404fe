"""Pages passed through the proxy, in real Chromium, untouched: a product page's bytes as the
upstream sent them, with no reader-view header (its head names a schema.org Product, so it streams
through from its first bytes); a page whose tracker host is on the block list renders as it is, the
tracker's request refused. The pages come from the upstream test site with wcxb-dev pages
(tests/proxy/test_proxy.py's DatasetSite) as `news.test`. Screenshots in artifacts/screenshots/."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

import pytest
from support.chromium import SCREENSHOTS
from support.proxy_browser import browser_through, text_of
from test_proxy import PRODUCT_PAGE, DatasetSite, dataset_site, running_proxy, wcxb_page

pytestmark = pytest.mark.browser

__all__ = ["dataset_site"]  # the fixture, used here by name


@pytest.mark.parametrize("width", [375, 1280])
async def test_a_product_page_reaches_the_browser_byte_for_byte(
    dataset_site: DatasetSite, width: int
) -> None:
    page_bytes = wcxb_page(PRODUCT_PAGE)
    url = f"http://news.test:{dataset_site.port}/wcxb/{PRODUCT_PAGE}"
    async with running_proxy() as proxy, browser_through(proxy) as (browser, page):
        await page.send("Network.enable", {"maxTotalBufferSize": 64 * 1024 * 1024})
        await page.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": 812, "deviceScaleFactor": 1, "mobile": width < 800},
        )
        responses = browser.subscribe("Network.responseReceived", page.session)
        await page.navigate(url)
        document: dict[str, Any] = {}
        while not document:
            event = await responses.get()
            if event["type"] == "Document" and event["response"]["url"] == url:
                document = event
        body = await page.send("Network.getResponseBody", {"requestId": document["requestId"]})
        await page.screenshot(SCREENSHOTS / f"proxy-product-passthrough-{width}.png")
    received = base64.b64decode(body["body"]) if body["base64Encoded"] else body["body"].encode("utf-8")
    headers = {key.lower(): value for key, value in document["response"]["headers"].items()}
    assert "x-readerproxy" not in headers and "1.1 readerproxy" in headers["via"]
    assert hashlib.sha256(received).hexdigest() == hashlib.sha256(page_bytes).hexdigest()
    assert proxy.metric("reader_view") == 0


@pytest.mark.parametrize("width", [375, 1280])
async def test_a_page_renders_untouched_with_its_tracker_blocked(
    dataset_site: DatasetSite, width: int
) -> None:
    port = dataset_site.port
    before = dataset_site.count("/binary")
    async with running_proxy(block_hosts="pixel.test") as proxy, browser_through(proxy) as (_, page):
        await page.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": 812, "deviceScaleFactor": 1, "mobile": width < 800},
        )
        await page.navigate(f"http://news.test:{port}/tracked?tracker=pixel.test")
        title = await text_of(page)
        own = await page.evaluate("document.getElementById('own').naturalWidth")
        pixel = await page.evaluate("document.getElementById('pixel').naturalWidth")
        await page.navigate(f"http://pixel.test:{port}/binary")  # what a person sees who goes there
        refusal = await text_of(page)
        await page.screenshot(SCREENSHOTS / f"proxy-blocked-{width}.png")
        blocked = proxy.metric("blocked")
    assert "A page with a tracker" in title and own == 1 and pixel == 0
    assert refusal.strip() == "Blocked by readerproxy: pixel.test is on the block list (pixel.test)."
    assert dataset_site.count("/binary") == before + 1  # only the page's own image reached the site
    assert blocked >= 2  # the pixel and the navigation (and Chromium's favicon request there)
