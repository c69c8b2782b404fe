"""`readerproxy eval` and `readerproxy bench`: arguments, the printed tables, the JSON files."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

from ..engine.parse.text import SPACE, squash
from . import metrics
from .datasets import Dataset, Page, load_dataset
from .oof import OutOfFold
from .runner import (
    Ablation,
    AlgorithmSpec,
    Evaluation,
    Progress,
    Summary,
    ablation_rules,
    ablation_specs,
    evaluate,
    parse_specs,
)
from .transfer import HeldOutSet, format_wcxb_types, wcxb_type_scores

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
    try:
        ablations = ablation_specs(specs, ablation_rules(getattr(args, "ablate", None) or []))
    except ValueError as exc:
        print(f"readerproxy: {exc}", file=sys.stderr)
        return 2
    specs = list(dict.fromkeys([*specs, *(ablation.ablated for ablation in ablations)]))
    per_page: OutOfFold | HeldOutSet | None = None
    if getattr(args, "oof", None) and getattr(args, "loso", None):
        print("readerproxy: --oof and --loso are two protocols; give one", file=sys.stderr)
        return 2
    try:
        if getattr(args, "oof", None):
            per_page = OutOfFold.load(Path(args.oof), dataset.layout)
        elif getattr(args, "loso", None):
            per_page = HeldOutSet.load(Path(args.loso), dataset.name)
    except ValueError as exc:
        print(f"readerproxy: {exc}", file=sys.stderr)
        return 2
    progress = Progress(len(dataset) * len(specs), _show_progress(args))
    typed = any(page.page_type for page in dataset)
    snippets = any(page.with_snippets or page.without_snippets for page in dataset)
    texts: dict[str, dict[str, str]] = {}  # the predicted texts, for the snippets and the ablations
    evaluation = evaluate(dataset, specs, progress, per_page, texts if snippets or ablations else None)
    print(format_eval_table(evaluation))
    if ablations:
        print()
        print(format_ablation_table(evaluation, ablations, texts))
    if typed:
        print()
        print(format_type_table(evaluation, dataset))
        if dataset.layout == "wcxb":
            ours = next((spec.label for spec in specs if not spec.external), specs[0].label)
            print()
            print(format_wcxb_types(wcxb_type_scores(evaluation, dataset, ours), ours))
    scores = snippet_scores(dataset, texts) if snippets else None
    if scores is not None:
        print()
        print(format_snippet_table(scores))
    if getattr(args, "metadata", False):
        if dataset.layout != "readability":
            print(
                "readerproxy: --metadata needs the readability dataset (expected-metadata.json)",
                file=sys.stderr,
            )
            return 2
        from .metadata_eval import evaluate_metadata, format_metadata_table

        algorithm = next((spec.name for spec in specs if not spec.external), "auto")
        print()
        print(format_metadata_table(evaluate_metadata(dataset, algorithm), dataset.name, algorithm))
    if args.json:
        data = evaluation_to_json(evaluation, scores)
        Path(args.json).write_text(json.dumps(data, indent=1), encoding="utf-8")
    if args.report:
        from .report import render_report

        Path(args.report).write_text(render_report(evaluation, scores), encoding="utf-8")
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
    result = benchmark(
        dataset, specs, repeat=args.repeat, memory=not args.no_memory, progress_enabled=_show_progress(args)
    )
    print(format_bench(result))
    if args.json:
        Path(args.json).write_text(json.dumps(dataclasses.asdict(result), indent=1), encoding="utf-8")
    return 0


# --- Ablations (--ablate) ------------------------------------------------------------------------


def format_ablation_table(
    evaluation: Evaluation, ablations: list[Ablation], texts: dict[str, dict[str, str]]
) -> str:
    """One row per (spec, rule): the pages whose text the rule changes, and the spec's shingle F1
    and BoW F1 (mean per page, WCXB's metric) with every rule on, with the rule off, and the rule's
    effect (on minus off: positive when the rule helps)."""
    summaries = {result.label: result.summary for result in evaluation.results}
    width = max([15, *(len(a.base.label) + len(a.rule) + 3 for a in ablations)])
    head = (
        f"{'rule off'.ljust(width)} | {'pages':>6} {'changed':>7} | {'shingle F1':>10} {'off':>6} {'effect':>7}"
        f" | {'BoW F1':>6} {'off':>6} {'effect':>7}"
    )
    lines = [head, "-" * len(head)]
    for ablation in ablations:
        on, off = summaries[ablation.base.label], summaries[ablation.ablated.label]
        base_texts, ablated_texts = texts[ablation.base.label], texts[ablation.ablated.label]
        changed = sum(base_texts.get(page) != text for page, text in ablated_texts.items())
        shingles, bow = on.shingles.f1, on.bag_of_words.f1
        lines.append(
            f"{f'{ablation.base.label} - {ablation.rule}'.ljust(width)} | {on.pages:>6} {changed:>7} | "
            f"{shingles:>10.4f} {off.shingles.f1:>6.4f} {shingles - off.shingles.f1:>+7.4f} | "
            f"{bow:>6.4f} {off.bag_of_words.f1:>6.4f} {bow - off.bag_of_words.f1:>+7.4f}"
        )
    lines.append(
        "rule off: the spec with that post-rule's parameter at its off value (extractors/learned/ "
        "POST_RULES); changed: pages whose extracted text differs; effect: with the rule minus without."
    )
    return "\n".join(lines)


# --- Page types and snippets (WCXB) --------------------------------------------------------------


@dataclasses.dataclass(slots=True)
class SnippetCounts:
    """WCXB's snippet metric summed over pages: `with` found = TP, missing = FN; `without` found =
    FP, absent = TN (whitespace-normalised substring match)."""

    tp: int = 0
    fn: int = 0
    fp: int = 0
    tn: int = 0

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def f1(self) -> float:
        return metrics.f1_of(self.precision, self.recall)


def count_snippets(page: Page, text: str, counts: SnippetCounts) -> None:
    """Add one page's snippet outcomes to `counts`."""
    haystack = SPACE.sub(" ", text)
    for snippet in page.with_snippets:
        if squash(snippet) in haystack:
            counts.tp += 1
        else:
            counts.fn += 1
    for snippet in page.without_snippets:
        if squash(snippet) in haystack:
            counts.fp += 1
        else:
            counts.tn += 1


def snippet_scores(dataset: Dataset, texts: dict[str, dict[str, str]]) -> dict[str, SnippetCounts]:
    """Snippet counts per algorithm label."""
    scores: dict[str, SnippetCounts] = {}
    for label, by_page in texts.items():
        counts = scores.setdefault(label, SnippetCounts())
        for page in dataset:
            count_snippets(page, by_page.get(page.id, ""), counts)
    return scores


def format_snippet_table(scores: dict[str, SnippetCounts]) -> str:
    """One row per algorithm: snippet TP/FN/FP/TN, precision, recall, F1."""
    width = max([9, *(len(label) for label in scores)])
    head = (
        f"{'snippets'.ljust(width)} | {'TP':>6} {'FN':>6} {'FP':>6} {'TN':>6} | {'P':>6} {'R':>6} {'F1':>6}"
    )
    lines = [head, "-" * len(head)]
    for label, c in scores.items():
        lines.append(
            f"{label.ljust(width)} | {c.tp:>6} {c.fn:>6} {c.fp:>6} {c.tn:>6} | "
            f"{c.precision:>6.3f} {c.recall:>6.3f} {c.f1:>6.3f}"
        )
    lines.append(
        "snippets: `with` found = TP, missing = FN; `without` found = FP, absent = TN; "
        "whitespace-normalised substring match, summed over pages."
    )
    return "\n".join(lines)


def type_scores(evaluation: Evaluation, dataset: Dataset) -> dict[str, dict[str, tuple[float, float, int]]]:
    """label -> page type ('all' too) -> (shingle F1, BoW F1, pages)."""
    kinds = {page.id: page.page_type or "?" for page in dataset}
    table: dict[str, dict[str, tuple[float, float, int]]] = {}
    for result in evaluation.results:
        groups: dict[str, list[Any]] = {}
        for page_result in result.pages:
            groups.setdefault(kinds.get(page_result.page, "?"), []).append(page_result)
        groups = dict(sorted(groups.items(), key=lambda item: -len(item[1])))
        groups["all"] = list(result.pages)
        table[result.label] = {
            kind: (
                metrics.shingle_summary(p.shingles for p in pages).f1,
                metrics.mean_score(p.bag_of_words for p in pages).f1,
                len(pages),
            )
            for kind, pages in groups.items()
        }
    return table


def format_type_table(evaluation: Evaluation, dataset: Dataset) -> str:
    """Shingle F1 (and BoW F1) per page type, one row per algorithm."""
    table = type_scores(evaluation, dataset)
    if not table:
        return ""
    kinds = list(next(iter(table.values())))
    width = max([15, *(len(label) for label in table)])
    counts = next(iter(table.values()))
    head = "F1 by page type".ljust(width) + " |" + " ".join(f"{k[:11]:>11}" for k in kinds)
    pages = "pages".ljust(width) + " |" + " ".join(f"{counts[k][2]:>11}" for k in kinds)
    lines = [head, pages, "-" * len(head)]
    for label, by_kind in table.items():
        lines.append(
            label.ljust(width)
            + " |"
            + " ".join(
                f"{by_kind[k][0]:>5.3f}/{by_kind[k][1]:.3f}" if k in by_kind else f"{'-':>11}" for k in kinds
            )
        )
    lines.append("cells: shingle F1 (ScrapingHub metric within the type) / bag-of-words F1 (mean per page).")
    return "\n".join(lines)


# --- The eval table -------------------------------------------------------------------------------


def _precision_recall_f1(score: _Getter) -> list[tuple[str, _Getter]]:
    """P, R and F1 columns of the `metrics.Score` that `score` picks from a Summary."""
    return [
        ("P", lambda s: score(s).precision),
        ("R", lambda s: score(s).recall),
        ("F1", lambda s: score(s).f1),
    ]


def _columns(has_titles: bool, has_reference: bool = True) -> list[tuple[str, list[tuple[str, _Getter]]]]:
    """Column groups of the eval table: (group title, [(column title, value of a Summary)]); without a
    reference text (the snippets layout: its scores are in the snippet table) only speed and errors."""
    groups: list[tuple[str, list[tuple[str, _Getter]]]] = []
    if has_reference:
        groups += [
            (
                "shingles",
                [
                    ("P", lambda s: s.shingles.precision),
                    ("R", lambda s: s.shingles.recall),
                    ("F1", lambda s: s.shingles.f1),
                    ("acc", lambda s: s.shingles.accuracy),
                ],
            ),
            ("LCSeq", _precision_recall_f1(lambda s: s.lcs_sequence)),
            ("LCStr", _precision_recall_f1(lambda s: s.lcs_string)),
            ("BoW", _precision_recall_f1(lambda s: s.bag_of_words)),
        ]
    if has_titles:
        groups.append(("title", [("match", lambda s: s.title_accuracy)]))
    groups.append(
        (
            "speed",
            [
                ("ms p50", lambda s: s.median_ms),
                ("ms p95", lambda s: s.p95_ms),
                ("MB/s", lambda s: s.mb_per_s),
            ],
        )
    )
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
    groups = _columns(evaluation.has_titles, evaluation.has_reference)
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
    if evaluation.has_reference:
        lines.append(
            "shingles: ScrapingHub metric (F1 of mean P and R); LCSeq/LCStr: character LCS F1 without "
            "whitespace (Moreno et al. 2009, §5); BoW: word multiset; LCSeq/LCStr/BoW F1 = mean per page."
        )
    else:
        lines.append("no reference text in this dataset: its scores are the snippet table's.")
    return "\n".join(lines)


def evaluation_to_json(
    evaluation: Evaluation, snippets: dict[str, SnippetCounts] | None = None
) -> dict[str, Any]:
    """Every aggregate and per-page number, JSON-ready; with `snippets`, their counts and P/R/F1."""
    data: dict[str, Any] = {
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
    if snippets is not None:
        data["snippets"] = {
            label: {**dataclasses.asdict(c), "precision": c.precision, "recall": c.recall, "f1": c.f1}
            for label, c in snippets.items()
        }
    return data


def _page_json(page: Any) -> dict[str, Any]:
    data = dataclasses.asdict(page)
    data["shingles"]["precision"] = page.shingles.precision
    data["shingles"]["recall"] = page.shingles.recall
    data["shingles"]["f1"] = page.shingles.f1
    return data
