"""Gradient-boosted trees as arrays, evaluated in numpy; the shipped weights, loaded once.

A model file (`.npz`) holds the nodes of every tree in one table (`feature`, `threshold`, `left`,
`right`, `value`; a leaf points to itself), each tree's root, the initial score and the names of the features it was trained on, which
must equal `blocks.FEATURES`. Prediction walks all trees for all blocks at once, one numpy gather per
level (Friedman 2001's additive model: the sum of the trees' leaf values is the log-odds).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

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

    def log_odds(self, x: np.ndarray) -> np.ndarray:
        """Sum of the trees' leaves for every row of x (shape rows × features)."""
        rows, width = x.shape
        trees = len(self.roots)
        if rows == 0 or trees == 0:
            return np.full(rows, self.init)
        flat = np.ascontiguousarray(x, dtype=np.float64).ravel()
        offset = np.repeat(np.arange(rows, dtype=np.int64) * width, trees)
        node = np.tile(self.roots, rows)
        for _ in range(self.max_depth):
            go_left = flat[offset + self.feature[node]] <= self.threshold[node]
            node = np.where(go_left, self.left[node], self.right[node])
        return self.init + self.value[node].reshape(rows, trees).sum(axis=1)

    def probability(self, x: np.ndarray) -> np.ndarray:
        return 1.0 / (1.0 + np.exp(-self.log_odds(x)))

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("wb") as out:
            np.savez_compressed(
                out,
                feature=self.feature,
                threshold=self.threshold,
                left=self.left,
                right=self.right,
                value=self.value,
                roots=self.roots,
                init=np.array([self.init]),
                features=np.array(self.features),
                max_depth=np.array([self.max_depth]),
            )


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
def load_model(path: str = "") -> TreeModel:
    """The model at `path` ("" = the shipped one), read once per path; ValueError if unusable."""
    source = Path(path) if path else SHIPPED_MODEL
    try:
        with np.load(source, allow_pickle=False) as data:
            model = TreeModel(
                feature=data["feature"].astype(np.int32),
                threshold=data["threshold"].astype(np.float64),
                left=data["left"].astype(np.int32),
                right=data["right"].astype(np.int32),
                value=data["value"].astype(np.float64),
                roots=data["roots"].astype(np.int32),
                init=float(data["init"][0]),
                features=tuple(str(name) for name in data["features"]),
                max_depth=int(data["max_depth"][0]),
            )
    except (OSError, KeyError, ValueError) as exc:
        raise ValueError(f"model {str(source)!r}: cannot load block model ({exc})") from None
    from .blocks import FEATURES  # here: learn.blocks imports the extractors, which import this module

    if model.features != FEATURES:
        raise ValueError(
            f"model {str(source)!r}: trained on other features; retrain with `readerproxy train`"
        )
    return model
