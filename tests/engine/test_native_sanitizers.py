"""The C kernels (readerproxy/_native.c) built with AddressSanitizer and UndefinedBehaviorSanitizer and
run over every dataset page: any report of either fails the test.

The sanitised module is compiled into a temporary directory (hatch_build.compile_native with
`-fsanitize=address,undefined`) and loaded, in a child interpreter started with libasan preloaded
(Python itself is not built with ASan), in place of the in-tree build: every module that calls a
kernel gets it as its `native`. The child then runs, on every page, `parse` (tags_in_source,
walk) and the scan of the serialisation, and on one page in EXTRACT_EVERY the `auto` extractor (inherit, word_counts, the block kernels, complete_tree_leaves), `page_blocks`
once more with `_place_columns` and `_place_structure` declining (the kernels `_columns` and
`structure_columns` call: class_counts, containing, key_counts, element_counts, repeated_items)
and the model's node-table walk (tree_leaves). Skipped only where gcc or libasan is missing.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from readerproxy.research.datasets import datasets_root

REPO = Path(__file__).resolve().parents[2]
SANITIZE = ["-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-fno-sanitize-recover=undefined"]

#: Every page is parsed (the walk, the scan and the kernels of `parse`); one page in this many is also
#: extracted (the kernels of the element and block features and the model), to stay within a few
#: minutes under the sanitisers: the kernels that follow pointers through Lexbor's tree or a string
#: run on every page, the array kernels on a tenth of them.
EXTRACT_EVERY = 10

#: What the child interpreter runs: argv[1] is the sanitised module, argv[2] EXTRACT_EVERY, argv[3:]
#: the dataset names.
CHILD = r"""
import importlib.util, sys
import numpy as np
spec = importlib.util.spec_from_file_location("readerproxy._native", sys.argv[1])
san = importlib.util.module_from_spec(spec)
spec.loader.exec_module(san)

import readerproxy.engine.parse.clean as clean
import readerproxy.engine.parse.document as document
import readerproxy.engine.parse.scan as scan
import readerproxy.engine.extractors.heuristic as heuristic
import readerproxy.engine.learn.blocks as blocks
import readerproxy.engine.learn.blocks.columns as blocks_columns
import readerproxy.engine.learn.blocks.context as blocks_context
import readerproxy.engine.learn.blocks.page as blocks_page
import readerproxy.engine.learn.blocks.structure as blocks_structure
import readerproxy.engine.learn.model as model
from readerproxy.research.datasets import load_dataset
from readerproxy.engine.extraction import get_extractor
from readerproxy.engine.extractors.auto import first_extractor

for module in (clean, scan, heuristic, blocks_columns, blocks_structure, blocks_context, blocks_page, model):
    module.native = san
scan._WALK = scan._walk_setup()
assert scan._WALK, "the sanitised walk did not pass its self-check"

auto = get_extractor("auto")
params = auto.defaults()
first, first_params = first_extractor()
place_columns, place_structure = blocks_page._place_columns, blocks_page._place_structure
pages = walked = 0
EXTRACT_EVERY = int(sys.argv[2])
for name in sys.argv[3:]:
    for page in load_dataset(name).pages:
        html = page.read_html()
        doc = document.parse(html, page.url)
        serialised = doc.tree.html or ""
        scan._scan_native(serialised, len(doc.elements))
        scan._scan_native(serialised, scan._tag_names(doc.elements))
        walked += scan._walk_native(doc.tree, len(doc.elements)) is not None
        pages += 1
        if pages % EXTRACT_EVERY:
            continue
        auto.run(doc, params)
        heuristic_run = first.run(doc, first_params)
        blocks_page._place_columns = lambda *args: None
        blocks_page._place_structure = lambda *args: False
        try:
            declined = blocks.page_blocks(doc, heuristic_run)
        finally:
            blocks_page._place_columns, blocks_page._place_structure = place_columns, place_structure
        if len(declined.features):  # the node tables' walk, as for a model too deep for the complete one
            trees = model.load_model().first
            complete = trees._complete
            object.__setattr__(trees, "_complete", None)
            try:
                trees.log_odds(np.ascontiguousarray(declined.features, dtype=np.float64))
            finally:
                object.__setattr__(trees, "_complete", complete)
print(pages, walked)
"""


def _libasan() -> str | None:
    """The path of gcc's libasan, or None when gcc or the library is missing."""
    gcc = shutil.which("gcc")
    if gcc is None:
        return None
    try:
        found = subprocess.run(
            [gcc, "-print-file-name=libasan.so"], capture_output=True, text=True, timeout=30, check=True
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return found if os.path.isabs(found) and os.path.exists(found) else None


def _hatch_build() -> ModuleType:
    spec = importlib.util.spec_from_file_location("hatch_build", REPO / "hatch_build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
@pytest.mark.one_implementation  # the child interpreter runs the kernels whatever the fixture sets
def test_the_kernels_run_clean_under_asan_and_ubsan_on_every_dataset_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    libasan = _libasan()
    if libasan is None:
        pytest.skip("gcc or its libasan is missing")
    if datasets_root() is None:
        pytest.skip("datasets not available")
    hook = _hatch_build()
    target = tmp_path / "sanitised" / hook.MODULE_NAME
    monkeypatch.setenv("CC", "gcc")  # the compiler whose libasan is preloaded
    hook.compile_native(target, extra_args=[*SANITIZE, "-O1", "-g"])
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "LD_PRELOAD": libasan,
        "ASAN_OPTIONS": "detect_leaks=0:abort_on_error=0:exitcode=99",
        "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1:exitcode=98",
        "READERPROXY_PURE": "",
    }
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            CHILD,
            str(target),
            str(EXTRACT_EVERY),
            "scrapinghub",
            "readability",
            "wcxb-dev",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        cwd=tmp_path,
    )
    report = result.stderr[-6000:]
    assert "AddressSanitizer" not in result.stderr and "runtime error:" not in result.stderr, report
    assert result.returncode == 0, report
    pages, walked = map(int, result.stdout.split()[-2:])
    assert pages > 300 and walked > 0.9 * pages
