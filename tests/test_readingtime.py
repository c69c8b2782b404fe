"""Word count and reading time: CJK by characters, everything else by words."""

from __future__ import annotations

from readerproxy.readingtime import reading_minutes, word_count


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
