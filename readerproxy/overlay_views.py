"""The server's overlay routes: `/read?…&view=overlay`, `/compare?url=…` and `blocks=1` of the API.

Thin handlers like the rest of server.py: they make a `ReadRequest`, ask the `Reader` for an
inspection or a comparison, and build the page with the pure functions of `overlay.py` and
`compare.py` (in the Reader's thread, off the event loop). The overlay page gets its own CSP:
the page's styles, fonts and images may load, scripts only from /static/.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from aiohttp import web

from .api import algorithms
from .compare import Comparison, comparison_context
from .convert import parse_flag
from .overlay import Inspection, OverlayLinks, blocks_json, overlay_csp, overlay_page, templates_dir
from .render import link_target, preferences


def _link(path: str, **query: str | None) -> str:
    return path + "?" + urlencode({k: v for k, v in query.items() if v})


def overlay_url(url: str, algorithm: str | None = None) -> str:
    """The overlay view of a page with an algorithm."""
    return _link("/read", url=url, algo=algorithm, view="overlay")


async def overlay_view(request: web.Request) -> web.Response:
    """GET /read?url=…&algo=…&view=overlay: the page with its scored blocks outlined, and the panel."""
    from .server import READER, RENDERER, SETTINGS, _read_request

    prefs, _ = preferences({}, {})
    read_request = _read_request(request, prefs, for_reader=False)
    renderer = request.app[RENDERER]
    directory = request.app[SETTINGS].templates_dir or templates_dir()
    described = algorithms()
    url = read_request.url

    def build(insp: Inspection) -> tuple[str, str | None]:
        links = OverlayLinks(
            url=url,
            reader=_link("/read", url=url, algo=read_request.algorithm),
            compare=_link("/compare", url=url),
            original=link_target(insp.doc.url),
        )
        page, _ = overlay_page(insp, links, described, asset=renderer.asset_url, template_dir=directory)
        return page, insp.doc.url

    page, final_url = await request.app[READER].inspect(read_request, build)
    response = web.Response(text=page, content_type="text/html", charset="utf-8")
    response.headers["Content-Security-Policy"] = overlay_csp(final_url or url)
    response.headers["Cache-Control"] = "no-store"
    return response


async def compare_view(request: web.Request) -> web.Response:
    """GET /compare?url=…: every registered algorithm on the page, side by side."""
    from .server import READER, RENDERER, _read_request

    prefs, _ = preferences(request.query, request.cookies)
    read_request = _read_request(request, prefs, for_reader=False)
    renderer = request.app[RENDERER]
    url = read_request.url

    def build(comparison: Comparison) -> str:
        links = {
            run.name: {"read": _link("/read", url=url, algo=run.name), "overlay": overlay_url(url, run.name)}
            for run in comparison.runs
        }
        context = comparison_context(comparison, links)
        context["url"] = link_target(comparison.url) or url
        return renderer.env.get_template("compare.html").render(prefs=prefs, **context)

    page = await request.app[READER].compare(read_request, build)
    return web.Response(text=page, content_type="text/html", charset="utf-8")


def wants_blocks(request: web.Request) -> bool:
    return parse_flag(request.query.get("blocks"))


async def add_blocks(request: web.Request, data: dict[str, Any]) -> None:
    """`blocks=1` of GET /api/extract: the blocks and signals of the same extraction, added to `data`."""
    from .server import READER, _read_request

    prefs, _ = preferences({}, {})
    extra = await request.app[READER].inspect(
        _read_request(request, prefs, for_reader=False), lambda insp: blocks_json(insp.doc, insp.extraction)
    )
    data.update(extra)


async def add_blocks_posted(
    request: web.Request,
    data: dict[str, Any],
    body: bytes | str,
    url: str | None,
    content_type: str | None,
    extractor: Any,
    params: object,
    *,
    render: bool = False,
) -> None:
    """`blocks=1` of POST /api/extract."""
    from .server import READER

    extra = await request.app[READER].inspect_bytes(
        body,
        url,
        content_type,
        extractor,
        params,
        lambda insp: blocks_json(insp.doc, insp.extraction),
        render=render,
    )
    data.update(extra)
