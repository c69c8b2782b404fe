"""Leave one set out (`research.transfer`, `readerproxy train --leave-one-set-out`, `eval --loso`) and
WCXB's metric per page type beside rs-trafilatura's published figures."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from readerproxy.cli import main
from readerproxy.engine.learn.model import load_model
from readerproxy.research.datasets import Dataset, datasets_root, load_dataset
from readerproxy.research.metrics import mean_score
from readerproxy.research.runner import AlgorithmSpec, evaluate
from readerproxy.research.transfer import (
    MANIFEST,
    RS_TRAFILATURA_WCXB_DEV,
    HeldOutSet,
    format_wcxb_types,
    held_out_splits,
    model_file,
    wcxb_type_scores,
)

needs_datasets = pytest.mark.skipif(datasets_root() is None, reason="../shared/datasets is not present")
SETS = ("scrapinghub", "readability", "wcxb-dev")


def test_a_held_out_set_and_its_sites_are_never_in_its_training_pages() -> None:
    pages = [
        ("scrapinghub", "a", "nytimes"),
        ("scrapinghub", "b", "bbc"),
        ("readability", "nytimes-3", "nytimes"),
        ("readability", "wiki", "wikipedia"),
        ("wcxb-dev", "1", "python"),
        ("wcxb-dev", "2", "bbc"),
    ]
    splits = {split.held_out: split for split in held_out_splits(pages)}
    assert list(splits) == list(SETS)
    for held_out, split in splits.items():
        held_sites = {site for name, _, site in pages if name == held_out}
        learned = [pages[i] for i in split.training_pages.tolist()]
        assert all(name != held_out and site not in held_sites for name, _, site in learned), held_out
        others = [p for p in pages if p[0] != held_out]
        assert len(learned) + split.dropped_pages == len(others)  # nothing else is left out
    assert splits["readability"].dropped_sites == ("nytimes",)
    assert [pages[i][1] for i in splits["readability"].training_pages] == ["b", "1", "2"]
    assert splits["scrapinghub"].dropped_sites == ("bbc", "nytimes")
    assert splits["scrapinghub"].training_sets(pages) == {"readability": 1, "wcxb-dev": 1}


@needs_datasets
def test_leave_one_set_out_scores_each_set_by_a_model_that_never_saw_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("lightgbm", reason="the train extra (lightgbm) is not installed")
    transfer, table_json, out = tmp_path / "transfer", tmp_path / "table.json", tmp_path / "model.npz"
    args = ["train", "--limit", "3", "--rounds", "3", "--bags", "1", "--oof-dir", str(tmp_path)]
    args += ["--out", str(out), "--leave-one-set-out", "--transfer-dir", str(transfer)]
    assert main([*args, "--transfer-json", str(table_json)]) == 0
    printed = capsys.readouterr().out
    assert "worst held-out set:" in printed and "rs-trafil." in printed
    assert not out.exists()  # the shipped model is never written by this protocol
    table = json.loads(table_json.read_text(encoding="utf-8"))
    assert table["sets"] == list(SETS)
    manifest = json.loads((transfer / MANIFEST).read_text(encoding="utf-8"))
    assert set(manifest["held_out"]) == set(SETS)
    for held_out in SETS:
        others = [name for name in SETS if name != held_out]
        row = " + ".join(others)
        # One cell per held-out row: the set the model never learned from, all of its pages.
        assert list(table["rows"][row]) == [held_out]
        assert table["rows"][row][held_out]["pages"] == 3 and table["rows"][row][held_out]["errors"] == 0
        assert set(manifest["held_out"][held_out]["learned_from"]) == set(others)
        provenance = load_model(str(transfer / model_file(held_out))).provenance
        assert provenance is not None and provenance.parameters["held_out"] == held_out
        assert set(provenance.datasets) == set(others)
    # `eval --loso` scores a set with the model trained without it: the table's cell again.
    held = HeldOutSet.load(transfer, "wcxb-dev")
    assert held.model == transfer / model_file("wcxb-dev")
    eval_json = tmp_path / "eval.json"
    loso = ["eval", "--dataset", "wcxb-dev", "--limit", "3", "--algo", "auto", "--no-progress"]
    assert main([*loso, "--loso", str(transfer), "--json", str(eval_json)]) == 0
    assert "WCXB metric by type" in capsys.readouterr().out
    summary = json.loads(eval_json.read_text(encoding="utf-8"))["algorithms"][0]["summary"]
    cell = table["rows"]["scrapinghub + readability"]["wcxb-dev"]
    assert summary["bag_of_words"]["f1"] == pytest.approx(cell["bow_f1"])
    assert main([*loso, "--loso", str(transfer), "--oof", str(tmp_path)]) == 2  # one protocol at a time
    assert "one" in capsys.readouterr().err
    assert main([*args, "--site-folds", str(tmp_path / "nowhere")]) == 2  # refused before training
    assert "no usable manifest.json" in capsys.readouterr().err
    (transfer / model_file("readability")).unlink()
    with pytest.raises(ValueError, match=r"without-readability\.npz missing"):
        HeldOutSet.load(transfer, "readability")
    with pytest.raises(ValueError, match="no model trained without 'elsewhere'"):
        HeldOutSet.load(transfer, "elsewhere")


def _one_page_of_each_type(per_type: int) -> Dataset:
    """The first `per_type` pages of every WCXB page type (sorted ids), as one small dataset."""
    dataset = load_dataset("wcxb-dev")
    taken: dict[str | None, int] = {}
    pages = []
    for page in dataset:
        if taken.get(page.page_type, 0) < per_type:
            taken[page.page_type] = taken.get(page.page_type, 0) + 1
            pages.append(page)
    return Dataset(dataset.name, dataset.root, dataset.layout, pages)


@needs_datasets
def test_wcxb_metric_per_type_is_the_mean_of_its_pages_beside_rs_trafilatura() -> None:
    dataset = _one_page_of_each_type(2)
    evaluation = evaluate(dataset, [AlgorithmSpec("baseline"), AlgorithmSpec("density")])
    scores = wcxb_type_scores(evaluation, dataset, "density")
    kinds = {page.id: page.page_type for page in dataset}
    density = evaluation.results[1].pages
    assert [s.page_type for s in scores][-1] == "all"
    assert {s.page_type for s in scores[:-1]} == {page.page_type for page in dataset}
    assert set(RS_TRAFILATURA_WCXB_DEV) == {s.page_type for s in scores}  # the seven types, and all
    for score in scores:
        mine = [p.bag_of_words for p in density if score.page_type in ("all", kinds[p.page])]
        assert score.pages == len(mine)
        assert score.bow_f1 == pytest.approx(mean_score(mine).f1)
        assert score.bow_f1 == pytest.approx(float(np.mean([s.f1 for s in mine])))  # mean per page
        assert score.published == RS_TRAFILATURA_WCXB_DEV[score.page_type]
        assert score.margin == pytest.approx(score.bow_f1 - score.published)
    text = format_wcxb_types(scores, "density")
    behind = [s.page_type for s in scores if s.margin is not None and s.margin <= 0]
    assert f"behind or level with rs-trafilatura: {', '.join(behind) or 'none'}" in text
    assert all(f"{s.published:.3f}" in text for s in scores if s.published is not None)
