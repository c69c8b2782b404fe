"""DANAg: content vs code characters of fixed-length segments (Mohammadzadeh et al. 2011/2013).

The source is cut into segments of equal length (AdDANAg's normalised lines, which make the method
independent of the page's own line breaks); each segment gets its content characters (text) and
code characters (tags); the difference content - code is smoothed naively (a moving average); the
main-content area is grown from the segment with the highest smoothed value over the neighbouring
segments with more content than code, allowing gaps of a few segments; the text of that area is the
main content. Ghorbani, Mohammadzadeh, Nazemi 2014 (§3-4) pair it with the hyperlink Filters 1-3
(`link_filter`, see `linkfilters`).

Choices where the papers (known here through Ghorbani et al. 2014, §2-3) leave details open:
- The source is the cleaned <body> with whitespace between tags dropped: a segment holds
  `segment_length` characters of tag code and non-whitespace text, so indentation counts as nothing.
- A segment's content / code counts are exact: a text or tag token spanning a segment border is
  split at it (prefix sums evaluated with np.interp).
- Naive smoothing: the mean of the segment and `radius` segments on either side.
- Boundary detection: from the peak, the area takes in every segment with a positive smoothed value
  that lies at most `max_gap` non-positive segments away from the area, on both sides (the same
  growth as density's region, on segments).
- Score (the badge): the share of content characters among all characters of the area.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..convert import check_range
from ..extraction import Block, Extraction, register
from ..parse.document import TEXT, Document
from .linkfilters import FilteredView, LinkFilter, filter_links, link_filter_value
from .numeric import grow_region


@dataclass(frozen=True, slots=True)
class DanagParams:
    """Segment length, smoothing radius and allowed gap (segments); link_filter of Ghorbani et al. 2014.

    Ranges: segment_length in [10, 10000] characters (shorter segments multiply the work per page);
    radius in [0, 100] segments; max_gap in [0, 1000] segments; link_filter 0-3 (`LinkFilter`).
    """

    segment_length: int = 150
    radius: int = 1
    max_gap: int = 50
    link_filter: LinkFilter = LinkFilter.NONE

    def __post_init__(self) -> None:
        check_range("segment_length", self.segment_length, 10, 10000)
        check_range("radius", self.radius, 0, 100)
        check_range("max_gap", self.max_gap, 0, 1000)
        object.__setattr__(self, "link_filter", link_filter_value(self.link_filter))


@dataclass(frozen=True, slots=True)
class Segments:
    """The normalised source of one page: where each body token lies and each segment's counts."""

    token_begin: np.ndarray  # position of each body token in the normalised source
    token_end: np.ndarray
    content: np.ndarray  # content (text) characters per segment
    code: np.ndarray  # code (tag) characters per segment


def token_widths(doc: Document, view: FilteredView) -> tuple[np.ndarray, np.ndarray]:
    """Width in the normalised source and content characters of every body token."""
    span = doc.body_span
    is_text = doc.tokens.kind[span] == TEXT
    content = np.where(is_text, view.chars[span], 0)
    width = np.where(is_text, content, np.where(view.present[span], view.length[span], 0))
    return width.astype(np.float64), content.astype(np.float64)


def segment_counts(width: np.ndarray, content: np.ndarray, segment_length: int) -> Segments:
    """Content and code characters of every segment of `segment_length` characters."""
    end = np.cumsum(width)
    begin = end - width
    total = float(end[-1]) if len(end) else 0.0
    n_segments = max(1, int(np.ceil(total / segment_length)))
    # Content characters as a function of position: rises inside text tokens, flat inside tags.
    positions = np.concatenate(([0.0], end))
    content_so_far = np.concatenate(([0.0], np.cumsum(content)))
    borders = np.minimum(np.arange(n_segments + 1, dtype=np.float64) * segment_length, total)
    content_at = np.interp(borders, positions, content_so_far) if len(end) else np.zeros(len(borders))
    per_segment = np.diff(content_at)
    return Segments(begin, end, per_segment, np.diff(borders) - per_segment)


def naive_smoothing(values: np.ndarray, radius: int) -> np.ndarray:
    """Moving average over the segment and `radius` segments on each side."""
    n = len(values)
    if radius <= 0 or n == 0:
        return values.astype(np.float64)
    csum = np.concatenate(([0.0], np.cumsum(values, dtype=np.float64)))
    index = np.arange(n)
    low, high = np.maximum(index - radius, 0), np.minimum(index + radius + 1, n)
    return np.asarray((csum[high] - csum[low]) / (high - low))


def main_content_area(smoothed: np.ndarray, max_gap: int) -> tuple[int, int]:
    """Boundary detection: grow from the peak over positive segments at most `max_gap` apart."""
    if len(smoothed) == 0:
        return 0, -1
    peak = int(np.argmax(smoothed))
    if smoothed[peak] <= 0:  # no segment has more content than code: the best one alone
        return peak, peak
    # `max_gap` segments between two members is a step of max_gap + 1 positions.
    return grow_region(np.flatnonzero(smoothed > 0), peak, max_gap + 1)


def refine_boundaries(difference: np.ndarray, left: int, right: int) -> tuple[int, int]:
    """Move the area's edges outwards over adjacent segments whose own content exceeds their code.

    Smoothing blurs the edges of the area (an article's first and last segment sit beside code);
    the unsmoothed difference content - code puts them back.
    """
    if right < left:
        return left, right
    while left > 0 and difference[left - 1] > 0:
        left -= 1
    while right + 1 < len(difference) and difference[right + 1] > 0:
        right += 1
    return left, right


@register(
    "danag",
    "Main-content area of fixed-length segments with more content than code characters (Mohammadzadeh et al.).",
    DanagParams,
    reference="Mohammadzadeh et al. 2011/2013 (DANAg, AdDANAg), as summarised in Ghorbani, Mohammadzadeh, Nazemi 2014, sections 2-3",
)
def extract_danag(doc: Document, params: DanagParams) -> Extraction:
    """DANAg: the body tokens inside the main-content area of the content-minus-code curve."""
    selection = np.zeros(len(doc.tokens), dtype=bool)
    span = doc.body_span
    first = span.start
    if span.stop <= first:
        return Extraction(blocks=[], selection=selection)
    view = filter_links(doc, params.link_filter)
    width, content = token_widths(doc, view)
    segments = segment_counts(width, content, params.segment_length)
    difference = segments.content - segments.code
    smoothed = naive_smoothing(difference, params.radius)
    left, right = refine_boundaries(difference, *main_content_area(smoothed, params.max_gap))

    length = params.segment_length
    segment_of_begin = (segments.token_begin // length).astype(np.int64)
    segment_of_end = (np.maximum(segments.token_end - 1, segments.token_begin) // length).astype(np.int64)
    if right >= left:
        inside = (segment_of_end >= left) & (segment_of_begin <= right)
        selection[span] = inside & view.present[span]
    token_start = np.searchsorted(segment_of_begin, np.arange(len(smoothed)), side="left") + first
    token_end = np.searchsorted(segment_of_begin, np.arange(len(smoothed)), side="right") - 1 + first
    blocks = [
        Block(
            int(token_start[i]),
            int(token_end[i]),
            float(smoothed[i]),
            bool(left <= i <= right),
            label=f"segment {i}",
        )
        for i in np.flatnonzero((segments.content > 0) & (token_end >= token_start))
    ]
    area_content = float(segments.content[left : right + 1].sum())
    area_total = area_content + float(segments.code[left : right + 1].sum())
    return Extraction(
        blocks=blocks,
        selection=selection,
        signals={
            "content": segments.content,
            "code": segments.code,
            "smoothed": smoothed,
            "area": np.array([left, right], dtype=np.float64),
        },
        score=area_content / area_total if area_total else 0.0,
    )
