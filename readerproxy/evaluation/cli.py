"""`readerproxy eval` and `readerproxy bench`: arguments, the printed tables, the JSON files."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

from .datasets import Dataset, load_dataset
from .runner import AlgorithmSpec, Evaluation, Progress, Summary, evaluate, parse_specs

_Getter = Any  # Callable[[Summary], float | int | None]: one cell of a row


def _load(args: argparse.Namespace) -> Dataset | None:
    if args.limit is not None and args.limit < 1:
        print("readerproxy: --limit must be at least 1", file=sys.stderr)
        return None
    try:
        return load_dataset(args.dataset, args.limit)
    except (FileNotFoundError, ValueError) as exc:
        print(f"readerproxy: {exc}", file=sys.stderr)
        return None


def _show_progress(args: argparse.Namespace) -> bool:
    return not args.no_progress and sys.stderr.isatty()


def _specs_and_dataset(args: argparse.Namespace) -> tuple[list[AlgorithmSpec], Dataset] | None:
    """The parsed --algo specs and the loaded dataset, or None after printing why not."""
    try:
        specs = parse_specs(args.algo)
    except ValueError as exc:
        print(f"readerproxy: {exc}", file=sys.stderr)
        return None
    dataset = _load(args)
    return None if dataset is None else (specs, dataset)


def run_eval(args: argparse.Namespace) -> int:
    """Evaluate the specs on the dataset, print one table, write the JSON and the report if asked."""
    loaded = _specs_and_dataset(args)
    if loaded is None:
        return 2
    specs, dataset = loaded
    progress = Progress(len(dataset) * len(specs), _show_progress(args))
    evaluation = evaluate(dataset, specs, progress)
    print(format_eval_table(evaluation))
    if args.json:
        Path(args.json).write_text(json.dumps(evaluation_to_json(evaluation), indent=1), encoding="utf-8")
    if args.report:
        from .report import render_report

        Path(args.report).write_text(render_report(evaluation), encoding="utf-8")
    return 0


def run_bench(args: argparse.Namespace) -> int:
    """Time parsing, every algorithm and the peers on the same pages; print the speed table."""
    from .bench import benchmark, format_bench

    if args.repeat < 1:
        print("readerproxy: --repeat must be at least 1", file=sys.stderr)
        return 2
    loaded = _specs_and_dataset(args)
    if loaded is None:
        return 2
    specs, dataset = loaded
    specs = [spec for spec in specs if not spec.external]
    result = benchmark(dataset, specs, repeat=args.repeat, memory=not args.no_memory,
                       progress_enabled=_show_progress(args))
    print(format_bench(result))
    if args.json:
        Path(args.json).write_text(json.dumps(dataclasses.asdict(result), indent=1), encoding="utf-8")
    return 0


# --- The eval table -------------------------------------------------------------------------------


def _columns(has_titles: bool) -> list[tuple[str, list[tuple[str, _Getter]]]]:
    """Column groups of the eval table: (group title, [(column title, value of a Summary)])."""
    groups: list[tuple[str, list[tuple[str, _Getter]]]] = [
        ("shingles", [("P", lambda s: s.shingles.precision), ("R", lambda s: s.shingles.recall),
                      ("F1", lambda s: s.shingles.f1), ("acc", lambda s: s.shingles.accuracy)]),
        ("LCSeq", [("P", lambda s: s.lcs_sequence.precision), ("R", lambda s: s.lcs_sequence.recall),
                   ("F1", lambda s: s.lcs_sequence.f1)]),
        ("LCStr", [("P", lambda s: s.lcs_string.precision), ("R", lambda s: s.lcs_string.recall),
                   ("F1", lambda s: s.lcs_string.f1)]),
        ("BoW", [("P", lambda s: s.bag_of_words.precision), ("R", lambda s: s.bag_of_words.recall),
                 ("F1", lambda s: s.bag_of_words.f1)]),
    ]
    if has_titles:
        groups.append(("title", [("match", lambda s: s.title_accuracy)]))
    groups.append(("speed", [("ms p50", lambda s: s.median_ms), ("ms p95", lambda s: s.p95_ms),
                             ("MB/s", lambda s: s.mb_per_s)]))
    groups.append(("", [("err", lambda s: s.errors)]))
    return groups


def _cell(value: Any, width: int, group: str) -> str:
    if value is None:
        return "-".rjust(width)
    if isinstance(value, int):
        return str(value).rjust(width)
    return (f"{value:.1f}" if group == "speed" else f"{value:.3f}").rjust(width)


def format_eval_table(evaluation: Evaluation) -> str:
    """One table: per algorithm P/R/F1 of every metric, title match, ms per page and MB/s."""
    groups = _columns(evaluation.has_titles)
    width = 6
    name_width = max([9, *(len(r.label) for r in evaluation.results)])
    summaries: list[tuple[str, Summary]] = [(r.label, r.summary) for r in evaluation.results]
    pages = summaries[0][1].pages if summaries else 0
    top = " " * name_width
    sub = "algorithm".ljust(name_width)
    for title, columns in groups:
        span = len(columns) * (width + 1)
        top += " |" + title.center(span - 1)
        sub += " |" + " ".join(name.rjust(width) for name, _ in columns)
    lines = [f"dataset {evaluation.dataset}: {pages} pages", top, sub, "-" * len(sub)]
    for label, summary in summaries:
        row = label.ljust(name_width)
        for group, columns in groups:
            row += " |" + " ".join(_cell(get(summary), width, group) for _, get in columns)
        lines.append(row)
    lines.append("shingles: ScrapingHub metric (F1 of mean P and R); LCSeq/LCStr: character LCS F1 "
                 "without whitespace (seed 000); BoW: word multiset; LCSeq/LCStr/BoW F1 = mean per page.")
    return "\n".join(lines)


def evaluation_to_json(evaluation: Evaluation) -> dict[str, Any]:
    """Every aggregate and per-page number, JSON-ready."""
    return {
        "dataset": evaluation.dataset,
        "layout": evaluation.layout,
        "algorithms": [
            {
                "label": result.label,
                "name": result.spec.name,
                "params": dict(result.spec.params),
                "summary": dataclasses.asdict(result.summary),
                "pages": [_page_json(page) for page in result.pages],
            }
            for result in evaluation.results
        ],
    }


def _page_json(page: Any) -> dict[str, Any]:
    data = dataclasses.asdict(page)
    data["shingles"]["precision"] = page.shingles.precision
    data["shingles"]["recall"] = page.shingles.recall
    data["shingles"]["f1"] = page.shingles.f1
    return data

