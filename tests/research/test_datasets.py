"""Dataset layouts, discovery and reference texts, on small directories built by the tests."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from readerproxy.research import datasets
from readerproxy.research.datasets import detect_layout, load_dataset, visible_text

PAGE = "<html><head><title>T</title></head><body><nav>Menu</nav><p>Body text here.</p></body></html>"


def make_scrapinghub(root: Path) -> Path:
    (root / "html").mkdir(parents=True)
    (root / "html" / "b.html.gz").write_bytes(gzip.compress(PAGE.encode("utf-8")))
    (root / "html" / "a.html").write_text(PAGE, encoding="utf-8")
    truth = {
        "a": {"articleBody": "Body text here.", "url": "https://a.example/"},
        "b": {"articleBody": "Body text here.", "url": "https://b.example/"},
        "missing": {"articleBody": "no html for this one", "url": None},
    }
    (root / "ground-truth.json").write_text(json.dumps(truth), encoding="utf-8")
    return root


def make_readability(root: Path) -> Path:
    for name in ("one", "two"):
        folder = root / name
        folder.mkdir(parents=True)
        (folder / "source.html").write_text(PAGE, encoding="utf-8")
        (folder / "expected.html").write_text(
            "<div><h2>Heading</h2><p>First &amp; paragraph.</p><p>Second one.</p></div>", encoding="utf-8"
        )
        (folder / "expected-metadata.json").write_text(
            json.dumps({"title": f"Title {name}"}), encoding="utf-8"
        )
    (root / "LICENSE.md").write_text("licence", encoding="utf-8")
    return root


def test_scrapinghub_layout_reads_gzip_and_plain_pages_with_ground_truth(tmp_path: Path) -> None:
    dataset = load_dataset(str(make_scrapinghub(tmp_path / "sh")))
    assert dataset.layout == "scrapinghub"
    assert [page.id for page in dataset] == ["a", "b"]  # sorted; the page without HTML is skipped
    page = dataset.pages[1]
    assert page.reference_text == "Body text here."
    assert page.url == "https://b.example/"
    assert page.reference_title is None
    assert "Body text here." in page.read_html()  # gzip undone


def test_readability_layout_uses_visible_text_of_expected_html_and_metadata_title(tmp_path: Path) -> None:
    dataset = load_dataset(str(make_readability(tmp_path / "rd")), limit=1)
    assert dataset.layout == "readability"
    assert len(dataset) == 1
    page = dataset.pages[0]
    assert page.id == "one"
    assert page.reference_text == "Heading\n\nFirst & paragraph.\n\nSecond one."
    assert page.reference_title == "Title one"


def test_visible_text_skips_hidden_and_script_content() -> None:
    text = visible_text(b"<p>Shown</p><script>var x;</script><p hidden>Hidden</p><p>Also</p>")
    assert text == "Shown\n\nAlso"


def test_named_datasets_are_found_through_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_scrapinghub(tmp_path / "scrapinghub")
    monkeypatch.setenv(datasets.DATASETS_ENV, str(tmp_path))
    dataset = load_dataset("scrapinghub")
    assert dataset.name == "scrapinghub"
    assert dataset.root == tmp_path / "scrapinghub"


def test_named_datasets_are_found_beside_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_readability(tmp_path / "shared" / "datasets" / "readability")
    (tmp_path / "project").mkdir()
    monkeypatch.delenv(datasets.DATASETS_ENV, raising=False)
    monkeypatch.chdir(tmp_path / "project")
    assert datasets.datasets_root() == tmp_path / "shared" / "datasets"
    assert len(load_dataset("readability")) == 2


def test_unknown_directories_and_layouts_are_refused(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        load_dataset(str(tmp_path / "nowhere"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="neither"):
        detect_layout(tmp_path / "empty")
