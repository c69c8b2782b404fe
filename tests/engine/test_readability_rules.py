"""Readability.js's class/id rules: the fast form for ASCII text agrees with the case-insensitive patterns."""

from __future__ import annotations

import random
import re

from readerproxy.engine.kind.readability_rules import (
    MAYBE_CANDIDATE,
    MAYBE_CANDIDATE_READERABLE,
    UNLIKELY_CANDIDATES,
    unlikely_by_class_id,
)


def reference(match_string: str, maybe: re.Pattern[str]) -> bool:
    return bool(UNLIKELY_CANDIDATES.search(match_string)) and not maybe.search(match_string)


def test_the_rule_agrees_with_readabilitys_case_insensitive_patterns() -> None:
    rule = unlikely_by_class_id.__wrapped__  # not the memo: every string is computed
    words = [*UNLIKELY_CANDIDATES.pattern.split("|"), *MAYBE_CANDIDATE.pattern.split("|")]
    pieces = [*words, *(word[1:] for word in words), *(word[:-1] for word in words), " ", "-", "_", "x", "2"]
    rng = random.Random(11)
    for _ in range(5000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(1, 5)))
        text = "".join(c.upper() if rng.random() < 0.3 else c for c in text)
        for maybe in (MAYBE_CANDIDATE, MAYBE_CANDIDATE_READERABLE):
            assert rule(text, maybe) == reference(text, maybe), (text, maybe.pattern)
    # Non-ASCII text keeps the original patterns, with re.I's folds: the long s is an "s",
    # the Kelvin sign a "k".
    for text in ("ſidebar", "ſhoutbox x", "\u212aarticle-footer", "Sidebar \u00e9", "menu ſ"):
        assert rule(text, MAYBE_CANDIDATE) == reference(text, MAYBE_CANDIDATE), text
    assert rule("ſidebar", MAYBE_CANDIDATE) is True
