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
from typing import Any

import trafilatura
from timing import compared_packages, dataset_options, timed, tree_module, warmed_pages

#: (modules, name) of the memos that hold what a page's own content decides: class and id values
#: and URLs; each is sought in the first of its modules that has it (newest first: older trees kept
#: the class/id memos in `extractors.heuristic`). The model, the templates and parameter classes
#: are loaded once per process and stay.
CONTENT_MEMOS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("elements", "extractors.heuristic"), "_default_scores"),
    (("elements", "extractors.heuristic"), "hint_weight"),
    (("elements", "extractors.heuristic"), "_unlikely_match"),
    (("elements",), "class_word_bits"),
    (("elements",), "class_value_bits"),
    (("elements",), "_word_bits"),
    (("readability_rules",), "unlikely_by_class_id"),
    (("pagination",), "page_marker"),
    (("output",), "_origin"),
)


@functools.cache
def content_memos(package: ModuleType) -> dict[str, Any]:
    """The memos of `CONTENT_MEMOS` a tree has, by name (a tree of another date may lack some),
    found once per tree."""
    found: dict[str, Any] = {}
    for module_names, name in CONTENT_MEMOS:
        for module_name in module_names:
            try:
                module = tree_module(package, module_name)
            except SystemExit:  # no such module in this tree
                continue
            memo = getattr(module, name, None)
            if memo is not None and hasattr(memo, "cache_clear"):
                found[name] = memo
                break
    return found


def clear_memos(package: ModuleType) -> None:
    for memo in content_memos(package).values():
        memo.cache_clear()


def first_visit(package: ModuleType, text: str, url: str | None) -> float:
    clear_memos(package)
    return timed(lambda: package.extract(text, url=url, algorithm="auto"))[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    dataset_options(parser, repeat=3)
    args, packages = compared_packages(parser)
    for label, package in packages.items():
        missing = [name for _, name in CONTENT_MEMOS if name not in content_memos(package)]
        print(
            f"{label}: clears {len(content_memos(package))} memos"
            + (f" (has no {', '.join(missing)})" if missing else "")
        )
        if missing and label == "now":
            raise SystemExit(f"this tree has no memo named {', '.join(missing)}: update CONTENT_MEMOS")
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
