"""The search for comments under an article, two source trees interleaved (not a test).

    .venv/bin/python benchmarks/comments_speed.py --before /tmp/old-tree [--repeat 3] [--check]
    .venv/bin/python benchmarks/comments_speed.py --dataset older-dev wcxb-dev   # this tree alone

For every page where the reader seeks comments (`thread.comments_for`: a class or id naming a
comment section, and an extraction that keeps something), each tree parses its own `Document`,
runs `auto`, and then times `posts.find_thread(doc, after=...)` from the extraction's last token,
on a Document of its own made untimed before each call; the trees take turns `--repeat` times and
the fastest of each is kept. Printed per dataset: the pages sought and the threads found, and per
tree the median, mean, 90th percentile and largest time; with `--before`, the ratio of the means.

`--check` (with `--before`) also compares, outside the timings, the threads the two trees find
with and without `after` (their `repr`): the proof that a speed change found the same posts.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from types import ModuleType
from typing import Any

import numpy as np
from timing import compared_packages, dataset_options, tree_module, warmed_pages


def modules(package: ModuleType) -> tuple[Any, Any, Any]:
    """This tree's pipeline, thread and posts modules."""
    return (
        tree_module(package, "pipeline"),
        tree_module(package, "views.thread"),
        tree_module(package, "views.posts"),
    )


def sought(package: ModuleType, text: str, url: str | None) -> int | None:
    """The token after which this tree seeks comments on the page (None: it seeks none)."""
    pipeline, thread, _ = modules(package)
    result = pipeline.process_page(text, url=url, algorithm="auto")
    chosen = np.flatnonzero(result.extraction.selection)
    if not len(chosen) or not thread._may_have_comments(result.doc):
        return None
    return int(chosen[-1])


def time_search(package: ModuleType, text: str, url: str | None, after: int) -> tuple[float, Any]:
    """Seconds `find_thread(doc, after)` took on a fresh Document, and what it found."""
    pipeline, _, posts = modules(package)
    doc = pipeline.process_page(text, url=url, algorithm="auto").doc
    began = time.perf_counter()
    found = posts.find_thread(doc, after=after)
    return time.perf_counter() - began, found


def summary(label: str, times: list[float]) -> str:
    ordered = sorted(times)
    return (
        f"  {label:<7} median {statistics.median(ordered) * 1000:6.3f} ms   mean "
        f"{statistics.mean(ordered) * 1000:6.3f}   p90 {ordered[math.ceil(0.9 * len(ordered)) - 1] * 1000:6.3f}"
        f"   largest {ordered[-1] * 1000:6.1f}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    dataset_options(parser, repeat=3)
    parser.set_defaults(dataset=["older-dev", "wcxb-dev"])
    parser.add_argument("--check", action="store_true", help="compare the threads the trees find")
    args, packages = compared_packages(parser)
    for name in args.dataset:
        pages = warmed_pages(
            name, args.limit, packages, lambda package, text, url: sought(package, text, url)
        )
        times: dict[str, list[float]] = {label: [] for label in packages}
        searched = found = differ = 0
        for text, url in pages:
            after = sought(packages["now"], text, url)
            if after is None:
                continue
            searched += 1
            best = dict.fromkeys(packages, float("inf"))
            result: Any = None
            for _ in range(args.repeat):
                for label, package in packages.items():
                    seconds, result = time_search(package, text, url, after)
                    best[label] = min(best[label], seconds)
            found += result is not None
            for label, seconds in best.items():
                times[label].append(seconds)
            if args.check and "before" in packages:
                differ += any(
                    repr(time_search(packages["before"], text, url, at)[1])
                    != repr(time_search(packages["now"], text, url, at)[1])
                    for at in (-1, after)
                )
        print(f"{name}: comments sought on {searched} of {len(pages)} pages, a thread found on {found}")
        if not searched:
            continue
        for label, measured in times.items():
            print(summary(label, measured))
        if "before" in packages:
            ratio = statistics.mean(times["now"]) / statistics.mean(times["before"])
            print(f"  now / before, mean: {ratio:.3f}")
        if args.check and "before" in packages:
            print(f"  threads that differ (with and without after=): {differ} of {searched} pages")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
