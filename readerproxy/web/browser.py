"""A browser service: one headless Chromium per server process, driven over the DevTools protocol
(the client, `DevToolsBrowser`, is `devtools.py`).

The visually based solution of Berg 2020 (§6.1) needs what a person sees: each element's box, its
visibility and its colours, which only a rendering engine knows. `render=1` needs the same browser
to run a page's scripts before extraction. `BrowserService.render(...)` does both:

1. **One long-lived browser, started lazily.** Debian's `/usr/bin/chromium` (or `--browser PATH`),
   started on the first render, restarted on the next render after it died, closed with the server.
   `./dev serve` never needs it; a missing or failing browser is a `BrowserUnavailable` (503,
   "visual rendering is unavailable: <reason>") at once.
2. **A bounded pool of pages.** At most `pages` renders at a time (an asyncio semaphore); each
   render gets a fresh browser context (no cookies, storage or cache shared between pages) and one
   tab, closed afterwards whatever the outcome: its renderer is ended first with `Page.crash`,
   which Chromium handles on the renderer's IO thread (a main thread stuck in a script, a layout of
   millions of nodes or a synchronous request neither runs `Runtime.terminateExecution` nor lets the
   tab unload), then the tab is closed and its context disposed; a tab the browser still lists
   after that kills the browser (restarted on the next render). Each render has a deadline
   (`RenderTimeout`, 504), after which an unresponsive browser is killed.
3. **No network of its own.** Chromium is started with `--host-resolver-rules="MAP * ~NOTFOUND"`, so
   it cannot resolve any name, and every request is intercepted with the DevTools `Fetch` domain:
   the page's document request is fulfilled with the bytes readerproxy already fetched; a stylesheet
   (and with JavaScript on, a script, XHR or fetch) on the page's own host is fetched through
   readerproxy's `Fetcher`, with its SSRF guard and size caps (GET only); images only when asked
   for; everything else (other hosts, fonts, media, frames) fails. What the `Fetch` domain does not
   see (WebSockets) resolves nothing either, and is sent to a proxy address where nothing listens.
4. **JavaScript off unless asked for** (`Emulation.setScriptExecutionDisabled`); DevTools'
   own `Runtime.evaluate` still runs, which is how the snapshot is read.
5. **The snapshot.** One script numbers every element with a `data-rp` attribute, reads its box,
   visibility, colours and font size into one JSON array, and serialises the rendered DOM; see
   `layout.py` for how the rows are mapped onto the parsed `Document`.
6. **A budget per render.** What a page may make readerproxy do is bounded: `max_requests`
   intercepted requests (further ones are failed unfetched), and `max_bytes` of subresource
   answers delivered to it through the `Fetcher`: an answer that would pass the budget is failed,
   not delivered, and once `max_bytes` have been read (delivered or not) nothing more is fetched;
   at most `FETCHES_PER_RENDER` fetches are under way at once, so what is read stays within
   `max_bytes` plus a few fetch caps. The rendered DOM may have at most `max_elements` elements
   and `max_html_bytes` of serialised HTML, both checked inside the page before anything is
   serialised (`RenderTooLarge`, 413), and DevTools messages are capped (`devtools.MAX_MESSAGE_BYTES`).
   While the page renders, its DOM node count is read every `DOM_POLL` seconds, a running script
   interrupted for it: past `NODES_PER_ELEMENT` × `max_elements` the render is a 413 at once (a
   script appending millions of paragraphs was a 504 at the deadline, its renderer at 2 GB after).
   V8's heap is capped by `--js-flags`, and a page process whose resident size passes
   `max_memory` (the DOM a script builds is no V8 heap) is killed: its tab crashes, which fails
   that render at once and leaves the browser and other pages running. That watchdog runs for as
   long as the browser does, over every renderer, not only while a render is under way. WebRTC's
   constructors are removed from every frame before the page's scripts run (besides the flags
   that keep its UDP from going anywhere but the proxy that is not there).
7. **Fair shares and a bounded queue.** One client address (`workers.CLIENT`) holds at most
   `per_client` pages at once (half the pool, at least one, by default) and at most half the
   queue; at most `queue` renders wait for a page. Past either the render is `workers.Overloaded`
   (503 with Retry-After) at once. A render whose client goes away (`CONNECTED`, which the server
   sets per request) or whose caller is cancelled stops within `CLIENT_POLL` seconds, closes its
   tab and gives its page back; a browser that dies fails every render in it at once
   (`BrowserUnavailable`), without waiting for the deadline.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import logging
import os
import signal
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

import aiohttp

from ..engine.parse.layout import LayoutSnapshot
from ..errors import ReaderproxyError
from .devtools import (
    DEFAULT_EXECUTABLE,
    BrowserUnavailable,
    DevToolsBrowser,
    DevToolsError,
    unavailable_reason,
)
from .fetch import Fetcher, FetchError
from .limits import KeyedSemaphores
from .workers import CLIENT, Overloaded

log = logging.getLogger(__name__)
T = TypeVar("T")

#: Seconds a DevTools command may take outside a render (closing tabs, shutting down).
COMMAND_TIMEOUT = 10.0
#: Resource types fetched for a page on its own host (`Fetch.requestPaused` resourceType).
STYLE_TYPES = frozenset({"Stylesheet"})
SCRIPT_TYPES = frozenset({"Script", "XHR", "Fetch"})
IMAGE_TYPES = frozenset({"Image"})
#: Whether the client of the current request is still connected (the server sets it per request;
#: unset, a render runs to its end). A render whose client has gone is stopped (`ClientGone`).
CONNECTED: ContextVar[Callable[[], bool] | None] = ContextVar("readerproxy_connected", default=None)
#: Seconds between two looks at the memory of the browser's page processes while pages are open,
#: and while none is (the watchdog runs as long as the browser: a renderer outlives its render if
#: anything goes wrong, and that one is bounded too).
MEMORY_POLL = 0.5
IDLE_MEMORY_POLL = 1.0
#: Seconds between two reads of a rendering page's DOM node count (`Performance.getMetrics`, which
#: Chromium answers by interrupting a running script: the count is read while the script builds).
DOM_POLL = 0.25
#: DOM nodes a rendering page may have per element allowed (`max_elements`): Chromium's count takes in
#: text nodes and comments (about one per element in real pages) and nodes not yet collected; past
#: this the page is too large at once, without waiting for its load and the exact count.
NODES_PER_ELEMENT = 4
#: Seconds between two looks at whether a render's client is still connected.
CLIENT_POLL = 0.25
#: Subresources fetched at once for one render (what is read but not yet delivered stays bounded).
FETCHES_PER_RENDER = 4
#: Run in every frame before its scripts (JavaScript on): no WebRTC, so a page's script cannot send
#: STUN or TURN packets, which no request interception sees.
NO_WEBRTC_SCRIPT = """
(() => {
  for (const name of ["RTCPeerConnection", "webkitRTCPeerConnection", "RTCDataChannel",
      "RTCRtpSender", "RTCRtpReceiver", "RTCRtpTransceiver", "RTCIceCandidate",
      "RTCSessionDescription", "RTCDtlsTransport", "RTCIceTransport", "RTCSctpTransport",
      "RTCEncodedAudioFrame", "RTCEncodedVideoFrame", "RTCError", "RTCErrorEvent",
      "RTCPeerConnectionIceEvent", "RTCPeerConnectionIceErrorEvent", "RTCDataChannelEvent",
      "RTCTrackEvent", "RTCDTMFSender", "RTCDTMFToneChangeEvent", "RTCCertificate"]) {
    try { delete globalThis[name]; } catch (e) {}
    try { Object.defineProperty(globalThis, name, {value: undefined, configurable: false, writable: false}); }
    catch (e) {}
  }
})();
"""


class RenderFailed(ReaderproxyError):
    """The browser runs but could not render this page (navigation refused, snapshot failed)."""

    kind = "render_failed"
    status = 502


class RenderTimeout(ReaderproxyError):
    """A page did not render within the deadline."""

    kind = "render_timeout"
    status = 504


class ClientGone(ReaderproxyError):
    """The client went away while its page waited for or was in the browser: the render stopped."""

    kind = "client_gone"
    status = 499  # nobody reads it: the connection is closed


class RenderTooLarge(ReaderproxyError):
    """The rendered page is over the DOM caps (elements or serialised HTML): nothing is returned."""

    kind = "render_too_large"
    status = 413


@dataclass(frozen=True, slots=True)
class BrowserSettings:
    """How pages are rendered; the server's `--browser`, `--browser-pages`, `--render-timeout`."""

    executable: str = DEFAULT_EXECUTABLE
    pages: int = 2  # renders at a time (tabs open at once)
    timeout: float = 15.0  # seconds per render, from the tab's creation to the snapshot
    viewport_width: int = 1280  # a desktop layout, as the browser of Berg 2020 (§6) showed
    viewport_height: int = 900
    images: bool = False  # load images of the page's own host (they only cost time for the layout)
    settle_ms: int = 100  # with JavaScript on: time given to timers after the load event
    max_bytes: int = 4 * 1024 * 1024  # subresource bytes delivered to one page (sum of answers)
    max_requests: int = 100  # requests one page may make (the document aside); further ones fail
    max_html_bytes: int = 10 * 1024 * 1024  # serialised DOM returned (the fetch's size cap)
    max_elements: int = 200_000  # elements of the rendered DOM (one layout row each)
    queue: int = 8  # renders that may wait for a page; more get 503 + Retry-After
    per_client: int = 0  # pages one client address may hold at once (0: half the pages, at least 1)
    max_memory: int = 1024 * 1024 * 1024  # resident bytes of one page process; past it, it is killed

    def __post_init__(self) -> None:
        if not 1 <= self.pages <= 64:
            raise ValueError("browser pages must be between 1 and 64")
        if not 0 < self.timeout <= 600:
            raise ValueError("render timeout must be in (0, 600] seconds")
        if self.max_bytes < 0 or self.max_requests < 0 or self.queue < 0 or self.per_client < 0:
            raise ValueError("render budgets, the render queue and the per-client share must be >= 0")
        if self.max_html_bytes < 1 or self.max_elements < 1 or self.max_memory < 1:
            raise ValueError("the rendered DOM's caps must be positive")

    @property
    def client_pages(self) -> int:
        """Pages one client address may hold at once."""
        return max(1, self.per_client if self.per_client > 0 else self.pages // 2)


@dataclass(frozen=True, slots=True)
class RequestLog:
    """What the page asked for while rendering, by outcome."""

    fulfilled: int = 0  # answered from readerproxy (the document and fetched resources)
    blocked: int = 0  # failed on purpose (other hosts, types not allowed, over the budget) or refused
    bytes: int = 0  # subresource bytes delivered to the page (the document aside)
    over_budget: int = 0  # of `blocked`: failed because the render's request or byte budget was spent


@dataclass(slots=True)
class _Budget:
    """What one render has spent so far (its `RequestLog` in the making)."""

    fulfilled: int = 0
    blocked: int = 0
    bytes: int = 0
    over_budget: int = 0
    requests: int = 0  # intercepted requests but the document
    read: int = 0  # subresource bytes read through the fetcher, delivered or not
    fetching: asyncio.Semaphore = field(default_factory=lambda: asyncio.Semaphore(FETCHES_PER_RENDER))

    def log(self) -> RequestLog:
        return RequestLog(self.fulfilled, self.blocked, self.bytes, self.over_budget)


@dataclass(frozen=True, slots=True)
class RenderedPage:
    """A page after the browser: the rendered DOM's HTML and, when asked for, its layout snapshot."""

    html: str
    layout: LayoutSnapshot | None
    url: str
    elapsed_ms: float
    requests: RequestLog = field(default_factory=RequestLog)


#: Checks the DOM's size first (`%(elements)d` elements, `%(chars)d` characters of HTML at most: past
#: either it answers `{"too_large": ...}` and nothing else), then numbers every element, reads one
#: row of `layout.ROW_FIELDS` per element (in document order, so a parent's resolved background is
#: known before its children's) and serialises the rendered DOM.
SNAPSHOT_SCRIPT = r"""
(() => {
  const count = document.getElementsByTagName("*").length;
  if (count > %(elements)d) return JSON.stringify({too_large: "elements", count: count});
  const MARK = "data-rp";
  const rows = [];
  const background = new Map();
  const canvas = document.createElement("canvas").getContext("2d");
  const parse = (value) => {
    let m = /^rgba?\(([^)]*)\)$/.exec(value);
    if (!m && canvas) { canvas.fillStyle = "#000"; canvas.fillStyle = value; m = /^rgba?\(([^)]*)\)$/.exec(canvas.fillStyle);
      if (!m && /^#[0-9a-f]{6}$/i.test(canvas.fillStyle)) { const h = canvas.fillStyle;
        return [parseInt(h.slice(1, 3), 16), parseInt(h.slice(3, 5), 16), parseInt(h.slice(5, 7), 16), 1]; } }
    if (!m) return [0, 0, 0, 1];
    const p = m[1].split(/[\s,\/]+/).filter(Boolean).map(Number);
    return [p[0] || 0, p[1] || 0, p[2] || 0, p.length > 3 ? p[3] : 1];
  };
  const sx = window.scrollX, sy = window.scrollY;
  const all = document.querySelectorAll("*");
  for (let i = 0; i < all.length; i++) {
    const el = all[i];
    el.setAttribute(MARK, String(i));
    const cs = getComputedStyle(el);
    const r = el.getBoundingClientRect();
    const up = el.parentElement ? background.get(el.parentElement) : null;
    const under = up || [255, 255, 255];
    const own = parse(cs.backgroundColor);
    const a = Math.max(0, Math.min(1, own[3]));
    const bg = [0, 1, 2].map((k) => a * own[k] + (1 - a) * under[k]);
    background.set(el, bg);
    const visible = el.checkVisibility
      ? el.checkVisibility({opacityProperty: true, visibilityProperty: true})
      : cs.display !== "none" && cs.visibility === "visible";
    const clipped = cs.overflowX !== "visible" || cs.overflowY !== "visible"
      || (cs.clip && cs.clip !== "auto") || (cs.clipPath && cs.clipPath !== "none");
    const color = parse(cs.color);
    rows.push(r.left + sx, r.top + sy, r.width, r.height, visible ? 1 : 0, clipped ? 1 : 0,
      color[0], color[1], color[2], color[3], bg[0], bg[1], bg[2], parseFloat(cs.fontSize) || 0);
  }
  const root = document.documentElement;
  const doctype = document.doctype ? "<!DOCTYPE " + document.doctype.name + ">" : "";
  const html = doctype + root.outerHTML;
  if (html.length > %(chars)d) return JSON.stringify({too_large: "html", length: html.length});
  return JSON.stringify({
    rows: rows, width: Math.max(root.scrollWidth, root.clientWidth), height: root.scrollHeight,
    viewport: window.innerWidth, html: html,
  });
})()
"""
#: The rendered DOM's HTML alone (JavaScript on, no layout), under the same caps as the snapshot.
SERIALISE_SCRIPT = r"""
(() => {
  const count = document.getElementsByTagName("*").length;
  if (count > %(elements)d) return JSON.stringify({too_large: "elements", count: count});
  const root = document.documentElement;
  const html = (document.doctype ? "<!DOCTYPE " + document.doctype.name + ">" : "") + (root ? root.outerHTML : "");
  if (html.length > %(chars)d) return JSON.stringify({too_large: "html", length: html.length});
  return JSON.stringify({html: html});
})()
"""
#: With JavaScript on: give timers started at load one more turn before the DOM is read.
SETTLE_SCRIPT = "new Promise((done) => setTimeout(done, %d))"


class BrowserService:
    """Renders pages in one lazily started Chromium with at most `settings.pages` tabs at a time."""

    def __init__(self, settings: BrowserSettings | None = None, fetcher: Fetcher | None = None) -> None:
        self.settings = settings or BrowserSettings()
        self.fetcher = fetcher  # None: nothing but the document is served (evaluation on saved pages)
        self._browser: DevToolsBrowser | None = None
        self._starting = asyncio.Lock()
        self._start_task: asyncio.Future[DevToolsBrowser] | None = None
        self._slots = asyncio.Semaphore(self.settings.pages)
        self._clients = KeyedSemaphores(self.settings.client_pages)  # client -> its pages (users: renders)
        self.client_queue = max(1, self.settings.queue // 2)  # renders one client may have waiting
        self.waiting = 0  # renders waiting for a page now
        self.rejected = 0  # renders refused at once (queue full or the client's share taken)
        self.open_pages = 0  # tabs open now
        self.peak_pages = 0  # most tabs open at once since start
        self.renders = 0
        self.restarts = 0
        self.memory_kills = 0  # page processes killed for passing `max_memory`
        self.dom_refusals = 0  # renders stopped while rendering for a DOM past the node bound
        self.stuck_tabs = 0  # tabs still listed after their close: each killed the browser
        self._memory_watch: asyncio.Task[None] | None = None
        self.last_failure: str | None = None
        self._closed = False

    @property
    def pid(self) -> int | None:
        """The running browser's process id (None before the first render or after a crash)."""
        browser = self._browser
        if browser is None or browser.process is None or not browser.alive:
            return None
        return browser.process.pid

    def unavailable_reason(self) -> str | None:
        """Why visual rendering cannot run now (None: it can, or will try on the next render)."""
        return unavailable_reason(self.settings.executable)

    async def _running(self) -> DevToolsBrowser:
        """The browser, started (or restarted after a crash) when needed."""
        if self._closed:
            raise BrowserUnavailable("the server is shutting down")
        reason = self.unavailable_reason()
        if reason is not None:
            raise BrowserUnavailable(reason)
        async with self._starting:
            browser = self._browser
            if browser is not None and browser.alive:
                return browser
            if self._start_task is None or self._start_task.done():
                self._start_task = asyncio.ensure_future(self._start())
                self._start_task.add_done_callback(_retrieved)
            starting = self._start_task
        # shielded: a caller cancelled (its client went away) leaves the start to the next render
        return await asyncio.shield(starting)

    async def _start(self) -> DevToolsBrowser:
        """Start a browser (closing the one that stopped) and keep it as `_browser`."""
        browser = self._browser
        if browser is not None:
            log.warning("the browser stopped; starting a new one")
            self.restarts += 1
            self._browser = None
            await browser.close()
        browser = DevToolsBrowser(self.settings.executable)
        try:
            await browser.start()
        except BrowserUnavailable as exc:
            await browser.close()
            self.last_failure = exc.reason
            raise
        except (OSError, TimeoutError, aiohttp.ClientError) as exc:
            await browser.close()
            self.last_failure = f"the browser did not start ({type(exc).__name__}: {exc})"
            raise BrowserUnavailable(self.last_failure) from exc
        except BaseException:
            await browser.close()
            raise
        if self._closed:
            await browser.close()
            raise BrowserUnavailable("the server is shutting down")
        self._browser = browser
        self.last_failure = None
        # for the browser's whole life: a renderer is bounded whether or not a render holds it
        self._memory_watch = asyncio.create_task(self._watch_memory(browser))
        return browser

    async def render(
        self,
        url: str,
        body: bytes | str,
        content_type: str | None = None,
        *,
        javascript: bool = False,
        layout: bool = True,
        client: str | None = None,
    ) -> RenderedPage:
        """Render `body` as the page at `url`; the rendered HTML, with the layout snapshot if asked.

        `client` (by default `workers.CLIENT`, the address the server saw) is what pages are shared
        out by; `Overloaded` at once when the queue or the client's share of it is full. When the
        client goes away (`CONNECTED`), the render stops, its tab is closed and `ClientGone` raised."""
        if isinstance(body, str):
            body = body.encode("utf-8")
            content_type = "text/html; charset=utf-8"
        owner = CLIENT.get() if client is None else client
        connected = CONNECTED.get()
        if connected is None:
            return await self._queued(owner, url, body, content_type, javascript, layout)
        task = asyncio.ensure_future(self._queued(owner, url, body, content_type, javascript, layout))
        try:
            while not task.done():
                await asyncio.wait((task,), timeout=CLIENT_POLL)
                if not task.done() and not connected():
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task
                    raise ClientGone("the client went away; its render was stopped")
        finally:
            if not task.done():  # the caller itself was cancelled
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        return task.result()

    async def _queued(
        self, client: str, url: str, body: bytes, content_type: str | None, javascript: bool, layout: bool
    ) -> RenderedPage:
        """The render, once the client's share and the pool have a page for it."""
        async with self._page_for(client):
            return await self._render(url, body, content_type, javascript, layout)

    @contextlib.asynccontextmanager
    async def _page_for(self, client: str) -> AsyncIterator[None]:
        """Hold one of the client's own pages and one of the pool's for the body of the `async with`."""
        retry_after = max(1, round(self.settings.timeout / 2))
        if self._slots.locked() and self.waiting >= self.settings.queue:
            self.rejected += 1
            raise Overloaded("too many pages are being rendered; try again in a moment", retry_after)
        renders = self._clients.users(client)
        if renders >= self.settings.client_pages + self.client_queue:
            self.rejected += 1
            raise Overloaded(
                f"this address already has {renders} pages being rendered; try again when they are done",
                retry_after,
            )
        share = self._clients.join(client)
        holding = slot = False
        self.waiting += 1
        try:
            # no deadline of its own: the queue is bounded and every render ahead has its deadline
            try:
                await share.acquire()  # one of this client's own pages first,
                holding = True
                await self._slots.acquire()  # then any page of the pool
                slot = True
            finally:
                self.waiting -= 1
            yield
        finally:
            if slot:
                self._slots.release()
            if holding:
                share.release()
            self._clients.leave(client)

    async def _render(
        self, url: str, body: bytes, content_type: str | None, javascript: bool, layout: bool
    ) -> RenderedPage:
        """One render on a page of the pool (held by the caller)."""
        browser = await self._running()
        began = time.perf_counter()
        try:
            async with asyncio.timeout(self.settings.timeout):
                async with self._tab(browser) as (session, counts):
                    html, snapshot = await self._load(
                        browser, session, counts, url, body, content_type, javascript, layout
                    )
        except TimeoutError:
            if browser.alive:  # a stuck tab can mean a stuck browser: start afresh next time
                await self._check_responsive(browser)
            raise RenderTimeout(
                f"the page did not render within {self.settings.timeout:g} s", kind="render_timeout"
            ) from None
        except (ConnectionError, DevToolsError, aiohttp.ClientError) as exc:
            if not browser.alive:
                self.last_failure = "the browser stopped during the render"
                raise BrowserUnavailable(self.last_failure) from exc
            raise RenderFailed(f"the browser could not render the page ({exc})") from exc
        self.renders += 1
        return RenderedPage(
            html=html,
            layout=snapshot,
            url=url,
            elapsed_ms=(time.perf_counter() - began) * 1000.0,
            requests=counts.log(),
        )

    async def _check_responsive(self, browser: DevToolsBrowser) -> None:
        try:
            await asyncio.wait_for(browser.send("Browser.getVersion"), 2)
        except (TimeoutError, ConnectionError, DevToolsError):
            browser.kill()

    @contextlib.asynccontextmanager
    async def _tab(self, browser: DevToolsBrowser) -> AsyncIterator[tuple[str, _Budget]]:
        """A fresh browser context with one tab attached (flattened session); both closed after,
        also when the render is cancelled (its client went away) or the deadline passed."""
        context = await browser.send("Target.createBrowserContext", {"disposeOnDetach": True})
        context_id = context["browserContextId"]
        target_id = ""
        session = ""
        self.open_pages += 1
        self.peak_pages = max(self.peak_pages, self.open_pages)
        try:
            target = await browser.send(
                "Target.createTarget", {"url": "about:blank", "browserContextId": context_id}
            )
            target_id = target["targetId"]
            attached = await browser.send("Target.attachToTarget", {"targetId": target_id, "flatten": True})
            session = attached["sessionId"]
            yield session, _Budget()
        finally:
            if session:
                browser.on(session, "Fetch.requestPaused", None)
                browser.on(session, "Page.loadEventFired", None)
                browser.on(session, "Inspector.targetCrashed", None)
            # Closing must finish even when the caller was cancelled: shielded, and bounded in time.
            closing = asyncio.ensure_future(self._close_tab(browser, session, target_id, context_id))
            try:
                await asyncio.shield(closing)
            except asyncio.CancelledError:
                await closing  # a second cancellation waits for the (bounded) close all the same
                raise
            finally:
                self.open_pages -= 1

    async def _watch_memory(self, browser: DevToolsBrowser) -> None:
        """For as long as `browser` runs: kill a page process (renderer) whose resident size passes
        `max_memory`; its tab crashes (`Inspector.targetCrashed`) and that render fails at once,
        while the browser and the other pages go on. A script's heap is capped by `--js-flags`,
        but the DOM it builds is not: this is the bound on that. It looks at every renderer, a
        render under way or not: one that outlived its render (the issue's 2 GB tab) is no
        exception to the bound."""
        if browser.process is None or not Path("/proc").is_dir():
            return
        root = browser.process.pid
        while browser.alive and not self._closed:
            await asyncio.sleep(MEMORY_POLL if self.open_pages > 0 else IDLE_MEMORY_POLL)
            for pid, rss in await asyncio.to_thread(_renderers, root):
                if rss > self.settings.max_memory:
                    log.warning("a page process used %d MB; killing it", rss // (1024 * 1024))
                    self.memory_kills += 1
                    with contextlib.suppress(OSError):
                        os.kill(pid, signal.SIGKILL)

    async def _close_tab(
        self, browser: DevToolsBrowser, session: str, target_id: str, context_id: str
    ) -> None:
        """End the tab's renderer, close the tab and dispose of its context, on every outcome
        (bounded; quiet on failure). A tab the browser still lists afterwards kills the browser.

        `Runtime.terminateExecution` and `Target.closeTarget` alone left a tab running when its main
        thread was not in a script (a layout of millions of nodes, a synchronous request): there is
        nothing to terminate, and closing waits for an unload that never comes. `Page.crash` is
        handled on the renderer's IO thread and ends the process whatever its main thread does;
        each render has a browser context of its own, so no other page shares that process."""
        if not browser.alive:
            return
        closed = False
        # never answered (the renderer is gone), so not waited for: the close goes on meanwhile
        crash = asyncio.ensure_future(browser.send("Page.crash", None, session)) if session else None
        with contextlib.suppress(Exception):
            async with asyncio.timeout(COMMAND_TIMEOUT):
                await asyncio.sleep(0)  # the crash is sent first
                if target_id:
                    await browser.send("Target.closeTarget", {"targetId": target_id})
                await browser.send("Target.disposeBrowserContext", {"browserContextId": context_id})
                listed = await browser.send("Target.getTargets")
                closed = all(t.get("targetId") != target_id for t in listed.get("targetInfos", []))
        if crash is not None:
            crash.cancel()  # its pending entry goes with it
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await crash
        if not closed and browser.alive:
            log.warning("a tab outlived its close; killing the browser (restarted on the next render)")
            self.stuck_tabs += 1
            browser.kill()

    async def _load(
        self,
        browser: DevToolsBrowser,
        session: str,
        budget: _Budget,
        url: str,
        body: bytes,
        content_type: str | None,
        javascript: bool,
        layout: bool,
    ) -> tuple[str, LayoutSnapshot | None]:
        """Navigate the tab to `url` with every request intercepted; read the DOM (and layout).

        Every wait is raced against `failed`, which the browser's death or the tab's crash sets."""
        s = self.settings
        tasks: set[asyncio.Task[None]] = set()
        loop = asyncio.get_running_loop()
        loaded: asyncio.Future[None] = loop.create_future()
        failed: asyncio.Future[None] = loop.create_future()
        browser.watch(failed)

        async def send(method: str, params: dict[str, Any] | None = None) -> Any:
            return await _until(browser.send(method, params, session), failed)

        def paused(params: dict[str, Any]) -> None:
            task = asyncio.create_task(
                self._answer(send, params, url, body, content_type, javascript, budget)
            )
            tasks.add(task)
            task.add_done_callback(tasks.discard)

        def on_load(_params: dict[str, Any]) -> None:
            if not loaded.done():
                loaded.set_result(None)

        def on_crash(_params: dict[str, Any]) -> None:
            if not failed.done():
                failed.set_exception(
                    RenderFailed(
                        "the page's tab crashed (it passed the memory limit of "
                        f"{s.max_memory // (1024 * 1024)} MB, or the browser's own)"
                    )
                )

        async def watch_dom() -> None:
            """Fail the render as too large once the page's DOM node count passes the bound; read
            while it renders, a running script interrupted for it (`Performance.getMetrics`)."""
            bound = s.max_elements * NODES_PER_ELEMENT
            with contextlib.suppress(ConnectionError, DevToolsError, RenderFailed, RenderTooLarge):
                while not failed.done():
                    metrics = await send("Performance.getMetrics")
                    nodes = next(
                        (m.get("value", 0) for m in metrics.get("metrics", []) if m.get("name") == "Nodes"), 0
                    )
                    if nodes > bound and not failed.done():
                        self.dom_refusals += 1
                        failed.set_exception(
                            RenderTooLarge(
                                f"the page built {int(nodes)} DOM nodes while rendering, more than the "
                                f"{bound} allowed (at most {s.max_elements} elements)"
                            )
                        )
                        return
                    await asyncio.sleep(DOM_POLL)

        browser.on(session, "Fetch.requestPaused", paused)
        browser.on(session, "Page.loadEventFired", on_load)
        browser.on(session, "Inspector.targetCrashed", on_crash)
        try:
            await send("Inspector.enable")
            await send("Performance.enable")
            counting = asyncio.create_task(watch_dom())
            tasks.add(counting)
            counting.add_done_callback(tasks.discard)
            await send("Fetch.enable", {"patterns": [{"urlPattern": "*", "requestStage": "Request"}]})
            await send("Page.enable")
            if javascript:
                await send("Page.addScriptToEvaluateOnNewDocument", {"source": NO_WEBRTC_SCRIPT})
            await send("Emulation.setScriptExecutionDisabled", {"value": not javascript})
            await send(
                "Emulation.setDeviceMetricsOverride",
                {
                    "width": s.viewport_width,
                    "height": s.viewport_height,
                    "deviceScaleFactor": 1,
                    "mobile": False,
                },
            )
            navigated = await send("Page.navigate", {"url": url})
            if navigated.get("errorText"):
                raise DevToolsError(f"navigation failed: {navigated['errorText']}")
            await _until(loaded, failed)
            if javascript and s.settle_ms > 0:
                await send(
                    "Runtime.evaluate",
                    {"expression": SETTLE_SCRIPT % s.settle_ms, "awaitPromise": True, "returnByValue": True},
                )
            caps = {"elements": s.max_elements, "chars": s.max_html_bytes}
            script = (SNAPSHOT_SCRIPT if layout else SERIALISE_SCRIPT) % caps
            result = await send("Runtime.evaluate", {"expression": script, "returnByValue": True})
        finally:
            for task in list(tasks):
                task.cancel()
            if not failed.done():
                failed.cancel()
            elif not failed.cancelled():
                failed.exception()  # retrieved: the render reports it (or has its result already)
        if "exceptionDetails" in result:
            raise DevToolsError(f"the snapshot script failed: {result['exceptionDetails'].get('text', '')}")
        value = result.get("result", {}).get("value")
        if not isinstance(value, str):
            raise DevToolsError("the snapshot script returned nothing")
        data = json.loads(value)
        self._check_size(data)
        if not layout:
            return data["html"], None
        snapshot = LayoutSnapshot.from_rows(data["rows"], data["width"], data["height"], data["viewport"])
        return data["html"], snapshot

    def _check_size(self, data: dict[str, Any]) -> None:
        """RenderTooLarge when the page said it is over a DOM cap, or its HTML is over the byte cap."""
        s = self.settings
        if data.get("too_large") == "elements":
            raise RenderTooLarge(
                f"the rendered page has {data.get('count')} elements, more than the {s.max_elements} allowed"
            )
        html = data.get("html")
        if data.get("too_large") == "html" or not isinstance(html, str) or len(html) > s.max_html_bytes:
            raise RenderTooLarge(f"the rendered page's HTML is larger than {s.max_html_bytes} bytes")
        if len(html.encode("utf-8", "surrogatepass")) > s.max_html_bytes:
            raise RenderTooLarge(f"the rendered page's HTML is larger than {s.max_html_bytes} bytes")

    async def _answer(
        self,
        send: Callable[[str, dict[str, Any]], Awaitable[Any]],
        params: dict[str, Any],
        page_url: str,
        body: bytes,
        content_type: str | None,
        javascript: bool,
        budget: _Budget,
    ) -> None:
        """Answer one intercepted request: the document from `body`, allowed resources through the
        Fetcher within the render's budget, everything else failed."""
        s = self.settings
        request_id = params["requestId"]
        request_url = params.get("request", {}).get("url", "")
        kind = params.get("resourceType", "")
        try:
            if kind == "Document" and _same_url(request_url, page_url):
                await _fulfil(send, request_id, body, content_type or "text/html")
                budget.fulfilled += 1
                return
            budget.requests += 1
            if budget.requests > s.max_requests or budget.read >= s.max_bytes:
                budget.over_budget += 1
            else:
                method = params.get("request", {}).get("method", "GET")
                if method == "GET" and self._allowed(request_url, page_url, kind, javascript):
                    assert self.fetcher is not None
                    async with budget.fetching:
                        fetched = None
                        if budget.read < s.max_bytes:  # spent while this one waited
                            with contextlib.suppress(FetchError):
                                fetched = await self.fetcher.fetch(request_url, html_only=False)
                            budget.read += len(fetched.body) if fetched is not None else 0
                    if fetched is not None and budget.bytes + len(fetched.body) <= s.max_bytes:
                        budget.bytes += len(fetched.body)
                        await _fulfil(send, request_id, fetched.body, fetched.content_type)
                        budget.fulfilled += 1
                        return
                    if fetched is not None or budget.read >= s.max_bytes:
                        budget.over_budget += 1
            await send("Fetch.failRequest", {"requestId": request_id, "errorReason": "BlockedByClient"})
            budget.blocked += 1
        except (ConnectionError, DevToolsError, RenderFailed):
            pass  # the tab or the browser went away; the render itself reports that

    def _allowed(self, request_url: str, page_url: str, kind: str, javascript: bool) -> bool:
        if self.fetcher is None or not _same_origin(request_url, page_url):
            return False
        allowed = set(STYLE_TYPES)
        if javascript:
            allowed |= SCRIPT_TYPES
        if self.settings.images:
            allowed |= IMAGE_TYPES
        return kind in allowed

    async def close(self) -> None:
        """Close the browser (the server is stopping); renders after this are refused."""
        self._closed = True
        if self._memory_watch is not None:
            self._memory_watch.cancel()
        async with self._starting:
            if self._start_task is not None and not self._start_task.done():
                with contextlib.suppress(Exception):
                    await self._start_task
            if self._browser is not None:
                await self._browser.close()
                self._browser = None


def _renderers(root: int) -> list[tuple[int, int]]:
    """(pid, resident bytes) of the page processes (`--type=renderer`) under process `root`, read
    from /proc (empty where it cannot be read)."""
    parents: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
            parents[int(entry.name)] = int(fields[1])
        except (OSError, IndexError, ValueError):
            continue
    found: list[tuple[int, int]] = []
    page_size = os.sysconf("SC_PAGE_SIZE")
    for pid in parents:
        ancestor, hops = parents.get(pid, 0), 0
        while ancestor not in (0, 1, root) and hops < 16:
            ancestor, hops = parents.get(ancestor, 0), hops + 1
        if ancestor != root:
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                if b"--type=renderer" not in cmdline.read():
                    continue
            with open(f"/proc/{pid}/statm", "rb") as statm:
                found.append((pid, int(statm.read().split()[1]) * page_size))
        except (OSError, IndexError, ValueError):
            continue
    return found


def _retrieved(future: asyncio.Future[Any]) -> None:
    """Mark a shared task's exception retrieved (its callers may all have gone)."""
    if not future.cancelled():
        future.exception()


async def _until(awaitable: Awaitable[T], failed: asyncio.Future[Any]) -> T:
    """`awaitable`'s result, or `failed`'s exception as soon as it has one (the awaitable is then
    cancelled): a render waiting on the browser stops when the browser or its tab dies."""
    task = asyncio.ensure_future(awaitable)
    try:
        await asyncio.wait((task, failed), return_when=asyncio.FIRST_COMPLETED)
    finally:
        if not task.done():
            task.cancel()
    if task.done() and not task.cancelled():
        return task.result()
    error = failed.exception() if failed.done() and not failed.cancelled() else None
    if error is not None:
        raise error
    return task.result()  # cancelled: CancelledError


async def _fulfil(
    send: Callable[[str, dict[str, Any]], Awaitable[Any]], request_id: str, body: bytes, content_type: str
) -> None:
    await send(
        "Fetch.fulfillRequest",
        {
            "requestId": request_id,
            "responseCode": 200,
            "responseHeaders": [
                {"name": "Content-Type", "value": content_type or "application/octet-stream"}
            ],
            "body": base64.b64encode(body).decode("ascii"),
        },
    )


def _same_url(a: str, b: str) -> bool:
    """Same address without the fragment; http and https alike (a browser may upgrade the scheme)."""

    def bare(url: str) -> str:
        url = url.split("#", 1)[0]
        return url.removeprefix("https://") if url.startswith("https://") else url.removeprefix("http://")

    return bare(a) == bare(b)


def _same_origin(a: str, b: str) -> bool:
    """Same scheme, host and port (the page's own host; subdomains are other hosts)."""
    try:
        one, two = urlsplit(a), urlsplit(b)
        return one.scheme in ("http", "https") and (one.scheme, one.hostname, one.port) == (
            two.scheme,
            two.hostname,
            two.port,
        )
    except ValueError:
        return False
