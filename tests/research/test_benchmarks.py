"""The benchmark scripts still import and run: benchmarks nobody runs rot (`miss_stages.py` imported
`readerproxy.pipeline` for months after it moved).

- every `benchmarks/*.py` imports, with `benchmarks/` on sys.path as when a script is run, in one
  child process (their imports stay out of this one), and a script guards its `main` with
  `if __name__ == "__main__"` (importing one runs nothing);
- every script with a `--smoke` run passes it (exit 0), each in its own process, bounded.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = ROOT / "benchmarks"
SCRIPTS = sorted(path.stem for path in BENCHMARKS.glob("*.py"))
#: Scripts with a `--smoke` run, found by what their argument parser declares.
SMOKE = sorted(name for name in SCRIPTS if '"--smoke"' in (BENCHMARKS / f"{name}.py").read_text())
#: Smoke runs too long for the quick loop: each a load run of its own (`./dev test` runs them).
SLOW_SMOKE = {"memory": "a load run: 2,000 requests, a POST burst, 10 s idle (20 s here)"}

IMPORT_ALL = """
import importlib, json, sys, traceback
failures = {}
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
    except BaseException:
        failures[name] = traceback.format_exc(limit=-3)
print(json.dumps(failures))
"""


@pytest.fixture(scope="module")
def import_failures() -> dict[str, str]:
    """Each script's traceback when it fails to import, from one child process importing them all."""
    result = subprocess.run(
        [sys.executable, "-c", IMPORT_ALL, *SCRIPTS],
        cwd=BENCHMARKS,  # on sys.path first, as for `python benchmarks/NAME.py`
        capture_output=True,
        text=True,
        timeout=300,  # a bound for a hang, not a measure
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    failures: dict[str, str] = json.loads(result.stdout.strip().splitlines()[-1])
    return failures


def test_the_scripts_are_found() -> None:
    assert len(SCRIPTS) >= 20 and "miss_stages" in SCRIPTS
    assert {"miss_stages", "shown_text", "thread_structure"} <= set(SMOKE)


@pytest.mark.parametrize("name", SCRIPTS)
def test_the_script_imports(name: str, import_failures: dict[str, str]) -> None:
    assert name not in import_failures, import_failures.get(name)


def _runs_at_import(tree: ast.Module) -> list[str]:
    """Calls of `main` among a module's own statements, outside an `if __name__ == "__main__"`."""
    calls = []
    for statement in tree.body:
        if isinstance(statement, ast.If) and "__main__" in ast.unparse(statement.test):
            continue
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        for node in ast.walk(statement):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "main":
                calls.append(ast.unparse(statement))
    return calls


@pytest.mark.parametrize("name", SCRIPTS)
def test_a_script_runs_only_as_a_script(name: str) -> None:
    tree = ast.parse((BENCHMARKS / f"{name}.py").read_text())
    defines_main = any(
        isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == "main" for node in tree.body
    )
    guarded = any(
        isinstance(node, ast.If)
        and ast.unparse(node.test) in ("__name__ == '__main__'", "'__main__' == __name__")
        for node in tree.body
    )
    if defines_main:
        assert guarded, f"{name}.py has a main but no `if __name__ == '__main__'`"
    else:  # a module the scripts share (timing.py): nothing to run
        assert not guarded, f"{name}.py runs as a script without a main"
    assert not _runs_at_import(tree), _runs_at_import(tree)


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=pytest.mark.slow(reason=SLOW_SMOKE[name])) if name in SLOW_SMOKE else name
        for name in SMOKE
    ],
)
def test_the_smoke_run_passes(name: str, tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(BENCHMARKS / f"{name}.py"), "--smoke"],
        cwd=tmp_path,  # whatever a script writes beside it stays out of the checkout
        capture_output=True,
        text=True,
        timeout=600,  # a bound for a hang, not a measure
        check=False,
    )
    assert result.returncode == 0, (result.stdout[-2000:], result.stderr[-3000:])
