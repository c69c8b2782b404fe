"""Metrics on handcrafted strings whose answers are worked out by hand."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from readerproxy.research.metrics import (
    Score,
    ShingleCounts,
    bag_of_words_score,
    lcs_sequence_score,
    lcs_string_score,
    longest_common_subsequence,
    longest_common_substring,
    mean_score,
    shingle_counts,
    shingle_summary,
    shingles,
    title_match,
    tokenize,
)


def test_tokenize_is_unicode_word_runs_with_case_kept() -> None:
    assert tokenize("Hello, wörld! 42 -- naïve_case Ελλάδα") == [
        "Hello",
        "wörld",
        "42",
        "naïve_case",
        "Ελλάδα",
    ]
    assert tokenize(None) == []


def test_shingles_are_four_token_multisets() -> None:
    assert shingles("a b c d e".split()) == Counter({"a b c d": 1, "b c d e": 1})
    assert shingles("a b c d a b c d".split())["a b c d"] == 2


def test_short_texts_make_one_shingle_of_all_their_tokens() -> None:
    """evaluate.py: range(max(1, len(tokens) - n + 1)) gives one shingle for < 4 tokens."""
    assert shingles(["one", "two"]) == Counter({"one two": 1})
    assert shingles([]) == Counter()


def test_identical_texts_score_one_and_are_exact() -> None:
    counts = shingle_counts("The quick brown fox jumps.", "The quick, brown fox jumps")
    assert (counts.tp, counts.fp, counts.fn, counts.exact) == (1.0, 0.0, 0.0, True)
    assert counts.precision == counts.recall == 1.0


def test_one_changed_word_gives_thirds() -> None:
    # true {abcd, bcde}, pred {abcd, bcdx}: tp = fp = fn = 1, normalised to 1/3 each.
    counts = shingle_counts("a b c d e", "a b c d x")
    assert counts.tp == pytest.approx(1 / 3)
    assert counts.fp == pytest.approx(1 / 3)
    assert counts.fn == pytest.approx(1 / 3)
    assert counts.precision == pytest.approx(0.5)
    assert counts.recall == pytest.approx(0.5)
    assert counts.exact is False


def test_repeated_shingles_count_as_a_multiset() -> None:
    # true: abcd x2, bcda, cdab, dabc (5 shingles); pred: abcd once. tp=1, fp=0, fn=4.
    counts = shingle_counts("a b c d a b c d", "a b c d")
    assert counts.tp == pytest.approx(0.2)
    assert counts.fn == pytest.approx(0.8)
    assert counts.precision == pytest.approx(1.0)
    assert counts.recall == pytest.approx(0.2)


def test_case_matters_as_in_the_reference() -> None:
    counts = shingle_counts("Hello world foo bar", "hello world foo bar")
    assert counts.tp == 0.0
    assert counts.exact is False


def test_empty_prediction_is_left_out_of_precision_and_scores_zero_recall() -> None:
    counts = shingle_counts("a b c d e", "")
    assert counts.precision is None
    assert counts.recall == 0.0


def test_both_empty_is_left_out_of_both_means_but_exact() -> None:
    counts = shingle_counts("", "  ")
    assert (counts.tp, counts.fp, counts.fn) == (0.0, 0.0, 0.0)
    assert counts.precision is None and counts.recall is None
    assert counts.exact is True


def test_short_texts_match_only_as_a_whole() -> None:
    assert shingle_counts("one two", "one two").precision == 1.0
    partial = shingle_counts("one two", "one two three")
    assert partial.precision == 0.0 and partial.recall == 0.0


def test_summary_means_over_defined_pages_and_f1_of_the_means() -> None:
    pages = [
        shingle_counts("a b c d e", "a b c d e"),  # P 1, R 1, exact
        shingle_counts("a b c d e", "a b c d x"),  # P .5, R .5
        shingle_counts("a b c d e", ""),  # P undefined, R 0
    ]
    summary = shingle_summary(pages)
    assert summary.precision == pytest.approx(0.75)
    assert summary.recall == pytest.approx(0.5)
    assert summary.f1 == pytest.approx(2 * 0.75 * 0.5 / 1.25)
    assert summary.accuracy == pytest.approx(1 / 3)


def test_summary_of_nothing_is_zero() -> None:
    assert shingle_summary([]).f1 == 0.0
    assert shingle_summary([ShingleCounts(0.0, 0.0, 0.0, True)]).precision == 0.0


def test_longest_common_substring_of_the_papers_example() -> None:
    # Moreno, Deschacht, Moens 2009, §5.2: the paper's example strings; the shared run is " jumps over the brown " (22 characters).
    a, b = "the dog jumps over the brown fox", "the fox jumps over the brown dog"
    assert longest_common_substring(a, b) == len(" jumps over the brown ")
    assert longest_common_substring("", "abc") == 0
    assert longest_common_substring("abc", "xabcx") == 3
    assert longest_common_substring("abab", "baba") == 3


def _substring_by_dp(a: str, b: str) -> int:
    best = 0
    previous = [0] * (len(b) + 1)
    for i in range(1, len(a) + 1):
        current = [0] * (len(b) + 1)
        for j in range(1, len(b) + 1):
            if a[i - 1] == b[j - 1]:
                current[j] = previous[j - 1] + 1
                best = max(best, current[j])
        previous = current
    return best


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="abcé ", max_size=24), st.text(alphabet="abcé", max_size=24))
def test_longest_common_substring_agrees_with_the_quadratic_definition(a: str, b: str) -> None:
    assert longest_common_substring(a, b) == _substring_by_dp(a, b)
    assert longest_common_substring(b, a) == _substring_by_dp(a, b)


def test_longest_common_subsequence() -> None:
    assert longest_common_subsequence("abcde", "ace") == 3
    assert longest_common_subsequence("", "ace") == 0


def test_lcs_scores_ignore_whitespace() -> None:
    # true "abcd", pred "abXcd": subsequence 4 -> P 4/5, R 1; substring "cd"/"ab" 2 -> P 2/5, R 2/4.
    sequence = lcs_sequence_score("ab cd", "ab\nX c d")
    assert sequence.precision == pytest.approx(0.8)
    assert sequence.recall == pytest.approx(1.0)
    assert sequence.f1 == pytest.approx(2 * 0.8 / 1.8)
    string = lcs_string_score("ab cd", "ab\nX c d")
    assert string.precision == pytest.approx(0.4)
    assert string.recall == pytest.approx(0.5)


def test_lcs_scores_of_empty_texts() -> None:
    assert lcs_sequence_score("", " ") == Score(1.0, 1.0, 1.0)
    assert lcs_string_score("abc", "") == Score(0.0, 0.0, 0.0)
    assert lcs_sequence_score("", "abc") == Score(0.0, 0.0, 0.0)


def test_bag_of_words_is_a_lower_cased_multiset() -> None:
    # true {the:2, cat, hat}, pred {the:2, dog}: 2 in common -> P 2/3, R 2/4.
    score = bag_of_words_score("The cat, the hat.", "the THE dog")
    assert score.precision == pytest.approx(2 / 3)
    assert score.recall == pytest.approx(0.5)
    assert score.f1 == pytest.approx(2 * (2 / 3) * 0.5 / (2 / 3 + 0.5))


def test_title_match_normalises_whitespace_only() -> None:
    assert title_match("  A\n title ", "A title")
    assert not title_match("A title", "A Title")
    assert title_match(None, "")


def test_mean_score_averages_each_field() -> None:
    mean = mean_score([Score(1.0, 0.5, 0.6), Score(0.0, 0.5, 0.2)])
    assert mean == Score(0.5, 0.5, pytest.approx(0.4))
    assert mean_score([]) == Score(0.0, 0.0, 0.0)
