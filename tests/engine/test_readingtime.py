"""Word count and reading time: CJK by characters, everything else by words."""

from __future__ import annotations

import random

from readerproxy.engine.metadata import readingtime
from readerproxy.engine.metadata.readingtime import ReadingTime, reading_minutes, reading_time, word_count


def test_words_of_spaced_scripts() -> None:
    assert word_count("Hello world, it’s an e-mail.") == 5
    assert word_count("مرحبا بالعالم") == 2
    assert reading_minutes("word " * 230) == 1
    assert reading_minutes("word " * 1150) == 5


def test_cjk_is_counted_by_characters() -> None:
    chinese = "中文文本" * 1982  # 7,928 characters: about 18 minutes, not "1 min read"
    assert word_count(chinese) == 7928
    assert reading_minutes(chinese) == 18
    assert word_count("日本語のテキスト and English") == 10


def test_no_text_is_no_time() -> None:
    assert reading_minutes("") == 0 and word_count("  ") == 0


def test_the_array_count_is_the_regular_expression_count() -> None:
    """`_count_words` counts long texts on an array of code points; it must agree with the regular
    expression it stands for on every kind of character: joiners at edges and doubled, the
    underscore, digits, letters of other scripts, characters beyond the BMP, lone surrogates."""
    rng = random.Random(7)
    alphabet = [*"ab9_ '’.-,\n\t", "é", "ß", "٣", "Ⅻ", "𝐀", "😀", "\ud800", "中", "\u00a0", "\u2028"]
    for _ in range(300):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(readingtime._SHORT, 3000)))
        assert readingtime._count_words(text) == len(readingtime._WORD.findall(text))
    every = "".join(chr(point) for point in range(0x10000)) * 2  # each BMP character, next to others
    assert readingtime._count_words(every) == len(readingtime._WORD.findall(every))


def test_one_pass_gives_both_counts() -> None:
    text = "Hello world, it’s an e-mail. " * 100 + "日本語"
    assert reading_time(text) == ReadingTime(word_count(text), reading_minutes(text))
    assert reading_time(text).words == 503


def test_the_array_counts_are_the_substitution_and_the_patterns() -> None:
    """Long texts are read once as code points for both counts: the CJK characters must be those
    `_CJK` finds, and the words those `_WORD` finds once each CJK character is a space, with CJK
    next to joiners, letters, digits and characters beyond the BMP (in and out of `_CJK`)."""
    rng = random.Random(11)
    alphabet = [*"ab9_ '’.-,\n", "é", "𝐀", "😀", "\ud800", "中", "ア", "한", "ｰ", "\U00020001", "\U00031350"]
    for _ in range(300):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(readingtime._SHORT, 3000)))
        cjk = len(readingtime._CJK.findall(text))
        words = len(readingtime._WORD.findall(readingtime._CJK.sub(" ", text)))
        assert readingtime._split(text) == (cjk, words)
    every = "".join(chr(point) for point in range(0x10000))
    assert readingtime._split(every)[0] == len(readingtime._CJK.findall(every))
