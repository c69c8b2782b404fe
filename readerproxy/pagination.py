"""stub"""

from __future__ import annotations
from typing import Any


def next_page_url(doc: Any, selection: Any = None) -> str | None:
    return None
