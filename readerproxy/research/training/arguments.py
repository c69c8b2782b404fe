"""The arguments of `readerproxy train`, declared without importing the training extra."""

from __future__ import annotations

import argparse
from pathlib import Path

from ...engine.learn.model import SHIPPED_MODEL

DEFAULT_DATASETS = ("scrapinghub", "readability", "wcxb-dev")
DEFAULT_OOF_DIR = Path("artifacts/learn")
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
    parser.add_argument("--no-cache", action="store_true", help="recompute features and labels")
    parser.add_argument(
        "--stamp",
        action="store_true",
        help="train nothing: add the provenance record to the model at --out (its trees unchanged; "
        "commit: the file's last change)",
    )
