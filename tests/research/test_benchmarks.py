"""The benchmark scripts still import and run: benchmarks nobody runs rot (`miss_stages.py` imported
`readerproxy.pipeline` for months after it moved).

- every `benchmarks/*.py` imports, with `benchmarks/` on sys.path as when a script is run, in one
  child process (their imports stay out of this one), and a script guards its `main` with
  `if __name__ == "__main__"` (importing one runs nothing);
- every script has a `--smoke` run (its own flag, or `timing.dataset_options`' for the dataset speed
  scripts: two pages, timed once), and each passes it in its own process: exit 0 and a line of its
  report. Runs over a few seconds are marked `slow`, those that drive Chromium `browser`, so the
  quick loop runs the short ones; `./dev test` runs them all.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = ROOT / "benchmarks"
SCRIPTS = sorted(path.stem for path in BENCHMARKS.glob("*.py"))


def _declares_smoke(source: str) -> bool:
    """Whether a script's argument parser has `--smoke`: its own, or `timing.dataset_options`'."""
    return "def main(" in source and ('"--smoke"' in source or "dataset_options(parser" in source)


#: Scripts with a `--smoke` run, found by what their argument parser declares.
SMOKE = sorted(name for name in SCRIPTS if _declares_smoke((BENCHMARKS / f"{name}.py").read_text()))
#: Smoke runs too long for the quick loop (over about 5 s on a loaded 2-core host; `./dev test` runs them).
SLOW_SMOKE = {
    "memory": "a load run: 2,000 requests, a POST burst, 10 s idle (20 s here)",
    "hostile_load": "starts a server and an upstream process, 40 requests (about 20 s)",
    "load_run": "starts a server, 40 requests with hostile streams (about 13 s)",
    "miss_compare": "starts two servers (about 9 s)",
    "proxy_cost": "starts a proxy, 1 s wrk runs when wrk is installed (about 7 s)",
    "proxy_latency": "starts a proxy, a dataset site and a 1 MB download (about 6 s)",
    "proxy_throughput": "starts a proxy, 1 s wrk runs per page when wrk is installed (about 10 s)",
    "proxy_transport": "two proxies and a page that trickles for 4 s (about 16 s)",
    "server_load": "starts a server and a bare aiohttp server, 1 s of load each (about 9 s)",
    "soak": "starts a server twice (about 6 s)",
}
#: Smoke runs that drive headless Chromium.
BROWSER_SMOKE = {"image_bytes", "visual_render"}
#: A line each smoke run's report must hold (a regular expression over its stdout and stderr).
SMOKE_OUTPUT = {
    "block_features_speed": r"2 pages with blocks",
    "comments_speed": r"comments sought on \d+ of 2 pages",
    "extraction_speed": r"2 pages, fastest of 1",
    "first_visit": r"first visit",
    "hostile_load": r"`--cache memory`: 40 requests",
    "image_bytes": r"1 pages with images",
    "lexbor_walk": r"walk +\d",
    "load_run": r'"requests": 40',
    "memory": r'"phases"|phase 1',
    "miss_compare": r"round 1: added over the bare fetch",
    "miss_stages": r"\| job: run_job, whole \|",
    "output_hashes": r"hashes over 2 pages",
    "page_size": r"reader/original median",
    "pagekind_speed": r"page kind median",
    "parse_speed": r"Document build / Lexbor parse",
    "parse_stages": r"readerproxy.extract\(auto\), whole",
    "proxy_cost": r"passed through",
    "proxy_latency": r"download 1 MB through the proxy",
    "proxy_throughput": r"\| /plain \||wrk is not installed",
    "proxy_transport": r"through the proxy: first byte",
    "render_speed": r"after the extraction",
    "security_table": r"characters of tables \(not written\)",
    "server_load": r'"reader_page_bytes_sent"',
    "shown_text": r"article +1",
    "soak": r"9 MB page:",
    "thread_structure": r"\| discourse \|",
    "visual_render": r"\(2 pages\): render median",
}


def _smoke_param(name: str) -> Any:
    """`name` with its marks: `slow` for a long run, `browser` for one that drives Chromium."""
    marks = []
    if name in SLOW_SMOKE:
        marks.append(pytest.mark.slow(reason=SLOW_SMOKE[name]))
    if name in BROWSER_SMOKE:
        marks.append(pytest.mark.browser)
    return pytest.param(name, marks=marks)


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
    assert {"miss_stages", "shown_text", "thread_structure", "parse_speed"} <= set(SMOKE)


def test_every_script_has_a_smoke_run() -> None:
    """Proves no benchmark script can rot unseen: each one with a `main` (all but the shared
    `timing.py`) declares `--smoke`, and each smoke run has the report line it is checked for."""
    runnable = {name for name in SCRIPTS if "def main(" in (BENCHMARKS / f"{name}.py").read_text()}
    assert runnable == set(SMOKE)
    assert set(SMOKE) == set(SMOKE_OUTPUT)


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


@pytest.mark.parametrize("name", [_smoke_param(name) for name in SMOKE])
def test_the_smoke_run_passes(name: str, tmp_path: Path) -> None:
    """Proves the script still runs end to end on loopback: `--smoke` exits 0 and prints a line of
    its report (SMOKE_OUTPUT). The timeout only ends a hang."""
    result = subprocess.run(
        [sys.executable, str(BENCHMARKS / f"{name}.py"), "--smoke"],
        cwd=tmp_path,  # whatever a script writes beside it stays out of the checkout
        capture_output=True,
        text=True,
        timeout=600,  # a bound for a hang, not a measure
        check=False,
    )
    assert result.returncode == 0, (result.stdout[-2000:], result.stderr[-3000:])
    assert re.search(SMOKE_OUTPUT[name], result.stdout + result.stderr), (
        result.stdout[-2000:],
        result.stderr[-2000:],
    )
