"""The reading list in a real headless Chromium at 375 px: Save from the reader view, the entry in
`/list`, search, archive, the reading position sent while scrolling and restored in a second
browser context of the same reader (a fresh profile: no cookie, no storage in common), the list
downloaded as an EPUB that EPUBCheck finds valid, and offline reading with the server stopped
(the service worker's copies), Archive pressed offline made once the server is back. Without a
login the reader is the client's address, the same for both contexts. Every control of `/list` and
the Save button measures at least 44 x 44 px, and nothing is wider than the window. Screenshots of
`/list` at 375 and 1280 px go to artifacts/screenshots/reading-list-*.png.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import re
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from support.chromium import COMMAND_TIMEOUT, SCREENSHOTS, Chromium, Page, wait_for
from support.reader_server import free_port, serve, test_settings
from support.upstream import Upstream
from test_readinglist import _epubcheck

from readerproxy.app import Settings, create_app

pytestmark = pytest.mark.browser

LONG = "/rd/guardian-1"  # far more than three screens at 375 px
SHORT = "/article"

#: Every control of the page narrower or shorter than 44 px, and how far the page overflows.
TARGETS = """
(() => {
  const small = [];
  for (const element of document.querySelectorAll('a, button, input, select, summary, [role=button]')) {
    const box = element.getBoundingClientRect();
    if (box.width === 0 && box.height === 0) continue;  // not shown
    if (element.closest('.visually-hidden')) continue;
    if (box.width < 44 || box.height < 44) {
      small.push(`${element.tagName} ${element.className} "${element.textContent.trim().slice(0, 30)}" ${box.width}x${box.height}`);
    }
  }
  return {small, overflow: document.documentElement.scrollWidth - innerWidth};
})()
"""

#: Whether the reader view's toolbar holds its controls in one row, none over another.
TOOLBAR = """
(() => {
  const bar = document.querySelector('.topbar');
  const shown = [...bar.children].filter((e) => e.getBoundingClientRect().width > 0);
  const overlaps = [];
  shown.forEach((a, i) => shown.slice(i + 1).forEach((b) => {
    const p = a.getBoundingClientRect(), q = b.getBoundingClientRect();
    if (p.right > q.left + 0.5 && q.right > p.left + 0.5 && p.bottom > q.top && q.bottom > p.top) {
      overlaps.push(`${a.className} / ${b.className}`);
    }
  }));
  const left = bar.getBoundingClientRect().left;
  for (const e of shown) {  // a control whose text spills out of it, or one pushed off the bar
    if (e.scrollWidth > e.clientWidth + 1 || e.getBoundingClientRect().left < left) overlaps.push(e.className);
  }
  return {overflow: Math.max(0, bar.scrollWidth - bar.clientWidth), overlaps};
})()
"""
#: How far down the page is, as reader.js measures it.
SHARE = "scrollY / (document.documentElement.scrollHeight - innerHeight)"


async def page_in(chromium: Chromium, width: int, context: str | None = None) -> Page:
    """A tab (in a browser context of its own when `context` is given) `width` px wide."""
    params: dict[str, Any] = {"url": "about:blank"}
    if context is not None:
        params["browserContextId"] = context
    target = await chromium.send("Target.createTarget", params)
    attached = await chromium.send("Target.attachToTarget", {"targetId": target["targetId"], "flatten": True})
    page = Page(chromium, attached["sessionId"])
    await page.send("Page.enable")
    await page.send("Runtime.enable")
    await page.set_viewport(width, 812 if width < 800 else 800, width < 800)
    return page


async def after_load(page: Page, script: str) -> None:
    """Run `script` (a click, a form's submit) and wait for the page it loads."""
    loaded = page.browser.subscribe("Page.loadEventFired", page.session)
    await page.evaluate(script)
    await asyncio.wait_for(loaded.get(), COMMAND_TIMEOUT)


async def titles(page: Page) -> list[str]:
    value = await page.evaluate("[...document.querySelectorAll('.entry-title')].map((e) => e.textContent)")
    return list(value)


async def test_save_list_search_archive_and_resume_on_another_context(
    chromium: Chromium, upstream: Upstream, tmp_path: Path
) -> None:
    upstream.require_datasets()
    settings = test_settings(reading_list=f"sqlite:{tmp_path / 'list.sqlite3'}")
    async with serve(settings) as server, aiohttp.ClientSession() as http:
        page = await page_in(chromium, 375)
        await page.navigate(server.read_url(upstream.url(LONG)))
        button = await page.evaluate(
            "(() => { const b = document.querySelector('form.save-form button').getBoundingClientRect();"
            " return {width: b.width, height: b.height, top: b.top}; })()"
        )
        assert button["width"] >= 44 and button["height"] >= 44 and button["top"] < 100, button
        toolbar = await page.evaluate(TOOLBAR)
        assert toolbar == {"overflow": 0, "overlaps": []}, toolbar
        await page.screenshot(SCREENSHOTS / "reading-list-reader-375.png")
        await after_load(page, "document.querySelector('form.save-form button').click()")
        entry_id = await page.evaluate("document.querySelector('article.reader').dataset.entry")
        assert await page.evaluate("location.pathname") == f"/list/{entry_id}"
        assert "Saved to your reading list" in await page.evaluate(
            "document.querySelector('.saved-note').textContent"
        )
        toolbar = await page.evaluate(TOOLBAR)
        assert toolbar == {"overflow": 0, "overlaps": []}, toolbar
        await page.screenshot(SCREENSHOTS / "reading-list-saved-375.png")
        title = await page.evaluate("document.querySelector('article.reader h1').textContent")

        # a second, short article saved the same way, so the list has two rows
        await page.navigate(server.read_url(upstream.url(SHORT)))
        await after_load(page, "document.querySelector('form.save-form button').click()")
        short_title = await page.evaluate("document.querySelector('article.reader h1').textContent")

        await page.navigate(server.url("/list"))
        assert await titles(page) == [short_title, title]
        shown = await page.evaluate(TARGETS)
        assert shown == {"small": [], "overflow": 0}, shown

        # search through the form, as a reader types it
        words = title.split()[0]
        await after_load(
            page,
            f"document.querySelector('#list-q').value = {words!r};"
            "document.querySelector('form.list-search').requestSubmit()",
        )
        assert title in await titles(page)
        await after_load(
            page,
            "document.querySelector('#list-q').value = 'zzzqqq';"
            "document.querySelector('form.list-search').requestSubmit()",
        )
        assert await titles(page) == []
        assert "Nothing saved matches" in await page.evaluate(
            "document.querySelector('.list-empty').textContent"
        )

        # read half the long article: reader.js sends the position (throttled)
        await page.navigate(server.url(f"/list/{entry_id}"))
        # every picture loaded (or failed) first, so that the page's height no longer changes
        await page.evaluate("document.querySelectorAll('img').forEach((img) => { img.loading = 'eager'; })")
        # (the pictures come through /image, decoded in worker processes: slow on a loaded machine)
        assert await wait_for(page, "[...document.images].every((img) => img.complete)", 90)
        extent = await page.evaluate("document.documentElement.scrollHeight - innerHeight")
        assert extent > 2000
        await page.evaluate(f"scrollTo(0, {extent // 2})")
        await page.evaluate(f"scrollTo(0, {extent // 2 + 40})")  # a second scroll in the same 2 s

        async def progress() -> float:
            async with http.get(server.url(f"/api/list/{entry_id}")) as response:
                return float((await response.json())["progress"])

        deadline = time.monotonic() + 15
        while await progress() == 0.0 and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
        sent = await progress()
        share = await page.evaluate(SHARE)  # where the page is (late images may have moved the end)
        assert 0.3 < sent < 0.7 and abs(sent - share) < 0.01, (sent, share)

        # a second browser context of the same reader opens it where it was left
        context = (await chromium.send("Target.createBrowserContext"))["browserContextId"]
        other = await page_in(chromium, 375, context)
        await other.navigate(server.url(f"/list/{entry_id}"))
        assert await wait_for(other, "scrollY > 0")
        # the pictures arrive (or fail) after the position was restored: it is held where it was
        await other.evaluate("document.querySelectorAll('img').forEach((img) => { img.loading = 'eager'; })")
        assert await wait_for(other, "[...document.images].every((img) => img.complete)", 20)
        assert await wait_for(other, f"Math.abs({SHARE} - {sent}) < 0.005", 5), await other.evaluate(SHARE)

        # archive from the list: out of the default view, in the archived one
        await other.navigate(server.url("/list"))
        await after_load(
            other,
            f"document.querySelector('li[data-id=\"{entry_id}\"] button[value=archived]').click()",
        )
        assert await other.evaluate("location.pathname + location.search") == "/list"
        assert await titles(other) == [short_title]
        await other.navigate(server.url("/list?state=archived"))
        assert await titles(other) == [title]

        # the list at both widths, with its two rows (one archived: shown under All)
        for width in (375, 1280):
            await other.set_viewport(width, 812 if width < 800 else 800, width < 800)
            await other.navigate(server.url("/list?state=all"))
            shown = await other.evaluate(TARGETS)
            assert shown == {"small": [], "overflow": 0}, (width, shown)
            await other.screenshot(SCREENSHOTS / f"reading-list-{width}.png")

        # the EPUB link downloads the list as a book, which EPUBCheck finds valid
        downloads = tmp_path / "downloads"
        downloads.mkdir()
        await chromium.send(
            "Browser.setDownloadBehavior",
            {"behavior": "allow", "downloadPath": str(downloads), "browserContextId": context},
        )
        await other.evaluate("document.querySelector('a.export').click()")
        deadline = time.monotonic() + 20
        while not list(downloads.glob("*.epub")) and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        (book,) = downloads.glob("*.epub")
        report = _epubcheck(book)
        assert [m for m in report["messages"] if m["severity"] in ("FATAL", "ERROR", "WARNING")] == []
        assert report["publication"]["title"] == "Reading list"
        await chromium.send("Target.disposeBrowserContext", {"browserContextId": context})


@contextlib.asynccontextmanager
async def serve_on(settings: Settings, port: int) -> AsyncIterator[str]:
    """The reader server on a given loopback port (to come back where a browser left it)."""
    runner = web.AppRunner(create_app(dataclasses.replace(settings, host="127.0.0.1", port=port)))
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


async def test_saved_articles_are_read_offline_and_changes_wait_for_the_network(
    chromium: Chromium, upstream: Upstream, tmp_path: Path
) -> None:
    """The list page installs the service worker, which keeps every saved article with its
    stylesheet; with the server gone (the network cut), the list and the article still open, and
    Archive pressed offline is kept by the worker and made once the server answers again."""
    settings = test_settings(reading_list=f"sqlite:{tmp_path / 'list.sqlite3'}")
    page = await page_in(chromium, 375)
    port = free_port()
    async with serve_on(settings, port) as base, aiohttp.ClientSession() as http:
        async with http.post(f"{base}/api/list", json={"url": upstream.url(SHORT)}) as saved:
            entry = await saved.json()
        await page.navigate(f"{base}/list")
        assert await wait_for(page, "document.querySelector('.offline-note').dataset.kept === '1'", 20)
        note = await page.evaluate("document.querySelector('.offline-note').textContent")
        assert re.fullmatch(r"1 article, \d+\.\d MB kept offline", note), note
        manifest = await page.evaluate("document.querySelector('link[rel=manifest]').href")
        async with http.get(manifest) as response:
            app = json.loads(await response.text())
        assert app["start_url"] == "../list"
        assert {icon["sizes"] for icon in app["icons"]} == {"192x192", "512x512"}
    # the server has stopped: nothing answers on its port any more
    await page.navigate(f"{base}/list/{entry['id']}")
    shown = await page.evaluate(
        "({title: document.querySelector('article.reader h1').textContent,"
        " styled: getComputedStyle(document.querySelector('.topbar')).display,"
        " text: document.querySelector('article.reader .content').textContent.length})"
    )
    assert shown["title"] == entry["title"] and shown["styled"] == "flex" and shown["text"] > 500, shown
    await page.screenshot(SCREENSHOTS / "reading-list-offline-375.png")
    await page.navigate(f"{base}/list")
    assert await titles(page) == [entry["title"]]
    await after_load(
        page, f"document.querySelector('li[data-id=\"{entry['id']}\"] button[value=archived]').click()"
    )
    assert await page.evaluate("location.pathname") == "/list"  # the kept list again, offline
    # the server is back, on the same port with the same list: the queued Archive goes out
    async with serve_on(settings, port), aiohttp.ClientSession() as http:
        await page.navigate(f"{base}/list")

        async def state() -> str:
            async with http.get(f"{base}/api/list/{entry['id']}") as response:
                return str((await response.json())["state"])

        deadline = time.monotonic() + 15
        while await state() != "archived" and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
        assert await state() == "archived"
