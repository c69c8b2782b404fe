"""The C walk of the Lexbor tree against `tree.html` plus the C scan it replaces (not a test).

    .venv/bin/python benchmarks/lexbor_walk.py [--repeat 5] [--limit N] [--dataset scrapinghub ...]

For every page cleaned as `document.parse` cleans it, times (fastest of `--repeat`): the
serialisation `tree.html`, the C scan of it (`scan._scan_native`: what built the linear view
before, and still does where the walk declines) and the walk (`scan._walk_native`), and counts
the pages the walk declines. Prints the medians per dataset in milliseconds. Requires the C kernels
(`python hatch_build.py`). The walk's floor measured before it was written (every node, names, class
values and texts as str, no linear view: 0.09 ms at the ScrapingHub median) came from a C file of
this benchmark that the history keeps (`22fdc6f`).
"""

from __future__ import annotations

import argparse
import statistics

from selectolax.lexbor import LexborHTMLParser
from timing import dataset_options, decoded_pages, timed

from readerproxy.engine.parse import clean, scan
from readerproxy.engine.parse.nesting import cap_depth


def cleaned(text: str) -> LexborHTMLParser:
    """The tree as `document.parse` has it when it builds the linear view (depth capped, cleaned)."""
    capped = cap_depth(text).html
    tree = LexborHTMLParser(capped)
    clean.clean(tree, clean.read_before_cleaning(tree, capped))
    return tree


def page_times(text: str, repeat: int) -> dict[str, float] | None:
    """Milliseconds of each stage on one page (fastest of `repeat`), or None where the walk declines."""
    tree = cleaned(text)
    n_elements = len(tree.css("*"))
    if scan._walk_native(tree, n_elements) is None:
        return None
    serialised = tree.html or ""
    runs = {
        "tree.html": lambda: tree.html,
        "scan of it": lambda: scan._scan_native(serialised, n_elements),
        "walk": lambda: scan._walk_native(tree, n_elements),
    }
    return {stage: min(timed(run)[0] for _ in range(repeat)) * 1000 for stage, run in runs.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    dataset_options(parser, repeat=5)
    args = parser.parse_args()
    if not scan._WALK:
        raise SystemExit("the walk is not available: build the C kernels (python hatch_build.py)")
    for name in args.dataset:
        pages = decoded_pages(name, args.limit)
        measured = [page_times(text, args.repeat) for text, _url in pages]
        times = [page for page in measured if page is not None]
        print(
            f"{name}: {len(pages)} pages ({len(pages) - len(times)} declined by the walk), fastest of {args.repeat}"
        )
        for stage in times[0]:
            print(f"  {stage:12s} {statistics.median(page[stage] for page in times):6.3f} ms")


if __name__ == "__main__":
    main()
