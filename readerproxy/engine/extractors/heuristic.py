"""DOM heuristic scoring for reader modes, plain-HTML solution (Berg 2020, §5.1 and §6).

Every element gets a static evaluation score w1·f1 + … + wn·fn (Berg 2020, §5): the weights are the
one table `WEIGHTS` below. The features are the ones the paper lists for the plain-HTML solution:
word count, the HTML tag, semantic HTML5 tags (article/main/section vs nav/header/footer/aside),
ARIA roles, class and id hints, plus link density. A second pass adds part of the neighbours'
scores (§6, "takes the neighbors of the element into account and adds part of their score to it"),
and the elements whose score exceeds a threshold between 10 and 200 (§6) are the main content.

Choices where the paper is open (each one measured with shingle F1 on the shared data):

* Scored units. The paper scores "the HTML tag which contains the text node" (§6). Text inside
  inline markup (<a>, <em>, <span> …) is credited to the nearest block-level ancestor (a
  *text holder*), so a paragraph with a link is one unit, not three.
* Context. Semantic tags, roles and class/id hints describe a whole subtree: their weights are
  inherited by every descendant (a paragraph inside <nav> is navigation; "it makes sense to look
  at the parent element", §5.1). This is what gives sidebars the large negative scores of Fig. 6.1.
* Neighbours. The neighbours of a text holder are the previous and next text holders in document
  order; each adds `neighbour_share` of its own score, clipped below at `neighbour_floor` (the
  paper's aim is to lift weak elements surrounded by strong ones; an unclipped -4000 menu next to
  the first paragraph would sink it).
* Link density. Words count only outside links and the link density weighs -200: a block that
  is all links (menus, teaser cards) is never article text, even inside an <article>.
* Containers (elements without own text) are scored with their context and tag plus
  `children_share` of the scores of the text holders inside them, for the overlays.
* Coherent article. The paper keeps every element above the threshold, wherever it is. We keep
  the selected holders inside the smallest element that contains `coverage` of the selected
  words, so a stray footer paragraph above the threshold does not join the article.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from ..convert import check_choice, check_range
from ..elements import WEIGHTS, ElementFeatures, Weights, features_of
from ..extraction import Extraction, HolderBlocks, register
from ..parse.document import Document

ArticleRoot = Literal["coverage", "top-candidate"]


@dataclass(frozen=True, slots=True)
class HeuristicParams:
    """Berg 2020, §6: threshold between 10 and 200; 25 measured best on the shared data.

    Shingle F1 on ScrapingHub / Readability: 10 -> 0.90/0.925, 25 -> 0.90/0.928,
    50 -> 0.90/0.914, 100 -> 0.88/0.885 (a flat optimum; 25 is not tuned to a page).

    Ranges: threshold and inner_threshold in [-10000, 10000] (scores are weighted word counts);
    coverage and candidate_share in (0, 1]; neighbour_share in [0, 1]; article_root "coverage"
    or "top-candidate".
    """

    threshold: float = 25.0
    coverage: float = 0.85  # share of selected words the article element must contain (our step)
    neighbour_share: float = WEIGHTS.neighbour_share
    unlikely_candidates: bool = False  # drop Readability.js's unlikely candidates first (not in Berg 2020)
    article_root: ArticleRoot = "coverage"  # how the article element is found
    candidate_share: float = 0.7  # top-candidate: climb until the element holds this share of the words
    inner_threshold: float | None = (
        None  # inside the article element, keep holders above this (None: threshold)
    )

    def __post_init__(self) -> None:
        check_range("threshold", self.threshold, -10000, 10000)
        check_range("coverage", self.coverage, 0, 1, low_open=True)
        check_range("neighbour_share", self.neighbour_share, 0, 1)
        check_choice("article_root", self.article_root, ArticleRoot)
        check_range("candidate_share", self.candidate_share, 0, 1, low_open=True)
        if self.inner_threshold is not None:
            check_range("inner_threshold", self.inner_threshold, -10000, 10000)


def evaluate(features: ElementFeatures, weights: Weights = WEIGHTS) -> np.ndarray:
    """Berg 2020, §5: the static evaluation w1·f1 + … + wn·fn of every text holder."""
    link_density = np.divide(
        features.anchor_chars, features.chars, out=np.zeros_like(features.chars), where=features.chars > 0
    )
    return (
        weights.word * features.words * (1.0 - link_density)
        + weights.link_density * link_density
        + features.own
        + features.context
    )


def add_neighbours(scores: np.ndarray, holders: np.ndarray, share: float, floor: float) -> np.ndarray:
    """Berg 2020, §6: add `share` of the previous and next text holder's score (at least `floor`)."""
    base = scores[holders]
    lent = np.maximum(base, floor)  # what np.clip(base, floor, None) calls, without its overhead
    spread = base.copy()
    spread[1:] += share * lent[:-1]
    spread[:-1] += share * lent[1:]
    result = scores.copy()
    result[holders] = spread
    return result


def container_scores(doc: Document, scores: np.ndarray, holders: np.ndarray, share: float) -> np.ndarray:
    """Score of every element: holders keep theirs, containers add `share` of the holders inside them."""
    holder_scores = np.zeros(len(scores), dtype=np.float64)
    holder_scores[holders] = scores[holders]
    result = scores + share * doc.sum_descendants(holder_scores)
    result[holders] = scores[holders]
    return result


def top_candidate_element(doc: Document, selected: np.ndarray, words: np.ndarray, share: float) -> int:
    """Readability.js's top candidate, widened: the words of each selected holder count fully for its
    parent and half for its grandparent; from the best-scoring element, climb to the first ancestor
    holding `share` of the selected words (-1: none selected). Teaser lists, whose paragraphs sit in
    one card each, lose to the article body, whose paragraphs share a parent."""
    mass = np.where(selected, words, 0.0)
    total = float(mass.sum())
    if total <= 0:
        return -1
    holders = np.flatnonzero(mass > 0)
    parents = doc.parent[holders]
    has_parent = parents >= 0
    candidate = np.zeros(len(mass))
    np.add.at(candidate, parents[has_parent], mass[holders][has_parent])
    grandparents = doc.parent[parents[has_parent]]
    has_grandparent = grandparents >= 0
    np.add.at(candidate, grandparents[has_grandparent], 0.5 * mass[holders][has_parent][has_grandparent])
    inside = doc.sum_descendants(mass)
    element = int(np.argmax(candidate))
    while element >= 0 and inside[element] < share * total - 1e-9:
        element = int(doc.parent[element])
    return element


def article_element(doc: Document, selected: np.ndarray, words: np.ndarray, coverage: float) -> int:
    """The smallest element that contains `coverage` of the selected words (-1: none selected)."""
    mass = np.where(selected, words, 0.0)
    total = float(mass.sum())
    if total <= 0:
        return -1
    inside = doc.sum_descendants(mass)
    candidates = np.flatnonzero(inside >= coverage * total - 1e-9)
    if len(candidates) == 0:
        return -1
    size = doc.end[candidates] - doc.start[candidates]
    return int(candidates[np.argmin(size)])


def nothing_to_score(doc: Document) -> bool:
    """A page without tokens or elements: nothing for the element scoring to work on."""
    return len(doc.tokens) == 0 or not doc.elements


def empty_extraction(doc: Document) -> Extraction:
    """The answer for a page with nothing to score (heuristic and visual)."""
    return Extraction(
        blocks=[], selection=np.zeros(len(doc.tokens), dtype=bool), signals={"element_score": np.zeros(0)}
    )


@register(
    "heuristic",
    "DOM scoring of elements with weighted features and neighbour propagation (Berg 2020).",
    HeuristicParams,
    reference="Berg 2020, sections 5.1 and 6 (plain-HTML solution)",
)
def extract_heuristic(doc: Document, params: HeuristicParams) -> Extraction:
    """Score every element, keep the text holders above the threshold inside the article element."""
    if nothing_to_score(doc):
        return empty_extraction(doc)
    scored = score_elements(doc, params)
    chosen, root, selection = select_article(doc, scored, scored.scores, params)
    return Extraction(
        blocks=holder_blocks(doc, scored.holders, scored.scores, chosen),
        selection=selection,
        signals={
            "element_score": scored.element_score,
            "threshold": np.array([params.threshold]),
            "article_element": np.array([root]),
        },
        score=selection_score(scored.scores[scored.holders], chosen[scored.holders]),
    )


@dataclass(frozen=True, slots=True)
class Scored:
    """The evaluation of a page (Berg 2020, §5.1 and §6): features, text holders and their scores."""

    features: ElementFeatures
    holders: np.ndarray  # int: the text holders (elements that own text)
    scores: np.ndarray  # float per element: evaluation plus neighbours (holders' scores are what counts)
    element_score: np.ndarray  # float per element: containers add a share of their holders' scores


def score_elements(doc: Document, params: HeuristicParams) -> Scored:
    """Berg 2020, §5 and §6: the static evaluation of every element, then the neighbours' shares."""
    features = features_of(doc)
    holders = np.flatnonzero(features.chars > 0)
    scores = evaluate(features)
    scores = add_neighbours(scores, holders, params.neighbour_share, WEIGHTS.neighbour_floor)
    element_score = container_scores(doc, scores, holders, WEIGHTS.children_share)
    return Scored(features, holders, scores, element_score)


def select_article(
    doc: Document, scored: Scored, scores: np.ndarray, params: HeuristicParams
) -> tuple[np.ndarray, int, np.ndarray]:
    """The holders kept (bool per element), the article element and the token selection, from
    `scores` (the evaluation, or the evaluation with the visual features added)."""
    features, holders = scored.features, scored.holders
    n_tokens = len(doc.tokens)
    selection = np.zeros(n_tokens, dtype=bool)
    is_holder = np.zeros(len(doc.elements), dtype=bool)
    is_holder[holders] = True
    above = is_holder & (scores > params.threshold)
    dropped = np.zeros(n_tokens, dtype=bool)
    if params.unlikely_candidates:
        dropped = doc.mask_elements(np.flatnonzero(features.unlikely))
        above &= ~dropped[doc.start]
    if params.article_root == "top-candidate":
        root = top_candidate_element(doc, above, features.words, params.candidate_share)
    else:
        root = article_element(doc, above, features.words, params.coverage)
    chosen = above.copy()
    if params.inner_threshold is not None:
        chosen = is_holder & (scores > params.inner_threshold)
        if params.unlikely_candidates:
            chosen &= ~dropped[doc.start]
    if root >= 0:
        chosen &= (doc.start >= doc.start[root]) & (doc.end <= doc.end[root])
        # For speed: only the root's tokens inside <body> are read (a slice; the rest stay unselected).
        first, last = doc.body
        lo, hi = max(int(doc.start[root]), first), min(int(doc.end[root]), last) + 1
        if lo < hi:
            element = doc.tokens.element[lo:hi]
            owned = element >= 0
            selection[lo:hi] = chosen[features.holder[np.where(owned, element, 0)]] & owned & ~dropped[lo:hi]
    return chosen, root, selection


def holder_blocks(doc: Document, holders: np.ndarray, scores: np.ndarray, chosen: np.ndarray) -> HolderBlocks:
    """One Block per text holder with its score and whether it was kept (made on first use)."""
    return HolderBlocks(
        holders,
        doc.start[holders],
        doc.end[holders],
        scores[holders],
        chosen[holders],
        features_of(doc).label,
    )


def selection_score(holder_scores: np.ndarray, kept: np.ndarray) -> float:
    """Share of the positive score mass that was kept (0..1), the badge's confidence."""
    positive = np.maximum(holder_scores, 0.0)  # np.clip(holder_scores, 0.0, None), without its overhead
    score = float(positive[kept].sum() / positive.sum()) if positive.sum() > 0 else 0.0
    return min(max(score, 0.0), 1.0)
