"""The floor of a C walk of the Lexbor tree, against `tree.html` plus the C scan (not a test).

`_native.walk`, which `document.parse` uses now, was written after this measurement; the C file
here stays the floor (no lines, tag lengths or token arrays).

    .venv/bin/python benchmarks/lexbor_walk.py [--repeat 5] [--limit N] [--dataset scrapinghub ...]

Compiles `benchmarks/lexbor_walk.c` into a temporary directory with the interpreter's compiler
settings, then, for every page cleaned as `document.parse` cleans it, times (fastest of `--repeat`):
the serialisation `tree.html`, the C scan of it (`document._scan_native`, what builds the linear view), and
the walk (every node, element names, class values and text data as str; see the C file for what it
leaves out). It checks that the walk meets as many elements as `tree.css("*")`. Prints the median
per dataset in milliseconds. Requires gcc and the C kernels (`python hatch_build.py`).
"""

from __future__ import annotations

import argparse
import importlib.util
import shlex
import statistics
import subprocess
import sysconfig
import tempfile
from pathlib import Path
from types import ModuleType

import selectolax.lexbor
from selectolax.lexbor import LexborHTMLParser
from timing import dataset_options, decoded_pages, timed

from readerproxy import document
from readerproxy._speedups import native
from readerproxy.nesting import cap_depth

SOURCE = Path(__file__).with_name("lexbor_walk.c")


def build(directory: Path) -> ModuleType:
    """The walk, compiled and imported."""
    target = directory / ("lexbor_walk" + (sysconfig.get_config_var("EXT_SUFFIX") or ".so"))
    compiler = shlex.split(sysconfig.get_config_var("CC") or "cc")
    include = sysconfig.get_paths()["include"]
    subprocess.run(
        [*compiler, "-O2", "-shared", "-fPIC", f"-I{include}", str(SOURCE), "-o", str(target), "-ldl"],
        check=True,
    )
    spec = importlib.util.spec_from_file_location("lexbor_walk", target)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.setup(selectolax.lexbor.__file__)
    return module


def cleaned(text: str) -> LexborHTMLParser:
    """The tree as `document.parse` has it when it serialises (depth capped, cleaned)."""
    capped = cap_depth(text).html
    tree = LexborHTMLParser(capped)
    document._clean(tree, document._read_before_cleaning(tree, capped))
    return tree


def page_times(walk: ModuleType, text: str, repeat: int) -> dict[str, float]:
    """Milliseconds of each stage on one page (fastest of `repeat`)."""
    tree = cleaned(text)
    elements = tree.css("*")
    root = tree.root.mem_id if tree.root is not None else 0
    assert walk.walk(root)[0] == len(elements), "the walk missed elements"
    serialised = tree.html or ""
    runs = {
        "tree.html": lambda: tree.html,
        "scan of it": lambda: document._scan_native(serialised, len(elements)),
        "walk": lambda: walk.walk(root),
    }
    return {stage: min(timed(run)[0] for _ in range(repeat)) * 1000 for stage, run in runs.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    dataset_options(parser, repeat=5)
    args = parser.parse_args()
    if native is None:
        raise SystemExit("the C kernels are not built: python hatch_build.py")
    with tempfile.TemporaryDirectory() as directory:
        walk = build(Path(directory))
        for name in args.dataset:
            pages = decoded_pages(name, args.limit)
            times = [page_times(walk, text, args.repeat) for text, _url in pages]
            print(f"{name}: {len(pages)} pages, fastest of {args.repeat} per page, median over pages")
            for stage in times[0]:
                print(f"  {stage:12s} {statistics.median(page[stage] for page in times):6.3f} ms")


if __name__ == "__main__":
    main()
