"""Arguments of `readerproxy eval` and `readerproxy bench`.

Kept apart from `evaluation.cli` so that `readerproxy --help` works on a base install: the
commands themselves need the `eval` / `bench` extras, these declarations do not.
"""

from __future__ import annotations

import argparse


def add_eval_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of `readerproxy eval`."""
    parser.add_argument(
        "--dataset",
        default="scrapinghub",
        help="scrapinghub, readability, wcxb-dev (F1 per page type and snippets), older-dev (snippets "
        "only: trafilatura's metric), or a directory laid out like one of them",
    )
    parser.add_argument(
        "--algo",
        default="baseline,density",
        help="comma-separated specs: NAME or NAME:param=value[:param=value], "
        "ext:trafilatura, ext:readability-lxml, or all",
    )
    parser.add_argument("--limit", type=int, default=None, help="evaluate the first N pages only")
    parser.add_argument("--json", metavar="FILE", help="write per-page and aggregate numbers as JSON")
    parser.add_argument("--report", metavar="FILE", help="write a self-contained HTML report")
    parser.add_argument(
        "--metadata",
        action="store_true",
        help="readability set: also print per-field exact match of the metadata "
        "(title, byline, excerpt, dir, site name, published, lang, readerable)",
    )
    parser.add_argument(
        "--oof",
        metavar="DIR",
        help="out-of-fold scores: algorithms with a `model` parameter use, on each page, the fold "
        "model of `readerproxy train` (in DIR) that never saw the page's site",
    )
    parser.add_argument(
        "--loso",
        metavar="DIR",
        help="leave one set out: algorithms with a `model` parameter use the model of `readerproxy train "
        "--leave-one-set-out` (in DIR) trained without this dataset",
    )
    parser.add_argument(
        "--ablate",
        metavar="RULE",
        action="append",
        default=[],
        help="also run each algorithm that has auto's post-rules (auto, learned) with RULE off, and "
        "report the difference; repeatable, comma-separated, or `all` (the rules: "
        "extractors/learned/table.py POST_RULES, docs/rules.md)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")


def add_bench_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of `readerproxy bench`."""
    parser.add_argument(
        "--dataset",
        default="scrapinghub",
        help="scrapinghub, readability, or a directory laid out like either",
    )
    parser.add_argument(
        "--algo",
        default="all",
        help="comma-separated algorithm specs (ours), or all; peers run when installed",
    )
    parser.add_argument("--limit", type=int, default=None, help="use the first N pages only")
    parser.add_argument("--repeat", type=int, default=3, help="time each call R times, keep the fastest")
    parser.add_argument("--json", metavar="FILE", help="write the measurements as JSON")
    parser.add_argument("--no-memory", action="store_true", help="skip the tracemalloc peak-memory pass")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
