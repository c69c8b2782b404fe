"""Block labels from snippet truth (older-dev): `training.labels.snippet_labels`, and what training
does with blocks that carry no label (`TrainingSet.known`: left out of the fit, no weight)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from readerproxy.cli import main
from readerproxy.engine.extractors.auto import first_extractor
from readerproxy.engine.learn.blocks import page_blocks
from readerproxy.engine.learn.model import load_model
from readerproxy.engine.parse.document import parse
from readerproxy.research.datasets import datasets_root
from readerproxy.research.training.labels import block_texts, label_blocks, snippet_labels
from readerproxy.research.transfer import MANIFEST, model_file

needs_datasets = pytest.mark.skipif(datasets_root() is None, reason="../shared/datasets is not present")

PAGE = """<html><body>
<nav><ul><li><a href="/">Home</a></li><li><a href="/news">News</a></li></ul></nav>
<article>
<h1>Die Brücke über den Fluss</h1>
<p>Die Stadt hat am Montag die neue Brücke eröffnet, nach drei Jahren Bauzeit.</p>
<p>Der Bürgermeister sprach von einem <b>großen Tag</b> für die Region und ihre Pendler.</p>
<div>Zwei Spuren für Autos,</div><div>eine für Velos und Fussgänger.</div>
<p>Kritik kam von den Anwohnern, die den Lärm fürchten. Folgen Sie uns auf Twitter.</p>
</article>
<aside><h2>Das könnte Sie auch interessieren</h2>
<p>Neue Buslinie ab Dezember</p><p>Folgen Sie uns auf Twitter</p></aside>
<footer><p>Abonnemente und Inserate</p><p>© 2021 Stadtblatt</p></footer>
</body></html>"""

WITH = [
    "die neue Brücke eröffnet",  # inside one paragraph
    "einem großen Tag für die Region",  # across inline markup
    "Zwei Spuren für Autos, eine für Velos",  # across two blocks
    "Diese Zeile steht nirgends",  # not on the page: labels nothing
]
WITHOUT = [
    "Das könnte Sie auch interessieren",
    "Neue  Buslinie\nab Dezember",  # whitespace differs from the page's
    "Folgen Sie uns auf Twitter",  # twice on the page (article and aside): which one is unknown
    "Abonnemente",
]


def _labels(with_snippets: list[str], without_snippets: list[str]):  # type: ignore[no-untyped-def]
    doc = parse(PAGE)
    extractor, params = first_extractor()
    blocks = page_blocks(doc, extractor.run(doc, params))
    return block_texts(doc, blocks), snippet_labels(doc, blocks, with_snippets, without_snippets)


def _by_text(texts: list[str], values: np.ndarray) -> dict[str, bool]:
    return {" ".join(text.split()): bool(value) for text, value in zip(texts, values.tolist(), strict=True)}


def test_with_snippets_mark_content_and_without_snippets_boilerplate() -> None:
    texts, labels = _labels(WITH, WITHOUT)
    known, content = _by_text(texts, labels.known), _by_text(texts, labels.content)
    for text in (
        "Die Stadt hat am Montag die neue Brücke eröffnet, nach drei Jahren Bauzeit.",
        "Der Bürgermeister sprach von einem großen Tag für die Region und ihre Pendler.",
        "Zwei Spuren für Autos,",
        "eine für Velos und Fussgänger.",
    ):
        assert known[text] and content[text], text
    for text in (
        "Das könnte Sie auch interessieren",
        "Neue Buslinie ab Dezember",
        "Abonnemente und Inserate",
    ):
        assert known[text] and not content[text], text
    # No snippet falls on them, or the one that does is found twice: no label either way.
    for text in (
        "Home",
        "News",
        "Die Brücke über den Fluss",
        "© 2021 Stadtblatt",
        "Folgen Sie uns auf Twitter",
    ):
        assert not known[text], text
    assert not known["Kritik kam von den Anwohnern, die den Lärm fürchten. Folgen Sie uns auf Twitter."]
    # The arrays agree with each other: content only where known; overlap 1 for content, 0 otherwise.
    assert not (labels.content & ~labels.known).any()
    assert np.array_equal(labels.overlap, labels.content.astype(float))
    assert labels.tokens[texts.index("Home")] == 1


def test_a_block_under_a_with_and_a_without_snippet_stays_unlabelled() -> None:
    texts, labels = _labels(["nach drei Jahren Bauzeit"], ["Die Stadt hat am Montag"])
    paragraph = next(i for i, t in enumerate(texts) if t.startswith("Die Stadt"))
    assert not labels.known[paragraph] and not labels.content[paragraph]
    assert not labels.known.any()


def test_reference_labels_are_all_known() -> None:
    doc = parse(PAGE)
    extractor, params = first_extractor()
    blocks = page_blocks(doc, extractor.run(doc, params))
    labels = label_blocks(doc, blocks, "Die Stadt hat am Montag die neue Brücke eröffnet")
    assert labels.known.all() and labels.content.any()


def test_unlabelled_rows_weigh_nothing_and_score_only_sets_unlabel_their_pages() -> None:
    from readerproxy.research.training.train import TrainingSet, proxy_score

    rows = 6
    training = TrainingSet(
        x=np.zeros((rows, 1)),
        overlap=np.array([1.0, 0.0, 0.0, 1.0, 0.0, 0.0]),
        tokens=np.array([9.0, 4.0, 3.0, 9.0, 4.0, 1.0]),
        page=np.array([0, 0, 0, 1, 1, 1]),
        pages=[("sh", "a", "s1"), ("older", "b", "s2")],
        reference_tokens=np.array([9.0, 9.0]),
        parent=np.zeros(rows, dtype=np.int64),
        grandparent=np.zeros(rows, dtype=np.int64),
        known=np.array([True, True, True, True, True, False]),
    )
    weight = training.weight()
    assert weight[5] == 0.0
    # Each page weighs 100 in total, over its labelled blocks by words.
    assert np.isclose(weight[:3].sum(), 100.0) and np.isclose(weight[3:].sum(), 100.0)
    assert np.isclose(weight[3], 100.0 * 10 / 15)
    # Keeping the unlabelled block costs nothing in the proxy: only labelled words count.
    keep = np.array([True, False, False, True, False, True])
    assert proxy_score(training, keep).f1 == 1.0
    unlabelled = training.without_labels({"older"})
    assert unlabelled.known.tolist() == [True, True, True, False, False, False]
    assert not unlabelled.weight()[3:].any()


def test_the_worst_held_out_set_is_chosen_by_each_sets_own_metric() -> None:
    from readerproxy.research.transfer import TransferCell, TransferTable, format_transfer_table

    sets = ["scrapinghub", "older-dev"]
    table = TransferTable(sets, learned={"scrapinghub": ["older-dev"], "older-dev": ["scrapinghub"]})
    table.rows["older-dev"] = {"scrapinghub": TransferCell(0.95, 0.96, 10, 0)}
    # The snippets set has no reference text: its shingle F1 is 0, its snippet F1 is what counts.
    table.rows["scrapinghub"] = {"older-dev": TransferCell(0.0, 0.0, 10, 0, (0.9, 0.96, 0.929))}
    assert table.held_out()["older-dev"].score == 0.929
    assert table.worst_held_out() == ("older-dev", 0.929)
    printed = format_transfer_table(table)
    assert "0.900/0.960/0.929" in printed and "0.9500/0.960" in printed
    assert "worst held-out set: older-dev, snippet F1 0.9290" in printed
    assert table.to_json()["rows"]["scrapinghub"]["older-dev"]["snippet_r"] == 0.96


@needs_datasets
def test_leave_one_set_out_with_older_dev_learned_from_or_only_scored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("lightgbm", reason="the train extra (lightgbm) is not installed")
    sets = "scrapinghub,readability,wcxb-dev,older-dev"
    args = ["train", "--datasets", sets, "--limit", "3", "--rounds", "3", "--bags", "1"]
    args += ["--oof-dir", str(tmp_path), "--leave-one-set-out"]
    for score_only in ("", "older-dev"):
        transfer, table_json = tmp_path / f"transfer{score_only}", tmp_path / f"table{score_only}.json"
        run = [*args, "--transfer-dir", str(transfer), "--transfer-json", str(table_json)]
        assert main([*run, "--score-only", score_only]) == 0
        printed = capsys.readouterr().out
        assert "worst held-out set:" in printed
        table = json.loads(table_json.read_text(encoding="utf-8"))
        manifest = json.loads((transfer / MANIFEST).read_text(encoding="utf-8"))
        learned = manifest["held_out"]["scrapinghub"]["learned_from"]
        # The model without older-dev learned from the three others, whatever --score-only says.
        assert set(manifest["held_out"]["older-dev"]["learned_from"]) == {
            "scrapinghub",
            "readability",
            "wcxb-dev",
        }
        cell = table["rows"]["scrapinghub + readability + wcxb-dev"]["older-dev"]
        assert {"snippet_p", "snippet_r", "snippet_f1"} <= set(cell) and cell["pages"] == 3
        if score_only:
            assert set(learned) == {"readability", "wcxb-dev"}
            assert "readability + wcxb-dev" in table["rows"]  # the row says what the model saw
        else:
            assert "older-dev" in learned
            provenance = load_model(str(transfer / model_file("scrapinghub"))).provenance
            assert provenance is not None and "older-dev" in provenance.datasets
    assert main([*args, "--score-only", "elsewhere"]) == 2


def test_a_snippets_sets_hash_covers_its_ground_truth(tmp_path: Path) -> None:
    import gzip

    from readerproxy.research.datasets import load_dataset
    from readerproxy.research.training.provenance import dataset_hash

    (tmp_path / "html").mkdir()
    (tmp_path / "html" / "p.html.gz").write_bytes(gzip.compress(PAGE.encode()))
    truth = tmp_path / "ground-truth.json"
    truth.write_text(json.dumps({"p": {"url": "https://a.de/x", "with": WITH, "without": WITHOUT}}))
    before = dataset_hash(load_dataset(str(tmp_path)))
    truth.write_text(json.dumps({"p": {"url": "https://a.de/x", "with": WITH[:1], "without": WITHOUT}}))
    assert dataset_hash(load_dataset(str(tmp_path))) != before


def test_a_set_weight_scales_its_pages_and_bad_ones_are_refused() -> None:
    from readerproxy.research.training.train import TrainingSet, parse_set_weights

    rows = 4
    training = TrainingSet(
        x=np.zeros((rows, 1)),
        overlap=np.array([1.0, 0.0, 1.0, 0.0]),
        tokens=np.array([9.0, 9.0, 4.0, 4.0]),
        page=np.array([0, 0, 1, 1]),
        pages=[("scrapinghub", "a", "a.example"), ("older-dev", "b", "b.example")],
        reference_tokens=np.array([9.0, 4.0]),
        parent=np.zeros(rows, dtype=np.int64),
        grandparent=np.zeros(rows, dtype=np.int64),
        known=np.ones(rows, dtype=bool),
    )
    plain = training.weight()
    assert plain[:2].sum() == pytest.approx(100) and plain[2:].sum() == pytest.approx(100)
    weighted = training.with_set_weights({"older-dev": 2.0})
    assert weighted.weight()[:2].tolist() == pytest.approx(plain[:2].tolist())
    assert weighted.weight()[2:].sum() == pytest.approx(200)
    assert weighted.subset(np.array([1])).weight().sum() == pytest.approx(200)  # kept by subset
    assert training.with_set_weights({}) is training
    sets = ("scrapinghub", "older-dev")
    assert parse_set_weights(["older-dev=0.5"], sets) == {"older-dev": 0.5}
    for bad in ("wcxb-dev=2", "older-dev=x", "older-dev=0", "older-dev=101"):
        with pytest.raises(ValueError, match="--set-weight"):
            parse_set_weights([bad], sets)
