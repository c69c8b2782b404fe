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
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..engine.extraction import get_extractor
from ..engine.kind.readerable import is_probably_readerable
from ..engine.metadata.metadata import extract_metadata
from ..engine.output import render_text
from ..engine.parse.document import parse
from ..engine.parse.text import squash
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


def normalise(value: Any) -> Any:
    """Whitespace-normalised string, None for missing/empty; booleans pass through."""
    if isinstance(value, bool):
        return value
    if value is None:
        return None
    text = squash(str(value))
    return text or None


@dataclass(slots=True)
class FieldResult:
    """Matches of one field over the pages it applies to, and the mismatches seen."""

    name: str
    matched: int = 0
    total: int = 0
    misses: list[tuple[str, Any, Any]] = field(default_factory=list)  # (page, expected, ours)
    #: pages whose ground truth has no value for the field, and on how many of them a value was
    #: given anyway (WCXB: a date or an author the annotation says the page does not state)
    unstated: int = 0
    stated_anyway: int = 0

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
    values.update({ours: getattr(meta, ours, None) for ours in WCXB_FIELDS.values()})
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


# --- WCXB: title, author and date against the benchmark's ground truth ----------------------------

#: WCXB ground-truth key -> our Metadata attribute.
WCXB_FIELDS = {"title": "title", "author": "author", "publish_date": "date"}
_QUOTES = str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"', "–": "-", "—": "-", "\xa0": " "})
_NAME_SPLIT = re.compile(r"\s*(?:,|;|&|\band\b|\bund\b|\bet\b|\by\b)\s*", re.I)
_ISO_DAY = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
_ISO_MONTH = re.compile(r"^\s*(\d{4})-(\d{2})\s*$")


def wcxb_text(value: Any) -> str | None:
    """A title or name compared without case, quote style, dash style or extra whitespace."""
    if not isinstance(value, str):
        return None
    text = unicodedata.normalize("NFKC", value).translate(_QUOTES)
    return squash(text).casefold() or None


def wcxb_names(value: Any) -> frozenset[str]:
    """The set of names in an author string ("A, B and C" = "C & B, A")."""
    text = wcxb_text(value)
    if not text:
        return frozenset()
    text = re.sub(r"^by\s+", "", text)
    return frozenset(part for part in _NAME_SPLIT.split(text) if part)


def wcxb_day(value: Any) -> str | None:
    """The calendar day a date names, as YYYY-MM-DD (ISO 8601 first, then python-dateutil)."""
    if not isinstance(value, str) or not value.strip():
        return None
    found = _ISO_DAY.search(value)
    if found:
        return found.group(0)
    try:
        from dateutil import parser as date_parser

        return date_parser.parse(value, fuzzy=True).date().isoformat()
    except (ValueError, OverflowError, ImportError):
        return None


def wcxb_match(field_name: str, expected: Any, ours: Any) -> bool:
    """Whether our value counts as the ground truth's: title exact (up to case, quotes, dashes and
    whitespace), author the same set of names, date the same day (a ground truth that names only
    a month, "2003-11", is matched by any day of that month: dateutil would fill in today's day)."""
    if field_name == "title":
        return wcxb_text(expected) is not None and wcxb_text(expected) == wcxb_text(ours)
    if field_name == "author":
        return bool(wcxb_names(expected)) and wcxb_names(expected) == wcxb_names(ours)
    month = _ISO_MONTH.match(expected) if isinstance(expected, str) else None
    if month:
        day = wcxb_day(ours)
        return day is not None and day[:7] == f"{month.group(1)}-{month.group(2)}"
    return wcxb_day(expected) is not None and wcxb_day(expected) == wcxb_day(ours)


def trafilatura_metadata(html: str, url: str | None) -> dict[str, Any]:
    """trafilatura's title, author and date for the same page (the peer in the same run)."""
    import trafilatura

    found = trafilatura.extract_metadata(html, default_url=url)
    if found is None:
        return {}
    return {"title": found.title, "author": found.author, "date": found.date}


def evaluate_wcxb_metadata(
    dataset: Dataset, algorithm: str = "auto", peers: bool = True
) -> dict[str, list[FieldResult]]:
    """Title, author and date matches over the pages of a WCXB dataset whose ground truth states
    them: ours (and trafilatura's, `peers`), each system's `FieldResult`s keyed by its name."""
    if dataset.layout != "wcxb":
        raise ValueError("WCXB metadata is measured on the wcxb layout (ground-truth/*.json)")
    systems = ["readerproxy"] + (["trafilatura"] if peers else [])
    results = {system: {name: FieldResult(name) for name in WCXB_FIELDS} for system in systems}
    for page in dataset:
        path = page.path.parent.parent / "ground-truth" / f"{page.id}.json"
        try:
            truth = json.loads(path.read_text(encoding="utf-8")).get("ground_truth") or {}
        except (OSError, ValueError):
            continue
        html = page.read_html()
        answers = {"readerproxy": predicted_metadata(html, page.url, algorithm)}
        if peers:
            answers["trafilatura"] = trafilatura_metadata(html, page.url)
        for name, attribute in WCXB_FIELDS.items():
            expected = truth.get(name)
            if not expected:
                for system, ours in answers.items():
                    results[system][name].unstated += 1
                    results[system][name].stated_anyway += bool(ours.get(attribute))
                continue
            for system, ours in answers.items():
                result = results[system][name]
                result.total += 1
                if wcxb_match(name, expected, ours.get(attribute)):
                    result.matched += 1
                else:
                    result.misses.append((page.id, expected, ours.get(attribute)))
    return {system: list(fields.values()) for system, fields in results.items()}


def format_wcxb_metadata(results: dict[str, list[FieldResult]], dataset: str) -> str:
    """One row per field, one column per system: the share of pages matched; then, for the pages
    whose ground truth has no value, the share on which each system gave one anyway."""
    systems = list(results)
    lines = [
        f"metadata on {dataset}: title exact (case, quotes, dashes, whitespace aside), "
        "author the same names, date the same day; pages whose ground truth states the field",
        f"{'field':<14} {'pages':>6} " + " ".join(f"{s:>12}" for s in systems),
        "-" * (22 + 13 * len(systems)),
    ]
    for index, name in enumerate(WCXB_FIELDS):
        total = results[systems[0]][index].total
        shares = [results[s][index].accuracy for s in systems]
        cells = " ".join(f"{'-' if a is None else f'{a:.3f}':>12}" for a in shares)
        lines.append(f"{name:<14} {total:>6} {cells}")
    lines.append("given anyway on pages whose ground truth has no value (lower is better)")
    for index, name in enumerate(WCXB_FIELDS):
        unstated = results[systems[0]][index].unstated
        if not unstated:
            continue
        shares = [results[s][index].stated_anyway / unstated for s in systems]
        cells = " ".join(f"{a:>12.3f}" for a in shares)
        lines.append(f"{name:<14} {unstated:>6} {cells}")
    return "\n".join(lines)


if __name__ == "__main__":
    import argparse

    from .datasets import load_dataset

    parser = argparse.ArgumentParser(description="title/author/date accuracy on WCXB beside trafilatura")
    parser.add_argument("--dataset", default="wcxb-dev")
    parser.add_argument("--limit", type=int)
    parser.add_argument("--misses", type=int, default=0, help="print this many misses per field")
    args = parser.parse_args()
    data = load_dataset(args.dataset, limit=args.limit)
    outcome = evaluate_wcxb_metadata(data)
    print(format_wcxb_metadata(outcome, data.name))
    for result in outcome["readerproxy"]:
        for miss in result.misses[: args.misses]:
            print(result.name, miss)
