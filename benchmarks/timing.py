"""What the speed benchmarks share (not a benchmark itself): the dataset options, the pages decoded
once, a timer, and another source tree's package for before/after runs in one process.

Used by the speed benchmarks that time dataset pages (those that call `dataset_options`), which
all get `--smoke` from it.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from readerproxy.api import to_text
from readerproxy.research.datasets import load_dataset


class SmokeRun(argparse.Action):
    """`--smoke`: two pages of the first dataset, each timed once, so that CI sees the script run
    (tests/research/test_benchmarks.py); it measures nothing. Options given after it still apply."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=False, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, *_: Any) -> None:
        namespace.smoke = True
        namespace.repeat, namespace.limit = 1, 2
        namespace.dataset = namespace.dataset[:1]


def dataset_options(parser: argparse.ArgumentParser, repeat: int) -> None:
    """`--repeat` (timings per page, the fastest kept), `--limit`, `--dataset` and `--smoke`."""
    parser.add_argument("--repeat", type=int, default=repeat)
    parser.add_argument("--limit", type=int)
    parser.add_argument("--dataset", nargs="+", default=["scrapinghub", "readability"])
    parser.add_argument("--smoke", action=SmokeRun, help="two pages, timed once: the script runs")


def compared_packages(parser: argparse.ArgumentParser) -> tuple[argparse.Namespace, dict[str, ModuleType]]:
    """Add `--before TREE`, parse the arguments, and return them with the packages to time:
    {"now": readerproxy}, after {"before": that tree's package} when `--before` is given."""
    import readerproxy

    parser.add_argument("--before", type=Path, help="source tree of the code to compare with")
    args = parser.parse_args()
    packages: dict[str, ModuleType] = {"now": readerproxy}
    if args.before:
        packages = {"before": load_tree(args.before), "now": readerproxy}
    return args, packages


def decoded_pages(name: str, limit: int | None) -> list[tuple[str, str | None]]:
    """(text, URL) of every page of a dataset, decoded once, outside any timing."""
    return [(to_text(page.path.read_bytes()), page.url) for page in load_dataset(name, limit).pages]


def warmed_pages(
    name: str,
    limit: int | None,
    packages: dict[str, ModuleType],
    run: Callable[[ModuleType, str, str | None], Any],
) -> list[tuple[str, str | None]]:
    """`decoded_pages`, after `run(package, text, url)` on the first three for each package (the
    imports, the model, compiled patterns) and a garbage collection, outside any timing."""
    pages = decoded_pages(name, limit)
    for package in packages.values():
        for text, url in pages[:3]:
            run(package, text, url)
    gc.collect()
    return pages


def timed(function: Callable[[], Any]) -> tuple[float, Any]:
    """Seconds taken by one call, and its result."""
    began = time.perf_counter()
    result = function()
    return time.perf_counter() - began, result


def load_tree(tree: Path, name: str = "readerproxy_before") -> ModuleType:
    """The readerproxy package of another source tree, imported as `name` (its imports are relative)."""
    package = tree / "readerproxy"
    spec = importlib.util.spec_from_file_location(
        name, package / "__init__.py", submodule_search_locations=[str(package)]
    )
    if spec is None or spec.loader is None:
        raise SystemExit(f"no readerproxy package in {tree}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def tree_module(package: ModuleType, *names: str) -> ModuleType:
    """The module of `package` (this tree's or one `load_tree` imported) named by the first of
    `names` the tree has, each a dotted tail found at any depth (`"readerable"`,
    `"extractors.heuristic"`): a tree of any date, whatever its sub-packages, answers. A tail that
    names no module file may name a package (`"learn.blocks"`, a module in older trees)."""
    root = Path(next(iter(package.__path__)))
    for name in names:
        tail = name.replace(".", "/")
        found = sorted(root.rglob(tail + ".py"), key=lambda path: len(path.parts))
        found = found or sorted(
            (path.parent for path in root.rglob(tail + "/__init__.py")), key=lambda path: len(path.parts)
        )
        if found:
            dotted = ".".join(found[0].relative_to(root).with_suffix("").parts)
            return importlib.import_module(f"{package.__name__}.{dotted}")
    raise SystemExit(f"{package.__name__} has no module named any of {names}")
