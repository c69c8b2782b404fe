"""The per-user data directory: where the cache, the reading lists, the gateway's secret, the CA of
`--intercept-https` and `--lan`'s login are kept unless told otherwise.

A module of its own, below everything that keeps a file there (`settings`, `limits`, `list_routes`,
proxy mode), so none of them imports another for it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


def data_dir(env: Mapping[str, str] | None = None) -> Path:
    """The per-user data directory: $XDG_DATA_HOME/readerproxy or ~/.local/share/readerproxy."""
    env = os.environ if env is None else env
    base = env.get("XDG_DATA_HOME") or str(Path(env.get("HOME") or Path.home()) / ".local" / "share")
    return Path(base) / "readerproxy"
