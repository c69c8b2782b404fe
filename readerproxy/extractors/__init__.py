"""One module per algorithm; importing this package registers them all."""

from . import accb, baseline, cetr, density, heuristic

__all__ = ["accb", "baseline", "cetr", "density", "heuristic"]
