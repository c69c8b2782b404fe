"""The block features of `auto` alone, two source trees interleaved in one process (not a test).

    .venv/bin/python benchmarks/block_features_speed.py --before /tmp/old-tree [--repeat 5] [--dataset ...]

For every page, each tree parses its own `Document` and runs the heuristic `auto` starts from,
outside the timing; then, the trees taking turns `--repeat` times, `learn.blocks.page_blocks` (the
feature matrix) and `learn.blocks.context_features` (the second stage's context, on the first
stage's probabilities) are timed; the fastest run of each is kept. Printed per dataset: the median
over pages of each tree's time, the median per-page ratio now / before, and the shortest page's
time (a page's fixed cost). `extraction_speed.py` times the whole extraction the same way.
"""

from __future__ import annotations

import argparse
import statistics
import time
from types import ModuleType
from typing import Any

import numpy as np
from timing import compared_packages, dataset_options, tree_module, warmed_pages


def stages(package: ModuleType) -> tuple[Any, Any, Any, Any]:
    """This tree's document, auto (for its first extractor), learn.blocks and learn.model modules."""
    modules = [
        tree_module(package, module)
        for module in ("document", "extractors.auto", "learn.blocks", "learn.model")
    ]
    return modules[0], modules[1], modules[2], modules[3]


def block_features(package: ModuleType, text: str, url: str | None) -> Any:
    """A Document, the heuristic's Extraction and the first stage's probabilities of this tree."""
    document, auto, blocks, model = stages(package)
    doc = document.parse(text, url)
    first, params = auto.first_extractor()
    heuristic = first.run(doc, params)
    features = blocks.page_blocks(doc, heuristic)
    return doc, heuristic, features, model.load_model().first.probability(features.features)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    dataset_options(parser, repeat=5)
    args, packages = compared_packages(parser)
    for name in args.dataset:
        pages = warmed_pages(name, args.limit, packages, block_features)
        seconds: dict[str, dict[str, list[float]]] = {
            stage: {label: [] for label in packages} for stage in ("page_blocks", "context_features")
        }
        for text, url in pages:
            inputs = {label: block_features(package, text, url) for label, package in packages.items()}
            if len(inputs["now"][2].elements) == 0:
                continue
            best = {stage: {label: float("inf") for label in packages} for stage in seconds}
            for _ in range(args.repeat):
                for label, package in packages.items():
                    blocks = stages(package)[2]
                    doc, heuristic, features, probability = inputs[label]
                    chars = np.expm1(features.features[:, blocks.FEATURES.index("log_chars")])
                    began = time.perf_counter()
                    blocks.page_blocks(doc, heuristic)
                    middle = time.perf_counter()
                    blocks.context_features(probability, chars, features.parent, features.grandparent)
                    ended = time.perf_counter()
                    best["page_blocks"][label] = min(best["page_blocks"][label], middle - began)
                    best["context_features"][label] = min(best["context_features"][label], ended - middle)
            for stage, by_label in best.items():
                for label, value in by_label.items():
                    seconds[stage][label].append(value)
        print(f"{name}: {len(seconds['page_blocks']['now'])} pages with blocks, fastest of {args.repeat}")
        for stage, by_label in seconds.items():
            times = ", ".join(
                f"{label} {statistics.median(values) * 1e3:.3f} ms (shortest page {min(values) * 1e3:.3f})"
                for label, values in by_label.items()
            )
            ratio = ""
            if "before" in by_label:
                ratios = [
                    now / before for now, before in zip(by_label["now"], by_label["before"], strict=True)
                ]
                ratio = f", now / before {statistics.median(ratios):.2f}"
            print(f"  {stage}: median {times}{ratio}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
