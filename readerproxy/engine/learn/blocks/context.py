"""`CONTEXT_FEATURES` (`context_features`): the second stage's features, each block's first-stage
probability beside those of its neighbours, its parent's and grandparent's blocks and the page.
"""

from __future__ import annotations

import numpy as np

from ...._speedups import native
from .columns import _pad_edge, _previous_next

#: Features of the second stage: the first stage's probability in the block's neighbourhood.
CONTEXT_FEATURES: tuple[str, ...] = (
    "p",
    "prev_p",
    "next_p",
    "window_mean_p",
    "window_max_p",
    "window_min_p",
    "parent_mean_p",
    "grandparent_mean_p",
    "page_mean_p",
    "page_max_p",
)
#: Blocks on each side in the window of the context features.
CONTEXT_RADIUS = 2


def _group_mean(values: np.ndarray, group: np.ndarray) -> np.ndarray:
    # For speed: element indices (-1: none) are their own keys after + 1, without np.unique's sort;
    # np.bincount adds each group's values in input order either way (the same sums).
    key = group + 1 if group.min() >= -1 else np.unique(group, return_inverse=True)[1]
    return np.bincount(key, weights=values)[key] / np.bincount(key)[key]


def context_features(
    probability: np.ndarray, chars: np.ndarray, parent: np.ndarray, grandparent: np.ndarray
) -> np.ndarray:
    """Stacked generalisation (Wolpert 1992): each block's first-stage probability beside those of its
    neighbours, siblings and page, so the second stage can smooth over runs of blocks and subtrees."""
    n = len(probability)
    if n == 0:
        return np.zeros((0, len(CONTEXT_FEATURES)))
    weight = chars + 1.0
    page_mean = float((probability * weight).sum() / weight.sum())
    if native is not None:  # for speed: every column in one C pass (`_native.context_columns`), same floats
        columns = native.context_columns(
            np.ascontiguousarray(probability, dtype=np.float64),
            np.ascontiguousarray(parent, dtype=np.int64),
            np.ascontiguousarray(grandparent, dtype=np.int64),
            page_mean,
            CONTEXT_RADIUS,
        )
        if columns is not None:
            return np.frombuffer(columns, dtype=np.float64).reshape(n, len(CONTEXT_FEATURES))
    padded = _pad_edge(probability, CONTEXT_RADIUS)
    # One row of the window per block (a small copy: cheaper to make than a strided view).
    window = np.empty((n, 2 * CONTEXT_RADIUS + 1))
    for k in range(2 * CONTEXT_RADIUS + 1):
        window[:, k] = padded[k : k + n]
    # For speed: the columns written into one array (what np.column_stack gives, without its
    # per-column reshaping); the previous and next block's probability are 0 at the ends.
    before, after = _previous_next(probability[None, :], (0.0,))
    out = np.empty((n, len(CONTEXT_FEATURES)))
    out[:, 0] = probability
    out[:, 1] = before[0]
    out[:, 2] = after[0]
    out[:, 3] = window.mean(axis=1)
    out[:, 4] = window.max(axis=1)
    out[:, 5] = window.min(axis=1)
    out[:, 6] = _group_mean(probability, parent)
    out[:, 7] = _group_mean(probability, grandparent)
    out[:, 8] = page_mean
    out[:, 9] = float(probability.max())
    return out
