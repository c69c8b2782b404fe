"""The reader server's typed application keys and the request helpers every view shares.

The server (`server.py`) creates the application and puts its resources under these keys; the
views in `server.py` and `overlay_routes.py` read them, and build their `ReadRequest` with
`parse_read_request`, without importing each other.
"""

from __future__ import annotations

from aiohttp import web

from ..engine.convert import parse_flag
from ..errors import RequestError
from .metrics import Metrics
from .reader import Reader, ReadRequest, algorithm_params
from .settings import Settings
from .templating import Preferences, Renderer

SETTINGS = web.AppKey("settings", Settings)
METRICS = web.AppKey("metrics", Metrics)
READER = web.AppKey("reader", Reader)
RENDERER = web.AppKey("renderer", Renderer)


def parse_read_request(request: web.Request, prefs: Preferences, *, for_reader: bool) -> ReadRequest:
    """The ReadRequest a /read, /api/extract, overlay or compare request asks for: the URL, the
    algorithm (the server's default when none), its parameters (checked), and the reader's
    preferences where the answer is a reader view."""
    query = request.query
    url = query.get("url", "").strip()
    if not url:
        raise RequestError("Give the page's address as ?url=…", kind="bad_url")
    algorithm = query.get("algo", "").strip() or request.app[SETTINGS].default_algorithm
    return ReadRequest(
        url=url,
        algorithm=algorithm,
        params=algorithm_params(query, algorithm),
        # lite mode keeps the images in the extraction and folds each behind a "Show image" tap
        # when it renders (templating.fold_images): nothing is fetched until the reader asks
        images=True,
        reader_links=prefs.reader_links if for_reader else False,
        refresh=parse_flag(query.get("refresh")),
        render=parse_flag(query.get("render")),
    )
