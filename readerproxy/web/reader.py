"""The request layer: a target URL in, an extraction result out. Shared by `/read`, the JSON API
and proxy mode.

`Reader.read(ReadRequest)` fetches through the page store (HTTP caching, single flight), extracts
with the one pipeline (`pipeline.process`) in a small pool of worker processes (`workers.py`: a
deadline per extraction, after which the worker is killed and the request gets a 503
"extraction_timeout"; a bounded queue in front), and caches the JSON-ready result by page version, algorithm, parameters and render
options (one computation per key at a time). `Reader.opened()` owns the resources: the fetcher,
the layered cache, the page store and the worker processes.

A client that leaves stops its work: while an extraction (or an overlay's or
compare's build) waits for a worker or runs in one, whether its client is still connected is looked
at every `CLIENT_POLL` seconds (`browser.CONNECTED`, which the server sets per request and proxy mode
per connection, as for a render); once it has gone, the job leaves the queue or its worker is killed
and replaced (`WorkerPool`, counted as "cancelled"), and `ClientGone` is raised. A shared extraction
(single flight) stops only when every client waiting on it has gone (`SingleFlight`'s presence).
Handlers are not cancelled on a disconnect (aiohttp's `handler_cancellation` stays off): what is
past the worker, such as writing a finished result to the cache, still happens.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import json
import re
import time
import typing
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from ..engine.extraction import Extractor, get_extractor, params_dict, registry
from ..engine.parse.layout import LayoutSnapshot
from ..errors import ReaderproxyError, RequestError
from .browser import CLIENT_POLL, CONNECTED, BrowserService, ClientGone
from .cache import LayeredCache, open_cache, parse_cache_spec
from .compare import Comparison, compare_page_source
from .devtools import BrowserUnavailable, unavailable_reason
from .fetch import FetchedPage, Fetcher, FetchError, canonical_url
from .lru import LRU
from .metrics import Metrics
from .overlay import Inspection
from .overlay import inspect as inspect_page
from .page_cache import DecodedMemo, PageStore, page_version
from .settings import Settings
from .singleflight import SingleFlight
from .templating import PREFERENCE_KEYS
from .workers import Call, Job, WorkerPool

T = TypeVar("T")
#: The address a page posted without a URL is rendered at (nothing is ever fetched from it).
BLANK_PAGE_URL = "http://page.invalid/"
RESULT_VERSION = 4  # bump when the cached result's shape changes
#: Extraction failures that are the page's doing: such a page is not kept in the cache.
HOSTILE_KINDS = frozenset({"extraction_timeout", "extraction_failed", "too_large", "render_too_large"})

#: An address typed without a scheme: a host name with a dot, an optional port, then a path.
_SCHEMELESS = re.compile(
    r"^(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\.)+[A-Za-z]{2,63}(?::\d{1,5})?(?:[/?#].*)?$"
)


def target_url(raw: str) -> str:
    """The page a request asks for: an absolute http(s) URL, with `https://` added to an address
    typed without a scheme (`example.com/story`); FetchError 400 for anything else."""
    raw = raw.strip()
    if raw and "://" not in raw and _SCHEMELESS.match(raw):
        raw = "https://" + raw
    return canonical_url(raw)


@dataclass(frozen=True, slots=True)
class ReadRequest:
    """What to read and how: the target URL, the algorithm and its parameters, render options."""

    url: str
    algorithm: str = ""  # "" : the server's default algorithm
    params: Mapping[str, str] = field(default_factory=dict)
    images: bool = True
    reader_links: bool = False  # rewrite links in the content to go through /read
    refresh: bool = False
    render: bool = False  # run the page in the browser with JavaScript on first (render=1)
    blocks: bool = False  # add the blocks and signals of the extraction (`blocks=1` of the API)


@dataclass(slots=True)
class ReadResult:
    """A JSON-ready extraction result and how the cache served it."""

    data: dict[str, Any]
    cache: str  # X-Cache, the page store's answer: "hit" | "miss" | "revalidated"
    identity: str = ""  # the result's cache key and page version: same identity, same result
    #: When both the page and the result came from the memory cache: each (cache key, the stamp of
    #: the entry held there), for `Reader.unchanged`; and until when the page is fresh (`time.time()`).
    sources: tuple[tuple[str, int], ...] = ()
    fresh_until: float = 0.0


#: Query keys of the server's own (request options and reader preferences): never algorithm parameters.
NOT_PARAMETERS = frozenset({"url", "algo", "format", "refresh", "view", "blocks", "render", *PREFERENCE_KEYS})


@functools.lru_cache(maxsize=1)
def _parameter_owners() -> dict[str, frozenset[str]]:
    """Every algorithm parameter name and the algorithms that take it."""
    owners: dict[str, set[str]] = {}
    for name, extractor in registry().items():
        for f in dataclasses.fields(extractor.params_type):
            owners.setdefault(f.name, set()).add(name)
    return {name: frozenset(algos) for name, algos in owners.items()}


def _names_a_file(hint: Any) -> bool:
    """Whether a parameter's type is free text or a path (`str`, `Path`, or an optional one): such a
    value can name a file on the server (`model`, the learned scorer's weights)."""
    if hint in (str, Path):
        return True
    return any(arg in (str, Path) for arg in typing.get_args(hint))


@functools.lru_cache(maxsize=1)
def server_only_parameters() -> frozenset[str]:
    """Algorithm parameters a request may never set: every one typed as free text or a path.

    Nothing from a request may name a file on the server: its error would tell whether the file
    exists, and reading `/dev/stdin` or a FIFO would block. These parameters stay open to the
    library, the command line and `readerproxy eval`; numbers, flags and named choices are what a
    request may set.
    """
    names: set[str] = set()
    for extractor in registry().values():
        hints = typing.get_type_hints(extractor.params_type)
        names.update(
            f.name for f in dataclasses.fields(extractor.params_type) if _names_a_file(hints[f.name])
        )
    return frozenset(names)


def check_request_params(params: Iterable[str]) -> None:
    """RequestError (400) for a parameter a request may not set (`server_only_parameters`); the
    message is the same whatever its value, so it tells nothing about the server's files."""
    refused = sorted(set(params) & server_only_parameters())
    if refused:
        raise RequestError(
            f"parameter {', '.join(refused)} names a file on the server and cannot be set by a request "
            "(the command line and the library take it)"
        )


def algorithm_params(query: Mapping[str, str], algorithm: str) -> dict[str, str]:
    """The algorithm parameters among a request's query keys.

    A key that is a parameter of the chosen algorithm is taken; a key that only other algorithms
    take is an error naming them (a typo or a wrong `algo`); a key no algorithm knows is ignored, so
    links that carry `utm_source` or `fbclid` still work. A key naming a server file (`model`) is
    an error whatever the algorithm (`check_request_params`).
    """
    owners = _parameter_owners()
    params: dict[str, str] = {}
    check_request_params(query.keys())
    for key, value in query.items():
        takers = owners.get(key)
        if takers is None or key in NOT_PARAMETERS:
            continue
        if algorithm not in takers:
            raise RequestError(
                f"parameter {key} is not a parameter of {algorithm!r} "
                f"(it belongs to {', '.join(sorted(takers))})"
            )
        params[key] = value
    return params


@functools.lru_cache(maxsize=1024)
def _params_signature(params: object) -> str:
    """Sorted name=value pairs of an extractor's (frozen, hashable) parameters."""
    values = params_dict(params)
    return ",".join(f"{k}={values[k]}" for k in sorted(values))


def result_version(page: FetchedPage) -> str:
    """The version of a page a cached result was computed from (`pages.page_version`), except that
    a page with a validator keeps its version when a 304 revalidates it: the site said the body is
    unchanged, so the result is too, and a cached read needs no extraction worker for it."""
    if page.etag or page.last_modified:
        return f"{page.final_url}|{page.etag or ''}|{page.last_modified or ''}|{len(page.body)}"
    return page_version(page)


def result_key(url: str, request: ReadRequest, extractor: Extractor[Any], params: object) -> str:
    """Cache key of an extraction result: URL (as validated), algorithm, sorted parameters, render options."""
    settings = _params_signature(params)
    options = (
        f"images={int(request.images)},links={'reader' if request.reader_links else 'original'},"
        f"render={int(request.render)}{',blocks=1' if request.blocks else ''}"
    )
    return f"result:{canonical_url(url)}|{extractor.name}|{settings}|{options}"


#: Bytes of finished comparisons `Reader.compare` keeps in memory, each charged `COMPARISON_CHARGE`
#: times its page's body (a comparison holds a dozen algorithms' text and HTML of that page).
COMPARISON_MEMO_BYTES = 16 * 1024 * 1024
COMPARISON_CHARGE = 4


class Reader:
    """Reads pages: fetch through the page store, extract, cache the result. Owns the resources."""

    def __init__(self, settings: Settings, metrics: Metrics) -> None:
        self.settings = settings
        self.metrics = metrics
        self.fetcher: Fetcher | None = None
        self.cache: LayeredCache | None = None
        self.pages: PageStore | None = None
        self.workers: WorkerPool | None = None
        self.browser: BrowserService | None = None  # started on the first render, not here
        self.flights = SingleFlight(CONNECTED)  # a shared extraction stops when all its clients left
        self._decoded_results: DecodedMemo[dict[str, Any]] = DecodedMemo(json.loads)
        # Finished comparisons by their `finish` and the fetched copy they read (`compare`).
        self._comparisons: LRU[str, tuple[int, Any]] = LRU(
            COMPARISON_MEMO_BYTES, lambda key, entry: len(key) + entry[0]
        )

    @contextlib.asynccontextmanager
    async def opened(self) -> AsyncIterator[Reader]:
        """Open the fetcher, cache and worker processes; close them all on the way out."""
        settings = self.settings
        _prepare_cache_location(settings.cache)
        fetcher = Fetcher(settings.fetch)
        await fetcher.start()
        self.metrics.watch_fetches(fetcher.slots)
        cache: LayeredCache | None = None
        workers = WorkerPool(
            settings.extract_workers,
            deadline=settings.extract_timeout,
            queue_limit=settings.extract_queue,
            per_client=settings.extract_per_client,
            max_rss_bytes=settings.worker_max_rss_bytes,
            on_event=self.metrics.worker_event,
        )
        try:
            await workers.start()
            await asyncio.to_thread(self._load_defaults)
            cache = open_cache(
                settings.cache,
                on_event=self.metrics.cache_event,
                memory_bytes=settings.memory_cache_bytes,
                max_bytes=settings.cache_max_bytes,
            )
            self.fetcher, self.cache, self.workers = fetcher, cache, workers
            self.browser = BrowserService(settings.browser_settings(), fetcher)
            self.metrics.watch_workers(workers)
            self.pages = PageStore(cache, fetcher, default_ttl=settings.page_ttl, max_ttl=settings.max_ttl)
            yield self
        finally:
            self.pages = None
            if self.browser is not None:
                await self.browser.close()
            await workers.close()
            if cache is not None:
                await cache.close()
            await fetcher.close()

    def _load_defaults(self) -> None:
        """Every algorithm's default parameters made once, in a thread at start-up: whatever files
        they read (the learned scorer's weights, read once per process) are read off the event loop,
        and a request never opens a file (`server_only_parameters` keeps requests from naming one)."""
        for name in registry():
            with contextlib.suppress(RequestError):
                self.resolve(name)

    @functools.lru_cache(maxsize=1024)  # noqa: B019 (one Reader per server; parameters are immutable)
    def resolve(self, name: str, params: tuple[tuple[str, str], ...] = ()) -> tuple[Extractor[Any], object]:
        """The extractor (the default when `name` is empty) and its parameters, or a RequestError."""
        try:
            extractor = get_extractor(name or self.settings.default_algorithm)
            return extractor, extractor.make_params(dict(params))
        except ValueError as exc:
            raise RequestError(str(exc)) from None

    def resolve_request(self, name: str, params: Mapping[str, Any]) -> tuple[Extractor[Any], object]:
        """`resolve` for parameters of any value type (the JSON API passes numbers), from a request:
        a parameter naming a server file is refused (`check_request_params`)."""
        check_request_params(params.keys())
        try:
            return self.resolve(name, tuple(sorted((str(k), str(v)) for k, v in params.items())))
        except RequestError:
            raise
        except TypeError as exc:
            raise RequestError(f"bad parameters: {exc}") from None

    async def read(self, request: ReadRequest) -> ReadResult:
        """Fetch (through the page cache) and extract one page."""
        if self.pages is None or self.cache is None:
            raise RuntimeError("Reader used outside of opened()")
        url = target_url(request.url)
        extractor, params = self.resolve_request(request.algorithm, request.params)
        self.check_browser(extractor, request.render)
        began = time.perf_counter()
        page, page_status = await self._page(url, request.refresh)
        # taken before any other await, so it is the entry `page` was decoded from
        page_source = self._memory_source(self.pages.key(url)) if page_status == "hit" else None
        fetch_ms = (time.perf_counter() - began) * 1000
        key = result_key(url, request, extractor, params)
        version = result_version(page)
        data: dict[str, Any] | None = None
        result_status = "miss"
        sources: tuple[tuple[str, int], ...] = ()
        if not request.refresh:
            data = await self._cached_result(key, version)
            result_status = "hit" if data is not None else "miss"
            result_source = self._memory_source(key) if data is not None else None
            if page_source is not None and result_source is not None:
                sources = (page_source, result_source)
        if data is None and (request.render or extractor.needs_browser):
            # not in a shared flight, which would outlive its callers: a render stops with its client
            async with self._forgetting_hostile(url):
                data = await self._compute(key, version, page, request, extractor, params)
        elif data is None:
            async with self._forgetting_hostile(url):
                data = await self.flights.run(
                    key + "#" + version,
                    lambda: self._compute(key, version, page, request, extractor, params),
                )
        data = dict(data)
        data["url"] = url
        data["cache"] = {"page": page_status, "result": result_status}
        data["timings_ms"] = {**data["timings_ms"], "fetch": round(fetch_ms, 3)}
        return ReadResult(
            data=data,
            cache=page_status,
            identity=key + "#" + version,
            sources=sources,
            fresh_until=self.pages.fresh_until(page) if sources else 0.0,
        )

    @contextlib.asynccontextmanager
    async def _forgetting_hostile(self, url: str) -> AsyncIterator[None]:
        """A page whose extraction failed for the page's own sake (past the deadline, crashed the
        worker, too large: `HOSTILE_KINDS`) is dropped from the cache, memory and backend: it
        would only take the room of pages that can be read, and the next request for it fetches
        it again (under the fetch's own limits) rather than finding it cached."""
        try:
            yield
        except ReaderproxyError as exc:
            if exc.kind in HOSTILE_KINDS and self.cache is not None and self.pages is not None:
                await self.cache.delete(self.pages.key(url))
            raise

    def _memory_source(self, key: str) -> tuple[str, int] | None:
        assert self.cache is not None
        stamp = self.cache.memory.stamp(key)
        return None if stamp is None else (key, stamp)

    def unchanged(self, sources: tuple[tuple[str, int], ...]) -> bool:
        """Whether the memory cache still holds, under each key, the very entry of `sources` (a
        refetch, a new result or an eviction replaces or drops it)."""
        if self.cache is None:
            return False
        memory = self.cache.memory
        if not all(memory.stamp(key) == stamp for key, stamp in sources):
            return False
        # A ready page served is a use of what it was made from: without this, a page read only
        # through the fast path drifts to the old end of the memory cache and is evicted while hot
        # (under a hostile load with --cache memory, 535 of 6,957 cached reads then became 503s).
        for key, _ in sources:
            memory.touch(key)
        return True

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
        self,
        key: str,
        version: str,
        page: FetchedPage,
        request: ReadRequest,
        extractor: Extractor[Any],
        params: object,
    ) -> dict[str, Any]:
        data = await self.extract_bytes(
            page.body,
            page.final_url,
            page.content_type,
            extractor,
            params,
            images=request.images,
            reader_links=request.reader_links,
            render=request.render,
            blocks=request.blocks,
        )
        assert self.cache is not None
        stored = json.dumps({"v": RESULT_VERSION, "page": version, "result": data}, ensure_ascii=False)
        await self.cache.set(key, stored.encode("utf-8"), self.settings.result_ttl)
        return data

    async def extract_bytes(
        self,
        body: bytes | str,
        url: str | None,
        content_type: str | None,
        extractor: Extractor[Any],
        params: object,
        *,
        images: bool = True,
        reader_links: bool = False,
        render: bool = False,
        blocks: bool = False,
    ) -> dict[str, Any]:
        """The pipeline in a worker process, within the extraction deadline; the JSON view of the article
        (with `blocks`, also the blocks and signals of the extraction).

        With `render` (JavaScript on) or an algorithm that needs the browser, the page is first run in
        the browser service and its rendered DOM (with the layout snapshot) is what is extracted.
        """
        if self.workers is None:
            raise RuntimeError("Reader used outside of opened()")
        body, content_type, layout, render_ms = await self._rendered(
            body, url, content_type, extractor, render
        )
        began = time.perf_counter()
        data = await self._pooled(
            Job(body, url, content_type, extractor.name, params, images, reader_links, layout, blocks)
        )
        self.metrics.observe_extraction(extractor.name, time.perf_counter() - began)
        if render_ms is not None:
            data["timings_ms"] = {**data.get("timings_ms", {}), "browser": round(render_ms, 3)}
            data["rendered"] = {"javascript": render, "layout": layout is not None}
        return data

    def check_browser(self, extractor: Extractor[Any], render: bool) -> None:
        """BrowserUnavailable (503) at once when the request needs a browser that cannot run."""
        if not (render or extractor.needs_browser):
            return
        reason = (
            self.browser.unavailable_reason()
            if self.browser is not None
            else browser_unavailable_reason(self.settings)
        )
        if reason is not None:
            raise BrowserUnavailable(reason)

    async def _rendered(
        self,
        body: bytes | str,
        url: str | None,
        content_type: str | None,
        extractor: Extractor[Any],
        render: bool,
    ) -> tuple[bytes | str, str | None, LayoutSnapshot | None, float | None]:
        """The page as the browser left it (body, content type, layout, milliseconds), when needed."""
        if not (render or extractor.needs_browser):
            return body, content_type, None, None
        self.check_browser(extractor, render)
        assert self.browser is not None
        page = await self.browser.render(
            url or BLANK_PAGE_URL, body, content_type, javascript=render, layout=extractor.needs_browser
        )
        return page.html, "text/html; charset=utf-8", page.layout, page.elapsed_ms

    async def _page(self, url: str, refresh: bool) -> tuple[FetchedPage, str]:
        """The page through the page store (and its answer: hit, miss, revalidated), counted."""
        assert self.pages is not None
        try:
            page, status = await self.pages.get(url, refresh=refresh)
        except FetchError as exc:
            self.metrics.upstream_error(exc.kind)
            raise
        self.metrics.page_lookup(status)
        return page, status

    # Overlays and compare need the Document and the Extraction, which do not cross a process
    # boundary: the inspection and what is built from it (`finish`, a picklable function returning
    # plain data) both run in a worker process, under the extraction deadline. They run the
    # pipeline once on the fetched page; they neither read nor fill the result cache.

    async def inspect(self, request: ReadRequest, finish: Callable[[Inspection], T]) -> T:
        """`finish` of the page's Inspection (text, Document, Extraction, Article) for `request`."""
        if self.pages is None:
            raise RuntimeError("Reader used outside of opened()")
        url = target_url(request.url)
        extractor, params = self.resolve_request(request.algorithm, request.params)
        self.check_browser(extractor, request.render)
        page, _ = await self._page(url, request.refresh)
        async with self._forgetting_hostile(url):
            body, content_type, layout, _ = await self._rendered(
                page.body, page.final_url, page.content_type, extractor, request.render
            )
            return await self._in_worker(
                Call(
                    inspect_and_finish,
                    (body, page.final_url, content_type, extractor.name, params, layout, finish),
                )
            )

    async def compare(self, request: ReadRequest, finish: Callable[[Comparison], T]) -> T:
        """`finish` of every registered algorithm run on the page (parsed once). When the browser
        can run, the page is rendered once (JavaScript off, with its layout): every algorithm reads
        that DOM and `visual` its layout; otherwise, or when the render fails, `visual` is marked
        unavailable with the reason.

        The finished result is kept (`_comparisons`, by `finish` and `page_version`) unless the
        render failed for a reason that may pass (a timeout, a crash): the costliest route, a dozen
        extractions, is then repeated only for a new copy of the page (`refresh`, or the copy's
        expiry), not for every reload or every request a client sends."""
        if self.pages is None:
            raise RuntimeError("Reader used outside of opened()")
        url = target_url(request.url)
        page, _ = await self._page(url, request.refresh)
        key = f"{finish!r}|{page_version(page)}"
        known = self._comparisons.get(key)
        if known is not None:
            result: T = known[1]
            return result
        needs_browser = [e for e in registry().values() if e.needs_browser]
        body: bytes | str = page.body
        content_type: str | None = page.content_type
        layout: LayoutSnapshot | None = None
        reason: str | None = "no algorithm needs it"
        lasting = True  # the result holds for this copy of the page
        if needs_browser:
            try:
                self.check_browser(needs_browser[0], False)
                body, content_type, layout, _ = await self._rendered(
                    page.body, page.final_url, page.content_type, needs_browser[0], False
                )
                reason = None
            except ReaderproxyError as exc:  # the others still run on the page as fetched
                lasting = isinstance(exc, BrowserUnavailable)
                reason = exc.reason if isinstance(exc, BrowserUnavailable) else str(exc)
        async with self._forgetting_hostile(url):
            result = await self._in_worker(
                Call(compare_and_finish, (body, page.final_url, content_type, finish, layout, reason))
            )
        if lasting:
            self._comparisons.set(key, (COMPARISON_CHARGE * len(page.body), result))
        return result

    async def _in_worker(self, call: Call) -> T:
        """Overlay, compare and blocks work in the worker pool: the same deadline, kill and
        per-client share as an extraction (`finish` must be picklable: a module-level function or
        a module-level class's instance)."""
        result: T = await self._pooled(call)
        return result

    async def _pooled(self, job: Job | Call) -> Any:
        """`job` in the worker pool while its client is there (`CONNECTED`, looked at every
        `CLIENT_POLL` seconds): once the client has gone, the job is cancelled (out of the queue, or
        its worker killed and replaced) and `ClientGone` raised."""
        if self.workers is None:
            raise RuntimeError("Reader used outside of opened()")
        connected = CONNECTED.get()
        if connected is None:  # no client to watch (the library, a test)
            return await self.workers.run(job)
        task = asyncio.ensure_future(self.workers.run(job))
        watch = _ClientWatch(task, connected)
        try:
            return await task
        except asyncio.CancelledError:
            if watch.gone and task.cancelled() and not self._cancelling():
                raise ClientGone("the client went away; its extraction was stopped") from None
            raise
        finally:
            watch.stop()
            if not task.done():  # the caller itself was cancelled
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    @staticmethod
    def _cancelling() -> bool:
        """Whether the current task itself is being cancelled (not only a task it awaits)."""
        current = asyncio.current_task()
        return current is not None and current.cancelling() > 0


class _ClientWatch:
    """Cancels `task` once `connected()` says its client has gone, looking every `CLIENT_POLL`
    seconds. For speed, a timer rather than `asyncio.wait` in a loop (as `BrowserService.render`
    does): the watch adds about 25 µs to a job rather than 60 (a loaded 2-core host).

    An object, not a closure that re-arms itself by its own name: such a closure is a cycle (the
    function, its cell, the function) that kept the task, and so the job's result (a posted 9 MB
    page's text and HTML), until the next full garbage collection, which an idle server never runs.
    `stop` cancels the timer, which lets go of the watch."""

    __slots__ = ("connected", "gone", "loop", "task", "timer")

    def __init__(self, task: asyncio.Future[Any], connected: Callable[[], bool]) -> None:
        self.task = task
        self.connected = connected
        self.gone = False
        self.loop = asyncio.get_running_loop()
        self.timer = self.loop.call_later(CLIENT_POLL, self.look)

    def look(self) -> None:
        if self.task.done():
            return
        if not self.connected():
            self.gone = True
            self.task.cancel()
        else:
            self.timer = self.loop.call_later(CLIENT_POLL, self.look)

    def stop(self) -> None:
        self.timer.cancel()


def inspect_and_finish(
    body: bytes | str,
    url: str | None,
    content_type: str | None,
    algorithm: str,
    params: object,
    layout: LayoutSnapshot | None,
    finish: Callable[[Inspection], T],
) -> T:
    """In a worker: the page's Inspection, handed to `finish` (whose plain result comes back)."""
    return finish(
        inspect_page(
            body, url=url, content_type=content_type, algorithm=algorithm, params=params, layout=layout
        )
    )


def compare_and_finish(
    body: bytes | str,
    url: str | None,
    content_type: str | None,
    finish: Callable[[Comparison], T],
    layout: LayoutSnapshot | None = None,
    unavailable: str | None = None,
) -> T:
    """In a worker: every algorithm on the page (with a render's layout, when there is one),
    handed to `finish`."""
    return finish(
        compare_page_source(body, url=url, content_type=content_type, layout=layout, unavailable=unavailable)
    )


def browser_unavailable_reason(settings: Settings) -> str | None:
    """Why the configured browser cannot run (None: it looks runnable)."""
    return unavailable_reason(settings.browser)


def _prepare_cache_location(spec: str) -> None:
    """Create the directory of a SQLite cache file (the per-user data directory by default)."""
    parsed = parse_cache_spec(spec)
    if parsed.kind == "sqlite":
        with contextlib.suppress(OSError):  # an unusable location degrades in the cache, not here
            Path(parsed.target).expanduser().parent.mkdir(parents=True, exist_ok=True)
