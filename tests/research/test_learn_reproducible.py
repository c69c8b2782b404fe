"""Training is reproducible: a retraining on a small fixed subset gives the committed trees exactly.

The first `PAGES` ScrapingHub pages (sorted ids), `ROUNDS` boosting rounds, one bag, seed 0, with
`learn.train.BOOSTING` (deterministic, one thread, row-wise): both stages are compared, array by
array, with `tests/fixtures/learn_reproducible.npz`. A difference means that the features, the
labels, the folds or the training library changed what the same pages teach; when that is meant,
rewrite the fixture with `.venv/bin/python tests/research/test_learn_reproducible.py` and say why in the
commit. The fixture's provenance names the dataset hash and the lightgbm version it was made with.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import numpy as np
import pytest

from readerproxy.engine.learn.model import BlockScorer, load_model
from readerproxy.research.datasets import datasets_root, load_dataset

FIXTURE = Path(__file__).parents[1] / "fixtures" / "learn_reproducible.npz"
DATASET = "scrapinghub"
PAGES = 40
ROUNDS = 20
SEED = 0
BAGS = 1


def retrain() -> BlockScorer:
    """Both stages fitted on the fixed subset, with their provenance."""
    from readerproxy.research.training.provenance import dataset_records, make_provenance
    from readerproxy.research.training.train import collect, fit, training_parameters

    training = collect((DATASET,), PAGES)
    scorer = fit(training, SEED, ROUNDS, bags=BAGS)
    parameters = training_parameters(SEED, ROUNDS, BAGS, PAGES)
    provenance = make_provenance(dataset_records((DATASET,), PAGES), parameters, commit=("", False))
    return dataclasses.replace(scorer, provenance=provenance)


@pytest.mark.skipif(datasets_root() is None, reason="../shared/datasets is not present")
def test_retraining_on_a_fixed_subset_gives_the_committed_trees() -> None:
    pytest.importorskip("lightgbm", reason="the train extra (lightgbm) is not installed")
    from readerproxy.research.training.provenance import dataset_hash

    committed = load_model(str(FIXTURE))
    assert committed.provenance is not None
    recorded = committed.provenance.datasets[DATASET]["sha256"]
    assert dataset_hash(load_dataset(DATASET, PAGES)) == recorded, "the dataset changed, not the code"
    again = retrain()
    for stage in ("first", "second"):
        ours, theirs = getattr(again, stage), getattr(committed, stage)
        assert ours.features == theirs.features, stage
        for name in ("feature", "left", "right", "value", "roots"):
            assert np.array_equal(getattr(ours, name), getattr(theirs, name)), (stage, name)
        # A split's threshold is a midpoint between two feature values; a feature summed in another
        # order (numpy's SIMD paths differ between CPUs) moves it by an ulp, not the tree: 2026-12-02,
        # after the host changed, 6 and 13 thresholds differed by 8.9e-16, every other array equal.
        assert np.allclose(ours.threshold, theirs.threshold, rtol=1e-12, atol=0.0), (stage, "threshold")
        assert ours.init == theirs.init and ours.max_depth == theirs.max_depth, stage


if __name__ == "__main__":  # rewrite the fixture (a deliberate change of what training makes)
    retrain().save(FIXTURE)
    print(f"wrote {FIXTURE}", file=sys.stderr)
