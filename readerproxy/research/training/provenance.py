"""The provenance of a block model: what `readerproxy train` records in every model file it writes.

`model.Provenance` is the record; this module computes its fields (`make_provenance`) and adds a
record to a file trained before records existed (`stamp`, `readerproxy train --stamp`), leaving its
trees untouched. A dataset's hash (`dataset_hash`) covers its layout, the ids of the pages used, in
order, and the files that hold their ground truth (ScrapingHub's and older-dev's `ground-truth.json`;
a Readability page's `expected.html` and `expected-metadata.json`; WCXB's `metadata.json` and each
page's `ground-truth/<id>.json`), so a changed reference or another page selection shows; the pages' HTML
is not read (it is large, and a changed page changes the features, which the model's scores show).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from ...engine.learn.model import PROVENANCE_KEY, Provenance, code_feature_hash
from ..datasets import Dataset, load_dataset

#: The repository a development install runs from (no git commit is recorded outside one).
REPOSITORY = Path(__file__).resolve().parent.parent.parent


def truth_files(dataset: Dataset) -> list[Path]:
    """The files holding the ground truth of the dataset's pages, in a stable order."""
    root = dataset.root
    if dataset.layout in ("scrapinghub", "snippets"):
        return [root / "ground-truth.json"]
    if dataset.layout == "wcxb":
        return [root / "metadata.json", *(root / "ground-truth" / f"{page.id}.json" for page in dataset)]
    files: list[Path] = []
    for page in dataset:  # readability: the page's directory holds its answer
        folder = page.path.parent
        files.extend(p for p in (folder / "expected.html", folder / "expected-metadata.json") if p.is_file())
    return files


def dataset_hash(dataset: Dataset) -> str:
    """SHA-256 of the dataset's layout, its page ids in order and its ground-truth files' bytes."""
    hasher = hashlib.sha256()
    hasher.update(dataset.layout.encode())
    hasher.update(b"\x00" + "\n".join(page.id for page in dataset).encode("utf-8") + b"\x00")
    for path in truth_files(dataset):
        hasher.update(path.relative_to(dataset.root).as_posix().encode("utf-8") + b"\x00")
        hasher.update(path.read_bytes())
        hasher.update(b"\x00")
    return hasher.hexdigest()


def dataset_records(names: Iterable[str], limit: int | None = None) -> dict[str, dict[str, Any]]:
    """{name: {"pages": n, "sha256": dataset_hash}} of the datasets as training reads them."""
    records: dict[str, dict[str, Any]] = {}
    for name in names:
        dataset = load_dataset(name, limit)
        records[name] = {"pages": len(dataset), "sha256": dataset_hash(dataset)}
    return records


def _git(*args: str) -> str:
    """The output of a git command in the repository, or "" when there is no repository or git."""
    try:
        done = subprocess.run(
            ["git", "-C", str(REPOSITORY), *args], capture_output=True, text=True, check=True, timeout=30
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip()


def training_commit() -> tuple[str, bool]:
    """The commit checked out, and whether readerproxy/ has uncommitted changes to tracked files."""
    commit = _git("rev-parse", "HEAD")
    dirty = bool(commit) and bool(_git("status", "--porcelain", "--untracked-files=no", "--", "readerproxy"))
    return commit, dirty


def _version(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return ""


def make_provenance(
    datasets: dict[str, dict[str, Any]],
    parameters: dict[str, Any],
    made_by: str = "readerproxy train",
    commit: tuple[str, bool] | None = None,
) -> Provenance:
    """The record of a model trained now by this code (or stamped: `made_by`, `commit` given)."""
    sha, dirty = training_commit() if commit is None else commit
    return Provenance(
        features=code_feature_hash(),
        commit=sha,
        dirty=dirty,
        lightgbm=_version("lightgbm"),
        numpy=np.__version__,
        datasets=datasets,
        parameters=parameters,
        made_by=made_by,
    )


def last_change(path: Path) -> str:
    """The commit of the last change to `path` in the repository ("" when unknown)."""
    try:
        relative = path.resolve().relative_to(REPOSITORY)
    except ValueError:
        return ""
    return _git("log", "-1", "--format=%H", "--", relative.as_posix())


def stamp(path: Path, provenance: Provenance) -> None:
    """Rewrite the model file at `path` with `provenance` added; every array stays as it is."""
    with np.load(path, allow_pickle=False) as data:
        arrays = {name: data[name] for name in data.files if name != PROVENANCE_KEY}
    arrays[PROVENANCE_KEY] = np.array(provenance.to_json())
    with path.open("wb") as out:
        save: Any = np.savez_compressed  # its keyword `allow_pickle` confuses mypy about **arrays
        save(out, **arrays)
