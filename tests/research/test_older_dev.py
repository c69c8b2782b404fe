"""The snippets layout (older-dev, trafilatura's evaluation set) in `readerproxy eval`: the loader,
the snippet metric counted by hand on a tiny directory, `--oof`, `--json` and `--report`."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from readerproxy.cli import main
from readerproxy.research.datasets import detect_layout, load_dataset
from readerproxy.research.oof import OutOfFold
from readerproxy.research.training.folds import fold_of_site

FOLDS = Path(__file__).parents[1] / "fixtures" / "folds"

PAGES = {
    "p1": (
        "https://www.example-news.de/story-1",
        "<html><body><nav><p>Nav here</p></nav><article><p>Alpha   beta is the first sentence.</p>"
        "<p>Gamma follows.</p></article></body></html>",
        ["alpha beta", "Gamma follows"],  # "alpha beta" differs in case: missing (FN)
        ["Nav here", "Not on the page"],
    ),
    "p2": (
        "https://blog.other-site.com/post",
        "<html><body><article><p>Delta comes here.</p></article><footer><p>Footer text</p></footer>"
        "</body></html>",
        ["Delta\n comes", "Never there"],
        ["Footer text"],
    ),
}


def _older_dev(directory: Path) -> Path:
    (directory / "html").mkdir(parents=True)
    truth = {}
    for page_id, (url, html, with_, without) in PAGES.items():
        (directory / "html" / f"{page_id}.html.gz").write_bytes(gzip.compress(html.encode()))
        truth[page_id] = {"url": url, "with": with_, "without": without}
    (directory / "ground-truth.json").write_text(json.dumps(truth), encoding="utf-8")
    return directory


def test_snippets_layout_is_told_apart_from_scrapinghub(tmp_path: Path) -> None:
    older = _older_dev(tmp_path / "older")
    assert detect_layout(older) == "snippets"
    dataset = load_dataset(str(older))
    assert dataset.layout == "snippets" and not dataset.has_reference and len(dataset) == 2
    page = dataset.pages[0]
    assert (page.id, page.url, page.reference_text) == ("p1", "https://www.example-news.de/story-1", "")
    assert page.with_snippets == ("alpha beta", "Gamma follows")
    assert page.without_snippets == ("Nav here", "Not on the page")

    scrapinghub = tmp_path / "sh"
    (scrapinghub / "html").mkdir(parents=True)
    (scrapinghub / "html" / "a.html").write_text("<p>x</p>")
    (scrapinghub / "ground-truth.json").write_text(json.dumps({"a": {"articleBody": "x", "url": "u"}}))
    assert detect_layout(scrapinghub) == "scrapinghub"


def test_eval_counts_snippets_by_hand(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    older = _older_dev(tmp_path / "older")
    out_json, report = tmp_path / "eval.json", tmp_path / "report.html"
    args = ["eval", "--dataset", str(older), "--algo", "baseline", "--no-progress"]
    assert main([*args, "--json", str(out_json), "--report", str(report)]) == 0
    out = capsys.readouterr().out
    # baseline keeps the whole body: with = {alpha beta: FN (case), Gamma follows: TP, Delta comes: TP
    # (whitespace normalised), Never there: FN}; without = {Nav here: FP, Not on the page: TN, Footer: FP}
    tp, fn, fp, tn = 2, 2, 2, 1
    precision, recall = tp / (tp + fp), tp / (tp + fn)
    f1 = 2 * precision * recall / (precision + recall)
    lines = out.splitlines()
    row = lines[next(i for i, line in enumerate(lines) if line.startswith("snippets")) + 2]
    assert row.startswith("baseline")
    assert row.split("|")[1].split() == [str(tp), str(fn), str(fp), str(tn)]
    assert row.split("|")[2].split() == [f"{precision:.3f}", f"{recall:.3f}", f"{f1:.3f}"]
    assert "shingles" not in out.splitlines()[1]  # no reference text: no text metrics
    snippets = json.loads(out_json.read_text(encoding="utf-8"))["snippets"]["baseline"]
    assert (snippets["tp"], snippets["fn"], snippets["fp"], snippets["tn"]) == (tp, fn, fp, tn)
    assert snippets["precision"] == precision and snippets["recall"] == recall
    html = report.read_text(encoding="utf-8")
    assert "<h2>Snippets</h2>" in html and "shingle F1" not in html


def test_oof_picks_the_fold_of_the_pages_site(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    older = _older_dev(tmp_path / "older")
    dataset = load_dataset(str(older))
    oof = OutOfFold.load(FOLDS, dataset.layout)
    assert [oof.fold(page) for page in dataset] == [
        fold_of_site("example-news", oof.folds),
        fold_of_site("other-site", oof.folds),
    ]
    args = ["eval", "--dataset", str(older), "--algo", "auto", "--oof", str(FOLDS), "--no-progress"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "snippets" in out and any(line.startswith("auto ") for line in out.splitlines())
