"""The reader view and the server's other pages: jinja2 templates over an extraction result.

Pure functions of their inputs (no I/O after the templates and static files are loaded): reader
preferences from the query string and cookies, links routed back through `/read`, and the pages.
The article HTML itself is already sanitised by `readerproxy.engine.output` (nh3 allowlist); the templates
autoescape everything else.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import html
import json
import mimetypes
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlencode, urlsplit, urlunsplit

import jinja2

from ..api import MENU_HIDDEN, menu_algorithms
from ..api import algorithms as algorithm_descriptions
from ..engine.output import LinkRewriter, fit_under_header
from ..engine.views.actions import is_action, is_action_url
from .public import rooted


def _shipped_dir(name: str) -> Path:
    """`templates/` or `static/`: inside the installed package (a wheel ships them as
    readerproxy/templates and readerproxy/static), else the repository's top-level folder
    (an editable install or a checkout)."""
    package = Path(__file__).resolve().parent.parent  # readerproxy/, from readerproxy/web/
    inside = package / name
    return inside if inside.is_dir() else package.parent / name


TEMPLATES_DIR = _shipped_dir("templates")
STATIC_DIR = _shipped_dir("static")

THEMES = ("auto", "light", "dark", "sepia")
#: Font-size steps; the CSS maps each to a root size, the smallest 16 px.
SIZES = ("s", "m", "l", "xl")
SIZE_LABELS = {"s": "Small", "m": "Medium", "l": "Large", "xl": "Extra large"}
LINK_MODES = ("reader", "original")
FONTS = ("serif", "sans")
WIDTHS = ("narrow", "medium", "wide")
SPACINGS = ("tight", "normal", "loose")
#: Every query key that sets a reader preference (remembered in a cookie `rp_<key>`).
PREFERENCE_KEYS = ("theme", "size", "lite", "links", "font", "width", "spacing")
#: Preferences that static/reader.js applies in the page at once (attributes on <html> that the
#: stylesheet reads, and the same cookies); lite and links change the markup, so they reload.
INSTANT_KEYS = ("theme", "size", "font", "width", "spacing")
COOKIE_PREFIX = "rp_"
COOKIE_MAX_AGE = 365 * 24 * 3600
_HOST = re.compile(r"^[A-Za-z0-9.\-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$")


@dataclass(frozen=True, slots=True)
class Preferences:
    """How the reader wants the page: theme, font size and face, column width, line spacing,
    lite (no images), where links go."""

    theme: str = "auto"
    size: str = "m"
    lite: bool = False
    links: str = "reader"
    font: str = "serif"
    width: str = "medium"
    spacing: str = "normal"

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
            COOKIE_PREFIX + "font": self.font,
            COOKIE_PREFIX + "width": self.width,
            COOKIE_PREFIX + "spacing": self.spacing,
        }

    def query(self) -> str:
        """These preferences as query parameters (for the preference links)."""
        return _preferences_query(self)


@functools.lru_cache(maxsize=1024)
def _preferences_query(prefs: Preferences) -> str:
    """`Preferences.query`, memoised for speed: a reader page links some 20 variants of the reader's
    preferences, and there are only a few hundred combinations (urlencode was 2 ms of a render)."""
    return urlencode(
        {
            "theme": prefs.theme,
            "size": prefs.size,
            "lite": "1" if prefs.lite else "0",
            "links": prefs.links,
            "font": prefs.font,
            "width": prefs.width,
            "spacing": prefs.spacing,
        }
    )


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
    font, f = pick("font", FONTS, "serif")
    width, w = pick("width", WIDTHS, "medium")
    spacing, sp = pick("spacing", SPACINGS, "normal")
    prefs = Preferences(
        theme=theme, size=size, lite=lite == "1", links=links, font=font, width=width, spacing=spacing
    )
    return prefs, any((t, s, li, lk, f, w, sp))


def reader_url(url: str, **params: str | None) -> str:
    """A root-relative /read URL for a page, with the given non-empty query parameters."""
    query = {"url": url, **{k: v for k, v in params.items() if v}}
    return "/read?" + urlencode(query)


#: Links to files that are not web pages go straight to the original (the reader would answer 415).
NOT_HTML_SUFFIXES = (
    ".pdf",
    ".zip",
    ".gz",
    ".tgz",
    ".tar",
    ".7z",
    ".rar",
    ".dmg",
    ".exe",
    ".msi",
    ".apk",
    ".deb",
    ".rpm",
    ".jpg",
    ".jpeg",
    ".png",
    ".gif",
    ".webp",
    ".svg",
    ".avif",
    ".mp3",
    ".mp4",
    ".m4a",
    ".webm",
    ".ogg",
    ".wav",
    ".mov",
    ".avi",
    ".csv",
    ".xls",
    ".xlsx",
    ".doc",
    ".docx",
    ".ppt",
    ".pptx",
    ".odt",
    ".epub",
    ".json",
    ".xml",
    ".rss",
    ".txt",
    ".ics",
)


def link_rewriter(page_url: str | None, algorithm: str = "auto", lite: bool = False) -> LinkRewriter:
    """Links inside the content go through /read; links to a spot in the same page stay anchors;
    links to files that are not web pages (PDF, archives, media) go straight to the original, and
    so do actions (`actions.is_action_url`: a cart, log-out or vote link): the reader never sends
    a state-changing GET for the visitor, and the reader page shows them as plain text
    (`unlink_actions`)."""
    page = _without_fragment(page_url) if page_url else None

    def rewrite(url: str) -> str:
        base, _, fragment = url.partition("#")
        if page is not None and fragment and _without_fragment(base) == page:
            return "#" + fragment
        if urlsplit(base).path.lower().endswith(NOT_HTML_SUFFIXES) or is_action_url(url):
            return url
        return reader_url(url, algo=None if algorithm == "auto" else algorithm, lite="1" if lite else None)

    return rewrite


def _without_fragment(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path or "/", parts.query, ""))


#: How the reader view names a page kind that is not an article ("This looks like a product page").
KIND_NOTES = {
    "product": "a product page",
    "listing": "a list of links to other pages",
    "collection": "a category or catalogue page",
    "service": "a company's or service's page",
}


#: The note for a page of kind forum shown without its thread (fewer than two posts read).
FORUM_NOTE = "This looks like a discussion; replies may be missing."


def kind_note(article: Mapping[str, Any]) -> str | None:
    """The note for a page the page-kind decision says does not read well as a reader view."""
    if article.get("readerable") is False:
        return KIND_NOTES.get(article.get("page_kind") or "")
    return None


def forum_note(article: Mapping[str, Any], view: str) -> str | None:
    """`FORUM_NOTE` for a page of kind forum not shown as a thread: its replies were not read, and
    the reader says so rather than show the opening post as if it were all."""
    if article.get("page_kind") == "forum" and view != "thread":
        return FORUM_NOTE
    return None


def view_of(article: Mapping[str, Any]) -> str:
    """The view an extraction result is shown in: its `view` (`engine.view.decide_view`), or, for
    a result cached before the field existed, what the template chose by counts then."""
    view = article.get("view")
    if isinstance(view, str) and view:
        return view
    if len(article.get("items") or ()) >= 3:
        return "listing"
    if len(article.get("posts") or ()) >= 2:
        return "thread"
    return "article"


def facts_view(
    article: Mapping[str, Any], lite: bool, rewrite_images: Callable[[str], str] | None = None
) -> dict[str, str | None]:
    """What the product and recipe cards (`_facts.html`) show beside the article's own facts: the
    main image as HTML (through the same image route as the article's, none in Lite) and the rating
    as five stars, rounded to the nearest whole star ("★★★★☆" for 4.3 of 5)."""
    facts = article.get("product") or article.get("recipe") or {}
    image = facts.get("image") if not lite else None
    image_html = None
    if isinstance(image, str) and link_target(image):
        image_html = f'<img src="{html.escape(image)}" alt="" loading="lazy" decoding="async">'
        if rewrite_images is not None:
            image_html = rewrite_images(image_html)
    stars = None
    rating, best = facts.get("rating"), facts.get("best_rating") or 5
    if isinstance(rating, int | float) and isinstance(best, int | float) and 0 < rating <= best:
        full = round(rating / best * 5)
        stars = "\u2605" * full + "\u2606" * (5 - full)
    return {"image": image_html, "stars": stars}


def thread_posts(posts: Any, rewrite_images: Callable[[str], str] | None = None) -> list[dict[str, Any]]:
    """The posts of a thread as `templates/_thread.html` shows them: reader links marked, tables
    wrapped, images through the article's image route, the date as the page showed it (or the
    machine date written as the reader writes dates)."""
    rewrite = rewrite_images or (lambda fragment: fragment)
    return [
        {
            **post,
            "html": rewrite(wrap_tables(_mark_reader_links(unlink_actions(post.get("html") or "")))),
            "when": post.get("date_text") or display_date(post.get("date")),
        }
        for post in posts or ()
    ]


def listing_view(
    items: Any,
    page_url: str | None,
    prefs: Preferences,
    algorithm: str = "auto",
    rewrite_images: Callable[[str], str] | None = None,
) -> list[dict[str, Any]]:
    """The items of a listing as `templates/_listing.html` shows them: each title linked through
    the reader (or to the original, by the links preference), the date written as the reader writes
    dates, the picture through the article's image route (behind a "Show image" tap in Lite)."""
    rewrite_link = link_rewriter(page_url, algorithm, prefs.lite) if prefs.reader_links else None
    shown: list[dict[str, Any]] = []
    for item in items or ():
        url = item.get("url") or ""
        image = item.get("image")
        image_html = None
        if isinstance(image, str) and link_target(image):
            image_html = (
                f'<img src="{html.escape(image)}" alt="" width="{LISTING_IMAGE_WIDTH}" loading="lazy">'
            )
            if rewrite_images is not None:
                image_html = rewrite_images(image_html)
            if "loading=" not in image_html:  # the route makes a fragment's first image eager
                image_html = image_html.replace("<img", '<img loading="lazy"', 1)
            if prefs.lite:
                image_html = fold_images(image_html)
        if is_action(url, item.get("title")):
            href = None  # a result cached before the listing dropped actions: the title as text
        else:
            href = rewrite_link(url) if rewrite_link is not None and link_target(url) else url
        shown.append(
            {
                **item,
                "href": href,
                "when": display_date(item.get("date")),
                "image_html": image_html,
            }
        )
    return shown


#: The width (px) a listing's pictures are shown at, at most: the image route's srcset is cut to it.
LISTING_IMAGE_WIDTH = 160


def display_date(value: str | None) -> str | None:
    """An ISO 8601 date as '12 March 2024'; anything else as given (shortened)."""
    if not value:
        return None
    try:
        moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return value[:40]
    return f"{moment.day} {moment:%B %Y}"


_TITLE_SEPARATORS = ("|", "-", "–", "—", "·", "•", ":", "::", "»", "/")


_SECOND_LEVEL = frozenset(("co", "com", "org", "net", "ac", "gov", "edu", "ne", "or"))


def _alnum(text: str | None) -> str:
    """Letters and digits only, case-folded: "LWN.net" and "lwn.net" compare equal."""
    return "".join(ch for ch in (text or "").casefold() if ch.isalnum())


def _host_names(url: str | None) -> list[str]:
    """Names a site goes by when only its address is known: "lwn.net", "lwn" (www. and the public
    suffix left out; "bbc.co.uk" -> "bbc")."""
    host = display_host(url)
    labels = host.split(".")
    if len(labels) < 2 or host.replace(".", "").isdigit():
        return [host] if host else []
    index = -3 if len(labels) > 2 and labels[-2] in _SECOND_LEVEL and len(labels[-1]) == 2 else -2
    return [host, labels[index]]


def display_title(title: str | None, site_name: str | None, url: str | None = None) -> str | None:
    """The title without the site's name around it: "Story – Site" -> "Story", "Site | Story" ->
    "Story", "Story [LWN.net]" -> "Story". Without a site name, the names of the page's host are
    looked for instead ("Story | Example" on example.com). Letters and digits are compared, so
    spacing, case and punctuation do not matter; a title that is only the site's name stays."""
    if not title:
        return title
    text = title.strip()
    names = {_alnum(name) for name in ([site_name] if site_name else _host_names(url))} - {""}
    if not names:
        return text
    bracketed = re.fullmatch(r"(.+?)\s*[\[(]([^\[\]()]+)[\])]", text)
    if bracketed and _alnum(bracketed[2]) in names:
        return bracketed[1]
    for separator in _TITLE_SEPARATORS:
        head, found, tail = text.rpartition(separator)
        if found and _alnum(head) and _alnum(tail) in names:
            return head.strip()
        head, found, tail = text.partition(separator)
        if found and _alnum(tail) and _alnum(head) in names:
            return tail.strip()
    return text


_KANA = re.compile("[\u3040-\u30ff]")
_HANGUL = re.compile("[\u1100-\u11ff\uac00-\ud7af]")
_HAN = re.compile("[\u4e00-\u9fff\u3400-\u4dbf]")


def guess_lang(text: str | None) -> str | None:
    """A language for text in a script that names it (kana: ja, hangul: ko, only Han: zh), else None."""
    sample = (text or "")[:2000]
    if len(_KANA.findall(sample)) > 20:
        return "ja"
    if len(_HANGUL.findall(sample)) > 20:
        return "ko"
    if len(_HAN.findall(sample)) > 50:
        return "zh"
    return None


def link_target(url: str | None) -> str | None:
    """The URL when it is an absolute http(s) address with a host, else None (never javascript:,
    data: or a relative path)."""
    if not url:
        return None
    parts = urlsplit(url.strip())
    if parts.scheme.lower() in ("http", "https") and parts.hostname:
        return url.strip()
    return None


_READER_LINK = re.compile(r'<a href="(/read\?[^"]*)"')
#: A link of the reader's sanitised HTML (one `<a>` start tag, its content, its end tag: links do
#: not nest) and its href.
_LINK = re.compile(r"<a\b([^>]*)>(.*?)</a>", re.S)
_HREF = re.compile(r'\shref="([^"]*)"')
_TAG = re.compile(r"<[^>]*>")


def unlink_actions(fragment: str) -> str:
    """Action links as plain text: a link whose target (the original's, or the `url` of a reader
    link) or whose text is an action (`actions.is_action`: add to cart, log out, vote, share, a
    `javascript:` URL) becomes a `<span>` with its content, so neither a tap nor a crawler of the
    reader page sends it. The words stay, as the page shows them."""
    if "<a" not in fragment:
        return fragment

    def unlink(match: re.Match[str]) -> str:
        href = _HREF.search(match[1])
        if href is None:
            return match[0]
        target = html.unescape(href[1])
        if target.startswith("/read?"):
            target = _url_parameter(urlsplit(target).query)
        text = html.unescape(_TAG.sub(" ", match[2]))
        if not is_action(target, text):
            return match[0]
        return f"<span>{match[2]}</span>"

    return _LINK.sub(unlink, fragment)


def _mark_reader_links(fragment: str) -> str:
    """Reader links carry the original address as data-original (printed after the link)."""

    def mark(match: re.Match[str]) -> str:
        href = match[1]
        target = _url_parameter(urlsplit(html.unescape(href)).query)
        extra = f' data-original="{html.escape(target, quote=True)}"' if link_target(target) else ""
        return f'<a href="{href}"{extra}'

    return _READER_LINK.sub(mark, fragment)


def _url_parameter(query: str) -> str:
    """`parse_qs(query).get("url", [""])[0]`: the first non-empty `url` parameter, decoded.

    For speed, the other parameters are not decoded (parse_qs decodes every name and value; this
    runs once per link of the article on every reader page made).
    """
    for part in query.split("&"):
        name, equals, value = part.partition("=")
        if equals and value and unquote(name.replace("+", " ")) == "url":
            return unquote(value.replace("+", " "))
    return ""


_TABLE_TAG = re.compile(r"<(/?)table\b[^>]*>")
_CAPTION = re.compile(r"^\s*<caption\b[^>]*>(.*?)</caption>", re.S)


def wrap_tables(fragment: str) -> str:
    """Each outermost table in a box that scrolls sideways, its caption outside the box (so it stays
    put while the table scrolls)."""
    out: list[str] = []
    depth, position, start = 0, 0, 0
    for match in _TABLE_TAG.finditer(fragment):
        if not match[1]:
            if depth == 0:
                out.append(fragment[position : match.start()])
                start = match.start()
            depth += 1
        elif depth > 0:
            depth -= 1
            if depth == 0:
                opening = _TABLE_TAG.search(fragment, start)
                assert opening is not None
                body = fragment[opening.end() : match.start()]
                caption = _CAPTION.match(body)
                head = ""
                if caption:
                    head = f"<figcaption>{caption[1]}</figcaption>"
                    body = body[caption.end() :]
                out.append(
                    f'<figure class="table">{head}<div class="table-scroll" tabindex="0" role="region" '
                    f'aria-label="Table, scrolls sideways">{opening[0]}{body}</table></div></figure>'
                )
                position = match.end()
    if depth > 0:  # unbalanced: leave the rest as it is
        position = start
    out.append(fragment[position:])
    return "".join(out)


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
        #: Rewrites the article's images (`images.route_images`: through the server's /image route);
        #: None leaves them pointing at the original sites.
        self.rewrite_images: Callable[[str], str] | None = None
        #: `--public-url`'s path prefix (`/reader`), put in front of every root-relative link of a
        #: page made here (`public.rooted`); "" for the proxy's copy (`unrooted`).
        self.root = ""

    def unrooted(self) -> Renderer:
        """This renderer (templates and assets shared) making root-relative links: the proxy's,
        whose pages live on `http://readerproxy/` and on the sites' origins, never under the
        reader server's public prefix."""
        if not self.root:
            return self
        twin = copy.copy(self)
        twin.root = ""
        return twin

    def rooted(self, page: str) -> str:
        return rooted(page, self.root)

    def asset_url(self, name: str) -> str:
        asset = self.static.get(name)
        return asset.url if asset else f"/static/{name}"

    def reader_page(
        self,
        article: Mapping[str, Any],
        prefs: Preferences,
        algorithm: str = "auto",
        algorithms: Mapping[str, str] | None = None,
    ) -> str:
        """The reader view of an extraction result (the JSON API's dict)."""
        url = article.get("url") or ""
        original = link_target(article.get("final_url") or url)
        lite = "1" if prefs.lite else None
        algo = None if algorithm == "auto" else algorithm
        base = reader_url(url, algo=algo)  # quoted once; the preference links append to it

        def with_prefs(**changes: Any) -> str:
            return f"{base}&{replace(prefs, **changes).query()}"

        def choices(
            key: str, values: Iterable[Any], labels: Mapping[Any, str]
        ) -> tuple[str, list[tuple[str, str, bool, str]]]:
            current = getattr(prefs, key)
            options = [
                (labels[value], with_prefs(**{key: value}), value == current, str(value).lower())
                for value in values
            ]
            return key, options

        size_index = SIZES.index(prefs.size)
        title = display_title(article.get("title"), article.get("site_name"), original)
        byline = article.get("byline") or article.get("author")
        dated = bool(
            article.get("published")
            or article.get("date")
            or re.search(r"\d{4}", article.get("byline") or "")
        )

        def shown(fragment: str, head: bool = True) -> str:
            """A fragment of the article's HTML as the page shows it: the title and byline the
            header already shows left out (`head`), actions unlinked, reader links marked, tables
            wrapped, images through the image route (folded in Lite)."""
            if not fragment:
                return ""
            if head:
                fragment = fit_under_header(fragment, title, byline, dated=dated)
            fragment = wrap_tables(_mark_reader_links(unlink_actions(fragment)))
            if self.rewrite_images is not None:
                fragment = self.rewrite_images(fragment)
            return fold_images(fragment) if prefs.lite else fragment

        # only what the view shows is made ready: a listing or thread shows the content around
        # its items or posts instead of the article's HTML, and no view shows both items and posts
        view = view_of(article)
        around = view in ("listing", "thread")
        fragment = "" if around else shown(article.get("html") or "")
        intro = shown(article.get("view_intro_html") or "") if around else ""
        outro = shown(article.get("view_outro_html") or "", head=False) if around else ""
        lang = article.get("lang") or guess_lang(article.get("text"))
        rtl = article.get("dir") == "rtl"
        groups = [
            ("Theme", *choices("theme", THEMES, {t: t.capitalize() for t in THEMES})),
            ("Font", *choices("font", FONTS, {"serif": "Serif", "sans": "Sans"})),
            ("Width", *choices("width", WIDTHS, {w: w.capitalize() for w in WIDTHS})),
            ("Line spacing", *choices("spacing", SPACINGS, {s: s.capitalize() for s in SPACINGS})),
            ("Images", *choices("lite", (False, True), {False: "Show", True: "Hide (Lite)"})),
            ("Links open", *choices("links", LINK_MODES, {"reader": "In reader", "original": "On the site"})),
        ]
        if algorithms is None:
            algorithms = algorithm_descriptions()
        # the Aa panel's menu as the landing page's: `learned` (auto by another name) left out
        algorithms = {name: text for name, text in algorithms.items() if name not in MENU_HIDDEN}
        posts = thread_posts(article.get("posts"), self.rewrite_images) if view == "thread" else []
        comments = thread_posts(article.get("comments"), self.rewrite_images) if view == "article" else []
        items = (
            listing_view(article.get("items"), url, prefs, algorithm, self.rewrite_images)
            if view == "listing"
            else []
        )
        # The header names the author alone (`Metadata.author`: no "By", date, role or site name,
        # never a date or a testimonial's name), not the page's raw byline ("Aug 15 Written By Tyler
        # King", "DECEMBER 27, 2024"); an article cached before the field existed shows its byline.
        author = article.get("author") if "author" in article else article.get("byline")
        if view == "thread" and posts and posts[0]["author"]:
            author = posts[0]["author"]  # a thread is by its starter
        return self.rooted(
            self._reader.render(
                article=article,
                author=author,
                title=title or display_host(original) or "Untitled",
                content=fragment,
                view=view,
                intro=intro,
                outro=outro,
                posts=posts,
                comments=comments,
                items=items,
                lang=lang,
                dir="rtl" if rtl else "ltr",
                arrow="\u2190" if rtl else "\u2192",
                prefs=prefs,
                original=original,
                host=display_host(original),
                published=display_date(article.get("published") or article.get("date")),
                kind_note=kind_note(article),
                forum_note=forum_note(article, view),
                facts=facts_view(article, prefs.lite, self.rewrite_images),
                score=_score(article.get("score")),
                groups=groups,
                instant=INSTANT_KEYS,
                cookie_max_age=COOKIE_MAX_AGE,
                sizes=SIZES,
                size_labels=[SIZE_LABELS[size] for size in SIZES],
                size_label=SIZE_LABELS[prefs.size],
                smaller=with_prefs(size=SIZES[size_index - 1]) if size_index > 0 else None,
                larger=with_prefs(size=SIZES[size_index + 1]) if size_index < len(SIZES) - 1 else None,
                smaller_size=SIZES[size_index - 1] if size_index > 0 else None,
                larger_size=SIZES[size_index + 1] if size_index < len(SIZES) - 1 else None,
                url=url,
                algorithm=algorithm,
                algorithms=algorithms,
                next_page=_next_page_link(article.get("next_page_url"), algo, lite),
                formats=[
                    (label, f"{base}&format={fmt}" + ("&lite=1" if lite else ""))
                    for label, fmt in (("Markdown", "md"), ("Text", "text"), ("JSON", "json"))
                ],
            )
        )

    def index_page(
        self,
        algorithms: Mapping[str, str],
        base_url: str,
        prefs: Preferences,
        unavailable: Mapping[str, str] | None = None,
    ) -> str:
        """The landing page: URL box, algorithm selector and bookmarklet."""
        return self.rooted(
            self._index.render(
                algorithms=algorithms,
                menu=menu_algorithms(),
                bookmarklet=bookmarklet(base_url),
                prefs=prefs,
                unavailable=unavailable or {},
            )
        )

    def error_page(
        self, status: int, title: str, message: str, prefs: Preferences, original: str | None = None
    ) -> str:
        """A page for a failed read: what happened, and a link to the original when there is one."""
        target = link_target(original)
        return self.rooted(
            self._error.render(
                status=status,
                title=title,
                message=message,
                prefs=prefs,
                original=target,
                host=display_host(target),
            )
        )


#: An image of the reader's HTML (our own sanitised output: one tag, or a <picture> around its sources).
_IMAGE = re.compile(r"<picture\b.*?</picture>|<img\b[^>]*>", re.S | re.I)
_ALT = re.compile(r'\balt="([^"]*)"')


def fold_images(fragment: str) -> str:
    """Lite mode: every image behind a "Show image" tap (a closed <details>, no script), so none is
    fetched until the reader asks; the summary names the image by its alt text when it has one."""

    def fold(match: re.Match[str]) -> str:
        image = match.group(0)
        if "loading=" not in image:
            image = image.replace("<img", '<img loading="lazy"', 1)
        alt = _ALT.search(image)
        label = f"Show image: {alt.group(1)}" if alt and alt.group(1).strip() else "Show image"
        return f'<details class="lite-image"><summary>{label}</summary>{image}</details>'

    return _IMAGE.sub(fold, fragment)


def _next_page_link(next_url: Any, algo: str | None, lite: str | None) -> str | None:
    """The reader view of a multi-page article's next page (http(s) pages only)."""
    target = link_target(next_url) if isinstance(next_url, str) else None
    return reader_url(target, algo=algo, lite=lite) if target else None


def _score(value: Any) -> str | None:
    if isinstance(value, int | float):
        return f"{value:.2f}" if abs(value) < 100 else f"{value:.0f}"
    return None
