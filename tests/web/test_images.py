"""Images through readerproxy (`readerproxy/web/images.py`): the article's images rewritten to the
`/image` route, and the route itself against a real upstream on loopback: resized, re-encoded by
Accept, cached, Save-Data, and refused when the address is not an image or redirects to a private
address."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import io
import re
from collections import Counter
from collections.abc import AsyncIterator, Callable
from html import unescape

import aiohttp
import pytest
from aiohttp import web
from PIL import Image
from support.reader_server import serve, serve_app, test_settings

from readerproxy.app import Settings, load_settings
from readerproxy.proxy.addons import same_origin_links
from readerproxy.web import fetch as fetch_module
from readerproxy.web import images
from readerproxy.web.fetch import FetchError
from readerproxy.web.settings import SettingsError
from readerproxy.web.templating import Preferences, Renderer

WEBP_ACCEPT = "image/avif,image/webp,image/apng,image/*,*/*;q=0.8"  # Chromium's, for images
JPEG_ACCEPT = "image/png,image/*;q=0.8,*/*;q=0.5"  # an older browser without WebP


def photo(width: int, height: int, fmt: str = "JPEG", mode: str = "RGB") -> bytes:
    """A photo-like test image: gradients and a few shapes (compressible as a photo is)."""
    image = Image.linear_gradient("L").resize((width, height)).convert(mode)
    for x in range(0, width, max(1, width // 8)):
        image.paste(
            (200, 40, 40) if mode == "RGB" else (200, 40, 40, 128), (x, x % height, x + width // 16, height)
        )
    out = io.BytesIO()
    image.save(out, fmt, **({"quality": 90} if fmt == "JPEG" else {}))
    return out.getvalue()


def animated_gif(width: int, frames: int) -> bytes:
    shots = [Image.new("RGB", (width, width // 2), color=(i * 60, 90, 200 - i * 40)) for i in range(frames)]
    out = io.BytesIO()
    shots[0].save(out, "GIF", save_all=True, append_images=shots[1:], duration=120, loop=0)
    return out.getvalue()


def _gif_blocks(data: bytes) -> tuple[bytes, list[bytes]]:
    """A GIF's header (with its global colour table) and its top-level blocks (extensions and
    images, each with its data sub-blocks), without the trailer."""
    flags = data[10]
    pos = 13 + (3 << ((flags & 7) + 1) if flags & 0x80 else 0)
    head, blocks = data[:pos], []
    while data[pos] != 0x3B:
        start = pos
        if data[pos] == 0x21:  # extension: introducer, label
            pos += 2
        else:  # image: descriptor, local colour table, LZW code size
            local = data[pos + 9]
            pos += 10 + (3 << ((local & 7) + 1) if local & 0x80 else 0) + 1
        while data[pos]:
            pos += data[pos] + 1
        pos += 1
        blocks.append(data[start:pos])
    return head, blocks


@functools.cache
def growing_gif(side: int, frames: int) -> bytes:
    """An animated GIF declaring an 8 x 8 canvas whose later frames are `side` x `side` pixels (a
    frame may reach past the canvas; Pillow grows the canvas to hold it)."""
    small, big = io.BytesIO(), io.BytesIO()
    Image.new("P", (8, 8), 1).save(small, "GIF")
    Image.new("P", (side, side), 2).save(big, "GIF")
    head, first = _gif_blocks(small.getvalue())
    picture = next(block for block in _gif_blocks(big.getvalue())[1] if block[0] == 0x2C)
    return head + b"".join(first) + picture * (frames - 1) + b";"


@functools.cache
def slow_png() -> bytes:
    """A 5,000 x 5,000 PNG (25 Mpx, under MAX_PIXELS): a second or so to decode, resize and encode."""
    out = io.BytesIO()
    Image.linear_gradient("L").resize((5000, 5000)).save(out, "PNG", compress_level=1)
    return out.getvalue()


@functools.cache
def bomb_png() -> bytes:
    """A small PNG whose header declares 20,000 × 20,000 pixels (400 Mpx): never decoded."""
    image = Image.new("1", (20_000, 20_000))
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


BOMB = bomb_png
BIG = functools.cache(lambda: photo(2000, 1333))
#: What the test site serves: (body, Content-Type), made on first use.
BODIES: dict[str, Callable[[], tuple[bytes, str]]] = {
    "big.jpg": lambda: (BIG(), "image/jpeg"),
    "small.png": lambda: (photo(120, 80, "PNG"), "image/png"),
    "alpha.png": lambda: (photo(900, 300, "PNG", "RGBA"), "image/png"),
    "anim.gif": lambda: (animated_gif(1200, 4), "image/gif"),
    "bomb.png": lambda: (BOMB(), "image/png"),
    "growing.gif": lambda: (growing_gif(3000, 3), "image/gif"),
    "growing-bomb.gif": lambda: (growing_gif(6500, 20), "image/gif"),
    "slow.png": lambda: (slow_png(), "image/png"),
    "untyped": lambda: (BIG(), "application/octet-stream"),
    "page.html": lambda: (b"<!doctype html><title>x</title><p>not an image</p>", "text/html"),
    "lying.jpg": lambda: (b"<!doctype html><title>x</title><p>html with an image type</p>", "image/jpeg"),
    "icon.svg": lambda: (b'<svg xmlns="http://www.w3.org/2000/svg"/>', "image/svg+xml"),
}


class ImageSite:
    """An upstream with images, a page and redirects, counting requests by path."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.release = asyncio.Event()  # `held.png` answers once this is set

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/{name}", self.handle)
        return app

    async def handle(self, request: web.Request) -> web.StreamResponse:
        name = request.match_info["name"]
        self.counts[name] += 1
        if name == "to-private":
            raise web.HTTPFound("http://169.254.169.254/latest/meta-data/x.jpg")
        if name == "to-ten":
            raise web.HTTPFound("http://10.0.0.1/x.jpg")
        if name == "to-big":
            raise web.HTTPFound("/big.jpg")
        if name == "held.png":
            await self.release.wait()
            return web.Response(body=photo(120, 80, "PNG"), headers={"Content-Type": "image/png"})
        if name == "article":
            origin = f"http://127.0.0.1:{request.url.port}"  # also when read through the proxy as news.test
            figure = (
                f'<figure><img src="{origin}/small.png" '
                f'srcset="{origin}/small.png 120w, {origin}/big.jpg 2000w" '
                'alt="A big picture" width="2000" height="1333"><figcaption>The caption.</figcaption></figure>'
            )
            text = "<p>" + "Words of the article that a reader reads. " * 30 + "</p>"
            page = f"<!doctype html><html><head><title>Pictures</title></head><body><article><h1>Pictures</h1>{text}{figure}{text}</article></body></html>"
            return web.Response(text=page, content_type="text/html")
        if name not in BODIES:
            raise web.HTTPNotFound()
        body, content_type = BODIES[name]()
        return web.Response(body=body, headers={"Content-Type": content_type})


@pytest.fixture
async def site() -> AsyncIterator[tuple[ImageSite, str]]:
    served = ImageSite()
    async with serve_app(served.app()) as base:
        yield served, base


@pytest.fixture
def loopback_is_public(monkeypatch: pytest.MonkeyPatch) -> None:
    """Exactly 127.0.0.1 counts as public (it stands for a public site), so a guarded server reaches
    the test site and we can watch it refuse what comes next (as in test_ssrf.py)."""
    real: Callable[[str], bool] = fetch_module.is_public_address
    monkeypatch.setattr(fetch_module, "is_public_address", lambda a: a == "127.0.0.1" or real(a))


def guarded() -> Settings:
    return test_settings(rate_limit=0, fetch=dataclasses.replace(test_settings().fetch, allow_private=False))


async def get(
    http: aiohttp.ClientSession, url: str, accept: str = WEBP_ACCEPT, **headers: str
) -> tuple[int, dict[str, str], bytes]:
    async with http.get(url, headers={"Accept": accept, **headers}) as response:
        return response.status, dict(response.headers), await response.read()


def size_of(body: bytes) -> tuple[str, int, int, int]:
    with Image.open(io.BytesIO(body)) as image:
        return image.format or "", image.width, image.height, getattr(image, "n_frames", 1)


# ---- the rewriting ------------------------------------------------------------------------------


def test_images_are_rewritten_to_the_route_with_a_srcset() -> None:
    fragment = (
        '<p><img src="https://ex.org/a-small.jpg" srcset="https://ex.org/a-small.jpg 400w, '
        'https://ex.org/a-big.jpg 1600w" sizes="50vw" alt="A" width="1600" height="900"></p>'
        '<p><img src="https://ex.org/b.png?x=1&amp;y=2" alt="B"></p>'
        '<p><img src="data:image/png;base64,iVBORw0KGgo=" alt="inline"></p>'
        '<p><img src="https://ex.org/icon.png" alt="E" width="96" height="96"></p>'
        '<picture><source srcset="https://ex.org/c.avif 1x, https://ex.org/c@2x.avif 2x" type="image/avif" '
        'media="(min-width: 40em)"><img src="https://ex.org/c.jpg" alt="C"></picture>'
        '<p><img src="ftp://ex.org/d.jpg" alt="D"></p>'
    )
    out = images.route_images(fragment)
    tags = re.findall(r"<(?:img|source)\b[^>]*>", out)
    first, second, inline, icon, source, third, dropped = tags
    assert 'sizes="(max-width: 96px) 100vw, 96px"' in icon  # fetched at its own width
    assert 'src="/image?w=750&amp;url=https://ex.org/a-big.jpg"' in first  # the widest candidate
    assert "/image?w=375&amp;url=https://ex.org/a-big.jpg 375w" in first
    assert "/image?w=1500&amp;url=https://ex.org/a-big.jpg 1500w" in first
    assert f'sizes="{images.SIZES}"' in first and "50vw" not in first
    assert (
        'alt="A"' in first and 'width="1600"' in first and "loading" not in first
    )  # the first loads at once
    assert "url=https://ex.org/b.png%3Fx%3D1%26y%3D2" in unescape(second) and 'loading="lazy"' in second
    assert f'sizes="{images.SIZES}"' in second
    assert inline == '<img src="data:image/png;base64,iVBORw0KGgo=" alt="inline">'
    assert "c%402x.avif" in source and "type=" not in source and 'media="(min-width: 40em)"' in source
    assert "url=https://ex.org/c.jpg" in third
    assert dropped == '<img alt="D">'  # nothing to fetch, nothing leaks
    assert "ex.org" not in re.sub(r"url=https://ex\.org", "", out)  # every address is a route URL


def test_proxy_reader_views_load_images_from_the_reader_server() -> None:
    page = '<img src="/image?w=750&amp;url=https://ex.org/a.jpg" srcset="/image?w=375&amp;url=x 375w, /image?w=750&amp;url=x 750w">'
    out = same_origin_links(page)
    assert 'src="http://readerproxy/image?w=750' in out
    assert 'srcset="http://readerproxy/image?w=375&amp;url=x 375w, http://readerproxy/image?w=750' in out


def test_settings_name_the_image_modes() -> None:
    assert load_settings({}, {}).images == "proxy"
    assert load_settings({"images": "direct"}, {}).images == "direct"
    with pytest.raises(SettingsError, match="images must be one of proxy, direct"):
        load_settings({"images": "sometimes"}, {})


# ---- Pillow ------------------------------------------------------------------------------------


def test_transcode_resizes_and_encodes() -> None:
    big = photo(2000, 1333)
    webp = images.transcode(big, 750, "webp", False, "u")
    assert webp.content_type == "image/webp" and size_of(webp.body)[:3] == ("WEBP", 750, 500)
    jpeg = images.transcode(big, 375, "jpeg", False, "u")
    assert jpeg.content_type == "image/jpeg" and size_of(jpeg.body)[1:3] == (375, 250)
    assert len(jpeg.body) < len(big) / 10
    small = images.transcode(photo(120, 80, "PNG"), 750, "webp", False, "u")
    assert size_of(small.body)[1:3] == (120, 80)  # never enlarged
    alpha = images.transcode(photo(900, 300, "PNG", "RGBA"), 375, "jpeg", False, "u")
    assert alpha.content_type == "image/png"  # transparency kept where WebP is not accepted
    saved = images.transcode(big, 750, "webp", True, "u")
    assert len(saved.body) < len(webp.body)


def test_animation_is_kept_or_reduced_to_its_first_frame() -> None:
    gif = animated_gif(1200, 4)
    assert size_of(images.transcode(gif, 375, "webp", False, "u").body) == ("WEBP", 375, 188, 4)
    assert size_of(images.transcode(gif, 375, "jpeg", False, "u").body)[3] == 1
    assert size_of(images.transcode(gif, 375, "webp", True, "u").body)[3] == 1  # Save-Data


def test_exif_orientation_is_applied() -> None:
    image = Image.new("RGB", (1600, 800), (10, 200, 10))
    exif = image.getexif()
    exif[0x0112] = 6  # rotate 90° on display
    out = io.BytesIO()
    image.save(out, "JPEG", exif=exif)
    made = images.transcode(out.getvalue(), 375, "jpeg", False, "u")
    assert size_of(made.body)[1:3] == (375, 750)
    with Image.open(io.BytesIO(made.body)) as decoded:
        assert 0x0112 not in decoded.getexif()  # metadata dropped


def test_bombs_and_non_images_are_refused() -> None:
    with pytest.raises(FetchError) as bomb:
        images.transcode(bomb_png(), 750, "webp", False, "u")
    assert bomb.value.status == 413
    with pytest.raises(images.NotAnImage):
        images.transcode(b"<!doctype html><p>hello</p>", 750, "webp", False, "u")


def test_frames_past_the_declared_canvas_are_checked_before_decoding(monkeypatch: pytest.MonkeyPatch) -> None:
    """A GIF declaring an 8 x 8 canvas whose later frames are larger: was a RuntimeError (a 500)
    from the WebP encoder after every frame had been decoded at its full size. Now each frame's
    size is read before it is decoded: a frame outgrowing the first gives the first frame alone,
    one past MAX_PIXELS a 413."""
    made = images.transcode(growing_gif(3000, 3), 375, "webp", False, "u")
    assert size_of(made.body) == ("WEBP", 8, 8, 1)
    assert size_of(images.transcode(growing_gif(3000, 3), 375, "jpeg", False, "u").body)[1:3] == (8, 8)
    with pytest.raises(FetchError) as bomb:
        images.transcode(growing_gif(6500, 20), 375, "webp", False, "u")
    assert bomb.value.status == 413
    monkeypatch.setattr(images, "MAX_PIXELS", 2_000_000)
    with pytest.raises(FetchError) as smaller:
        images.transcode(growing_gif(1500, 3), 375, "webp", False, "u")
    assert smaller.value.status == 413  # the route's own bound, below Pillow's


def test_every_decoder_failure_is_a_415(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pillow fails on hostile bytes in more ways than OSError (RuntimeError from an encoder,
    struct.error, ZeroDivisionError): each is the image's fault, 415, never a 500 or a 502."""
    for failure in (RuntimeError("Invalid frame dimensions"), ZeroDivisionError(), KeyError("x")):

        def fail(*_: object, failure: Exception = failure) -> images.Variant:
            raise failure

        monkeypatch.setattr(images, "_still", fail)
        with pytest.raises(images.NotAnImage) as refused:
            images.transcode(photo(200, 100), 160, "jpeg", False, "u")
        assert refused.value.status == 415 and type(failure).__name__ in refused.value.message
    truncated = photo(400, 300, "PNG")[:200]
    with pytest.raises(images.NotAnImage):
        images.transcode(truncated, 160, "jpeg", False, "u")


def test_widths_snap_to_the_offered_ones() -> None:
    assert [images.snap_width(w) for w in (1, 160, 161, 375, 376, 750, 9999)] == [
        160,
        160,
        375,
        375,
        750,
        750,
        1500,
    ]


# ---- the route, against a real upstream ------------------------------------------------------------


async def test_the_route_resizes_encodes_by_accept_and_caches(site: tuple[ImageSite, str]) -> None:
    served, base = site
    async with serve(test_settings(rate_limit=0)) as server, aiohttp.ClientSession() as http:
        route = server.url("/image", w="750", url=f"{base}/big.jpg")
        status, headers, body = await get(http, route)
        assert status == 200 and headers["Content-Type"] == "image/webp"
        assert size_of(body)[1] == 750 and "Accept" in headers["Vary"]
        assert "max-age" in headers["Cache-Control"]
        status, headers, again = await get(http, route)
        assert again == body and served.counts["big.jpg"] == 1  # the cache answered
        status, headers, jpeg = await get(http, route, JPEG_ACCEPT)
        assert headers["Content-Type"] == "image/jpeg" and size_of(jpeg)[:2] == ("JPEG", 750)
        status, headers, saved = await get(http, route, **{"Save-Data": "on"})
        assert status == 200 and size_of(saved)[1] == 375  # half the width, lower quality
        status, _, odd = await get(http, server.url("/image", w="401", url=f"{base}/big.jpg"))
        assert size_of(odd)[1] == 750  # snapped up to an offered width
        status, _, moved = await get(http, server.url("/image", w="375", url=f"{base}/to-big"))
        assert status == 200 and size_of(moved)[1] == 375  # a redirect to an image is followed
        status, _, untyped = await get(http, server.url("/image", w="375", url=f"{base}/untyped"))
        assert status == 200 and size_of(untyped)[1] == 375


@pytest.mark.parametrize("name", ["page.html", "lying.jpg", "icon.svg"])
async def test_an_address_that_is_not_an_image_is_refused(site: tuple[ImageSite, str], name: str) -> None:
    _, base = site
    async with serve(test_settings(rate_limit=0)) as server, aiohttp.ClientSession() as http:
        status, headers, body = await get(http, server.url("/image", w="750", url=f"{base}/{name}"))
    assert status == 415, (name, status)
    assert headers["Content-Type"].startswith("text/html") and b"not an image" in body
    assert b"not an image</p>" not in body and b"<svg" not in body  # never the upstream's bytes


async def test_a_decompression_bomb_is_refused(site: tuple[ImageSite, str]) -> None:
    _, base = site
    async with serve(test_settings(rate_limit=0)) as server, aiohttp.ClientSession() as http:
        status, _, _ = await get(http, server.url("/image", w="750", url=f"{base}/bomb.png"))
    assert status == 413


async def test_a_gif_growing_past_its_canvas_is_served_or_refused(site: tuple[ImageSite, str]) -> None:
    """Was 500 (and, for 20 frames of 8,900 x 8,900, 43 s and 2 GB in the server's own process):
    now the first frame, or 413 for frames past MAX_PIXELS, decoded in an image worker."""
    _, base = site
    async with serve(test_settings(rate_limit=0)) as server, aiohttp.ClientSession() as http:
        status, headers, body = await get(http, server.url("/image", w="375", url=f"{base}/growing.gif"))
        assert status == 200 and size_of(body)[1:] == (8, 8, 1)
        status, headers, body = await get(http, server.url("/image", w="375", url=f"{base}/growing-bomb.gif"))
        assert status == 413 and headers["Content-Type"].startswith("text/html") and b"pixels" in body


async def test_decoding_has_a_deadline_and_its_worker_is_replaced(
    site: tuple[ImageSite, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Decoding runs in a worker process that is killed at `images.DEADLINE` (a thread cannot be
    stopped): the image is a 413, and the next image is made by a fresh worker."""
    monkeypatch.setattr(images, "DEADLINE", 0.01)  # far less than the 25 Mpx PNG takes
    _, base = site
    async with serve(test_settings(rate_limit=0)) as server, aiohttp.ClientSession() as http:
        assert server.app is not None
        status, _, _ = await get(http, server.url("/image", w="160", url=f"{base}/small.png"))
        assert status in (200, 413)  # the pool is started (a tiny image may beat even this deadline)
        pool = await server.app[images.IMAGES].workers()
        before = set(pool.pids())
        status, _, body = await get(http, server.url("/image", w="375", url=f"{base}/slow.png"))
        assert status == 413 and b"took longer than" in body
        assert pool.stats.timed_out >= 1 and set(pool.pids()) != before  # killed and replaced
    assert pool.pids() == []  # the workers stop with the server


async def test_one_clients_images_leave_the_fetch_slots_to_others(site: tuple[ImageSite, str]) -> None:
    """Was: 120 slow images from one client took all 64 fetch slots, and another client's read got
    503 "busy". Now one address holds at most a quarter of the slots (2 of 8 here) from the fetch to
    the encoding, at most three times that waits, and the next is a 503 at once; another address's
    image is fetched meanwhile."""
    served, base = site
    fetch = dataclasses.replace(test_settings().fetch, max_fetches=8, queue_timeout=5.0)
    async with (
        serve(test_settings(rate_limit=0, fetch=fetch)) as server,
        aiohttp.ClientSession() as http,
        aiohttp.ClientSession(connector=aiohttp.TCPConnector(local_addr=("127.0.0.2", 0))) as other,
    ):
        assert server.app is not None
        service = server.app[images.IMAGES]
        assert service.per_client == 2
        held = [
            asyncio.ensure_future(get(http, server.url("/image", w="160", url=f"{base}/held.png?n={n}")))
            for n in range(8)
        ]
        try:
            async with asyncio.timeout(30):  # a bound on the test, not a timing
                while service._clients.users("127.0.0.1") < 8 or served.counts["held.png"] < 2:
                    await asyncio.sleep(0.01)
            status, headers, body = await get(http, server.url("/image", w="160", url=f"{base}/held.png?n=9"))
            assert status == 503 and "Retry-After" in headers and b"already has 8 images" in body
            status, _, body = await get(other, server.url("/image", w="160", url=f"{base}/small.png"))
            assert status == 200 and size_of(body)[1] == 120  # another address is served meanwhile
            assert served.counts["held.png"] == 2  # the first client never had more than its share
        finally:
            served.release.set()
        answers = await asyncio.gather(*held)
    assert all(status in (200, 503) for status, _, _ in answers) and answers[0][0] == 200


@pytest.mark.usefixtures("loopback_is_public")
@pytest.mark.parametrize("name", ["to-private", "to-ten"])
async def test_an_image_that_redirects_to_a_private_address_is_refused(
    site: tuple[ImageSite, str], name: str
) -> None:
    _, base = site
    async with serve(guarded()) as server, aiohttp.ClientSession() as http:
        status, _, _ = await get(http, server.url("/image", w="375", url=f"{base}/big.jpg"))
        assert status == 200  # the guard lets the (public) site through
        status, _, body = await get(http, server.url("/image", w="375", url=f"{base}/{name}"))
        assert status == 403 and b"not allowed" in body
        status, _, _ = await get(http, server.url("/image", w="375", url="http://127.0.0.2/x.jpg"))
        assert status == 403


async def test_bad_requests(site: tuple[ImageSite, str]) -> None:
    _, base = site
    async with serve(test_settings(rate_limit=0)) as server, aiohttp.ClientSession() as http:
        assert (await get(http, server.url("/image", w="375")))[0] == 400
        assert (await get(http, server.url("/image", w="wide", url=f"{base}/big.jpg")))[0] == 400
        assert (await get(http, server.url("/image", url="javascript:alert(1)")))[0] == 400


async def test_reader_view_images_go_through_the_route_under_a_self_only_csp(
    site: tuple[ImageSite, str],
) -> None:
    _, base = site
    async with (
        serve(test_settings(rate_limit=0)) as server,
        aiohttp.ClientSession() as http,
        http.get(server.read_url(f"{base}/article")) as response,
    ):
        page = await response.text()
        csp = response.headers["Content-Security-Policy"]
    assert "img-src 'self' data:" in csp and "http:" not in csp.split("img-src")[1].split(";")[0]
    tag = re.search(r"<img\b[^>]*>", page)
    assert tag is not None
    assert 'src="/image?w=750&amp;url=http://127.0.0.1:' in tag[0] and "/big.jpg" in tag[0]
    assert f'src="{base}' not in page and f'srcset="{base}' not in page


async def test_direct_mode_keeps_the_original_images(site: tuple[ImageSite, str]) -> None:
    _, base = site
    async with serve(test_settings(rate_limit=0, images="direct")) as server, aiohttp.ClientSession() as http:
        async with http.get(server.read_url(f"{base}/article")) as response:
            page = await response.text()
            csp = response.headers["Content-Security-Policy"]
        assert (await get(http, server.url("/image", w="375", url=f"{base}/big.jpg")))[0] == 404
    assert "img-src http: https: data:" in csp
    assert f'src="{base}/small.png"' in page and "/image?" not in page


def test_renderer_without_the_route_leaves_images_alone() -> None:
    article = {
        "url": "https://ex.org/",
        "title": "T",
        "html": '<p>x</p><img src="https://ex.org/a.jpg" alt="">',
    }
    assert 'src="https://ex.org/a.jpg"' in Renderer().reader_page(article, Preferences())


async def test_proxy_reader_views_load_images_through_the_reader_server(site: tuple[ImageSite, str]) -> None:
    """Proxy mode's reader view links its images to http://readerproxy/image, which the proxy
    answers from the reader server's route."""
    from test_proxy import HTML_ACCEPT
    from test_proxy_setup import setup_proxy

    served, base = site
    port = base.rsplit(":", 1)[1]
    async with setup_proxy(rate_limit=0) as proxy, aiohttp.ClientSession() as http:
        async with http.get(
            f"http://news.test:{port}/article", proxy=proxy.url, headers={"Accept": HTML_ACCEPT}
        ) as response:
            assert response.headers.get("X-Readerproxy") == "reader-view"
            page = await response.text()
        tag = re.search(r"<img\b[^>]*>", page)
        assert tag is not None and 'src="http://readerproxy/image?w=750&amp;url=http://127.0.0.1:' in tag[0]
        source = unescape(re.search(r'src="([^"]*)"', tag[0])[1])  # type: ignore[index]
        async with http.get(source, proxy=proxy.url, headers={"Accept": WEBP_ACCEPT}) as response:
            assert response.status == 200 and response.headers["Content-Type"] == "image/webp"
            assert size_of(await response.read())[1] == 750
    assert served.counts["big.jpg"] == 1
