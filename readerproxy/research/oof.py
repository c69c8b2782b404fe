"""Out-of-fold scoring: each page is extracted with the fold model that never saw its site.

`readerproxy train` writes `fold-K.npz` and `manifest.json` into a directory; with `readerproxy eval
--oof DIR`, every spec whose algorithm takes a `model` parameter (`learned`, and `auto` when it uses
the learned scorer) runs on a page with `model=DIR/fold-K.npz`, K being the fold of the page's site
(`learn.folds`). A spec that names its own `model` keeps it; other specs are unaffected.

A dataset the folds were not trained on (older-dev) is scored the same way: its pages' sites are
hashed to folds by the same key, so a site that is also in a training set (older-dev shares 25 of
its 457 sites, 51 of its 500 pages, with the three training sets) gets the model that left it out,
and a site no training set has was seen by no fold model, so the hashed one is out of fold too.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path

from ..engine.extraction import get_extractor
from .datasets import Page
from .runner import AlgorithmSpec, Predictor, predictor
from .training.folds import fold_of_site, site_of_page


@dataclass(slots=True)
class OutOfFold:
    """The fold models of one `readerproxy train` run, and the predictors made from them."""

    directory: Path
    folds: int
    layout: str
    _made: dict[tuple[AlgorithmSpec, int], Predictor] = field(default_factory=dict)

    @classmethod
    def load(cls, directory: Path, layout: str) -> OutOfFold:
        """Read `manifest.json`; ValueError naming what is missing."""
        try:
            manifest = json.loads((directory / "manifest.json").read_text(encoding="utf-8"))
            folds = int(manifest["folds"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ValueError(
                f"--oof {directory}: no usable manifest.json from `readerproxy train` ({exc})"
            ) from None
        missing = [k for k in range(folds) if not (directory / f"fold-{k}.npz").is_file()]
        if missing:
            raise ValueError(f"--oof {directory}: fold model(s) {missing} missing; rerun `readerproxy train`")
        return cls(directory, folds, layout)

    def fold(self, page: Page) -> int:
        return fold_of_site(site_of_page(self.layout, page.id, page.url), self.folds)

    @staticmethod
    def takes_model(spec: AlgorithmSpec) -> bool:
        """Whether `spec`'s extractor has a `model` parameter that the spec leaves at its default."""
        if spec.external or any(key == "model" for key, _ in spec.params):
            return False
        return "model" in {f.name for f in dataclasses.fields(get_extractor(spec.name).params_type)}

    def predictor(self, spec: AlgorithmSpec, page: Page, default: Predictor) -> Predictor:
        """The predictor for `spec` on `page`: with the page's fold model where the spec takes one."""
        if not self.takes_model(spec):
            return default
        fold = self.fold(page)
        key = (spec, fold)
        if key not in self._made:
            model = str(self.directory / f"fold-{fold}.npz")
            self._made[key] = predictor(AlgorithmSpec(spec.name, (*spec.params, ("model", model))))
        return self._made[key]
