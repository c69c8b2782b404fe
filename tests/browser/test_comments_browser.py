"""The comments under an article in a real headless Chromium at 375 and 1280 px: a blog post with a
"More from" box and three comments (tests/fixtures/threads/article_comments.html, served on
127.0.0.1). The article reads first, whole; the comments come after it, collapsed behind a
"3 comments" summary that is a 44 px target; opened, each shows under its author and date, without
its Reply link; the teaser cards are not among them. Screenshots of both states go to
artifacts/screenshots/ for a person to look at.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web
from support.chromium import SCREENSHOTS, Chromium
from support.reader_server import serve, serve_app, test_settings

pytestmark = pytest.mark.browser

PAGE = Path(__file__).parent.parent / "fixtures" / "threads" / "article_comments.html"

SHOWN = """
(() => {
  const box = document.querySelector('details.comments');
  const summary = box && box.querySelector('summary');
  const content = document.querySelector('.reader > .content');
  const visible = e => e.checkVisibility();
  const comments = box ? [...box.querySelectorAll('.thread > .post')] : [];
  return {
    open: box ? box.open : null,
    summary: summary ? summary.innerText.trim() : '',
    summaryHeight: summary ? summary.getBoundingClientRect().height : 0,
    after: box && content ? !!(content.compareDocumentPosition(box) & Node.DOCUMENT_POSITION_FOLLOWING) : false,
    article: content ? content.innerText : '',
    authors: comments.map(c => c.querySelector('.post-author').innerText.trim()),
    authorsVisible: comments.filter(c => visible(c.querySelector('.post-author'))).length,
    commentText: box ? box.innerText : '',
    over: document.documentElement.scrollWidth - innerWidth,
  };
})()
"""


@pytest.fixture
async def blog() -> AsyncIterator[str]:
    async def page(request: web.Request) -> web.Response:
        return web.Response(text=PAGE.read_text(), content_type="text/html")

    app = web.Application()
    app.router.add_get("/2021/04/lemons/", page)
    async with serve_app(app) as base:
        yield base


async def test_comments_after_the_article_collapsed_then_opened(chromium: Chromium, blog: str) -> None:
    async with serve(test_settings(rate_limit=0)) as server:
        page = await chromium.new_page()
        for width in (375, 1280):
            await page.set_viewport(width, 812 if width < 800 else 800, width < 800)
            await page.navigate(server.read_url(f"{blog}/2021/04/lemons/"))
            shown = await page.evaluate(SHOWN)
            assert shown["open"] is False and shown["after"], shown
            assert shown["summary"] == "3 comments"
            assert shown["summaryHeight"] >= 44
            assert "peel away the papery outer coat" in shown["article"]
            assert "Peeling the seeds made all the difference" not in shown["article"]
            assert shown["authorsVisible"] == 0  # collapsed
            assert shown["over"] <= 0
            await page.evaluate("document.querySelector('details.comments').scrollIntoView()")
            await page.screenshot(SCREENSHOTS / f"comments-closed-{width}.png")
            await page.evaluate("document.querySelector('details.comments > summary').click()")
            shown = await page.evaluate(SHOWN)
            assert shown["open"] is True
            assert shown["authors"] == ["Meena", "Holly Brook", "Ruth Alder"]
            assert shown["authorsVisible"] == 3
            assert (
                "Reply" not in shown["commentText"]
                and "Keeping supermarket basil" not in shown["commentText"]
            )
            assert "starter" not in shown["commentText"]
            assert shown["over"] <= 0
            await page.evaluate("document.querySelector('details.comments').scrollIntoView()")
            path = await page.screenshot(SCREENSHOTS / f"comments-open-{width}.png")
            assert path.stat().st_size > 1000
