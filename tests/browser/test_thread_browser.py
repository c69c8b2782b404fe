"""The thread view in a real headless Chromium, on real forum pages of four engines and a thread
whose replies alone are marked up (wcxb-dev).

Every post is shown with its author; quotes are attributed ("X said:") and set apart (indented);
no badge, signature or reply box; nothing scrolls sideways at 375 and 1280 px. Screenshots of two
thread views at both widths go to artifacts/screenshots/ for a person to look at.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from support.chromium import SCREENSHOTS, Chromium, Page
from support.reader_server import serve, serve_app, test_settings
from support.wcxb_site import wcxb_site

pytestmark = pytest.mark.browser

#: (wcxb-dev page, engine, first author, whose quote appears).
PAGES = (
    ("0513", "xenforo", "felixen", "spikeymike"),
    ("0535", "phpbb", "b.scherer", None),
    ("0502", "discourse", "amondale", None),
    ("0533", "vbulletin", "HOSTLAR", None),
    ("0526", "microdata", "Shancock", None),  # warriorforum: the opening post from JSON-LD
)

SHOWN = """
(() => {
  const posts = [...document.querySelectorAll('.thread > .post')];
  const body = p => p.querySelector('.post-body').getBoundingClientRect();
  return {
    posts: posts.length,
    authors: posts.map(p => (p.querySelector('.post-author')?.innerText || '').trim()),
    authorVisible: posts.every(p => { const r = p.querySelector('.post-author').getBoundingClientRect();
                                      return r.width > 0 && r.height > 0; }),
    quotes: [...document.querySelectorAll('.post-body figure > blockquote')].map(q => {
      const fig = q.parentElement, cap = fig.querySelector('figcaption');
      return {caption: cap ? cap.innerText.trim() : '',
              indent: q.getBoundingClientRect().left - fig.closest('.post-body').getBoundingClientRect().left,
              bordered: parseFloat(getComputedStyle(fig).borderInlineStartWidth) > 0};
    }),
    over: document.documentElement.scrollWidth - innerWidth,
    text: document.querySelector('.thread').innerText,
    h1: document.querySelectorAll('h1').length,
    forms: document.querySelectorAll('.thread form, .thread textarea, .thread button').length,
  };
})()
"""


@pytest.fixture
async def wcxb_base(shared_datasets: Path) -> AsyncIterator[str]:
    directory = shared_datasets / "wcxb-dev"
    if not directory.is_dir():
        pytest.skip("wcxb-dev is not in ../shared/datasets")
    async with serve_app(await wcxb_site(directory, pictures=False)) as base:
        yield base


async def show(page: Page, url: str, width: int) -> dict:
    await page.set_viewport(width, 812 if width < 800 else 800, width < 800)
    await page.navigate(url)
    return await page.evaluate(SHOWN)


async def test_every_post_shows_its_author_on_four_engines(chromium: Chromium, wcxb_base: str) -> None:
    problems: list[str] = []
    async with serve(test_settings()) as server:
        page = await chromium.new_page()
        for page_id, engine, first, quoted in PAGES:
            for width in (375, 1280):
                shown = await show(page, server.read_url(f"{wcxb_base}/wcxb/{page_id}"), width)
                where = f"{engine} {page_id} at {width}px"
                if shown["posts"] < 2:
                    problems.append(f"{where}: {shown['posts']} posts")
                    continue
                if shown["authors"][0] != first or not all(shown["authors"]) or "Unknown" in shown["authors"]:
                    problems.append(f"{where}: authors {shown['authors'][:5]}")
                if not shown["authorVisible"]:
                    problems.append(f"{where}: an author name is not visible")
                if shown["over"] > 0:
                    problems.append(f"{where}: overflows by {shown['over']}px")
                if shown["h1"] != 1 or shown["forms"]:
                    problems.append(f"{where}: {shown['h1']} h1, {shown['forms']} form parts")
                for quote in shown["quotes"]:
                    if quote["caption"] and not quote["caption"].endswith("said:"):
                        problems.append(f"{where}: quote caption {quote['caption']!r}")
                    if quote["indent"] <= 0 or not quote["bordered"]:
                        problems.append(f"{where}: a quote is not set apart ({quote})")
                if quoted is not None and f"{quoted} said:" not in [q["caption"] for q in shown["quotes"]]:
                    problems.append(f"{where}: no quote attributed to {quoted}")
                for dropped in ("Well-known member", "Click to expand", "Post reply", "Write your reply"):
                    if dropped in shown["text"]:
                        problems.append(f"{where}: shows {dropped!r}")
    assert not problems, problems


async def test_screenshots_of_two_thread_views(chromium: Chromium, wcxb_base: str) -> None:
    """XenForo and phpBB threads at 375 and 1280 px, for a person to look at."""
    async with serve(test_settings()) as server:
        page = await chromium.new_page()
        for page_id, engine in (("0513", "xenforo"), ("0540", "phpbb")):
            for width in (375, 1280):
                shown = await show(page, server.read_url(f"{wcxb_base}/wcxb/{page_id}"), width)
                assert shown["posts"] >= 2 and shown["over"] <= 0
                path = await page.screenshot(SCREENSHOTS / f"thread-{engine}-top-{width}.png")
                assert path.stat().st_size > 1000
                # The third post of the XenForo thread quotes the second: scroll it into view.
                await page.evaluate(
                    "document.querySelector('.post-body figure')?.closest('.post')?.scrollIntoView()"
                )
                path = await page.screenshot(SCREENSHOTS / f"thread-{engine}-{width}.png")
                assert path.stat().st_size > 1000
