"""`readerproxy pagekind train|eval`: fit the page-kind model and measure it out of fold.

Pages and labels:

- wcxb-dev: every page with its `page_type` in `metadata.json` (the seven WCXB types; 1,310 pages),
  the only pages the accuracy is reported on;
- ScrapingHub's article-body set and Mozilla Readability's test pages: articles (training only). Of
  Readability's pages marked `"readerable": false` in `expected-metadata.json`, six are test
  fragments under 1 KB (no kind) and `mathjax` a MathML demonstration: they are left out;
  `mozilla-2`, Firefox Developer Edition's landing page, is a service page (`READABILITY_KINDS`).

Features are those of `pagekind.page_features`, on the `Document` of each page and the selection of
`auto` (the pipeline's default). They are cached in `--out-dir/features.npz`, keyed by the feature
names, so a second run fits only.

Out of fold: folds grouped by site (`learn.folds`: a site's fold is a hash of its key, the same
key across the three sets), each fold's pages predicted by a model fitted on the other folds, with
the numpy evaluator that ships (`pagekind.PageKindModel`). Reported: accuracy and the 7 × 7
confusion matrix on wcxb-dev, and the share of each kind's pages `pagekind.readerable` says yes to,
for the thresholds `THRESHOLDS` on the readerable kinds' summed probability, and with each fold's
threshold chosen by `choose_threshold` on the other folds (`nested_readerable`). `eval` writes
`--out-dir/eval.json` (and each page's true kind, predicted kind and confidence in `oof.json`);
`train` fits on every page and writes the shipped model, with the accuracy `eval.json` recorded.

LightGBM (the `train` extra; Ke et al. 2017) fits one tree ensemble per kind under the softmax
loss, deterministic and single-threaded with a fixed seed.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..engine.document import parse
from ..engine.extraction import get_extractor
from ..engine.learn.model import TreeModel, from_lightgbm_dump
from ..engine.pagekind import (
    FEATURES,
    KINDS,
    READERABLE_AT,
    READERABLE_KINDS,
    SHIPPED_MODEL,
    PageKindModel,
    page_features,
)
from .datasets import Page, load_dataset
from .training.folds import fold_of_site, site_of_page

DEFAULT_OUT = Path("artifacts/pagekind")
#: Readability test pages marked not readerable that are pages of a kind (the others are left out).
READABILITY_KINDS = {"mozilla-2": "service"}
#: LightGBM settings: small trees, shrinkage, row and feature subsampling (Friedman 2002).
BOOSTING: dict[str, Any] = {
    "objective": "multiclass",
    "num_class": len(KINDS),
    "learning_rate": 0.05,
    "num_leaves": 15,
    "max_depth": 4,
    "min_data_in_leaf": 5,
    "feature_fraction": 0.7,
    "bagging_fraction": 0.8,
    "bagging_freq": 1,
    "lambda_l2": 1.0,
    "deterministic": True,
    "force_row_wise": True,
    "num_threads": 1,
    "seed": 7,
    "verbose": -1,
}
ROUNDS = 500
FOLDS = 5
#: Weight of a ScrapingHub or Readability article beside a wcxb-dev page.
EXTRA_WEIGHT = 0.5
#: Candidate thresholds on the readerable kinds' summed probability (`pagekind.readerable`).
THRESHOLDS = (0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8)
#: Weight of a wcxb-dev page by its kind beside an article's (1 where not named). Weighing service
#: pages 2 and listings 1.5, the kinds most often taken for articles, was measured out of fold on
#: 2026-11-26 and moved accuracy and the readerable shares by no more than a page or two: none.
KIND_WEIGHTS: dict[str, float] = {}


@dataclass(frozen=True, slots=True)
class PageSet:
    """Features and labels of every page, with where each page comes from."""

    x: np.ndarray  # pages × FEATURES
    y: np.ndarray  # int: index into KINDS
    source: np.ndarray  # str: dataset name
    ids: np.ndarray  # str: page id within its dataset
    sites: np.ndarray  # str: site key (`learn.folds`)

    def subset(self, rows: np.ndarray) -> PageSet:
        return PageSet(self.x[rows], self.y[rows], self.source[rows], self.ids[rows], self.sites[rows])


SETS = ("wcxb-dev", "scrapinghub", "readability")


def collect(
    limit: int | None = None, progress: bool = False, every: int = 1, sets: tuple[str, ...] = SETS
) -> PageSet:
    """Parse every page (or every `every`-th of each set), run `auto`, compute the page features
    (pages in a stable order)."""
    extractor = get_extractor("auto")
    params = extractor.defaults()
    rows: list[np.ndarray] = []
    labels: list[int] = []
    sources: list[str] = []
    ids: list[str] = []
    sites: list[str] = []
    for name in sets:
        dataset = load_dataset(name, limit=limit)
        listed = wcxb_typed_pages(dataset.root, limit) if dataset.layout == "wcxb" else dataset.pages
        for page in listed[::every]:
            kind = page_label(dataset.layout, page.id, page.page_type, page.path)
            if kind is None:
                continue
            doc = parse(page.read_html(), page.url)
            extraction = extractor.run(doc, params)
            rows.append(page_features(doc, extraction.selection))
            labels.append(KINDS.index(kind))
            sources.append(name)
            ids.append(page.id)
            sites.append(site_of_page(dataset.layout, page.id, page.url))
            if progress and len(rows) % 100 == 0:
                print(f"  {len(rows)} pages", file=sys.stderr)
    return PageSet(
        np.array(rows, dtype=np.float64).reshape(len(rows), len(FEATURES)),
        np.array(labels, dtype=np.int64),
        np.array(sources),
        np.array(ids),
        np.array(sites),
    )


def wcxb_typed_pages(directory: Path, limit: int | None = None) -> list[Page]:
    """Every page of a WCXB set that `metadata.json` types, with its URL from its ground-truth file
    (`datasets.wcxb_pages` leaves out the pages without reference text; their type still counts)."""
    files = json.loads((directory / "metadata.json").read_text(encoding="utf-8")).get("files") or {}
    pages: list[Page] = []
    for page_id in sorted(files):
        path = directory / "html" / f"{page_id}.html.gz"
        if not path.is_file():
            path = directory / "html" / f"{page_id}.html"
        if not path.is_file():
            continue
        try:
            url = json.loads(
                (directory / "ground-truth" / f"{page_id}.json").read_text(encoding="utf-8")
            ).get("url")
        except (OSError, ValueError):
            url = None
        pages.append(
            Page(
                page_id,
                path,
                "",
                url=url if isinstance(url, str) else None,
                page_type=files[page_id].get("page_type"),
            )
        )
        if limit is not None and len(pages) >= limit:
            break
    return pages


def page_label(layout: str, page_id: str, page_type: str | None, path: Path) -> str | None:
    """The kind of a training page (None: left out)."""
    if layout == "wcxb":
        return page_type if page_type in KINDS else None
    if layout == "scrapinghub":
        return "article"
    metadata = path.parent / "expected-metadata.json"
    try:
        marked = json.loads(metadata.read_text(encoding="utf-8")).get("readerable", True)
    except (OSError, ValueError, AttributeError):
        marked = True
    if marked is False:
        return READABILITY_KINDS.get(page_id)
    return "article"


def cached_collect(out_dir: Path, limit: int | None = None, progress: bool = False) -> PageSet:
    """`collect`, read from `out_dir/features.npz` when it was made with the same features and limit."""
    path = out_dir / "features.npz"
    key = json.dumps({"features": FEATURES, "limit": limit})
    if path.is_file():
        with np.load(path, allow_pickle=False) as data:
            if str(data["key"]) == key:
                return PageSet(data["x"], data["y"], data["source"], data["ids"], data["sites"])
    pages = collect(limit, progress)
    out_dir.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(
        path, key=np.array(key), x=pages.x, y=pages.y, source=pages.source, ids=pages.ids, sites=pages.sites
    )
    return pages


def weights(pages: PageSet) -> np.ndarray:
    """Each page's training weight: `EXTRA_WEIGHT` for the other sets' articles, `KIND_WEIGHTS` by kind."""
    by_kind = np.array([KIND_WEIGHTS.get(kind, 1.0) for kind in KINDS])[pages.y]
    return np.where(pages.source == "wcxb-dev", by_kind, EXTRA_WEIGHT)


def fit(pages: PageSet, rounds: int = ROUNDS, features: tuple[str, ...] = FEATURES) -> PageKindModel:
    """LightGBM's multiclass trees on the pages, as one numpy `TreeModel` per kind."""
    import lightgbm  # the train extra

    data = lightgbm.Dataset(pages.x, label=pages.y, weight=weights(pages), feature_name=list(features))
    booster = lightgbm.train(BOOSTING, data, num_boost_round=rounds)
    dump = booster.dump_model()
    trees = dump["tree_info"]
    per_kind: list[TreeModel] = []
    for index in range(len(KINDS)):
        # LightGBM's multiclass trees come round by round, one per class in class order.
        per_kind.append(
            from_lightgbm_dump(
                {"tree_info": trees[index :: len(KINDS)], "feature_names": dump["feature_names"]}
            )
        )
    return PageKindModel(KINDS, tuple(per_kind), tuple(features))


def fold_of_pages(pages: PageSet, folds: int = FOLDS) -> np.ndarray:
    return np.array([fold_of_site(site, folds) for site in pages.sites.tolist()], dtype=np.int64)


def out_of_fold(pages: PageSet, folds: int = FOLDS, rounds: int = ROUNDS) -> np.ndarray:
    """Pages × kinds probabilities, each page's from the model fitted without its site's fold."""
    fold = fold_of_pages(pages, folds)
    probabilities = np.zeros((len(pages.y), len(KINDS)))
    for k in range(folds):
        held = fold == k
        model = fit(pages.subset(np.flatnonzero(~held)), rounds)
        probabilities[held] = model.probabilities(pages.x[held])
    return probabilities


def confusion(truth: np.ndarray, predicted: np.ndarray) -> np.ndarray:
    """Kinds × kinds counts: row = true kind, column = predicted kind."""
    matrix = np.zeros((len(KINDS), len(KINDS)), dtype=np.int64)
    np.add.at(matrix, (truth, predicted), 1)
    return matrix


def readerable_share(probabilities: np.ndarray) -> np.ndarray:
    """Per page, the summed probability of the readerable kinds (`pagekind.readerable_probability`)."""
    columns = [KINDS.index(kind) for kind in READERABLE_KINDS]
    return probabilities[:, columns].sum(axis=1)


def readerable_rates(truth: np.ndarray, said: np.ndarray) -> dict[str, float]:
    """Per kind, the share of its pages said readerable."""
    return {
        kind: round(float(said[truth == i].mean()), 4) for i, kind in enumerate(KINDS) if (truth == i).any()
    }


def balanced_error(truth: np.ndarray, said: np.ndarray) -> float:
    """The mean over the kinds of the share of pages the readerable decision gets wrong: a readerable
    kind's pages said no, another kind's pages said yes (each kind counts alike, however many pages)."""
    readerable_kind = np.array([kind in READERABLE_KINDS for kind in KINDS])
    wrong = said != readerable_kind[truth]
    return float(np.mean([wrong[truth == i].mean() for i in range(len(KINDS)) if (truth == i).any()]))


#: The share of each readerable kind's pages (article, documentation, forum) the chosen threshold must
#: keep readerable: the issue's 0.95 and a point of margin.
MIN_READERABLE = 0.96


def choose_threshold(truth: np.ndarray, probabilities: np.ndarray) -> float:
    """The highest threshold of `THRESHOLDS` at which every readerable kind keeps at least
    `MIN_READERABLE` of its pages readerable (the lowest threshold when none does): the other kinds
    lose their reader view as far as that costs few of the pages a reader view shows well."""
    share = readerable_share(probabilities)
    kinds = [KINDS.index(kind) for kind in READERABLE_KINDS if (truth == KINDS.index(kind)).any()]
    chosen = THRESHOLDS[0]
    for at in THRESHOLDS:
        said = share >= at
        if all(said[truth == k].mean() >= MIN_READERABLE for k in kinds):
            chosen = max(chosen, at)
    return chosen


def nested_readerable(truth: np.ndarray, probabilities: np.ndarray, fold: np.ndarray) -> np.ndarray:
    """Per page, the readerable decision with a threshold chosen without its fold: each fold's pages
    under the threshold `choose_threshold` picks on the other folds' out-of-fold probabilities."""
    share = readerable_share(probabilities)
    said = np.zeros(len(truth), dtype=bool)
    for k in np.unique(fold).tolist():
        held = fold == k
        at = choose_threshold(truth[~held], probabilities[~held])
        said[held] = share[held] >= at
    return said


def report(pages: PageSet, probabilities: np.ndarray) -> dict[str, Any]:
    """Accuracy, confusion matrix and readerable rates on the wcxb-dev pages."""
    rows = pages.source == "wcxb-dev"
    truth = pages.y[rows]
    probs = probabilities[rows]
    predicted = probs.argmax(axis=1)
    matrix = confusion(truth, predicted)
    chosen = choose_threshold(truth, probs)
    share = readerable_share(probs)
    nested = nested_readerable(truth, probs, fold_of_pages(pages)[rows])
    per_kind = {
        kind: {
            "pages": int(matrix[i].sum()),
            "recall": round(float(matrix[i, i] / max(1, matrix[i].sum())), 4),
            "precision": round(float(matrix[i, i] / max(1, matrix[:, i].sum())), 4),
        }
        for i, kind in enumerate(KINDS)
    }
    other = ~rows
    return {
        "pages": int(rows.sum()),
        "accuracy": round(float((predicted == truth).mean()), 4),
        "kinds": list(KINDS),
        "confusion": matrix.tolist(),
        "per_kind": per_kind,
        "readerable_at": chosen,
        "readerable_at_shipped": READERABLE_AT,
        "readerable_nested": readerable_rates(truth, nested),
        "readerable_nested_error": round(balanced_error(truth, nested), 4),
        "readerable": {str(at): readerable_rates(truth, share >= at) for at in THRESHOLDS},
        "readerable_error": {str(at): round(balanced_error(truth, share >= at), 4) for at in THRESHOLDS},
        "other_sets_article_share": round(float((probabilities[other].argmax(axis=1) == 0).mean()), 4)
        if other.any()
        else None,
    }


def format_report(result: dict[str, Any]) -> str:
    """The report as text: accuracy, the confusion matrix, readerable rates."""
    kinds = result["kinds"]
    short = [kind[:6] for kind in kinds]
    lines = [
        f"page kind, out of fold on wcxb-dev ({result['pages']} pages): accuracy {result['accuracy']:.4f}",
        "",
    ]
    lines.append("true \\ predicted " + " ".join(f"{name:>6}" for name in short))
    for kind, row in zip(kinds, result["confusion"], strict=True):
        lines.append(f"{kind:<16} " + " ".join(f"{value:>6}" for value in row))
    lines.append("")
    for kind, values in result["per_kind"].items():
        lines.append(
            f"{kind:<14} recall {values['recall']:.3f} precision {values['precision']:.3f} ({values['pages']})"
        )
    lines.append("")
    lines.append(
        "readerable share per kind, by threshold on P(article + documentation + forum)"
        f" (chosen: {result['readerable_at']}; shipped: {result['readerable_at_shipped']})"
    )
    for at, rates in result["readerable"].items():
        lines.append(
            f"  at {at:<5} "
            + " ".join(f"{kind[:6]} {rate:.3f}" for kind, rate in rates.items())
            + f"  error {result['readerable_error'][at]:.4f}"
        )
    lines.append(
        "  nested   "
        + " ".join(f"{kind[:6]} {rate:.3f}" for kind, rate in result["readerable_nested"].items())
        + f"  error {result['readerable_nested_error']:.4f}  (each fold's threshold chosen on the others)"
    )
    if result["other_sets_article_share"] is not None:
        lines.append(
            f"ScrapingHub + Readability pages called article: {result['other_sets_article_share']:.4f}"
        )
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """`readerproxy pagekind train|eval`."""
    out_dir = Path(args.out_dir)
    began = time.perf_counter()
    pages = cached_collect(out_dir, args.limit, progress=True)
    if args.action == "train":
        model = fit(pages)
        recorded = out_dir / "eval.json"
        if recorded.is_file():  # the out-of-fold accuracy of the same features, recorded with the model
            result = json.loads(recorded.read_text(encoding="utf-8"))
            if result.get("features") == list(FEATURES):
                model = dataclasses.replace(model, oof_accuracy=float(result["accuracy"]))
        target = Path(args.model) if args.model else SHIPPED_MODEL
        model.save(target)
        print(f"wrote {target} ({len(pages.y)} pages, {time.perf_counter() - began:.1f} s)")
        return 0
    probabilities = out_of_fold(pages, args.folds)
    result = report(pages, probabilities)
    per_page = {
        f"{source}/{page}": [KINDS[truth], KINDS[int(p.argmax())], round(float(p.max()), 4)]
        for source, page, truth, p in zip(
            pages.source.tolist(), pages.ids.tolist(), pages.y.tolist(), probabilities, strict=True
        )
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "oof.json").write_text(json.dumps(per_page, indent=0) + "\n", encoding="utf-8")
    result["seconds"] = round(time.perf_counter() - began, 1)
    result["features"] = list(FEATURES)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "eval.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(format_report(result))
    return 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of `readerproxy pagekind` (declared without importing lightgbm)."""
    parser.add_argument(
        "action", choices=("train", "eval"), help="fit the shipped model, or measure out of fold"
    )
    parser.add_argument(
        "--out-dir", default=str(DEFAULT_OUT), help="features cache and eval.json (%(default)s)"
    )
    parser.add_argument(
        "--model", default="", help="where `train` writes the model (default: the shipped one)"
    )
    parser.add_argument("--folds", type=int, default=FOLDS, help="site-grouped folds (%(default)s)")
    parser.add_argument("--limit", type=int, default=None, help="at most this many pages of each set")


if (
    __name__ == "__main__"
):  # `python -m readerproxy.research.pagekind_eval eval`, as `readerproxy pagekind eval`
    command = argparse.ArgumentParser(prog="readerproxy pagekind", description=__doc__.split("\n")[0])
    add_arguments(command)
    raise SystemExit(run(command.parse_args()))
