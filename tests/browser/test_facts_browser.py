"""The product and recipe cards in a real headless Chromium at 375 and 1280 px.

A real shop's product page (WCXB dev, with Product, Offer and AggregateRating JSON-LD) and a real
recipe page (ScrapingHub, with Recipe JSON-LD) through `/read`: the price and the rating are shown
on the product, ingredients and steps come before the story on the recipe, nothing scrolls sideways.
Screenshots go to artifacts/screenshots/facts-*.png.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from aiohttp import web
from support.chromium import SCREENSHOTS, Chromium
from support.reader_server import serve, serve_app, test_settings
from support.upstream import DATASETS, Upstream

pytestmark = pytest.mark.browser

WCXB = DATASETS / "wcxb-dev" / "html"
#: iFixit's Pro Tech Toolkit: price, rating with its review count, specifications.
PRODUCT_PAGE = "0621"
#: A jam recipe with its story around it.
RECIPE_PAGE = "4219d096902dad9fd9d57e881e7928ca66bdf5334c2bc7dfddaa264887777a7a"

STATE = """
(() => {
  const card = document.querySelector('.facts');
  const text = s => (document.querySelector(s) || {}).innerText || '';
  const box = card ? card.getBoundingClientRect() : null;
  const content = document.querySelector('.content');
  return {
    over: document.documentElement.scrollWidth - innerWidth,
    price: text('.facts .price'), rating: text('.facts .rating'),
    ingredients: document.querySelectorAll('.ingredients li').length,
    steps: document.querySelectorAll('.steps li').length,
    cardFirst: !!(card && content && (card.compareDocumentPosition(content) & Node.DOCUMENT_POSITION_FOLLOWING)),
    width: box ? box.width : 0,
  };
})()
"""


def _wcxb_app(page: str) -> web.Application:
    async def handler(request: web.Request) -> web.Response:
        body = gzip.decompress(Path(WCXB / f"{page}.html.gz").read_bytes())
        return web.Response(body=body, headers={"Content-Type": "text/html; charset=utf-8"})

    app = web.Application()
    app.router.add_get("/product", handler)
    return app


async def test_product_and_recipe_cards_at_375_and_1280(chromium: Chromium, upstream: Upstream) -> None:
    upstream.require_datasets()
    if not (WCXB / f"{PRODUCT_PAGE}.html.gz").is_file():
        pytest.skip("wcxb-dev is missing")
    async with serve(test_settings()) as server, serve_app(_wcxb_app(PRODUCT_PAGE)) as shop:
        page = await chromium.new_page()
        for width in (375, 1280):
            await page.set_viewport(width, 812 if width < 800 else 800, width < 800)
            await page.navigate(server.read_url(f"{shop}/product"))
            state = await page.evaluate(STATE)
            assert state["price"] == "$74.95", state
            assert "4.9 out of 5" in state["rating"] and "2,695 reviews" in state["rating"], state
            assert state["cardFirst"] and state["over"] <= 0, state
            await page.screenshot(SCREENSHOTS / f"facts-product-{width}.png")

            await page.navigate(server.read_url(upstream.url(f"/sh/{RECIPE_PAGE}")))
            state = await page.evaluate(STATE)
            assert state["ingredients"] == 8 and state["steps"] == 6, state
            assert state["cardFirst"] and state["over"] <= 0, state
            await page.screenshot(SCREENSHOTS / f"facts-recipe-{width}.png")
