"""Reading lists brought from other services: their export files read, each page saved in the
background (`ImportJob`), how far it has got shown on `/list/import`.

Formats, told apart by their content (not the file's name):

- Pocket's CSV (2024 and later): `title,url,time_added,tags,status`; tags separated by `|`;
  status `unread` or `archive`.
- Pocket's HTML (`ril_export.html`): links under an "Unread" and a "Read Archive" heading, with
  `time_added` and comma-separated `tags` attributes.
- Instapaper's CSV: `URL,Title,Selection,Folder,Timestamp`; the folder `Archive` means archived,
  any other than `Unread` and `Starred` becomes a tag.
- Wallabag's JSON: a list of entries with `url`, `title`, `tags` (strings, or objects with a
  `label`), `is_archived`.

Every item is an `ImportItem` (URL, tags, archived). A job saves them one after another through
the same read path as Save (`list_routes.save_for`), at most `MAX_ITEMS` from one file; a page
that cannot be read is counted as failed with its reason, and the job goes on.
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
import re
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from html import unescape
from typing import Any

from selectolax.lexbor import LexborHTMLParser

from .readinglist import normal_tags

#: The most items one file may bring (more are left out, and the job says so).
MAX_ITEMS = 2000
#: The largest export file read.
MAX_FILE_BYTES = 8 * 1024 * 1024
#: Failures kept for the progress page (the count goes on past them).
MAX_FAILURES_SHOWN = 50


class ImportFormatError(ValueError):
    """A file that is none of the formats read here."""


@dataclass(frozen=True, slots=True)
class ImportItem:
    url: str
    tags: tuple[str, ...] = ()
    archived: bool = False


def parse_export(data: bytes) -> tuple[str, list[ImportItem]]:
    """The format's name and the items of an export file (`ImportFormatError` when none fits)."""
    text = data.decode("utf-8-sig", "replace")
    head = text.lstrip()[:2048]
    if head.startswith(("[", "{")):
        return "wallabag", _wallabag(text)
    if head.lower().startswith(("<!doctype", "<html", "<head", "<body", "<ul", "<h1", "<title")):
        return "pocket-html", _pocket_html(text)
    first = head.splitlines()[0].strip().lower() if head else ""
    columns = [column.strip().strip('"') for column in first.split(",")]
    if "url" in columns and "time_added" in columns:
        return "pocket-csv", _pocket_csv(text)
    if columns[:2] == ["url", "title"] or {"url", "folder"} <= set(columns):
        return "instapaper-csv", _instapaper_csv(text)
    raise ImportFormatError(
        "this is not an export file read here: Pocket (CSV or HTML), Instapaper (CSV) or Wallabag (JSON)"
    )


def _web(url: Any) -> str | None:
    if not isinstance(url, str):
        return None
    url = url.strip()
    return url if re.match(r"^https?://", url, re.I) else None


def _rows(text: str) -> list[dict[str, str]]:
    reader = csv.DictReader(io.StringIO(text))
    return [{(key or "").strip().lower(): (value or "") for key, value in row.items()} for row in reader]


def _pocket_csv(text: str) -> list[ImportItem]:
    items = []
    for row in _rows(text):
        if (url := _web(row.get("url"))) is not None:
            tags = normal_tags(row.get("tags", "").replace("|", ","))
            items.append(ImportItem(url, tags, row.get("status", "").strip().lower() == "archive"))
    return items


def _instapaper_csv(text: str) -> list[ImportItem]:
    items = []
    for row in _rows(text):
        if (url := _web(row.get("url"))) is not None:
            folder = row.get("folder", "").strip()
            tags = () if folder.lower() in ("", "unread", "archive", "starred") else normal_tags(folder)
            items.append(ImportItem(url, tags, folder.lower() == "archive"))
    return items


def _wallabag(text: str) -> list[ImportItem]:
    try:
        data = json.loads(text)
    except ValueError:
        raise ImportFormatError("the JSON file cannot be read") from None
    entries = data if isinstance(data, list) else data.get("items") or data.get("entries") or []
    items = []
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict) or (url := _web(entry.get("url"))) is None:
            continue
        raw_tags = entry.get("tags") or []
        names = [tag.get("label", "") if isinstance(tag, dict) else str(tag) for tag in raw_tags]
        items.append(ImportItem(url, normal_tags(names), bool(entry.get("is_archived"))))
    return items


def _pocket_html(text: str) -> list[ImportItem]:
    """Links in document order; those after a heading that names the archive are archived."""
    tree = LexborHTMLParser(text)
    items = []
    archived = False
    for node in tree.css("h1, h2, h3, a"):
        if node.tag != "a":
            archived = "archive" in (node.text() or "").lower()
            continue
        if (url := _web(unescape(str(node.attributes.get("href") or "")))) is not None:
            tags = normal_tags(str(node.attributes.get("tags") or ""))
            items.append(ImportItem(url, tags, archived))
    return items


@dataclass
class ImportJob:
    """One reader's import: its items, how many are done, which failed and why."""

    format: str
    items: list[ImportItem]
    left_out: int = 0  # items past MAX_ITEMS
    done: int = 0
    saved: int = 0
    failed: int = 0
    failures: list[tuple[str, str]] = field(default_factory=list)
    started: float = field(default_factory=time.time)
    finished: float | None = None

    @property
    def running(self) -> bool:
        return self.finished is None

    def status(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "total": len(self.items),
            "done": self.done,
            "saved": self.saved,
            "failed": self.failed,
            "left_out": self.left_out,
            "running": self.running,
            "failures": [{"url": url, "reason": reason} for url, reason in self.failures],
        }

    async def run(self, save: Callable[[ImportItem], Awaitable[None]]) -> None:
        """Save every item in turn with `save`; a failure is noted and the job goes on."""
        try:
            for item in self.items:
                try:
                    await save(item)
                    self.saved += 1
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # the page's failure (fetch, extraction), not the job's
                    self.failed += 1
                    if len(self.failures) < MAX_FAILURES_SHOWN:
                        self.failures.append((item.url, str(exc) or type(exc).__name__))
                self.done += 1
        finally:
            self.finished = time.time()


def new_job(data: bytes) -> ImportJob:
    """A job for an export file's items (`ImportFormatError` for a file read here as none)."""
    if len(data) > MAX_FILE_BYTES:
        raise ImportFormatError(f"the file is over {MAX_FILE_BYTES // (1024 * 1024)} MB")
    name, items = parse_export(data)
    unique: dict[str, ImportItem] = {}
    for item in items:
        unique.setdefault(item.url, item)
    kept = list(unique.values())
    return ImportJob(name, oldest_first(kept[:MAX_ITEMS]), left_out=max(0, len(kept) - MAX_ITEMS))


def oldest_first(items: Iterable[ImportItem]) -> list[ImportItem]:
    """Exports list the newest first; saving them in reverse keeps that order in the list."""
    return list(reversed(list(items)))
