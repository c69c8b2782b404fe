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


# Real parts started by the tests: the upstream test site and redis-server (tests/support/).
pytest_plugins = ["support.upstream", "support.redis_server"]
# The reader server (in-process or as `readerproxy serve` processes) and headless Chromium (tests/support/).
pytest_plugins = [*pytest_plugins, "support.reader_server", "support.chromium"]
