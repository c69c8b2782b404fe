"""The reader view's controls with static/reader.js, in a real headless Chromium at 375 and 1280 px.

Preferences change in the page at once (same reading position, no new history entry, the same
cookie the server reads); the toolbar slides away on scrolling down and comes back on scrolling
up; a progress bar follows the reading; read-aloud speaks the title, the byline and then the text
paragraph by paragraph through a stubbed `speechSynthesis` (injected before the page's script runs,
recording utterances and ending them on demand), with next / previous, pause and resume, speed and
the page language's voices; without speech it says so. Without JavaScript the links still work.
Screenshots go to artifacts/screenshots/reader-controls-*.png.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import aiohttp
import pytest
from support.chromium import SCREENSHOTS, Chromium, Page, wait_for
from support.reader_server import serve, test_settings
from support.upstream import Upstream

from readerproxy.web.templating import COOKIE_MAX_AGE

pytestmark = pytest.mark.browser

#: A long article (far more than 3,000 px at both widths) and one with a byline.
LONG = "/rd/guardian-1"
BYLINED = "/rd/quanta-1"
WIDTHS = (375, 1280)

#: A speechSynthesis stand-in: records every utterance, ends the current one on `__speech.finish()`;
#: `cancel()` fires "error" (interrupted) on the current one, as Chromium does.
FAKE_SPEECH = """
(() => {
  const spoken = [];
  let current = null;
  class FakeUtterance extends EventTarget {
    constructor(text) { super(); this.text = text; this.lang = ""; this.rate = 1; this.voice = null; }
  }
  const voices = [
    {name: "English A", lang: "en-US", voiceURI: "en-a", default: true, localService: true},
    {name: "English B", lang: "en-GB", voiceURI: "en-b", default: false, localService: true},
    {name: "Deutsch", lang: "de-DE", voiceURI: "de", default: false, localService: true},
  ];
  const fake = {
    speaking: false, pending: false, paused: false,
    getVoices: () => voices,
    speak(u) {
      spoken.push({text: u.text, rate: u.rate, voice: u.voice ? u.voice.name : null, lang: u.lang});
      current = u; this.speaking = true;
    },
    cancel() {
      const u = current; current = null; this.speaking = false;
      if (u) u.dispatchEvent(Object.assign(new Event("error"), {error: "interrupted"}));
    },
    pause() {}, resume() {}, addEventListener() {},
  };
  window.__speech = {
    spoken,
    finish() { const u = current; current = null; fake.speaking = false; if (u) u.dispatchEvent(new Event("end")); },
  };
  Object.defineProperty(window, "speechSynthesis", {value: fake, configurable: true});
  Object.defineProperty(window, "SpeechSynthesisUtterance", {value: FakeUtterance, configurable: true});
})();
"""
NO_SPEECH = """
Object.defineProperty(window, "speechSynthesis", {value: undefined, configurable: true});
Object.defineProperty(window, "SpeechSynthesisUtterance", {value: undefined, configurable: true});
"""

#: The paragraph at the reading line (a quarter down the window) and how far into it the line is.
READING_POSITION = """
(() => {
  const line = innerHeight * 0.25;
  // the elements reader.js anchors on (its ANCHORS), in document order: when the reading line
  // falls in the gap above a paragraph, the element there may be a figure or a quote
  const blocks = [...document.querySelector('article.reader').querySelectorAll(
    'p, li, h1, h2, h3, h4, h5, h6, blockquote, pre, figure, dt, dd, tr, hr, .article-head')];
  const index = blocks.findIndex(b => b.getBoundingClientRect().height > 0 && b.getBoundingClientRect().bottom > line);
  const box = blocks[index].getBoundingClientRect();
  return {index, offset: line - box.top, share: (line - box.top) / box.height, y: scrollY};
})()
"""


async def settle(page: Page, ms: int = 0) -> None:
    """Two animation frames (the script's scroll handler runs in one), then `ms` milliseconds."""
    await page.send(
        "Runtime.evaluate",
        {
            "expression": "new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))",
            "awaitPromise": True,
        },
    )
    if ms:
        await asyncio.sleep(ms / 1000)


async def open_page(page: Page, url: str, width: int) -> None:
    await page.set_viewport(width, 812 if width < 800 else 800, width < 800)
    await page.set_media("", "light")
    await page.navigate(url)
    await settle(page)


async def click(page: Page, selector: str) -> None:
    """A real mouse click at the middle of the element (it must be on screen and uncovered)."""
    point = await page.evaluate(
        f"(() => {{ const r = document.querySelector({json.dumps(selector)}).getBoundingClientRect();"
        " return [r.left + r.width / 2, r.top + r.height / 2]; })()"
    )
    for kind in ("mousePressed", "mouseReleased"):
        await page.send(
            "Input.dispatchMouseEvent",
            {"type": kind, "x": point[0], "y": point[1], "button": "left", "clickCount": 1},
        )
    await settle(page)


async def press(page: Page, key: str) -> None:
    await page.send("Input.dispatchKeyEvent", {"type": "keyDown", "key": key, "text": key})
    await page.send("Input.dispatchKeyEvent", {"type": "keyUp", "key": key})
    await settle(page)


async def scroll_to(page: Page, y: int) -> None:
    await page.evaluate(f"window.scrollTo({{top: {y}, behavior: 'instant'}})")
    await settle(page)


async def settle_layout(page: Page, seconds: float = 5.0) -> None:
    """Wait until the page's height holds for a quarter second: images arriving through /image
    lengthen the page, and the browser then moves the scroll position to keep what is on screen
    (scroll anchoring), which would turn a test's scroll up into a scroll down."""
    deadline = time.monotonic() + seconds
    height = await page.evaluate("document.documentElement.scrollHeight")
    while time.monotonic() < deadline:
        await asyncio.sleep(0.25)
        now = await page.evaluate("document.documentElement.scrollHeight")
        if now == height:
            return
        height = now


async def shot(page: Page, name: str) -> None:
    path = await page.screenshot(SCREENSHOTS / f"reader-controls-{name}.png")
    assert path.stat().st_size > 1000


async def fresh_page(chromium: Chromium, script: str | None = None) -> Page:
    page = await chromium.new_page()
    if script:
        await page.send("Page.addScriptToEvaluateOnNewDocument", {"source": script})
    return page


@pytest.mark.parametrize("width", WIDTHS)
async def test_size_change_keeps_the_reading_position_and_history(
    chromium: Chromium, upstream: Upstream, width: int
) -> None:
    upstream.require_datasets()
    async with serve(test_settings()) as server:
        page = await fresh_page(chromium)
        url = server.read_url(upstream.url(LONG))
        await open_page(page, url, width)
        assert await page.evaluate("document.documentElement.scrollHeight") > 3000 + 2 * 812
        await scroll_to(page, 3100)  # reading down hides the toolbar; a little back up brings it
        await settle_layout(page)
        await scroll_to(page, 3000)
        await settle_layout(page)
        await page.evaluate("window.__samePage = true")
        before = await page.evaluate(READING_POSITION)
        history = await page.evaluate("history.length")
        font = "parseFloat(getComputedStyle(document.querySelector('.content p')).fontSize)"
        font_before = await page.evaluate(font)
        assert await wait_for(page, "document.querySelector('.topbar').getBoundingClientRect().top === 0")
        await click(page, "details.prefs summary")  # the toolbar is at hand 3,000 px down
        await click(page, 'a.step[data-key="+"]')
        after = await page.evaluate(READING_POSITION)
        state = await page.evaluate(
            "({same: window.__samePage === true, history: history.length, size: document.documentElement"
            ".dataset.size, cookie: document.cookie, label: document.querySelector('.size-now').textContent,"
            " next: document.querySelector('a.step[data-key=\"+\"]').href,"
            " current: document.querySelector('.prefs a[aria-current=true]').href})"
        )
        await shot(page, f"size-larger-{width}")
        assert state["same"] and state["history"] == history, state  # no navigation, no entry
        assert state["size"] == "l" and state["label"] == "Large"
        assert await page.evaluate(font) > font_before
        # The same paragraph is at the reading line, as far into it (text reflowed: a share of it).
        assert after["index"] == before["index"] and abs(after["share"] - before["share"]) < 0.02, (
            before,
            after,
        )
        assert abs(after["y"] - 3000) < 0.5 * after["y"]  # not sent back to the top
        assert "rp_size=l" in state["cookie"]
        assert "size=xl" in state["next"] and "size=l" in state["current"]  # links carry the new size
        cookies = (await page.send("Network.getCookies"))["cookies"]
        size_cookie = next(c for c in cookies if c["name"] == "rp_size")
        assert size_cookie["path"] == "/" and abs(size_cookie["expires"] - time.time() - COOKIE_MAX_AGE) < 120
        # Theme, font, width and spacing change at once too; the server reads the cookies back.
        measure = "document.querySelector('article.reader').getBoundingClientRect().width"
        widths = {}
        for choice in ("narrow", "wide", "medium"):
            await click(page, f'a[data-pref="width"][data-value="{choice}"]')
            widths[choice] = await page.evaluate(measure)
        assert widths["narrow"] < widths["medium"] < widths["wide"], widths  # phones too: side margins
        await click(page, 'a[data-pref="theme"][data-value="dark"]')
        await click(page, 'a[data-pref="font"][data-value="sans"]')
        assert await page.evaluate("window.__samePage && history.length") == history
        await page.navigate(url)
        shown = await page.evaluate("({...document.documentElement.dataset})")
        assert (shown["size"], shown["theme"], shown["font"]) == ("l", "dark", "sans"), shown
        # Keys apply at once as well.
        await page.evaluate("window.__samePage = true")
        await press(page, "+")
        await press(page, "t")
        shown = await page.evaluate("({...document.documentElement.dataset, same: window.__samePage})")
        assert shown["same"] and shown["size"] == "xl" and shown["theme"] == "sepia", shown


@pytest.mark.parametrize("width", WIDTHS)
async def test_toolbar_hides_on_scroll_down_and_shows_on_scroll_up(
    chromium: Chromium, upstream: Upstream, width: int
) -> None:
    upstream.require_datasets()
    async with serve(test_settings()) as server:
        page = await fresh_page(chromium)
        await open_page(page, server.read_url(upstream.url(LONG)), width)
        bar = "document.querySelector('.topbar').getBoundingClientRect()"
        sizes = await page.evaluate(
            "['#rp-listen', 'details.prefs summary'].map(s => document.querySelector(s).getBoundingClientRect())"
            ".map(r => [r.width, r.height])"
        )
        assert all(w >= 44 and h >= 44 for w, h in sizes), sizes
        await scroll_to(page, 1500)
        await settle_layout(page)
        await scroll_to(page, 2500)
        await settle_layout(page)
        assert await wait_for(page, f"{bar}.bottom <= 0"), await page.evaluate(f"{bar}.bottom")
        progress = await page.evaluate(
            "document.querySelector('.progress-bar').getBoundingClientRect().width / document.documentElement.clientWidth"
        )
        assert 0.05 < progress < 0.95, progress
        await scroll_to(page, 2300)
        await settle_layout(page)
        assert await wait_for(page, f"{bar}.top === 0")
        await shot(page, f"toolbar-back-{width}")
        await scroll_to(page, 10**6)
        # scrolled to the end again on each check: images arriving through /image (lazy) lengthen
        # the page after the first scroll, which moves its end
        assert await wait_for(
            page,
            "(window.scrollTo(0, 10 ** 7), document.querySelector('.progress-bar').getBoundingClientRect().width"
            " >= document.documentElement.clientWidth - 1)",
        )
        await scroll_to(page, 0)
        assert await wait_for(page, f"{bar}.top === 0")


@pytest.mark.parametrize("width", WIDTHS)
async def test_read_aloud_paragraph_by_paragraph(chromium: Chromium, upstream: Upstream, width: int) -> None:
    upstream.require_datasets()
    async with serve(test_settings()) as server:
        page = await fresh_page(chromium, FAKE_SPEECH)
        url = server.read_url(upstream.url(BYLINED))
        await open_page(page, url, width)
        expected = await page.evaluate(
            "const BLOCKS = ':is(p, li, h2, h3, h4, h5, h6, blockquote, dt, dd)';"
            "[document.querySelector('.article-head h1'), document.querySelector('.byline'),"
            " ...[...document.querySelectorAll('.content ' + BLOCKS)].filter(e => !e.parentElement.closest(BLOCKS)"
            " && !e.closest('figure, pre'))].map(e => e.innerText.replace(/\\s+/g, ' ').trim()).filter(Boolean)"
        )
        spoken = "window.__speech.spoken.map(u => u.text)"
        current = "document.querySelector('.rp-speaking')?.innerText.replace(/\\s+/g, ' ').trim()"
        await click(page, "#rp-listen")
        assert await page.evaluate(spoken) == expected[:1]
        assert await page.evaluate(current) == expected[0]
        await page.evaluate("window.__speech.finish()")
        await page.evaluate("window.__speech.finish()")
        assert await page.evaluate(spoken) == expected[:3]  # title, byline, first paragraph
        assert await page.evaluate(current) == expected[2]
        await click(page, '#rp-player [data-action="next"]')
        await click(page, '#rp-player [data-action="next"]')
        assert (await page.evaluate(spoken))[-1] == expected[4]  # skipped one
        assert await page.evaluate(current) == expected[4]
        in_view = (
            "(() => { const r = document.querySelector('.rp-speaking').getBoundingClientRect();"
            " return r.top >= 0 && r.top < innerHeight - document.querySelector('#rp-player').offsetHeight; })()"
        )
        assert await wait_for(page, in_view)
        await shot(page, f"read-aloud-{width}")
        await click(page, '#rp-player [data-action="previous"]')
        assert (await page.evaluate(spoken))[-1] == expected[3]
        await page.evaluate("window.__speech.finish()")  # ends by itself: on to the next
        assert (await page.evaluate(spoken))[-1] == expected[4]
        everything = " ".join(await page.evaluate(spoken))
        assert "min read" not in everything and "How was this chosen" not in everything
        # Pause, a new speed, play: the same paragraph again at that speed.
        count = len(await page.evaluate(spoken))
        await click(page, '#rp-player [data-action="play"]')
        assert (
            await page.evaluate("document.querySelector('[data-action=play]').getAttribute('aria-label')")
            == "Play"
        )
        await page.evaluate("window.__speech.finish()")  # a stray end after pausing changes nothing
        assert len(await page.evaluate(spoken)) == count
        await page.evaluate(
            "const s = document.querySelector('[data-setting=rate]'); s.value = '1.5';"
            " s.dispatchEvent(new Event('change'))"
        )
        voices = await page.evaluate(
            "[...document.querySelectorAll('[data-setting=voice] option')].map(o => o.text)"
        )
        assert voices == ["Default", "English A (en-US)", "English B (en-GB)"]  # the page's language only
        await click(page, '#rp-player [data-action="play"]')
        last = (await page.evaluate("window.__speech.spoken"))[-1]
        assert last["text"] == expected[4] and last["rate"] == 1.5 and last["lang"].startswith("en")
        await page.evaluate(
            "const v = document.querySelector('[data-setting=voice]'); v.value = 'en-b';"
            " v.dispatchEvent(new Event('change'))"
        )
        assert (await page.evaluate("window.__speech.spoken"))[-1]["voice"] == "English B"
        await press(page, "n")
        assert (await page.evaluate(spoken))[-1] == expected[5]
        # Back to the page later (same tab): it resumes where it stopped, at the remembered speed.
        await page.navigate(url)
        await settle(page)
        await click(page, "#rp-listen")
        resumed = (await page.evaluate("window.__speech.spoken"))[0]
        assert resumed["text"] == expected[5] and resumed["rate"] == 1.5 and resumed["voice"] == "English B"
        await click(page, '#rp-player [data-action="close"]')
        assert await page.evaluate(
            "document.querySelector('#rp-player').hidden && !document.querySelector('.rp-speaking')"
        )


@pytest.mark.parametrize("width", WIDTHS)
async def test_read_aloud_says_so_without_speech(chromium: Chromium, upstream: Upstream, width: int) -> None:
    upstream.require_datasets()
    async with serve(test_settings()) as server:
        page = await fresh_page(chromium, NO_SPEECH)
        await open_page(page, server.read_url(upstream.url(BYLINED)), width)
        await click(page, "#rp-listen")
        state = await page.evaluate(
            "({message: document.querySelector('.player-message').innerText,"
            " visible: document.querySelector('.player-message').getBoundingClientRect().height > 0,"
            " controls: document.querySelector('.player-controls').getBoundingClientRect().height})"
        )
        await shot(page, f"no-speech-{width}")
        assert state["visible"] and "cannot read aloud" in state["message"] and state["controls"] == 0, state


async def test_without_javascript_the_links_still_work(chromium: Chromium, upstream: Upstream) -> None:
    upstream.require_datasets()
    async with serve(test_settings()) as server:
        page = await fresh_page(chromium)
        await page.send("Emulation.setScriptExecutionDisabled", {"value": True})
        await page.set_viewport(375, 812, True)
        await page.navigate(server.read_url(upstream.url(LONG)))
        hidden = await page.evaluate(
            "['#rp-listen', '.progress', '#rp-player'].map(s => document.querySelector(s).getBoundingClientRect().height)"
        )
        assert hidden == [0, 0, 0]  # nothing that needs the script is shown
        href = await page.evaluate("document.querySelector('a.step[data-key=\"+\"]').href")
        await page.navigate(href)
        assert await page.evaluate("document.documentElement.dataset.size") == "l"


async def test_csp_allows_only_our_script(upstream: Upstream) -> None:
    """The reader page's one script is ours, from /static/; the CSP allows no other (no inline
    script, no eval, no other origin), so the sanitised article can never run one."""
    async with (
        serve(test_settings()) as server,
        aiohttp.ClientSession() as client,
        client.get(server.read_url(upstream.url("/article"))) as response,
    ):
        policy = response.headers["Content-Security-Policy"]
        body = await response.text()
    directives = {
        name: value for name, _, value in (part.strip().partition(" ") for part in policy.split(";"))
    }
    assert directives["script-src"] == "'self'" and directives["default-src"] == "'none'"
    assert body.count("<script") == 1 and '<script src="/static/reader.js?v=' in body


async def test_preferences_in_the_address_and_older_httponly_cookies(
    chromium: Chromium, upstream: Upstream
) -> None:
    """A preference in the address is updated in place (a reload keeps the new value, no history
    entry); a cookie left HttpOnly by an older server, which the page cannot overwrite, is replaced
    by the server in the background."""
    upstream.require_datasets()
    async with serve(test_settings()) as server:
        page = await fresh_page(chromium)
        url = server.read_url(upstream.url(BYLINED))
        await page.send(
            "Network.setCookie",
            {"name": "rp_theme", "value": "sepia", "url": server.base + "/", "httpOnly": True, "path": "/"},
        )
        await open_page(page, url + "&size=m", 375)
        assert await page.evaluate("document.documentElement.dataset.theme") == "sepia"
        history = await page.evaluate("history.length")
        await press(page, "+")
        await press(page, "t")  # sepia -> auto
        state = await page.evaluate("({search: location.search, history: history.length})")
        assert "size=l" in state["search"] and "size=m" not in state["search"] and state["history"] == history

        async def theme_cookie() -> dict[str, Any]:
            cookies = (await page.send("Network.getCookies"))["cookies"]
            return next(c for c in cookies if c["name"] == "rp_theme")

        deadline = time.monotonic() + 10
        while (await theme_cookie())["value"] != "auto" and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        cookie = await theme_cookie()
        assert cookie["value"] == "auto" and not cookie["httpOnly"], cookie
        await page.navigate(url)
        shown = await page.evaluate("({...document.documentElement.dataset})")
        assert (shown["theme"], shown["size"]) == ("auto", "l"), shown
