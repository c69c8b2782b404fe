"""Tables and lists keep their structure in the reader view, in a real headless Chromium at 375
and 1280 px, on two pages written for the test and served by the tests' upstream site:

- a pricing page (tests/fixtures/pricing_table.html) whose table has a two-row header (its second
  row emptied), an empty row between the plans, and a second copy of itself and its heading for
  narrow screens, under a print-only header: every price is on screen once, in the price column
  of its plan's row (`output.whole_table_tokens`, `output.repeated_tables`), and the print header
  is not (`clean._print_only`);
- a wiki page (tests/fixtures/wiki_contents.html) with a table of contents and the site's name as
  its og:title: no bullet without text (`output.drop_empty_items`, `output.contents_list_tokens`)
  and the page's `<h1>` as the reader's title (`metadata.heading_over_site_name`).

Screenshots go to artifacts/screenshots/structure-*.png for a person to look at.
"""

from __future__ import annotations

import pytest
from support.chromium import SCREENSHOTS, Chromium, show_at
from support.reader_server import serve, test_settings
from support.upstream import Upstream

pytestmark = pytest.mark.browser

#: Each plan and its price, as the page writes them.
PRICES = {
    "Day Pass": "$30/Day",
    "Monthly Hot Desk": "$250/Month",
    "Dedicated Desk": "$400/Month",
    "Meeting Room": "$200/Hour",
}

TABLES = """
(() => {
  const content = document.querySelector('.content');
  const tables = [...content.querySelectorAll('table')];
  const grid = t => [...t.querySelectorAll('tr')].map(
    tr => [...tr.children].map(cell => ({text: cell.innerText.trim(), left: cell.getBoundingClientRect().left,
                                        colspan: cell.colSpan, rowspan: cell.rowSpan})));
  const text = content.innerText;
  const box = tables.length ? tables[0].getBoundingClientRect() : null;
  if (tables.length) scrollTo(0, box.top + scrollY - 80);
  return {
    tables: tables.map(grid),
    text: text,
    headings: [...content.querySelectorAll('h2, h3')].map(h => h.innerText.trim()),
    title: (document.querySelector('.article-head h1') || {}).innerText || '',
    visible: box !== null && box.height > 0,
    over: document.documentElement.scrollWidth - innerWidth,
  };
})()
"""

LISTS = """
(() => {
  const content = document.querySelector('.content');
  const items = [...content.querySelectorAll('li')];
  const links = [...content.querySelectorAll('li a[href^="#"]')].map(a => {
    const target = document.getElementById(decodeURIComponent(a.getAttribute('href').slice(1)));
    return {text: a.innerText.trim(), target: target ? target.innerText.trim() : null};
  });
  const toc = [...content.querySelectorAll('h2')].find(h => h.innerText.trim() === 'Contents');
  if (toc) scrollTo(0, toc.getBoundingClientRect().top + scrollY - 80);
  return {
    items: items.map(li => li.innerText.trim()),
    empty: items.filter(li => !li.innerText.trim() && !li.querySelector('img')).length,
    links: links,
    title: (document.querySelector('.article-head h1') || {}).innerText || '',
    text: content.innerText,
    over: document.documentElement.scrollWidth - innerWidth,
  };
})()
"""


@pytest.mark.parametrize("width", [375, 1280])
async def test_a_pricing_table_shows_every_price_in_its_column_once(
    chromium: Chromium, upstream: Upstream, width: int
) -> None:
    async with serve(test_settings(rate_limit=0)) as server:
        url = server.read_url(upstream.url("/fixture/pricing_table.html"))
        shown = await show_at(
            await chromium.new_page(), url, width, TABLES, SCREENSHOTS / f"structure-pricing-{width}.png"
        )
    assert shown["visible"], f"at {width}px: no table on screen: {shown['text'][:300]!r}"
    assert len(shown["tables"]) == 1, f"at {width}px: {len(shown['tables'])} tables"
    assert shown["headings"].count("Plans and rates") == 1, f"at {width}px: {shown['headings']}"
    rows = shown["tables"][0]
    # the two-row header, its second row emptied, and the empty row between the plans
    assert [cell["text"] for cell in rows[0]] == ["Plan", "Rate"], rows[0]
    assert rows[0][0]["rowspan"] == 2 and len(rows[1]) == 2, rows[:2]
    assert any(all(not cell["text"] for cell in row) and len(row) == 3 for row in rows[2:]), rows
    body = [row for row in rows[2:] if row and row[0]["text"]]
    assert [row[0]["text"] for row in body] == list(PRICES), body
    # the "Rate" column starts where each price stands: no row shifted under the header
    rate_left = rows[0][1]["left"]
    for row in body:
        assert row[1]["text"] == PRICES[row[0]["text"]], row
        assert abs(row[1]["left"] - rate_left) < 1, f"at {width}px: {row[0]['text']} is out of its column"
    for price in PRICES.values():
        assert shown["text"].count(price) == 1, (
            f"at {width}px: {price} shown {shown['text'].count(price)} times"
        )
    assert "Thank you for printing" not in shown["text"] and "12 Quay Street" not in shown["text"]
    assert shown["over"] <= 0, f"at {width}px: the page scrolls sideways by {shown['over']} px"


@pytest.mark.parametrize("width", [375, 1280])
async def test_a_wiki_table_of_contents_shows_no_empty_bullets(
    chromium: Chromium, upstream: Upstream, width: int
) -> None:
    async with serve(test_settings(rate_limit=0)) as server:
        url = server.read_url(upstream.url("/fixture/wiki_contents.html"))
        shown = await show_at(
            await chromium.new_page(), url, width, LISTS, SCREENSHOTS / f"structure-wiki-{width}.png"
        )
    assert shown["empty"] == 0, f"at {width}px: {shown['empty']} empty bullets among {shown['items']}"
    assert shown["title"] == "Harbor lighthouse", f"at {width}px: title {shown['title']!r}"
    assert "Eleven keepers served at the light" in shown["text"]
    # a contents link the reader shows leads to its section
    for link in shown["links"]:
        assert link["target"] is not None and link["text"].endswith(link["target"]), link
    assert shown["over"] <= 0, f"at {width}px: the page scrolls sideways by {shown['over']} px"
