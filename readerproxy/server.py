"""The reader server (aiohttp): the reader view, the JSON API, health and metrics.

Layers, top to bottom:

- `create_app(settings)` builds the application: typed `web.AppKey`s, middlewares (metrics, error
  pages, security headers) and the routes. Resources (Fetcher, cache, PageStore, extraction
  threads) are opened and closed in one place, the `Reader`'s `cleanup_ctx` context.
- Route handlers are thin: they parse the request into a `ReadRequest`, call the `Reader`, and
  render its `ReadResult` as HTML, markdown, text or JSON.
- `Reader.read(ReadRequest)` is the request-handling layer that takes a target URL: fetch through
  the page cache, extract (cached by page version, algorithm, parameters and render options; one
  computation per key at a time), and return a JSON-ready result. A browser proxy mode
  (absolute-form requests, CONNECT) will call the same method from its own front end.

Extraction is CPU work: parse + extract + render run in a small thread pool so a big page does not
stall the event loop for the requests being served from cache.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import gc
import json
import logging
import signal
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web

from . import __version__
from .api import algorithms, article_from, resolve_algorithm
from .cache import DecodedMemo, LayeredCache, PageStore, SingleFlight, normalize_url, open_cache
from .decoding import decode_html
from .document import parse
from .extraction import Extractor
from .fetch import FetchedPage, Fetcher, FetchError, validate_url
from .metrics import Metrics
from .render import COOKIE_MAX_AGE, Preferences, Renderer, link_rewriter, preferences, safe_base_url
from .settings import Settings

log = logging.getLogger("readerproxy.server")

FORMATS = {"html": "text/html", "md": "text/markdown", "markdown": "text/markdown", "text": "text/plain",
           "json": "application/json"}
#: Query parameters of /read and /api/extract that are not algorithm parameters.
RESERVED_QUERY = frozenset({"url", "algo", "format", "refresh", "lite", "links", "theme", "size"})
#: Content-Security-Policy of every response: no scripts at all, our stylesheet, images from anywhere.
CSP = (
    "default-src 'none'; style-src 'self'; img-src http: https: data:; form-action 'self'; "
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
    "upstream": "The site did not answer properly",
    "timeout": "The site took too long to answer",
    "bad_request": "Bad request",
    "not_found": "Not found",
    "internal": "Something went wrong",
}
RESULT_VERSION = 2  # bump when the cached result's shape changes


# --------------------------------------------------------------------------------------------
# The request-handling layer: a target URL in, an extraction result out.


@dataclass(frozen=True, slots=True)
class ReadRequest:
    """What to read and how: the target URL, the algorithm and its parameters, render options."""

    url: str
    algorithm: str = "auto"
    params: Mapping[str, str] = field(default_factory=dict)
    images: bool = True
    reader_links: bool = False  # rewrite links in the content to go through /read
    refresh: bool = False


@dataclass(slots=True)
class ReadResult:
    """A JSON-ready extraction result and how the cache served it."""

    data: dict[str, Any]
    cache: str  # X-Cache, the page store's answer: "hit" | "miss" | "revalidated"
    identity: str = ""  # the result's cache key and page version: same identity, same result


class RequestError(Exception):
    """A request the server refuses before fetching (bad algorithm, parameters, body)."""

    def __init__(self, message: str, status: int = 400, kind: str = "bad_request") -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.kind = kind


@functools.lru_cache(maxsize=1024)
def _params_signature(params: object) -> str:
    """Sorted name=value pairs of an extractor's (frozen, hashable) parameters."""
    values = dataclasses.asdict(params)  # type: ignore[call-overload]
    return ",".join(f"{k}={values[k]}" for k in sorted(values))


def result_key(url: str, request: ReadRequest, extractor: Extractor[Any], params: object) -> str:
    """Cache key of an extraction result: normalised URL, algorithm, sorted parameters, render options."""
    settings = _params_signature(params)
    options = f"images={int(request.images)},links={'reader' if request.reader_links else 'original'}"
    return f"result:{normalize_url(url)}|{extractor.name}|{settings}|{options}"


def page_version(page: FetchedPage) -> str:
    """Identifies the fetched copy a result was computed from (a refetch gives a new version)."""
    return f"{page.final_url}|{page.fetched_at!r}|{page.etag or ''}|{page.last_modified or ''}|{len(page.body)}"


class Reader:
    """Reads pages: fetch through the page cache, extract, cache the result. Owns the resources."""

    def __init__(self, settings: Settings, metrics: Metrics) -> None:
        self.settings = settings
        self.metrics = metrics
        self.fetcher: Fetcher | None = None
        self.cache: LayeredCache | None = None
        self.pages: PageStore | None = None
        self.executor: ThreadPoolExecutor | None = None
        self.flights = SingleFlight()
        self._decoded_results: DecodedMemo[dict[str, Any]] = DecodedMemo(json.loads)
        self._resolved: dict[tuple[str, tuple[tuple[str, str], ...]], tuple[Extractor[Any], object]] = {}

    @contextlib.asynccontextmanager
    async def opened(self) -> AsyncIterator[Reader]:
        """Open the fetcher, cache and thread pool; close them all on the way out."""
        settings = self.settings
        _prepare_cache_location(settings.cache)
        fetcher = Fetcher(settings.fetch)
        await fetcher.start()
        cache: LayeredCache | None = None
        executor = ThreadPoolExecutor(max(1, settings.extract_workers), thread_name_prefix="extract")
        try:
            cache = open_cache(settings.cache, on_event=self.metrics.cache_event,
                               memory_bytes=settings.memory_cache_bytes)
            self.fetcher, self.cache, self.executor = fetcher, cache, executor
            self.pages = PageStore(cache, fetcher, default_ttl=settings.page_ttl, max_ttl=settings.max_ttl)
            yield self
        finally:
            self.pages = None
            executor.shutdown(wait=False, cancel_futures=True)
            if cache is not None:
                await cache.close()
            await fetcher.close()

    def resolve(self, name: str, params: Mapping[str, Any]) -> tuple[Extractor[Any], object]:
        """The extractor and its parameters, or a RequestError naming what is wrong."""
        try:
            key = (name or self.settings.default_algorithm, tuple(sorted((k, str(v)) for k, v in params.items())))
        except TypeError:
            key = None
        if key is not None and key in self._resolved:
            return self._resolved[key]
        try:
            extractor = resolve_algorithm(name or self.settings.default_algorithm)
            resolved = extractor, extractor.make_params(params)
        except ValueError as exc:
            raise RequestError(str(exc)) from None
        if key is not None and len(self._resolved) < 1024:  # parameters are immutable dataclasses
            self._resolved[key] = resolved
        return resolved

    async def read(self, request: ReadRequest) -> ReadResult:
        """Fetch (through the page cache) and extract one page."""
        if self.pages is None or self.cache is None:
            raise RuntimeError("Reader used outside of opened()")
        url = validate_url(request.url)
        extractor, params = self.resolve(request.algorithm, request.params)
        began = time.perf_counter()
        try:
            page, page_status = await self.pages.get(url, refresh=request.refresh)
        except FetchError as exc:
            self.metrics.upstream_error(exc.kind)
            raise
        fetch_ms = (time.perf_counter() - began) * 1000
        self.metrics.page_lookup(page_status)
        key = result_key(url, request, extractor, params)
        version = page_version(page)
        data: dict[str, Any] | None = None
        result_status = "miss"
        if not request.refresh:
            data = await self._cached_result(key, version)
            result_status = "hit" if data is not None else "miss"
        if data is None:
            data = await self.flights.run(
                key + "#" + version, lambda: self._compute(key, version, page, request, extractor, params)
            )
        data = dict(data)
        data["url"] = url
        data["cache"] = {"page": page_status, "result": result_status}
        data["timings_ms"] = {**data["timings_ms"], "fetch": round(fetch_ms, 3)}
        return ReadResult(data=data, cache=page_status, identity=key + "#" + version)

    async def _cached_result(self, key: str, version: str) -> dict[str, Any] | None:
        assert self.cache is not None
        raw = await self.cache.get(key)
        if raw is None:
            return None
        try:
            stored = self._decoded_results.decode(key, raw)
        except ValueError:
            return None
        if stored.get("v") != RESULT_VERSION or stored.get("page") != version:
            return None
        result = stored.get("result")
        return result if isinstance(result, dict) else None

    async def _compute(
        self, key: str, version: str, page: FetchedPage, request: ReadRequest,
        extractor: Extractor[Any], params: object,
    ) -> dict[str, Any]:
        data = await self.extract_bytes(
            page.body, page.final_url, page.content_type, extractor, params,
            images=request.images, reader_links=request.reader_links,
        )
        data["final_url"] = page.final_url
        assert self.cache is not None
        stored = json.dumps({"v": RESULT_VERSION, "page": version, "result": data}, ensure_ascii=False)
        await self.cache.set(key, stored.encode("utf-8"), self.settings.result_ttl)
        return data

    async def extract_bytes(
        self, body: bytes | str, url: str | None, content_type: str | None,
        extractor: Extractor[Any], params: object, *, images: bool = True, reader_links: bool = False,
    ) -> dict[str, Any]:
        """Decode, parse, extract and render in the thread pool; the JSON view of the article."""
        loop = asyncio.get_running_loop()
        began = time.perf_counter()
        data = await loop.run_in_executor(
            self.executor, _extract, body, url, content_type, extractor, params, images, reader_links,
        )
        self.metrics.observe_extraction(extractor.name, time.perf_counter() - began)
        return data


def _extract(
    body: bytes | str, url: str | None, content_type: str | None, extractor: Extractor[Any],
    params: object, images: bool, reader_links: bool,
) -> dict[str, Any]:
    """The CPU part of a read (runs in a worker thread): bytes to the article's JSON view."""
    began = time.perf_counter()
    text = body if isinstance(body, str) else decode_html(body, content_type).text
    doc = parse(text, url)
    parse_ms = (time.perf_counter() - began) * 1000
    extraction = extractor.run(doc, params)
    rewrite = link_rewriter(url, extractor.name, lite=not images) if reader_links and url else None
    article = article_from(doc, extraction, parse_ms=parse_ms, rewrite_link=rewrite, images=images)
    data = article.to_dict()
    data["final_url"] = url
    data["timings_ms"] = dict(article.timings)
    return data


class RenderedPages:
    """The last few rendered reader pages, so a hot cached page skips the template (bounded by count)."""

    def __init__(self, max_entries: int = 256) -> None:
        self.max_entries = max_entries
        self._pages: OrderedDict[tuple[str, Preferences, str], bytes] = OrderedDict()

    def get(self, key: tuple[str, Preferences, str]) -> bytes | None:
        page = self._pages.get(key)
        if page is not None:
            self._pages.move_to_end(key)
        return page

    def put(self, key: tuple[str, Preferences, str], page: bytes) -> None:
        self._pages[key] = page
        self._pages.move_to_end(key)
        while len(self._pages) > self.max_entries:
            self._pages.popitem(last=False)


def _prepare_cache_location(spec: str) -> None:
    """Create the directory of a SQLite cache file (the per-user data directory by default)."""
    if spec.startswith("sqlite:"):
        with contextlib.suppress(OSError):  # an unusable location degrades in the cache, not here
            Path(spec.removeprefix("sqlite:")).expanduser().parent.mkdir(parents=True, exist_ok=True)


# --------------------------------------------------------------------------------------------
# The application: keys, middlewares, thin route handlers.

SETTINGS = web.AppKey("settings", Settings)
METRICS = web.AppKey("metrics", Metrics)
READER = web.AppKey("reader", Reader)
RENDERER = web.AppKey("renderer", Renderer)
RENDERED = web.AppKey("rendered", RenderedPages)


def create_app(settings: Settings) -> web.Application:
    """The reader server's application; resources open on startup and close on cleanup."""
    metrics = Metrics()
    app = web.Application(
        middlewares=[metrics_middleware, error_middleware],
        client_max_size=settings.fetch.max_bytes,
    )
    app[SETTINGS] = settings
    app[METRICS] = metrics
    app[READER] = Reader(settings, metrics)
    app[RENDERER] = Renderer(settings.templates_dir, settings.static_dir)
    app[RENDERED] = RenderedPages()
    app.cleanup_ctx.append(_reader_resources)
    app.on_response_prepare.append(_security_headers)
    app.router.add_get("/", index, name="index")
    app.router.add_get("/read", read, name="read")
    app.router.add_get("/api/extract", api_extract_get, name="api_extract")
    app.router.add_post("/api/extract", api_extract_post, name="api_extract_post")
    app.router.add_get("/healthz", healthz, name="healthz")
    app.router.add_get("/metrics", metrics_handler, name="metrics")
    app.router.add_get("/static/{name}", static, name="static")
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
async def error_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Every failure becomes an HTML page (or JSON under /api/), never a traceback."""
    try:
        return await handler(request)
    except FetchError as exc:
        original = getattr(exc, "final_url", None) or exc.url
        return error_response(request, exc.status, exc.kind, exc.message, original)
    except RequestError as exc:
        return error_response(request, exc.status, exc.kind, exc.message)
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


def error_response(
    request: web.Request, status: int, kind: str, message: str, original: str | None = None
) -> web.Response:
    """A JSON error for the API (and format=json), an HTML page for everything else."""
    if request.path.startswith("/api/") or request.query.get("format") == "json":
        body = {"error": {"kind": kind, "status": status, "message": message, "url": original}}
        return web.json_response(body, status=status)
    prefs, _ = preferences(request.query, request.cookies)
    title = ERROR_TITLES.get(kind, "Error")
    if kind == "not_html" and original:
        message = f"{message} Open it directly instead."
    page = request.app[RENDERER].error_page(status, title, message, prefs, original)
    return web.Response(text=page, status=status, content_type="text/html", charset="utf-8")


def _flag(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


def _algorithm_params(query: Mapping[str, str]) -> dict[str, str]:
    """Algorithm parameters: every query parameter that isn't one of the server's own."""
    return {key: value for key, value in query.items() if key not in RESERVED_QUERY}


def _read_request(request: web.Request, prefs: Preferences, *, for_reader: bool) -> ReadRequest:
    query = request.query
    url = query.get("url", "").strip()
    if not url:
        raise RequestError("Give the page's address as ?url=…", kind="bad_url")
    return ReadRequest(
        url=url,
        algorithm=query.get("algo", "").strip() or "auto",
        params=_algorithm_params(query),
        images=prefs.images if for_reader else True,
        reader_links=prefs.reader_links if for_reader else False,
        refresh=_flag(query.get("refresh")),
    )


async def index(request: web.Request) -> web.Response:
    prefs, _ = preferences(request.query, request.cookies)
    settings = request.app[SETTINGS]
    base = safe_base_url(request.scheme, request.host, f"http://{settings.host}:{settings.port}")
    page = request.app[RENDERER].index_page(algorithms(), base, prefs)
    return web.Response(text=page, content_type="text/html", charset="utf-8")


async def read(request: web.Request) -> web.Response:
    """GET /read?url=…&algo=…&format=html|md|text|json — the reader view and its plain formats."""
    fmt = request.query.get("format", "html")
    if fmt not in FORMATS:
        raise RequestError(f"format must be one of {', '.join(FORMATS)}")
    prefs, changed = preferences(request.query, request.cookies)
    html_view = fmt == "html"
    result = await request.app[READER].read(_read_request(request, prefs, for_reader=html_view))
    data = result.data
    if fmt == "json":
        response: web.Response = web.json_response(data, dumps=_dumps)
    elif fmt in ("md", "markdown"):
        response = web.Response(text=_markdown(data), content_type="text/markdown", charset="utf-8")
    elif fmt == "text":
        title = f"{data['title']}\n\n" if data.get("title") else ""
        response = web.Response(text=title + data["text"] + "\n", content_type="text/plain", charset="utf-8")
    else:
        algorithm = request.query.get("algo", "auto") or "auto"
        rendered = request.app[RENDERED]
        key = (result.identity, prefs, algorithm)
        page = rendered.get(key) if result.identity else None
        if page is None:
            page = request.app[RENDERER].reader_page(data, prefs, algorithm).encode("utf-8")
            rendered.put(key, page)
        response = web.Response(body=page, content_type="text/html", charset="utf-8")
        if changed:
            for name, value in prefs.cookies().items():
                response.set_cookie(name, value, max_age=COOKIE_MAX_AGE, path="/", samesite="Lax", httponly=True)
    response.headers["X-Cache"] = result.cache
    return response


async def api_extract_get(request: web.Request) -> web.Response:
    """GET /api/extract?url=…&algo=… — the JSON view of a page."""
    prefs, _ = preferences({}, {})
    result = await request.app[READER].read(_read_request(request, prefs, for_reader=False))
    response = web.json_response(result.data, dumps=_dumps)
    response.headers["X-Cache"] = result.cache
    return response


async def api_extract_post(request: web.Request) -> web.Response:
    """POST /api/extract — HTML in the body (or JSON {html, url, algo, params}), JSON out."""
    query = request.query
    url: str | None = query.get("url") or None
    algorithm = query.get("algo", "") or "auto"
    params = _algorithm_params(query)
    body: bytes | str
    content_type = request.headers.get("Content-Type")
    if request.content_type == "application/json":
        try:
            payload = await request.json()
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
        body = await request.read()
    if not body:
        raise RequestError("POST the page's HTML as the request body")
    if url is not None:
        url = validate_url(url)
    reader = request.app[READER]
    extractor, settings = reader.resolve(algorithm, params)
    data = await reader.extract_bytes(body, url, content_type, extractor, settings)
    data["url"] = url
    data["cache"] = {"page": "none", "result": "none"}
    response = web.json_response(data, dumps=_dumps)
    response.headers["X-Cache"] = "miss"
    return response


async def healthz(request: web.Request) -> web.Response:
    ready = request.app[READER].pages is not None
    return web.json_response({"status": "ok" if ready else "starting", "version": __version__},
                             status=200 if ready else 503)


async def metrics_handler(request: web.Request) -> web.Response:
    body, content_type = request.app[METRICS].exposition()
    response = web.Response(body=body)
    response.headers["Content-Type"] = content_type
    return response


async def static(request: web.Request) -> web.Response:
    """Static files from memory, cacheable for a year (their URLs carry a content hash)."""
    asset = request.app[RENDERER].static.get(request.match_info["name"])
    if asset is None:
        raise web.HTTPNotFound(reason="No such file")
    response = web.Response(body=asset.body)
    response.headers["Content-Type"] = asset.content_type
    response.headers["Cache-Control"] = "public, max-age=31536000, immutable"
    response.headers["ETag"] = f'"{asset.version}"'
    return response


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _markdown(data: Mapping[str, Any]) -> str:
    from .output import html_to_markdown

    heading = f"# {data['title']}\n\n" if data.get("title") else ""
    source = data.get("final_url") or data.get("url")
    origin = f"Source: <{source}>\n\n" if source else ""
    return heading + origin + html_to_markdown(data.get("html") or "")


# --------------------------------------------------------------------------------------------
# Running the server (`readerproxy serve` parses its options in cli.py and calls `run`).


def run(settings: Settings) -> None:
    """Serve until SIGINT or SIGTERM; print the address to open once listening."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("aiohttp.access").setLevel(logging.WARNING)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve_until_stopped(settings))


async def _serve_until_stopped(settings: Settings) -> None:
    app = create_app(settings)
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, settings.host, settings.port, shutdown_timeout=3.0)
    await site.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    for address in runner.addresses:
        host, port = address[0], address[1]
        shown = f"[{host}]" if ":" in host else host
        print(f"readerproxy {__version__}: open http://{shown}:{port}/ in a browser "
              f"(cache {settings.cache}{', private addresses allowed' if settings.allow_private else ''}; "
              "Ctrl+C stops)", flush=True)
    # Everything imported and built so far lives for the whole process: keep it out of the garbage
    # collector's scans (shorter pauses, a steadier p99 under load).
    gc.collect()
    gc.freeze()
    try:
        await stop.wait()
    finally:
        log.info("stopping")
        await runner.cleanup()
