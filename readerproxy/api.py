"""The public library API: `extract(html, url, algorithm, **params) -> Article`. Stable."""

from __future__ import annotations

from typing import Any

from .engine.article import Article
from .engine.extraction import registry
from .engine.pipeline import decode, process

__all__ = ["Article", "algorithms", "extract", "menu_algorithms", "to_text", "unavailable_algorithms"]


def algorithms() -> dict[str, str]:
    """Stable algorithm names with a one-line description each (`auto` first)."""
    described = {name: spec.description for name, spec in sorted(registry().items())}
    return {"auto": described.pop("auto"), **described}


#: For menus: a friendly name (short: a phone's menu is as wide as its longest) and one plain line
#: per algorithm. `learned` is left out (it is `auto`
#: by its own name); an algorithm missing here is shown by its name and description.
FRIENDLY: dict[str, tuple[str, str]] = {
    "auto": (
        "Automatic",
        "Finds the article with a trained scorer, and falls back when it finds too little.",
    ),
    "heuristic": ("Readability-style", "Scores the page's elements by their text and class names."),
    "visual": ("Visual", "The Readability-style scoring plus the page's layout, from a real browser."),
    "auto-heuristic": ("Auto, untrained", "The scoring with fallbacks, without the trained scorer."),
    "density": ("Text density", "Keeps the densest run of text (Moreno et al. 2009)."),
    "cetr": ("Tag ratios (CETR)", "Lines with much text and few tags, clustered (Weninger et al. 2010)."),
    "cetr-km": ("CETR-KM", "CETR clustered on the text-to-tag ratio alone."),
    "cetr-tm": ("CETR-TM", "CETR with a threshold instead of clusters."),
    "lineblock": ("Line blocks", "Blocks of lines by text-to-tag and link ratios (Pan Ei San 2012)."),
    "danag": ("DANAg", "The area with more text than markup, links filtered (Mohammadzadeh et al. 2011)."),
    "accb": ("Blurring (ACCB)", "Where text outweighs markup, blurred (Gottron 2008)."),
    "baseline": ("Everything", "All visible text of the page: the reference every paper compares against."),
}
#: Left out of menus: another name for an algorithm already listed.
MENU_HIDDEN = frozenset({"learned"})


def menu_algorithms() -> dict[str, tuple[str, str]]:
    """Algorithms for menus, `auto` first: name -> (friendly name, one line); `learned` left out."""
    return {
        name: FRIENDLY.get(name, (name, description))
        for name, description in algorithms().items()
        if name not in MENU_HIDDEN
    }


def unavailable_algorithms(browser_reason: str | None) -> dict[str, str]:
    """Algorithms that cannot run now and why: those that need the browser, when it cannot run
    (`devtools.unavailable_reason`); every other algorithm is always available."""
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
