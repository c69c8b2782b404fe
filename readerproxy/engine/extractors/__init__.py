"""One module per algorithm; importing this package registers them all."""

from . import accb, auto, baseline, cetr, danag, density, heuristic, learned, lineblock, visual

__all__ = [
    "accb",
    "auto",
    "baseline",
    "cetr",
    "danag",
    "density",
    "heuristic",
    "learned",
    "lineblock",
    "visual",
]
