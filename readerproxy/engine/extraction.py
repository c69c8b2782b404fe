"""What an extractor returns, and the registry of extractors by stable name.

An extractor is a pure function `Document -> Extraction`. It is registered with a frozen dataclass
of its parameters, whose defaults are the paper's values and whose `__post_init__` checks every
value's range (so a bad value is a ValueError wherever parameters are made); `make_params()`
converts strings from the CLI or a query string; `run()` times the call and fills in the name.
"""

from __future__ import annotations

import dataclasses
import time
import typing
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar, overload

import numpy as np

from .convert import coerce
from .parse.document import Document

P = TypeVar("P")


@dataclass(slots=True)
class Block:
    """A scored unit of the page: an element, or a range of tokens (lines, strings, segments).

    Not frozen, for speed: a frozen dataclass sets each field through `object.__setattr__`, which
    made building a block about 6x slower, and a page has hundreds of them (built twice by `auto`).
    Extractors make their blocks once and nothing changes them afterwards.
    """

    start: int  # first token index
    end: int  # last token index (inclusive)
    score: float
    selected: bool
    element: int | None = None  # element index when the block is an element
    label: str = ""  # what the algorithm calls the block, e.g. "line 12" or "div#content"


class HolderBlocks(Sequence[Block]):
    """The blocks of a DOM extractor, one per text holder, kept as columns and made into `Block`s on
    first use.

    For speed: a read needs an extraction's selection, not its blocks (overlays, charts and the
    evaluation look at them), and making one `Block` per holder took 0.1-1.7 ms a page, twice with
    `auto`. `block_columns` reads the columns without making the blocks.
    """

    __slots__ = ("_blocks", "_labels", "elements", "ends", "scores", "selected", "starts")

    def __init__(
        self,
        elements: np.ndarray,
        starts: np.ndarray,
        ends: np.ndarray,
        scores: np.ndarray,
        selected: np.ndarray,
        labels: Sequence[str],
    ) -> None:
        self.elements, self.starts, self.ends = elements, starts, ends
        self.scores, self.selected = scores, selected
        self._labels = labels  # by element index
        self._blocks: list[Block] | None = None

    def _made(self) -> list[Block]:
        if self._blocks is None:
            # one tolist() per column and `Block` mapped over them (positional), the fastest way measured
            elements = self.elements.tolist()
            labels = self._labels
            self._blocks = list(
                map(
                    Block,
                    self.starts.tolist(),
                    self.ends.tolist(),
                    self.scores.tolist(),
                    self.selected.tolist(),
                    elements,
                    [labels[i] for i in elements],
                )
            )
        return self._blocks

    def __len__(self) -> int:
        return len(self.elements)

    @overload
    def __getitem__(self, index: int) -> Block: ...
    @overload
    def __getitem__(self, index: slice) -> list[Block]: ...
    def __getitem__(self, index: int | slice) -> Block | list[Block]:
        return self._made()[index]

    def __iter__(self) -> Iterator[Block]:
        return iter(self._made())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable-looking, like the list it stands for

    def __repr__(self) -> str:
        return f"HolderBlocks({self._made()!r})"


def block_columns(blocks: Sequence[Block], n_elements: int) -> tuple[np.ndarray, np.ndarray]:
    """Per element: the score of its block (0.0 where none) and whether that block was selected."""
    score = np.zeros(n_elements, dtype=np.float64)
    selected = np.zeros(n_elements, dtype=bool)
    if isinstance(blocks, HolderBlocks):
        score[blocks.elements] = blocks.scores
        selected[blocks.elements] = blocks.selected
        return score, selected
    for block in blocks:
        if block.element is not None:
            score[block.element] = block.score
            selected[block.element] = block.selected
    return score, selected


@dataclass(slots=True)
class Extraction:
    """An extractor's full answer: scored blocks, the token selection and its signals."""

    blocks: Sequence[Block]
    selection: np.ndarray  # bool per token of the document's linear view
    signals: dict[str, np.ndarray] = field(default_factory=dict)  # e.g. {"density": per-string lengths}
    score: float = 0.0  # the algorithm's confidence in its selection, for the badge
    algorithm: str = ""
    params: dict[str, Any] = field(default_factory=dict)
    elapsed_ms: float = 0.0

    @property
    def selected_blocks(self) -> list[Block]:
        return [block for block in self.blocks if block.selected]


@dataclass(frozen=True, slots=True)
class Extractor(Generic[P]):
    """A registered algorithm: a stable name, one line of description, its function and parameters."""

    name: str
    description: str
    function: Callable[[Document, P], Extraction]
    params_type: type[P]
    reference: str = ""  # the paper and section
    needs_browser: bool = False  # reads `Document.layout`: callers render the page first (browser.py)

    def defaults(self) -> P:
        return self.params_type()

    def make_params(self, overrides: Mapping[str, Any]) -> P:
        """Defaults with overrides applied; unknown names or bad values raise ValueError.

        Strings (from the CLI or a query string) are converted to the declared types by
        `convert.coerce`; the ranges are checked by the parameter dataclass's `__post_init__`.
        """
        fields = {f.name: f for f in dataclasses.fields(self.params_type)}  # type: ignore[arg-type]
        unknown = sorted(set(overrides) - set(fields))
        if unknown:
            valid = ", ".join(sorted(fields)) or "none"
            raise ValueError(f"unknown parameter(s) {', '.join(unknown)} for {self.name!r}; valid: {valid}")
        hints = typing.get_type_hints(self.params_type)
        values = {name: coerce(name, value, hints[name]) for name, value in overrides.items()}
        return self.params_type(**values)

    def run(self, doc: Document, params: P | None = None) -> Extraction:
        params = self.defaults() if params is None else params
        began = time.perf_counter()
        extraction = self.function(doc, params)
        extraction.elapsed_ms = (time.perf_counter() - began) * 1000.0
        # A composite extractor (auto) returns the Extraction of the algorithm it chose: keep that
        # algorithm's name and parameters, which say what really produced the selection.
        if not extraction.algorithm:
            extraction.algorithm = self.name
            extraction.params = params_dict(params)
        return extraction


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(params_type: type) -> tuple[str, ...]:
    names = _FIELD_NAMES.get(params_type)
    if names is None:
        names = _FIELD_NAMES[params_type] = tuple(f.name for f in dataclasses.fields(params_type))
    return names


def params_dict(params: object) -> dict[str, Any]:
    """An extractor's parameters by name, in their order: `dataclasses.asdict` for parameters whose
    values are immutable (numbers, strings, None, tuples of them), as every extractor's are.

    For speed: `asdict` copies every value recursively (about 25 µs for auto's parameters, and an
    `auto` extraction reports its own and its heuristic's); this reads the fields (about 1.5 µs).
    """
    return {name: getattr(params, name) for name in _field_names(type(params))}


_REGISTRY: dict[str, Extractor[Any]] = {}


def register(
    name: str, description: str, params_type: type[P], reference: str = "", *, needs_browser: bool = False
) -> Callable[[Callable[[Document, P], Extraction]], Callable[[Document, P], Extraction]]:
    """Decorator: register an extractor function under a stable name."""

    def decorate(function: Callable[[Document, P], Extraction]) -> Callable[[Document, P], Extraction]:
        if name in _REGISTRY:
            raise ValueError(f"extractor {name!r} registered twice")
        _REGISTRY[name] = Extractor(name, description, function, params_type, reference, needs_browser)
        return function

    return decorate


def registry() -> dict[str, Extractor[Any]]:
    """All registered extractors by name (importing the extractors package fills it)."""
    from . import extractors  # noqa: F401  (registration happens on import)

    return dict(_REGISTRY)


def get_extractor(name: str) -> Extractor[Any]:
    """The extractor registered under `name`; ValueError naming the valid names otherwise."""
    extractors = registry()
    try:
        return extractors[name]
    except KeyError:
        valid = ", ".join(dict.fromkeys(["auto", *sorted(extractors)]))
        raise ValueError(f"unknown algorithm {name!r}; valid: {valid}") from None


@dataclass(frozen=True, slots=True)
class NoParams:
    """For extractors without parameters."""
