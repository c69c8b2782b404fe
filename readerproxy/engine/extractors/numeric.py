"""Small numpy helpers for the 1-D curves the extractors compute (one copy of each).

- `gaussian_kernel`: the normalised Gaussian weights CETR smooths its tag-ratio histogram with
  (Weninger, Hsu, Han 2010, "Smoothing") and ACCB blurs its content code vector with (Gottron
  2008, section 3).
- `grow_region`: the region growth of density (Moreno, Deschacht, Moens 2009, section 4: strings
  above the cutoff within c2 positions join the region) and of DANAg's boundary detection
  (Mohammadzadeh et al. 2011: positive segments at most `max_gap` segments apart).
"""

from __future__ import annotations

import numpy as np


def gaussian_kernel(radius: int, sigma: float) -> np.ndarray:
    """Gaussian weights for the offsets -radius .. radius, summing to one."""
    offsets = np.arange(-radius, radius + 1, dtype=np.float64)
    weights = np.exp(-0.5 * (offsets / sigma) ** 2)
    return np.asarray(weights / weights.sum())


def grow_region(members: np.ndarray, seed: int, max_step: int) -> tuple[int, int]:
    """(leftmost, rightmost) index of the region grown from `seed` over the sorted indices `members`.

    Starting at `seed`, the region takes in the next member on either side as long as it lies at
    most `max_step` positions beyond the region's current edge; it stops at the first larger gap.
    The seed itself need not be a member.
    """
    before = int(np.searchsorted(members, seed, side="left"))
    after = int(np.searchsorted(members, seed, side="right"))
    left = right = int(seed)
    for index in members[after:].tolist():
        if index - right > max_step:
            break
        right = index
    for index in members[:before][::-1].tolist():
        if left - index > max_step:
            break
        left = index
    return left, right
