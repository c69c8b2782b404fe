"""Metrics of extracted text against a reference: pure functions on strings.

- `shingle_counts` / `shingle_summary`: the ScrapingHub article-body metric
  (scrapinghub/article-extraction-benchmark, `evaluate.py`), as described in ../shared/README.md.
- `lcs_sequence_score` / `lcs_string_score`: character longest common subsequence and longest common
  substring F1 with all whitespace removed (Moreno, Deschacht, Moens 2009, section 5.2).
- `bag_of_words_score`: F1 of the multisets of lower-cased `\\w+` tokens.
- `title_match`: exact match of whitespace-normalised titles (readability set).

The per-page scores are `Score(precision, recall, f1)`; `mean_score` averages them over pages.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rapidfuzz.distance import LCSseq

from ..engine.parse.text import SPACE, WORD, squash

SHINGLE_SIZE = 4


@dataclass(frozen=True, slots=True)
class Score:
    """Precision, recall and F1 of one prediction against one reference."""

    precision: float
    recall: float
    f1: float


def f1_of(precision: float, recall: float) -> float:
    """Harmonic mean, 0 when both are 0."""
    return 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0


# --- ScrapingHub shingles -------------------------------------------------------------------------


def tokenize(text: str | None) -> list[str]:
    """Tokens of the ScrapingHub metric: `\\w+` matches (Unicode), case kept, as in evaluate.py."""
    return WORD.findall(text or "")


def shingles(tokens: Sequence[str], n: int = SHINGLE_SIZE) -> Counter[str]:
    """Multiset of n-token shingles.

    As in evaluate.py (`_ngrams`): a text of fewer than n tokens yields ONE shingle made of all its
    tokens (`range(max(1, len(tokens) - n + 1))`), so a 2-word prediction can still match a 2-word
    reference; an empty text yields none.
    """
    result: Counter[str] = Counter()
    for i in range(max(1, len(tokens) - n + 1)):
        shingle = " ".join(tokens[i : i + n])
        if shingle:
            result[shingle] += 1
    return result


@dataclass(frozen=True, slots=True)
class ShingleCounts:
    """One page's shingle tp, fp, fn divided by their sum (so long pages weigh no more than short)."""

    tp: float
    fp: float
    fn: float
    exact: bool  # the token lists are identical (the benchmark's "accuracy")

    @property
    def precision(self) -> float | None:
        """evaluate.py `precision_score`; None for pages left out of the mean (tp + fp == 0)."""
        if self.tp + self.fp <= 0:
            return None
        return 1.0 if self.fp == self.fn == 0 else self.tp / (self.tp + self.fp)

    @property
    def recall(self) -> float | None:
        """evaluate.py `recall_score`; None for pages left out of the mean (tp + fn == 0)."""
        if self.tp + self.fn <= 0:
            return None
        return 1.0 if self.fp == self.fn == 0 else self.tp / (self.tp + self.fn)

    @property
    def f1(self) -> float:
        """Per-page F1, for distributions only (the benchmark's F1 comes from the mean P and R)."""
        return f1_of(self.precision or 0.0, self.recall or 0.0)


def shingle_counts(true: str | None, pred: str | None, n: int = SHINGLE_SIZE) -> ShingleCounts:
    """evaluate.py `string_shingle_matching` plus `get_accuracy` for one page.

    Edge cases as the reference: both texts empty gives tp = fp = fn = 0 (no normalisation), and
    such a page is left out of both means; an empty prediction against a non-empty reference is
    left out of the precision mean and scores recall 0; accuracy compares the token lists.
    """
    true_tokens, pred_tokens = tokenize(true), tokenize(pred)
    true_shingles, pred_shingles = shingles(true_tokens, n), shingles(pred_tokens, n)
    tp = sum((true_shingles & pred_shingles).values())
    fp = sum((pred_shingles - true_shingles).values())
    fn = sum((true_shingles - pred_shingles).values())
    total = tp + fp + fn
    if total > 0:
        return ShingleCounts(tp / total, fp / total, fn / total, true_tokens == pred_tokens)
    return ShingleCounts(0.0, 0.0, 0.0, true_tokens == pred_tokens)


@dataclass(frozen=True, slots=True)
class ShingleSummary:
    """The benchmark's numbers over a set of pages."""

    precision: float
    recall: float
    f1: float
    accuracy: float


def shingle_summary(pages: Iterable[ShingleCounts]) -> ShingleSummary:
    """evaluate.py `metrics_from_tp_fp_fns`: mean precision and recall over the pages where they
    are defined, F1 of the two means, accuracy = share of pages with identical token lists.

    Where evaluate.py would raise on an empty mean (no page defines it), we report 0.
    """
    counts = list(pages)
    if not counts:
        return ShingleSummary(0.0, 0.0, 0.0, 0.0)
    precisions = [p for c in counts if (p := c.precision) is not None]
    recalls = [r for c in counts if (r := c.recall) is not None]
    precision = statistics.fmean(precisions) if precisions else 0.0
    recall = statistics.fmean(recalls) if recalls else 0.0
    accuracy = statistics.fmean(float(c.exact) for c in counts)
    return ShingleSummary(precision, recall, f1_of(precision, recall), accuracy)


# --- Moreno et al. 2009, section 5.2: character LCSequence and LCString ----------------------------


def strip_whitespace(text: str) -> str:
    """Moreno et al. 2009, §5.2 compares the texts with all whitespace removed."""
    return SPACE.sub("", text)


def _length_score(common: int, true_length: int, pred_length: int) -> Score:
    """Precision = common / |pred|, recall = common / |true|; an empty side scores 1 only if both are."""
    if true_length == 0 and pred_length == 0:
        return Score(1.0, 1.0, 1.0)
    precision = common / pred_length if pred_length else 0.0
    recall = common / true_length if true_length else 0.0
    return Score(precision, recall, f1_of(precision, recall))


def longest_common_subsequence(a: str, b: str) -> int:
    """Length of the longest common subsequence (rapidfuzz, bit-parallel in C: O(n*m/64))."""
    return int(LCSseq.similarity(a, b))


def lcs_sequence_score(true: str, pred: str) -> Score:
    """Moreno et al. 2009, §5.2 LCSequence: P, R, F1 of the longest common character subsequence."""
    t, p = strip_whitespace(true), strip_whitespace(pred)
    return _length_score(longest_common_subsequence(t, p), len(t), len(p))


def _suffix_automaton(text: str) -> tuple[list[dict[str, int]], list[int], list[int]]:
    """Suffix automaton of `text` (Blumer et al. 1985): transitions, suffix links, state lengths.

    Built online in O(len(text)) amortised; every substring of `text` is a path from state 0.
    """
    transitions: list[dict[str, int]] = [{}]
    link = [-1]
    length = [0]
    last = 0
    for char in text:
        current = len(length)
        transitions.append({})
        link.append(-1)
        length.append(length[last] + 1)
        state = last
        while state != -1 and char not in transitions[state]:
            transitions[state][char] = current
            state = link[state]
        if state == -1:
            link[current] = 0
        else:
            target = transitions[state][char]
            if length[state] + 1 == length[target]:
                link[current] = target
            else:  # split: a clone of target with the shorter length
                clone = len(length)
                transitions.append(dict(transitions[target]))
                link.append(link[target])
                length.append(length[state] + 1)
                while state != -1 and transitions[state].get(char) == target:
                    transitions[state][char] = clone
                    state = link[state]
                link[target] = link[current] = clone
        last = current
    return transitions, link, length


def longest_common_substring(a: str, b: str) -> int:
    """Length of the longest common (contiguous) substring in O(len(a) + len(b)).

    A suffix automaton of the shorter string, then one pass over the longer one keeping the
    longest match ending at each character (following suffix links on a mismatch). Measured on
    ScrapingHub texts it runs ~1.7x faster than a numpy rolling-hash binary search, and it is
    exact; the classic DP is O(n*m).
    """
    if len(a) > len(b):
        a, b = b, a
    if not a:
        return 0
    if a in b:  # C fast path: the whole shorter text occurs in the longer one
        return len(a)
    transitions, link, length = _suffix_automaton(a)
    state = matched = best = 0
    for char in b:
        while state and char not in transitions[state]:
            state = link[state]
            matched = length[state]
        if char in transitions[state]:
            state = transitions[state][char]
            matched += 1
            best = max(best, matched)
    return best


def lcs_string_score(true: str, pred: str) -> Score:
    """Moreno et al. 2009, §5.2 LCString: P, R, F1 of the longest common character substring."""
    t, p = strip_whitespace(true), strip_whitespace(pred)
    return _length_score(longest_common_substring(t, p), len(t), len(p))


# --- Bag of words and titles ----------------------------------------------------------------------


def bag_of_words_score(true: str, pred: str) -> Score:
    """P, R, F1 of the multisets of lower-cased `\\w+` tokens."""
    true_bag = Counter(token.lower() for token in tokenize(true))
    pred_bag = Counter(token.lower() for token in tokenize(pred))
    common = sum((true_bag & pred_bag).values())
    return _length_score(common, sum(true_bag.values()), sum(pred_bag.values()))


def normalize_title(title: str | None) -> str:
    """Whitespace runs collapsed to one space, ends stripped."""
    return squash(title or "")


def title_match(true: str | None, pred: str | None) -> bool:
    """Exact match of whitespace-normalised titles."""
    return normalize_title(true) == normalize_title(pred)


def mean_score(scores: Iterable[Score]) -> Score:
    """Mean per-page precision, recall and F1 (Moreno et al. 2009, Table 2, averages per-page F1)."""
    items = list(scores)
    if not items:
        return Score(0.0, 0.0, 0.0)
    return Score(
        statistics.fmean(s.precision for s in items),
        statistics.fmean(s.recall for s in items),
        statistics.fmean(s.f1 for s in items),
    )
