"""Data tables in the reader view, in a real headless Chromium at 375 and 1280 px: a comparison
table of wcxb-dev (taxslayerpro.com's products, a page the trees keep only in part) is shown whole,
its header row of product names and prices first (`learned.whole_tables`), each row with its empty
cells so that every check mark stays under its product (`output.kept_elements`), and nothing but
the table itself scrolls sideways. Screenshots go to artifacts/screenshots/table-*.png for a person to look at.
"""

from __future__ import annotations

import pytest
from support.chromium import SCREENSHOTS, Chromium, show_at
from support.reader_server import serve, test_settings

pytestmark = pytest.mark.browser

#: The comparison table's header cells and its last row, as the page writes them.
HEADER = ("WEB", "PREMIUM", "CLASSIC", "$1,595", "$1,695", "$1,395")
LAST_ROW = "Compatible with Mac OS"

SHOWN = """
(() => {
  const table = [...document.querySelectorAll('.content table')]
    .find(t => t.innerText.includes('Unlimited 1040 Program') && t.innerText.includes('$1,695'));
  if (!table) return {found: false, over: document.documentElement.scrollWidth - innerWidth};
  const rows = [...table.querySelectorAll('tr')].map(tr => tr.innerText.replace(/\\s+/g, ' ').trim());
  const cells = [...table.querySelectorAll('tr')].map(
    tr => [...tr.children].map(cell => cell.innerText.replace(/\\s+/g, ' ').trim()));
  const box = table.getBoundingClientRect();
  return {
    found: true,
    rows: rows,
    cells: cells,
    first: rows[0] || '',
    visible: box.height > 0 && getComputedStyle(table).visibility === 'visible',
    over: document.documentElement.scrollWidth - innerWidth,
  };
})()
"""


@pytest.mark.parametrize("width", [375, 1280])
async def test_a_comparison_table_kept_in_part_is_shown_whole(
    chromium: Chromium, wcxb_base: str, width: int
) -> None:
    async with serve(test_settings(rate_limit=0)) as server:
        page = await chromium.new_page()
        url = server.read_url(f"{wcxb_base}/wcxb/4876")
        shown = await show_at(page, url, width, SHOWN, SCREENSHOTS / f"table-comparison-4876-{width}.png")
        # the table's top just under the reader's bar, for the screenshot
        table = await page.evaluate(
            "(() => { const t = [...document.querySelectorAll('.content table')]"
            ".find(t => t.innerText.includes('$1,695')); if (t) scrollTo(0, t.getBoundingClientRect().top"
            " + scrollY - 60); return !!t; })()"
        )
        assert table, "the comparison table is not in the reader view"
        await page.screenshot(SCREENSHOTS / f"table-comparison-4876-{width}-table.png", full_page=False)
    assert shown["found"], f"at {width}px: no comparison table with its header row: {shown}"
    assert shown["visible"], f"at {width}px: the table is not visible"
    assert all(cell in shown["first"] for cell in HEADER), f"at {width}px: header row {shown['first']!r}"
    assert any(LAST_ROW in row for row in shown["rows"]), f"at {width}px: the last rows are missing"
    assert len(shown["rows"]) >= 15, f"at {width}px: {len(shown['rows'])} rows"
    # Each row keeps its empty cells: the one check mark of "Corporate Tax Software" stays under
    # PREMIUM, the second of the three products.
    header = shown["cells"][0]
    assert len(header) == 4, f"at {width}px: header cells {header}"
    corporate = next(row for row in shown["cells"] if row and row[0] == "Corporate Tax Software")
    assert corporate == ["Corporate Tax Software", "", "check", ""], f"at {width}px: {corporate}"
    assert shown["over"] <= 0, f"at {width}px: the page scrolls sideways by {shown['over']} px"
