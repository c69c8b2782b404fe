"""CETR: content extraction via tag ratios (Weninger, Hsu, Han 2010), and its two variants.

Every line of the <body> source gets a text-to-tag ratio (TTR); the TTR histogram is smoothed with a
Gaussian of radius 3; its absolute derivative marks where content starts and stops. Three ways to
label lines as content, each a registered extractor:

- `cetr`: k-means (k = 3, or 2) on the 2-D points (smoothed TTR, derivative); the cluster whose
  centroid lies nearest the origin is non-content, every other cluster is content.
- `cetr-km`: the same k-means on the smoothed TTR alone (1-D).
- `cetr-tm`: content iff the smoothed TTR exceeds tau times its standard deviation.

Lines are the source lines of the cleaned page (`Document.tokens.line`); a page with almost no
newlines was already re-broken after the first tag end past 60 characters, as the paper's FAQ says.

Choices where the paper is open:
- A line's text counts non-whitespace characters (indentation would otherwise read as text) and a
  line without tags has TTR = its text length, as in the paper's table (37 characters, 0 tags, 37).
- Gaussian kernel: radius 3 with sigma = 2 (the paper gives only the radius; sigma 2 beat 0.5 and 1
  on a mix of pages and equals 3 within noise); near the page's edges the kernel is renormalised
  over the lines that exist, so edge lines are not pulled towards zero.
- Derivative (the full paper's G'): |mean(T'[i .. i+alpha]) - T'[i]| with alpha = 3, the absolute
  difference between a line and the mean of the lines just below it.
- k-means is Lloyd's algorithm with deterministic farthest-point seeding starting from the point
  nearest the origin (Weka's seeding is random; the FAQ blames its randomness for varying results).
- cetr-tm: tau = 1.0 (the paper sweeps tau without one default; 0.75-1.5 are within noise of each
  other on a mix of pages, lower taus lose precision).
- A page whose lines are all alike (one line) has no clusters: its lines are content if they have text.
- Score (the badge): the share of the points' variance explained by the content / non-content split.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..convert import check_range
from ..extraction import Block, Extraction, register
from ..parse.document import Document
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
from .numeric import gaussian_kernel

#: Lloyd iterations before k-means gives up converging (it converges in a handful on real pages).
MAX_ITERATIONS = 100


def _check_smoothing(radius: int, sigma: float, link_filter: int) -> LinkFilter:
    """The ranges every CETR variant shares; returns the link filter as a LinkFilter."""
    check_range("radius", radius, 0, 100)
    check_range("sigma", sigma, 0, 100, low_open=True)
    return link_filter_value(link_filter)


@dataclass(frozen=True, slots=True)
class CetrParams:
    """Weninger, Hsu, Han 2010: k = 3 clusters (k = 2 allowed), Gaussian smoothing of radius 3, alpha = 3.

    Ranges: k in [2, 10] clusters; radius in [0, 100] lines; sigma in (0, 100]; alpha in [1, 100]
    lines; link_filter 0-3 (`LinkFilter`).
    """

    k: int = 3
    radius: int = 3
    sigma: float = 2.0
    alpha: int = 3
    link_filter: LinkFilter = LinkFilter.NONE

    def __post_init__(self) -> None:
        check_range("k", self.k, 2, 10)
        check_range("alpha", self.alpha, 1, 100)
        object.__setattr__(self, "link_filter", _check_smoothing(self.radius, self.sigma, self.link_filter))


@dataclass(frozen=True, slots=True)
class CetrKmParams:
    """Weninger, Hsu, Han 2010, CETR-KM: k-means on the smoothed TTR alone.

    Ranges: k in [2, 10]; radius in [0, 100] lines; sigma in (0, 100]; link_filter 0-3.
    """

    k: int = 3
    radius: int = 3
    sigma: float = 2.0
    link_filter: LinkFilter = LinkFilter.NONE

    def __post_init__(self) -> None:
        check_range("k", self.k, 2, 10)
        object.__setattr__(self, "link_filter", _check_smoothing(self.radius, self.sigma, self.link_filter))


@dataclass(frozen=True, slots=True)
class CetrTmParams:
    """Weninger, Hsu, Han 2010, CETR-TM: threshold tau * standard deviation of the smoothed TTR.

    Ranges: tau in [0, 100] standard deviations; radius in [0, 100] lines; sigma in (0, 100];
    link_filter 0-3.
    """

    tau: float = 1.0
    radius: int = 3
    sigma: float = 2.0
    link_filter: LinkFilter = LinkFilter.NONE

    def __post_init__(self) -> None:
        check_range("tau", self.tau, 0, 100)
        object.__setattr__(self, "link_filter", _check_smoothing(self.radius, self.sigma, self.link_filter))


@dataclass(frozen=True, slots=True)
class TagRatios:
    """The histogram of one page: per body line TTR, smoothed TTR and |derivative|."""

    view: FilteredView
    lines: BodyLines
    ttr: np.ndarray
    smoothed: np.ndarray


def tag_ratio(text_chars: np.ndarray, tags: np.ndarray) -> np.ndarray:
    """Weninger et al. 2010, "Tag Ratios": text characters / tags per line; a line without tags keeps its text length."""
    return np.asarray(text_chars, dtype=np.float64) / np.maximum(tags, 1)


def smooth(ttr: np.ndarray, radius: int, sigma: float) -> np.ndarray:
    """Weninger et al. 2010, "Smoothing": Gaussian smoothing of the TTR histogram (kernel renormalised at the edges)."""
    if radius <= 0 or len(ttr) == 0:
        return np.asarray(ttr, dtype=np.float64).copy()
    kernel = gaussian_kernel(radius, sigma)
    centre = slice(radius, radius + len(ttr))  # "full" convolution, cut to the input's lines
    weighted = np.convolve(ttr, kernel)[centre]
    mass = np.convolve(np.ones(len(ttr)), kernel)[centre]
    return np.asarray(weighted / mass)


def derivative(smoothed: np.ndarray, alpha: int) -> np.ndarray:
    """Weninger et al. 2010, "Finding the beginning and end": |mean(T'[i..i+alpha]) - T'[i]| per line."""
    n = len(smoothed)
    if n == 0:
        return np.zeros(0)
    csum = np.concatenate(([0.0], np.cumsum(smoothed)))
    index = np.arange(n)
    stop = np.minimum(index + alpha + 1, n)
    ahead_mean = (csum[stop] - csum[index]) / (stop - index)
    return np.asarray(np.abs(ahead_mean - smoothed))


def farthest_point_seeds(points: np.ndarray, k: int) -> np.ndarray:
    """Deterministic k-means seeding: the point nearest the origin, then farthest-point picks."""
    norms = np.einsum("ij,ij->i", points, points)
    chosen = [int(np.argmin(norms))]
    nearest = np.sum((points - points[chosen[0]]) ** 2, axis=1)
    for _ in range(1, k):
        pick = int(np.argmax(nearest))
        chosen.append(pick)
        nearest = np.minimum(nearest, np.sum((points - points[pick]) ** 2, axis=1))
    return np.asarray(points[chosen], dtype=np.float64)


def kmeans(points: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Lloyd's k-means with deterministic seeding: (label per point, centroids)."""
    points = np.asarray(points, dtype=np.float64).reshape(len(points), -1)
    centroids = farthest_point_seeds(points, k)
    labels = np.zeros(len(points), dtype=np.int64)
    for iteration in range(MAX_ITERATIONS):
        distances = ((points[:, None, :] - centroids[None, :, :]) ** 2).sum(axis=2)
        new_labels = np.argmin(distances, axis=1)
        if iteration and np.array_equal(new_labels, labels):
            break
        labels = new_labels
        counts = np.bincount(labels, minlength=k)
        for axis in range(points.shape[1]):
            sums = np.bincount(labels, weights=points[:, axis], minlength=k)
            # An emptied cluster keeps its old centroid.
            centroids[:, axis] = np.where(counts > 0, sums / np.maximum(counts, 1), centroids[:, axis])
    return labels, centroids


def content_clusters(points: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Weninger et al. 2010, "Extraction in two dimensions": (content mask, cluster label) per line.

    The cluster whose centroid lies nearest the origin is non-content; all others are content.
    """
    n = len(points)
    if n == 0:
        return np.zeros(0, dtype=bool), np.zeros(0, dtype=np.int64)
    if not (points != points[0]).any():  # one distinct point (e.g. a one-line page): no clusters
        return np.full(n, bool(np.any(points[0] > 0))), np.zeros(n, dtype=np.int64)
    labels, centroids = kmeans(points, min(k, n))
    non_content = int(np.argmin(np.einsum("ij,ij->i", centroids, centroids)))
    return labels != non_content, labels


def explained_variance(points: np.ndarray, content: np.ndarray) -> float:
    """Share of the points' variance explained by the content / non-content split (0..1): the badge."""
    points = np.asarray(points, dtype=np.float64).reshape(len(points), -1)
    total = float(((points - points.mean(axis=0)) ** 2).sum()) if len(points) else 0.0
    if total <= 0.0 or content.all() or not content.any():
        return 0.0
    within = sum(
        float(((group - group.mean(axis=0)) ** 2).sum()) for group in (points[content], points[~content])
    )
    return max(0.0, min(1.0, 1.0 - within / total))


def tag_ratios(doc: Document, link_filter: int, radius: int, sigma: float) -> TagRatios:
    """Weninger et al. 2010: the TTR histogram of the (hyperlink-filtered) body lines and its smoothed form."""
    view = filter_links(doc, link_filter)
    lines = body_lines(doc, view)
    ttr = tag_ratio(lines.text_chars, lines.tags)
    return TagRatios(view, lines, ttr, smooth(ttr, radius, sigma))


def line_extraction(
    doc: Document, ratios: TagRatios, content: np.ndarray, signals: dict[str, np.ndarray], score: float
) -> Extraction:
    """The Extraction of a line labelling: one block per body line with text, tokens of content lines."""
    lines = ratios.lines
    starts, ends = line_token_ranges(doc, lines)
    blocks = [
        Block(
            int(starts[i]),
            int(ends[i]),
            float(ratios.smoothed[i]),
            bool(content[i]),
            label=f"line {i + lines.first_line}",
        )
        for i in np.flatnonzero(lines.text_chars > 0)
    ]
    return Extraction(
        blocks=blocks,
        selection=line_token_mask(doc, ratios.view, lines, content),
        signals={
            "line": np.arange(len(lines)) + lines.first_line,
            "ttr": ratios.ttr,
            "smoothed": ratios.smoothed,
            **signals,
        },
        score=score,
    )


@register(
    "cetr",
    "Per-line text-to-tag ratios clustered in 2-D (smoothed TTR, |derivative|) by k-means (Weninger et al. 2010).",
    CetrParams,
    reference="Weninger, Hsu, Han 2010, 'Tag Ratios' to 'Extraction in two dimensions'",
)
def extract_cetr(doc: Document, params: CetrParams) -> Extraction:
    """CETR: lines outside the cluster nearest the origin of (smoothed TTR, derivative) are content."""
    ratios = tag_ratios(doc, params.link_filter, params.radius, params.sigma)
    gradient = derivative(ratios.smoothed, params.alpha)
    points = np.column_stack((ratios.smoothed, gradient))
    content, cluster = content_clusters(points, params.k)
    signals = {"derivative": gradient, "cluster": cluster.astype(np.float64)}
    return line_extraction(doc, ratios, content, signals, explained_variance(points, content))


@register(
    "cetr-km",
    "CETR-KM: per-line text-to-tag ratios, smoothed, clustered in 1-D by k-means (Weninger et al. 2010).",
    CetrKmParams,
    reference="Weninger, Hsu, Han 2010, results table (CETR-KM)",
)
def extract_cetr_km(doc: Document, params: CetrKmParams) -> Extraction:
    """CETR-KM: lines outside the lowest smoothed-TTR cluster are content."""
    ratios = tag_ratios(doc, params.link_filter, params.radius, params.sigma)
    points = ratios.smoothed[:, None]
    content, cluster = content_clusters(points, params.k)
    signals = {"cluster": cluster.astype(np.float64)}
    return line_extraction(doc, ratios, content, signals, explained_variance(points, content))


@register(
    "cetr-tm",
    "CETR-TM: lines whose smoothed text-to-tag ratio exceeds tau * std are content (Weninger et al. 2010).",
    CetrTmParams,
    reference="Weninger, Hsu, Han 2010, results table (CETR-TM)",
)
def extract_cetr_tm(doc: Document, params: CetrTmParams) -> Extraction:
    """CETR-TM: threshold the smoothed TTR at tau times its standard deviation."""
    ratios = tag_ratios(doc, params.link_filter, params.radius, params.sigma)
    threshold = params.tau * float(ratios.smoothed.std()) if len(ratios.smoothed) else 0.0
    content = ratios.smoothed > threshold
    signals = {"threshold": np.array([threshold])}
    return line_extraction(doc, ratios, content, signals, explained_variance(ratios.smoothed, content))
