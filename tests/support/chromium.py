"""Headless Chromium driven over the DevTools protocol with aiohttp's websocket client.

The browser is started with a fresh profile and a host resolver that maps every host but 127.0.0.1
to NOTFOUND, so a page under test can never reach the internet (images of dataset pages simply
fail to load). `Chromium.start()` reads the `DevTools listening on ws://…` line from stderr,
`new_page()` creates a target and attaches to it (flattened session), and `Page` offers the few
commands the browser tests need: viewport, emulated color scheme, navigate, evaluate, screenshot.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import json
import shutil
import tempfile
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import aiohttp
import pytest

CHROMIUM = Path("/usr/bin/chromium")
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
START_TIMEOUT = 30.0
COMMAND_TIMEOUT = 30.0


class DevToolsError(RuntimeError):
    """A DevTools command answered with an error."""


class Chromium:
    """One headless browser process and its DevTools websocket."""

    def __init__(self, executable: Path = CHROMIUM, extra_flags: Sequence[str] = ()) -> None:
        self.executable = executable
        self.extra_flags = tuple(extra_flags)  # e.g. --proxy-server=127.0.0.1:PORT for proxy tests
        self.process: asyncio.subprocess.Process | None = None
        self.profile: str | None = None
        self._http: aiohttp.ClientSession | None = None
        self._ws: aiohttp.ClientWebSocketResponse | None = None
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._events: dict[str, list[asyncio.Queue[dict[str, Any]]]] = {}
        self._reader: asyncio.Task[None] | None = None
        self.stderr_tail: list[str] = []

    async def start(self) -> None:
        self.profile = tempfile.mkdtemp(prefix="readerproxy-chromium-")
        self.process = await asyncio.create_subprocess_exec(
            str(self.executable),
            *FLAGS,
            *self.extra_flags,
            f"--user-data-dir={self.profile}",
            "--remote-debugging-port=0",
            "about:blank",
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )
        ws_url = await asyncio.wait_for(self._devtools_url(), START_TIMEOUT)
        self._http = aiohttp.ClientSession()
        self._ws = await self._http.ws_connect(ws_url, max_msg_size=0)
        self._reader = asyncio.create_task(self._read_messages())

    async def _devtools_url(self) -> str:
        assert self.process is not None and self.process.stderr is not None
        while True:
            line = await self.process.stderr.readline()
            if not line:
                raise RuntimeError(
                    "chromium exited before DevTools was ready: " + " | ".join(self.stderr_tail[-5:])
                )
            text = line.decode("utf-8", "replace").strip()
            self.stderr_tail.append(text)
            if text.startswith("DevTools listening on "):
                asyncio.create_task(self._drain_stderr())  # noqa: RUF006 - ends with the process
                return text.removeprefix("DevTools listening on ").strip()

    async def _drain_stderr(self) -> None:
        assert self.process is not None and self.process.stderr is not None
        while await self.process.stderr.readline():
            pass

    async def _read_messages(self) -> None:
        assert self._ws is not None
        async for message in self._ws:
            if message.type != aiohttp.WSMsgType.TEXT:
                continue
            data = json.loads(message.data)
            if "id" in data:
                future = self._pending.pop(data["id"], None)
                if future is not None and not future.done():
                    future.set_result(data)
            else:
                key = f"{data.get('sessionId', '')}:{data.get('method')}"
                for queue in self._events.get(key, []):
                    queue.put_nowait(data.get("params", {}))
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ConnectionError("DevTools connection closed"))

    async def send(
        self, method: str, params: dict[str, Any] | None = None, session: str | None = None
    ) -> Any:
        """Send a command and wait for its result."""
        assert self._ws is not None
        ident = next(self._ids)
        message: dict[str, Any] = {"id": ident, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[ident] = future
        await self._ws.send_str(json.dumps(message))
        answer = await asyncio.wait_for(future, COMMAND_TIMEOUT)
        if "error" in answer:
            raise DevToolsError(f"{method}: {answer['error']}")
        return answer.get("result", {})

    def subscribe(self, method: str, session: str | None = None) -> asyncio.Queue[dict[str, Any]]:
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._events.setdefault(f"{session or ''}:{method}", []).append(queue)
        return queue

    async def new_page(self) -> Page:
        target = await self.send("Target.createTarget", {"url": "about:blank"})
        attached = await self.send("Target.attachToTarget", {"targetId": target["targetId"], "flatten": True})
        page = Page(self, attached["sessionId"])
        await page.send("Page.enable")
        await page.send("Runtime.enable")
        return page

    async def close(self) -> None:
        if self._ws is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.send("Browser.close"), 5)
            await self._ws.close()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader
        if self._http is not None:
            await self._http.close()
        if self.process is not None and self.process.returncode is None:
            try:
                await asyncio.wait_for(self.process.wait(), 5)
            except TimeoutError:
                self.process.kill()
                await self.process.wait()
        if self.profile:
            shutil.rmtree(self.profile, ignore_errors=True)


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
        await self.send(
            "Emulation.setEmulatedMedia",
            {
                "features": [{"name": "prefers-color-scheme", "value": scheme}],
            },
        )

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
