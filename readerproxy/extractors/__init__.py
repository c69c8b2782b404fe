"""One module per algorithm; importing this package registers them all."""

from . import baseline, cetr, density

__all__ = ["baseline", "cetr", "density"]
