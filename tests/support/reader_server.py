"""Running the reader server for tests: in-process on an ephemeral port, or as a `readerproxy serve` process.

Tests talk to it over real loopback TCP with an aiohttp client. Upstream pages come from the
`upstream` fixture (127.0.0.1), so test servers allow private addresses unless a test proves the
refusal.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import aiohttp
import pytest
from aiohttp import web

from readerproxy.app import Settings, create_app
from readerproxy.web.fetch import FetchSettings
from support.ports import free_port

REPO = Path(__file__).resolve().parents[2]
#: Short upstream timeouts so the slow routes answer 504 quickly.
TEST_FETCH = FetchSettings(connect_timeout=2.0, read_timeout=1.5, total_timeout=3.0, allow_private=True)


def test_settings(cache: str = "memory", **changes: Any) -> Settings:
    """Settings for a test server: memory cache, loopback upstream allowed, short timeouts."""
    settings = Settings(cache=cache, port=0, fetch=TEST_FETCH)
    return settings.with_overrides(**changes) if changes else settings


test_settings.__test__ = False  # type: ignore[attr-defined]  # not a test, despite the name


@dataclass
class RunningServer:
    """A reader server listening on 127.0.0.1."""

    base: str
    app: web.Application | None = None

    def url(self, path: str, **query: str) -> str:
        return self.base + path + ("?" + urlencode(query) if query else "")

    def read_url(self, target: str, **query: str) -> str:
        return self.url("/read", url=target, **query)


@contextlib.asynccontextmanager
async def serve_app(app: web.Application, *, shutdown_timeout: float = 60.0) -> AsyncIterator[str]:
    """Run an aiohttp app in this event loop on an ephemeral loopback port; yields its base URL
    (`shutdown_timeout`: how long answers still being sent may go on once the block ends)."""
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=shutdown_timeout)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    host, port = runner.addresses[0][:2]
    try:
        yield f"http://{host}:{port}"
    finally:
        await runner.cleanup()


@contextlib.asynccontextmanager
async def serve(settings: Settings) -> AsyncIterator[RunningServer]:
    """Run the reader app in this event loop on an ephemeral loopback port."""
    app = create_app(replace(settings, host="127.0.0.1", port=0))
    async with serve_app(app) as base:
        yield RunningServer(base, app)


def wait_healthy(base: str, process: subprocess.Popen[bytes], timeout: float = 30) -> None:
    """Wait until `base`/healthz answers 200; if the process exits or the time runs out, stop it
    and raise RuntimeError (with its stderr when that is a pipe)."""
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"server exited: {process.stderr.read().decode() if process.stderr else ''}")
        try:
            with urllib.request.urlopen(base + "/healthz", timeout=1) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            stop_process(process)
            raise RuntimeError(f"{base} did not become healthy")
        time.sleep(0.1)


def start_server_process(
    *options: str,
    port: int | None = None,
    env: dict[str, str] | None = None,
    stdout: int = subprocess.DEVNULL,
    stderr: int = subprocess.DEVNULL,
) -> tuple[subprocess.Popen[bytes], str]:
    """`python -m readerproxy.cli serve --host 127.0.0.1 --port PORT *options` from the repository,
    returned with its base URL once /healthz answers (a free port unless `port` is given).

    Used by the tests and the benchmarks (which put tests/ on sys.path). Stop it with `stop_process`.
    """
    port = port or free_port()
    command = [sys.executable, "-m", "readerproxy.cli", "serve", "--host", "127.0.0.1", "--port", str(port)]
    process = subprocess.Popen(
        [*command, *options], cwd=REPO, env={**os.environ, **(env or {})}, stdout=stdout, stderr=stderr
    )
    base = f"http://127.0.0.1:{port}"
    wait_healthy(base, process)
    return process, base


def stop_process(process: subprocess.Popen[bytes], timeout: float = 10) -> None:
    """SIGTERM, then SIGKILL if it has not stopped within `timeout` seconds."""
    process.terminate()
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextlib.contextmanager
def serve_process(cache: str, *extra: str, env: dict[str, str] | None = None) -> Iterator[RunningServer]:
    """`readerproxy serve` as a separate process (for several servers sharing one cache)."""
    process, base = start_server_process(
        "--cache", cache, "--allow-private", *extra, env=env, stderr=subprocess.PIPE
    )
    try:
        yield RunningServer(base)
    finally:
        stop_process(process)
        if process.stderr:
            process.stderr.close()


@pytest.fixture
async def reader_server() -> AsyncIterator[RunningServer]:
    """A reader server with a memory cache, allowed to read the loopback upstream."""
    async with serve(test_settings()) as server:
        yield server


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    """An HTTP client for talking to test servers (its own cookie jar)."""
    jar = aiohttp.CookieJar(unsafe=True)  # cookies for 127.0.0.1
    async with aiohttp.ClientSession(cookie_jar=jar) as session:
        yield session
