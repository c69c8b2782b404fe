"""Per-field exact match of our metadata against Mozilla Readability's `expected-metadata.json`.

`readerproxy eval --dataset readability --metadata` prints one table: for each field the share of
pages where our value equals Readability's. Comparison rules:

- both values are whitespace-normalised (runs of whitespace -> one space, trimmed);
- a missing value, `null` and an empty string are the same (no value);
- `lang` is compared only on pages whose expected file has the key (older test pages lack it);
- `readerable` is our `is_probably_readerable(doc)` against the expected boolean;
- the excerpt falls back to the first paragraph of the extraction, so it depends on the algorithm
  (`auto` unless `--algo` names another; the first spec is used).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..document import parse
from ..extraction import get_extractor
from ..metadata import extract_metadata
from ..output import render_text
from ..readerable import is_probably_readerable
from .datasets import Dataset

#: field name in expected-metadata.json -> attribute of our Metadata (readerable is separate).
FIELDS = {
    "title": "title",
    "byline": "byline",
    "excerpt": "excerpt",
    "dir": "dir",
    "siteName": "site_name",
    "publishedTime": "published",
    "lang": "lang",
    "readerable": "readerable",
}
_WS = re.compile(r"\s+")


def normalise(value: Any) -> Any:
    """Whitespace-normalised string, None for missing/empty; booleans pass through."""
    if isinstance(value, bool):
        return value
    if value is None:
        return None
    text = _WS.sub(" ", str(value)).strip()
    return text or None


@dataclass(slots=True)
class FieldResult:
    """Matches of one field over the pages it applies to, and the mismatches seen."""

    name: str
    matched: int = 0
    total: int = 0
    misses: list[tuple[str, Any, Any]] = field(default_factory=list)  # (page, expected, ours)

    @property
    def accuracy(self) -> float | None:
        return self.matched / self.total if self.total else None


def predicted_metadata(html: str, url: str | None = None, algorithm: str = "auto") -> dict[str, Any]:
    """Our metadata for one page (with the excerpt fallback from `algorithm`'s extraction)."""
    doc = parse(html, url)
    extractor = get_extractor(algorithm)
    extraction = extractor.run(doc, extractor.make_params({}))
    text = render_text(doc, extraction.selection)
    meta = extract_metadata(doc, text, selection=extraction.selection)
    values = {ours: getattr(meta, ours, None) for ours in FIELDS.values() if ours != "readerable"}
    values["readerable"] = is_probably_readerable(doc)
    return values


def compare(
    expected: dict[str, Any], ours: dict[str, Any], page: str, results: dict[str, FieldResult]
) -> None:
    """Add one page's field comparisons to `results`."""
    for name, attribute in FIELDS.items():
        if name not in expected:
            continue
        want, got = normalise(expected[name]), normalise(ours.get(attribute))
        result = results.setdefault(name, FieldResult(name))
        result.total += 1
        if want == got:
            result.matched += 1
        else:
            result.misses.append((page, want, got))


def evaluate_metadata(dataset: Dataset, algorithm: str = "auto") -> list[FieldResult]:
    """Per-field matches over every page of a Readability-layout dataset."""
    if dataset.layout != "readability":
        raise ValueError("metadata is measured on the readability layout (expected-metadata.json)")
    results: dict[str, FieldResult] = {name: FieldResult(name) for name in FIELDS}
    for page in dataset:
        path = page.path.parent / "expected-metadata.json"
        try:
            expected = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        ours = predicted_metadata(page.read_html(), page.url, algorithm)
        compare(expected, ours, page.id, results)
    return list(results.values())


def format_metadata_table(results: Iterable[FieldResult], dataset: str, algorithm: str) -> str:
    """One row per field: matched / total and the share."""
    lines = [
        f"metadata on {dataset} (excerpt fallback from {algorithm}); exact match after "
        "whitespace normalisation, missing = null = empty",
        f"{'field':<14} {'match':>6} {'pages':>6} {'share':>6}",
        "-" * 35,
    ]
    for result in results:
        share = "-" if result.accuracy is None else f"{result.accuracy:.3f}"
        lines.append(f"{result.name:<14} {result.matched:>6} {result.total:>6} {share:>6}")
    return "\n".join(lines)
