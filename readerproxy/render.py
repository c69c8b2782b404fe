"""The reader view and the server's other pages: jinja2 templates over an extraction result.

Pure functions of their inputs (no I/O after the templates and static files are loaded): reader
preferences from the query string and cookies, links routed back through `/read`, and the pages.
The article HTML itself is already sanitised by `readerproxy.output` (nh3 allowlist); the templates
autoescape everything else.
"""

from __future__ import annotations

import hashlib
import json
import mimetypes
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

import jinja2

from .output import LinkRewriter


def _shipped_dir(name: str) -> Path:
    """`templates/` or `static/`: inside the installed package (a wheel ships them as
    readerproxy/templates and readerproxy/static), else the repository's top-level folder
    (an editable install or a checkout)."""
    package = Path(__file__).resolve().parent
    inside = package / name
    return inside if inside.is_dir() else package.parent / name


TEMPLATES_DIR = _shipped_dir("templates")
STATIC_DIR = _shipped_dir("static")

THEMES = ("auto", "light", "dark", "sepia")
#: Font-size steps; the CSS maps each to a root size, the smallest 16 px.
SIZES = ("s", "m", "l", "xl")
LINK_MODES = ("reader", "original")
COOKIE_PREFIX = "rp_"
COOKIE_MAX_AGE = 365 * 24 * 3600
_HOST = re.compile(r"^[A-Za-z0-9.\-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$")


@dataclass(frozen=True, slots=True)
class Preferences:
    """How the reader wants the page: theme, font size, lite (no images), where links go."""

    theme: str = "auto"
    size: str = "m"
    lite: bool = False
    links: str = "reader"

    @property
    def images(self) -> bool:
        return not self.lite

    @property
    def reader_links(self) -> bool:
        return self.links == "reader"

    def cookies(self) -> dict[str, str]:
        """The cookie values that store these preferences."""
        return {
            COOKIE_PREFIX + "theme": self.theme,
            COOKIE_PREFIX + "size": self.size,
            COOKIE_PREFIX + "lite": "1" if self.lite else "0",
            COOKIE_PREFIX + "links": self.links,
        }


def preferences(query: Mapping[str, str], cookies: Mapping[str, str]) -> tuple[Preferences, bool]:
    """Preferences from cookies, overridden by query parameters; and whether the query changed any."""
    def pick(name: str, choices: Iterable[str], default: str) -> tuple[str, bool]:
        allowed = tuple(choices)
        asked = query.get(name)
        if asked in allowed:
            return asked, True
        stored = cookies.get(COOKIE_PREFIX + name)
        return (stored if stored in allowed else default), False

    theme, t = pick("theme", THEMES, "auto")
    size, s = pick("size", SIZES, "m")
    lite, li = pick("lite", ("0", "1"), "0")
    links, lk = pick("links", LINK_MODES, "reader")
    return Preferences(theme=theme, size=size, lite=lite == "1", links=links), t or s or li or lk


def reader_url(url: str, **params: str | None) -> str:
    """A root-relative /read URL for a page, with the given non-empty query parameters."""
    query = {"url": url, **{k: v for k, v in params.items() if v}}
    return "/read?" + urlencode(query)


def link_rewriter(page_url: str | None, algorithm: str = "auto", lite: bool = False) -> LinkRewriter:
    """Links inside the content go through /read; links to a spot in the same page stay anchors."""
    page = _without_fragment(page_url) if page_url else None

    def rewrite(url: str) -> str:
        base, _, fragment = url.partition("#")
        if page is not None and fragment and _without_fragment(base) == page:
            return "#" + fragment
        return reader_url(url, algo=None if algorithm == "auto" else algorithm, lite="1" if lite else None)

    return rewrite


def _without_fragment(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path or "/", parts.query, ""))


def display_date(value: str | None) -> str | None:
    """An ISO 8601 date as '12 March 2024'; anything else as given (shortened)."""
    if not value:
        return None
    try:
        moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return value[:40]
    return f"{moment.day} {moment:%B %Y}"


def display_host(url: str | None) -> str:
    """The host of a URL without 'www.', for 'Read on example.com'."""
    host = urlsplit(url or "").hostname or ""
    return host.removeprefix("www.")


def safe_base_url(scheme: str, host: str | None, fallback: str) -> str:
    """The server's own origin for the bookmarklet; a Host header that isn't a plain host is ignored."""
    if host and _HOST.match(host):
        return f"{'https' if scheme == 'https' else 'http'}://{host}"
    return fallback


def bookmarklet(base_url: str) -> str:
    """A javascript: URL that opens the current page through this server."""
    target = json.dumps(base_url + "/read?url=")
    return f"javascript:void(location.href={target}+encodeURIComponent(location.href))"


@dataclass(frozen=True, slots=True)
class StaticAsset:
    """A static file held in memory, served under a content-hashed URL with long cache headers."""

    name: str
    body: bytes
    content_type: str
    version: str

    @property
    def url(self) -> str:
        return f"/static/{self.name}?v={self.version}"


def load_static(directory: Path) -> dict[str, StaticAsset]:
    """Every file directly in the static directory, by name."""
    assets: dict[str, StaticAsset] = {}
    if not directory.is_dir():
        return assets
    for path in sorted(directory.iterdir()):
        if not path.is_file() or path.name.startswith("."):
            continue
        body = path.read_bytes()
        content_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        if content_type.startswith("text/") or content_type in ("application/javascript", "image/svg+xml"):
            content_type += "; charset=utf-8"
        version = hashlib.blake2b(body, digest_size=6).hexdigest()
        assets[path.name] = StaticAsset(path.name, body, content_type, version)
    return assets


class Renderer:
    """The templates and static assets of the server, loaded once."""

    def __init__(self, templates_dir: Path | None = None, static_dir: Path | None = None) -> None:
        self.env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(str(templates_dir or TEMPLATES_DIR)),
            autoescape=True,
            trim_blocks=True,
            lstrip_blocks=True,
            auto_reload=False,
        )
        self.static = load_static(static_dir or STATIC_DIR)
        self.env.globals["asset"] = self.asset_url
        self._reader = self.env.get_template("reader.html")
        self._index = self.env.get_template("index.html")
        self._error = self.env.get_template("error.html")

    def asset_url(self, name: str) -> str:
        asset = self.static.get(name)
        return asset.url if asset else f"/static/{name}"

    def reader_page(self, article: Mapping[str, Any], prefs: Preferences, algorithm: str = "auto") -> str:
        """The reader view of an extraction result (the JSON API's dict)."""
        url = article.get("url") or ""
        original = article.get("final_url") or url
        lite = "1" if prefs.lite else None
        algo = None if algorithm == "auto" else algorithm
        base = reader_url(url, algo=algo)  # quoted once; the preference links append to it

        def with_prefs(**changes: Any) -> str:
            changed = replace(prefs, **changes)
            return (f"{base}&theme={changed.theme}&size={changed.size}"
                    f"&lite={'1' if changed.lite else '0'}&links={changed.links}")

        size_index = SIZES.index(prefs.size)
        return self._reader.render(
            article=article,
            prefs=prefs,
            original=original,
            host=display_host(original),
            published=display_date(article.get("published")),
            score=_score(article.get("score")),
            themes=[(theme, with_prefs(theme=theme)) for theme in THEMES],
            smaller=with_prefs(size=SIZES[size_index - 1]) if size_index > 0 else None,
            larger=with_prefs(size=SIZES[size_index + 1]) if size_index < len(SIZES) - 1 else None,
            toggle_lite=with_prefs(lite=not prefs.lite),
            toggle_links=with_prefs(links="original" if prefs.reader_links else "reader"),
            formats=[(label, f"{base}&format={fmt}" + ("&lite=1" if lite else ""))
                     for label, fmt in (("Markdown", "md"), ("Text", "text"), ("JSON", "json"))],
        )

    def index_page(self, algorithms: Mapping[str, str], base_url: str, prefs: Preferences) -> str:
        """The landing page: URL box, algorithm selector and bookmarklet."""
        return self._index.render(algorithms=algorithms, bookmarklet=bookmarklet(base_url), prefs=prefs)

    def error_page(
        self, status: int, title: str, message: str, prefs: Preferences, original: str | None = None
    ) -> str:
        """A page for a failed read: what happened, and a link to the original when there is one."""
        return self._error.render(
            status=status, title=title, message=message, prefs=prefs,
            original=original, host=display_host(original),
        )


def _score(value: Any) -> str | None:
    if isinstance(value, int | float):
        return f"{value:.2f}" if abs(value) < 100 else f"{value:.0f}"
    return None
