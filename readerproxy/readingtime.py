"""Word count and reading time for any script.

Chinese, Japanese and Korean text has no spaces between words, so it is counted by characters
(about 450 a minute for a native reader); every other script by whitespace-separated words
(about 230 a minute).
"""

from __future__ import annotations

import math
import re

WORDS_PER_MINUTE = 230
CJK_CHARACTERS_PER_MINUTE = 450

#: Han, Hiragana, Katakana, Hangul and their compatibility / extension blocks.
_CJK = re.compile(
    "[\u1100-\u11ff\u2e80-\u2fdf\u3040-\u30ff\u3100-\u312f\u3130-\u318f\u31a0-\u31ff"
    "\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f]"
)
_WORD = re.compile(r"[^\W_]+(?:['’.\-][^\W_]+)*")


def _split(text: str) -> tuple[int, int]:
    """(CJK characters, words of other scripts) in the text."""
    cjk = len(_CJK.findall(text))
    other = _CJK.sub(" ", text) if cjk else text
    return cjk, len(_WORD.findall(other))


def word_count(text: str) -> int:
    """Words, with every CJK character counted as one."""
    cjk, words = _split(text)
    return cjk + words


def reading_minutes(text: str) -> int:
    """Minutes to read the text (at least 1 when there is any text, 0 when there is none)."""
    cjk, words = _split(text)
    if not cjk and not words:
        return 0
    return max(1, math.ceil(cjk / CJK_CHARACTERS_PER_MINUTE + words / WORDS_PER_MINUTE))
