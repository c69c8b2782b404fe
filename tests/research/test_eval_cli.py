"""`readerproxy eval`, `--report` and `readerproxy bench` on a few pages of the shared datasets."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from readerproxy.cli import main
from readerproxy.research import runner
from readerproxy.research.datasets import DATASETS_ENV


@pytest.fixture
def datasets_env(shared_datasets: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The shared datasets (skips without ../shared), found through the environment override."""
    monkeypatch.setenv(DATASETS_ENV, str(shared_datasets))
    return shared_datasets


def test_eval_prints_one_table_and_density_beats_baseline(
    datasets_env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_json = tmp_path / "eval.json"
    code = main(
        [
            "eval",
            "--dataset",
            "scrapinghub",
            "--algo",
            "baseline,density",
            "--limit",
            "8",
            "--json",
            str(out_json),
            "--no-progress",
        ]
    )
    assert code == 0
    table = capsys.readouterr().out
    assert "dataset scrapinghub: 8 pages" in table
    for column in ("shingles", "LCSeq", "LCStr", "BoW", "acc", "ms p50", "ms p95", "MB/s", "err"):
        assert column in table
    assert "title" not in table.splitlines()[1]  # no titles on ScrapingHub
    rows = {line.split()[0]: line for line in table.splitlines() if line.startswith(("baseline", "density"))}
    assert set(rows) == {"baseline", "density"}
    assert len(re.findall(r"\d\.\d{3}", rows["density"])) == 13  # 4 shingle + 3 x 3 LCS/BoW numbers

    data = json.loads(out_json.read_text(encoding="utf-8"))
    summaries = {a["label"]: a["summary"] for a in data["algorithms"]}
    assert summaries["density"]["shingles"]["f1"] > summaries["baseline"]["shingles"]["f1"]
    assert summaries["baseline"]["shingles"]["recall"] > 0.9  # all text contains the article
    density_pages = data["algorithms"][1]["pages"]
    assert len(density_pages) == 8
    assert {"shingles", "lcs_sequence", "lcs_string", "bag_of_words", "total_ms", "error"} <= set(
        density_pages[0]
    )


def test_eval_on_the_readability_set_reports_title_matches(
    datasets_env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_json = tmp_path / "eval.json"
    assert (
        main(
            [
                "eval",
                "--dataset",
                "readability",
                "--algo",
                "baseline,density",
                "--limit",
                "3",
                "--json",
                str(out_json),
                "--no-progress",
            ]
        )
        == 0
    )
    table = capsys.readouterr().out
    assert "title" in table.splitlines()[1] and "match" in table
    summaries = {
        a["label"]: a["summary"] for a in json.loads(out_json.read_text(encoding="utf-8"))["algorithms"]
    }
    for summary in summaries.values():
        assert 0.0 <= summary["title_accuracy"] <= 1.0
    # The reference (visible text of expected.html) is part of the page: all text recalls it.
    assert summaries["baseline"]["shingles"]["recall"] > 0.95


def test_eval_refuses_unknown_algorithms_and_datasets(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "--algo", "nosuch", "--limit", "1"]) == 2
    assert "unknown algorithm" in capsys.readouterr().err
    assert main(["eval", "--dataset", "/nonexistent/dir", "--algo", "baseline"]) == 2
    assert "no dataset directory" in capsys.readouterr().err


def test_report_is_self_contained_with_svg_charts(
    datasets_env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "report.html"
    assert (
        main(
            [
                "eval",
                "--dataset",
                "scrapinghub",
                "--algo",
                "baseline,density",
                "--limit",
                "4",
                "--report",
                str(report),
                "--no-progress",
            ]
        )
        == 0
    )
    capsys.readouterr()
    page = report.read_text(encoding="utf-8")
    assert page.startswith("<!doctype html>")
    # Bar charts (4 metrics + speed), strip plots (4 metrics) and one histogram per algorithm.
    assert page.count("<svg") == 5 + 4 + 2
    assert page.count("<circle") == 4 * 2 * 4  # a dot per page, algorithm and metric
    assert "<rect" in page and "Shingle F1 (ScrapingHub)" in page
    assert ">baseline<" in page and ">density<" in page
    lowered = page.lower()
    for external in ("http:", "https:", "//", "<script", "<link", "<img", "src=", "url(", "@import"):
        assert external not in lowered, external


def test_bench_output_structure(
    datasets_env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_json = tmp_path / "bench.json"
    assert (
        main(
            [
                "bench",
                "--dataset",
                "scrapinghub",
                "--algo",
                "baseline,density",
                "--limit",
                "2",
                "--repeat",
                "1",
                "--json",
                str(out_json),
                "--no-progress",
            ]
        )
        == 0
    )
    table = capsys.readouterr().out
    assert table.startswith("bench scrapinghub: 2 pages")
    for column in ("MB/s", "ms p50", "ms p95", "x trafil.", "extract p50", "parse share", "peak KiB p50"):
        assert column in table
    data = json.loads(out_json.read_text(encoding="utf-8"))
    assert data["pages"] == 2 and data["html_bytes"] > 0
    rows = {row["name"]: row for row in data["rows"]}
    assert list(rows)[:3] == ["parse", "baseline", "density"]
    assert set(rows) - {"parse", "baseline", "density"} == set(runner.installed_peers())
    for name in ("baseline", "density"):
        assert rows[name]["kind"] == "ours"
        assert len(rows[name]["page_ms"]) == len(rows[name]["extract_ms"]) == len(rows[name]["parse_ms"]) == 2
        assert len(rows[name]["peak_kib"]) == 2
        assert rows[name]["errors"] == 0
        assert name in table
    assert len(rows["parse"]["page_ms"]) == 2
    for peer in runner.installed_peers():
        assert rows[peer]["kind"] == "peer" and len(rows[peer]["page_ms"]) == 2
        assert peer in table


def test_eval_on_wcxb_prints_page_types_and_snippets(
    datasets_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["eval", "--dataset", "wcxb-dev", "--algo", "baseline", "--limit", "5", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "dataset wcxb-dev: 5 pages" in out
    assert "F1 by page type" in out and "article" in out and "all" in out
    snippet_row = next(
        line
        for line in out.splitlines()
        if line.startswith("baseline") and "|" in line and len(line.split("|")) == 3
    )
    tp, fn, _fp, _tn = (int(x) for x in snippet_row.split("|")[1].split())
    assert tp > fn  # all text contains most of what must appear


def test_eval_metadata_table_on_the_readability_set(
    datasets_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        main(
            [
                "eval",
                "--dataset",
                "readability",
                "--algo",
                "baseline",
                "--limit",
                "4",
                "--metadata",
                "--no-progress",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    for field in ("title", "byline", "excerpt", "dir", "siteName", "publishedTime", "lang", "readerable"):
        assert re.search(rf"^{field}\s+\d+\s+\d+\s+", out, re.M), field
    assert (
        main(
            [
                "eval",
                "--dataset",
                "scrapinghub",
                "--algo",
                "baseline",
                "--limit",
                "1",
                "--metadata",
                "--no-progress",
            ]
        )
        == 2
    )
