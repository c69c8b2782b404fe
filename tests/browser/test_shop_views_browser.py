"""Shop pages in a real headless Chromium at 375 and 1280 px: the view is chosen on
evidence, page chrome never becomes a listing, action links are never links, and a listing shows
the prose the extraction found around its items.

Two pages written for these tests on the markup of real shops (tests/fixtures, served by the
tests' upstream site): a product page with a shop theme's chrome (an account bar, "Add to cart"
as a form and as a `/cart/add/` link, "Add to wishlist", "Start comparison", a share link, a
compare box and "This product has been added to your cart"), and a category page whose grid of
eight drippers sits between an introduction and a buying guide. Screenshots go to
artifacts/screenshots/shop-*.png for a person to look at.
"""

from __future__ import annotations

import pytest
from support.chromium import SCREENSHOTS, Chromium, show_at
from support.reader_server import serve, test_settings
from support.upstream import Upstream

pytestmark = pytest.mark.browser

SHOWN = """
(() => {
  const article = document.querySelector('article.reader');
  const box = e => { const r = e.getBoundingClientRect(); return {top: r.top + scrollY, height: r.height}; };
  const text = s => [...document.querySelectorAll(s)].map(e => e.innerText).join('\\n');
  const links = [...article.querySelectorAll('a[href]')];
  const targets = links.map(a => { try { return decodeURIComponent(a.getAttribute('href')); } catch (e) { return a.getAttribute('href'); } });
  const items = [...document.querySelectorAll('.listing > .item')];
  const intro = document.querySelector('.view-intro'), outro = document.querySelector('.view-outro');
  const listing = document.querySelector('.listing');
  return {
    over: document.documentElement.scrollWidth - innerWidth,
    listing: !!listing,
    items: items.length,
    itemHeights: items.map(li => li.getBoundingClientRect().height),
    titleLinks: items.map(li => (li.querySelector('.item-title a') || {getAttribute: () => ''}).getAttribute('href')),
    card: !!document.querySelector('.facts.product-card'),
    price: text('.facts .price'),
    body: article.innerText,
    actionLinks: targets.filter(t => /\\/cart\\/add\\/|\\/compare\\/|wishlist|sharer|\\/account\\//i.test(t)),
    intro: intro ? {text: intro.innerText, ...box(intro)} : null,
    outro: outro ? {text: outro.innerText, ...box(outro)} : null,
    listBox: listing ? box(listing) : null,
    smallLinks: links.filter(a => a.closest('.article-foot, .kind-note, .item-title'))
      .map(a => a.closest('.item-title') ? a.closest('.item').getBoundingClientRect().height : a.getBoundingClientRect().height)
      .filter(h => h < 44),
  };
})()
"""


@pytest.mark.parametrize("width", [375, 1280])
async def test_a_product_page_with_shop_chrome_is_no_listing(
    chromium: Chromium, upstream: Upstream, width: int
) -> None:
    async with serve(test_settings(rate_limit=0)) as server:
        url = server.read_url(upstream.url("/fixture/shop_product_chrome.html"))
        shown = await show_at(
            await chromium.new_page(), url, width, SHOWN, SCREENSHOTS / f"shop-product-chrome-{width}.png"
        )
    assert not shown["listing"] and shown["items"] == 0, "the shop's chrome became a listing"
    assert shown["card"] and shown["price"] == "€29.95", shown["price"]
    # the description is all there, and no chrome is
    for words in (
        "angled at sixty degrees",
        "Spiral ribs on the inside",
        "Use with Hario V60 02 paper filters",
    ):
        assert words in shown["body"], words
    for chrome in ("added to your cart", "Start comparison", "My account"):
        assert chrome not in shown["body"], chrome
    assert shown["actionLinks"] == [], f"action links on the page: {shown['actionLinks']}"
    assert shown["over"] <= 0, f"at {width}px the page scrolls sideways by {shown['over']} px"
    assert shown["smallLinks"] == [], f"links under 44 px: {shown['smallLinks']}"


@pytest.mark.parametrize("width", [375, 1280])
async def test_a_category_shows_its_buying_guide_beside_its_items(
    chromium: Chromium, upstream: Upstream, width: int
) -> None:
    async with serve(test_settings(rate_limit=0)) as server:
        page = await chromium.new_page()
        url = server.read_url(upstream.url("/fixture/shop_category_guide.html"))
        shown = await show_at(page, url, width, SHOWN, SCREENSHOTS / f"shop-category-guide-{width}.png")
        # the guide, scrolled to: on screen, below the last item
        await page.evaluate("document.querySelector('.view-outro h2').scrollIntoView({block: 'center'})")
        on_screen = await page.evaluate(
            "(() => { const r = document.querySelector('.view-outro h2').getBoundingClientRect();"
            " return r.top >= 0 && r.bottom <= innerHeight && r.height > 0; })()"
        )
        await page.screenshot(SCREENSHOTS / f"shop-category-guide-{width}-guide.png")
    assert shown["listing"] and shown["items"] == 8, shown["items"]
    assert all(href.startswith("/read?url=") for href in shown["titleLinks"]), shown["titleLinks"]
    assert min(shown["itemHeights"]) >= 44, shown["itemHeights"]
    intro, outro, listing = shown["intro"], shown["outro"], shown["listBox"]
    assert intro and "Every dripper in this collection has been brewed" in intro["text"]
    assert outro and "Buying guide: which dripper suits you?" in outro["text"]
    for words in ("gooseneck kettle", "Porcelain keeps its heat", "thick bonded papers of the Chemex"):
        assert words in outro["text"], words
    assert intro["top"] + intro["height"] <= listing["top"] + 1
    assert listing["top"] + listing["height"] <= outro["top"] + 1
    assert on_screen, "the buying guide's heading is not on screen when scrolled to"
    assert shown["actionLinks"] == [], f"action links on the page: {shown['actionLinks']}"
    assert "Add to cart" not in shown["body"]
    assert shown["over"] <= 0, f"at {width}px the page scrolls sideways by {shown['over']} px"
    assert shown["smallLinks"] == [], f"links under 44 px: {shown['smallLinks']}"
