"""What a miss on `server_load.py`'s 197 KB page computes, stage by stage, two source trees
interleaved in one process (not a test).

    git worktree add /tmp/tree-1196696 1196696 && (cd /tmp/tree-1196696 && ../../work/main/.venv/bin/python hatch_build.py)
    .venv/bin/python benchmarks/miss_stages.py --before /tmp/tree-1196696 [--repeat 20]
    .venv/bin/python benchmarks/miss_stages.py --smoke   # this tree against itself, once: it runs

`--before` is any source tree of the project, of any date (its modules are found at any depth,
`timing.tree_module`; build its C kernels in it first, `python hatch_build.py`, or it runs its
pure-Python code). The worker's whole job (`workers.run_job`: decode, parse, extract, render,
`Article.to_dict`) and each of its stages alone: decode, parse, extract(auto), the page kind, each
view's reading (facts, posts, items, comments, the view with what it shows around its items or
posts), the plain text, the HTML, the metadata, Readability's check and `to_dict` of an Article
whose parts are all decided. Every timed call gets fresh inputs made untimed just before it (a new
Document, its extraction, an Article whose earlier parts are decided, then a garbage collection),
so no per-Document memo is warm that the job would not have warm. The trees take turns `--repeat` times; printed per stage:
each tree's median and fastest, and the ratio of the medians; "-" for a stage a tree does not
have (`1196696` decides no page kind and reads no views). Then the server's own part (the reader
page from the job's result).

Which views run says whether each is read only for the kind it serves: the page's kind and each
view's answer are printed under the table.
"""

from __future__ import annotations

import argparse
import gc
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
    "output": ("output",),
    "metadata": ("metadata.metadata", "metadata"),
    "readerable": ("readerable",),
}
#: The Article's lazily read parts that are views, each timed with those before it decided (the
#: comments need the view decided first).
VIEWS = ("facts", "posts", "items", "view", "comments")

#: A stage: make its inputs (untimed), then the call that is timed.
Stage = tuple[Callable[[], Any], Callable[[Any], Any]]


def stages(package: ModuleType) -> dict[str, Stage]:
    """The stages of one tree on the page, each with its own set-up."""

    def module(name: str) -> Any:
        return tree_module(package, *MODULES[name])

    pipeline, workers, render = module("pipeline"), module("workers"), module("render")
    output, metadata, readerable = module("output"), module("metadata"), module("readerable")
    body = page_bytes()
    text = pipeline.decode(body, "text/html")
    extractor, params = pipeline.resolve("auto", None)
    rewrite = render.link_rewriter(URL, "auto")
    job = workers.Job(body, URL, "text/html", "auto", params, True, True, None, False)
    lazy = isinstance(getattr(type(pipeline.process_page(body, url=URL).article), "kind", None), property)

    def parsed() -> Any:
        return pipeline.parse(text, URL)

    def extracted() -> tuple[Any, Any]:
        doc = parsed()
        return doc, pipeline.run_extractor(doc, extractor, params).selection

    def with_text() -> tuple[Any, Any, str]:
        doc, selection = extracted()
        return doc, selection, output.render_text(doc, selection)

    def article(*decided: str) -> Callable[[], Any]:
        """A fresh Article of the page (as the job makes it) with the parts `decided` read."""

        def make() -> Any:
            made = pipeline.process_page(
                body, url=URL, content_type="text/html", rewrite_link=rewrite
            ).article
            for name in decided:
                getattr(made, name)
            return made

        return make

    def nothing() -> None:
        return None

    found: dict[str, Stage] = {
        "job: run_job, whole": (nothing, lambda _: workers.run_job(job)),
        "decode": (nothing, lambda _: pipeline.decode(body, "text/html")),
        "parse": (nothing, lambda _: pipeline.parse(text, URL)),
        "extract(auto)": (parsed, lambda doc: pipeline.run_extractor(doc, extractor, params)),
        "render_text": (extracted, lambda made: output.render_text(*made)),
        "render_html": (extracted, lambda made: output.render_html(*made, rewrite_link=rewrite)),
        "metadata": (with_text, lambda made: metadata.extract_metadata(made[0], made[2], selection=made[1])),
        "readerable (Readability's check)": (parsed, readerable.is_probably_readerable),
    }
    if lazy:
        found["page kind"] = (article(), lambda made: made.kind)
        for index, name in enumerate(VIEWS):
            found[f"view: {name}"] = (
                article("kind", *VIEWS[:index]),
                lambda made, name=name: getattr(made, name),
            )
        everything = ("kind", *VIEWS, "html", "metadata", "readerable")
        found["to_dict, the rest"] = (article(*everything), lambda made: made.to_dict())
    else:
        found["to_dict, the rest"] = (article(), lambda made: made.to_dict())
    return found


def server_stage(package: ModuleType) -> Stage:
    """The server's own part of a miss: the reader page from the job's result."""
    pipeline, workers = tree_module(package, "pipeline"), tree_module(package, "workers")
    render = tree_module(package, *MODULES["render"])
    _, params = pipeline.resolve("auto", None)
    job = workers.Job(page_bytes(), URL, "text/html", "auto", params, True, True, None, False)
    data = workers.run_job(job) | {"url": URL}
    renderer, (prefs, _) = render.Renderer(), render.preferences({}, {})
    return (lambda: None), (lambda _: renderer.reader_page(data, prefs, "auto"))


def views_read(package: ModuleType) -> str:
    """The page's kind and what each view of the Article gave (the views a tree has)."""
    pipeline = tree_module(package, "pipeline")
    made = pipeline.process_page(page_bytes(), url=URL, content_type="text/html").article
    if not isinstance(getattr(type(made), "kind", None), property):
        return "no page kind, no views"
    answers = [f"{name}: {_describe(getattr(made, name))}" for name in VIEWS]
    return f"kind {made.page_kind} ({made.page_kind_confidence}); " + ", ".join(answers)


def _describe(value: Any) -> str:
    """A view's answer in a few words: none, how many posts or items, which facts, which view."""
    if value is None:
        return "none"
    if isinstance(value, tuple):
        return f"{len(value)}"
    if hasattr(value, "product") and hasattr(value, "recipe"):
        return f"product {value.product is not None}, recipe {value.recipe is not None}"
    return str(getattr(value, "name", type(value).__name__))


def timed(stage: Stage) -> float:
    """One run of the stage's call on fresh inputs, in ms."""
    setup, call = stage
    made = setup()
    gc.collect()  # the garbage of earlier runs is not this stage's
    began = time.perf_counter()
    call(made)
    return (time.perf_counter() - began) * 1000


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
    packages = {"now": readerproxy}
    if args.before is not None:
        packages = {"before": load_tree(args.before), "now": readerproxy}
    by_tree = {label: stages(package) for label, package in packages.items()}
    for label, package in packages.items():
        by_tree[label]["server: reader_page"] = server_stage(package)
    names = list(dict.fromkeys(name for found in by_tree.values() for name in found))
    print(
        f"| stage | before ms (median, fastest) | now ms (median, fastest) | now / before |  {args.repeat} runs, interleaved"
    )
    print("|---|---|---|---|")
    for name in names:
        times: dict[str, list[float]] = {label: [] for label in packages}
        for _ in range(args.repeat):
            for label in packages:
                if name in by_tree[label]:
                    times[label].append(timed(by_tree[label][name]))
        cells = {
            label: f"{statistics.median(values):.3f}, {min(values):.3f}" if values else "-"
            for label, values in times.items()
        }
        old, new = times.get("before", times["now"]), times["now"]
        ratio = f"{statistics.median(new) / statistics.median(old):.2f}" if old and new else "-"
        print(f"| {name} | {cells.get('before', cells['now'])} | {cells['now']} | {ratio} |")
    for label, package in packages.items():
        print(f"{label}: {views_read(package)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
