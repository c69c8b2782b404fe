"""Shared pytest configuration: fixtures that start real parts live in tests/support/."""

from __future__ import annotations

import ipaddress
import shutil
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from aiohttp.resolver import ThreadedResolver

from readerproxy.web import fetch

REPO = Path(__file__).resolve().parent.parent
#: The test folders mirror the code's layers (engine, web, proxy, research, browser). A few tests
#: share a helper of another's (a running proxy, an image site) by module name: every folder is on
#: the import path, so that works whatever order pytest collects them in.
for _folder in sorted(p for p in Path(__file__).resolve().parent.iterdir() if p.is_dir()):
    if _folder.name not in ("fixtures", "support", "__pycache__") and str(_folder) not in sys.path:
        sys.path.append(str(_folder))
SHARED_DATASETS = REPO.parent / "shared" / "datasets"


def pytest_report_header(config: pytest.Config) -> list[str]:
    """Say up front which real parts this run has; tests that need a missing one are skipped with
    the reason, and `-ra` lists every skip with its reason at the end."""
    chromium = Path("/usr/bin/chromium")
    return [
        f"datasets: {SHARED_DATASETS if SHARED_DATASETS.is_dir() else 'MISSING (dataset tests skip)'}",
        f"chromium: {chromium if chromium.exists() else 'MISSING (browser tests skip)'}",
        f"redis-server: {shutil.which('redis-server') or 'MISSING (redis tests skip)'}",
    ]


class LoopbackOnlyResolver:
    """The reader server's resolver in tests: names of the loopback (IP literals, `localhost`) are
    resolved as usual, every other name fails at once as an unknown one (`socket.gaierror`), as
    Chromium's `--host-resolver-rules` does for the browser. Dataset pages name real hosts (their
    pictures through `/image`, their links): without this, each would be a DNS query leaving the
    machine and a wait of up to the connect timeout."""

    def __init__(self) -> None:
        self._resolver = ThreadedResolver()

    async def resolve(self, host: str, port: int = 0, family: int = 0) -> list[dict[str, object]]:
        name = host.rstrip(".").lower()
        try:
            ipaddress.ip_address(name.strip("[]"))
        except ValueError:
            if name != "localhost" and not name.endswith(".localhost"):
                raise socket.gaierror(
                    socket.EAI_NONAME, f"{host}: not resolved in tests (loopback only)"
                ) from None
        return await self._resolver.resolve(host, port, family)  # type: ignore[arg-type]

    async def close(self) -> None:
        await self._resolver.close()


@pytest.fixture(autouse=True, scope="session")
def loopback_only_dns() -> Iterator[None]:
    """Every in-process server's fetcher resolves loopback names only (`LoopbackOnlyResolver`);
    a test that needs other names patches `readerproxy.web.fetch.DefaultResolver` itself."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fetch, "DefaultResolver", LoopbackOnlyResolver)
        yield


@pytest.fixture(scope="session")
def shared_datasets() -> Path:
    """../shared/datasets beside the repository; tests that need it skip without it."""
    if not SHARED_DATASETS.is_dir():
        pytest.skip("../shared/datasets is not beside the repository")
    return SHARED_DATASETS


# Real parts started by the tests (tests/support/): the upstream test site, redis-server, the reader
# server (in-process or as `readerproxy serve` processes), headless Chromium, and wcxb-dev's pages.
pytest_plugins = [
    "support.upstream",
    "support.redis_server",
    "support.reader_server",
    "support.chromium",
    "support.wcxb_site",
]
