"""The layers' import contract, and docs/architecture.md's module list against the tree.

readerproxy is four layers, each a package: `engine` (bytes in, `Article` out: pure, no I/O but
reading its shipped models), `web` (the reader server and what it needs: fetching, caches, workers,
the browser, templates), `proxy` (proxy mode, around the web layer's reader) and `research`
(evaluation, benchmarks and training). The contract is checked on the source with `ast`, imports
inside functions included, so a lazy import cannot hide a dependency.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "readerproxy"

#: What each layer may import from readerproxy besides itself. The top-level modules: `errors` (the
#: error kinds every layer raises), `_speedups` (the optional C kernels), `api` (the public library
#: API, over the engine), `app` (`readerproxy serve`: the reader server and proxy mode composed, the
#: one place both are put together), `cli` (the command line, over everything; unchecked). The web
#: layer never imports proxy mode: proxy mode runs around it.
ALLOWED: dict[str, set[str]] = {
    "engine": {"errors", "_speedups"},
    "web": {"engine", "errors", "_speedups", "api"},
    "proxy": {"engine", "web", "errors"},
    "research": {"engine", "web", "errors", "_speedups", "api"},
    "api": {"engine", "errors"},
    "app": {"web", "proxy", "errors"},
    "errors": set(),
    "_speedups": {"_native"},
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _is_module(dotted: str) -> bool:
    path = REPO.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _imports(path: Path) -> list[str]:
    """Every readerproxy module `path` imports, as absolute dotted names."""
    module = _module_name(path)
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.append(target)
            found += [f"{target}.{a.name}" for a in node.names if _is_module(f"{target}.{a.name}")]
    return [name for name in found if name.startswith("readerproxy.")]


def _layer(dotted: str) -> str:
    return dotted.split(".")[1]


def _sources() -> list[Path]:
    return sorted(path for path in PACKAGE.rglob("*.py") if "__pycache__" not in path.parts)


def test_the_layers_are_packages() -> None:
    top = {path.stem for path in PACKAGE.glob("*.py")}
    assert top == {"__init__", "api", "app", "cli", "errors", "_speedups"}, "a module outside the layers"
    for layer in ("engine", "web", "proxy", "research"):
        assert (PACKAGE / layer / "__init__.py").is_file()


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(REPO)))
def test_import_contract(path: Path) -> None:
    name = _module_name(path)
    if name in ("readerproxy", "readerproxy.cli"):  # the package's face and the command line: any layer
        return
    own = _layer(name)
    for target in _imports(path):
        layer = _layer(target)
        if layer == own:
            continue
        assert layer in ALLOWED[own], (
            f"{path.relative_to(REPO)} imports {target}: {own} may import {sorted(ALLOWED[own])}"
        )


def test_the_engine_imports_no_server_library() -> None:
    """The engine runs without aiohttp, jinja2, redis or prometheus: `extract` needs none of them."""
    for path in (PACKAGE / "engine").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            for name in names:
                assert name.split(".")[0] not in {"aiohttp", "jinja2", "redis", "prometheus_client"}, (
                    f"{path.relative_to(REPO)} imports {name}"
                )


def test_architecture_lists_every_module() -> None:
    """docs/architecture.md names every module and package of readerproxy, and only those."""
    inventory = (REPO / "docs" / "architecture.md").read_text()
    section = inventory.split("## Modules", 1)[1].split("\n## ", 1)[0]
    tree = section.splitlines()
    # the listing is an indented tree: rebuild each entry's full path from its indentation
    paths: set[str] = set()
    stack: list[tuple[int, str]] = []
    for line in tree:
        found = re.match(r"^(\s*)([\w.]+/|[\w.]+\.(?:py|c))(?:\s|$)", line)
        if not found:
            continue
        depth, entry = len(found.group(1)), found.group(2)
        while stack and stack[-1][0] >= depth:
            stack.pop()
        full = "".join(part for _, part in stack) + entry
        paths.add(full)
        if entry.endswith("/"):
            stack.append((depth, entry))
    actual = {str(p.relative_to(REPO)) for p in _sources() if p.name != "__init__.py"}
    actual |= {str(p.parent.relative_to(REPO)) + "/" for p in _sources() if p.name == "__init__.py"}
    actual.add("readerproxy/_native.c")
    assert sorted(actual - paths) == [], "modules missing from docs/architecture.md"
    inside = {p for p in paths if p.startswith("readerproxy/")}
    gone = [p for p in inside - actual if not (REPO / p).exists()]  # a data folder (models/) exists
    assert sorted(gone) == [], "docs/architecture.md names modules that are gone"


#: The engine's own order, lowest first: a module may import its own level and those below, never
#: above. `parse` reads bytes into the Document, `schema` its JSON-LD, `urls` holds the URL policy;
#: `extraction`, `output` and `convert` are the types, the serialiser and the converter every
#: algorithm shares; `metadata`, `kind` and `views` read the Document (and each other: a forum byline
#: is a thread's first post); the extractors and the learned scorer read all of those; `article`
#: assembles them and `pipeline` runs them.
ENGINE_LEVELS: dict[str, int] = {
    "parse": 0,
    "convert": 0,
    "schema": 0,
    "urls": 0,
    "extraction": 1,
    "output": 1,
    "metadata": 2,
    "kind": 2,
    "views": 2,
    # the element features, below both of their readers: the heuristic and the block features
    "elements": 3,
    "learn": 4,
    "extractors": 4,
    "article": 5,
    "pipeline": 6,
}
#: Imports that go up a level, each with its reason.
ENGINE_UPWARD = {
    # the page kind's model is the learned scorer's numpy trees (one tree walker, one C kernel)
    ("readerproxy.engine.kind.pagekind", "readerproxy.engine.learn.model"),
    # the registry imports the extractors' package once, so that every algorithm registers itself
    ("readerproxy.engine.extraction", "readerproxy.engine.extractors"),
}


def _engine_part(dotted: str) -> str:
    return dotted.split(".")[2]


@pytest.mark.parametrize(
    "path",
    [p for p in _sources() if "engine" in p.relative_to(PACKAGE).parts[:1]],
    ids=lambda p: str(p.relative_to(REPO)),
)
def test_engine_order(path: Path) -> None:
    name = _module_name(path)
    if name == "readerproxy.engine":
        return
    level = ENGINE_LEVELS[_engine_part(name)]
    for target in _imports(path):
        if _layer(target) != "engine" or target == "readerproxy.engine":
            continue
        if (name, target) in ENGINE_UPWARD:
            continue
        assert ENGINE_LEVELS[_engine_part(target)] <= level, (
            f"{path.relative_to(REPO)} imports {target}, a higher level of the engine"
        )


def test_every_engine_part_has_a_level() -> None:
    parts = {
        p.stem if p.suffix else p.name for p in (PACKAGE / "engine").iterdir() if p.name != "__pycache__"
    }
    parts -= {"__init__", "models"}
    assert parts == set(ENGINE_LEVELS)
