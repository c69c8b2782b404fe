"""The reader server (aiohttp): the reader view, the JSON API, health and metrics.

- `create_app(settings)` builds the application: typed `web.AppKey`s, middlewares (metrics, error
  pages, security headers) and the routes. Resources (fetcher, cache, page store, extraction
  threads) are opened and closed in one place, the `Reader`'s `cleanup_ctx` context.
- Route handlers are thin: they parse the request into a `reader.ReadRequest`, call the `Reader`
  (the request layer in `reader.py`, which proxy mode shares), and render its `ReadResult` as HTML,
  Markdown, text or JSON.
- The parts of serving that are the reader server's: the graceful stop (`Drain`, `shut_down`), the
  hardened connection handler (`harden_protocol`), `return_freed_memory`. `readerproxy/app.py` runs
  the application, with proxy mode when asked (`readerproxy serve` calls its `run`).
"""

from __future__ import annotations

import asyncio
import ctypes
import dataclasses
import json
import logging
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from http import HTTPStatus
from typing import Any
from urllib.parse import urlsplit

from aiohttp import web, web_protocol

from .. import __version__
from .. import _speedups as speedups
from ..api import algorithms, unavailable_algorithms
from ..engine.article import markdown_document
from ..engine.convert import parse_flag
from ..errors import ReaderproxyError, RequestError
from .appkeys import METRICS, READER, RENDERER, SETTINGS, parse_read_request
from .auth import CREDENTIALS, install_auth, leave_open
from .bodies import BODIES, install_bodies
from .browser import CONNECTED
from .compression import CODINGS, Encoded, negotiate
from .fetch import GZIP_MAGIC, FetchError, unwrap_gzip, validate_url
from .forwarded import TRUSTED, forwarded_middleware, parse_trusted
from .images import install_images
from .limits import CLIENT_HEADER, RateLimited, RateLimiter, client_key, shared_buckets
from .list_routes import install_reading_list
from .lru import LRU
from .metrics import Metrics
from .overlay_routes import compare_view, overlay_view, wants_blocks
from .public import public_of
from .reader import Reader, algorithm_params, browser_unavailable_reason, target_url
from .ready_pages import ReadyPage, ReadyPages, ready_key
from .requestlog import metrics_instance, request_log_middleware
from .settings import Settings
from .templating import COOKIE_MAX_AGE, Preferences, Renderer, preferences, safe_base_url
from .workers import CLIENT

log = logging.getLogger("readerproxy.web.server")

FORMATS = {
    "html": "text/html",
    "md": "text/markdown",
    "markdown": "text/markdown",
    "text": "text/plain",
    "json": "application/json",
}
#: Content-Security-Policy of every response: no script but our own optional one from /static/ (the
#: page's own scripts never reach the output), our stylesheet, images from our /image route
#: (`images.py`; `--images direct` allows the original sites again).
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
    "base-uri 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
ERROR_TITLES = {
    "bad_url": "That address can't be read",
    "refused": "That address is not allowed",
    "too_large": "The page is too large",
    "not_html": "This is not a web page",
    "not_image": "This is not an image",
    "upstream": "The site did not answer properly",
    "timeout": "The site took too long to answer",
    "empty": "The page has no content",
    "busy": "Too many reads of that site right now",
    "extraction_timeout": "This page took too long to extract",
    "extraction_failed": "This page could not be extracted",
    "overloaded": "The server is busy",
    "browser_unavailable": "Visual rendering is unavailable",
    "render_timeout": "The page took too long to render",
    "render_failed": "The page could not be rendered",
    "render_too_large": "The rendered page is too large",
    "rate_limited": "Too many requests",
    "shutting_down": "The server is restarting",
    "bad_request": "Bad request",
    "not_found": "Not found",
    "internal": "Something went wrong",
}
#: Rendered reader pages kept in memory, so a hot cached page skips the template.
RENDERED_PAGES_BYTES = 16 * 1024 * 1024

RenderedKey = tuple[str, Preferences, str]


# --------------------------------------------------------------------------------------------
# The application: keys, middlewares, thin route handlers.

LIMITER = web.AppKey("limiter", RateLimiter)
#: Routes that can make the server fetch or extract: the per-client rate limit applies to these.
#: Not /image: a reader page asks for one per picture (some pages have 200), which would use up the
#: bucket of the reads themselves; the fetcher's slots and images.DECODES bound what it costs.
LIMITED_PREFIXES = ("/read", "/api/", "/compare")
RENDERED = web.AppKey("rendered", LRU[RenderedKey, Encoded])
READY = web.AppKey("ready", ReadyPages)
STATIC = web.AppKey("static", dict[str, Encoded])
#: Seconds a client is asked to wait by the 503 of a request cut short by shutdown.
SHUTDOWN_RETRY_AFTER = 5
#: Seconds the requests cut short at shutdown are given to send their 503.
SHUTDOWN_ANSWER_SECONDS = 2.0


class Drain:
    """The requests in flight (their handlers' tasks), for a shutdown that lets them finish.

    On SIGTERM the server stops listening, closes idle connections and sets `stopping`: a request
    that still arrives (on a kept-alive connection) is answered 503 at once. The requests in flight
    get `--shutdown-timeout` seconds to finish; those still running are then cancelled and answered
    503 with Retry-After (`drain_middleware`), never a 500 or a connection closed without a status.
    """

    def __init__(self) -> None:
        self.stopping = False
        self.tasks: set[asyncio.Task[Any]] = set()
        self.cut_short: set[asyncio.Task[Any]] = set()

    async def finish(self, timeout: float) -> int:
        """Wait up to `timeout` seconds for the requests in flight; cut short those still running
        and wait (briefly) for their 503s to go out. How many were cut short."""
        self.stopping = True
        running = set(self.tasks)
        if running:
            _, running = await asyncio.wait(running, timeout=timeout)
        # only handlers still working are cut short; a task past its handler is sending its answer
        cut = [task for task in running if task in self.tasks]
        for task in cut:
            self.cut_short.add(task)
            task.cancel()
        if running:
            await asyncio.wait(running, timeout=SHUTDOWN_ANSWER_SECONDS)
        return len(cut)


DRAIN = web.AppKey("drain", Drain)


def create_app(settings: Settings) -> web.Application:
    """The reader server's application; resources open on startup and close on cleanup."""
    metrics = Metrics(instance=metrics_instance(settings))
    app = web.Application(
        middlewares=[
            ready_middleware,
            metrics_middleware,
            drain_middleware,
            error_middleware,
            limits_middleware,
        ],
        client_max_size=settings.fetch.max_bytes,
    )
    trusted = parse_trusted(settings.trusted_proxies)
    if trusted:  # the real client, scheme and host for every middleware after it (forwarded.py)
        app[TRUSTED] = trusted
        app.middlewares.insert(0, forwarded_middleware)
    if settings.log_format == "json":  # one line per request, with the real client (requestlog.py)
        app.middlewares.insert(1 if trusted else 0, request_log_middleware)
    app[SETTINGS] = settings
    app[DRAIN] = Drain()
    app[METRICS] = metrics
    app[READER] = Reader(settings, metrics)
    app[RENDERER] = Renderer(settings.templates_dir, settings.static_dir)
    if (public := public_of(settings)) is not None:  # --public-url's prefix on our links (public.py)
        app[RENDERER].root = public.prefix
    app[RENDERED] = LRU(RENDERED_PAGES_BYTES, lambda key, page: len(key[0]) + page.size)
    app[READY] = ReadyPages()
    app[STATIC] = {name: _precompressed(asset.body) for name, asset in app[RENDERER].static.items()}
    app[LIMITER] = RateLimiter(settings.rate_limit, settings.rate_burst)
    metrics.limits.labels("rate_limit_per_second").set(settings.rate_limit)
    metrics.limits.labels("rate_burst").set(settings.rate_burst)
    app.cleanup_ctx.append(_reader_resources)
    install_auth(app, settings)  # --auth, --auth-file (auth.py)
    leave_open(app, "/healthz")  # health checks carry no login
    app.on_response_prepare.append(_security_headers)
    app.router.add_get("/", index, name="index")
    app.router.add_get("/read", read, name="read", allow_head=False)
    app.router.add_head("/read", read_head, name="read_head")
    app.router.add_get("/api/extract", api_extract_get, name="api_extract")
    app.router.add_get("/api/algorithms", api_algorithms, name="api_algorithms")
    app.router.add_post("/api/extract", api_extract_post, name="api_extract_post")
    app.router.add_get("/healthz", healthz, name="healthz")
    app.router.add_get("/compare", compare_view, name="compare")
    app.router.add_get("/metrics", metrics_handler, name="metrics")
    app.router.add_get("/static/{name}", static, name="static")
    app.router.add_get("/favicon.ico", favicon, name="favicon")
    install_images(app)  # GET /image and the reader pages' image rewriting (images.py)
    install_reading_list(app)  # /list, /api/list and the exports (list_routes.py)
    install_bodies(app, settings.fetch.max_bytes, busy=lambda: bool(app[DRAIN].tasks))  # bodies.py
    return app


async def _reader_resources(app: web.Application) -> AsyncIterator[None]:
    async with app[READER].opened():
        yield


async def _security_headers(request: web.Request, response: web.StreamResponse) -> None:
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)


def _route_name(request: web.Request) -> str:
    route = request.match_info.route
    resource = route.resource
    return resource.canonical if resource is not None else "unmatched"


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@web.middleware
async def metrics_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Requests by route and status, and latency by route."""
    began = time.perf_counter()
    status = 500
    try:
        response = await handler(request)
        status = response.status
        return response
    except web.HTTPException as exc:
        status = exc.status
        raise
    finally:
        request.app[METRICS].observe_request(_route_name(request), status, time.perf_counter() - began)


@web.middleware
async def drain_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Shutdown (`Drain`): a request arriving while the server stops, or one cut short after the
    shutdown timeout, is answered 503 `shutting_down` with Retry-After and the connection closed."""
    drain = request.app[DRAIN]
    if drain.stopping:
        return _shutting_down(request)
    task = asyncio.current_task()
    assert task is not None
    drain.tasks.add(task)
    try:
        response = await handler(request)
    except asyncio.CancelledError:
        if task not in drain.cut_short:
            raise
        task.uncancel()  # our cancellation, answered here: the connection writes the 503
        return _shutting_down(request)
    finally:
        drain.tasks.discard(task)
    if task in drain.cut_short:  # cancelled, and some layer made its own answer of that
        if task.cancelling():
            task.uncancel()
        return _shutting_down(request)
    return response


def _shutting_down(request: web.Request) -> web.Response:
    response = error_response(
        request, 503, "shutting_down", "the server is restarting; try again in a few seconds", None
    )
    response.headers["Retry-After"] = str(SHUTDOWN_RETRY_AFTER)
    response.force_close()
    return response


@web.middleware
async def limits_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """The per-client token bucket (429 + Retry-After) on the routes that fetch or extract; the
    client's address is also what the extraction pool shares its workers by (`workers.CLIENT`);
    for a request of proxy mode's gateway, the proxy client's (`limits.client_key`)."""
    client = client_key(request.remote or "", request.headers.get(CLIENT_HEADER))
    CLIENT.set(client)
    CONNECTED.set(lambda: request.transport is not None)  # a render stops when its client goes
    if request.path.startswith(LIMITED_PREFIXES):
        try:
            # shared by every instance when the cache is Redis (`limits.shared_buckets`)
            await request.app[LIMITER].acquire(client, shared_buckets(request.app[READER].cache))
        except RateLimited:
            request.app[METRICS].rate_limited.inc()
            raise
    return await handler(request)


@web.middleware
async def ready_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """A repeated GET /read answered from its ready page (ready_pages.py) ahead of the other
    middlewares, with what they would have done for it: counted like any request, the client's
    token taken. Anything else, or a ready page while the server stops, with a login required
    (`auth_middleware` runs last) or with the client out of tokens, takes the full path.

    Chosen for speed: the four middlewares' layers were about a fifth of a cached read's time."""
    app = request.app
    if request.match_info.route.name != "read" or CREDENTIALS in app or app[DRAIN].stopping:
        return await handler(request)
    began = time.perf_counter()
    ready = app[READY].get(ready_key(request), app[READER].unchanged)
    if ready is None:
        return await handler(request)
    limiter = app[LIMITER]
    if limiter.enabled:
        try:
            client = client_key(request.remote or "", request.headers.get(CLIENT_HEADER))
            await limiter.acquire(client, shared_buckets(app[READER].cache))
        except RateLimited:
            return await handler(request)  # the full path answers 429 and counts it
    metrics = app[METRICS]
    metrics.ready_hit()
    metrics.observe_request("/read", 200, time.perf_counter() - began)
    return web.Response(body=ready.body, headers=ready.headers)


@web.middleware
async def error_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Every failure becomes an HTML page (or JSON under /api/), never a traceback."""
    try:
        return await handler(request)
    except FetchError as exc:
        return error_response(
            request,
            exc.status,
            exc.kind,
            exc.message,
            exc.final_url or exc.url,
            upstream_status=exc.upstream_status,
        )
    except ReaderproxyError as exc:
        response = error_response(request, exc.status, exc.kind, exc.message, getattr(exc, "url", None))
        retry_after = getattr(exc, "retry_after", None)
        if retry_after is not None:
            response.headers["Retry-After"] = str(retry_after)
        return response
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        kind = {404: "not_found", 413: "too_large"}.get(exc.status, "bad_request")
        return error_response(request, exc.status, kind, exc.reason)
    except asyncio.CancelledError:
        raise
    except Exception:
        log.exception("unhandled error on %s %s", request.method, request.path_qs)
        return error_response(request, 500, "internal", "The server failed to handle this request.")


def error_title(kind: str, upstream_status: int | None = None) -> str:
    """The heading of an error page: what happened, in a person's words."""
    if kind == "upstream" and upstream_status is not None:
        try:
            phrase = HTTPStatus(upstream_status).phrase
        except ValueError:
            phrase = ""
        return f"The site answered {upstream_status} {phrase}".rstrip()
    return ERROR_TITLES.get(kind, "Error")


def error_response(
    request: web.Request,
    status: int,
    kind: str,
    message: str,
    original: str | None = None,
    *,
    upstream_status: int | None = None,
) -> web.Response:
    """A JSON error for the API (and format=json), an HTML page for everything else."""
    if request.path.startswith("/api/") or request.query.get("format") == "json":
        body = {"error": {"kind": kind, "status": status, "message": message, "url": original}}
        if upstream_status is not None:
            body["error"]["upstream_status"] = upstream_status
        return web.json_response(body, status=status)
    prefs, _ = preferences(request.query, request.cookies)
    page = request.app[RENDERER].error_page(
        status, error_title(kind, upstream_status), _sentence(message), prefs, _splittable(original)
    )
    return web.Response(text=page, status=status, content_type="text/html", charset="utf-8")


def _splittable(url: str | None) -> str | None:
    """The URL an error page may link back to: None for one `urlsplit` cannot take (`http://[::1/`),
    whose bad_url page would otherwise fail while it is made."""
    if url is None:
        return None
    try:
        urlsplit(url)
    except ValueError:
        return None
    return url


def _sentence(message: str) -> str:
    """A message as a sentence: capital first letter, one full stop."""
    message = message.strip()
    if not message:
        return message
    message = message[0].upper() + message[1:]
    return message if message.endswith((".", "!", "?")) else message + "."


async def index(request: web.Request) -> web.Response:
    prefs, _ = preferences(request.query, request.cookies)
    settings = request.app[SETTINGS]
    public = public_of(settings)
    base = (
        public.base
        if public
        else safe_base_url(request.scheme, request.host, f"http://{settings.host}:{settings.port}")
    )
    page = request.app[RENDERER].index_page(algorithms(), base, prefs, _unavailable(request))
    return web.Response(text=page, content_type="text/html", charset="utf-8")


def _unavailable(request: web.Request) -> dict[str, str]:
    return unavailable_algorithms(browser_unavailable_reason(request.app[SETTINGS]))


async def api_algorithms(request: web.Request) -> web.Response:
    """GET /api/algorithms: every algorithm with its description and whether it can run now."""
    unavailable = _unavailable(request)
    return _json(
        request,
        {
            name: {
                "description": description,
                "available": name not in unavailable,
                "reason": unavailable.get(name),
            }
            for name, description in algorithms().items()
        },
    )


async def read(request: web.Request) -> web.Response:
    """GET /read?url=…&algo=…&format=html|md|text|json — the reader view and its plain formats."""
    ready = request.app[READY].get(ready_key(request), request.app[READER].unchanged)
    if ready is not None:  # the same request again, its page and result unchanged (ready.py)
        request.app[METRICS].ready_hit()
        return web.Response(body=ready.body, headers=ready.headers)
    fmt = request.query.get("format", "html")
    if fmt not in FORMATS:
        raise RequestError(f"format must be one of {', '.join(FORMATS)}")
    if request.query.get("view") == "overlay":
        return await overlay_view(request)
    prefs, changed = preferences(request.query, request.cookies)
    html_view = fmt == "html"
    read_request = parse_read_request(request, prefs, for_reader=html_view)
    result = await request.app[READER].read(read_request)
    data = result.data
    if fmt == "json":
        response: web.Response = _json(request, data)
    elif fmt in ("md", "markdown"):
        markdown = markdown_document(
            data.get("title"), data.get("html") or "", data.get("final_url") or data.get("url")
        )
        response = encoded_response(request, markdown.encode("utf-8"), "text/markdown; charset=utf-8")
    elif fmt == "text":
        title = f"{data['title']}\n\n" if data.get("title") else ""
        text = title + data["text"] + "\n"
        response = encoded_response(request, text.encode("utf-8"), "text/plain; charset=utf-8")
    else:
        algorithm = read_request.algorithm
        rendered = request.app[RENDERED]
        key = (result.identity, prefs, algorithm)
        page = rendered.get(key) if result.identity else None
        fresh = page is None
        if page is None:
            page = Encoded(request.app[RENDERER].reader_page(data, prefs, algorithm).encode("utf-8"))
        held = page.size
        # For speed on a miss, only the coding this client asked for is made: quickly now, and at the
        # full quality right after the response (`_keep_full_quality`). Another coding is made once,
        # on the first request that asks for it. The entry is stored again whenever it grows, so the
        # LRU charges each page its true size, its variants included.
        response = encoded_response(request, page, "text/html; charset=utf-8", quick=fresh)
        if result.identity and (fresh or page.size != held):
            rendered.set(key, page)
        coding = response.headers.get("Content-Encoding")
        if fresh and coding and result.identity:  # the client of a miss got the quick variant
            asyncio.get_running_loop().call_soon(_keep_full_quality, rendered, key, page, coding)
        if changed:
            # Not HttpOnly: static/reader.js writes the same cookies when it applies a change in the
            # page (they hold only display preferences).
            for name, value in prefs.cookies().items():
                response.set_cookie(
                    name, value, max_age=COOKIE_MAX_AGE, path=_cookie_path(request), samesite="Lax"
                )
        elif not fresh and result.sources and isinstance(response.body, bytes):  # all from memory
            headers = {**SECURITY_HEADERS, **response.headers, "X-Cache": result.cache}
            ready_page = ReadyPage(response.body, headers, result.sources, result.fresh_until)
            request.app[READY].put(ready_key(request), ready_page)
    response.headers["X-Cache"] = result.cache
    return response


def _cookie_path(request: web.Request) -> str:
    """The preference cookies' path: `--public-url`'s prefix (`/reader`), else `/`."""
    public = public_of(request.app[SETTINGS])
    return public.cookie_path if public else "/"


def _keep_full_quality(
    rendered: LRU[RenderedKey, Encoded], key: RenderedKey, page: Encoded, coding: str
) -> None:
    """Right after a miss's response is written: the page's kept variant, at the full quality, and the
    rendered-page cache charged for it."""
    page.for_coding(coding)
    if key in rendered:
        rendered.set(key, page)


async def read_head(request: web.Request) -> web.Response:
    """HEAD /read: the request is checked (URL, format, algorithm) but nothing is fetched or extracted."""
    fmt = request.query.get("format", "html")
    if fmt not in FORMATS:
        raise RequestError(f"format must be one of {', '.join(FORMATS)}")
    prefs, _ = preferences(request.query, request.cookies)
    read_request = parse_read_request(request, prefs, for_reader=fmt == "html")
    target_url(read_request.url)
    request.app[READER].resolve_request(read_request.algorithm, read_request.params)
    response = web.Response(status=200, content_type=FORMATS[fmt], charset="utf-8")
    response.headers["X-Cache"] = "none"
    return response


async def api_extract_get(request: web.Request) -> web.Response:
    """GET /api/extract?url=…&algo=… — the JSON view of a page."""
    prefs, _ = preferences({}, {})
    read_request = parse_read_request(request, prefs, for_reader=False)
    result = await request.app[READER].read(dataclasses.replace(read_request, blocks=wants_blocks(request)))
    response = _json(request, result.data)
    response.headers["X-Cache"] = result.cache
    return response


async def api_extract_post(request: web.Request) -> web.Response:
    """POST /api/extract — HTML in the body (or JSON {html, url, algo, params}), JSON out.

    The body is counted for its client from before it is read until its extraction has ended
    (`bodies.PostedBodies`: one page of the size cap per client, eight in all)."""
    async with request.app[BODIES].read(request) as raw:
        return await _extract_posted(request, raw)


async def _extract_posted(request: web.Request, raw: bytes) -> web.Response:
    query = request.query
    url: str | None = query.get("url") or None
    algorithm = query.get("algo", "") or request.app[SETTINGS].default_algorithm
    params: dict[str, Any] = algorithm_params(query, algorithm)
    body: bytes | str
    content_type = request.headers.get("Content-Type")
    if request.content_type == "application/json":
        try:
            payload = json.loads(raw.decode(request.charset or "utf-8"))
        except ValueError:
            raise RequestError("the JSON body is not valid JSON") from None
        if not isinstance(payload, dict) or not isinstance(payload.get("html"), str):
            raise RequestError('a JSON body needs an "html" string')
        body = payload["html"]
        url = payload.get("url") or url
        algorithm = payload.get("algo") or algorithm
        extra = payload.get("params") or {}
        if not isinstance(extra, dict):
            raise RequestError('"params" must be an object')
        params = {**params, **{str(k): v for k, v in extra.items()}}
    else:
        body = raw
    if not body:
        raise RequestError("POST the page's HTML as the request body")
    if url is not None:
        url = validate_url(url)
    if isinstance(body, bytes) and body[:2] == GZIP_MAGIC:  # gzip: undone under the fetch's caps
        body = await _gunzipped(body, request.app[SETTINGS], url)
    reader = request.app[READER]
    extractor, settings = reader.resolve_request(algorithm, params)
    render = parse_flag(query.get("render"))
    reader.check_browser(extractor, render)
    data = await reader.extract_bytes(
        body, url, content_type, extractor, settings, render=render, blocks=wants_blocks(request)
    )
    data["url"] = url
    data["cache"] = {"page": "none", "result": "none"}
    response = _json(request, data)
    response.headers["X-Cache"] = "miss"
    return response


async def _gunzipped(body: bytes, settings: Settings, url: str | None) -> bytes:
    """A posted gzip body decoded in a thread with the fetch's decoded-size and expansion caps (413),
    as a fetched page is; a corrupt one is the request's fault (400)."""
    try:
        return await asyncio.to_thread(unwrap_gzip, body, settings.fetch, url or "")
    except FetchError as exc:
        if exc.kind == "too_large":
            raise FetchError(exc.kind, exc.status, exc.message, url) from None
        raise RequestError(f"the posted body is not valid gzip ({exc.message})") from None


async def healthz(request: web.Request) -> web.Response:
    ready = request.app[READER].pages is not None
    return web.json_response(
        {
            "status": "ok" if ready else "starting",
            "version": __version__,
            "pid": os.getpid(),
            "native_kernels": speedups.native is not None,
        },
        status=200 if ready else 503,
    )


async def metrics_handler(request: web.Request) -> web.Response:
    body, content_type = request.app[METRICS].exposition()
    response = web.Response(body=body)
    response.headers["Content-Type"] = content_type
    return response


def _asset_response(request: web.Request, name: str) -> web.Response:
    asset = request.app[RENDERER].static.get(name)
    if asset is None:
        raise web.HTTPNotFound(reason="No such file")
    response = encoded_response(request, request.app[STATIC][name], asset.content_type)
    response.headers["Cache-Control"] = "public, max-age=31536000, immutable"
    response.headers["ETag"] = f'"{asset.version}"'
    return response


async def static(request: web.Request) -> web.Response:
    """Static files from memory, cacheable for a year (their URLs carry a content hash)."""
    return _asset_response(request, request.match_info["name"])


async def favicon(request: web.Request) -> web.Response:
    """/favicon.ico, which browsers ask for on every site: the icon in static/ (ico or svg)."""
    static_files = request.app[RENDERER].static
    name = "favicon.ico" if "favicon.ico" in static_files else "favicon.svg"
    return _asset_response(request, name)


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _json(request: web.Request, data: Any) -> web.Response:
    return encoded_response(request, _dumps(data).encode("utf-8"), "application/json; charset=utf-8")


def _precompressed(body: bytes) -> Encoded:
    """A body kept with both compressed variants made now, so serving it later costs no compression
    (and a cache of them is charged its true size)."""
    encoded = Encoded(body)
    for coding in CODINGS:
        encoded.for_coding(coding)
    return encoded


def encoded_response(
    request: web.Request,
    body: bytes | Encoded,
    content_type: str,
    status: int = 200,
    *,
    quick: bool = False,
) -> web.Response:
    """A response compressed as the client's Accept-Encoding allows (brotli, gzip), with `Vary`.

    A body given as bytes is sent once: compressed at the quick quality. An `Encoded` body is kept:
    its variant is made at the full quality and kept with it, unless `quick` (`Encoded.for_coding`).
    """
    encoded, once = (body, False) if isinstance(body, Encoded) else (Encoded(body), True)
    payload, coding = encoded.for_coding(
        negotiate(request.headers.get("Accept-Encoding")), quick=quick or once
    )
    response = web.Response(body=payload, status=status)
    response.headers["Content-Type"] = content_type
    response.headers["Vary"] = "Accept-Encoding"
    if coding is not None:
        response.headers["Content-Encoding"] = coding
    return response


# --------------------------------------------------------------------------------------------
# Serving: `readerproxy/app.py` runs the application (with proxy mode when asked); these are the
# reader server's parts of it.


def return_freed_memory() -> None:
    """On glibc: give page-sized buffers their own mappings, returned to the system when freed.

    Fetched pages, results and rendered pages are buffers of 100 KB and more. By default glibc
    maps such a buffer on its own only until the first one is freed, then raises that threshold and
    serves later ones from its heaps (one per thread, up to 8 per core), where freed space between
    live objects stays resident; a server's RSS then keeps growing past what its caches hold.
    Fixing the threshold at 128 KiB and allowing two heaps is what MALLOC_MMAP_THRESHOLD_=131072
    MALLOC_ARENA_MAX=2 do (measured with benchmarks/memory.py). Elsewhere this does nothing.
    """
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-3, 128 * 1024)  # M_MMAP_THRESHOLD
        libc.mallopt(-8, 2)  # M_ARENA_MAX
    except (OSError, AttributeError):  # not glibc
        pass


async def shut_down(runner: web.AppRunner, app: web.Application, timeout: float) -> None:
    """Stop serving: no new connections, idle ones closed, requests in flight given `timeout`
    seconds and then answered 503 (`Drain`); then the workers, the resources and the rest."""
    drain = app[DRAIN]
    log.info("stopping: %d requests in flight get up to %g s to finish", len(drain.tasks), timeout)
    for site in list(runner.sites):
        await site.stop()  # the listening sockets are closed: new connections are refused
    if runner.server is not None:
        runner.server.pre_shutdown()  # idle kept-alive connections close; busy ones after their answer
    cut = await drain.finish(timeout)
    if cut:
        log.warning("stopping: %d requests still running after %g s were answered 503", cut, timeout)
    workers = app[READER].workers
    if workers is not None:
        await workers.close()
    await runner.cleanup()


class _HardenedHandler(web_protocol.RequestHandler):
    """aiohttp's connection handler, with its protocol-level errors (over-long request line or header,
    malformed request) answered with our security headers and logged as one WARNING line."""

    def handle_error(
        self, request: Any, status: int = 500, exc: BaseException | None = None, message: str | None = None
    ) -> web.StreamResponse:
        if status >= 500:
            response = super().handle_error(request, status, exc, message)
        else:
            log.warning("bad request from %s: %s", request.remote, message or exc)
            if request.writer.output_size > 0:
                raise ConnectionError("Response is sent already, cannot send another response")
            phrase = HTTPStatus(status).phrase if status in HTTPStatus._value2member_map_ else "Error"
            response = web.Response(status=status, text=f"{status} {phrase}", content_type="text/plain")
            response.force_close()
        for name, value in SECURITY_HEADERS.items():
            response.headers.setdefault(name, value)
        return response


class _HardenedServer(web.Server):
    __slots__ = ()

    def __call__(self) -> web_protocol.RequestHandler:
        return _HardenedHandler(self, loop=self._loop, **self._kwargs)


def harden_protocol(runner: web.AppRunner) -> None:
    """Make the runner's low-level server hand connections to `_HardenedHandler`."""
    server = runner.server
    if server is not None and type(server) is web.Server:
        server.__class__ = _HardenedServer
