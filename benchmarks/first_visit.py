"""A page's first visit: `readerproxy.extract(html, algorithm="auto")` with the memos of class/id
scores and URLs cleared before each page, against trafilatura.extract, in one process.

    .venv/bin/python benchmarks/first_visit.py --repeat 3 --before /tmp/old-tree

The other speed benchmarks keep the fastest of several runs per page, so from the second run on
the regular expressions over class and id values (memoised per distinct value) cost nothing. A
server meets most class lists for the first time on a miss; this measures that case. Each
repetition clears the memos (`CONTENT_MEMOS`, where they exist in the tree) and then times the
whole extraction; `--before` imports another source tree under another name and interleaves it
page by page, so both columns saw the same load.
"""

from __future__ import annotations

import argparse
import functools
import statistics
from types import ModuleType

import trafilatura
from timing import compared_packages, dataset_options, timed, tree_module, warmed_pages

#: (module, function) of the memos that hold what a page's own content decides: class and id
#: values and URLs. The model, the templates and parameter classes are loaded once per process
#: and stay.
CONTENT_MEMOS = (
    ("extractors.heuristic", "_default_scores"),
    ("extractors.heuristic", "hint_weight"),
    ("extractors.heuristic", "_unlikely_match"),
    ("readability_rules", "unlikely_by_class_id"),
    ("pagination", "page_marker"),
    ("output", "_origin"),
)


def clear_memos(package: ModuleType) -> None:
    for module_name, function in CONTENT_MEMOS:
        module = tree_module(package, module_name)
        memo = getattr(module, function, None)
        if memo is not None and hasattr(memo, "cache_clear"):
            memo.cache_clear()


def first_visit(package: ModuleType, text: str, url: str | None) -> float:
    clear_memos(package)
    return timed(lambda: package.extract(text, url=url, algorithm="auto"))[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    dataset_options(parser, repeat=3)
    args, packages = compared_packages(parser)
    for name in args.dataset:
        pages = warmed_pages(name, args.limit, packages, first_visit)
        best: dict[str, list[float]] = {label: [] for label in [*packages, "trafilatura"]}
        for text, url in pages:
            fastest = dict.fromkeys(best, float("inf"))
            for _ in range(args.repeat):
                for label, package in packages.items():
                    fastest[label] = min(fastest[label], first_visit(package, text, url))
                took, _ = timed(functools.partial(trafilatura.extract, text, url=url))
                fastest["trafilatura"] = min(fastest["trafilatura"], took)
            for label, seconds in fastest.items():
                best[label].append(seconds)
        reference = best["trafilatura"]
        print(f"{name}: {len(pages)} pages, first visit (memos cleared), fastest of {args.repeat} per page")
        print(f"  {'':<12} {'median ms':>10} {'× trafilatura (median per page)':>32}")
        for label, times in best.items():
            ratio = statistics.median(t / r for t, r in zip(times, reference, strict=True))
            print(f"  {label:<12} {statistics.median(times) * 1000:10.2f} {ratio:32.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
