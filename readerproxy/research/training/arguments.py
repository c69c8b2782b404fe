"""The arguments of `readerproxy train`, declared without importing the training extra."""

from __future__ import annotations

import argparse
from pathlib import Path

from ...engine.learn.model import SHIPPED_MODEL

DEFAULT_DATASETS = ("scrapinghub", "readability", "wcxb-dev")
DEFAULT_OOF_DIR = Path("artifacts/learn")
DEFAULT_TRANSFER_DIR = Path("artifacts/learn/transfer")
ROUNDS = 100  # boosting rounds
BAGS = 2  # models (seeds) averaged per stage


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--datasets",
        default=",".join(DEFAULT_DATASETS),
        help="comma-separated datasets (names or directories) to learn from",
    )
    parser.add_argument("--out", type=Path, default=SHIPPED_MODEL, help="where the shipped weights go")
    parser.add_argument(
        "--oof-dir", type=Path, default=DEFAULT_OOF_DIR, help="fold models, manifest and feature cache"
    )
    parser.add_argument("--folds", type=int, default=5, help="folds grouped by site (2..20)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=ROUNDS, help="boosting rounds (1..5000)")
    parser.add_argument(
        "--bags", type=int, default=BAGS, help="models per stage with other seeds, averaged (1..4)"
    )
    parser.add_argument("--limit", type=int, default=None, help="first N pages of each dataset")
    parser.add_argument(
        "--set-weight",
        action="append",
        default=[],
        metavar="NAME=W",
        help="each page of set NAME weighs W times a page of another set in the fit (repeatable)",
    )
    parser.add_argument("--no-cache", action="store_true", help="recompute features and labels")
    parser.add_argument(
        "--leave-one-set-out",
        action="store_true",
        help="train, for each dataset, a model on the others only (its sites left out too), score `auto` "
        "on the held-out set and print the train-set x test-set table (the shipped model is not written)",
    )
    parser.add_argument(
        "--score-only",
        default="",
        metavar="SETS",
        help="comma-separated sets of --datasets that no model learns from: with --leave-one-set-out, "
        "scored and their sites held out as the others are (the table of a model that never saw them)",
    )
    parser.add_argument(
        "--transfer-dir",
        type=Path,
        default=DEFAULT_TRANSFER_DIR,
        help="where --leave-one-set-out writes without-<set>.npz and transfer.json",
    )
    parser.add_argument(
        "--site-folds",
        type=Path,
        default=None,
        metavar="DIR",
        help="with --leave-one-set-out: also score every set out of fold with the fold models in DIR "
        "(a --oof-dir, e.g. tests/fixtures/folds), the table's in-set row",
    )
    parser.add_argument(
        "--transfer-json", type=Path, default=None, metavar="FILE", help="write the table as JSON"
    )
    parser.add_argument(
        "--stamp",
        action="store_true",
        help="train nothing: add the provenance record to the model at --out (its trees unchanged; "
        "commit: the file's last change)",
    )
