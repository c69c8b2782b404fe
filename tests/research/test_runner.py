"""The runner: algorithm specs, scoring every page, failures counted without stopping the run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from readerproxy.engine import pipeline
from readerproxy.engine.extraction import registry
from readerproxy.engine.parse.document import Document
from readerproxy.engine.parse.document import parse as real_parse
from readerproxy.research import runner
from readerproxy.research.datasets import load_dataset
from readerproxy.research.runner import AlgorithmSpec, evaluate, parse_spec, parse_specs

ARTICLE = " ".join(f"Sentence number {i} tells the story of the river and the town." for i in range(30))
PAGE = f"""<html><head><title>River story</title></head><body>
<ul><li><a href="/a">Home</a></li><li><a href="/b">Sports news</a></li><li><a href="/c">Weather</a></li></ul>
<div><p>{ARTICLE}</p></div><footer><a href="/l">Legal notice and privacy</a></footer></body></html>"""


def make_dataset(root: Path, pages: dict[str, str]) -> Path:
    (root / "html").mkdir(parents=True)
    truth = {}
    for page_id, html in pages.items():
        (root / "html" / f"{page_id}.html").write_text(html, encoding="utf-8")
        truth[page_id] = {"articleBody": ARTICLE, "url": f"https://{page_id}.example/"}
    (root / "ground-truth.json").write_text(json.dumps(truth), encoding="utf-8")
    return root


def test_specs_with_parameters() -> None:
    spec = parse_spec("density:c1=0.5:c2=6")
    assert spec == AlgorithmSpec("density", (("c1", "0.5"), ("c2", "6")))
    assert spec.label == "density:c1=0.5:c2=6"
    assert [s.label for s in parse_specs("baseline, density,baseline")] == ["baseline", "density"]


def test_all_expands_to_every_registered_extractor_and_installed_peer() -> None:
    labels = [spec.label for spec in parse_specs("all")]
    assert labels == sorted(registry()) + runner.installed_peers()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("nosuch", "unknown algorithm"),
        ("density:zz=1", "unknown parameter"),
        ("density:c1", "name=value"),
        ("density:c2=abc", "expects int"),
        ("", "no algorithm"),
    ],
)
def test_bad_specs_raise_value_errors_naming_the_problem(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_specs(text)


def test_every_page_is_scored_against_its_reference(tmp_path: Path) -> None:
    dataset = load_dataset(str(make_dataset(tmp_path / "d", {"p1": PAGE, "p2": PAGE})))
    evaluation = evaluate(dataset, parse_specs("baseline,density"))
    baseline, density = evaluation.results
    assert [p.page for p in density.pages] == ["p1", "p2"]
    assert density.summary.shingles.recall == pytest.approx(1.0)
    assert density.summary.shingles.f1 > baseline.summary.shingles.f1  # the menu costs baseline precision
    assert baseline.summary.shingles.precision < 1.0
    for page in density.pages:
        assert page.error is None
        assert page.size_bytes == len(PAGE.encode("utf-8"))
        assert page.parse_ms is not None and page.total_ms >= page.parse_ms
        assert page.title_ok is None  # the ScrapingHub layout has no titles
    summary = density.summary
    assert summary.pages == 2 and summary.errors == 0
    assert summary.parse_share is not None and 0 < summary.parse_share <= 1
    assert summary.title_accuracy is None


def test_a_failing_page_is_counted_and_the_run_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fragile_parse(html: str, url: str | None = None) -> Document:
        if "EXPLODE" in html:
            raise RuntimeError("boom")
        return real_parse(html, url)

    monkeypatch.setattr(pipeline, "parse", fragile_parse)
    broken = PAGE.replace("River story", "EXPLODE")
    dataset = load_dataset(str(make_dataset(tmp_path / "d", {"a": PAGE, "b": broken, "c": PAGE})))
    (result,) = evaluate(dataset, parse_specs("density")).results
    assert [p.error is None for p in result.pages] == [True, False, True]
    assert result.pages[1].error == "RuntimeError: boom"
    assert result.pages[1].shingles.recall == 0.0  # an error counts as an empty prediction
    assert result.summary.errors == 1
    assert result.summary.shingles.recall == pytest.approx(2 / 3)


@pytest.mark.skipif("ext:trafilatura" not in runner.installed_peers(), reason="trafilatura not installed")
def test_trafilatura_runs_as_a_peer(tmp_path: Path) -> None:
    dataset = load_dataset(str(make_dataset(tmp_path / "d", {"p": PAGE})))
    (result,) = evaluate(dataset, parse_specs("ext:trafilatura")).results
    (page,) = result.pages
    assert page.error is None
    assert page.parse_ms is None
    assert page.bag_of_words.recall > 0.9


def test_progress_bar_writes_carriage_return_lines(tmp_path: Path) -> None:
    import io

    stream = io.StringIO()
    dataset = load_dataset(str(make_dataset(tmp_path / "d", {"p": PAGE})))
    evaluate(dataset, parse_specs("baseline,density"), runner.Progress(2, True, stream))
    output = stream.getvalue()
    assert "\r[" in output and "2/2" in output
