"""Small text helpers the engine shares (one copy of each)."""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterable


def squash(value: str) -> str:
    """Runs of whitespace as one space and none at the ends, as `re.sub(r"\\s+", " ", value).strip()`
    gives (`\\s` and `str.split` know the same whitespace), several times faster: for speed."""
    return " ".join(value.split())


def runs_hit(texts: list[str], offsets: Iterable[int]) -> list[int]:
    """The positions in `texts` (sorted, each once) of the texts that hold the given `offsets` of
    `join_runs(texts)`. For speed, a search runs once over the texts joined, not once per text."""
    starts = list(itertools.accumulate((len(text) + 1 for text in texts[:-1]), initial=0))
    return sorted({bisect.bisect_right(starts, offset) - 1 for offset in offsets})


def join_runs(texts: list[str]) -> str:
    """`texts` joined by a NUL, a character no text searched for holds: a match never spans two."""
    return "\x00".join(texts)
