"""Run algorithm specs over a dataset and score every page with every metric.

A spec is `name` or `name:param=value[:param=value]` (e.g. `density:link_filter=3`) for a
registered extractor, or `ext:trafilatura` / `ext:readability-lxml` for the external peers when
they are installed; `all` expands to every registered extractor plus the installed peers.

Each page is decoded once; each algorithm then parses it itself (so its time is parse + extract +
render, with parse-only kept apart). A page that raises in one algorithm counts as an error with
an empty prediction (it scores 0 recall) and the run goes on.
"""

from __future__ import annotations

import importlib.util
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TextIO

import numpy as np

from ..engine.extraction import Extractor, get_extractor, registry
from ..engine.pipeline import process
from . import metrics
from .datasets import Dataset, Page, visible_text

#: External peers: spec name -> module that must be importable.
PEERS = {"ext:trafilatura": "trafilatura", "ext:readability-lxml": "readability"}


@dataclass(frozen=True, slots=True)
class AlgorithmSpec:
    """One column of the comparison: an extractor name and parameter overrides, or a peer."""

    name: str
    params: tuple[tuple[str, str], ...] = ()

    @property
    def label(self) -> str:
        return ":".join([self.name, *(f"{key}={value}" for key, value in self.params)])

    @property
    def external(self) -> bool:
        return self.name.startswith("ext:")


def installed_peers() -> list[str]:
    """The external peers importable here."""
    return [name for name, module in PEERS.items() if importlib.util.find_spec(module) is not None]


def parse_spec(text: str) -> AlgorithmSpec:
    """`name[:param=value...]`; ValueError for unknown names, parameters or malformed pairs."""
    text = text.strip()
    if text in PEERS:
        if text not in installed_peers():
            raise ValueError(f"{text} needs the Python package {PEERS[text]!r} (pip install -e '.[bench]')")
        return AlgorithmSpec(text)
    name, *pairs = text.split(":")
    params: list[tuple[str, str]] = []
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"algorithm parameters are name=value, got {pair!r} in {text!r}")
        params.append((key.strip(), value.strip()))
    extractor = get_extractor(name)  # ValueError naming the valid algorithms
    extractor.make_params(dict(params))  # ValueError naming the valid parameters
    if extractor.needs_browser:
        from ..web.devtools import DEFAULT_EXECUTABLE, unavailable_reason

        reason = unavailable_reason(DEFAULT_EXECUTABLE)
        if reason is not None:
            raise ValueError(f"{name} renders every page in the browser: {reason}")
    return AlgorithmSpec(name, tuple(params))


def parse_specs(text: str) -> list[AlgorithmSpec]:
    """A comma-separated list of specs; `all` = every registered extractor and installed peer."""
    specs: list[AlgorithmSpec] = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        if item == "all":
            specs.extend(AlgorithmSpec(name) for name in sorted(registry()))
            specs.extend(AlgorithmSpec(name) for name in installed_peers())
        else:
            specs.append(parse_spec(item))
    unique = list(dict.fromkeys(specs))
    if not unique:
        raise ValueError("no algorithm given")
    return unique


def ablation_rules(names: Iterable[str]) -> list[str]:
    """The post-rules named in `--ablate` values (comma lists, `all`), in table order, each once;
    ValueError naming the valid rules."""
    from ..engine.extractors.learned.table import POST_RULES, post_rule

    wanted: set[str] = set()
    for item in (part.strip() for value in names for part in value.split(",")):
        if item == "all":
            wanted.update(rule.name for rule in POST_RULES)
        elif item:
            wanted.add(post_rule(item).name)
    return [rule.name for rule in POST_RULES if rule.name in wanted]


@dataclass(frozen=True, slots=True)
class Ablation:
    """One spec run again with one post-rule off: `ablated` is `base` with the rule's parameter at
    its off value."""

    base: AlgorithmSpec
    rule: str
    ablated: AlgorithmSpec


def ablation_specs(specs: Sequence[AlgorithmSpec], rules: Sequence[str]) -> list[Ablation]:
    """For every spec whose extractor runs auto's post-rules, one spec per rule with that rule off;
    ValueError when rules are asked for and no spec has them."""
    from ..engine.extractors.learned.params import LearnedParams
    from ..engine.extractors.learned.table import post_rule

    ablations: list[Ablation] = []
    for spec in specs:
        if spec.external or get_extractor(spec.name).params_type is not LearnedParams:
            continue
        for name in rules:
            rule = post_rule(name)
            params = tuple((k, v) for k, v in spec.params if k != rule.parameter)
            ablated = AlgorithmSpec(spec.name, (*params, (rule.parameter, rule.off_text)))
            ablations.append(Ablation(spec, name, ablated))
    if rules and not ablations:
        raise ValueError("--ablate needs an algorithm that runs auto's post-rules (auto, learned) in --algo")
    return ablations


# --- Predictions ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Prediction:
    """What an algorithm answered for one page, and how long it took."""

    text: str
    title: str | None
    total_ms: float  # parse + extract + render (peers: their whole call)
    parse_ms: float | None  # ours only


Predictor = Callable[[str, str | None], Prediction]


def predictor(spec: AlgorithmSpec) -> Predictor:
    """The function that turns (html, url) into a Prediction for a spec."""
    if spec.name == "ext:trafilatura":
        return _trafilatura
    if spec.name == "ext:readability-lxml":
        return _readability_lxml
    extractor = get_extractor(spec.name)
    return _ours(extractor, extractor.make_params(dict(spec.params)))


def _ours(extractor: Extractor[Any], params: Any) -> Predictor:
    """Our pipeline; an algorithm that reads the layout gets the page rendered from its own bytes
    first (time included)."""
    rendered = extractor.needs_browser

    def run(html: str, url: str | None) -> Prediction:
        began = time.perf_counter()
        layout = None
        if rendered:
            from .rendering import shared_renderer

            page = shared_renderer().render(html, url)
            html, layout = page.html, page.layout
        article = process(html, url=url, algorithm=extractor, params=params, layout=layout)
        done = time.perf_counter()
        return Prediction(article.text, article.title, (done - began) * 1000, article.timings["parse"])

    return run


def _trafilatura(html: str, url: str | None) -> Prediction:
    """trafilatura.bare_extraction with metadata (for the title), comments left out: the article body."""
    import trafilatura

    began = time.perf_counter()
    result = trafilatura.bare_extraction(html, url=url, include_comments=False, with_metadata=True)
    elapsed = (time.perf_counter() - began) * 1000
    if result is None:
        return Prediction("", None, elapsed, None)
    text = getattr(result, "text", None) or ""
    title = getattr(result, "title", None)
    return Prediction(text, title, elapsed, None)


def _readability_lxml(html: str, url: str | None) -> Prediction:
    """readability-lxml `Document(html).summary()`; its text is read with our renderer (not timed)."""
    from readability import Document as ReadabilityDocument

    began = time.perf_counter()
    document = ReadabilityDocument(html, url=url)
    summary = document.summary(html_partial=True)
    title = document.short_title()
    elapsed = (time.perf_counter() - began) * 1000
    return Prediction(visible_text(summary), title, elapsed, None)


# --- Scores ---------------------------------------------------------------------------------------


@dataclass(slots=True)
class PageResult:
    """One algorithm on one page: every metric, the time, and the error if it raised."""

    page: str
    size_bytes: int
    shingles: metrics.ShingleCounts
    lcs_sequence: metrics.Score
    lcs_string: metrics.Score
    bag_of_words: metrics.Score
    title_ok: bool | None  # None when the dataset has no reference title
    total_ms: float
    parse_ms: float | None
    text_chars: int
    error: str | None = None


def score_page(page: Page, size_bytes: int, prediction: Prediction, error: str | None = None) -> PageResult:
    """All metrics of one prediction against the page's reference."""
    true, pred = page.reference_text, prediction.text
    return PageResult(
        page=page.id,
        size_bytes=size_bytes,
        shingles=metrics.shingle_counts(true, pred),
        lcs_sequence=metrics.lcs_sequence_score(true, pred),
        lcs_string=metrics.lcs_string_score(true, pred),
        bag_of_words=metrics.bag_of_words_score(true, pred),
        title_ok=None
        if page.reference_title is None
        else metrics.title_match(page.reference_title, prediction.title),
        total_ms=prediction.total_ms,
        parse_ms=prediction.parse_ms,
        text_chars=len(pred),
        error=error,
    )


@dataclass(frozen=True, slots=True)
class Summary:
    """Aggregate numbers of one algorithm over the pages (one row of the table)."""

    pages: int
    errors: int
    shingles: metrics.ShingleSummary
    lcs_sequence: metrics.Score
    lcs_string: metrics.Score
    bag_of_words: metrics.Score
    title_accuracy: float | None
    median_ms: float
    p95_ms: float
    mb_per_s: float
    parse_share: float | None  # share of the total time spent parsing (ours only)


def summarize(results: Sequence[PageResult]) -> Summary:
    """Means of the per-page scores; times from pages that did not fail."""
    timed = [r for r in results if r.error is None] or list(results)
    times = np.array([r.total_ms for r in timed]) if timed else np.zeros(1)
    total_seconds = float(times.sum()) / 1000
    size = sum(r.size_bytes for r in timed)
    titles = [r.title_ok for r in results if r.title_ok is not None]
    parses = [r.parse_ms for r in timed if r.parse_ms is not None]
    return Summary(
        pages=len(results),
        errors=sum(r.error is not None for r in results),
        shingles=metrics.shingle_summary(r.shingles for r in results),
        lcs_sequence=metrics.mean_score(r.lcs_sequence for r in results),
        lcs_string=metrics.mean_score(r.lcs_string for r in results),
        bag_of_words=metrics.mean_score(r.bag_of_words for r in results),
        title_accuracy=statistics.fmean(titles) if titles else None,
        median_ms=float(np.median(times)),
        p95_ms=float(np.percentile(times, 95)),
        mb_per_s=size / 1e6 / total_seconds if total_seconds > 0 else 0.0,
        parse_share=sum(parses) / (total_seconds * 1000) if parses and total_seconds > 0 else None,
    )


@dataclass(slots=True)
class AlgorithmResult:
    """Every page's result for one spec, and their summary."""

    spec: AlgorithmSpec
    pages: list[PageResult] = field(default_factory=list)

    @property
    def label(self) -> str:
        return self.spec.label

    @property
    def summary(self) -> Summary:
        return summarize(self.pages)


@dataclass(slots=True)
class Evaluation:
    """The outcome of `evaluate`: the dataset and one result per spec, in the given order."""

    dataset: str
    layout: str
    results: list[AlgorithmResult]

    @property
    def has_titles(self) -> bool:
        return self.layout == "readability"

    @property
    def has_reference(self) -> bool:
        """Whether the pages have a reference text (the snippets layout has only snippets)."""
        return self.layout != "snippets"


# --- The run --------------------------------------------------------------------------------------


class Progress:
    """A plain-text `\\r` progress bar on a stream (stderr), silent when disabled."""

    WIDTH = 30

    def __init__(self, total: int, enabled: bool, stream: TextIO | None = None) -> None:
        self.total = max(total, 1)
        self.enabled = enabled
        self.stream = stream if stream is not None else sys.stderr
        self.done = 0
        self.began = time.perf_counter()

    def advance(self, label: str = "") -> None:
        self.done += 1
        if not self.enabled:
            return
        filled = self.WIDTH * self.done // self.total
        elapsed = time.perf_counter() - self.began
        bar = "#" * filled + "-" * (self.WIDTH - filled)
        self.stream.write(f"\r[{bar}] {self.done}/{self.total} {elapsed:5.1f}s {label[:30]:<30}")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\r" + " " * (self.WIDTH + 50) + "\r")
            self.stream.flush()


class PagePredictors(Protocol):
    """Chooses the predictor of a spec for one page (out-of-fold scoring: `oof.OutOfFold`)."""

    def predictor(self, spec: AlgorithmSpec, page: Page, default: Predictor) -> Predictor: ...


def evaluate(
    dataset: Dataset,
    specs: Iterable[AlgorithmSpec],
    progress: Progress | None = None,
    per_page: PagePredictors | None = None,
    texts: dict[str, dict[str, str]] | None = None,
) -> Evaluation:
    """Every spec on every page of the dataset; a failing page never stops the run. With `per_page`,
    a spec's predictor may depend on the page (the fold model of the page's site). With `texts`,
    every predicted text is kept there (label -> page id -> text; none for an unreadable page)."""
    spec_list = list(specs)
    predictors = [predictor(spec) for spec in spec_list]
    results = [AlgorithmResult(spec) for spec in spec_list]
    if texts is not None:
        for spec in spec_list:
            texts.setdefault(spec.label, {})
    for page in dataset:
        try:
            html = page.read_html()
        except (OSError, ValueError) as exc:  # unreadable page: an error for every algorithm
            for result in results:
                result.pages.append(score_page(page, 0, Prediction("", None, 0.0, None), _describe(exc)))
                if progress:
                    progress.advance(page.id)
            continue
        size = len(html.encode("utf-8", "surrogatepass"))
        for spec, run, result in zip(spec_list, predictors, results, strict=True):
            if per_page is not None:
                run = per_page.predictor(spec, page, run)
            try:
                prediction, error = run(html, page.url), None
            except Exception as exc:  # one page of one algorithm: counted, never fatal
                prediction, error = Prediction("", None, 0.0, None), _describe(exc)
            result.pages.append(score_page(page, size, prediction, error))
            if texts is not None:
                texts[spec.label][page.id] = prediction.text
            if progress:
                progress.advance(f"{spec.label} {page.id}")
    if progress:
        progress.close()
    return Evaluation(dataset.name, dataset.layout, results)


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:300]
