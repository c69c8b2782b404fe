"""`readerproxy bench`: parse and extraction speed per algorithm beside trafilatura, same pages, same run.

Per page (HTML decoded once, calls interleaved so that machine noise hits everyone alike), each call
is timed `repeat` times and the fastest kept:
- `parse`: `readerproxy.parse(html)` alone;
- per algorithm: parse + extract + plain text (`render_text`), and extract-only on a parsed page;
- `ext:trafilatura`: `trafilatura.extract(html)` (its defaults: plain text out, like ours);
- `ext:readability-lxml`: `Document(html).summary()`.
A second, untimed pass measures the peak of Python allocations per page with tracemalloc. It does not
see memory that C libraries allocate themselves (Lexbor for us, libxml2 for lxml), so it compares the
Python-side footprint only.
"""

from __future__ import annotations

import statistics
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np

from ..engine.extraction import get_extractor
from ..engine.output import render_text
from ..engine.pipeline import parse
from .datasets import Dataset
from .runner import AlgorithmSpec, Progress, installed_peers

TRAFILATURA = "ext:trafilatura"


@dataclass(slots=True)
class BenchRow:
    """One timed thing over all pages: per-page fastest times and what follows from them."""

    name: str
    kind: str  # "parse", "ours" or "peer"
    page_ms: list[float] = field(default_factory=list)
    extract_ms: list[float] = field(default_factory=list)  # ours: extract-only
    parse_ms: list[float] = field(default_factory=list)  # ours: the parse part of page_ms
    peak_kib: list[float] = field(default_factory=list)  # tracemalloc peak per page
    errors: int = 0


@dataclass(slots=True)
class BenchResult:
    """Everything `readerproxy bench` measured."""

    dataset: str
    pages: int
    html_bytes: int
    repeat: int
    rows: list[BenchRow]


@dataclass(frozen=True, slots=True)
class BenchLine:
    """The printed numbers of one row."""

    name: str
    mb_per_s: float
    median_ms: float
    p95_ms: float
    vs_trafilatura: float | None  # our speed / trafilatura's speed (> 1: faster)
    extract_median_ms: float | None
    parse_share: float | None
    peak_kib_median: float | None
    errors: int


def _fastest(call: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """Best of `repeat` wall-clock times (ms) and the last result."""
    best = float("inf")
    result: Any = None
    for _ in range(repeat):
        began = time.perf_counter()
        result = call()
        best = min(best, (time.perf_counter() - began) * 1000)
    return best, result


def _peer_calls() -> dict[str, Callable[[str, str | None], Any]]:
    calls: dict[str, Callable[[str, str | None], Any]] = {}
    peers = installed_peers()
    if TRAFILATURA in peers:
        import trafilatura

        calls[TRAFILATURA] = lambda html, url: trafilatura.extract(html, url=url)
    if "ext:readability-lxml" in peers:
        from readability import Document as ReadabilityDocument

        calls["ext:readability-lxml"] = lambda html, url: ReadabilityDocument(html, url=url).summary()
    return calls


def benchmark(
    dataset: Dataset,
    specs: Sequence[AlgorithmSpec],
    repeat: int = 3,
    memory: bool = True,
    progress_enabled: bool = False,
) -> BenchResult:
    """Time parsing, every spec and the installed peers on every page of the dataset."""
    extractors = [(spec, get_extractor(spec.name)) for spec in specs]
    params = [extractor.make_params(dict(spec.params)) for spec, extractor in extractors]
    peers = _peer_calls()
    parse_row = BenchRow("parse", "parse")
    our_rows = [BenchRow(spec.label, "ours") for spec, _ in extractors]
    peer_rows = [BenchRow(name, "peer") for name in peers]
    _warm_up(dataset, extractors, params, peers)
    progress = Progress(len(dataset), progress_enabled)
    html_bytes = pages = 0
    for page in dataset:
        try:
            html = page.read_html()
        except (OSError, ValueError):
            progress.advance(page.id)
            continue
        pages += 1
        html_bytes += len(html.encode("utf-8", "surrogatepass"))
        url = page.url
        parse_row.page_ms.append(_fastest(partial(parse, html, url), repeat)[0])
        for (_, extractor), settings, row in zip(extractors, params, our_rows, strict=True):
            try:
                _time_ours(row, extractor, settings, html, url, repeat)
            except Exception:  # counted, never fatal
                row.errors += 1
        for call, row in zip(peers.values(), peer_rows, strict=True):
            try:
                row.page_ms.append(_fastest(partial(call, html, url), repeat)[0])
            except Exception:
                row.errors += 1
        if memory:
            _measure_memory(html, url, extractors, params, our_rows, peers, peer_rows)
        progress.advance(page.id)
    progress.close()
    return BenchResult(dataset.name, pages, html_bytes, repeat, [parse_row, *our_rows, *peer_rows])


def _warm_up(
    dataset: Dataset,
    extractors: list[tuple[AlgorithmSpec, Any]],
    params: list[Any],
    peers: dict[str, Callable[[str, str | None], Any]],
) -> None:
    """One untimed call of everything on the first page: lazy imports and caches are not the page's cost."""
    if not dataset.pages:
        return
    page = dataset.pages[0]
    try:
        html = page.read_html()
    except (OSError, ValueError):
        return
    calls: list[Callable[[], Any]] = [partial(call, html, page.url) for call in peers.values()]
    for (_, extractor), settings in zip(extractors, params, strict=True):
        calls.append(partial(lambda e, s: e.run(parse(html, page.url), s), extractor, settings))
    for call in calls:
        try:
            call()
        except Exception:
            continue


def _time_ours(row: BenchRow, extractor: Any, settings: Any, html: str, url: str | None, repeat: int) -> None:
    """Fastest parse + extract + text of one page, and separately the fastest extract-only."""
    best_total = best_parse = best_extract = float("inf")
    for _ in range(repeat):
        began = time.perf_counter()
        doc = parse(html, url)
        parsed = time.perf_counter()
        extraction = extractor.run(doc, settings)
        extracted = time.perf_counter()
        render_text(doc, extraction.selection)
        done = time.perf_counter()
        if done - began < best_total:
            best_total, best_parse = done - began, parsed - began
        best_extract = min(best_extract, extracted - parsed)
    row.page_ms.append(best_total * 1000)
    row.parse_ms.append(best_parse * 1000)
    row.extract_ms.append(best_extract * 1000)


def _peak_kib(call: Callable[[], Any]) -> float:
    """Peak traced Python allocation of one call, KiB above what was allocated before it."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        call()
        return (tracemalloc.get_traced_memory()[1] - before) / 1024
    finally:
        tracemalloc.stop()


def _measure_memory(
    html: str,
    url: str | None,
    extractors: list[tuple[AlgorithmSpec, Any]],
    params: list[Any],
    our_rows: list[BenchRow],
    peers: dict[str, Callable[[str, str | None], Any]],
    peer_rows: list[BenchRow],
) -> None:
    for (_, extractor), settings, row in zip(extractors, params, our_rows, strict=True):

        def ours(extractor: Any = extractor, settings: Any = settings) -> None:
            doc = parse(html, url)
            render_text(doc, extractor.run(doc, settings).selection)

        try:
            row.peak_kib.append(_peak_kib(ours))
        except Exception:
            continue
    for call, row in zip(peers.values(), peer_rows, strict=True):
        try:
            row.peak_kib.append(_peak_kib(partial(call, html, url)))
        except Exception:
            continue


def summarize_rows(result: BenchResult) -> list[BenchLine]:
    """MB/s, median and p95 ms per page, ratio vs trafilatura, parse share, median peak memory."""
    speeds: dict[str, float] = {}
    lines: list[BenchLine] = []
    for row in result.rows:
        times = np.array(row.page_ms) if row.page_ms else np.zeros(1)
        total_s = float(times.sum()) / 1000
        speeds[row.name] = result.html_bytes / 1e6 / total_s if total_s > 0 and row.page_ms else 0.0
    reference = speeds.get(TRAFILATURA)
    for row in result.rows:
        times = np.array(row.page_ms) if row.page_ms else np.zeros(1)
        lines.append(
            BenchLine(
                name=row.name,
                mb_per_s=speeds[row.name],
                median_ms=float(np.median(times)),
                p95_ms=float(np.percentile(times, 95)),
                vs_trafilatura=speeds[row.name] / reference if reference else None,
                extract_median_ms=statistics.median(row.extract_ms) if row.extract_ms else None,
                parse_share=sum(row.parse_ms) / sum(row.page_ms)
                if row.parse_ms and sum(row.page_ms)
                else None,
                peak_kib_median=statistics.median(row.peak_kib) if row.peak_kib else None,
                errors=row.errors,
            )
        )
    return lines


def format_bench(result: BenchResult) -> str:
    """The printed bench table."""
    header = (
        f"bench {result.dataset}: {result.pages} pages, {result.html_bytes / 1e6:.1f} MB of HTML, "
        f"fastest of {result.repeat} per page"
    )
    lines = summarize_rows(result)
    width = max([20, *(len(line.name) for line in lines)])
    columns = ("MB/s", "ms p50", "ms p95", "x trafil.", "extract p50", "parse share", "peak KiB p50", "err")
    out = [header, "name".ljust(width) + "".join(c.rjust(13) for c in columns)]
    out.append("-" * len(out[1]))

    def cell(value: float | None, fmt: str) -> str:
        return ("-" if value is None else format(value, fmt)).rjust(13)

    for line in lines:
        out.append(
            line.name.ljust(width)
            + cell(line.mb_per_s, ".1f")
            + cell(line.median_ms, ".2f")
            + cell(line.p95_ms, ".2f")
            + cell(line.vs_trafilatura, ".2f")
            + cell(line.extract_median_ms, ".2f")
            + ("-".rjust(13) if line.parse_share is None else f"{line.parse_share:.0%}".rjust(13))
            + cell(line.peak_kib_median, ".0f")
            + str(line.errors).rjust(13)
        )
    out.append(
        "ours = parse + extract + plain text; x trafil. = speed / trafilatura.extract speed (>1 faster); "
        "peak KiB = tracemalloc (Python allocations only, not Lexbor's or libxml2's)."
    )
    return "\n".join(out)
