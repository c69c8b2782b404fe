"""The page-kind decision's cost beside `extract(auto)`, two source trees interleaved (not a test).

    .venv/bin/python benchmarks/pagekind_speed.py --before /tmp/old-tree [--repeat 3] [--dataset ...]

For every page, each tree parses its own `Document` and runs `auto` (the pipeline's extraction) with
its own model, then `pagekind.page_kind` over that Document and selection with its own page-kind
model; the trees take turns `--repeat` times and the fastest run of each step is kept. Printed per
dataset: the median over pages of each tree's `extract(auto)` (parse, extraction, render, no kind)
and of its page kind, the kind as a share of `extract(auto)`, and, with `--before`, the median
per-page ratio of `extract(auto)` + kind now / before (what the server pays: its JSON always asks
for the kind).

`--check` (with `--before`) also compares, outside the timings, each page's features
(`pagekind.page_features`) and the kinds' probabilities (`PageKindModel.probabilities`, float64) of
the two trees bit for bit, and prints how many pages differ in each and in the kind decided: the
proof that a speed change left the decision alone.
"""

from __future__ import annotations

import argparse
import statistics
import time
from types import ModuleType
from typing import Any

from timing import compared_packages, dataset_options, tree_module, warmed_pages


def modules(package: ModuleType) -> tuple[Any, Any]:
    """This tree's pipeline and pagekind modules."""
    pipeline = tree_module(package, "pipeline")
    pagekind = tree_module(package, "pagekind")
    return pipeline, pagekind


def processed(package: ModuleType, text: str, url: str | None) -> Any:
    """This tree's whole pipeline on the page, with its page kind decided."""
    pipeline, pagekind = modules(package)
    result = pipeline.process_page(text, url=url, algorithm="auto")
    pagekind.page_kind(result.doc, result.extraction.selection)
    return result


def decision_differs(packages: dict[str, ModuleType], text: str, url: str | None) -> dict[str, bool]:
    """Whether the trees' features, probabilities and kind of the page differ (bit for bit)."""
    made = {}
    for label, package in packages.items():
        pipeline, pagekind = modules(package)
        result = pipeline.process_page(text, url=url, algorithm="auto")
        model = pagekind.load_model()
        features = pagekind.page_features(result.doc, result.extraction.selection, model.words)
        made[label] = (
            features,
            model.probabilities(features[None, :]),
            pagekind.page_kind(result.doc, result.extraction.selection),
        )
    (features, probabilities, kind), (features_now, probabilities_now, kind_now) = made["before"], made["now"]
    return {
        "features": features.tobytes() != features_now.tobytes(),
        "probabilities": probabilities.tobytes() != probabilities_now.tobytes(),
        "kind": (kind.kind, kind.confidence, kind.probabilities)
        != (kind_now.kind, kind_now.confidence, kind_now.probabilities),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    dataset_options(parser, repeat=3)
    parser.add_argument("--check", action="store_true", help="compare the trees' features bit for bit")
    args, packages = compared_packages(parser)
    for name in args.dataset:
        pages = warmed_pages(name, args.limit, packages, processed)
        seconds = {step: {label: [] for label in packages} for step in ("extract", "kind")}
        differ = dict.fromkeys(("features", "probabilities", "kind"), 0)
        for text, url in pages:
            if args.check and "before" in packages:
                for key, value in decision_differs(packages, text, url).items():
                    differ[key] += value
            best = {step: dict.fromkeys(packages, float("inf")) for step in seconds}
            for _ in range(args.repeat):
                for label, package in packages.items():
                    pipeline, pagekind = modules(package)
                    began = time.perf_counter()
                    result = pipeline.process_page(text, url=url, algorithm="auto")
                    middle = time.perf_counter()
                    pagekind.page_kind(result.doc, result.extraction.selection)
                    ended = time.perf_counter()
                    best["extract"][label] = min(best["extract"][label], middle - began)
                    best["kind"][label] = min(best["kind"][label], ended - middle)
            for step, by_label in best.items():
                for label, value in by_label.items():
                    seconds[step][label].append(value)
        print(f"{name}: {len(pages)} pages, fastest of {args.repeat}")
        if args.check and "before" in packages:
            print(
                f"  pages whose features differ: {differ['features']}, probabilities: {differ['probabilities']},"
                f" kind: {differ['kind']} (bit for bit, of {len(pages)})"
            )
        for label in packages:
            extract, kind = seconds["extract"][label], seconds["kind"][label]
            shares = [k / e for k, e in zip(kind, extract, strict=True)]
            print(
                f"  {label}: extract(auto) median {statistics.median(extract) * 1e3:.2f} ms,"
                f" page kind median {statistics.median(kind) * 1e3:.3f} ms"
                f" ({statistics.median(shares):.1%} of extract)"
            )
        if "before" in packages:
            totals = {
                label: [e + k for e, k in zip(seconds["extract"][label], seconds["kind"][label], strict=True)]
                for label in packages
            }
            ratios = [now / before for now, before in zip(totals["now"], totals["before"], strict=True)]
            kinds = [
                now / before
                for now, before in zip(seconds["kind"]["now"], seconds["kind"]["before"], strict=True)
            ]
            print(
                f"  extract(auto) + kind, now / before: median {statistics.median(ratios):.3f};"
                f" page kind alone now / before: median {statistics.median(kinds):.2f}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
