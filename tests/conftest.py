"""Shared pytest configuration: fixtures that start real parts live in tests/support/."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

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
