"""Images through readerproxy: the reader view's images resized for the screen and fetched privately.

A reader view never loads an image from the original site: `route_images` rewrites every `<img>`
and `<picture><source>` of the (already sanitised) article HTML to `GET /image?w=WIDTH&url=ORIGINAL`
on this server, with a `srcset` of widths for 1×, 2× and 3× screens and a `sizes` that matches the
reader column, so the browser asks for the smallest variant that is sharp on its screen. The
Content-Security-Policy can then say `img-src 'self' data:`: the sites never learn what is read.

`GET /image` (`image_view`):

- fetches the original through the server's `Fetcher` (the same SSRF guard on every redirect hop,
  size caps and timeouts as a page); a response that is not an image (by its Content-Type, and by
  what Pillow finds in the bytes) is refused with 415, so the route is never a way to fetch pages;
- decodes it with Pillow in a thread (never on the event loop), at most `DECODES` at once, with a
  pixel limit against decompression bombs (`MAX_PIXELS`, 413) and JPEG's draft mode (decoding at
  1/2, 1/4 or 1/8 scale when the target is that much smaller); applies the EXIF orientation and
  drops all metadata;
- resizes to the width asked for (snapped to `WIDTHS` so arbitrary widths cannot multiply the
  cache; never enlarged) and re-encodes as WebP when the client's Accept lists `image/webp`, else
  JPEG (PNG for an image with transparency). An animated GIF or WebP stays animated as WebP within
  `ANIMATION_BUDGET`, and is otherwise reduced to its first frame;
- with `Save-Data: on`, halves the width and lowers the quality (and keeps only the first frame);
- caches the result in a `LayeredCache` of its own memory bound (`Settings.image_memory_bytes`)
  over the server's persistent backend (bounded by `--cache-max-bytes`), one computation per
  variant at a time (`SingleFlight`).

`--images direct` turns all of this off: images load from the original sites, and the CSP allows
them (`http: https:`).
"""

from __future__ import annotations

import asyncio
import hashlib
import html
import io
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import quote

from aiohttp import web
from PIL import Image, ImageOps, ImageSequence, UnidentifiedImageError

from ..engine.output import parse_srcset
from .appkeys import READER, RENDERER, SETTINGS
from .cache import ENTRY_SHARE, LayeredCache, MemoryLRU
from .fetch import FetchError, media_type, validate_url
from .singleflight import SingleFlight

#: The route's path.
ROUTE = "/image"
#: The widths a variant can have (CSS pixels × device pixel ratio): a 375 px phone at 1×, 2× and
#: 3×, and the desktop column (up to ~720 px) at 1× and 2×. A request for any other width gets the
#: next one up.
WIDTHS = (160, 375, 750, 1125, 1500)
#: The srcset widths offered for an article image.
SRCSET_WIDTHS = (375, 750, 1125, 1500)
#: The width of an image's plain `src` (a browser without srcset support).
DEFAULT_WIDTH = 750
#: How wide an article image is drawn: the whole viewport on a phone, the column (at most ~720 px
#: with the largest text and the wide column) on a desktop.
SIZES = "(max-width: 720px) 100vw, 720px"
#: Decoded pixels an upstream image may have (8000 × 5000): more is a 413 before anything is
#: decoded (a small file can declare a huge canvas: a decompression bomb).
MAX_PIXELS = 40_000_000
#: An animated image stays animated while its frames × output pixels stay within this and it has at
#: most `MAX_FRAMES` frames; otherwise its first frame is served.
ANIMATION_BUDGET = 24_000_000
MAX_FRAMES = 240
#: Decodes and encodes at once (each in a thread; Pillow releases the GIL while it works).
DECODES = 2
#: Encoder quality: normal, and with Save-Data: on.
QUALITY = {"webp": 75, "jpeg": 78}
SAVE_DATA_QUALITY = {"webp": 50, "jpeg": 55}
#: Seconds a made variant is kept (images rarely change; their URLs usually change when they do).
TTL = 7 * 24 * 3600.0
#: Upstream Content-Types read as images; an empty or generic type is accepted when the bytes are
#: an image. SVG is not: it can carry scripts and Pillow cannot draw it.
GENERIC_TYPES = frozenset({"", "application/octet-stream", "binary/octet-stream"})
#: The formats Pillow may decode here (it identifies many more; these are the web's).
DECODABLE = frozenset({"JPEG", "PNG", "GIF", "WEBP", "AVIF", "BMP", "MPO"})
CACHE_VERSION = 1

Image.MAX_IMAGE_PIXELS = MAX_PIXELS  # Pillow's own bomb check (a warning past it, an error at 2×)


# ---- the article's images, rewritten to the route -----------------------------------------------

_MEDIA_TAG = re.compile(r"<(img|source)\b([^>]*)>", re.I)
_ATTRIBUTE = re.compile(r'\s([a-zA-Z][\w:-]*)="([^"]*)"')


def image_url(url: str, width: int) -> str:
    """The route's root-relative URL for an original image at a width. `/` and `:` stay readable in
    the original's address; everything else that could end a srcset candidate or the query is
    escaped."""
    return f"{ROUTE}?w={width}&url={quote(url, safe=':/')}"


def image_srcset(url: str) -> str:
    """A srcset of the route's variants of one original image."""
    return ", ".join(f"{image_url(url, width)} {width}w" for width in SRCSET_WIDTHS)


def image_sizes(width: str | None) -> str:
    """The `sizes` of an image: SIZES, or for one whose `width` attribute makes it narrower than the
    column, that width (so a 100 px icon is not fetched at the column's width)."""
    if width and width.isdigit() and 0 < int(width) < 720:
        return f"(max-width: {int(width)}px) 100vw, {int(width)}px"
    return SIZES


def best_source(src: str | None, srcset: str | None) -> str | None:
    """The original to resize: the srcset's widest candidate (a `w` or `x` descriptor), else src.

    Only http(s) addresses qualify (data: images stay inline, other schemes are dropped)."""
    best: tuple[float, str] | None = None
    for candidate, descriptors in parse_srcset(srcset or ""):
        if not _fetchable(candidate):
            continue
        size = 1.0
        for descriptor in descriptors.split():
            try:
                if descriptor.endswith("w"):
                    size = float(descriptor[:-1])
                elif descriptor.endswith("x"):
                    size = float(descriptor[:-1]) * 1000  # 2x beats 1x; beside widths, a guess
            except ValueError:
                continue
        if best is None or size > best[0]:
            best = (size, candidate)
    if best is not None:
        return best[1]
    return src if src and _fetchable(src) else None


def _fetchable(url: str) -> bool:
    return url.lower().startswith(("http://", "https://"))


def route_images(fragment: str) -> str:
    """Every `<img>` and `<source>` of sanitised article HTML loading through the route.

    An `<img>` gets `src` (DEFAULT_WIDTH), `srcset` (SRCSET_WIDTHS), `sizes` (SIZES),
    `loading="lazy"` after the first image and `decoding="async"`; a `<source>` gets the same
    srcset and sizes and loses its `type` (the route answers WebP or JPEG whatever the original
    was). `data:` images are left as they are; any other image the route cannot fetch is dropped."""
    seen = 0

    def rewrite(match: re.Match[str]) -> str:
        nonlocal seen
        tag = match[1].lower()
        attributes = [(name.lower(), value) for name, value in _ATTRIBUTE.findall(match[2])]
        values = dict(attributes)
        src = html.unescape(values.get("src", ""))
        if tag == "img" and src.lower().startswith("data:image/") and "srcset" not in values:
            return match[0]
        original = best_source(src, html.unescape(values.get("srcset", "")))
        if original is None:
            return "" if tag == "source" else _without(attributes, ("src", "srcset", "sizes"), "img")
        kept = [
            (name, value)
            for name, value in attributes
            if name not in ("src", "srcset", "sizes", "type", "loading", "decoding")
        ]
        added = [("srcset", image_srcset(original)), ("sizes", image_sizes(values.get("width")))]
        if tag == "img":
            added.insert(0, ("src", image_url(original, DEFAULT_WIDTH)))
            if seen:
                added.append(("loading", "lazy"))
            added.append(("decoding", "async"))
            seen += 1
        return _tag(tag, kept + [(name, html.escape(value, quote=True)) for name, value in added])

    return _MEDIA_TAG.sub(rewrite, fragment)


def _without(attributes: list[tuple[str, str]], names: tuple[str, ...], tag: str) -> str:
    return _tag(tag, [(name, value) for name, value in attributes if name not in names])


def _tag(tag: str, attributes: list[tuple[str, str]]) -> str:
    return "<" + tag + "".join(f' {name}="{value}"' for name, value in attributes) + ">"


_ROUTED = re.compile(r'(\s(?:src|srcset)=")([^"]*)"')


def route_images_to(page: str, origin: str) -> str:
    """A reader page's image URLs on another origin (`http://readerproxy` for proxy mode's reader
    views, which are served on the article's own origin)."""

    def absolute(match: re.Match[str]) -> str:
        value = match[2]
        if ROUTE + "?" not in value:
            return match[0]
        value = re.sub(r"(^|,\s*)" + re.escape(ROUTE) + r"\?", lambda m: m[1] + origin + ROUTE + "?", value)
        return f'{match[1]}{value}"'

    return _ROUTED.sub(absolute, page)


# ---- the route ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Variant:
    """One made image: what the route answers for one original, width, format and quality."""

    body: bytes
    content_type: str

    def to_bytes(self) -> bytes:
        return self.content_type.encode("ascii") + b"\n" + self.body

    @classmethod
    def from_bytes(cls, data: bytes) -> Variant:
        content_type, _, body = data.partition(b"\n")
        return cls(body, content_type.decode("ascii"))


class NotAnImage(FetchError):
    """The original is not an image the route serves (415)."""

    def __init__(self, message: str, url: str) -> None:
        super().__init__("not_image", 415, message, url)


def snap_width(asked: int) -> int:
    """The smallest of WIDTHS at least as wide as asked (the widest when none is)."""
    return next((width for width in WIDTHS if width >= asked), WIDTHS[-1])


def wants_webp(accept: str | None) -> bool:
    """Whether the client's Accept lists WebP (every current browser's image requests do)."""
    return "image/webp" in (accept or "").lower()


def saves_data(header: str | None) -> bool:
    """`Save-Data: on` (the Client Hint a browser's data saver sends)."""
    return (header or "").strip().lower() == "on"


class ImageService:
    """The route's state: its cache (created on first use, over the reader's backend), the single
    flight of variants being made, and the bound on decodes at once."""

    def __init__(self, memory_bytes: int) -> None:
        self.memory_bytes = memory_bytes
        self.cache: LayeredCache | None = None
        self.flights = SingleFlight()
        self.decodes = asyncio.Semaphore(DECODES)

    def cache_for(self, request: web.Request) -> LayeredCache:
        if self.cache is None:
            reader_cache = request.app[READER].cache
            memory = MemoryLRU(self.memory_bytes, max_entry_bytes=self.memory_bytes // ENTRY_SHARE)
            backend = reader_cache.backend if reader_cache is not None else None
            self.cache = LayeredCache(memory, backend)  # the backend is the reader's: it closes it
        return self.cache

    async def variant(self, request: web.Request, url: str, width: int, fmt: str, save_data: bool) -> Variant:
        """The image at `url` as asked: from the cache, or fetched, resized and encoded once."""
        key = (
            "img:"
            + hashlib.sha256(f"{CACHE_VERSION}|{url}|{width}|{fmt}|{int(save_data)}".encode()).hexdigest()
        )
        cache = self.cache_for(request)
        stored = await cache.get(key)
        if stored is not None:
            return Variant.from_bytes(stored)

        async def make() -> Variant:
            fetcher = request.app[READER].fetcher
            if fetcher is None:
                raise web.HTTPServiceUnavailable(reason="starting")
            page = await fetcher.fetch(url, html_only=False)
            declared = media_type(page.content_type)
            if (
                not (declared.startswith("image/") or declared in GENERIC_TYPES)
                or declared == "image/svg+xml"
            ):
                raise NotAnImage(f"the address is not an image ({declared or 'no type'})", url)
            async with self.decodes:
                made = await asyncio.to_thread(transcode, page.body, width, fmt, save_data, url)
            await cache.set(key, made.to_bytes(), TTL)
            return made

        return await self.flights.run(key, make)


IMAGES = web.AppKey("images", ImageService)


async def image_view(request: web.Request) -> web.Response:
    """GET /image?w=WIDTH&url=ORIGINAL — the original image resized and re-encoded (see the module)."""
    raw = request.query.get("url", "").strip()
    if not raw:
        raise FetchError("bad_url", 400, "Give the image's address as ?url=…")
    url = validate_url(raw)
    try:
        asked = int(request.query.get("w", str(DEFAULT_WIDTH)))
    except ValueError:
        raise FetchError("bad_url", 400, "w must be a width in pixels", url) from None
    save_data = saves_data(request.headers.get("Save-Data"))
    width = snap_width(max(1, asked))
    if save_data:
        width = snap_width(max(WIDTHS[0], width // 2))
    fmt = "webp" if wants_webp(request.headers.get("Accept")) else "jpeg"
    made = await request.app[IMAGES].variant(request, url, width, fmt, save_data)
    response = web.Response(body=made.body)
    response.headers["Content-Type"] = made.content_type
    response.headers["Cache-Control"] = "public, max-age=604800"
    response.headers["Vary"] = "Accept, Save-Data"
    response.headers["Content-Disposition"] = "inline"
    return response


def install_images(app: web.Application) -> None:
    """The route, its state, and the reader pages' image rewriting (or, with `--images direct`,
    none of it: images come from the original sites and the CSP allows them)."""
    settings = app[SETTINGS]
    if settings.images == "direct":
        app.on_response_prepare.append(_direct_csp)
        return
    app[RENDERER].rewrite_images = route_images
    app[IMAGES] = ImageService(settings.image_memory_bytes)
    app.router.add_get(ROUTE, image_view, name="image")


#: The CSP's image sources with the route, and without it (`--images direct`).
SELF_IMAGES = "img-src 'self' data:"
DIRECT_IMAGES = "img-src http: https: data:"


async def _direct_csp(request: web.Request, response: web.StreamResponse) -> None:
    policy = response.headers.get("Content-Security-Policy")
    if policy is not None and SELF_IMAGES in policy:
        response.headers["Content-Security-Policy"] = policy.replace(SELF_IMAGES, DIRECT_IMAGES)


# ---- Pillow (in a worker thread) ----------------------------------------------------------------


def transcode(body: bytes, width: int, fmt: str, save_data: bool, url: str) -> Variant:
    """The image in `body` at most `width` pixels wide, as WebP or JPEG (PNG for a transparent
    image when WebP is not accepted). Runs in a thread. NotAnImage when Pillow finds no image it
    serves; FetchError 413 past MAX_PIXELS, 502 for a broken image."""
    try:
        with Image.open(io.BytesIO(body)) as image:
            if image.format not in DECODABLE:
                raise NotAnImage(f"the address is not an image the reader shows ({image.format})", url)
            if image.width * image.height > MAX_PIXELS:
                raise FetchError("too_large", 413, f"the image has more than {MAX_PIXELS} pixels", url)
            quality = (SAVE_DATA_QUALITY if save_data else QUALITY)[fmt]
            frames = getattr(image, "n_frames", 1)
            scale = min(1.0, width / image.width)
            out_pixels = max(1, round(image.width * scale)) * max(1, round(image.height * scale))
            if (
                frames > 1
                and fmt == "webp"
                and not save_data
                and frames <= MAX_FRAMES
                and frames * out_pixels <= ANIMATION_BUDGET
                and frames * image.width * image.height <= 4 * MAX_PIXELS
            ):
                return _animated(image, width, quality)
            return _still(image, width, fmt, quality)
    except UnidentifiedImageError:
        raise NotAnImage("the address is not an image", url) from None
    except Image.DecompressionBombError:
        raise FetchError("too_large", 413, f"the image has more than {MAX_PIXELS} pixels", url) from None
    except (OSError, ValueError, SyntaxError, EOFError) as exc:  # Pillow's ways of saying "broken"
        raise FetchError("upstream", 502, f"the image could not be read ({exc})", url) from None


def _target(size: tuple[int, int], width: int) -> tuple[int, int]:
    w, h = size
    if w <= width:
        return w, h
    return width, max(1, round(h * width / w))


def _still(image: Image.Image, width: int, fmt: str, quality: int) -> Variant:
    """The first frame, oriented, resized and encoded."""
    if image.format == "JPEG" or image.format == "MPO":
        scale = min(1.0, width / max(1, _oriented(image)[0]))
        image.draft("RGB", (math.ceil(image.width * scale), math.ceil(image.height * scale)))
    frame = ImageOps.exif_transpose(image) or image
    alpha = frame.mode in ("RGBA", "LA", "PA") or (frame.mode == "P" and "transparency" in frame.info)
    frame = frame.convert("RGBA" if alpha else "RGB")
    frame = _resized(frame, width)
    out = io.BytesIO()
    if fmt == "webp":
        frame.save(out, "WEBP", quality=quality, method=4)
        return Variant(out.getvalue(), "image/webp")
    if alpha:
        frame.save(out, "PNG", optimize=True)
        return Variant(out.getvalue(), "image/png")
    frame.save(out, "JPEG", quality=quality, optimize=True, progressive=True)
    return Variant(out.getvalue(), "image/jpeg")


def _oriented(image: Image.Image) -> tuple[int, int]:
    """The image's size once its EXIF orientation is applied."""
    orientation = image.getexif().get(0x0112, 1)
    return (image.height, image.width) if orientation in (5, 6, 7, 8) else (image.width, image.height)


def _resized(frame: Image.Image, width: int) -> Image.Image:
    size = _target(frame.size, width)
    if size == frame.size:
        return frame
    return frame.resize(size, Image.Resampling.LANCZOS, reducing_gap=3.0)


def _animated(image: Image.Image, width: int, quality: int) -> Variant:
    """Every frame resized, as an animated WebP with the original's timing and looping."""
    frames: list[Image.Image] = []
    durations: list[int] = []
    for frame in _frames(image):
        durations.append(int(frame.info.get("duration", image.info.get("duration", 100)) or 100))
        frames.append(_resized(frame.convert("RGBA"), width))
    out = io.BytesIO()
    frames[0].save(
        out,
        "WEBP",
        save_all=True,
        append_images=frames[1:],
        duration=durations,
        loop=int(image.info.get("loop", 0)),
        quality=quality,
        method=4,
    )
    return Variant(out.getvalue(), "image/webp")


def _frames(image: Image.Image) -> Iterator[Image.Image]:
    for frame in ImageSequence.Iterator(image):
        yield frame.copy()
