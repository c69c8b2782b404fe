"""Threads on engines no table entry names (`engine/views/posts.py`), read in a real headless Chromium at
375 and 1280 px: a Vanilla thread and a bbPress thread, written as those engines write them
(tests/fixtures/threads), served by an upstream site on 127.0.0.1.

Every post is shown under its author, in order, with the opening post first; the repeated controls
(Quote, Like, Flag) and the reply form are not shown; the quote is attributed; nothing scrolls
sideways. Screenshots go to artifacts/screenshots/ for a person to look at.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web
from support.chromium import SCREENSHOTS, Chromium
from support.reader_server import serve, serve_app, test_settings

pytestmark = pytest.mark.browser

THREADS = Path(__file__).parent.parent / "fixtures" / "threads"

SHOWN = """
(() => {
  const posts = [...document.querySelectorAll('.thread > .post')];
  return {
    authors: posts.map(p => (p.querySelector('.post-author')?.innerText || '').trim()),
    bodies: posts.map(p => p.querySelector('.post-body').innerText.trim()),
    captions: [...document.querySelectorAll('.thread figcaption')].map(c => c.innerText.trim()),
    over: document.documentElement.scrollWidth - innerWidth,
    forms: document.querySelectorAll('.thread form, .thread textarea, .thread button').length,
    text: document.querySelector('main').innerText,
  };
})()
"""

#: (fixture, authors in order, a phrase of each post's own text, the quote's caption or None).
THREAD_PAGES = (
    (
        "vanilla.html",
        ["marta_k", "ovenbird", "deglaze", "marta_k"],
        ["grandmother's cast iron", "flaxseed oil", "cook bacon", "oven cleaner"],
        "ovenbird said:",
    ),
    (
        "bbpress.html",
        ["harlan", "quartermaster", "wells"],
        ["food-grade barrels", "pool strips", "unscented bleach"],
        None,
    ),
)


@pytest.fixture
async def forum_site() -> AsyncIterator[str]:
    async def page(request: web.Request) -> web.Response:
        path = THREADS / request.match_info["name"]
        if not path.is_file():
            raise web.HTTPNotFound()
        return web.Response(text=path.read_text(), content_type="text/html")

    app = web.Application()
    app.router.add_get("/t/{name}", page)
    async with serve_app(app) as base:
        yield base


async def test_threads_on_engines_without_a_table_entry(chromium: Chromium, forum_site: str) -> None:
    problems: list[str] = []
    async with serve(test_settings(rate_limit=0)) as server:
        page = await chromium.new_page()
        for name, authors, phrases, caption in THREAD_PAGES:
            for width in (375, 1280):
                await page.set_viewport(width, 812 if width < 800 else 800, width < 800)
                await page.navigate(server.read_url(f"{forum_site}/t/{name}"))
                shown = await page.evaluate(SHOWN)
                where = f"{name} at {width}px"
                if shown["authors"] != authors:
                    problems.append(f"{where}: authors {shown['authors']}")
                for body, phrase in zip(shown["bodies"], phrases, strict=False):
                    if phrase not in body:
                        problems.append(f"{where}: {phrase!r} not in its post")
                for control in ("Flag", "Post Comment", "Participant"):
                    if control in shown["text"]:
                        problems.append(f"{where}: shows {control!r}")
                if caption is not None and caption not in shown["captions"]:
                    problems.append(f"{where}: quote captions {shown['captions']}")
                if shown["over"] > 0 or shown["forms"]:
                    problems.append(f"{where}: overflow {shown['over']}px, {shown['forms']} form parts")
                stem = name.removesuffix(".html")
                path = await page.screenshot(SCREENSHOTS / f"thread-structure-{stem}-{width}.png")
                assert path.stat().st_size > 1000
    assert not problems, problems
