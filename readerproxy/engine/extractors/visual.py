"""DOM heuristic scoring with visual features, the visually based solution (Berg 2020, §5.2 and §6.1).

The plain-HTML evaluation of `heuristic` (Berg 2020, §5.1 and §6) is computed first; the visually
based solution "reuses the same base heuristic features, but adds a few new ones on top of them"
(§6.1), read from the rendered page (`Document.layout`, see `layout.py` and `browser.py`):

* **Main-content boundary** (§6.1). "Elements are weighted according to their evaluation score. The
  algorithm takes the minimum and maximum x position of all the elements and sorts them in a list.
  The top and bottom 10% are removed from the list to avoid outliers. Finally, the algorithm chooses
  the minimum and maximum position from the remaining elements." Every element outside the boundary
  gets `boundary_penalty` (−1000, as in the paper).
* **Contrast** (§6.1). The contrast between text and background uses relative luminance (WCAG 2.0);
  "the most common contrast ratio is set as the default for the website. Every element that now has
  a lower contrast ratio than the default will get a penalty".
* **Visibility.** Invisible (display:none, visibility, opacity 0), zero-size and off-screen elements
  are dropped: a person does not see them (the paper's browser plugin read the rendered page).

Choices where the paper is open:

* Elements of the boundary: the text holders of `heuristic` with a positive evaluation that are
  visible (the paper's "elements" are the parents of text nodes, §6). Each contributes its left and
  its right edge with its score as the weight; the trimmed 10 % are 10 % of the total weight at
  each end, so many small boilerplate blocks cannot outvote the article.
* "Outside of the boundary": the element's horizontal centre lies outside it (a headline wider
  than the text column is inside; a sidebar is outside).
* Contrast of an element: the character-weighted mean of the contrast of its text nodes (each text
  node in its own parent's colours, so a grey byline inside a black paragraph counts as grey), links
  left out where the element has other text (a blue link is not faint text); the
  "most common" contrast is the mode over characters, rounded to 0.1, so one long article outweighs
  many short menu entries. "Lower" means lower by more than `contrast_margin` (colour rounding and
  anti-aliasing values differ by a little). The paper gives no value for the contrast penalty:
  −50 (twice the threshold, enough to drop a block that was only just kept) is our choice.
* A page that hides itself until its scripts run (`html {display: none}` against framing,
  `body {visibility: hidden}` or opacity 0 against a flash of unstyled content) shows nothing with
  JavaScript off, while a person, with scripts on, sees it. When under `MIN_VISIBLE_SHARE` (25 %)
  of the body's text is visible, visibility is not used; only laid-out boxes (width and height
  above 0) place the boundary, and only they can be outside it. On the Readability set this
  concerned 2 of 130 pages (engadget, seattletimes-1), which otherwise came out empty.
* Font size is in the snapshot but not scored: the paper found that scoring text size "increased
  the error rate more than [it] helped" (§7).
* An element at most 1 px wide or high that clips its overflow hides its whole subtree (the
  "visually hidden" idiom of 1×1 px, overflow hidden); a zero-height element that does not clip (a
  container of floats) hides nothing.

Without a layout (a Document not made by the browser service) the visual terms are all zero and the
answer equals `heuristic`'s; the server and the evaluation always render first
(`Extractor.needs_browser`), and the signal `layout_elements` says how many elements had a box.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..convert import check_range
from ..extraction import Extraction, register
from ..parse.document import TEXT, Document
from ..parse.layout import Layout
from .heuristic import (
    WEIGHTS,
    HeuristicParams,
    Scored,
    container_scores,
    empty_extraction,
    holder_blocks,
    nothing_to_score,
    score_elements,
    select_article,
    selection_score,
)

#: Below this share of the text visible, the page hides itself until its scripts run (see the module
#: docstring) and visibility is not used.
MIN_VISIBLE_SHARE = 0.25


@dataclass(frozen=True, slots=True)
class VisualParams(HeuristicParams):
    """`heuristic`'s parameters plus the visual ones (Berg 2020, §6.1).

    Ranges: boundary_trim in [0, 0.45] (share of the score weight trimmed at each end; 0.1 in the
    paper); boundary_penalty and contrast_penalty in [-10000, 0]; contrast_margin in [0, 20]
    (contrast ratios run from 1 to 21).
    """

    boundary_trim: float = 0.1
    boundary_penalty: float = -1000.0
    contrast_penalty: float = -50.0
    contrast_margin: float = 0.5

    def __post_init__(self) -> None:
        HeuristicParams.__post_init__(self)
        check_range("boundary_trim", self.boundary_trim, 0, 0.45)
        check_range("boundary_penalty", self.boundary_penalty, -10000, 0)
        check_range("contrast_penalty", self.contrast_penalty, -10000, 0)
        check_range("contrast_margin", self.contrast_margin, 0, 20)


@dataclass(frozen=True, slots=True)
class VisualScores:
    """The visual score components of every element (arrays indexed like `Document.elements`)."""

    dropped: np.ndarray  # bool: invisible, zero-size or off-screen (or inside a clipped empty box)
    boundary: tuple[float, float]  # left and right x of the main content (NaN: none found)
    position: np.ndarray  # float: boundary penalty, 0 inside
    contrast: np.ndarray  # float: contrast ratio of the element's own text (NaN: no text)
    default_contrast: float  # the page's most common contrast ratio (NaN: no text)
    contrast_score: np.ndarray  # float: contrast penalty, 0 when not below the default


def hidden_elements(doc: Document, layout: Layout) -> np.ndarray:
    """Elements a person does not see: invisible, zero-size, off-screen, or inside an element at most
    1 px wide or high that clips its overflow."""
    x, y, w, h = (layout.box[:, k].astype(np.float64) for k in range(4))
    known = layout.known
    zero = (w <= 0) | (h <= 0)
    off = (x + w <= 0) | (y + h <= 0) | (x >= layout.page_width) | (y >= layout.page_height)
    hidden = known & (~layout.visible | zero | off)
    clipping = np.flatnonzero(known & ((w <= 1) | (h <= 1)) & layout.clipped)
    if len(clipping):
        hidden |= doc.mask_elements(clipping)[doc.start]
    return hidden


def content_boundary(
    left: np.ndarray, right: np.ndarray, weight: np.ndarray, trim: float
) -> tuple[float, float]:
    """Berg 2020, §6.1: the score-weighted x positions of the elements (left and right edges), sorted,
    with `trim` of the weight removed at each end; the smallest and largest remaining position."""
    positions = np.concatenate([left, right]).astype(np.float64)
    weights = np.concatenate([weight, weight]).astype(np.float64)
    usable = np.isfinite(positions) & (weights > 0)
    positions, weights = positions[usable], weights[usable]
    if len(positions) == 0:
        return float("nan"), float("nan")
    order = np.argsort(positions, kind="stable")
    positions, weights = positions[order], weights[order]
    total = weights.sum()
    after = np.cumsum(weights) / total  # share of the weight up to and including each position
    before = after - weights / total
    keep = (after > trim + 1e-12) & (before < 1.0 - trim - 1e-12)
    if not keep.any():  # one position holds the whole middle
        keep = (before <= 0.5) & (after >= 0.5)
    return float(positions[keep].min()), float(positions[keep].max())


def text_contrast(doc: Document, layout: Layout, holder: np.ndarray) -> tuple[np.ndarray, float]:
    """Contrast per element (character-weighted over the text nodes it owns, each in its parent's
    colours; link text only counts where the element has no other text) and the page's most common
    contrast (mode over characters, to 0.1)."""
    n = len(doc.elements)
    t = doc.tokens
    span = doc.body_span
    index = np.arange(span.start, span.stop)
    index = index[(t.kind[index] == TEXT) & (t.chars[index] > 0) & (t.element[index] >= 0)]
    element = t.element[index]
    ratio = layout.contrast[element]
    seen = layout.known[element] & np.isfinite(ratio)
    element, ratio, index = element[seen], ratio[seen], index[seen]
    if len(element) == 0:
        return np.full(n, np.nan), float("nan")
    chars = t.chars[index].astype(np.float64)
    owner = holder[element]

    def mean_by_owner(weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        total = np.bincount(owner, weights=weight, minlength=n)[:n]
        summed = np.bincount(owner, weights=weight * ratio, minlength=n)[:n]
        return np.divide(summed, total, out=np.full(n, np.nan), where=total > 0), total

    plain, plain_chars = mean_by_owner(np.where(t.in_anchor[index], 0.0, chars))
    every, _ = mean_by_owner(chars)
    per_element = np.where(plain_chars > 0, plain, every)
    bins = np.rint(ratio * 10).astype(np.int64)
    mode = int(np.argmax(np.bincount(bins, weights=chars)))
    return per_element, mode / 10.0


def visible_share(doc: Document, hidden: np.ndarray) -> float:
    """Share of the body's text characters that sit in elements a person sees (1 for no text)."""
    t = doc.tokens
    span = doc.body_span
    index = np.arange(span.start, span.stop)
    index = index[(t.kind[index] == TEXT) & (t.element[index] >= 0)]
    chars = t.chars[index].astype(np.float64)
    total = chars.sum()
    return float(chars[~hidden[t.element[index]]].sum() / total) if total > 0 else 1.0


def visual_scores(doc: Document, scored: Scored, layout: Layout, params: VisualParams) -> VisualScores:
    """Berg 2020, §6.1: the visual score components from the layout and the plain evaluation."""
    n = len(doc.elements)
    holders = scored.holders
    dropped = hidden_elements(doc, layout)
    if visible_share(doc, dropped) < MIN_VISIBLE_SHARE:
        dropped = np.zeros(n, dtype=bool)  # the page hides itself until its scripts run
    box = layout.box.astype(np.float64)
    laid_out = layout.known & (box[:, 2] > 0) & (box[:, 3] > 0)
    candidates = holders[(scored.scores[holders] > 0) & ~dropped[holders] & laid_out[holders]]
    left = box[candidates, 0]
    boundary = content_boundary(
        left, left + box[candidates, 2], scored.scores[candidates], params.boundary_trim
    )
    position = np.zeros(n)
    if np.isfinite(boundary[0]):
        center = box[:, 0] + box[:, 2] / 2.0
        outside = laid_out & ((center < boundary[0]) | (center > boundary[1]))
        position[outside] = params.boundary_penalty
    contrast, default = text_contrast(doc, layout, scored.features.holder)
    contrast_score = np.zeros(n)
    if np.isfinite(default):
        low = np.isfinite(contrast) & (contrast < default - params.contrast_margin)
        contrast_score[low] = params.contrast_penalty
    return VisualScores(dropped, boundary, position, contrast, default, contrast_score)


@register(
    "visual",
    "DOM scoring with the rendered page's boundary, contrast and visibility (Berg 2020, visual).",
    VisualParams,
    reference="Berg 2020, sections 5.2 and 6.1 (visually based solution)",
    needs_browser=True,
)
def extract_visual(doc: Document, params: VisualParams) -> Extraction:
    """Heuristic scores plus the visual ones; keep the visible holders above the threshold."""
    if nothing_to_score(doc):
        return empty_extraction(doc)
    scored = score_elements(doc, params)
    n = len(doc.elements)
    layout = doc.layout
    if layout is None or len(layout.known) != n:
        visual = VisualScores(
            np.zeros(n, dtype=bool),
            (float("nan"), float("nan")),
            np.zeros(n),
            np.full(n, np.nan),
            float("nan"),
            np.zeros(n),
        )
        known = 0
    else:
        visual = visual_scores(doc, scored, layout, params)
        known = int(layout.known.sum())
    final = scored.scores + visual.position + visual.contrast_score
    eligible = np.where(visual.dropped, -np.inf, final)
    chosen, root, selection = select_article(doc, scored, eligible, params)
    t = doc.tokens
    selection &= ~(visual.dropped[np.where(t.element >= 0, t.element, 0)] & (t.element >= 0))
    holders = scored.holders
    return Extraction(
        blocks=holder_blocks(doc, holders, final, chosen),
        selection=selection,
        signals={
            "element_score": container_scores(doc, final, holders, WEIGHTS.children_share),
            "heuristic_score": scored.scores,
            "threshold": np.array([params.threshold]),
            "article_element": np.array([root]),
            "visual_boundary": np.array(visual.boundary),
            "visual_position": visual.position,
            "visual_contrast": visual.contrast,
            "visual_contrast_default": np.array([visual.default_contrast]),
            "visual_contrast_score": visual.contrast_score,
            "visual_dropped": visual.dropped.astype(np.float64),
            "layout_elements": np.array([known]),
            "page_width": np.array([layout.page_width if layout is not None else np.nan]),
            "visual_center_x": layout.center_x() if layout is not None and known else np.full(n, np.nan),
        },
        score=selection_score(final[holders], chosen[holders]),
    )
