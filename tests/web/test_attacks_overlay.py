"""Attacks on the overlay's own interface, in real headless Chromium: a page whose CSS tries to hide
readerproxy's panel, cover it, or paint a fake "Session expired, sign in" box over readerproxy's
address. The page is in a sandboxed frame (`<iframe srcdoc>` without allow-scripts or
allow-same-origin), so its CSS applies inside the frame's box only. Asserted at phone and desktop
width: the panel is visible and on top (`elementFromPoint` at its centre is inside it), the page's
fake box is drawn but confined to the frame's rectangle, and the frame's sandbox has no
allow-scripts."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import pytest
from aiohttp import web
from support.chromium import SCREENSHOTS, Chromium
from support.reader_server import serve, serve_app, test_settings
from test_overlay_browser import VIEWPORTS, Framed

pytestmark = pytest.mark.browser

#: CSS that hides everything, by readerproxy's own names too, and paints a fake sign-in box on top.
HOSTILE_CSS = """
html, body { display: none !important; }
* { visibility: hidden !important; }
#rpo-panel, #rpo-sheet, #rpo-frame, .rpo-shell, .rpo-shell-body, .rpo-inner, .rpo-frame, aside, details,
iframe, [aria-label] { display: none !important; visibility: hidden !important; opacity: 0 !important; }
html.rpo-root, body.rpo-body, .rpo-page { display: block !important; }
.expired, .expired * {
  visibility: visible !important; display: block !important;
  position: fixed !important; inset: 0 !important; width: 100vw !important; height: 100vh !important;
  z-index: 2147483647 !important; background: #fff !important; color: #b91c1c !important;
  font: 700 40px/1.2 sans-serif !important;
}
html::after { content: "Session expired, sign in"; position: fixed; inset: 0; z-index: 2147483647;
  background: #fff; }
"""

#: The same page three ways: the CSS inline, linked from the page's own site, and in style attributes.
PAGES = {
    "inline": "<style>{css}</style><style>.x{{}}</style></iframe><style>#rpo-panel{{display:none}}</style>",
    "linked": '<link rel="stylesheet" href="/hostile.css">',
    "attributes": "",
}
BODY = """<body style="display:none">
<div class="expired" style="position:fixed;inset:0;z-index:2147483647;background:#fff">Session expired, sign in
<p>Your readerproxy session expired. Enter your password to continue.</p></div>
<article><h1>An ordinary story</h1>
<p>{text}</p><p>{text}</p><p>{text}</p></article>
</body>"""
TEXT = "A sentence of an ordinary story about the harbour and its boats, told at some length. " * 6


@contextlib.asynccontextmanager
async def hostile_site() -> AsyncIterator[str]:
    """The hostile pages and their stylesheet on 127.0.0.1."""
    app = web.Application()

    async def page(request: web.Request) -> web.Response:
        head = PAGES[request.match_info["kind"]].format(css=HOSTILE_CSS)
        html = (
            f'<!doctype html><html><head><title>Sign in " onload="x</title>{head}</head>'
            + BODY.format(text=TEXT)
            + "</html>"
        )
        return web.Response(text=html, content_type="text/html")

    async def css(request: web.Request) -> web.Response:
        return web.Response(text=HOSTILE_CSS, content_type="text/css")

    app.router.add_get("/page/{kind}", page)
    app.router.add_get("/hostile.css", css)
    async with serve_app(app) as base:
        yield base


PANEL = """
(() => {
  const panel = document.getElementById('rpo-panel');
  const r = panel.getBoundingClientRect();
  const visibleHeight = Math.min(r.bottom, innerHeight) - Math.max(r.top, 0);
  const cx = r.x + r.width / 2, cy = Math.max(r.top, 0) + visibleHeight / 2;
  const hit = document.elementFromPoint(cx, cy);
  const frame = document.getElementById('rpo-frame');
  const f = frame.getBoundingClientRect();
  const inFrame = document.elementFromPoint(f.x + f.width / 2, f.y + f.height / 2);
  const style = getComputedStyle(panel);
  return {
    panel: {x: r.x, y: r.y, width: r.width, height: r.height},
    visible: style.display !== 'none' && style.visibility === 'visible' && style.opacity === '1'
      && r.width > 200 && visibleHeight > 40,
    onTop: !!hit && panel.contains(hit),
    text: panel.innerText,
    frame: {x: f.x, y: f.y, width: f.width, height: f.height},
    frameHit: inFrame ? inFrame.id : null,
    sandbox: frame.getAttribute('sandbox'),
    iframes: document.querySelectorAll('iframe').length,
    styles: document.querySelectorAll('style').length,
    bodyShown: getComputedStyle(document.body).display !== 'none',
    url: location.href,
  };
})()
"""
FAKE = """
(() => {
  const box = document.querySelector('.expired');
  const r = box ? box.getBoundingClientRect() : null;
  return {
    drawn: !!box && getComputedStyle(box).visibility === 'visible' && r.width > 100 && r.height > 100,
    box: r ? {x: r.x, y: r.y, width: r.width, height: r.height} : null,
    innerWidth, innerHeight,
    origin: String(self.origin),
  };
})()
"""


@pytest.mark.parametrize("kind", list(PAGES))
async def test_page_css_cannot_hide_cover_or_imitate_the_panel(chromium: Chromium, kind: str) -> None:
    async with hostile_site() as site, serve(test_settings()) as server:
        framed = await Framed.open(chromium)
        url = server.read_url(f"{site}/page/{kind}", algo="heuristic", view="overlay")
        for width, height, mobile in VIEWPORTS:
            await framed.page.set_viewport(width, height, mobile)
            await framed.navigate(url)
            shell = await framed.evaluate(PANEL)
            fake = await framed.evaluate_in_frame(FAKE)
            await framed.page.screenshot(SCREENSHOTS / f"overlay-hostile-{kind}-{width}x{height}.png")
            where = f"{kind} at {width}px"
            # readerproxy's panel: shown, and what is drawn at its centre is the panel itself
            assert shell["visible"] and shell["onTop"], (where, shell)
            assert "How was this chosen?" in shell["text"] and "heuristic" in shell["text"]
            assert shell["bodyShown"] and shell["styles"] == 0 and shell["iframes"] == 1, where
            # the page's frame: sandboxed, no script, an opaque origin
            sandbox = (shell["sandbox"] or "").split()
            assert shell["sandbox"] is not None and "allow-scripts" not in sandbox, where
            assert "allow-same-origin" not in sandbox and fake["origin"] == "null", where
            # the fake box is drawn (the attack did apply) but only inside the frame's rectangle
            assert shell["frameHit"] == "rpo-frame", where
            if kind != "attributes":  # style attributes alone cannot show what `display:none` hides
                assert fake["drawn"], (where, fake)
            frame, panel, box = shell["frame"], shell["panel"], fake["box"]
            assert fake["innerWidth"] <= frame["width"] and fake["innerHeight"] <= frame["height"], where
            if box is not None:
                assert box["x"] >= 0 and box["y"] >= 0, where
                assert box["x"] + box["width"] <= frame["width"] + 0.5, where
                assert box["y"] + box["height"] <= frame["height"] + 0.5, where
            # the frame and the panel do not overlap: nothing of the page lies over the panel
            if mobile:
                assert frame["y"] + frame["height"] <= panel["y"] + 0.5, where
            else:
                assert frame["x"] + frame["width"] <= panel["x"] + 0.5, where
            assert shell["url"] == url, where  # still readerproxy's address, and it says so


async def test_the_xss_harness_sees_what_the_overlay_frame_requests() -> None:
    """The control for tests/web/test_attacks_xss.py's overlay rows: an image the page's frame loads from
    the attacker host is seen by its `Watch` (images load from anywhere, as in the reader view)."""
    from test_attacks_corpus import ATTACKER
    from test_attacks_xss import Watch, frames_in_process

    app = web.Application()

    async def page(request: web.Request) -> web.Response:
        image = f'<img src="http://{ATTACKER}/seen.png" alt="">'
        return web.Response(
            text=f"<!doctype html><html><body><article><h1>T</h1><p>{TEXT}{image}</p></article></body></html>",
            content_type="text/html",
        )

    app.router.add_get("/page", page)
    async with frames_in_process() as chromium, serve_app(app) as site, serve(test_settings()) as server:
        watch = Watch(await chromium.new_page())
        await watch.start()
        result = await watch.visit(server.read_url(f"{site}/page", view="overlay"))
        await watch.stop()
    assert result["attacker"] == [f"http://{ATTACKER}/seen.png"], result
