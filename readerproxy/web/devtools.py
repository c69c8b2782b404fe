"""The DevTools client: one Chromium process and its DevTools websocket.

`DevToolsBrowser` starts Chromium with `FLAGS` (no network of its own: every name resolves to
NOTFOUND, see `browser.py`), on a fresh profile and a DevTools port of its own choosing, reads the
websocket address from its stderr, and then sends commands (`send`, each answered by id) and routes
events to handlers per session and method (`on`); `watch` fails a waiting future when the
connection ends. `BrowserService` (`browser.py`) builds the render pool on it; the browser tests
drive it with their own flags (`tests/support/chromium.py`).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp

from ..errors import ReaderproxyError

DEFAULT_EXECUTABLE = "/usr/bin/chromium"
#: Flags of every browser we start. The resolver maps every name to NOTFOUND: the browser reaches
#: nothing by itself, every request it makes is answered (or failed) through `Fetch`.
FLAGS = (
    "--headless",
    "--disable-gpu",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-dev-shm-usage",
    "--mute-audio",
    "--host-resolver-rules=MAP * ~NOTFOUND",
    # http pages stay http: the document we fulfil is the one asked for (no upgrade to https first)
    "--disable-features=HttpsUpgrades,HttpsFirstBalancedModeAutoEnable",
    # What `Fetch` does not intercept (WebSockets) finds no address either (the rule above maps IP
    # literals too); as a second line it goes to a proxy that is not there, loopback included, and
    # WebRTC may not use UDP directly.
    "--proxy-server=http://127.0.0.1:9",
    "--proxy-bypass-list=<-loopback>",
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--enforce-webrtc-ip-permission-check",
    # V8's heap of a page is bounded: a script that allocates without end fails (or its tab
    # crashes, `Inspector.targetCrashed`) instead of growing the browser by gigabytes
    "--js-flags=--max-old-space-size=256",
)
#: Seconds the browser may take to start and print its DevTools address.
START_TIMEOUT = 20.0
#: Bytes one DevTools message may have (a snapshot within the DOM caps is far below it).
MAX_MESSAGE_BYTES = 128 * 1024 * 1024


class BrowserUnavailable(ReaderproxyError):
    """The browser is missing or failed: visual rendering cannot be done now."""

    kind = "browser_unavailable"
    status = 503

    def __init__(self, reason: str) -> None:
        super().__init__(f"visual rendering is unavailable: {reason}")
        self.reason = reason


def unavailable_reason(executable: str) -> str | None:
    """Why the browser at `executable` cannot run (None: it looks runnable)."""
    path = Path(executable) if os.sep in executable else Path(shutil.which(executable) or executable)
    if not path.exists():
        return f"no browser at {executable} (install chromium or pass --browser PATH)"
    if not os.access(path, os.X_OK):
        return f"{executable} is not executable"
    return None


class DevToolsError(RuntimeError):
    """A DevTools command answered with an error."""


class DevToolsBrowser:
    """One Chromium process and its DevTools websocket (browser-level, flattened sessions).

    `flags` are the command-line flags it is started with (the service's `FLAGS`; the browser tests
    pass their own), plus `--no-sandbox` when running as root."""

    def __init__(self, executable: str, flags: tuple[str, ...] = FLAGS) -> None:
        self.executable = executable
        self.flags = flags
        self.process: asyncio.subprocess.Process | None = None
        self.profile = tempfile.mkdtemp(prefix="readerproxy-browser-")
        self._http: aiohttp.ClientSession | None = None
        self._ws: aiohttp.ClientWebSocketResponse | None = None
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._handlers: dict[tuple[str, str], Callable[[dict[str, Any]], None]] = {}
        self._reader: asyncio.Task[None] | None = None
        self._stderr: asyncio.Task[None] | None = None
        self._waiters: set[asyncio.Future[Any]] = set()
        self.stderr_tail: list[str] = []

    @property
    def alive(self) -> bool:
        return (
            self.process is not None
            and self.process.returncode is None
            and self._ws is not None
            and not self._ws.closed
        )

    async def start(self) -> None:
        flags = list(self.flags)
        if hasattr(os, "geteuid") and os.geteuid() == 0 and "--no-sandbox" not in flags:
            flags.append("--no-sandbox")  # Chromium refuses to start its sandbox as root
        self.process = await asyncio.create_subprocess_exec(
            self.executable,
            *flags,
            f"--user-data-dir={self.profile}",
            "--remote-debugging-address=127.0.0.1",
            "--remote-debugging-port=0",
            "about:blank",
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
        ws_url = await asyncio.wait_for(self._devtools_url(), START_TIMEOUT)
        self._http = aiohttp.ClientSession()
        self._ws = await self._http.ws_connect(ws_url, max_msg_size=MAX_MESSAGE_BYTES)
        self._reader = asyncio.create_task(self._read_messages())

    async def _devtools_url(self) -> str:
        assert self.process is not None and self.process.stderr is not None
        while True:
            line = await self.process.stderr.readline()
            if not line:
                tail = " | ".join(self.stderr_tail[-3:]) or "no output"
                raise BrowserUnavailable(f"the browser exited at start ({tail})")
            text = line.decode("utf-8", "replace").strip()
            self.stderr_tail = [*self.stderr_tail[-9:], text]
            if text.startswith("DevTools listening on "):
                self._stderr = asyncio.create_task(self._drain_stderr())
                return text.removeprefix("DevTools listening on ").strip()

    async def _drain_stderr(self) -> None:
        assert self.process is not None and self.process.stderr is not None
        while await self.process.stderr.readline():
            pass

    async def _read_messages(self) -> None:
        assert self._ws is not None
        try:
            async for message in self._ws:
                if message.type != aiohttp.WSMsgType.TEXT:
                    continue
                data = json.loads(message.data)
                if "id" in data:
                    future = self._pending.pop(data["id"], None)
                    if future is not None and not future.done():
                        future.set_result(data)
                    continue
                handler = self._handlers.get((data.get("sessionId", ""), data.get("method", "")))
                if handler is not None:
                    handler(data.get("params", {}))
        finally:
            for future in [*self._pending.values(), *self._waiters]:
                if not future.done():
                    future.set_exception(ConnectionError("the browser closed its DevTools connection"))
            self._pending.clear()
            self._waiters.clear()

    def watch(self, future: asyncio.Future[Any]) -> None:
        """Fail `future` with ConnectionError when the DevTools connection ends (the browser died)
        before it is done: a render waiting for an event is not left to its deadline."""
        if self._ws is None or self._ws.closed or (self._reader is not None and self._reader.done()):
            if not future.done():
                future.set_exception(ConnectionError("the browser's DevTools connection is closed"))
            return
        self._waiters.add(future)
        future.add_done_callback(self._waiters.discard)

    async def send(self, method: str, params: dict[str, Any] | None = None, session: str = "") -> Any:
        """Send a command and wait for its answer (callers bound the wait)."""
        if self._ws is None or self._ws.closed:
            raise ConnectionError("the browser's DevTools connection is closed")
        ident = next(self._ids)
        message: dict[str, Any] = {"id": ident, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[ident] = future
        try:
            await self._ws.send_str(json.dumps(message))
            answer = await future
        finally:
            self._pending.pop(ident, None)
        if "error" in answer:
            raise DevToolsError(f"{method}: {answer['error'].get('message', answer['error'])}")
        return answer.get("result", {})

    def on(self, session: str, method: str, handler: Callable[[dict[str, Any]], None] | None) -> None:
        """Call `handler` with the params of every `method` event of `session` (None: stop)."""
        if handler is None:
            self._handlers.pop((session, method), None)
        else:
            self._handlers[(session, method)] = handler

    async def close(self) -> None:
        """Close politely, kill if that does not work, and remove the profile."""
        if self.alive:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.send("Browser.close"), 3)
        if self._ws is not None:
            with contextlib.suppress(Exception):
                await self._ws.close()
        for task in (self._reader, self._stderr):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        if self._http is not None:
            await self._http.close()
        if self.process is not None and self.process.returncode is None:
            try:
                await asyncio.wait_for(self.process.wait(), 3)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    self.process.kill()
                await self.process.wait()
        shutil.rmtree(self.profile, ignore_errors=True)

    def kill(self) -> None:
        if self.process is not None and self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()
