"""WCXB's snippet metric and the wcxb layout of the dataset loader."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from readerproxy.research.cli import SnippetCounts, count_snippets
from readerproxy.research.datasets import Page, load_dataset


def test_snippets_count_with_and_without_after_whitespace_normalisation() -> None:
    page = Page(
        "1", Path("x"), "ref", with_snippets=("must  appear", "missing"), without_snippets=("Home", "Login")
    )
    counts = SnippetCounts()
    count_snippets(page, "Home\nmust\nappear here", counts)
    assert (counts.tp, counts.fn, counts.fp, counts.tn) == (1, 1, 1, 1)
    assert counts.precision == 0.5 and counts.recall == 0.5 and counts.f1 == 0.5


def test_wcxb_layout(tmp_path: Path) -> None:
    (tmp_path / "html").mkdir()
    (tmp_path / "ground-truth").mkdir()
    (tmp_path / "html" / "0001.html.gz").write_bytes(gzip.compress(b"<p>Hello</p>"))
    (tmp_path / "html" / "0002.html.gz").write_bytes(gzip.compress(b"<p>Empty</p>"))
    truth = {
        "url": "https://e.example/",
        "ground_truth": {"main_content": "Hello", "with": ["Hello"], "without": ["Nav"]},
    }
    (tmp_path / "ground-truth" / "0001.json").write_text(json.dumps(truth))
    (tmp_path / "ground-truth" / "0002.json").write_text(json.dumps({"ground_truth": {"main_content": ""}}))
    (tmp_path / "metadata.json").write_text(json.dumps({"files": {"0001": {"page_type": "forum"}}}))
    dataset = load_dataset(str(tmp_path))
    assert dataset.layout == "wcxb" and len(dataset) == 1  # no reference text: left out
    page = dataset.pages[0]
    assert (page.page_type, page.with_snippets, page.without_snippets, page.url) == (
        "forum",
        ("Hello",),
        ("Nav",),
        "https://e.example/",
    )
