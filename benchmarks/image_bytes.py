"""Bytes per reader page on a phone, images from the original sites vs through readerproxy (not a test).

    .venv/bin/python benchmarks/image_bytes.py [--limit N] [--width 375] [--scale 2] [--json FILE]

The dataset pages (../shared/datasets) are served by a local site with every image address moved
onto it: an image is answered with a photo-like JPEG (quality 85) as wide as the page says its file
is (the srcset `w` descriptor, else the `width` attribute, else 1600 px), since the real files are
not in the datasets. Two reader servers read the same pages: `--images direct` (the images as the
page names them, the way reader views loaded them before the /image route) and the default
`--images proxy` (resized for the screen and re-encoded as WebP). Each reader view is opened in
headless Chromium at WIDTH CSS px and SCALE device pixels per CSS px, and every byte the browser
received is counted (DevTools `Network.loadingFinished`): once after load (the first screen), and
once after scrolling to the end (every image the reader would see). Only pages whose reader view
has an image are reported.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import gzip
import html
import io
import json
import re
import statistics
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

from aiohttp import web
from PIL import Image, ImageFilter

from readerproxy.engine.output import parse_srcset

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from support.chromium import Chromium, Page  # noqa: E402
from support.reader_server import serve, serve_app, test_settings  # noqa: E402

DATASETS = REPO.parent / "shared" / "datasets"
DEFAULT_WIDTH = 1600
_TAG = re.compile(r"<(?:img|source)\b[^>]*>", re.I)
_URL_ATTRIBUTE = re.compile(
    r"""(\s(?:src|srcset|data-src|data-srcset|data-lazy-src|data-lazy-srcset|data-original)\s*=\s*)(["'])(.*?)\2""",
    re.I | re.S,
)
_WIDTH = re.compile(r"""\swidth\s*=\s*["']?(\d{2,4})""", re.I)


def pages(limit: int | None) -> list[tuple[str, bytes]]:
    found = [
        (p.parent.name, p.read_bytes()) for p in sorted((DATASETS / "readability").glob("*/source.html"))
    ]
    found += [
        (p.name.removesuffix(".html.gz"), gzip.decompress(p.read_bytes()))
        for p in sorted((DATASETS / "scrapinghub" / "html").glob("*.html.gz"))
    ]
    return found[:limit] if limit else found


@functools.cache
def photo(width: int) -> bytes:
    """A photo-like JPEG: smooth shapes, blurred noise for texture (compresses as photos do)."""
    width = max(16, min(width, 4000))
    height = max(16, width * 2 // 3)
    base = Image.radial_gradient("L").resize((width, height)).convert("RGB")
    noise = Image.effect_noise((width, height), 60).filter(ImageFilter.GaussianBlur(1.2)).convert("RGB")
    tint = Image.new("RGB", (width, height), (90, 140, 60))
    image = Image.blend(Image.blend(base, tint, 0.4), noise, 0.35)
    out = io.BytesIO()
    image.save(out, "JPEG", quality=85)
    return out.getvalue()


class Site:
    """The dataset pages with their images moved onto this site, and the images themselves."""

    def __init__(self, documents: list[tuple[str, bytes]]) -> None:
        self.documents = dict(documents)
        self.widths: dict[str, int] = {}  # image path on this site -> the width its file has
        self.base = ""

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/page/{name}", self.page)
        app.router.add_get("/{tail:.*}", self.image)
        return app

    async def page(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        body = self.documents[name].decode("utf-8", "replace")
        page_url = f"https://example.com/{name}/"
        return web.Response(
            text=_TAG.sub(lambda m: self.move(m[0], page_url), body), content_type="text/html"
        )

    def move(self, tag: str, page_url: str) -> str:
        """One <img>/<source> tag with its image addresses on this site (widths noted)."""
        declared = _WIDTH.search(tag)

        def candidates(match: re.Match[str]) -> str:
            value = html.unescape(match[3])
            is_srcset = "srcset" in match[1].lower()
            found = parse_srcset(value) if is_srcset else [(value.strip(), "")]
            out = []
            for address, descriptors in found:
                parts = [address, *descriptors.split()]
                url = urljoin(page_url, address)
                if not url.startswith(("http://", "https://")):
                    out.append(" ".join(parts))
                    continue
                split = urlsplit(url)
                path = f"/img/{split.hostname}{split.path}" + (f"?{split.query}" if split.query else "")
                width = next((int(d[:-1]) for d in parts[1:] if d[:-1].isdigit() and d.endswith("w")), 0)
                if not width and declared and int(declared[1]) >= 50:
                    width = int(declared[1])
                self.widths[path] = max(self.widths.get(path, 0), width or DEFAULT_WIDTH)
                out.append(" ".join([self.base + path, *parts[1:]]))
            return f"{match[1]}{match[2]}{html.escape(', '.join(out))}{match[2]}"

        return _URL_ATTRIBUTE.sub(candidates, tag)

    async def image(self, request: web.Request) -> web.Response:
        width = self.widths.get(request.path_qs, self.widths.get(request.path, DEFAULT_WIDTH))
        body = await asyncio.to_thread(photo, width)
        return web.Response(body=body, headers={"Content-Type": "image/jpeg", "Cache-Control": "no-store"})


async def measure(browser: Chromium, url: str, width: int, scale: int) -> tuple[int, int, int, int]:
    """(bytes after load, bytes after scrolling to the end, image requests, images shown)."""
    target = await browser.send("Target.createTarget", {"url": "about:blank"})
    attached = await browser.send("Target.attachToTarget", {"targetId": target["targetId"], "flatten": True})
    page = Page(browser, attached["sessionId"])
    received: dict[str, int] = {}
    images: set[str] = set()

    def finished(params: dict[str, Any]) -> None:
        received[params["requestId"]] = int(params.get("encodedDataLength", 0))

    def response(params: dict[str, Any]) -> None:
        if params.get("type") == "Image":
            images.add(params["requestId"])

    browser.on(page.session, "Network.loadingFinished", finished)
    browser.on(page.session, "Network.responseReceived", response)
    await page.send("Network.enable")
    await page.send("Network.setCacheDisabled", {"cacheDisabled": True})
    await page.send("Page.enable")
    await page.send(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": 812, "deviceScaleFactor": scale, "mobile": True},
    )
    await page.navigate(url)
    await asyncio.sleep(0.5)
    first = sum(received.values())
    height = await page.evaluate("document.documentElement.scrollHeight")
    for y in range(0, int(height) + 812, 600):
        await page.evaluate(f"window.scrollTo(0, {y})")
        await asyncio.sleep(0.05)
    pending = "[...document.querySelectorAll('.content img')].filter(i => !i.complete).length"
    for _ in range(100):  # every image the reader scrolled past has arrived (or failed), 10 s at most
        await asyncio.sleep(0.1)
        if not await page.evaluate(pending):
            break
    await asyncio.sleep(0.3)
    shown = await page.evaluate(
        "[...document.querySelectorAll('.content img')].filter(i => i.complete && i.naturalWidth).length"
    )
    total = sum(received.values())
    browser.on(page.session, "Network.loadingFinished", None)
    browser.on(page.session, "Network.responseReceived", None)
    await browser.send("Target.closeTarget", {"targetId": target["targetId"]})
    return first, total, len(images), int(shown)


async def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    site = Site(pages(None))
    rows: list[dict[str, Any]] = []
    browser = Chromium()
    await browser.start()
    try:
        async with (
            serve_app(site.app()) as base,
            serve(test_settings(rate_limit=0, images="direct")) as before,
            serve(test_settings(rate_limit=0)) as after,
        ):
            site.base = base
            for name in site.documents:
                if args.limit and len(rows) >= args.limit:
                    break
                target = f"{base}/page/{name}"
                old = await measure(browser, before.read_url(target), args.width, args.scale)
                if old[3] == 0:
                    continue  # no image in this reader view
                new = await measure(browser, after.read_url(target), args.width, args.scale)
                rows.append(
                    {
                        "page": name,
                        "images": old[3],
                        "before_first": old[0],
                        "before_all": old[1],
                        "after_first": new[0],
                        "after_all": new[1],
                        "after_images": new[3],
                    }
                )
                print(
                    f"{name:40s} {old[3]:3d} img  first {old[0] / 1024:8.1f} -> {new[0] / 1024:7.1f} KB"
                    f"   all {old[1] / 1024:8.1f} -> {new[1] / 1024:7.1f} KB",
                    flush=True,
                )
    finally:
        await browser.close()
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--limit", type=int, default=20, help="pages with images to measure (0: all)")
    parser.add_argument("--width", type=int, default=375)
    parser.add_argument("--scale", type=int, default=2)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--smoke", action="store_true", help="one page with images")
    args = parser.parse_args()
    if args.smoke:
        args.limit = 1
    rows = asyncio.run(run(args))
    if not rows:
        print("no page with images")
        return 1

    def kb(key: str) -> str:
        values = [row[key] / 1024 for row in rows]
        return f"median {statistics.median(values):8.1f} KB  total {sum(values):9.1f} KB"

    print(f"\n{len(rows)} pages with images, {args.width} px at {args.scale}x")
    for label, key in (
        ("first screen, before", "before_first"),
        ("first screen, after ", "after_first"),
        ("whole page,   before", "before_all"),
        ("whole page,   after ", "after_all"),
    ):
        print(f"{label}  {kb(key)}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
