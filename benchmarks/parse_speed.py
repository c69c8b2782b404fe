"""Parsing and extraction speed against references measured in the same run (not a test).

    .venv/bin/python benchmarks/parse_speed.py [--repeat 5] [--limit N] [--dataset scrapinghub ...]

For every page of each dataset (decoded to text once, outside the timings), in one process:

- `readerproxy.engine.parse.document.parse(text, url)` (the Document every extractor reads) against
  selectolax's `LexborHTMLParser(text)` alone (the C parse it starts from);
- `readerproxy.extract(text, url, algorithm="auto")` (parse, extraction and the text; since
  2026-12-01 the HTML and the metadata are made when first asked for) against
  `trafilatura.extract(text, url=url)` with its defaults (text, no metadata), and the same with the
  article's HTML and metadata read as well (what the reader view needs), also against
  `trafilatura.extract(..., with_metadata=True)`.

Each page is timed `--repeat` times with the contenders interleaved, and the fastest run of each is
kept (the least disturbed by other load on a shared machine). Printed per dataset: the median over
pages of the per-page ratio, and the ratio of the median times. Requires trafilatura
(`pip install 'readerproxy[bench]'`).

`--parse-only` times the parses alone (Lexbor's, the `Document`'s and, with `--before`, the other
tree's `Document`), without the extractions and trafilatura: the parse ratio in a few minutes.

`--before TREE` adds the same two measures for the code of another source tree (e.g. from
`git archive <commit> | tar -x -C /tmp/before`), imported under another name as `render_speed.py
--before` does and interleaved with the rest, so "before" and "now" share the run and its load.
"""

from __future__ import annotations

import argparse
import functools
import gc
import statistics
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import trafilatura
from selectolax.lexbor import LexborHTMLParser
from timing import dataset_options, decoded_pages, load_tree, timed, tree_module

import readerproxy
from readerproxy.engine.parse.document import parse


def _whole(article: Any) -> Any:
    """The article with what a reader view shows besides the text: its HTML and its metadata (made
    on first use since 2026-12-01; an older tree made them in `extract`, and reading them is free)."""
    return article.html, article.title, article.metadata


def measure(
    pages: list[tuple[str, str | None]],
    repeat: int,
    baseline: ModuleType | None = None,
    parse_only: bool = False,
) -> dict[str, list[float]]:
    """Per page, the fastest of `repeat` interleaved runs of each contender (seconds)."""
    contenders: dict[str, Callable[[str, str | None], Any]] = {
        "lexbor": lambda text, url: LexborHTMLParser(text),
        "document": lambda text, url: parse(text, url),
        "auto": lambda text, url: readerproxy.extract(text, url=url, algorithm="auto"),
        "auto article": lambda text, url: _whole(readerproxy.extract(text, url=url, algorithm="auto")),
        "trafilatura": lambda text, url: trafilatura.extract(text, url=url),
        "trafilatura metadata": lambda text, url: trafilatura.extract(text, url=url, with_metadata=True),
    }
    if baseline is not None:
        old_document = tree_module(baseline, "document")
        old_parse = old_document.parse
        contenders["baseline document"] = lambda text, url: old_parse(text, url)
    if parse_only:
        contenders = {name: run for name, run in contenders.items() if "document" in name or name == "lexbor"}
    elif baseline is not None:
        contenders["baseline auto"] = lambda text, url: baseline.extract(text, url=url, algorithm="auto")
        contenders["baseline article"] = lambda text, url: _whole(
            baseline.extract(text, url=url, algorithm="auto")
        )
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for text, url in pages:
        best = dict.fromkeys(contenders, float("inf"))
        for _ in range(repeat):
            for name, run in contenders.items():
                best[name] = min(best[name], timed(functools.partial(run, text, url))[0])
        for name in contenders:
            times[name].append(best[name])
    return times


def ratio_line(label: str, mine: list[float], reference: list[float]) -> str:
    per_page = statistics.median(a / b for a, b in zip(mine, reference, strict=True))
    of_medians = statistics.median(mine) / statistics.median(reference)
    return (
        f"  {label:<34} median per-page ratio {per_page:6.3f}   ratio of medians {of_medians:6.3f}"
        f"   ({statistics.median(mine) * 1000:7.2f} ms / {statistics.median(reference) * 1000:7.2f} ms)"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    dataset_options(parser, repeat=5)
    parser.add_argument("--before", type=Path, help="source tree of the code to compare with")
    parser.add_argument("--parse-only", action="store_true", help="time the parses alone")
    args = parser.parse_args()
    baseline = load_tree(args.before) if args.before else None
    for name in args.dataset:
        pages = decoded_pages(name, args.limit)
        for text, url in pages[:3]:  # warm up imports and caches
            readerproxy.extract(text, url=url)
            if not args.parse_only:
                trafilatura.extract(text, url=url)
            if baseline is not None:
                baseline.extract(text, url=url)
        gc.collect()
        times = measure(pages, args.repeat, baseline, args.parse_only)
        print(f"{name}: {len(pages)} pages, fastest of {args.repeat} per page")
        print(ratio_line("Document build / Lexbor parse", times["document"], times["lexbor"]))
        if args.parse_only:
            if baseline is not None:
                print(
                    ratio_line("before: Document / Lexbor parse", times["baseline document"], times["lexbor"])
                )
                print(ratio_line("Document now / before", times["document"], times["baseline document"]))
            continue
        print(ratio_line("extract(auto) / trafilatura.extract", times["auto"], times["trafilatura"]))
        print(ratio_line("  + its HTML and metadata", times["auto article"], times["trafilatura"]))
        print(
            ratio_line(
                "  the same / trafilatura with metadata", times["auto article"], times["trafilatura metadata"]
            )
        )
        if baseline is not None:
            print(ratio_line("before: Document / Lexbor parse", times["baseline document"], times["lexbor"]))
            print(
                ratio_line(
                    "before: extract(auto) / trafilatura", times["baseline auto"], times["trafilatura"]
                )
            )
            print(ratio_line("extract(auto) now / before", times["auto"], times["baseline auto"]))
            print(
                ratio_line(
                    "  + HTML and metadata, now / before", times["auto article"], times["baseline article"]
                )
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
