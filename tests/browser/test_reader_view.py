"""Issue 11 in a real headless Chromium: the reader view measured the way a person sees it.

No sideways scrolling at 320, 375 and 1280 px on every Readability test page; one h1; every control
at least 44 x 44 px on a phone; contrast computed from the rendered colours in every theme; print
emulation black on white; layout tables as flow, wide data tables scrolling in their own box with
the caption still; CJK reading time and language; RTL order. Screenshots go to artifacts/screenshots/.
"""

from __future__ import annotations

import pytest
from support.chromium import SCREENSHOTS, Chromium, Page
from support.reader_server import serve, test_settings
from support.upstream import Upstream

pytestmark = pytest.mark.browser


#: Helpers defined in the page: WCAG contrast of two CSS colours, the effective background of an element.
HELPERS = """
(() => {
  const parse = c => (c.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => {
    const f = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  window.rpContrast = (a, b) => {
    const [x, y] = [lum(parse(a)), lum(parse(b))].sort((p, q) => q - p);
    return (x + 0.05) / (y + 0.05);
  };
  window.rpBackground = el => {
    for (let e = el; e; e = e.parentElement) {
      const c = getComputedStyle(e).backgroundColor; const p = parse(c);
      if (p.length < 4 || p[3] > 0.5) { if (p.length >= 3 && !(p.length === 4 && p[3] === 0)) return c; }
    }
    return getComputedStyle(document.documentElement).backgroundColor;
  };
  return true;
})()
"""

CONTROLS = """
[...document.querySelectorAll('a, button, summary, select, input:not([type=hidden]):not([type=checkbox]), label.check')]
  .filter(e => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0; })
  .filter(e => !e.closest('.content') && !e.closest('.api'))
  .map(e => { const r = e.getBoundingClientRect();
    return {what: e.tagName + ' ' + (e.innerText || e.value || e.className).trim().slice(0, 30), w: r.width, h: r.height}; })
"""

CONTRAST = """
(() => {
  const checks = [];
  const add = (sel, min) => document.querySelectorAll(sel).forEach(e => {
    const r = e.getBoundingClientRect();
    if (!r.width || !r.height) return;
    const s = getComputedStyle(e);
    checks.push({sel, min, ratio: rpContrast(s.color, rpBackground(e)), text: (e.innerText || '').slice(0, 20)});
  });
  add('.content p', 4.5); add('.meta', 4.5); add('.site', 4.5); add('.badge', 4.5); add('.article-foot .original', 4.5);
  add('.brand', 4.5); add('.original-top', 4.5); add('.chip', 4.5); add('.prefs-label', 4.5); add('.lede', 4.5);
  add('.open label', 4.5); add('.content figcaption', 4.5); add('.article-head h1', 3);
  const borders = [];
  document.querySelectorAll('.prefs summary, .chip:not(.off), .open input[type=text], .open select').forEach(e => {
    const r = e.getBoundingClientRect();
    if (!r.width) return;
    borders.push({what: e.className || e.tagName,
                  ratio: rpContrast(getComputedStyle(e).borderTopColor, rpBackground(e.parentElement))});
  });
  return {checks, borders};
})()
"""


async def open_page(page: Page, url: str, width: int, scheme: str = "light", media: str = "") -> None:
    await page.set_viewport(width, 812 if width < 800 else 800, width < 800)
    await page.set_media(media, scheme)
    await page.navigate(url)
    await page.evaluate(HELPERS)


async def shot(page: Page, name: str) -> None:
    path = await page.screenshot(SCREENSHOTS / f"reader-view-{name}.png")
    assert path.stat().st_size > 1000


async def test_no_sideways_scrolling_and_one_h1_on_every_readability_page(
    chromium: Chromium, upstream: Upstream
) -> None:
    upstream.require_datasets()
    problems: list[str] = []
    async with serve(test_settings()) as server:
        page = await chromium.new_page()
        for width in (320, 375, 1280):
            await page.set_viewport(width, 800, width < 800)
            for name in upstream.readability_names():
                await page.navigate(server.read_url(upstream.url(f"/rd/{name}")))
                state = await page.evaluate(
                    "({over: document.documentElement.scrollWidth - innerWidth,"
                    " h1: document.querySelectorAll('h1').length, reader: !!document.querySelector('article.reader')})"
                )
                if not state["reader"]:
                    problems.append(f"{name} at {width}px is not a reader view")
                if state["over"] > 0:
                    problems.append(f"{name} at {width}px overflows by {state['over']}px")
                if state["h1"] != 1:
                    problems.append(f"{name} at {width}px has {state['h1']} h1")
    assert not problems, problems


async def test_controls_are_44px_on_a_phone(chromium: Chromium, upstream: Upstream) -> None:
    upstream.require_datasets()
    async with serve(test_settings()) as server:
        page = await chromium.new_page()
        for name, url in (
            ("reader", server.read_url(upstream.url("/rd/lwn-1"))),
            ("landing", server.url("/")),
            ("error", server.read_url(upstream.url("/pdf"))),
        ):
            await open_page(page, url, 375)
            await page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
            controls = await page.evaluate(CONTROLS)
            await shot(page, f"controls-{name}-375")
            assert controls, name
            small = [c for c in controls if c["w"] < 43.5 or c["h"] < 43.5]
            assert not small, (name, small)


@pytest.mark.parametrize("theme", ["light", "dark", "sepia", "auto"])
async def test_contrast_in_every_theme(chromium: Chromium, upstream: Upstream, theme: str) -> None:
    upstream.require_datasets()
    async with serve(test_settings()) as server:
        page = await chromium.new_page()
        for name, url in (
            ("reader", server.read_url(upstream.url("/rd/quanta-1"), theme=theme)),
            ("landing", server.url("/", theme=theme)),
        ):
            await open_page(page, url, 375, scheme="dark" if theme == "auto" else "light")
            await page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
            measured = await page.evaluate(CONTRAST)
            await shot(page, f"contrast-{name}-{theme}")
            low = [c for c in measured["checks"] if c["ratio"] < c["min"]]
            assert not low, (name, theme, low)
            weak = [b for b in measured["borders"] if b["ratio"] < 3]
            assert not weak, (name, theme, weak)


async def test_print_is_black_on_white_without_controls(chromium: Chromium, upstream: Upstream) -> None:
    upstream.require_datasets()
    async with serve(test_settings()) as server:
        page = await chromium.new_page()
        await open_page(
            page,
            server.read_url(upstream.url("/rd/wikipedia"), theme="dark"),
            800,
            scheme="dark",
            media="print",
        )
        state = await page.evaluate("""(() => {
          const dark = [...document.querySelectorAll('body, .content, .content p, .content pre, .content td, .content th')]
            .filter(e => { const c = (getComputedStyle(e).backgroundColor.match(/[\\d.]+/g) || []).map(Number);
                           return c.length >= 3 && (c.length < 4 || c[3] > 0) && c[0] + c[1] + c[2] < 600; }).length;
          const light = [...document.querySelectorAll('.content p, .content li')]
            .filter(e => { const c = getComputedStyle(e).color.match(/[\\d.]+/g).map(Number);
                           return c[0] + c[1] + c[2] > 300; }).length;
          const link = document.querySelector('.content a[data-original], .content a[href^="http"]');
          return {dark, light, topbar: getComputedStyle(document.querySelector('.topbar')).display,
                  after: link ? getComputedStyle(link, '::after').content : null,
                  over: document.documentElement.scrollWidth - innerWidth};
        })()""")
        await shot(page, "print-dark-theme")
        assert state["dark"] == 0 and state["light"] == 0, state
        assert state["topbar"] == "none"
        assert state["after"] and "http" in state["after"], state  # where each link leads
        assert state["over"] <= 0


async def test_wide_table_scrolls_in_its_box_with_the_caption_still(
    chromium: Chromium, upstream: Upstream
) -> None:
    upstream.require_datasets()
    async with serve(test_settings()) as server:
        page = await chromium.new_page()
        for width in (375, 1280):
            await open_page(page, server.read_url(upstream.url("/rd/keep-tabular-data")), width)
            state = await page.evaluate("""(() => {
              const box = document.querySelector('.table-scroll');
              const column = document.querySelector('.content').getBoundingClientRect();
              const cap = box.parentElement.querySelector(':scope > figcaption');
              const before = cap ? cap.getBoundingClientRect().left : null;
              box.scrollLeft = 200;
              return {boxWidth: box.getBoundingClientRect().width, column: column.width, scrolls: box.scrollWidth > box.clientWidth,
                      capMoved: cap ? cap.getBoundingClientRect().left - before : 0,
                      over: document.documentElement.scrollWidth - innerWidth, role: box.getAttribute('role')};
            })()""")
            await shot(page, f"wide-table-{width}")
            assert state["over"] <= 0 and state["capMoved"] == 0 and state["role"] == "region", state
            if width == 1280:
                assert state["boxWidth"] > state["column"] or not state["scrolls"], state  # uses the screen


async def test_layout_tables_are_flow_on_a_phone(chromium: Chromium, upstream: Upstream) -> None:
    upstream.require_datasets()
    async with serve(test_settings()) as server:
        page = await chromium.new_page()
        for name in ("lwn-1", "hukumusume"):
            await open_page(page, server.read_url(upstream.url(f"/rd/{name}")), 375)
            state = await page.evaluate(
                "({tables: [...document.querySelectorAll('.content table')].filter(t => t.innerText.length > 1500).length,"
                " font: parseFloat(getComputedStyle(document.querySelector('.content p, .content div')).fontSize),"
                " over: document.documentElement.scrollWidth - innerWidth})"
            )
            await shot(page, f"{name}-375")
            assert state["over"] <= 0 and state["font"] >= 16, (name, state)
            if name == "lwn-1":
                assert state["tables"] == 0, state


async def test_cjk_and_arabic_pages(chromium: Chromium, upstream: Upstream) -> None:
    upstream.require_datasets()
    async with serve(test_settings()) as server:
        page = await chromium.new_page()
        await open_page(page, server.read_url(upstream.url("/rd/qq")), 375)
        state = await page.evaluate(
            "({lang: document.documentElement.getAttribute('lang'),"
            " minutes: parseInt(document.querySelector('.reading-time').innerText),"
            " chars: document.querySelector('.content').innerText.replace(/\\s/g, '').length})"
        )
        await shot(page, "qq-375")
        assert state["lang"] != "en", state
        assert state["minutes"] >= max(1, state["chars"] // 600), state
        await open_page(page, server.read_url(upstream.url("/rd/rtl-1")), 375)
        state = await page.evaluate("""(() => {
          const t = document.querySelector('.reading-time');
          const arrow = document.querySelector('.article-foot .original span');
          return {dir: document.documentElement.dir, text: t.innerText, arrow: arrow ? arrow.innerText : null};
        })()""")
        await shot(page, "rtl-1-375")
        assert state["dir"] == "rtl" and state["text"][0].isdigit(), state  # "1 min read", not "min read 1"
        assert state["arrow"] == "←", state  # points the way the page reads


async def test_preferences_change_font_width_and_spacing(chromium: Chromium, upstream: Upstream) -> None:
    upstream.require_datasets()
    async with serve(test_settings()) as server:
        page = await chromium.new_page()
        measure = (
            "({font: getComputedStyle(document.body).fontFamily, width: document.querySelector('.reader')"
            ".getBoundingClientRect().width, leading: parseFloat(getComputedStyle(document.querySelector("
            "'.content p')).lineHeight)})"
        )
        await open_page(page, server.read_url(upstream.url("/rd/mozilla-1")), 1280)
        before = await page.evaluate(measure)
        await open_page(
            page,
            server.read_url(upstream.url("/rd/mozilla-1"), font="sans", width="wide", spacing="loose"),
            1280,
        )
        after = await page.evaluate(measure)
        await page.evaluate("document.querySelector('details.prefs').open = true")
        await shot(page, "prefs-sans-wide-loose-1280")
        assert before["font"] != after["font"] and after["width"] > before["width"]
        assert after["leading"] > before["leading"]
        await open_page(page, server.read_url(upstream.url("/rd/mozilla-1")), 375)  # the cookie remembers
        assert (await page.evaluate(measure))["font"] == after["font"]


async def test_screenshots_of_named_pages(chromium: Chromium, upstream: Upstream) -> None:
    """Pages the issue names, at both sizes, for a person to look at."""
    upstream.require_datasets()
    async with serve(test_settings()) as server:
        page = await chromium.new_page()
        for name in ("lwn-1", "lazy-image-1", "lazy-image-2", "quanta-1"):
            for width in (375, 1280):
                await open_page(page, server.read_url(upstream.url(f"/rd/{name}")), width)
                assert await page.evaluate("document.documentElement.scrollWidth - innerWidth") <= 0
                await shot(page, f"{name}-{width}")
        await open_page(page, server.read_url(upstream.url("/rd/lazy-image-2")), 375)
        bad = await page.evaluate(
            "[...document.querySelectorAll('.content img')].flatMap(i => (i.getAttribute('srcset') || '')"
            ".split(/,\\s+/)).filter(c => c && !/^\\/image\\?w=\\d+&url=https?:\\/\\/\\S+\\.(jpe?g|png|gif|webp)(\\s|$)/.test(c))"
        )
        assert not bad, bad[:5]
        await open_page(page, server.read_url(upstream.url("/rd/lazy-image-1")), 375)
        sources = await page.evaluate("[...document.querySelectorAll('.content img')].map(i => i.src)")
        assert any("/max/3788/" in src for src in sources)  # the <noscript> copy, full size
        assert not [src for src in sources if "/max/60/" in src]  # never the blurred placeholder
        for name, header_only, day in (
            ("lwn-1", "Nathan Willis", "25 March 2015"),
            ("quanta-1", "Joshua Sokol", "20 May 2019"),  # the day its byline states, and nothing else
        ):
            await open_page(page, server.read_url(upstream.url(f"/rd/{name}")), 375)
            shown = await page.evaluate(
                "({h1: [...document.querySelectorAll('h1')].map(h => h.textContent.trim()),"
                " byline: document.querySelector('.article-head .byline')?.textContent || '',"
                " date: document.querySelector('.article-head time')?.textContent || '',"
                " start: document.querySelector('.content').textContent.slice(0, 400)})"
            )
            assert len(shown["h1"]) == 1 and header_only in shown["byline"]  # shown once, in the header
            assert shown["byline"] == header_only  # the name alone, not "By Joshua Sokol May 20, 2019"
            assert shown["date"] == day
            assert header_only not in shown["start"] and "Read Later" not in shown["start"]
        await open_page(page, server.read_url(upstream.url("/rd/quanta-1"), theme="dark"), 375)
        await shot(page, "quanta-1-dark-375")
        await open_page(page, server.url("/"), 375)
        await shot(page, "landing-375")


async def test_keyboard_shortcuts_from_our_one_script(chromium: Chromium, upstream: Upstream) -> None:
    """static/reader.js: "+" makes the text larger and "t" picks the next theme, in the page (no
    navigation); the same links work without the script (the preference tests above)."""
    upstream.require_datasets()
    async with serve(test_settings()) as server:
        page = await chromium.new_page()
        await open_page(page, server.read_url(upstream.url("/rd/mozilla-1")), 1280)
        size = "parseFloat(getComputedStyle(document.querySelector('.content p')).fontSize)"
        before = await page.evaluate(size)
        await page.evaluate("window.__samePage = true")
        for key in ("+", "t"):
            await page.send("Input.dispatchKeyEvent", {"type": "keyDown", "key": key, "text": key})
            await page.send("Input.dispatchKeyEvent", {"type": "keyUp", "key": key})
        assert await page.evaluate(size) > before
        state = await page.evaluate(
            "({same: window.__samePage, theme: document.documentElement.dataset.theme})"
        )
        assert state["same"] and state["theme"] not in (None, "auto"), state
