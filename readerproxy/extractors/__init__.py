"""One module per algorithm; importing this package registers them all."""

from . import accb, baseline, cetr, danag, density, heuristic, lineblock

__all__ = ["accb", "baseline", "cetr", "danag", "density", "heuristic", "lineblock"]
