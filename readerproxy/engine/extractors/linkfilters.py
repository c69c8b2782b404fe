"""Hyperlink pre-processing Filters 1-3 over the linear view (Ghorbani, Mohammadzadeh, Nazemi 2014, §3).

The paper rewrites the HTML source before a line-based extractor reads it. Here the same rewrite is
a pure function of the linear view: `filter_links(doc, n)` returns a `FilteredView`, the per-token
arrays the line-based extractors read instead of `doc.tokens` (which tokens are still there, the code
length of every tag, the characters of every text), plus the per-line sums over <body> that CETR and
Line-Block call "the lines of the source".

- Filter 0: the page as it is.
- Filter 1 (§3.1, Algorithm 1): every <a> is removed with its anchor text (and anything
  else inside it). Its text is gone from the output too, as in the paper (the recall loss it reports).
- Filter 2 (§3.2, Algorithm 2): every attribute of every <a> is removed, so the start tag is `<a>`.
- Filter 3 (§3.3, Algorithm 3, from AdDANAg): the attributes of every <a> are replaced by
  `length - 7` spaces, `length` being the anchor text's length and 7 the length of `<a></a>`, so
  the code of a hyperlink (start plus end tag) is exactly as long as its anchor text (never less
  than 7). Reading chosen: `length` counts the anchor text's non-whitespace characters, the unit every
  line-based extractor here counts content in.

Filters 2 and 3 only change the code length of anchor tags. Extractors that count tags (CETR's and
Line-Block's text-to-tag ratios) or only text (density) therefore read the same numbers under
Filters 0, 2 and 3; the filters were designed for DANAg, which weighs content characters against
code characters.
"""

from __future__ import annotations

import enum
import typing
from dataclasses import dataclass

import numpy as np

from ..convert import coerce
from ..parse.document import OPEN, TEXT, Document, indices_of


class LinkFilter(enum.IntEnum):
    """The pre-processing filters of Ghorbani, Mohammadzadeh, Nazemi 2014 (§3), by their numbers."""

    NONE = 0  # the page as it is
    REMOVE_LINKS = 1  # Filter 1 (§3.1): every <a> removed with its anchor text
    STRIP_ATTRIBUTES = 2  # Filter 2 (§3.2): every attribute of every <a> removed
    PAD_ATTRIBUTES = 3  # Filter 3 (§3.3): the attributes of <a> replaced by anchor-text-length spaces


#: The filter numbers (0 = no pre-processing).
LINK_FILTERS = tuple(LinkFilter)
#: Length of `<a>`, the start tag Filter 2 leaves.
BARE_START_TAG = 3
#: Length of `</a>`.
END_TAG = 4


@dataclass(frozen=True, slots=True)
class FilteredView:
    """The linear view after a hyperlink filter: which tokens remain and their lengths."""

    link_filter: LinkFilter
    present: np.ndarray  # bool per token: False where Filter 1 removed the token
    length: np.ndarray  # int64 per token: code length of a tag, or text length, 0 when removed
    chars: np.ndarray  # int64 per token: non-whitespace characters of text tokens, 0 otherwise
    is_tag: np.ndarray  # bool per token: a present start or end tag
    anchor_chars: np.ndarray  # int64 per token: `chars` of text inside an anchor


@dataclass(frozen=True, slots=True)
class BodyLines:
    """Per-line sums over the <body> tokens of a filtered view: the source lines of Line-Block and CETR."""

    first_line: int  # document line number of body line 0
    text_chars: np.ndarray  # non-whitespace text characters
    anchor_chars: np.ndarray  # non-whitespace text characters inside anchors
    tags: np.ndarray  # number of tags
    code_length: np.ndarray  # characters of tag code

    def __len__(self) -> int:
        return len(self.tags)


def link_filter_value(link_filter: int | str | LinkFilter) -> LinkFilter:
    """The LinkFilter of a number 0-3 (int or string) or a member name; ValueError naming 0-3 otherwise."""
    return typing.cast(LinkFilter, coerce("link_filter", link_filter, LinkFilter))


def filter_links(doc: Document, link_filter: int = LinkFilter.NONE) -> FilteredView:
    """Ghorbani et al. 2014, §3: the linear view as the line-based extractors see it after Filter `link_filter`."""
    link_filter = link_filter_value(link_filter)
    t = doc.tokens
    is_text = t.kind == TEXT
    present = np.ones(len(t), dtype=bool)
    length = t.length.astype(np.int64)
    chars = np.where(is_text, t.chars, 0).astype(np.int64)
    if link_filter == LinkFilter.REMOVE_LINKS:
        present = remove_hyperlinks(doc)
        length = np.where(present, length, 0)
        chars = np.where(present, chars, 0)
    elif link_filter == LinkFilter.STRIP_ATTRIBUTES:
        length = strip_anchor_attributes(doc, length)
    elif link_filter == LinkFilter.PAD_ATTRIBUTES:
        length = normalise_anchor_code(doc, length)
    return FilteredView(
        link_filter=link_filter,
        present=present,
        length=length,
        chars=chars,
        is_tag=present & ~is_text,
        anchor_chars=np.where(t.in_anchor, chars, 0),
    )


def anchor_elements(doc: Document) -> np.ndarray:
    """Element indices of every <a>."""
    return np.array(indices_of(doc.tag, "a"), dtype=np.int64)


def remove_hyperlinks(doc: Document) -> np.ndarray:
    """Filter 1 (Algorithm 1): mask of the tokens left after removing every <a> with its content."""
    return ~doc.tokens.in_anchor


def strip_anchor_attributes(doc: Document, length: np.ndarray) -> np.ndarray:
    """Filter 2 (Algorithm 2): every anchor start tag becomes `<a>`."""
    anchors = anchor_elements(doc)
    length = length.copy()
    start_tags = doc.start[anchors]
    length[start_tags[doc.tokens.kind[start_tags] == OPEN]] = BARE_START_TAG
    return length


def normalise_anchor_code(doc: Document, length: np.ndarray) -> np.ndarray:
    """Filter 3 (Algorithm 3): anchor attributes become `LT - 7` spaces, so code length == anchor text."""
    anchors = anchor_elements(doc)
    length = length.copy()
    if not len(anchors):
        return length
    t = doc.tokens
    text_chars = np.concatenate(([0], np.cumsum(np.where(t.kind == TEXT, t.chars, 0), dtype=np.int64)))
    starts, ends = doc.start[anchors], doc.end[anchors]
    anchor_text = text_chars[ends + 1] - text_chars[starts]
    # `<a` + (LT - 7) spaces + `>` is LT - 4 characters; with `</a>` the hyperlink's code is LT.
    length[starts] = BARE_START_TAG + np.maximum(anchor_text - 7, 0)
    return length


def body_lines(doc: Document, view: FilteredView) -> BodyLines:
    """Per-line sums of the filtered view over the lines of <body> (np.bincount, no Python loop)."""
    span = doc.body_span
    if span.stop <= span.start:
        empty = np.zeros(0)
        return BodyLines(0, empty, empty, empty, empty)
    line = doc.tokens.line[span]
    first_line = int(line[0])
    offset = line - first_line
    n = int(offset[-1]) + 1

    def per_line(weights: np.ndarray) -> np.ndarray:
        return np.bincount(offset, weights=weights, minlength=n)

    return BodyLines(
        first_line=first_line,
        text_chars=per_line(view.chars[span]),
        anchor_chars=per_line(view.anchor_chars[span]),
        tags=per_line(view.is_tag[span].astype(np.float64)),
        code_length=per_line(np.where(view.is_tag[span], view.length[span], 0)),
    )


def line_token_mask(doc: Document, view: FilteredView, lines: BodyLines, selected: np.ndarray) -> np.ndarray:
    """Token mask of the present <body> tokens on the selected body lines."""
    mask = np.zeros(len(doc.tokens), dtype=bool)
    span = doc.body_span
    if span.stop <= span.start or not len(selected):
        return mask
    offset = doc.tokens.line[span] - lines.first_line
    mask[span] = np.asarray(selected, dtype=bool)[offset] & view.present[span]
    return mask


def line_token_ranges(doc: Document, lines: BodyLines) -> tuple[np.ndarray, np.ndarray]:
    """First and last token index of every body line (a line without tokens gets last < first)."""
    span = doc.body_span
    n = len(lines)
    if span.stop <= span.start:
        return np.zeros(n, dtype=np.int64), np.full(n, -1, dtype=np.int64)
    offset = doc.tokens.line[span] - lines.first_line
    numbers = np.arange(n)
    starts = np.searchsorted(offset, numbers, side="left") + span.start
    ends = np.searchsorted(offset, numbers, side="right") - 1 + span.start
    return starts, ends
