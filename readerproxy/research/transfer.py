"""Leave one set out: how `auto` scores on a set of pages unlike the ones its model learned from.

The three shared sets (ScrapingHub's news articles, Mozilla Readability's test pages, WCXB's
development set of seven page types) were collected in different ways from different webs. The
in-set out-of-fold score (`oof`, site-grouped folds) measures `auto` on unseen *sites* of the same
kind of pages; leave-one-set-out measures it on an unseen *kind* of pages: for each set, the block
model is trained on the other two and `auto` (its post-rules included) scores the held-out set
(leave-one-group-out cross-validation with the dataset as the group; Bevendorff et al.
2023 compare extractors across several datasets of different origin in the same spirit).

A held-out set is never in its model's training data, and neither is any site it shares with the
other sets (the site keys of `training.folds`: `nytimes` in ScrapingHub and Readability's
`nytimes-3` are one site), so a held-out page's site was never seen either.

`readerproxy train --leave-one-set-out` writes `without-<set>.npz` (with provenance: the training
sets and the held-out one) and `transfer.json` into `--transfer-dir`, scores each held-out set, and
prints the train-set × test-set table (`format_transfer_table`), the in-set out-of-fold row beside
it when `--site-folds DIR` names fold models; `readerproxy eval --loso DIR` scores one set with the
model that never saw it. On WCXB's set, `format_wcxb_types` prints WCXB's own metric (word-level
F1 per page, averaged: `evaluate.py` of the WCXB repository, our bag-of-words F1) per page type
beside rs-trafilatura's published figures (`RS_TRAFILATURA_WCXB_DEV`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from . import metrics
from .datasets import Dataset, Page, load_dataset
from .oof import OutOfFold
from .runner import AlgorithmSpec, Evaluation, PagePredictors, Predictor, evaluate, predictor

#: The manifest `readerproxy train --leave-one-set-out` writes beside the held-out models.
MANIFEST = "transfer.json"

#: rs-trafilatura's published WCXB metric on WCXB's development set: overall and per type.
RS_TRAFILATURA_WCXB_DEV: dict[str, float] = {
    "all": 0.859,
    "article": 0.932,
    "documentation": 0.932,
    "service": 0.844,
    "forum": 0.808,
    "collection": 0.716,
    "listing": 0.707,
    "product": 0.641,
}


def model_file(held_out: str) -> str:
    """The file name of the model trained without the set `held_out`."""
    return f"without-{held_out}.npz"


# --- Splits ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HeldOutSplit:
    """One set held out: the pages its model learns from, and the sites left out for being its."""

    held_out: str
    training_pages: np.ndarray  # int64 indices into `TrainingSet.pages`, none of the held-out set
    dropped_sites: tuple[str, ...]  # sites of the held-out set also in a training set, sorted
    dropped_pages: int  # training-set pages left out for being on one of those sites

    def training_sets(
        self, pages: Sequence[tuple[str, str, str]], labelled: np.ndarray | None = None
    ) -> dict[str, int]:
        """{set: pages learned from} of this split, in the order the sets appear; with `labelled`
        (page indices), only the pages among them (a page without a labelled block teaches nothing)."""
        chosen = self.training_pages if labelled is None else np.intersect1d(self.training_pages, labelled)
        counts: dict[str, int] = {}
        for index in chosen.tolist():
            counts[pages[index][0]] = counts.get(pages[index][0], 0) + 1
        return counts


def held_out_splits(pages: Sequence[tuple[str, str, str]]) -> list[HeldOutSplit]:
    """One split per set of `pages` ((set, page id, site) each, as `TrainingSet.pages`): the pages
    of the other sets whose site is not a site of the held-out set."""
    names = list(dict.fromkeys(name for name, _, _ in pages))
    splits: list[HeldOutSplit] = []
    for held_out in names:
        held_sites = {site for name, _, site in pages if name == held_out}
        others = [i for i, (name, _, _) in enumerate(pages) if name != held_out]
        kept = [i for i in others if pages[i][2] not in held_sites]
        dropped = sorted({pages[i][2] for i in others} & held_sites)
        splits.append(
            HeldOutSplit(held_out, np.array(kept, dtype=np.int64), tuple(dropped), len(others) - len(kept))
        )
    return splits


# --- Scoring a set with the model that never saw it -----------------------------------------------


@dataclass(slots=True)
class HeldOutSet:
    """The model of a `--leave-one-set-out` run that never saw `dataset`: every spec that takes a
    `model` parameter (auto, learned) runs with it on every page (`runner.PagePredictors`)."""

    directory: Path
    dataset: str
    model: Path
    learned_from: list[str] = field(default_factory=list)  # the sets the model learned from
    _made: dict[AlgorithmSpec, Predictor] = field(default_factory=dict)

    @classmethod
    def load(cls, directory: Path, dataset: str) -> HeldOutSet:
        """Read `transfer.json`; ValueError when it is missing or holds no model without `dataset`."""
        try:
            manifest = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
            entry = manifest["held_out"][dataset]
            model = directory / str(entry["model"])
            learned_from = [str(name) for name in entry.get("learned_from", {})]
        except (OSError, ValueError, TypeError) as exc:
            raise ValueError(
                f"--loso {directory}: no usable {MANIFEST} from `readerproxy train --leave-one-set-out` ({exc})"
            ) from None
        except KeyError:
            raise ValueError(f"--loso {directory}: no model trained without {dataset!r}") from None
        if not model.is_file():
            raise ValueError(
                f"--loso {directory}: {model.name} missing; rerun `readerproxy train --leave-one-set-out`"
            )
        return cls(directory, dataset, model, learned_from)

    def predictor(self, spec: AlgorithmSpec, page: Page, default: Predictor) -> Predictor:
        """The held-out model's predictor for `spec` where the spec takes a model and names none."""
        if not OutOfFold.takes_model(spec):
            return default
        if spec not in self._made:
            self._made[spec] = predictor(AlgorithmSpec(spec.name, (*spec.params, ("model", str(self.model)))))
        return self._made[spec]


# --- The table ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TransferCell:
    """One test set scored by one model: shingle F1 (ScrapingHub's metric) and WCXB's metric; on a
    set of the snippets layout (older-dev), which has no reference text, trafilatura's snippet
    metric instead (`snippets`: precision, recall and F1 over the whole set)."""

    shingle_f1: float
    bow_f1: float  # bag-of-words F1, mean per page (WCXB's evaluate.py)
    pages: int
    errors: int
    snippets: tuple[float, float, float] | None = None  # (P, R, F1), the snippets layout only

    @property
    def score(self) -> float:
        """The set's own metric, by which the worst held-out set is chosen: snippet F1 on a snippets
        set, shingle F1 on the others."""
        return self.shingle_f1 if self.snippets is None else self.snippets[2]

    @classmethod
    def of(
        cls, evaluation: Evaluation, dataset: Dataset | None = None, texts: dict[str, str] | None = None
    ) -> TransferCell:
        """The cell of `evaluation`'s first result; with a snippets `dataset`, its snippet metric on
        `texts` (page id -> extracted text)."""
        summary = evaluation.results[0].summary
        snippets = None
        if dataset is not None and not dataset.has_reference and texts is not None:
            from .cli import SnippetCounts, count_snippets  # cli imports this module

            counts = SnippetCounts()
            for page in dataset:
                count_snippets(page, texts.get(page.id, ""), counts)
            snippets = (counts.precision, counts.recall, counts.f1)
        return cls(summary.shingles.f1, summary.bag_of_words.f1, summary.pages, summary.errors, snippets)


#: What the table scores unless told otherwise: `auto` with its defaults.
AUTO = AlgorithmSpec("auto")

#: The row of the in-set out-of-fold scores (every set learned from, site-grouped folds).
SITE_FOLDS = "all sets, site folds"


def trained_on(held_out: str, sets: Sequence[str], learned: Sequence[str] | None = None) -> str:
    """The row label of the model trained without `held_out`: the sets it learned from (`learned`,
    from `transfer.json`), by default every other set."""
    return " + ".join(name for name in sets if name != held_out and (learned is None or name in learned))


@dataclass(slots=True)
class TransferTable:
    """Rows: what the model learned from; columns: the test sets; a cell is out of the model's
    training (held out, or out of fold for `SITE_FOLDS`). Held-out rows have one cell each."""

    sets: list[str]
    rows: dict[str, dict[str, TransferCell]] = field(default_factory=dict)
    evaluations: dict[tuple[str, str], Evaluation] = field(default_factory=dict)  # (row, set) -> run
    learned: dict[str, list[str]] = field(default_factory=dict)  # held-out set -> what its model saw

    def row_of(self, held_out: str) -> str:
        """The row of the model trained without `held_out`."""
        return trained_on(held_out, self.sets, self.learned.get(held_out))

    def held_out(self) -> dict[str, TransferCell]:
        """{set: its score by the model trained without it}."""
        return {
            name: self.rows[label][name]
            for name in self.sets
            if (label := self.row_of(name)) in self.rows and name in self.rows[label]
        }

    def worst_held_out(self, metric: str = "score") -> tuple[str, float]:
        """The held-out set with the lowest score in `metric` (a `TransferCell` field; by default each
        set's own metric, `TransferCell.score`), and that score."""
        cells = self.held_out()
        name = min(cells, key=lambda n: getattr(cells[n], metric))
        return name, float(getattr(cells[name], metric))

    def to_json(self) -> dict[str, Any]:
        return {
            "sets": self.sets,
            "rows": {
                row: {
                    name: {
                        "shingle_f1": c.shingle_f1,
                        "bow_f1": c.bow_f1,
                        "pages": c.pages,
                        "errors": c.errors,
                        **(
                            {}
                            if c.snippets is None
                            else dict(zip(("snippet_p", "snippet_r", "snippet_f1"), c.snippets, strict=True))
                        ),
                    }
                    for name, c in cells.items()
                }
                for row, cells in self.rows.items()
            },
        }


def score_transfer(
    directory: Path,
    sets: Sequence[str],
    spec: AlgorithmSpec = AUTO,
    limit: int | None = None,
    site_folds: Path | None = None,
) -> TransferTable:
    """Each set scored by `spec` with the model of `directory` that never saw it, and, with
    `site_folds` (a `readerproxy train --oof-dir`), every set out of fold by its site's fold model."""
    table = TransferTable(list(sets))
    for name in sets:
        dataset = load_dataset(name, limit)
        held = HeldOutSet.load(directory, name)
        table.learned[name] = held.learned_from
        runs: list[tuple[str, PagePredictors]] = [(table.row_of(name), held)]
        if site_folds is not None:
            runs.insert(0, (SITE_FOLDS, OutOfFold.load(site_folds, dataset.layout)))
        for row, per_page in runs:
            texts: dict[str, dict[str, str]] = {}
            evaluation = evaluate(dataset, [spec], per_page=per_page, texts=texts)
            cell = TransferCell.of(evaluation, dataset, texts[spec.label])
            table.rows.setdefault(row, {})[name] = cell
            table.evaluations[(row, name)] = evaluation
    ordered = [SITE_FOLDS] if SITE_FOLDS in table.rows else []
    ordered += [table.row_of(name) for name in sets]
    table.rows = {row: table.rows[row] for row in ordered if row in table.rows}
    return table


def _cell(cell: TransferCell) -> str:
    """shingle F1/BoW F1, or P/R/F1 of the snippet metric on a snippets set."""
    if cell.snippets is not None:
        return "{:.3f}/{:.3f}/{:.3f}".format(*cell.snippets)
    return f"{cell.shingle_f1:.4f}/{cell.bow_f1:.3f}"


def format_transfer_table(table: TransferTable) -> str:
    """Train-set × test-set: shingle F1 / WCXB's metric per cell (snippet P/R/F1 on a snippets set),
    the worst held-out set below."""
    width = max([24, *(len(row) for row in table.rows)])
    head = "learned from \\ scored on".ljust(width) + " |" + "".join(f"{name:>19}" for name in table.sets)
    lines = [head, "-" * len(head)]
    for row, cells in table.rows.items():
        lines.append(
            row.ljust(width)
            + " |"
            + "".join(f"{_cell(cells[n]):>19}" if n in cells else f"{'·':>19}" for n in table.sets)
        )
    if table.held_out():
        name, score = table.worst_held_out()
        metric = "snippet F1" if table.held_out()[name].snippets is not None else "shingle F1"
        lines.append(f"worst held-out set: {name}, {metric} {score:.4f}")
    lines.append(
        "cells: shingle F1 (ScrapingHub's metric) / bag-of-words F1 (WCXB's metric, mean per page), on a "
        "set without reference text (older-dev) the snippet metric's P/R/F1, of the set scored by a "
        "model that never saw it (held out; · = in the training) or its sites (site folds)."
    )
    return "\n".join(lines)


# --- WCXB's metric per page type -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TypeScore:
    """WCXB's metric on the pages of one type, beside rs-trafilatura's published figure."""

    page_type: str
    pages: int
    bow_f1: float
    precision: float
    recall: float
    published: float | None  # rs-trafilatura's, None for a type it does not report

    @property
    def margin(self) -> float | None:
        return None if self.published is None else self.bow_f1 - self.published


def wcxb_type_scores(evaluation: Evaluation, dataset: Dataset, label: str | None = None) -> list[TypeScore]:
    """WCXB's metric (bag-of-words F1, mean per page) per page type of one result of `evaluation`
    (the first, or the one labelled `label`), the types by falling page count, then 'all'."""
    result = next(r for r in evaluation.results if label is None or r.label == label)
    kinds = {page.id: page.page_type or "?" for page in dataset}
    groups: dict[str, list[metrics.Score]] = {}
    for page in result.pages:
        groups.setdefault(kinds.get(page.page, "?"), []).append(page.bag_of_words)
    ordered = sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))
    ordered.append(("all", [score for _, scores in ordered for score in scores]))
    scores: list[TypeScore] = []
    for kind, group in ordered:
        mean = metrics.mean_score(group)
        scores.append(
            TypeScore(
                kind, len(group), mean.f1, mean.precision, mean.recall, RS_TRAFILATURA_WCXB_DEV.get(kind)
            )
        )
    return scores


def format_wcxb_types(scores: Sequence[TypeScore], label: str = "auto") -> str:
    """One row per page type: pages, P, R, WCXB's F1, rs-trafilatura's published F1 and the margin."""
    head = f"{'WCXB metric by type':<20} | {'pages':>6} | {'P':>6} {'R':>6} {label[:10]:>10} | {'rs-trafil.':>10} {'margin':>7}"
    lines = [head, "-" * len(head)]
    for s in scores:
        published = "-" if s.published is None else f"{s.published:.3f}"
        margin = "-" if s.margin is None else f"{s.margin:+.3f}"
        lines.append(
            f"{s.page_type:<20} | {s.pages:>6} | {s.precision:>6.3f} {s.recall:>6.3f} {s.bow_f1:>10.3f} | "
            f"{published:>10} {margin:>7}"
        )
    behind = [s.page_type for s in scores if s.margin is not None and s.margin <= 0]
    lines.append(f"behind or level with rs-trafilatura: {', '.join(behind) if behind else 'none'}")
    lines.append(
        "WCXB's metric: word-level (bag-of-words) F1 per page, averaged; rs-trafilatura: its published "
        "figures on WCXB's development set."
    )
    return "\n".join(lines)
