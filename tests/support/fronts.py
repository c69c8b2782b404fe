"""Reverse proxies started by the tests (Debian's HAProxy and nginx), shared by
tests/test_deploy.py (the deploy/ files) and tests/web/test_instances.py (two instances behind HAProxy):
find the program or skip naming its package, run it until the block ends, wait for its ports."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import pytest

from .reader_server import stop_process


def tool(name: str, package: str) -> str:
    """The path of a program (sbin included), or skip naming the Debian package that has it."""
    path = shutil.which(name, path=os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"]))
    if path is None:
        pytest.skip(f"{name} is not installed (Debian package {package}; ./dev test installs it)")
    return path


@dataclass
class Running:
    ports: dict[int, int]  # port in the file -> port on 127.0.0.1


def wait_listening(port: int, process: subprocess.Popen[bytes], timeout: float = 20) -> None:
    """Until 127.0.0.1:port accepts a connection; RuntimeError with its stderr if `process` exits."""
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            raise RuntimeError(process.stderr.read().decode() if process.stderr else "exited")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


@contextmanager
def running(command: list[str], ports: dict[int, int]) -> Iterator[Running]:
    """`command` running (stderr kept for a failed start) while it listens on `ports`' values."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        for port in ports.values():
            wait_listening(port, process)
        yield Running(ports)
    finally:
        stop_process(process)
        if process.stderr:
            process.stderr.close()
