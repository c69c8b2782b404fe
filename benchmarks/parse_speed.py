"""Parsing and extraction speed against references measured in the same run (not a test).

    .venv/bin/python benchmarks/parse_speed.py [--repeat 5] [--limit N] [--dataset scrapinghub ...]

For every page of each dataset (decoded to text once, outside the timings), in one process:

- `readerproxy.document.parse(text, url)` (the Document every extractor reads) against
  selectolax's `LexborHTMLParser(text)` alone (the C parse it starts from);
- `readerproxy.extract(text, url, algorithm="auto")` (everything: parse, extraction, metadata,
  HTML and text output) against `trafilatura.extract(text, url=url)` with its defaults.

Each page is timed `--repeat` times with the contenders interleaved, and the fastest run of each is
kept (the least disturbed by other load on a shared machine). Printed per dataset: the median over
pages of the per-page ratio, and the ratio of the median times. Requires trafilatura
(`pip install 'readerproxy[bench]'`).
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from collections.abc import Callable
from typing import Any

import trafilatura
from selectolax.lexbor import LexborHTMLParser

import readerproxy
from readerproxy.api import to_text
from readerproxy.document import parse
from readerproxy.evaluation.datasets import load_dataset


def once(function: Callable[[str, str | None], Any], text: str, url: str | None) -> float:
    """Seconds taken by one call."""
    began = time.perf_counter()
    function(text, url)
    return time.perf_counter() - began


def measure(pages: list[tuple[str, str | None]], repeat: int) -> dict[str, list[float]]:
    """Per page, the fastest of `repeat` interleaved runs of each contender (seconds)."""
    times: dict[str, list[float]] = {"lexbor": [], "document": [], "auto": [], "trafilatura": []}
    contenders: dict[str, Callable[[str, str | None], Any]] = {
        "lexbor": lambda text, url: LexborHTMLParser(text),
        "document": lambda text, url: parse(text, url),
        "auto": lambda text, url: readerproxy.extract(text, url=url, algorithm="auto"),
        "trafilatura": lambda text, url: trafilatura.extract(text, url=url),
    }
    for text, url in pages:
        best = dict.fromkeys(contenders, float("inf"))
        for _ in range(repeat):
            for name, run in contenders.items():
                best[name] = min(best[name], once(run, text, url))
        for name in contenders:
            times[name].append(best[name])
    return times


def ratio_line(label: str, mine: list[float], reference: list[float]) -> str:
    per_page = statistics.median(a / b for a, b in zip(mine, reference, strict=True))
    of_medians = statistics.median(mine) / statistics.median(reference)
    return (
        f"  {label:<34} median per-page ratio {per_page:6.2f}   ratio of medians {of_medians:6.2f}"
        f"   ({statistics.median(mine) * 1000:7.2f} ms / {statistics.median(reference) * 1000:7.2f} ms)"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--limit", type=int)
    parser.add_argument("--dataset", nargs="+", default=["scrapinghub", "readability"])
    args = parser.parse_args()
    for name in args.dataset:
        dataset = load_dataset(name, args.limit)
        pages = [(to_text(page.path.read_bytes()), page.url) for page in dataset.pages]
        for text, url in pages[:3]:  # warm up imports and caches
            readerproxy.extract(text, url=url)
            trafilatura.extract(text, url=url)
        gc.collect()
        times = measure(pages, args.repeat)
        print(f"{name}: {len(pages)} pages, fastest of {args.repeat} per page")
        print(ratio_line("Document build / Lexbor parse", times["document"], times["lexbor"]))
        print(ratio_line("extract(auto) / trafilatura.extract", times["auto"], times["trafilatura"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
