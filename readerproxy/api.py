"""The public library API: `extract(html, url, algorithm, **params) -> Article`. Stable."""

from __future__ import annotations

from typing import Any

from readerproxy.engine.article import Article
from readerproxy.engine.extraction import registry
from readerproxy.engine.pipeline import decode, process

__all__ = ["Article", "algorithms", "extract", "to_text", "unavailable_algorithms"]


def algorithms() -> dict[str, str]:
    """Stable algorithm names with a one-line description each (`auto` first)."""
    described = {name: spec.description for name, spec in sorted(registry().items())}
    return {"auto": described.pop("auto"), **described}


def unavailable_algorithms(browser_reason: str | None) -> dict[str, str]:
    """Algorithms that cannot run now and why: those that need the browser, when it cannot run
    (`browser.unavailable_reason`); every other algorithm is always available."""
    if browser_reason is None:
        return {}
    return {name: browser_reason for name, spec in sorted(registry().items()) if spec.needs_browser}


def to_text(html: str | bytes, content_type: str | None = None) -> str:
    """Decode page bytes (gzip accepted) to text; strings pass through."""
    return decode(html, content_type)


def extract(
    html: str | bytes,
    url: str | None = None,
    algorithm: str = "auto",
    **params: Any,
) -> Article:
    """Extract the main content of a page with the named algorithm (see `algorithms()`).

    Unknown algorithms, unknown parameters and values out of range raise ValueError naming the
    valid ones.
    """
    return process(html, url=url, algorithm=algorithm, params=params)
