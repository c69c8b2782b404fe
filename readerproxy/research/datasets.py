"""Datasets of pages with a known answer: ScrapingHub's article bodies and Mozilla Readability's tests.

Two layouts are understood, wherever they live:
- ScrapingHub: `html/<id>.html.gz` (or `.html`) and `ground-truth.json` = `{id: {"articleBody", "url"}}`.
- Readability: `<name>/source.html`, `<name>/expected.html` (reference text = its visible text, read
  with our own parser) and `<name>/expected-metadata.json` (reference title).

- WCXB: `html/<id>.html.gz`, `ground-truth/<id>.json` (`ground_truth.main_content`, `with` / `without`
  snippets) and `metadata.json` (`files: {id: {page_type, domain}}`); pages without reference text
  are left out.
- Snippets (older-dev, trafilatura's evaluation set): `html/<id>.html.gz` and `ground-truth.json` =
  `{id: {"url", "with": [...], "without": [...]}}`; no reference text, only the snippets that must
  and must not appear (scored by `cli.snippet_scores`).

`--dataset scrapinghub|readability|wcxb-dev|older-dev` is looked up in `datasets_root()`; any other
value is a directory.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..api import to_text
from ..engine.output import render_text
from ..engine.parse.document import parse

DATASETS_ENV = "READERPROXY_DATASETS"
NAMED = ("scrapinghub", "readability", "wcxb-dev", "older-dev")
_REPOSITORY = Path(__file__).resolve().parent.parent.parent


@dataclass(frozen=True, slots=True)
class Page:
    """One page of a dataset; the HTML is read on demand."""

    id: str
    path: Path
    reference_text: str  # "" in the snippets layout, which has none
    reference_title: str | None = None  # only the readability layout has titles
    url: str | None = None
    page_type: str | None = None  # WCXB: article, forum, product, listing, collection, ...
    with_snippets: tuple[str, ...] = ()  # WCXB, snippets: text that must appear in the extraction
    without_snippets: tuple[str, ...] = ()  # WCXB, snippets: text that must not

    def read_bytes(self) -> bytes:
        """The page as stored (gzip is undone by `to_text`)."""
        return self.path.read_bytes()

    def read_html(self) -> str:
        """The page decoded to text (gzip, BOM, charset declarations, detector)."""
        return to_text(self.read_bytes())


@dataclass(frozen=True, slots=True)
class Dataset:
    """A named list of pages."""

    name: str
    root: Path
    layout: str  # "scrapinghub", "readability", "wcxb" or "snippets"
    pages: list[Page]

    @property
    def has_reference(self) -> bool:
        """Whether pages carry a reference text (the snippets layout has only snippets)."""
        return self.layout != "snippets"

    def __len__(self) -> int:
        return len(self.pages)

    def __iter__(self) -> Iterator[Page]:
        return iter(self.pages)


def datasets_root() -> Path | None:
    """$READERPROXY_DATASETS, else ../shared/datasets from the current directory, else from the repository."""
    override = os.environ.get(DATASETS_ENV)
    if override:
        return Path(override)
    for base in (Path.cwd(), _REPOSITORY):
        candidate = base.parent / "shared" / "datasets"
        if candidate.is_dir():
            return candidate
    return None


def resolve_dataset_dir(name_or_dir: str) -> Path:
    """The directory of a named dataset, or the given directory; FileNotFoundError if absent."""
    if name_or_dir in NAMED:
        root = datasets_root()
        if root is None or not (root / name_or_dir).is_dir():
            raise FileNotFoundError(
                f"dataset {name_or_dir!r} not found: set ${DATASETS_ENV} or run beside ../shared/datasets"
            )
        return root / name_or_dir
    path = Path(name_or_dir)
    if not path.is_dir():
        raise FileNotFoundError(f"no dataset directory {name_or_dir!r} (named ones: {', '.join(NAMED)})")
    return path


def detect_layout(directory: Path) -> str:
    """'scrapinghub', 'readability', 'wcxb' or 'snippets' from the files present; ValueError otherwise.
    `ground-truth.json` + `html/` is the snippets layout when its entries carry `with` / `without`
    and no `articleBody`."""
    if (directory / "ground-truth").is_dir() and (directory / "metadata.json").is_file():
        return "wcxb"
    if (directory / "ground-truth.json").is_file() and (directory / "html").is_dir():
        entries = [e for e in _read_json(directory / "ground-truth.json").values() if isinstance(e, dict)]
        snippets = any("with" in e or "without" in e for e in entries)
        return "snippets" if snippets and not any("articleBody" in e for e in entries) else "scrapinghub"
    if any((child / "source.html").is_file() for child in directory.iterdir() if child.is_dir()):
        return "readability"
    raise ValueError(
        f"{directory} is laid out like neither dataset (ground-truth.json + html/, or */source.html)"
    )


def load_dataset(name_or_dir: str, limit: int | None = None) -> Dataset:
    """The pages of a dataset in a stable (sorted) order, the first `limit` of them if given."""
    directory = resolve_dataset_dir(name_or_dir)
    layout = detect_layout(directory)
    readers = {
        "scrapinghub": scrapinghub_pages,
        "readability": readability_pages,
        "wcxb": wcxb_pages,
        "snippets": snippet_pages,
    }
    pages = readers[layout](directory, limit)
    name = name_or_dir if name_or_dir in NAMED else directory.name
    return Dataset(name=name, root=directory, layout=layout, pages=pages)


def scrapinghub_pages(directory: Path, limit: int | None = None) -> list[Page]:
    """Pages of the ScrapingHub layout that have both HTML and a ground-truth entry."""
    truth = json.loads((directory / "ground-truth.json").read_text(encoding="utf-8"))
    pages: list[Page] = []
    for page_id in sorted(truth):
        path = _first_existing(directory / "html", page_id, (".html.gz", ".html"))
        if path is None:
            continue
        entry = truth[page_id]
        pages.append(Page(page_id, path, entry.get("articleBody") or "", url=entry.get("url")))
        if limit is not None and len(pages) >= limit:
            break
    return pages


def readability_pages(directory: Path, limit: int | None = None) -> list[Page]:
    """Pages of the Readability layout; reference text is the visible text of expected.html."""
    pages: list[Page] = []
    for folder in sorted(child for child in directory.iterdir() if child.is_dir()):
        source, expected = folder / "source.html", folder / "expected.html"
        if not source.is_file() or not expected.is_file():
            continue
        metadata = _read_json(folder / "expected-metadata.json")
        title = metadata.get("title")
        pages.append(
            Page(
                folder.name,
                source,
                visible_text(expected.read_bytes()),
                reference_title=title if isinstance(title, str) else None,
            )
        )
        if limit is not None and len(pages) >= limit:
            break
    return pages


def wcxb_pages(directory: Path, limit: int | None = None) -> list[Page]:
    """Pages of the WCXB layout with a reference text, their page type and snippets."""
    files = _read_json(directory / "metadata.json").get("files")
    info = files if isinstance(files, dict) else {}
    pages: list[Page] = []
    for truth_path in sorted((directory / "ground-truth").glob("*.json")):
        page_id = truth_path.stem
        path = _first_existing(directory / "html", page_id, (".html.gz", ".html"))
        entry = _read_json(truth_path)
        truth = entry.get("ground_truth")
        if path is None or not isinstance(truth, dict) or not truth.get("main_content"):
            continue
        kind = info.get(page_id, {})
        pages.append(
            Page(
                page_id,
                path,
                str(truth["main_content"]),
                url=entry.get("url") if isinstance(entry.get("url"), str) else None,  # type: ignore[arg-type]
                page_type=kind.get("page_type") if isinstance(kind, dict) else None,
                with_snippets=tuple(str(x) for x in truth.get("with") or ()),
                without_snippets=tuple(str(x) for x in truth.get("without") or ()),
            )
        )
        if limit is not None and len(pages) >= limit:
            break
    return pages


def snippet_pages(directory: Path, limit: int | None = None) -> list[Page]:
    """Pages of the snippets layout that have HTML and at least one snippet; no reference text."""
    truth = _read_json(directory / "ground-truth.json")
    pages: list[Page] = []
    for page_id in sorted(truth):
        entry = truth[page_id]
        path = _first_existing(directory / "html", page_id, (".html.gz", ".html"))
        if path is None or not isinstance(entry, dict):
            continue
        with_snippets = tuple(str(x) for x in entry.get("with") or ())
        without_snippets = tuple(str(x) for x in entry.get("without") or ())
        if not with_snippets and not without_snippets:
            continue
        url = entry.get("url")
        pages.append(
            Page(
                page_id,
                path,
                "",
                url=url if isinstance(url, str) else None,
                with_snippets=with_snippets,
                without_snippets=without_snippets,
            )
        )
        if limit is not None and len(pages) >= limit:
            break
    return pages


def visible_text(html: bytes | str) -> str:
    """Plain text of a page's <body> with our own parser and renderer (one block per paragraph)."""
    doc = parse(to_text(html))
    return render_text(doc, doc.body_mask)


def _first_existing(directory: Path, stem: str, suffixes: tuple[str, ...]) -> Path | None:
    for suffix in suffixes:
        path = directory / f"{stem}{suffix}"
        if path.is_file():
            return path
    return None


def _read_json(path: Path) -> dict[str, object]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}
