"""Readability.js's class/id rules, shared by the DOM heuristic, the metadata and the readerable check.

From Mozilla Readability.js (`REGEXPS.unlikelyCandidates`, `okMaybeItsACandidate`,
`UNLIKELY_ROLES`) and Readability-readerable.js, whose own copy of the "maybe a candidate" rule
lacks `mathjax`; both are kept as Readability.js has them.
"""

from __future__ import annotations

import functools
import re

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


@functools.lru_cache(maxsize=4096)
def unlikely_by_class_id(match_string: str, maybe: re.Pattern[str] = MAYBE_CANDIDATE) -> bool:
    """The class and id (joined by a space) say boilerplate, and nothing in them says content.

    Cached, for speed: a page's elements (and a site's pages) share a handful of class strings,
    and the rule is a long case-insensitive alternation."""
    return bool(UNLIKELY_CANDIDATES.search(match_string)) and not maybe.search(match_string)
