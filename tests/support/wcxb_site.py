"""The `wcxb_base` fixture: wcxb-dev's pages served as their servers sent them, for browser tests.

`wcxb_site(directory)` is an aiohttp site on 127.0.0.1 serving `../shared/datasets/wcxb-dev` pages at
`/wcxb/<id>`, decompressed; with `pictures`, any other path answers a 600x450 JPEG standing for
every image of the pages (their originals are not stored), else 404. `wcxb_base` is its base URL
with pictures; the calling test is skipped without the dataset.
"""

from __future__ import annotations

import gzip
import io
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web
from PIL import Image

from support.reader_server import serve_app
from support.upstream import DATASETS

WCXB = DATASETS / "wcxb-dev"


def _placeholder() -> bytes:
    """A 600x450 picture standing for every image of the pages."""
    out = io.BytesIO()
    Image.new("RGB", (600, 450), (150, 170, 190)).save(out, "JPEG")
    return out.getvalue()


async def wcxb_site(directory: Path, pictures: bool = True) -> web.Application:
    """wcxb-dev pages at /wcxb/<id>, as their servers sent them; with `pictures`, any other path is
    a picture."""

    async def page(request: web.Request) -> web.Response:
        path = directory / "html" / f"{request.match_info['id']}.html.gz"
        if not path.is_file():
            raise web.HTTPNotFound()
        return web.Response(body=gzip.decompress(path.read_bytes()), content_type="text/html")

    app = web.Application()
    app.router.add_get("/wcxb/{id}", page)
    if pictures:
        picture = _placeholder()

        async def image(request: web.Request) -> web.Response:
            return web.Response(body=picture, content_type="image/jpeg")

        app.router.add_get("/{tail:.*}", image)
    return app


@pytest.fixture
async def wcxb_base() -> AsyncIterator[str]:
    if not (WCXB / "html").is_dir():
        pytest.skip("wcxb-dev is not in ../shared/datasets")
    async with serve_app(await wcxb_site(WCXB)) as base:
        yield base
