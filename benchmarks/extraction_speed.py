"""auto's extraction alone, two source trees interleaved in one process (not a test).

    .venv/bin/python benchmarks/extraction_speed.py --before /tmp/old-tree [--repeat 5] [--dataset ...]

For every page (decoded once, outside the timings) each tree parses its own `Document` outside the
timing and runs `auto` on it (`Extractor.run`: the heuristic, the block features, the trees and the
selection; no metadata, no rendering), the trees taking turns, `--repeat` times; the fastest run of
each is kept. Printed per dataset: the median over pages of each tree's time and of the per-page
ratio now / before. `server_load.py`'s 197 KB page is timed last on its own, ten times as often.
`parse_speed.py` times the whole `readerproxy.extract` the same way, against trafilatura.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from types import ModuleType
from typing import Any

from server_load import page_bytes
from timing import compared_packages, dataset_options, tree_module, warmed_pages


def runner(package: ModuleType) -> Callable[[str, str | None], float]:
    """Seconds of one `auto` run on a fresh Document of this tree (the parse is not timed)."""
    document = tree_module(package, "document")
    extractor: Any = tree_module(package, "extraction").get_extractor("auto")
    params = extractor.defaults()

    def run(text: str, url: str | None) -> float:
        doc = document.parse(text, url)
        began = time.perf_counter()
        extractor.run(doc, params)
        return time.perf_counter() - began

    return run


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    dataset_options(parser, repeat=5)
    args, packages = compared_packages(parser)
    runs = {label: runner(package) for label, package in packages.items()}
    run_of = {package.__name__: runs[label] for label, package in packages.items()}

    def warm(package: ModuleType, text: str, url: str | None) -> None:
        run_of[package.__name__](text, url)

    big = packages["now"].api.to_text(page_bytes())
    sets: list[tuple[str, list[tuple[str, str | None]], int]] = [
        (name, warmed_pages(name, args.limit, packages, warm), args.repeat) for name in args.dataset
    ]
    sets.append(("server_load page", [(big, None)], 10 * args.repeat))
    for name, pages, repeat in sets:
        best: dict[str, list[float]] = {label: [] for label in runs}
        for text, url in pages:
            fastest = dict.fromkeys(runs, float("inf"))
            for _ in range(repeat):
                for label, run in runs.items():
                    fastest[label] = min(fastest[label], run(text, url))
            for label in runs:
                best[label].append(fastest[label])
        cells = [f"{label} {1000 * statistics.median(times):.3f} ms" for label, times in best.items()]
        if "before" in best:
            ratios = [now / before for before, now in zip(best["before"], best["now"], strict=True)]
            cells.append(f"now / before {statistics.median(ratios):.3f}")
        print(f"{name}: {len(pages)} pages, fastest of {repeat}: " + ", ".join(cells), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
