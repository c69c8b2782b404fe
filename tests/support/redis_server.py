"""The `redis_server` / `redis_url` fixtures: a real redis-server on a free loopback port, torn down after.

`RedisServer.stop()` and `.start()` let a test take Redis away mid-way and bring it back on the same port.
Skipped with a clear reason when redis-server is not installed (`./dev test` installs it).
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.ports import free_port


def _ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


class RedisServer:
    """One redis-server process (no persistence) on 127.0.0.1:port; start/stop/restart on the same port."""

    def __init__(self, executable: str, workdir: Path, port: int | None = None) -> None:
        self.executable = executable
        self.workdir = workdir
        self.port = port or free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, wait: float = 20.0) -> None:
        """Start redis-server and wait until it answers PING."""
        self.process = subprocess.Popen(
            [
                self.executable,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.workdir),
                "--protected-mode",
                "yes",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + wait
        while not _ping(self.port):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"redis-server did not start on port {self.port}")
            time.sleep(0.02)

    def stop(self) -> None:
        """Terminate the server (it loses all data: no persistence)."""
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    """A fresh redis-server for this test (no persistence), stopped after it."""
    executable = shutil.which("redis-server")
    if executable is None:
        pytest.skip("redis-server is not installed (./dev test installs Debian's redis-server)")
    server = RedisServer(executable, tmp_path)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def redis_url(redis_server: RedisServer) -> str:
    """URL of a fresh real redis-server, e.g. redis://127.0.0.1:PORT/0."""
    return redis_server.url
