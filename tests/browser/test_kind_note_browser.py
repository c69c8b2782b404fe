"""The page-kind note of the reader view in a real headless Chromium at 375 and 1280 px: on a page
that is not an article (wcxb-dev's woodingelectric.com, an electrician's service page), `/read`
still answers, and says at the top what the page looks like, with the original one tap away.
Screenshots go to artifacts/screenshots/kind-note-*.png for a person to look at.
"""

from __future__ import annotations

from typing import Any

import pytest
from support.chromium import SCREENSHOTS, Chromium
from support.reader_server import serve, test_settings

pytestmark = pytest.mark.browser

SHOWN = """
(() => {
  const note = document.querySelector('.kind-note');
  if (!note) return {note: null, over: document.documentElement.scrollWidth - innerWidth};
  const box = note.getBoundingClientRect();
  const link = note.querySelector('a');
  const linkBox = link ? link.getBoundingClientRect() : null;
  return {
    note: note.innerText.trim(),
    kind: note.dataset.kind,
    top: box.top + scrollY,
    visible: box.height > 0 && box.bottom <= innerHeight,
    href: link ? link.href : null,
    linkHeight: linkBox ? linkBox.height : 0,
    over: document.documentElement.scrollWidth - innerWidth,
  };
})()
"""


@pytest.mark.parametrize("width", [375, 1280])
async def test_a_service_page_is_read_with_a_note_saying_what_it_is(
    chromium: Chromium, wcxb_base: str, width: int
) -> None:
    original = f"{wcxb_base}/wcxb/0266"
    async with serve(test_settings(rate_limit=0)) as server:
        page = await chromium.new_page()
        await page.set_viewport(width, 812 if width < 800 else 800, width < 800)
        await page.navigate(server.read_url(original))
        shown: dict[str, Any] = dict(await page.evaluate(SHOWN))
        await page.screenshot(SCREENSHOTS / f"kind-note-service-{width}.png")
    assert shown["note"], f"at {width}px: no page-kind note"
    assert shown["note"].startswith("This looks like a company's or service's page"), shown["note"]
    assert shown["kind"] == "service"
    assert shown["visible"], f"at {width}px: the note is not in the first screen: {shown}"
    assert shown["href"] == original, f"at {width}px: the original is {shown['href']}"
    assert shown["linkHeight"] > 0
    assert shown["over"] <= 0, f"at {width}px: the page scrolls sideways by {shown['over']} px"
