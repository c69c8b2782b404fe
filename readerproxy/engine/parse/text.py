"""Small text helpers the engine shares (one copy of each), and the one definition of a word.

A word (`WORD`) is a run of `\\w`: letters, digits and underscores of every script (str patterns are
Unicode-aware). Whitespace (`SPACE`) is a run of `\\s`, what `str.split` splits at. Readers that
count something else say so where they define it: Line-Block's title keywords (`\\w{4,}`), the
letters-only words of a dated line (`dates`), reading time's words joined by apostrophes and
hyphens (`readingtime`), class and id names split at their capitals (`heuristic`), and the
renderer's and the product description's horizontal whitespace, which keeps line breaks.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Iterable

#: A word: a run of letters, digits or underscores, of any script.
WORD = re.compile(r"\w+")
#: A run of whitespace (the characters `str.split` splits at).
SPACE = re.compile(r"\s+")


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
