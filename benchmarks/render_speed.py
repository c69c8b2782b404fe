"""Time per stage of what follows the extraction in `pipeline.process_page` (not a test).

    .venv/bin/python benchmarks/render_speed.py [--repeat 3] [--limit N] [--dataset scrapinghub ...]
    .venv/bin/python benchmarks/render_speed.py --before /tmp/old-tree   # before/after in one run

For every page (decoded to text once), each repetition parses the page and runs `auto` afresh
(outside the timings, so no stage profits from what an earlier repetition left cached on the
`Document`), then times, in the pipeline's order: `resolve` (the extractor and its parameters),
`render_text`, `render_html`, `extract_metadata` (which includes `next_page_url`) and the readerable
check; after them, on the same Document, `next_page_url` alone (a part of metadata, shown for
where the time goes). The fastest repetition of each stage is kept per page; printed per dataset:
the median over pages of each stage, and of their sum ("after the extraction").

`--before TREE` loads the `readerproxy` package of another source tree (say, `git archive` of the
commit before a change) under another name, and times it on the same pages with the two
interleaved per repetition, so that both columns see the same load on a shared machine.
"""

from __future__ import annotations

import argparse
import statistics
from types import ModuleType

from timing import compared_packages, dataset_options, timed, tree_module, warmed_pages

STAGES = ("resolve", "render_text", "render_html", "metadata", "readerable")
PART = "of which next_page_url"


def page_times(package: ModuleType, text: str, url: str | None) -> dict[str, float]:
    """Seconds per stage of one package's code, after a fresh parse and extraction of the page."""
    pipeline = tree_module(package, "pipeline")
    output = tree_module(package, "output")
    metadata = tree_module(package, "metadata.metadata", "metadata")
    pagination = tree_module(package, "pagination")
    readerable = tree_module(package, "readerable")
    extractor, params = pipeline.resolve("auto", {})
    doc = pipeline.parse(text, url)
    selection = extractor.run(doc, params).selection
    times: dict[str, float] = {}
    times["resolve"], _ = timed(lambda: pipeline.resolve("auto", {}))
    times["render_text"], plain = timed(lambda: output.render_text(doc, selection))
    times["render_html"], _ = timed(lambda: output.render_html(doc, selection))
    times["metadata"], _ = timed(lambda: metadata.extract_metadata(doc, plain, selection=selection))
    times["readerable"], _ = timed(lambda: readerable.is_probably_readerable(doc))
    times[PART], _ = timed(lambda: pagination.next_page_url(doc, selection))
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    dataset_options(parser, repeat=3)
    args, packages = compared_packages(parser)
    for name in args.dataset:
        pages = warmed_pages(name, args.limit, packages, page_times)
        best: dict[str, dict[str, list[float]]] = {label: {} for label in packages}
        for text, url in pages:
            fastest: dict[str, dict[str, float]] = {label: {} for label in packages}
            for _ in range(args.repeat):
                for label, package in packages.items():
                    for stage, seconds in page_times(package, text, url).items():
                        fastest[label][stage] = min(fastest[label].get(stage, float("inf")), seconds)
            for label in packages:
                fastest[label]["after the extraction"] = sum(fastest[label][stage] for stage in STAGES)
                for stage, seconds in fastest[label].items():
                    best[label].setdefault(stage, []).append(seconds)
        print(f"{name}: {len(pages)} pages, fastest of {args.repeat} per page, median over pages (ms)")
        print(f"  {'stage':<24}" + "".join(f" {label:>8}" for label in packages))
        for stage in (*STAGES, PART, "after the extraction"):
            row = "".join(f" {statistics.median(best[label][stage]) * 1000:8.3f}" for label in packages)
            print(f"  {stage:<24}{row}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
