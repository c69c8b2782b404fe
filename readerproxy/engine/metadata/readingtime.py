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

#: Han, Hiragana, Katakana, Hangul and their compatibility / extension blocks (first, last).
_CJK_RANGES = (
    (0x1100, 0x11FF),
    (0x2E80, 0x2FDF),
    (0x3040, 0x30FF),
    (0x3100, 0x312F),
    (0x3130, 0x318F),
    (0x31A0, 0x31FF),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xAC00, 0xD7AF),
    (0xF900, 0xFAFF),
    (0xFF66, 0xFF9F),
    (0x20000, 0x3134F),
)
_CJK = re.compile("[" + "".join(f"{chr(first)}-{chr(last)}" for first, last in _CJK_RANGES) + "]")
#: A word: letters and digits, with single apostrophes, dots or hyphens inside ("don't", "e.g", "x-ray"):
#: a reader reads "don't" as one word, where `parse.text.WORD` sees two.
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


#: Bits of `_character_table`: a letter or digit (`[^\W_]`), a character `_CJK` matches, a joiner.
_ALNUM, _CJK_BIT, _JOINER = 1, 2, 4
#: The part of `_CJK` beyond the Basic Multilingual Plane (the table covers the BMP).
_CJK_ASTRAL = _CJK_RANGES[-1]


@functools.cache
def _character_table() -> np.ndarray:
    """For each code point of the Basic Multilingual Plane, `_ALNUM` when `re` counts it in `[^\\W_]`
    (a letter or digit: `str.isalnum`, the very test `re` makes for `\\w` minus the underscore) and
    `_CJK_BIT` when `_CJK` matches it, `_JOINER` for the `_JOINERS`."""
    alnum = np.fromiter((chr(point).isalnum() for point in range(0x10000)), dtype=bool, count=0x10000)
    table = alnum.astype(np.uint8) * _ALNUM
    for first, last in _CJK_RANGES[:-1]:  # the ranges below the astral one, which `_flags` checks
        table[first : last + 1] |= _CJK_BIT
    table[list(_JOINERS)] |= _JOINER
    return table


def _count_words(text: str) -> int:
    """`len(_WORD.findall(text))`, computed on an array of code points (for speed: the regular
    expression costs about 80 ns a character, 1.5 ms for a 20,000-character article)."""
    if len(text) < _SHORT:
        return len(_WORD.findall(text))
    flags = _flags(text)
    return _words_of(flags, (flags & _ALNUM).astype(bool))


def _flags(text: str) -> np.ndarray:
    """The `_character_table` bits of each character of `text`."""
    points = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4")
    flags = _character_table()[np.minimum(points, 0xFFFF)]
    for index in np.flatnonzero(points > 0xFFFF).tolist():  # beyond the table: rare, one at a time
        point = int(points[index])
        astral_cjk = _CJK_ASTRAL[0] <= point <= _CJK_ASTRAL[1]
        flags[index] = chr(point).isalnum() * _ALNUM + astral_cjk * _CJK_BIT
    return flags


def _words_of(flags: np.ndarray, alnum: np.ndarray) -> int:
    """The `_WORD` matches of a text given its `_flags` and which characters count as letters or digits.

    A match is a maximal run of letters and digits, extended over each joiner that has a letter or
    digit on both sides; so the matches are the runs, less the joiners that merge two of them.
    """
    if not len(flags):
        return 0
    runs = int(alnum[0]) + np.count_nonzero(alnum[1:] & ~alnum[:-1])
    joiner = (flags & _JOINER).astype(bool)
    merged = np.count_nonzero(joiner[1:-1] & alnum[:-2] & alnum[2:])
    return int(runs - merged)


def _split(text: str) -> tuple[int, int]:
    """(CJK characters, words of other scripts) in the text: the words of the text with every CJK
    character replaced by a space (`_CJK.sub(" ", text)`).

    For speed, a long text is read once as an array of code points for both counts (the CJK
    pattern's `findall` alone cost as much as the word count); a CJK character's place then
    counts as a space (neither a letter nor a joiner), just as after the substitution."""
    if len(text) < _SHORT:
        cjk = len(_CJK.findall(text))
        return cjk, len(_WORD.findall(_CJK.sub(" ", text) if cjk else text))
    flags = _flags(text)
    cjk = int(np.count_nonzero(flags & _CJK_BIT))
    return cjk, _words_of(flags, (flags & (_ALNUM | _CJK_BIT)) == _ALNUM)


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
