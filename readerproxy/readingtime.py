"""Word count and reading time for any script.

Chinese, Japanese and Korean text has no spaces between words, so it is counted by characters
(about 450 a minute for a native reader); every other script by whitespace-separated words
(about 230 a minute).
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass

import numpy as np

WORDS_PER_MINUTE = 230
CJK_CHARACTERS_PER_MINUTE = 450

#: Han, Hiragana, Katakana, Hangul and their compatibility / extension blocks.
_CJK = re.compile(
    "[\u1100-\u11ff\u2e80-\u2fdf\u3040-\u30ff\u3100-\u312f\u3130-\u318f\u31a0-\u31ff"
    "\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f]"
)
#: A word: letters and digits, with single apostrophes, dots or hyphens inside ("don't", "e.g", "x-ray").
_WORD = re.compile(r"[^\W_]+(?:['’.\-][^\W_]+)*")
#: The characters that join two runs of letters and digits into one `_WORD`.
_JOINERS = tuple(map(ord, "'’.-"))
#: Below this many characters `_WORD.findall` is as fast as the array count (numpy's fixed cost).
_SHORT = 1000


@dataclass(frozen=True, slots=True)
class ReadingTime:
    """What a reader view shows about a text's length."""

    words: int  # every CJK character counted as one word
    minutes: int  # at least 1 when there is any text, 0 when there is none


@functools.cache
def _alnum_table() -> np.ndarray:
    """For each code point of the Basic Multilingual Plane, whether `re` counts it in `[^\\W_]`
    (a letter or digit: `str.isalnum`, the very test `re` makes for `\\w` minus the underscore)."""
    return np.fromiter((chr(point).isalnum() for point in range(0x10000)), dtype=bool, count=0x10000)


def _count_words(text: str) -> int:
    """`len(_WORD.findall(text))`, computed on an array of code points (for speed: the regular
    expression costs about 80 ns a character, 1.5 ms for a 20,000-character article).

    A match is a maximal run of letters and digits, extended over each joiner that has a letter or
    digit on both sides; so the matches are the runs, less the joiners that merge two of them.
    """
    if len(text) < _SHORT:
        return len(_WORD.findall(text))
    points = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4")
    alnum = _alnum_table()[np.minimum(points, 0xFFFF)]
    for index in np.flatnonzero(points > 0xFFFF).tolist():  # beyond the table: rare, one at a time
        alnum[index] = chr(points[index]).isalnum()
    runs = int(alnum[0]) + np.count_nonzero(alnum[1:] & ~alnum[:-1])
    joiner = (
        (points == _JOINERS[0]) | (points == _JOINERS[1]) | (points == _JOINERS[2]) | (points == _JOINERS[3])
    )
    merged = np.count_nonzero(joiner[1:-1] & alnum[:-2] & alnum[2:])
    return int(runs - merged)


def _split(text: str) -> tuple[int, int]:
    """(CJK characters, words of other scripts) in the text."""
    cjk = len(_CJK.findall(text))
    other = _CJK.sub(" ", text) if cjk else text
    return cjk, _count_words(other)


def reading_time(text: str) -> ReadingTime:
    """The word count and reading minutes of a text, from one pass over it."""
    cjk, words = _split(text)
    minutes = (
        max(1, math.ceil(cjk / CJK_CHARACTERS_PER_MINUTE + words / WORDS_PER_MINUTE)) if cjk or words else 0
    )
    return ReadingTime(cjk + words, minutes)


def word_count(text: str) -> int:
    """Words, with every CJK character counted as one."""
    return reading_time(text).words


def reading_minutes(text: str) -> int:
    """Minutes to read the text (at least 1 when there is any text, 0 when there is none)."""
    return reading_time(text).minutes
