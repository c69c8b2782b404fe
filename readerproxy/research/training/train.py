"""`readerproxy train`: label the blocks of the shared datasets, fit the trees, write the weights.

Reproducible: pages are read in sorted order, folds come from the site keys (`folds`), and LightGBM
runs deterministic, single-threaded, with a fixed seed. Writes

- the shipped weights (`--out`, default `readerproxy/engine/models/blocks.npz`), fitted on every page;
- out-of-fold models `fold-K.npz` and `manifest.json` under `--oof-dir` (default
  `artifacts/learn`): model K never saw a page of the sites in fold K, and `readerproxy eval --oof
  DIR` scores each page with the model of its site's fold, so the scores of pages the model learned
  from are out-of-fold.

With `--leave-one-set-out` it writes neither: for each dataset, a model fitted on the other datasets
(without the held-out set's sites) goes to `--transfer-dir` (`without-<set>.npz`, `transfer.json`;
`train_held_out`), `auto` scores each held-out set with the model that never saw it, and the
train-set × test-set table is printed (`research.transfer`).

Features and labels are cached in `--oof-dir/blocks-cache.npz` (keyed by the feature names and the
datasets) so a second run fits only. The training library (lightgbm) is the `train` extra; the
shipped model is evaluated in numpy (`model.TreeModel`).

Every model file written records its `model.Provenance` (`learn.provenance`): the commit, the
lightgbm and numpy versions, the datasets' hashes, the feature-list hash and `training_parameters`.
`--stamp` adds that record to an existing model file (`--out`) without training, as was done for
the shipped model, trained before provenance was recorded: its commit is then the last change to the
file, its library versions and dataset hashes those of when it was stamped.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ...engine.extractors.auto import first_extractor
from ...engine.learn.blocks import CONTEXT_FEATURES, FEATURES, context_features, page_blocks
from ...engine.learn.model import BlockScorer, TreeModel, from_lightgbm_dump, load_model
from ...engine.parse.document import parse
from ..datasets import load_dataset
from ..metrics import tokenize
from ..oof import OutOfFold
from ..transfer import (
    MANIFEST,
    HeldOutSplit,
    format_transfer_table,
    format_wcxb_types,
    held_out_splits,
    model_file,
    score_transfer,
    wcxb_type_scores,
)
from .arguments import BAGS, ROUNDS
from .folds import fold_of_site, site_of_page
from .labels import CONTENT_OVERLAP, label_blocks, snippet_labels
from .provenance import dataset_records, last_change, make_provenance, stamp, training_commit

#: LightGBM settings: small trees, shrinkage, row and feature subsampling (Friedman 2002).
BOOSTING: dict[str, Any] = {
    "objective": "binary",
    "learning_rate": 0.1,
    "num_leaves": 31,
    "max_depth": 6,
    "min_data_in_leaf": 40,
    "feature_fraction": 0.8,
    "bagging_fraction": 0.8,
    "bagging_freq": 1,
    "lambda_l2": 1.0,
    "deterministic": True,
    "force_row_wise": True,
    "num_threads": 1,
    "verbose": -1,
}


@dataclass(frozen=True, slots=True)
class TrainingSet:
    """Every labelled block of the pages, and which page each row comes from."""

    x: np.ndarray  # float64 (rows, features)
    overlap: np.ndarray  # float64 per row: share of the block's shingles in the reference
    tokens: np.ndarray  # float64 per row: word tokens of the block
    page: np.ndarray  # int64 per row: index into `pages` (rows of a page are contiguous)
    pages: list[tuple[str, str, str]]  # (dataset, page id, site) per page
    reference_tokens: np.ndarray  # float64 per page: word tokens of the reference text
    parent: np.ndarray  # int64 per row: the block's parent element within its page
    grandparent: np.ndarray  # int64 per row: the block's grandparent element within its page
    known: np.ndarray  # bool per row: labelled (False: a block no snippet falls on, `snippet_labels`)
    page_weight: np.ndarray | None = None  # float64 per page: its weight in the fit (None: 1 each)

    @property
    def label(self) -> np.ndarray:
        return self.overlap >= CONTENT_OVERLAP

    def weight(self) -> np.ndarray:
        """Each page weighs the same in total (the metric is a mean over pages), its labelled blocks
        by words; an unlabelled block weighs nothing (and `fit` leaves it out). With `page_weight`
        (`with_set_weights`), a page weighs that many times as much."""
        mass = (self.tokens + 1.0) * self.known
        per_page = np.bincount(self.page, weights=mass, minlength=len(self.pages))
        share = np.divide(mass, per_page[self.page], out=np.zeros(len(mass)), where=mass > 0) * 100.0
        return share if self.page_weight is None else share * self.page_weight[self.page]

    def with_set_weights(self, weights: Mapping[str, float]) -> TrainingSet:
        """The same rows with each page of a set named in `weights` weighing that many times as much
        as a page of another set (`--set-weight`; docs/benchmarks.md, older-dev)."""
        if not weights:
            return self
        page_weight = np.array([weights.get(name, 1.0) for name, _, _ in self.pages], dtype=np.float64)
        return dataclasses.replace(self, page_weight=page_weight)

    def subset(self, pages: np.ndarray) -> TrainingSet:
        keep = np.isin(self.page, pages)
        return TrainingSet(
            self.x[keep],
            self.overlap[keep],
            self.tokens[keep],
            self.page[keep],
            self.pages,
            self.reference_tokens,
            self.parent[keep],
            self.grandparent[keep],
            self.known[keep],
            self.page_weight,
        )

    def without_labels(self, sets: Collection[str]) -> TrainingSet:
        """The same rows with the blocks of `sets` unlabelled: those sets are scored (and their sites
        held out) but never learned from (`--score-only`)."""
        unlabelled = np.array([name in sets for name, _, _ in self.pages], dtype=bool)
        if not len(unlabelled):
            return self
        return dataclasses.replace(self, known=self.known & ~unlabelled[self.page])


def collect(datasets: tuple[str, ...], limit: int | None = None, progress: bool = False) -> TrainingSet:
    """Blocks, features and labels of every page of the datasets (pages that fail are skipped)."""
    extractor, params = first_extractor()
    rows: list[np.ndarray] = []
    overlaps: list[np.ndarray] = []
    tokens: list[np.ndarray] = []
    page_of: list[np.ndarray] = []
    parents: list[np.ndarray] = []
    grandparents: list[np.ndarray] = []
    known: list[np.ndarray] = []
    pages: list[tuple[str, str, str]] = []
    reference_tokens: list[float] = []
    for name in datasets:
        dataset = load_dataset(name, limit)
        for number, page in enumerate(dataset):
            try:
                doc = parse(page.read_html(), url=page.url)
            except (OSError, ValueError) as exc:
                print(f"readerproxy train: skipped {name}/{page.id}: {exc}", file=sys.stderr)
                continue
            blocks = page_blocks(doc, extractor.run(doc, params))
            if dataset.has_reference:
                labels = label_blocks(doc, blocks, page.reference_text)
                reference = float(len(tokenize(page.reference_text)))
            else:  # the snippets layout: the blocks the snippets fall on, the words of its content ones
                labels = snippet_labels(doc, blocks, page.with_snippets, page.without_snippets)
                reference = float(labels.tokens[labels.content].sum())
            index = len(pages)
            pages.append((name, page.id, site_of_page(dataset.layout, page.id, page.url)))
            reference_tokens.append(reference)
            rows.append(blocks.features)
            overlaps.append(labels.overlap)
            tokens.append(labels.tokens)
            page_of.append(np.full(len(labels.overlap), index, dtype=np.int64))
            parents.append(blocks.parent)
            grandparents.append(blocks.grandparent)
            known.append(labels.known)
            if progress and number % 100 == 0:
                print(f"readerproxy train: {name} {number}/{len(dataset)}", file=sys.stderr)
    return TrainingSet(
        np.concatenate(rows) if rows else np.zeros((0, len(FEATURES))),
        np.concatenate(overlaps) if overlaps else np.zeros(0),
        np.concatenate(tokens) if tokens else np.zeros(0),
        np.concatenate(page_of) if page_of else np.zeros(0, dtype=np.int64),
        pages,
        np.array(reference_tokens, dtype=np.float64),
        np.concatenate(parents) if parents else np.zeros(0, dtype=np.int64),
        np.concatenate(grandparents) if grandparents else np.zeros(0, dtype=np.int64),
        np.concatenate(known) if known else np.zeros(0, dtype=bool),
    )


def cached_collect(
    datasets: tuple[str, ...], cache: Path | None, limit: int | None = None, progress: bool = False
) -> TrainingSet:
    """`collect`, read from / written to `cache` when its key (features, datasets, limit) matches."""
    # "version": bumped when parsing or labelling changes what the same features hold (3: <noscript>
    # pages, React's streamed boundaries and anti-flicker wrappers are read by `document.parse`;
    # 4: the page-type features, and the blocks' JSON-LD text; 5: the section features; 6: `known`,
    # the snippets layout's labels).
    key = json.dumps({"features": FEATURES, "datasets": datasets, "limit": limit, "version": 6})
    if cache is not None and cache.is_file():
        with np.load(cache, allow_pickle=False) as data:
            if str(data["key"]) == key:
                return TrainingSet(
                    data["x"],
                    data["overlap"],
                    data["tokens"],
                    data["page"],
                    [(str(a), str(b), str(c)) for a, b, c in data["pages"]],
                    data["reference_tokens"],
                    data["parent"],
                    data["grandparent"],
                    data["known"],
                )
    training = collect(datasets, limit, progress)
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        with cache.open("wb") as out:
            np.savez_compressed(
                out,
                key=np.array(key),
                x=training.x,
                overlap=training.overlap,
                tokens=training.tokens,
                page=training.page,
                pages=np.array(training.pages, dtype=str).reshape(-1, 3),
                reference_tokens=training.reference_tokens,
                parent=training.parent,
                grandparent=training.grandparent,
                known=training.known,
            )
    return training


def fit_trees(
    x: np.ndarray,
    label: np.ndarray,
    weight: np.ndarray,
    names: tuple[str, ...],
    seed: int,
    rounds: int,
    bags: int = 1,
) -> TreeModel:
    """One LightGBM model, converted to numpy arrays; with `bags` > 1, that many models fitted with
    seeds seed, seed + 1, ... (other row and feature subsamples) and averaged (`average_trees`)."""
    try:
        import lightgbm
    except ImportError as exc:  # the CLI checks first; this is for library callers
        raise RuntimeError("training needs lightgbm: pip install -e '.[train]'") from exc
    data = lightgbm.Dataset(x, label=label.astype(np.float64), weight=weight, feature_name=list(names))
    models = [
        from_lightgbm_dump(
            lightgbm.train({**BOOSTING, "seed": seed + bag}, data, num_boost_round=rounds).dump_model()
        )
        for bag in range(bags)
    ]
    return models[0] if bags == 1 else average_trees(models)


def average_trees(models: list[TreeModel]) -> TreeModel:
    """One ensemble whose log-odds are the mean of the models' log-odds (Breiman 1996's bagging over
    boosted models): every tree of every model, its leaf values divided by the number of models."""
    offsets = np.cumsum([0] + [len(m.feature) for m in models[:-1]])
    share = 1.0 / len(models)
    return TreeModel(
        feature=np.concatenate([m.feature for m in models]),
        threshold=np.concatenate([m.threshold for m in models]),
        left=np.concatenate([m.left + o for m, o in zip(models, offsets, strict=True)]).astype(np.int32),
        right=np.concatenate([m.right + o for m, o in zip(models, offsets, strict=True)]).astype(np.int32),
        value=np.concatenate([m.value * share for m in models]),
        roots=np.concatenate([m.roots + o for m, o in zip(models, offsets, strict=True)]).astype(np.int32),
        init=float(np.mean([m.init for m in models])),
        features=models[0].features,
        max_depth=max(m.max_depth for m in models),
    )


def context_matrix(training: TrainingSet, first: np.ndarray) -> np.ndarray:
    """The rows' features beside the second stage's context features, page by page."""
    context = np.zeros((len(first), len(CONTEXT_FEATURES)))
    chars = np.expm1(training.x[:, FEATURES.index("log_chars")])
    bounds = np.flatnonzero(np.diff(training.page)) + 1
    for start, stop in zip(
        np.concatenate(([0], bounds)), np.concatenate((bounds, [len(first)])), strict=True
    ):
        part = slice(int(start), int(stop))
        context[part] = context_features(
            first[part], chars[part], training.parent[part], training.grandparent[part]
        )
    return np.hstack([training.x, context])


#: Inner site folds of `fit`: the second stage learns from first-stage probabilities out of them.
INNER_FOLDS = 3


def training_parameters(
    seed: int,
    rounds: int,
    bags: int,
    limit: int | None,
    folds: int | None = None,
    fold: int | None = None,
) -> dict[str, Any]:
    """The settings that made a model, for its provenance: LightGBM's (`BOOSTING`; bag k runs with
    seed + k), rounds, bags, inner folds, the page limit, and for a fold model the fold it never saw."""
    return {
        "boosting": dict(BOOSTING),
        "rounds": rounds,
        "bags": bags,
        "seed": seed,
        "inner_folds": INNER_FOLDS,
        "limit": limit,
        "folds": folds,
        "fold": fold,
    }


def fit(
    training: TrainingSet,
    seed: int = 0,
    rounds: int = ROUNDS,
    inner_folds: int = INNER_FOLDS,
    bags: int = BAGS,
) -> BlockScorer:
    """Both stages on `training`. The second stage learns from first-stage probabilities that are
    themselves out-of-fold (inner folds by site), as it will see on pages it has never seen. Only
    labelled rows are fitted; an unlabelled block still gets a first-stage probability, which the
    second stage's context features of its page's labelled blocks read."""
    label, weight, known = training.label, training.weight(), training.known
    page_fold = np.array([fold_of_site("inner:" + site, inner_folds) for _, _, site in training.pages])
    row_fold = page_fold[training.page]
    first_oof = np.zeros(len(label))
    for fold in range(inner_folds):
        held = row_fold == fold
        if held.all() or not held.any():
            continue
        fitted = ~held & known
        model = fit_trees(training.x[fitted], label[fitted], weight[fitted], FEATURES, seed, rounds, bags)
        first_oof[held] = model.probability(training.x[held])
    first = fit_trees(training.x[known], label[known], weight[known], FEATURES, seed, rounds, bags)
    second_x = context_matrix(training, first_oof)[known]
    second = fit_trees(second_x, label[known], weight[known], FEATURES + CONTEXT_FEATURES, seed, rounds, bags)
    return BlockScorer(first, second)


@dataclass(frozen=True, slots=True)
class ProxyScore:
    """Token-level F1 of a block selection against the labels, averaged over pages (a quick proxy
    of the shingle F1 that `readerproxy eval` measures on the rendered text)."""

    precision: float
    recall: float
    f1: float


def proxy_score(training: TrainingSet, keep: np.ndarray, pages: np.ndarray | None = None) -> ProxyScore:
    """Mean per-page precision, recall and F1 of the kept blocks, in word tokens (of the labelled
    blocks only: on a snippets page, the blocks its snippets fall on)."""
    n = len(training.pages)
    chosen_rows = keep & training.known
    tp = np.bincount(training.page, weights=training.tokens * training.overlap * chosen_rows, minlength=n)
    kept = np.bincount(training.page, weights=training.tokens * chosen_rows, minlength=n)
    precision = np.divide(tp, kept, out=np.zeros(n), where=kept > 0)
    recall = np.clip(
        np.divide(tp, training.reference_tokens, out=np.zeros(n), where=training.reference_tokens > 0), 0, 1
    )
    f1 = np.divide(2 * precision * recall, precision + recall, out=np.zeros(n), where=precision + recall > 0)
    chosen = np.unique(training.page) if pages is None else pages
    return ProxyScore(float(precision[chosen].mean()), float(recall[chosen].mean()), float(f1[chosen].mean()))


def fold_of_pages(training: TrainingSet, folds: int) -> np.ndarray:
    """The fold of every page, from its site."""
    return np.array([fold_of_site(site, folds) for _, _, site in training.pages], dtype=np.int64)


def cross_validate(
    training: TrainingSet, folds: int, seed: int = 0, rounds: int = ROUNDS, bags: int = BAGS
) -> tuple[np.ndarray, list[BlockScorer]]:
    """Out-of-fold probability of every row, and the scorer of each fold (trained without it)."""
    page_fold = fold_of_pages(training, folds)
    row_fold = page_fold[training.page]
    probability = np.zeros(len(training.page))
    models: list[BlockScorer] = []
    for fold in range(folds):
        model = fit(training.subset(np.flatnonzero(page_fold != fold)), seed, rounds, bags=bags)
        held = training.subset(np.flatnonzero(page_fold == fold))
        second_x = context_matrix(held, model.first.probability(held.x))  # context page by page
        probability[row_fold == fold] = model.second.probability(second_x)
        models.append(model)
    return probability, models


def write_manifest(path: Path, training: TrainingSet, folds: int, seed: int, bags: int = BAGS) -> None:
    """Which fold each page's site is in, with the settings that made the fold models."""
    page_fold = fold_of_pages(training, folds).tolist()
    manifest = {
        "folds": folds,
        "seed": seed,
        "rounds": ROUNDS,
        "bags": bags,
        "boosting": BOOSTING,
        "features": list(FEATURES),
        "pages": {
            f"{d}/{p}": {"site": s, "fold": f} for (d, p, s), f in zip(training.pages, page_fold, strict=True)
        },
    }
    path.write_text(json.dumps(manifest, indent=1, sort_keys=True), encoding="utf-8")


def run_stamp(args: argparse.Namespace, datasets: tuple[str, ...]) -> int:
    """`readerproxy train --stamp`: add a provenance record to the model at `--out`, trees untouched."""
    if not args.out.is_file():
        print(f"readerproxy train: --stamp: no model file {args.out}", file=sys.stderr)
        return 2
    try:
        records = dataset_records(datasets, args.limit)
    except (FileNotFoundError, ValueError) as exc:
        print(f"readerproxy train: {exc}", file=sys.stderr)
        return 2
    parameters = training_parameters(args.seed, args.rounds, args.bags, args.limit)
    commit = last_change(args.out)
    provenance = make_provenance(records, parameters, "readerproxy train --stamp", (commit, False))
    stamp(args.out, provenance)
    load_model.cache_clear()
    try:
        load_model(str(args.out))
    except ValueError as exc:
        print(f"readerproxy train: --stamp: {exc}", file=sys.stderr)
        return 1
    print(f"stamped {args.out}: commit {commit or '(unknown)'}, features {provenance.features}")
    return 0


def train_held_out(
    training: TrainingSet,
    directory: Path,
    seed: int = 0,
    rounds: int = ROUNDS,
    bags: int = BAGS,
    limit: int | None = None,
    progress: bool = False,
) -> list[HeldOutSplit]:
    """Leave one set out (`research.transfer`): for each set of `training`, a model fitted on the
    other sets' pages (without the held-out set's sites) written to `directory/without-<set>.npz`
    with its provenance, and `transfer.json` naming what each model learned from."""
    splits = held_out_splits(training.pages)
    commit = training_commit()
    directory.mkdir(parents=True, exist_ok=True)
    manifest: dict[str, Any] = {"seed": seed, "rounds": rounds, "bags": bags, "limit": limit, "held_out": {}}
    for split in splits:
        began = time.perf_counter()
        labelled = np.unique(training.page[training.known])  # a --score-only set's pages have none
        learned_from = split.training_sets(training.pages, labelled)
        model = fit(training.subset(split.training_pages), seed, rounds, bags=bags)
        parameters = training_parameters(seed, rounds, bags, limit)
        parameters["held_out"] = split.held_out
        parameters["dropped_sites"] = list(split.dropped_sites)
        records = dataset_records(tuple(learned_from), limit)
        for name, count in learned_from.items():  # fewer than "pages" where shared sites were left out
            records[name]["pages used"] = count
        provenance = make_provenance(records, parameters, "readerproxy train --leave-one-set-out", commit)
        dataclasses.replace(model, provenance=provenance).save(directory / model_file(split.held_out))
        manifest["held_out"][split.held_out] = {
            "model": model_file(split.held_out),
            "learned_from": learned_from,
            "dropped_sites": list(split.dropped_sites),
            "dropped_pages": split.dropped_pages,
            "seconds": round(time.perf_counter() - began, 1),
        }
        if progress:
            print(
                f"without {split.held_out}: learned from {learned_from}, {split.dropped_pages} pages of "
                f"{len(split.dropped_sites)} shared sites left out ({time.perf_counter() - began:.1f} s)",
                file=sys.stderr,
            )
    (directory / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True), encoding="utf-8")
    return splits


def run_leave_one_set_out(args: argparse.Namespace, training: TrainingSet, datasets: tuple[str, ...]) -> int:
    """`readerproxy train --leave-one-set-out`: the held-out models, then `auto` on each held-out set
    with them (and out of fold with `--site-folds`), the table, and WCXB's metric per page type."""
    if len(datasets) < 2:
        print("readerproxy train: --leave-one-set-out needs at least two --datasets", file=sys.stderr)
        return 2
    if args.site_folds is not None:
        try:  # before the training, not after it
            OutOfFold.load(args.site_folds, "scrapinghub")
        except ValueError as exc:
            print(f"readerproxy train: {exc}", file=sys.stderr)
            return 2
    began = time.perf_counter()
    train_held_out(training, args.transfer_dir, args.seed, args.rounds, args.bags, args.limit, progress=True)
    trained = time.perf_counter()
    table = score_transfer(args.transfer_dir, datasets, limit=args.limit, site_folds=args.site_folds)
    print(format_transfer_table(table))
    for (row, name), evaluation in table.evaluations.items():
        if evaluation.layout == "wcxb":
            print(f"\n{name}, {row}:")
            print(format_wcxb_types(wcxb_type_scores(evaluation, load_dataset(name, args.limit))))
    if args.transfer_json:
        args.transfer_json.write_text(json.dumps(table.to_json(), indent=1), encoding="utf-8")
    print(
        f"held-out models in {args.transfer_dir}: trained in {trained - began:.0f} s, "
        f"scored in {time.perf_counter() - trained:.0f} s"
    )
    return 0


def parse_set_weights(given: list[str], datasets: tuple[str, ...]) -> dict[str, float]:
    """`--set-weight NAME=W` values as {set: weight}; ValueError naming what is wrong."""
    weights: dict[str, float] = {}
    for item in given:
        name, _, value = item.partition("=")
        try:
            weight = float(value)
        except ValueError:
            raise ValueError(f"--set-weight {item!r}: expected NAME=W with a number W") from None
        if name not in datasets:
            raise ValueError(f"--set-weight {item!r}: {name!r} is not one of --datasets")
        if not 0 < weight <= 100:
            raise ValueError(f"--set-weight {item!r}: W must be in (0, 100]")
        weights[name] = weight
    return weights


def run_train(args: argparse.Namespace) -> int:
    if not 2 <= args.folds <= 20 or not 1 <= args.rounds <= 5000 or not 1 <= args.bags <= 4:
        print(
            "readerproxy train: --folds must be in 2..20, --rounds in 1..5000 and --bags in 1..4",
            file=sys.stderr,
        )
        return 2
    datasets = tuple(name.strip() for name in args.datasets.split(",") if name.strip())
    if args.stamp:
        return run_stamp(args, datasets)
    began = time.perf_counter()
    cache = None if args.no_cache else args.oof_dir / "blocks-cache.npz"
    try:
        training = cached_collect(datasets, cache, args.limit, progress=True)
    except (FileNotFoundError, ValueError) as exc:
        print(f"readerproxy train: {exc}", file=sys.stderr)
        return 2
    if len(training.pages) < args.folds:
        print(f"readerproxy train: {len(training.pages)} pages, fewer than --folds", file=sys.stderr)
        return 2
    score_only = {name.strip() for name in args.score_only.split(",") if name.strip()}
    if not score_only <= set(datasets):
        print("readerproxy train: --score-only names a set not in --datasets", file=sys.stderr)
        return 2
    training = training.without_labels(score_only)
    try:
        set_weights = parse_set_weights(args.set_weight, datasets)
    except ValueError as exc:
        print(f"readerproxy train: {exc}", file=sys.stderr)
        return 2
    training = training.with_set_weights(set_weights)
    labelled = training.known.sum()
    print(
        f"{len(training.pages)} pages, {len(training.page)} blocks, {labelled} labelled, "
        f"{training.label[training.known].mean():.3f} of them content ({time.perf_counter() - began:.1f} s)"
    )
    if args.leave_one_set_out:
        return run_leave_one_set_out(args, training, datasets)
    probability, models = cross_validate(training, args.folds, args.seed, args.rounds, args.bags)
    records, commit = dataset_records(datasets, args.limit), training_commit()

    def with_provenance(model: BlockScorer, fold: int | None) -> BlockScorer:
        folds = None if fold is None else args.folds
        parameters = training_parameters(args.seed, args.rounds, args.bags, args.limit, folds, fold)
        if set_weights:
            parameters["set_weights"] = set_weights
        return dataclasses.replace(model, provenance=make_provenance(records, parameters, commit=commit))

    args.oof_dir.mkdir(parents=True, exist_ok=True)
    for fold, model in enumerate(models):
        with_provenance(model, fold).save(args.oof_dir / f"fold-{fold}.npz")
    write_manifest(args.oof_dir / "manifest.json", training, args.folds, args.seed, args.bags)
    heuristic = training.x[:, FEATURES.index("heuristic_selected")] > 0
    print("out-of-fold block selection (token F1 against the labels, mean over pages):")
    for name in dict.fromkeys(d for d, _, _ in training.pages):
        pages = np.array([i for i, (d, _, _) in enumerate(training.pages) if d == name])
        learned = proxy_score(training, probability >= 0.5, pages)
        base = proxy_score(training, heuristic, pages)
        print(f"  {name:<12} learned {learned.f1:.3f}  heuristic {base.f1:.3f}  ({len(pages)} pages)")
    with_provenance(fit(training, args.seed, args.rounds, bags=args.bags), None).save(args.out)
    print(
        f"wrote {args.out}, {args.folds} fold models in {args.oof_dir} ({time.perf_counter() - began:.1f} s)"
    )
    return 0
