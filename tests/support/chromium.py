"""Headless Chromium for the browser tests, on the product's DevTools client (`readerproxy.web.browser`).

The browser is started with a fresh profile and a host resolver that maps every host but 127.0.0.1
to NOTFOUND, so a page under test can never reach the internet (images of dataset pages simply
fail to load). `Chromium` is the product's `DevToolsBrowser` with these flags, commands bounded by
`COMMAND_TIMEOUT` and events delivered to queues (`subscribe`); `new_page()` creates a target and
attaches to it (flattened session), and `Page` offers the few commands the browser tests need:
viewport, emulated color scheme, navigate, evaluate, screenshot.
"""

from __future__ import annotations

import asyncio
import base64
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from readerproxy.web.devtools import DevToolsBrowser, DevToolsError

__all__ = ["CHROMIUM", "SCREENSHOTS", "Chromium", "DevToolsError", "Page", "show_at"]

CHROMIUM = Path("/usr/bin/chromium")
#: Where the browser tests leave their screenshots (artifacts/screenshots of the repository).
SCREENSHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"
#: Unlike the product's browser service, tests reach their own servers on 127.0.0.1.
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
)
COMMAND_TIMEOUT = 30.0


class Chromium(DevToolsBrowser):
    """The product's DevTools browser with the tests' flags, bounded commands and event queues."""

    def __init__(self, executable: Path = CHROMIUM, extra_flags: Sequence[str] = ()) -> None:
        # extra_flags: e.g. --proxy-server=127.0.0.1:PORT for proxy tests
        super().__init__(str(executable), (*FLAGS, *extra_flags))
        self._queues: dict[tuple[str, str], list[asyncio.Queue[dict[str, Any]]]] = {}

    async def send(
        self, method: str, params: dict[str, Any] | None = None, session: str | None = None
    ) -> Any:
        """Send a command and wait for its result (at most COMMAND_TIMEOUT seconds)."""
        return await asyncio.wait_for(super().send(method, params, session or ""), COMMAND_TIMEOUT)

    def subscribe(self, method: str, session: str | None = None) -> asyncio.Queue[dict[str, Any]]:
        """A queue that receives the params of every later `method` event of `session`."""
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        key = (session or "", method)
        if key not in self._queues:
            queues: list[asyncio.Queue[dict[str, Any]]] = []

            def deliver(params: dict[str, Any]) -> None:
                for each in queues:
                    each.put_nowait(params)

            self._queues[key] = queues
            self.on(*key, deliver)
        self._queues[key].append(queue)
        return queue

    async def new_page(self) -> Page:
        target = await self.send("Target.createTarget", {"url": "about:blank"})
        attached = await self.send("Target.attachToTarget", {"targetId": target["targetId"], "flatten": True})
        page = Page(self, attached["sessionId"])
        await page.send("Page.enable")
        await page.send("Runtime.enable")
        return page


class Page:
    """One tab, attached through a flattened DevTools session."""

    def __init__(self, browser: Chromium, session: str) -> None:
        self.browser = browser
        self.session = session

    async def send(self, method: str, params: dict[str, Any] | None = None) -> Any:
        return await self.browser.send(method, params, session=self.session)

    async def set_viewport(self, width: int, height: int, mobile: bool) -> None:
        await self.send(
            "Emulation.setDeviceMetricsOverride",
            {
                "width": width,
                "height": height,
                "deviceScaleFactor": 1,
                "mobile": mobile,
            },
        )

    async def set_color_scheme(self, scheme: str) -> None:
        await self.set_media("", scheme)

    async def set_media(self, media: str = "", scheme: str | None = None) -> None:
        """Emulate a CSS media type ("print", "screen" or "" for none) and optionally a color scheme."""
        params: dict[str, Any] = {"media": media}
        if scheme:
            params["features"] = [{"name": "prefers-color-scheme", "value": scheme}]
        await self.send("Emulation.setEmulatedMedia", params)

    async def navigate(self, url: str) -> None:
        """Navigate and wait for the load event."""
        loaded = self.browser.subscribe("Page.loadEventFired", self.session)
        result = await self.send("Page.navigate", {"url": url})
        if result.get("errorText"):
            raise DevToolsError(f"navigation to {url} failed: {result['errorText']}")
        await asyncio.wait_for(loaded.get(), COMMAND_TIMEOUT)

    async def evaluate(self, expression: str) -> Any:
        result = await self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in result:
            raise DevToolsError(f"{expression!r} raised {result['exceptionDetails']}")
        return result["result"].get("value")

    async def screenshot(self, path: Path, full_page: bool = False) -> Path:
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            params["captureBeyondViewport"] = True
        data = await self.send("Page.captureScreenshot", params)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data["data"]))
        return path


async def show_at(
    page: Page, url: str, width: int, script: str, screenshot: Path | None = None
) -> dict[str, Any]:
    """`url` in a viewport `width` px wide (a phone's below 800 px: 812 px high, else 800), what
    `script` finds on it (an object), and a screenshot of the viewport to `screenshot` after the
    script ran (it may scroll to what the test looks at)."""
    await page.set_viewport(width, 812 if width < 800 else 800, width < 800)
    await page.navigate(url)
    shown = dict(await page.evaluate(script))
    if screenshot is not None:
        await page.screenshot(screenshot)
    return shown


async def wait_for(page: Page, expression: str, seconds: float = 5.0) -> Any:
    """Poll the page until the expression is truthy, or `seconds` have passed (then its last value):
    smooth scrolls, transitions and images arriving through /image take a moment."""
    deadline = time.monotonic() + seconds
    while True:
        value = await page.evaluate(expression)
        if value or time.monotonic() > deadline:
            return value
        await asyncio.sleep(0.05)


@pytest.fixture
async def chromium() -> AsyncIterator[Chromium]:
    """A headless Chromium for one test; skipped when /usr/bin/chromium is missing."""
    if not CHROMIUM.exists():
        pytest.skip("/usr/bin/chromium is not installed (./dev test installs it)")
    browser = Chromium()
    try:
        await browser.start()
    except Exception:
        await browser.close()
        raise
    try:
        yield browser
    finally:
        await browser.close()


@pytest.fixture
def chromium_path() -> str:
    """/usr/bin/chromium for the product's browser service; skipped when it is missing."""
    if not CHROMIUM.exists():
        pytest.skip("/usr/bin/chromium is not installed (./dev test installs it)")
    return str(CHROMIUM)
