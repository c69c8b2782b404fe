"""Pages rendered in the browser service for the evaluation, from their own bytes.

Algorithms that need the browser (`visual`) read the layout of the rendered page. In the evaluation
every page is rendered from the bytes of the dataset, with no fetcher behind the browser: the
document is all it gets, so stylesheets and images of the page's own host, other hosts and scripts
are all blocked (datasets keep no subresources), and JavaScript is off. `shared_renderer()` starts one
browser on first use, in a thread with its own event loop so the evaluation stays synchronous, and
stops it when the process exits.
"""

from __future__ import annotations

import asyncio
import atexit
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from ..web.browser import BrowserService, BrowserSettings, RenderedPage
from ..web.reader import BLANK_PAGE_URL

#: Seconds one page may take to render in the evaluation (some dataset pages are large).
EVAL_RENDER_TIMEOUT = 60.0

T = TypeVar("T")


class PageRenderer:
    """A synchronous front of `BrowserService` (one tab at a time), remembering the last page."""

    def __init__(self, settings: BrowserSettings | None = None) -> None:
        self.settings = settings or BrowserSettings(pages=1, timeout=EVAL_RENDER_TIMEOUT)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="page-renderer", daemon=True)
        self._thread.start()
        self._service = self._call(self._make_service())
        self._last: tuple[str, str | None, RenderedPage] | None = None

    async def _make_service(self) -> BrowserService:
        return BrowserService(self.settings, fetcher=None)

    def _call(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result()

    def render(self, html: str, url: str | None) -> RenderedPage:
        """The page rendered with its layout snapshot (the same page twice in a row: rendered once)."""
        if self._last is not None and self._last[0] is html and self._last[1] == url:
            return self._last[2]
        page = self._call(self._service.render(url or BLANK_PAGE_URL, html, javascript=False, layout=True))
        self._last = (html, url, page)
        return page

    def close(self) -> None:
        if self._loop.is_running():
            self._call(self._service.close())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)


_shared: PageRenderer | None = None
_lock = threading.Lock()


def shared_renderer() -> PageRenderer:
    """The evaluation's one renderer, started on first use and closed at exit."""
    global _shared
    with _lock:
        if _shared is None:
            _shared = PageRenderer()
            atexit.register(_shared.close)
        return _shared
