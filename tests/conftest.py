"""Shared pytest configuration: fixtures that start real parts live in tests/support/."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED_DATASETS = REPO.parent / "shared" / "datasets"


@pytest.fixture(scope="session")
def shared_datasets() -> Path:
    """../shared/datasets beside the repository; tests that need it skip without it."""
    if not SHARED_DATASETS.is_dir():
        pytest.skip("../shared/datasets is not beside the repository")
    return SHARED_DATASETS


# Real parts started by the tests (tests/support/): the upstream test site, redis-server, the reader
# server (in-process or as `readerproxy serve` processes) and headless Chromium.
pytest_plugins = ["support.upstream", "support.redis_server", "support.reader_server", "support.chromium"]
