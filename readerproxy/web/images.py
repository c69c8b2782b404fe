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
- decodes it with Pillow in one of `DECODES` worker processes of its own (never on the event loop,
  never in the server's process), killed at `DEADLINE` (413), with a pixel limit against
  decompression bombs on the declared canvas and on every frame before it is decoded
  (`MAX_PIXELS`, 413) and JPEG's draft mode (decoding at 1/2, 1/4 or 1/8 scale when the target is
  that much smaller); every decoder failure is a 415; applies the EXIF orientation and drops all
  metadata;
- holds one of its client's image slots from the fetch to the encoding (a quarter of the fetch
  slots per client address, a bounded wait, then 503 `busy`), so one client's images cannot take
  every fetch slot;
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
import contextlib
import hashlib
import html
import io
import math
import re
import warnings
from collections.abc import AsyncIterator
from dataclasses import dataclass
from urllib.parse import quote

from aiohttp import web
from PIL import Image, ImageOps, UnidentifiedImageError

from ..engine.urls import choose_candidate, parse_srcset
from .appkeys import READER, RENDERER, SETTINGS
from .cache import ENTRY_SHARE, LayeredCache, MemoryLRU
from .fetch import FetchError, media_type, validate_url
from .limits import Busy, KeyedSemaphores
from .singleflight import SingleFlight
from .workers import CLIENT, Call, ExtractionFailed, ExtractionTimeout, Overloaded, WorkerPool

#: The route's path.
ROUTE = "/image"
#: The widths a variant can have (CSS pixels × device pixel ratio): a 375 px phone at 1×, 2× and
#: 3×, and the desktop column (up to ~720 px) at 1× and 2×. A request for any other width gets the
#: next one up.
WIDTHS = (160, 375, 750, 1125, 1500)
#: The width a srcset's density stands for, per 1x, when the original is chosen (beside widths, a
#: guess).
DENSITY_WIDTH = 1000
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

#: Seconds an image may take to decode, resize and encode in its worker: the worker is then killed
#: (a 40 Mpx photo takes about a second; Pillow cannot be interrupted in a thread).
DEADLINE = 10.0
#: Image jobs waiting for a worker before one more is answered 503 at once.
DECODE_QUEUE = 32
#: An image worker whose peak resident size passed this is replaced after its job, so a burst of
#: big images does not leave its memory behind.
WORKER_MAX_RSS = 512 * 1024 * 1024
#: The share of the fetch slots (`[fetch] max_fetches`) one client's images may hold at once, and
#: how many times that may wait behind them before the next is a 503 at once: one client asking
#: for 120 slow images must leave the other clients most of the slots.
CLIENT_SHARE = 4
CLIENT_QUEUE = 3

# Pillow's own bomb check, at every place it sizes a buffer (the header, and a GIF frame growing
# the canvas or its disposal area): an error past MAX_PIXELS (it raises at twice its limit), the
# warning it gives below that silenced (the route's own check is the answer).
Image.MAX_IMAGE_PIXELS = MAX_PIXELS // 2
warnings.filterwarnings("ignore", category=Image.DecompressionBombWarning)


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
    """The original to resize: the srcset's widest candidate (`urls.choose_candidate`; a density
    counts as `DENSITY_WIDTH` px per 1x, so 2x beats 1x), else src.

    Only http(s) addresses qualify (data: images stay inline, other schemes are dropped)."""
    candidates = [pair for pair in parse_srcset(srcset or "") if _fetchable(pair[0])]
    best = choose_candidate(candidates, density_width=DENSITY_WIDTH)
    if best is not None:
        return best
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
    flight of variants being made, each client's share of the fetches, and the image workers.

    Why worker processes of its own (`WorkerPool`, `DECODES` of them, started on the first image):
    Pillow cannot be stopped in a thread, and a hostile image is a few kilobytes that decode for a
    minute into gigabytes; a process is killed at `DEADLINE` and its memory goes with it. Not the
    extraction workers: a page of 30 images would queue behind, and delay, the reads themselves."""

    def __init__(self, memory_bytes: int, *, max_fetches: int = 64, queue_timeout: float = 10.0) -> None:
        self.memory_bytes = memory_bytes
        self.cache: LayeredCache | None = None
        self.flights = SingleFlight()
        self.per_client = max(1, max_fetches // CLIENT_SHARE)
        self.queue_timeout = queue_timeout
        self._clients = KeyedSemaphores(self.per_client)
        self._workers: WorkerPool | None = None
        self._starting: asyncio.Task[WorkerPool] | None = None

    def cache_for(self, request: web.Request) -> LayeredCache:
        if self.cache is None:
            reader_cache = request.app[READER].cache
            memory = MemoryLRU(self.memory_bytes, max_entry_bytes=self.memory_bytes // ENTRY_SHARE)
            backend = reader_cache.backend if reader_cache is not None else None
            self.cache = LayeredCache(memory, backend)  # the backend is the reader's: it closes it
        return self.cache

    async def workers(self) -> WorkerPool:
        """The image workers, started by the first caller (the others wait for the same start)."""
        if self._workers is not None:
            return self._workers
        if self._starting is None:
            self._starting = asyncio.ensure_future(self._start())
        return await asyncio.shield(self._starting)

    async def _start(self) -> WorkerPool:
        pool = WorkerPool(
            DECODES,
            deadline=DEADLINE,
            queue_limit=DECODE_QUEUE,
            max_rss_bytes=WORKER_MAX_RSS,
            per_client=1,
        )
        await pool.start()
        self._workers = pool
        return pool

    async def close(self) -> None:
        """Stop the image workers (a start in progress is awaited first)."""
        if self._starting is not None:
            with contextlib.suppress(Exception):
                await self._starting
        if self._workers is not None:
            await self._workers.close()

    async def decode(self, body: bytes, width: int, fmt: str, save_data: bool, url: str) -> Variant:
        """`transcode` in an image worker, under `DEADLINE`: past it, or when the worker dies (the
        system killing it for its memory), the image is too costly to show (413)."""
        pool = await self.workers()
        try:
            made: Variant = await pool.run(Call(transcode, (body, width, fmt, save_data, url)))
        except ExtractionTimeout:
            raise FetchError(
                "too_large", 413, f"the image took longer than {DEADLINE:g} s to decode and was stopped", url
            ) from None
        except ExtractionFailed:
            raise FetchError("too_large", 413, "decoding the image stopped its worker", url) from None
        except Overloaded as exc:
            raise Busy("too many images are being resized; try again shortly", exc.retry_after, url) from None
        return made

    @contextlib.asynccontextmanager
    async def client_share(self, url: str) -> AsyncIterator[None]:
        """One of this client's `per_client` image slots (its address, `workers.CLIENT`), waited for
        at most `queue_timeout` seconds; past `CLIENT_QUEUE` times the share already waiting, a 503
        at once. Held from the fetch to the encoding, so one client's slow images hold at most
        `max_fetches / CLIENT_SHARE` of the fetch slots."""
        client = CLIENT.get()
        if self._clients.users(client) >= self.per_client * (1 + CLIENT_QUEUE):
            raise Busy(
                f"this address already has {self._clients.users(client)} images being fetched; "
                "try again when they are done",
                retry_after=max(1, round(self.queue_timeout / 2)),
                url=url,
            )
        share = self._clients.join(client)
        acquired = False
        try:
            try:
                async with asyncio.timeout(self.queue_timeout):
                    await share.acquire()
                    acquired = True
            except TimeoutError:
                raise Busy(
                    f"this address's other images took the {self.per_client} it may fetch at once "
                    f"for {self.queue_timeout:g} s; try again shortly",
                    retry_after=max(1, round(self.queue_timeout / 2)),
                    url=url,
                ) from None
            yield
        finally:
            if acquired:
                share.release()
            self._clients.leave(client)

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
            made = await self.decode(page.body, width, fmt, save_data, url)
            await cache.set(key, made.to_bytes(), TTL)
            return made

        async with self.client_share(url):
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
    app[IMAGES] = ImageService(
        settings.image_memory_bytes,
        max_fetches=settings.fetch.max_fetches,
        queue_timeout=settings.fetch.queue_timeout,
    )
    app.router.add_get(ROUTE, image_view, name="image")
    app.on_cleanup.append(_close_images)


async def _close_images(app: web.Application) -> None:
    await app[IMAGES].close()


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
    image when WebP is not accepted). Runs in an image worker process (`ImageService`), under its
    deadline. NotAnImage (415) when Pillow finds no image it serves or cannot decode it; FetchError
    413 past MAX_PIXELS, in the declared canvas or in any frame, or when it needs too much memory.

    Every failure is one of those two: a decoder's error on hostile bytes is the image's fault, and
    Pillow has more ways to say so (RuntimeError from an encoder, struct.error, ZeroDivisionError
    on a broken header, ...) than any list of them would keep up with."""
    try:
        with Image.open(io.BytesIO(body)) as image:
            if image.format not in DECODABLE:
                raise NotAnImage(f"the address is not an image the reader shows ({image.format})", url)
            _check_pixels(image.size, url)
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
                animated = _animated(image, frames, width, quality, url)
                if animated is not None:
                    return animated
        # a frame outgrew the canvas it declared: its first frame, from a fresh decoder (seeking
        # back would keep the grown canvas)
        with Image.open(io.BytesIO(body)) as image:
            _check_pixels(image.size, url)
            return _still(image, width, fmt, quality)
    except FetchError:
        raise
    except UnidentifiedImageError:
        raise NotAnImage("the address is not an image", url) from None
    except Image.DecompressionBombError:
        raise _too_many_pixels(url) from None
    except MemoryError:
        raise FetchError("too_large", 413, "the image needs too much memory to decode", url) from None
    except Exception as exc:  # every decoder failure on these bytes is the image's
        raise NotAnImage(f"the image could not be decoded ({type(exc).__name__}: {exc})", url) from None


def _too_many_pixels(url: str) -> FetchError:
    return FetchError("too_large", 413, f"the image has more than {MAX_PIXELS} pixels", url)


def _check_pixels(size: tuple[int, int], url: str) -> None:
    """413 for a canvas or frame past MAX_PIXELS, checked before its pixels are decoded."""
    if size[0] * size[1] > MAX_PIXELS:
        raise _too_many_pixels(url)


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


def _animated(image: Image.Image, count: int, width: int, quality: int, url: str) -> Variant | None:
    """Every frame resized, as an animated WebP with the original's timing and looping; None when
    a frame is not the size of the first (a GIF frame may reach past the canvas its header
    declares, and Pillow grows the canvas to hold it: 20 frames of 8,900 x 8,900 pixels in a GIF
    declaring a small canvas took 2 GB and 43 s before an encoder refused frames of two sizes).

    Each frame's size is checked after seeking to it and before it is decoded, so no frame larger
    than the first is ever decoded; the caller's budget (frames x canvas) then bounds the work."""
    size = image.size
    frames: list[Image.Image] = []
    durations: list[int] = []
    for index in range(count):
        image.seek(index)
        if image.size != size:
            _check_pixels(image.size, url)
            return None
        durations.append(int(image.info.get("duration", 100) or 100))
        frames.append(_resized(image.convert("RGBA"), width))
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
