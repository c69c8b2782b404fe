"""Gradient-boosted trees as arrays, evaluated in numpy; the shipped weights, loaded once.

A model file (`.npz`) holds the nodes of every tree in one table (`feature`, `threshold`, `left`,
`right`, `value`; a leaf points to itself), each tree's root, the initial score and the names of the features it was trained on, which
must equal `blocks.FEATURES`, and its `Provenance` (a JSON string under
`provenance`: the training commit, the lightgbm and numpy versions, a hash of each dataset's page ids
and ground-truth files, the hash of the ordered feature names and the training parameters). A file
whose feature-list hash is not the code's is refused at load. Prediction walks all trees for all blocks at once, a few numpy gathers
per level (Friedman 2001's additive model: the sum of the trees' leaf values is the log-odds).

For speed the file's tables are repacked once at load (`TreeModel.__post_init__`): both children of a
node sit side by side in one array (`child[2 * node + went_left]`), so a level costs one gather for
the next node instead of two gathers and a `where`; indices are numpy's native `intp`, which a gather
uses without converting. The walk stays level by level over all (block, tree) pairs: the trees are
nearly complete (depth 6, 31 leaves), so skipping rows that reached a leaf early would save little.
When the optional C kernels are built (`readerproxy._speedups`), `_native.complete_tree_leaves` walks
the same trees laid out once at load as complete binary trees (`complete_trees`: node i's children at
2i + 1 and 2i + 2, a leaf above the last level copied under splits at +inf), which needs no child
table and keeps a few trees' tables in the cache while every row passes; trees deeper than
`COMPLETE_MAX_DEPTH` walk the packed node tables (`_native.tree_leaves`). Either way the leaves are
summed by numpy as before.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..._speedups import native
from .blocks import CONTEXT_FEATURES, FEATURES, context_features

#: The weights shipped with the package (written by `readerproxy train`).
SHIPPED_MODEL = Path(__file__).resolve().parent.parent / "models" / "blocks.npz"


@dataclass(frozen=True, slots=True)
class TreeModel:
    """An additive ensemble of binary trees over `features` (log-odds of "content").

    Nodes of all trees share one table. A leaf is a node that points to itself with an infinite
    threshold, so every row walks exactly `max_depth` steps with no test for having arrived.
    """

    feature: np.ndarray  # int32 per node (0 for leaves)
    threshold: np.ndarray  # float64 per node: go left when x <= threshold (+inf for leaves)
    left: np.ndarray  # int32 per node (a leaf: itself)
    right: np.ndarray  # int32 per node (a leaf: itself)
    value: np.ndarray  # float64 per node: the leaf value (0 for internal nodes)
    roots: np.ndarray  # int32 per tree
    init: float
    features: tuple[str, ...]
    max_depth: int
    # Packed at load for the walk (not part of the file): see the module docstring.
    _feature: np.ndarray = field(init=False, repr=False, compare=False)  # intp per node
    _child: np.ndarray = field(init=False, repr=False, compare=False)  # intp: [right, left] per node
    _roots: np.ndarray = field(init=False, repr=False, compare=False)  # intp per tree
    # The same trees laid out complete for the C walk (`complete_trees`), or None when too deep.
    _complete: tuple[np.ndarray, np.ndarray, np.ndarray] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        child = np.empty(2 * len(self.left), dtype=np.intp)
        child[0::2] = self.right  # index 2 * node + 0: x > threshold (or NaN)
        child[1::2] = self.left  # index 2 * node + 1: x <= threshold
        object.__setattr__(self, "_feature", self.feature.astype(np.intp))
        object.__setattr__(self, "_child", child)
        object.__setattr__(self, "_roots", self.roots.astype(np.intp))
        complete = complete_trees(self) if self.max_depth <= COMPLETE_MAX_DEPTH else None
        object.__setattr__(self, "_complete", complete)

    def log_odds(self, x: np.ndarray) -> np.ndarray:
        """Sum of the trees' leaves for every row of x (shape rows × features)."""
        rows, width = x.shape
        trees = len(self.roots)
        if rows == 0 or trees == 0:
            return np.full(rows, self.init)
        if native is not None and self._complete is not None:
            # The same walk in C over the complete layout (`_native.complete_tree_leaves`), same leaves.
            feature, threshold, value = self._complete
            leaves = np.frombuffer(
                native.complete_tree_leaves(
                    np.ascontiguousarray(x, dtype=np.float64), feature, threshold, value, self.max_depth
                ),
                np.float64,
            )
        elif native is not None:  # the same walk in C (`_native.tree_leaves`), leaves in the same layout
            leaves = np.frombuffer(
                native.tree_leaves(
                    np.ascontiguousarray(x, dtype=np.float64),
                    self._feature,
                    self.threshold,
                    self._child,
                    self.value,
                    self._roots,
                    self.max_depth,
                ),
                np.float64,
            )
        else:
            flat = np.ascontiguousarray(x, dtype=np.float64).ravel()
            offset = np.repeat(np.arange(rows, dtype=np.intp) * width, trees)
            node = np.tile(self._roots, rows)  # one walker per (row, tree), row-major
            for _ in range(self.max_depth):
                went_left = flat[offset + self._feature[node]] <= self.threshold[node]
                node = self._child[2 * node + went_left]
            leaves = self.value[node]
        # Summed over the trees of each row in the same order as ever (bit-identical scores).
        return self.init + leaves.reshape(rows, trees).sum(axis=1)

    def probability(self, x: np.ndarray) -> np.ndarray:
        return 1.0 / (1.0 + np.exp(-self.log_odds(x)))

    def arrays(self, prefix: str) -> dict[str, np.ndarray]:
        """The model as named arrays for an `.npz` file."""
        values = {
            "feature": self.feature,
            "threshold": self.threshold,
            "left": self.left,
            "right": self.right,
            "value": self.value,
            "roots": self.roots,
            "init": np.array([self.init]),
            "features": np.array(self.features),
            "max_depth": np.array([self.max_depth]),
        }
        return {prefix + name: array for name, array in values.items()}

    @classmethod
    def from_arrays(cls, data: Any, prefix: str) -> TreeModel:
        return cls(
            feature=data[prefix + "feature"].astype(np.int32),
            threshold=data[prefix + "threshold"].astype(np.float64),
            left=data[prefix + "left"].astype(np.int32),
            right=data[prefix + "right"].astype(np.int32),
            value=data[prefix + "value"].astype(np.float64),
            roots=data[prefix + "roots"].astype(np.int32),
            init=float(data[prefix + "init"][0]),
            features=tuple(str(name) for name in data[prefix + "features"]),
            max_depth=int(data[prefix + "max_depth"][0]),
        )


#: Deepest trees laid out complete for the C walk (2**depth leaves per tree); deeper ones walk the nodes.
COMPLETE_MAX_DEPTH = 10


def complete_trees(model: TreeModel) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The model's trees as complete binary trees of `max_depth` levels, for `_native.complete_tree_leaves`:
    (feature int32, threshold float64), trees × (2**depth - 1), internal node i with children 2i + 1
    (x <= threshold) and 2i + 2; value float64, trees × 2**depth.

    Built level by level from the node tables exactly as the numpy walk moves: position i of a level
    holds the node a walk would stand on there, a leaf too (its feature 0 and threshold +inf, both
    children itself), and the last level holds `value` of the node reached after `max_depth` steps.
    So every x reaches the same value as in the node walk, NaN included (it goes right at every
    node in both).
    """
    trees = len(model.roots)
    depth = model.max_depth
    feature = np.zeros((trees, 2**depth - 1), dtype=np.int32)
    threshold = np.zeros((trees, 2**depth - 1), dtype=np.float64)
    nodes = model.roots.astype(np.intp)[:, None]
    for level in range(depth):
        first = 2**level - 1
        feature[:, first : first + 2**level] = model.feature[nodes]
        threshold[:, first : first + 2**level] = model.threshold[nodes]
        nodes = np.stack([model.left[nodes], model.right[nodes]], axis=2).reshape(trees, -1)
    return feature, threshold, np.ascontiguousarray(model.value[nodes], dtype=np.float64)


#: Key of a model file's provenance record (a JSON string, written by `readerproxy train`).
PROVENANCE_KEY = "provenance"


def feature_list_hash(first: Sequence[str], second: Sequence[str]) -> str:
    """The version of a feature list: SHA-256 (16 hex digits) of both stages' ordered feature names."""
    text = json.dumps([list(first), list(second)], separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def code_feature_hash() -> str:
    """`feature_list_hash` of the features this code computes (`blocks.FEATURES`, `CONTEXT_FEATURES`)."""
    return feature_list_hash(FEATURES, FEATURES + CONTEXT_FEATURES)


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where a model file comes from: enough to retrain it and to know when it no longer fits the code.

    `datasets` maps each training set's name to {"pages": n, "sha256": hash of its page ids and
    ground-truth files} (`learn.provenance.dataset_hash`); `parameters` holds the boosting settings,
    rounds, bags, seed, inner folds, page limit and, for a fold model, the fold it never saw.
    """

    features: str  # feature_list_hash of the names the model was trained on
    commit: str  # git commit of the training code ("" when unknown)
    dirty: bool  # the training tree had uncommitted changes under readerproxy/
    lightgbm: str  # version of the training library ("" when unknown)
    numpy: str
    datasets: dict[str, dict[str, Any]]
    parameters: dict[str, Any]
    made_by: str  # "readerproxy train", or "readerproxy train --stamp" for a record added afterwards

    def to_json(self) -> str:
        return json.dumps(
            {name: getattr(self, name) for name in self.__dataclass_fields__}, sort_keys=True, indent=1
        )

    @classmethod
    def from_json(cls, text: str) -> Provenance:
        """The record of `to_json`; ValueError when it is not one."""
        try:
            data = json.loads(text)
            return cls(
                features=str(data["features"]),
                commit=str(data["commit"]),
                dirty=bool(data["dirty"]),
                lightgbm=str(data["lightgbm"]),
                numpy=str(data["numpy"]),
                datasets=dict(data["datasets"]),
                parameters=dict(data["parameters"]),
                made_by=str(data["made_by"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"unreadable provenance ({exc!r})") from None


@dataclass(frozen=True, slots=True)
class BlockScorer:
    """Two stages (stacked generalisation, Wolpert 1992): the first scores each block on its own
    features; the second sees them again beside the first stage's probabilities around the block
    (`blocks.context_features`), which lets it fill gaps in the article and drop isolated islands."""

    first: TreeModel
    second: TreeModel
    provenance: Provenance | None = None  # None for a file written before provenance was recorded

    def probability(self, x: np.ndarray, parent: np.ndarray, grandparent: np.ndarray) -> np.ndarray:
        first = self.first.probability(x)
        chars = np.expm1(x[:, FEATURES.index("log_chars")])
        return self.second.probability(np.hstack([x, context_features(first, chars, parent, grandparent)]))

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("wb") as out:
            arrays = {**self.first.arrays("first_"), **self.second.arrays("second_")}
            if self.provenance is not None:
                arrays[PROVENANCE_KEY] = np.array(self.provenance.to_json())
            save: Any = np.savez_compressed  # its keyword `allow_pickle` confuses mypy about **arrays
            save(out, **arrays)


def from_lightgbm_dump(dump: dict[str, Any]) -> TreeModel:
    """Convert LightGBM's `Booster.dump_model()` (numerical splits, `<=`) into arrays."""
    feature: list[int] = []
    threshold: list[float] = []
    left: list[int] = []
    right: list[int] = []
    value: list[float] = []
    roots: list[int] = []
    depth = 0

    def walk(node: dict[str, Any], level: int) -> int:
        nonlocal depth
        index = len(feature)
        feature.append(0)
        threshold.append(np.inf)
        left.append(index)
        right.append(index)
        if "leaf_value" in node:
            value.append(float(node["leaf_value"]))
            return index
        depth = max(depth, level + 1)
        if node.get("decision_type", "<=") != "<=":
            raise ValueError(f"unsupported split {node.get('decision_type')!r} (numerical <= only)")
        value.append(0.0)
        feature[index] = int(node["split_feature"])
        threshold[index] = float(node["threshold"])
        left[index] = walk(node["left_child"], level + 1)
        right[index] = walk(node["right_child"], level + 1)
        return index

    for tree in dump["tree_info"]:
        roots.append(walk(tree["tree_structure"], 0))
    return TreeModel(
        feature=np.array(feature, dtype=np.int32),
        threshold=np.array(threshold, dtype=np.float64),
        left=np.array(left, dtype=np.int32),
        right=np.array(right, dtype=np.int32),
        value=np.array(value, dtype=np.float64),
        roots=np.array(roots, dtype=np.int32),
        init=0.0,
        features=tuple(dump["feature_names"]),
        max_depth=depth,
    )


@functools.lru_cache(maxsize=16)
def load_model(path: str = "") -> BlockScorer:
    """The scorer at `path` ("" = the shipped one), read once per path; ValueError if unusable: a
    file that cannot be read, or one made for other features than this code computes (by its
    provenance's feature-list hash, and by the feature names it stores)."""
    source = Path(path) if path else SHIPPED_MODEL
    try:
        with np.load(source, allow_pickle=False) as data:
            provenance = (
                Provenance.from_json(str(data[PROVENANCE_KEY])) if PROVENANCE_KEY in data.files else None
            )
            scorer = BlockScorer(
                TreeModel.from_arrays(data, "first_"), TreeModel.from_arrays(data, "second_"), provenance
            )
    except (OSError, KeyError, ValueError, IndexError) as exc:
        raise ValueError(f"model {str(source)!r}: cannot load block model ({exc})") from None
    if provenance is not None and provenance.features != code_feature_hash():
        raise ValueError(
            f"model {str(source)!r}: made for feature list {provenance.features}, this code computes "
            f"{code_feature_hash()}; retrain with `readerproxy train`"
        )
    if scorer.first.features != FEATURES or scorer.second.features != FEATURES + CONTEXT_FEATURES:
        raise ValueError(
            f"model {str(source)!r}: trained on other features; retrain with `readerproxy train`"
        )
    return scorer
