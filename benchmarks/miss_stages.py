"""What a miss on `server_load.py`'s 197 KB page computes, stage by stage, two source trees
interleaved in one process (not a test).

    .venv/bin/python benchmarks/miss_stages.py --before /tmp/old-tree [--repeat 20]
    .venv/bin/python benchmarks/miss_stages.py --smoke   # this tree against itself, once: it runs

The worker's whole job (`workers.run_job`: decode, parse, extract, render, `Article.to_dict`) and
its parts on one parsed page, then what the server's own process adds (the reader page from the
result). Each stage runs `--repeat` times, the two trees taking turns; printed: the fastest run of
each and their ratio. Stages on a parsed page reuse it, so per-Document memos (the element features
the learned scorer shares with the heuristic) are warm there and not in `run_job`.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from server_load import page_bytes
from timing import load_tree, tree_module

import readerproxy

URL = "http://127.0.0.1:8000/page"

#: The module each stage uses, by name; a `--before` tree may call it differently (newest name first).
MODULES = {
    "pipeline": ("pipeline",),
    "workers": ("workers",),
    "render": ("templating", "render"),
    "extractors.heuristic": ("extractors.heuristic",),
    "output": ("output",),
    "metadata": ("metadata.metadata", "metadata"),
    "readerable": ("readerable",),
}


def stages(package: ModuleType) -> dict[str, Callable[[], Any]]:
    """The stages of one tree, each a call on the same page."""

    def module(name: str) -> Any:
        return tree_module(package, *MODULES[name])

    pipeline, workers, render = module("pipeline"), module("workers"), module("render")
    heuristic, output = module("extractors.heuristic"), module("output")
    metadata, readerable = module("metadata"), module("readerable")
    body = page_bytes()
    text = pipeline.decode(body, "text/html")
    doc = pipeline.parse(text, URL)
    extractor, params = pipeline.resolve("auto", None)
    selection = pipeline.run_extractor(doc, extractor, params).selection
    rewrite = render.link_rewriter(URL, "auto")
    article = pipeline.process_page(body, url=URL, content_type="text/html", rewrite_link=rewrite).article
    job = workers.Job(body, URL, "text/html", "auto", params, True, True, None, False)
    data = workers.run_job(job) | {"url": URL}
    renderer, (prefs, _) = render.Renderer(), render.preferences({}, {})
    plain = output.render_text(doc, selection)
    heuristic_run = pipeline.resolve("heuristic", None)
    return {
        "worker: run_job, whole": lambda: workers.run_job(job),
        "parse": lambda: pipeline.parse(text, URL),
        "extract(auto)": lambda: pipeline.run_extractor(doc, extractor, params),
        "heuristic": lambda: pipeline.run_extractor(doc, *heuristic_run),
        "element_features": lambda: heuristic.element_features(doc),
        "render_text": lambda: output.render_text(doc, selection),
        "render_html": lambda: output.render_html(doc, selection, rewrite_link=rewrite),
        "metadata": lambda: metadata.extract_metadata(doc, plain, selection=selection),
        "readerable": lambda: readerable.is_probably_readerable(doc),
        "Article.to_dict": article.to_dict,
        "server: reader_page": lambda: renderer.reader_page(data, prefs, "auto"),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", type=Path, help="source tree of the code to compare with")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--smoke", action="store_true", help="this tree against itself, once each")
    args = parser.parse_args()
    if args.smoke:
        args.repeat = 1
    elif args.before is None:
        parser.error("--before is required (or --smoke)")
    now = stages(readerproxy)
    before = now if args.before is None else stages(load_tree(args.before))
    print(f"| stage | before ms | now ms | now / before |  (fastest of {args.repeat}, interleaved)")
    print("|---|---|---|---|")
    for name in now:
        times: dict[str, list[float]] = {"before": [], "now": []}
        for _ in range(args.repeat):
            for label, call in (("before", before[name]), ("now", now[name])):
                began = time.perf_counter()
                call()
                times[label].append((time.perf_counter() - began) * 1000)
        old, new = min(times["before"]), min(times["now"])
        medians = f"medians {statistics.median(times['before']):.3f} / {statistics.median(times['now']):.3f}"
        print(f"| {name} | {old:.3f} | {new:.3f} | {new / old:.2f} |  {medians}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
