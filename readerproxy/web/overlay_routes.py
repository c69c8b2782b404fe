"""The server's overlay routes: `/read?…&view=overlay` and `/compare?url=…`.

Thin handlers like the rest of server.py: they make a `ReadRequest`, ask the `Reader` for an
inspection or a comparison, and build the page with the pure functions of `web/overlay/` and
`compare.py`. That building runs in an extraction worker (bounded by the deadline and killable like
/read), so what it is given is picklable: the module-level `OverlayBuild` and `CompareContext`
below (`blocks=1` of the API needs no inspection: the extraction job adds the blocks itself). The
overlay page gets its own CSP, which its sandboxed frame (the page) inherits: no script at all, the
page's styles and fonts from its own site, images from anywhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

from aiohttp import web

from ..api import algorithms
from ..engine.convert import parse_flag
from .appkeys import READER, RENDERER, SETTINGS, parse_read_request
from .compare import Comparison, comparison_context
from .overlay import Inspection, OverlayLinks, overlay_page, templates_dir
from .sanitize import overlay_csp
from .templating import link_target, preferences

#: The static files templates/overlay.html links (their versioned URLs are worked out in the server).
OVERLAY_ASSETS = ("overlay-panel.css",)


@dataclass(frozen=True, slots=True)
class OverlayBuild:
    """The overlay page of an Inspection, and the page's final URL (run in a worker)."""

    url: str
    algorithm: str
    assets: dict[str, str]
    template_dir: str
    described: dict[str, str]

    def __call__(self, insp: Inspection) -> tuple[str, str | None]:
        links = OverlayLinks(
            url=self.url,
            reader=_link("/read", url=self.url, algo=self.algorithm),
            compare=_link("/compare", url=self.url),
            original=link_target(insp.doc.url),
        )
        page, _ = overlay_page(
            insp, links, self.described, asset=self.assets.__getitem__, template_dir=Path(self.template_dir)
        )
        return page, insp.doc.url


@dataclass(frozen=True, slots=True)
class CompareContext:
    """What templates/compare.html shows for a Comparison (run in a worker; rendered by the server)."""

    url: str

    def __call__(self, comparison: Comparison) -> dict[str, object]:
        links = {
            run.name: {
                "read": _link("/read", url=self.url, algo=run.name),
                "overlay": overlay_url(self.url, run.name),
            }
            for run in comparison.runs
        }
        context = comparison_context(comparison, links)
        context["url"] = link_target(comparison.url) or self.url
        return context


def _link(path: str, **query: str | None) -> str:
    return path + "?" + urlencode({k: v for k, v in query.items() if v})


def overlay_url(url: str, algorithm: str | None = None) -> str:
    """The overlay view of a page with an algorithm."""
    return _link("/read", url=url, algo=algorithm, view="overlay")


async def overlay_view(request: web.Request) -> web.Response:
    """GET /read?url=…&algo=…&view=overlay: the page with its scored blocks outlined, and the panel."""

    prefs, _ = preferences({}, {})
    read_request = parse_read_request(request, prefs, for_reader=False)
    renderer = request.app[RENDERER]
    directory = request.app[SETTINGS].templates_dir or templates_dir()
    described = algorithms()
    url = read_request.url

    build = OverlayBuild(
        url=url,
        algorithm=read_request.algorithm,
        assets={name: renderer.asset_url(name) for name in OVERLAY_ASSETS},
        template_dir=str(directory),
        described=dict(described),
    )
    page, final_url = await request.app[READER].inspect(read_request, build)
    response = web.Response(text=renderer.rooted(page), content_type="text/html", charset="utf-8")
    response.headers["Content-Security-Policy"] = overlay_csp(final_url or url)
    response.headers["Cache-Control"] = "no-store"
    return response


async def compare_view(request: web.Request) -> web.Response:
    """GET /compare?url=…: every registered algorithm on the page, side by side."""

    prefs, _ = preferences(request.query, request.cookies)
    read_request = parse_read_request(request, prefs, for_reader=False)
    renderer = request.app[RENDERER]
    url = read_request.url

    context = await request.app[READER].compare(read_request, CompareContext(url))
    page = renderer.env.get_template("compare.html").render(prefs=prefs, **context)
    return web.Response(text=renderer.rooted(page), content_type="text/html", charset="utf-8")


def wants_blocks(request: web.Request) -> bool:
    return parse_flag(request.query.get("blocks"))
