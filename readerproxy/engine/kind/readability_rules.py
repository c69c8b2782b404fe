"""Readability.js's class/id rules, shared by the DOM heuristic, the metadata and the readerable check.

From Mozilla Readability.js (`REGEXPS.unlikelyCandidates`, `okMaybeItsACandidate`,
`UNLIKELY_ROLES`) and Readability-readerable.js, whose own copy of the "maybe a candidate" rule
lacks `mathjax`; both are kept as Readability.js has them.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

UNLIKELY_CANDIDATES = re.compile(
    r"-ad-|ai2html|banner|breadcrumbs|combx|comment|community|cover-wrap|disqus|extra|footer|gdpr|"
    r"header|legends|menu|related|remark|replies|rss|shoutbox|sidebar|skyscraper|social|sponsor|"
    r"supplemental|ad-break|agegate|pagination|pager|popup|yom-remote",
    re.I,
)
MAYBE_CANDIDATE = re.compile(r"and|article|body|column|content|main|mathjax|shadow", re.I)
#: Readability-readerable.js's okMaybeItsACandidate (no `mathjax`).
MAYBE_CANDIDATE_READERABLE = re.compile(r"and|article|body|column|content|main|shadow", re.I)
UNLIKELY_ROLES = frozenset(
    {"menu", "menubar", "complementary", "navigation", "alert", "alertdialog", "dialog"}
)


_Trie = dict[str, "_Trie"]


def literal_trie(words: Iterable[str]) -> str:
    """A regular expression matching any of `words`, with shared prefixes factored out
    ("p(?:age|ost)" for "page|post"). For speed: Python's `re` tries every alternative of a flat
    list at every position, a factored one follows one branch per character (a third faster on
    the class lists of the shared pages, which are scored once per distinct value)."""
    trie: _Trie = {}
    for word in words:
        node = trie
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}  # a word ends here

    def pattern(node: _Trie) -> str:
        branches = [re.escape(char) + pattern(child) for char, child in sorted(node.items()) if char]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body})?" if "" in node else body

    return pattern(trie)


def _for_lowered_ascii(pattern: re.Pattern[str]) -> re.Pattern[str]:
    """The same search, case-sensitive and factored, for ASCII text already lower-cased.

    For speed: `re.I` over a long alternation is slow in Python (`UNLIKELY_CANDIDATES` took 10 ms
    for the 324 class/id strings of a 200 KB page, the bulk of a first visit's element scoring;
    this takes 0.5 ms). On ASCII text the two agree: the words are ASCII, and ASCII letters match
    case-insensitively exactly when their lower cases are equal (the folds `re.I` adds, such as
    the long s or the Kelvin sign, need non-ASCII text, which keeps the original pattern).
    """
    words = tuple(pattern.pattern.lower().split("|"))
    assert all(re.fullmatch(r"[a-z0-9-]+", word) for word in words), pattern.pattern
    return re.compile(literal_trie(words))


_LOWERED = {
    rule: _for_lowered_ascii(rule)
    for rule in (UNLIKELY_CANDIDATES, MAYBE_CANDIDATE, MAYBE_CANDIDATE_READERABLE)
}


@functools.lru_cache(maxsize=4096)
def unlikely_by_class_id(match_string: str, maybe: re.Pattern[str] = MAYBE_CANDIDATE) -> bool:
    """The class and id (joined by a space) say boilerplate, and nothing in them says content.

    Cached, for speed: a page's elements (and a site's pages) share a handful of class strings,
    and the rule is a long case-insensitive alternation (searched in its `_for_lowered_ascii`
    form when the text is ASCII)."""
    lowered_maybe = _LOWERED.get(maybe)
    if lowered_maybe is not None and match_string.isascii():
        lowered = match_string.lower()
        return bool(_LOWERED[UNLIKELY_CANDIDATES].search(lowered)) and not lowered_maybe.search(lowered)
    return bool(UNLIKELY_CANDIDATES.search(match_string)) and not maybe.search(match_string)
