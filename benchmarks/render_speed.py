"""Time per stage of what follows the extraction in `pipeline.process_page` (not a test).

    .venv/bin/python benchmarks/render_speed.py [--repeat 3] [--limit N] [--dataset scrapinghub ...]

For every page (decoded to text once), each repetition parses the page and runs `auto` afresh
(outside the timings, so no stage profits from what an earlier repetition left cached on the
`Document`), then times, in the pipeline's order: `resolve` (the extractor and its parameters),
`render_text`, `render_html`, `extract_metadata` (which includes `next_page_url`) and the readerable
check; after them, on the same Document, `next_page_url` alone (a part of metadata, shown for
where the time goes). The fastest repetition of each stage is kept per page; printed per dataset:
the median over pages of each stage, and of their sum ("after the extraction").

Run it against other code with `PYTHONPATH=<tree>` to get a "before" in the same conditions.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from collections.abc import Callable
from typing import Any

from readerproxy.api import to_text
from readerproxy.document import parse
from readerproxy.evaluation.datasets import load_dataset
from readerproxy.metadata import extract_metadata
from readerproxy.output import render_html, render_text
from readerproxy.pagination import next_page_url
from readerproxy.pipeline import resolve
from readerproxy.readerable import is_probably_readerable

STAGES = ("resolve", "render_text", "render_html", "metadata", "readerable")


def _timed(function: Callable[[], Any]) -> tuple[float, Any]:
    began = time.perf_counter()
    result = function()
    return time.perf_counter() - began, result


def page_times(text: str, url: str | None) -> dict[str, float]:
    """Seconds per stage for one fresh parse and extraction of the page."""
    extractor, params = resolve("auto", {})
    doc = parse(text, url)
    selection = extractor.run(doc, params).selection
    times: dict[str, float] = {}
    times["resolve"], _ = _timed(lambda: resolve("auto", {}))
    times["render_text"], plain = _timed(lambda: render_text(doc, selection))
    times["render_html"], _ = _timed(lambda: render_html(doc, selection))
    times["metadata"], _ = _timed(lambda: extract_metadata(doc, plain, selection=selection))
    times["readerable"], _ = _timed(lambda: is_probably_readerable(doc))
    times["of which next_page_url"], _ = _timed(lambda: next_page_url(doc, selection))
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--limit", type=int)
    parser.add_argument("--dataset", nargs="+", default=["scrapinghub", "readability"])
    args = parser.parse_args()
    for name in args.dataset:
        pages = [(to_text(page.path.read_bytes()), page.url) for page in load_dataset(name, args.limit).pages]
        for text, url in pages[:3]:  # warm up imports and caches
            page_times(text, url)
        gc.collect()
        best: dict[str, list[float]] = {}
        for text, url in pages:
            fastest: dict[str, float] = {}
            for _ in range(args.repeat):
                for stage, seconds in page_times(text, url).items():
                    fastest[stage] = min(fastest.get(stage, float("inf")), seconds)
            fastest["after the extraction"] = sum(fastest[stage] for stage in STAGES)
            for stage, seconds in fastest.items():
                best.setdefault(stage, []).append(seconds)
        print(f"{name}: {len(pages)} pages, fastest of {args.repeat} per page, median over pages (ms)")
        for stage, values in best.items():
            print(f"  {stage:<24} {statistics.median(values) * 1000:7.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
