"""The engine's tests run on both implementations: with the optional C kernels and with the numpy
code each kernel must match (as MarkupSafe's suite runs on `_speedups` and on its Python twin).

Every readerproxy module that uses a kernel imports `native` from `readerproxy._speedups`
(`monkeypatch.setattr(module, "native", None)` switches one back to its reference); the autouse
`implementation` fixture switches them all for the `numpy` run. Without a built, current
`_native` module (or with `READERPROXY_PURE=1`) only the `numpy` run exists.

`READERPROXY_TEST_IMPLEMENTATIONS=kernels` (set by `./dev test --quick`, the edit loop) keeps only
the installed kernels' run: the kernels are still checked against their numpy twins by their own
tests (`test_native.py`), and the full `./dev test` runs both.

A test marked `one_implementation` runs once, on the first of them (the kernels where built): a
minutes-long check over many dataset pages whose numpy run would add nothing, because it sets the
implementation itself, or checks only the kernels (under a sanitiser), or reads features that
`test_native.py` proves bit-identical on both implementations page by page.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Iterator

import pytest

from readerproxy import _speedups

# every module that may use a kernel, loaded before the fixture looks for them
for _name in ("readerproxy.engine.pipeline", "readerproxy.engine.extractors"):
    importlib.import_module(_name)

IMPLEMENTATIONS = ("kernels", "numpy") if _speedups.native is not None else ("numpy",)
_ONLY = os.environ.get("READERPROXY_TEST_IMPLEMENTATIONS")
if _ONLY:
    IMPLEMENTATIONS = tuple(name for name in IMPLEMENTATIONS if name in _ONLY.split(",")) or IMPLEMENTATIONS


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect the second implementation's run of each `one_implementation` test."""
    dropped = [
        item
        for item in items
        if item.get_closest_marker("one_implementation") is not None
        and getattr(item, "callspec", None) is not None
        and item.callspec.params.get("implementation", IMPLEMENTATIONS[0]) != IMPLEMENTATIONS[0]
    ]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [item for item in items if item not in dropped]


def _kernel_users() -> list[object]:
    return [
        module
        for name, module in list(sys.modules.items())
        if name.startswith("readerproxy.") and getattr(module, "native", None) is _speedups.native
    ]


@pytest.fixture(autouse=True, params=IMPLEMENTATIONS)
def implementation(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """`kernels` (as installed) or `numpy` (every module's `native` set to None for the test)."""
    if request.param == "numpy" and _speedups.native is not None:
        for module in _kernel_users():
            monkeypatch.setattr(module, "native", None)
    yield request.param
