"""Line-Block classification (Pan Ei San, "Boilerplate removal and content extraction from dynamic
web pages"): TTR, ATTR and TKD per line-block, then thresholds.

Steps of the paper (section 3): the page without head, scripts, styles and comments (the cleaned
`Document`, <body> only); its source lines; lines merged into line-blocks; per block the text-to-tag
ratio TTR (1), the anchor-text-to-text ratio ATTR (2) and the title keyword density TKD (3); a block
is content iff TTR > t1 and ATTR < t2 and TKD >= t3, with the fixed thresholds (30, 0.2, 2) or the
adaptive thresholds t = lambda * sigma computed per page (section 2.2).

Choices where the paper is garbled:
- Line-block (2.1 B, "a line or some continuous lines, in which the distance of any two neighbor
  lines with text" [is small]): consecutive lines with text are one block while at most `max_gap`
  lines without text lie between them; a block runs from its first to its last text line.
- TTR counts a block's non-whitespace text characters per tag; ATTR the share of those characters
  inside anchors.
- TKD: formula (3) as printed, 1 - |m_k / sum F(m_k)|, is below 1 and could never reach the paper's
  threshold 2. Read instead as the number of occurrences in the block of the title's keywords (its
  words of four or more letters, so that "the" and "and" do not count; case-folded; the site name
  cut off), so "TKD >= 2" means "the block mentions the title at least twice". A page without a
  title has no keywords, and the TKD test is then skipped.
- How TKD combines: step 4 ANDs it with the other two tests, step 3 uses it to add blocks that the
  density tests miss ("tag with less density also has some important information"). ANDed, it drops
  every paragraph that does not repeat the headline (shingle F1 0.69 / 0.53 against 0.85 / 0.86 on
  the two shared sets), so the default `tkd_rule="rescue"` reads step 3: content iff
  (TTR > t1 and ATTR < t2) or (TKD >= t3 and ATTR < t2); `tkd_rule="and"` is step 4 as printed.
- Line-blocks with `max_gap = 0` (runs of consecutive text lines) measured best; merging across
  text-less lines glues navigation to the article.
- Adaptive thresholds (2.2, `adaptive=True`): t1 = lambda_ttr * sigma(TTR) and t3 = lambda_tkd *
  sigma(TKD) over the page's blocks. ATTR keeps its fixed t2: it is already a ratio, and lambda *
  sigma(ATTR) is 0 on a page whose blocks have no links, which would reject every block.
- A page where no block passes (a short page: fixed thresholds are absolute) keeps its highest-TTR
  block with ATTR < t2, since the paper takes every page to have main content.
- Score (the badge): the share of the blocks' text that is kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

import numpy as np

from ..convert import check_choice, check_range
from ..extraction import Block, Extraction, register
from ..parse.document import TEXT, Document, ranges_mask
from .linkfilters import (
    BodyLines,
    FilteredView,
    LinkFilter,
    body_lines,
    filter_links,
    line_token_mask,
    line_token_ranges,
    link_filter_value,
)

#: A title keyword: a word (`parse.text.WORD`) of four characters or more, as Line-Block reads the
#: title (shorter words are articles and prepositions).
_WORD = re.compile(r"\w{4,}")
_TITLE_SEPARATOR = re.compile(r"\s+[-|–—:·»/]\s+")


TkdRule = Literal["and", "rescue"]


@dataclass(frozen=True, slots=True)
class LineBlockParams:
    """Pan Ei San, §2.2: fixed thresholds TTR 30, ATTR 0.2, TKD 2; or adaptive lambda * sigma.

    Ranges: ttr_threshold in [0, 10000] characters per tag; attr_threshold in [0, 1] (a ratio);
    tkd_threshold in [0, 1000] keyword occurrences; lambda_ttr and lambda_tkd in [0, 100];
    max_gap in [0, 1000] lines; tkd_rule "and" or "rescue"; link_filter 0-3 (`LinkFilter`).
    """

    ttr_threshold: float = 30.0
    attr_threshold: float = 0.2
    tkd_threshold: float = 2.0
    adaptive: bool = False
    lambda_ttr: float = 1.0
    lambda_tkd: float = 1.0
    tkd_rule: TkdRule = "rescue"
    max_gap: int = 0
    link_filter: LinkFilter = LinkFilter.NONE

    def __post_init__(self) -> None:
        check_range("ttr_threshold", self.ttr_threshold, 0, 10000)
        check_range("attr_threshold", self.attr_threshold, 0, 1)
        check_range("tkd_threshold", self.tkd_threshold, 0, 1000)
        check_range("lambda_ttr", self.lambda_ttr, 0, 100)
        check_range("lambda_tkd", self.lambda_tkd, 0, 100)
        check_range("max_gap", self.max_gap, 0, 1000)
        check_choice("tkd_rule", self.tkd_rule, TkdRule)
        object.__setattr__(self, "link_filter", link_filter_value(self.link_filter))


@dataclass(frozen=True, slots=True)
class LineBlocks:
    """Line-blocks of one page: body line ranges and the three features of each."""

    first: np.ndarray  # first body line of each block
    last: np.ndarray  # last body line of each block (inclusive)
    ttr: np.ndarray
    attr: np.ndarray
    tkd: np.ndarray
    text_chars: np.ndarray

    def __len__(self) -> int:
        return len(self.first)


def get_line_blocks(lines: BodyLines, max_gap: int) -> tuple[np.ndarray, np.ndarray]:
    """Pan Ei San, §3 step 2: (first, last) body line of every line-block of text lines at most max_gap apart."""
    text_lines = np.flatnonzero(lines.text_chars > 0)
    if not len(text_lines):
        return text_lines, text_lines
    new_block = np.diff(text_lines) > max_gap + 1
    starts = np.concatenate(([0], np.flatnonzero(new_block) + 1))
    ends = np.concatenate((starts[1:] - 1, [len(text_lines) - 1]))
    return text_lines[starts], text_lines[ends]


def title_keywords(title: str) -> frozenset[str]:
    """Pan Ei San, §2.1 C: words of four or more letters of the title's longest part, case-folded.

    A title like "Headline - Site Name" is cut at its separators and the longest part is kept, so
    the site's name (repeated in its header and footer) does not count as a title keyword.
    """
    parts = _TITLE_SEPARATOR.split(title)
    longest = max(parts, key=len) if parts else ""
    return frozenset(word.casefold() for word in _WORD.findall(longest))


def keyword_hits_per_line(
    doc: Document, view: FilteredView, lines: BodyLines, keywords: frozenset[str]
) -> np.ndarray:
    """Occurrences of title keywords on each body line (one regex pass over the body text)."""
    hits = np.zeros(len(lines))
    span = doc.body_span
    if not keywords or span.stop <= span.start:
        return hits
    t = doc.tokens
    index = np.flatnonzero((t.kind[span] == TEXT) & view.present[span]) + span.start
    if not len(index):
        return hits
    texts = [t.text[i] for i in index.tolist()]
    offsets = np.cumsum([0, *(len(text) + 1 for text in texts)])
    body_text = "\n".join(texts).casefold()
    pattern = re.compile(r"\b(?:" + "|".join(sorted(map(re.escape, keywords))) + r")\b")
    positions = [match.start() for match in pattern.finditer(body_text)]
    if positions:
        token = index[np.searchsorted(offsets, positions, side="right") - 1]
        np.add.at(hits, t.line[token] - lines.first_line, 1)
    return hits


def block_sums(values: np.ndarray, first: np.ndarray, last: np.ndarray) -> np.ndarray:
    """Sum of a per-line array over each block's line range (prefix sums)."""
    csum = np.concatenate(([0.0], np.cumsum(values, dtype=np.float64)))
    return np.asarray(csum[last + 1] - csum[first])


def get_features(doc: Document, view: FilteredView, lines: BodyLines, max_gap: int) -> LineBlocks:
    """Pan Ei San, §3 step 3: TTR (1), ATTR (2) and TKD (3) of every line-block."""
    first, last = get_line_blocks(lines, max_gap)
    text = block_sums(lines.text_chars, first, last)
    tags = block_sums(lines.tags, first, last)
    anchors = block_sums(lines.anchor_chars, first, last)
    hits = keyword_hits_per_line(doc, view, lines, title_keywords(doc.title))
    return LineBlocks(
        first=first,
        last=last,
        ttr=text / np.maximum(tags, 1),
        attr=anchors / np.maximum(text, 1),
        tkd=block_sums(hits, first, last),
        text_chars=text,
    )


def thresholds(blocks: LineBlocks, params: LineBlockParams) -> tuple[float, float, float]:
    """Pan Ei San, §2.2: (t1, t2, t3), fixed or lambda * sigma of each feature over the page's blocks."""
    if not params.adaptive or len(blocks) < 2:
        return params.ttr_threshold, params.attr_threshold, params.tkd_threshold
    return (
        params.lambda_ttr * float(blocks.ttr.std()),
        params.attr_threshold,
        params.lambda_tkd * float(blocks.tkd.std()),
    )


def threshold_check(
    blocks: LineBlocks, t1: float, t2: float, t3: float, use_tkd: bool, tkd_rule: str = "and"
) -> np.ndarray:
    """Pan Ei San, §3 step 4: content iff TTR > t1 and ATTR < t2 and TKD >= t3 (or step 3's TKD rescue)."""
    dense = (blocks.ttr > t1) & (blocks.attr < t2)
    if not use_tkd:
        return np.asarray(dense)
    titled = blocks.tkd >= t3
    if tkd_rule == "rescue":
        return np.asarray(dense | (titled & (blocks.attr < t2)))
    return np.asarray(dense & titled)


def at_least_one_block(blocks: LineBlocks, content: np.ndarray, t2: float) -> np.ndarray:
    """When no block passes (a short page under fixed thresholds), keep the highest-TTR block with ATTR < t2.

    The paper assumes every page has main content; without this a page of one short paragraph
    (TTR below 30) would come out empty.
    """
    if content.any() or not len(blocks):
        return content
    candidates = np.flatnonzero(blocks.attr < t2)
    if not len(candidates):
        return content
    content = content.copy()
    content[candidates[np.argmax(blocks.ttr[candidates])]] = True
    return content


@register(
    "lineblock",
    "Line-blocks kept by thresholds on text-to-tag ratio, anchor-text ratio and title keywords (Pan Ei San).",
    LineBlockParams,
    reference="Pan Ei San, sections 2-3",
)
def extract_lineblock(doc: Document, params: LineBlockParams) -> Extraction:
    """Line-Block: keep the line-blocks whose TTR, ATTR and TKD pass the thresholds."""
    view = filter_links(doc, params.link_filter)
    lines = body_lines(doc, view)
    blocks = get_features(doc, view, lines, params.max_gap)
    t1, t2, t3 = thresholds(blocks, params)
    content = threshold_check(blocks, t1, t2, t3, bool(title_keywords(doc.title)), params.tkd_rule)
    content = at_least_one_block(blocks, content, t2)

    line_selected = ranges_mask(len(lines), blocks.first[content], blocks.last[content])
    starts, ends = line_token_ranges(doc, lines)
    out = [
        Block(
            int(starts[a]),
            int(ends[b]),
            float(ttr),
            bool(keep),
            label=f"lines {a + lines.first_line}-{b + lines.first_line}",
        )
        for a, b, ttr, keep in zip(
            blocks.first.tolist(), blocks.last.tolist(), blocks.ttr.tolist(), content.tolist(), strict=True
        )
    ]
    total = float(blocks.text_chars.sum())
    kept = float(blocks.text_chars[content].sum())
    return Extraction(
        blocks=out,
        selection=line_token_mask(doc, view, lines, line_selected),
        signals={
            "ttr": blocks.ttr,
            "attr": blocks.attr,
            "tkd": blocks.tkd,
            "block_first_line": blocks.first + lines.first_line,
            "block_last_line": blocks.last + lines.first_line,
            "thresholds": np.array([t1, t2, t3]),
        },
        score=kept / total if total else 0.0,
    )
