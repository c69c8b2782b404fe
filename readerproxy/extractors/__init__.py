"""One module per algorithm; importing this package registers them all."""

from . import baseline, density

__all__ = ["baseline", "density"]
