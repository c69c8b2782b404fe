"""The addons around the proxy core, each one concern (mitmproxy's design):

- `AuthAddon`: `Proxy-Authorization: Basic` when credentials are configured, 407 otherwise.
- `RulesAddon`: per-host rules from the config (always reader / never reader) and the way-back
  marker: a URL carrying `readerproxy-original=1` passes through once, the marker removed before the
  request goes upstream.
- `ReaderAddon`: asks for the body of top-level HTML navigations and, when the page is an article,
  answers with the reader view made by the request layer `/read` uses (`Reader`) and its `Renderer`.
  A page whose head already says it is a shop's product or a list of them (`head_says_not_article`)
  streams through from its first bytes instead. `Save-Data: on` makes the view lite.
  It also serves the reader view's own assets under `/.readerproxy/` on every proxied host, so the
  page stays same-origin (its CSP holds, and nothing is mixed content inside intercepted HTTPS).
- `MetricsAddon`: counts every flow by outcome on `/metrics`, and every reading that failed (the
  original passed through instead, `fall_back`) by reason.

Hooks, called by the core in this order for every flow: `request(flow)` (an addon may answer by
setting `flow.response`), `response_headers(flow)` (the upstream head is in `flow.response`; an addon
may set `flow.wants_body`, or answer at once with `flow.notes[EARLY_VIEW]`), `response(flow, body)`
(only when the body was buffered; an addon may replace `flow.response`), `body_arrived(flow,
upstream, body)` (a body asked for that came whole only after the answer), `done(flow)`.

Every navigation is answered: reading a page is an offer, never a condition. When
it fails for any reason (the extraction pool overloaded or past its deadline, a worker that died, a
body that does not decode, a bug), the original goes through as it came, and the reason is counted
(`fall_back`); only a request the proxy refuses on purpose (access, the SSRF guard, the block list)
gets an error page. The core (`server.py`) does the same for an exception in any addon's hook.
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import hashlib
import json
import logging
import re
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from html import escape as html_escape
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..engine.extraction import Extractor
from ..engine.schema import bytes_types
from ..errors import ReaderproxyError
from ..web.auth import basic_matches
from ..web.browser import CONNECTED, ClientGone
from ..web.fetch import BodyDecoder, FetchError, media_type
from ..web.images import route_images_to, saves_data
from ..web.page_cache import DecodedMemo
from ..web.reader import _params_signature
from ..web.templating import Preferences, preferences
from .flow import Flow, Outcome, Response, header, prefers_html
from .store import Client, rule_host, rules_token

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

    from ..web.metrics import Metrics
    from ..web.reader import Reader
    from ..web.templating import Renderer
    from .settings import Settings
    from .store import ProxyStore

#: The way-back marker: a query item on the original's URL in every proxied reader view.
MARKER = "readerproxy-original=1"
#: The marker of the way back to the reader view from an original page (`setup.bookmarklet`).
READER_MARKER = "readerproxy-reader=1"
#: The names the proxy answers itself (`setup.py`); the first is the one shown.
SETUP_HOSTS = ("readerproxy", "readerproxy.internal")
SETUP_ORIGIN = f"http://{SETUP_HOSTS[0]}"
#: Path prefix the proxy answers itself on every host (the reader view's stylesheet and script).
ASSET_PREFIX = "/.readerproxy/"
HTML_TYPES = ("text/html", "application/xhtml+xml")
SECURITY_HEADERS = [
    (
        "Content-Security-Policy",
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src http: https: "
        "data:; form-action 'self' http: https:; base-uri 'none'; frame-ancestors 'none'",
    ),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
]
_STATIC_LINKS = re.compile(r'\b(href|src)="/static/')
_READ_LINKS = re.compile(r'\bhref="/read\?')
_READ_FORMS = re.compile(r'\baction="/read"')
_HOME_LINKS = re.compile(r'\bhref="/"')
#: The reader view's "Save" form (the reading list, `web/list_routes.py`): posted to
#: `http://readerproxy/list/save` with the client's token for the site (`save_form_token`), or left
#: out of a page that has none.
_SAVE_FORM = re.compile(r'<form class="save-form" action="/list/save"([^>]*)>(.*?)</form>', re.S)
#: Where a proxied reader view's Save form posts (`setup.SetupAddon.posted_save`).
LIST_SAVE = "/list/save"
#: Preference links that static/reader.js applies in the page: in proxy views they navigate, so the
#: choice reaches the proxy, which keeps it for the client.
_INSTANT = re.compile(r'(<a\b[^>]*?)\sdata-pref="[^"]*"')
#: The note of a flow whose page could not be read: why (`fall_back`), counted by `MetricsAddon`.
FALLBACK_NOTE = "fallback"
#: The note of a flow answered at its head (a `Response`): the core sends it at once, then reads
#: the site's body to the end for `body_arrived` (a slow page's reader view, `ReaderAddon`).
EARLY_VIEW = "early_view"
#: Slow pages read at once in the background at most (`ReaderAddon.body_arrived`); more are left.
LATE_READS = 4

log = logging.getLogger("readerproxy.proxy")


def fall_back(flow: Flow, reason: str, message: str = "") -> None:
    """Record that reading this flow's page failed and the original goes through as it came:
    `reason` (an error's `kind`: overloaded, extraction_timeout, extraction_failed, …, or
    `internal` for a bug) is what `/metrics` counts it under."""
    flow.notes[FALLBACK_NOTE] = reason
    if message:
        flow.error = message


class Addon:
    """No-op hooks; an addon overrides the ones it needs."""

    async def request(self, flow: Flow) -> None:
        return None

    async def response_headers(self, flow: Flow) -> None:
        return None

    async def response(self, flow: Flow, body: bytes) -> None:
        return None

    async def body_arrived(self, flow: Flow, upstream: Response, body: bytes) -> None:
        """The whole body an addon asked for (`wants_body`), arrived after the answer was chosen:
        it streamed through because it was late, or an answer went before it (`EARLY_VIEW`)."""
        return None

    async def done(self, flow: Flow) -> None:
        return None

    async def close(self) -> None:
        """The proxy is closing: stop any work of the addon's own."""
        return None


def simple_response(
    status: int,
    reason: str,
    text: str,
    headers: Sequence[tuple[str, str]] = (),
    content_type: str = "text/plain; charset=utf-8",
) -> Response:
    body = text.encode("utf-8")
    return Response(status, reason, [("Content-Type", content_type), *headers], body)


# ---- access control ----------------------------------------------------------------------------


#: The login ("USER:PASS") a flow's client authenticated with (`AuthAddon`): the reader's own
#: preferences and reading list follow it (`flow_user`), and the gateway to the reader server
#: speaks with it (`setup.SetupAddon.gateway`).
LOGIN_NOTE = "login"
#: The login of the CONNECT that opened the tunnel whose requests run in this context (they run in
#: the tunnel's task, after the CONNECT was authorised).
TUNNEL_LOGIN: contextvars.ContextVar[str | None] = contextvars.ContextVar("tunnel_login", default=None)


def flow_user(flow: Flow) -> str | None:
    """The user name of the login the flow's client authenticated with; None without auth."""
    login = flow.notes.get(LOGIN_NOTE)
    return login.partition(":")[0] if isinstance(login, str) else None


class AuthAddon(Addon):
    """407 with `Proxy-Authenticate` unless the request carries one of the configured logins
    (`--auth`, or any line of `--auth-file`: one reader each); the login is noted on the flow."""

    def __init__(self, credentials: str | Sequence[str] | None) -> None:
        logins = (credentials,) if isinstance(credentials, str) else tuple(credentials or ())
        self.credentials: tuple[str, ...] | None = logins or None

    async def request(self, flow: Flow) -> None:
        if self.credentials is None:
            return
        if flow.notes.get("in_tunnel"):  # a tunnel was authorised once, by its CONNECT
            if (login := TUNNEL_LOGIN.get()) is not None:
                flow.notes[LOGIN_NOTE] = login
            return
        given = header(flow.request.headers, "proxy-authorization")
        matches = [login for login in self.credentials if basic_matches(given, login)]  # every one compared
        if matches:
            flow.notes[LOGIN_NOTE] = matches[0]
            if flow.request.method == "CONNECT":
                TUNNEL_LOGIN.set(matches[0])
        else:
            flow.response = simple_response(
                407,
                "Proxy Authentication Required",
                "Proxy authentication required.\n",
                [("Proxy-Authenticate", 'Basic realm="readerproxy", charset="UTF-8"')],
            )
            flow.outcome = Outcome.REFUSED


# ---- rules and the way back ---------------------------------------------------------------------


def host_list(value: object) -> tuple[str, ...]:
    """Host names from a config value: a list, or a comma-separated string."""
    items = (
        value.split(",") if isinstance(value, str) else list(value) if isinstance(value, list | tuple) else []
    )
    return tuple(str(item).strip().lower().lstrip(".") for item in items if str(item).strip())


def host_matches(host: str, patterns: Sequence[str]) -> bool:
    """`example.com` matches itself and its subdomains."""
    return any(host == pattern or host.endswith("." + pattern) for pattern in patterns)


def strip_marker(path: str, marker: str = MARKER) -> tuple[str, bool]:
    """The path without the way-back marker (or another), and whether it was there."""
    base, sep, query = path.partition("?")
    if not sep:
        return path, False
    items = query.split("&")
    kept = [item for item in items if item != marker]
    if len(kept) == len(items):
        return path, False
    return (f"{base}?{'&'.join(kept)}" if kept else base), True


def with_marker(url: str) -> str:
    """The URL with the way-back marker added to its query."""
    base, sep, fragment = url.partition("#")
    joined = f"{base}&{MARKER}" if "?" in base else f"{base}?{MARKER}"
    return joined + (sep + fragment if sep else "")


class RulesAddon(Addon):
    """Whether a page may become a reader view: the markers (the way back to the original, once;
    the way back to the reader view, once), readerproxy's own pages (never), the site rules chosen
    in the browser (`store.ProxyStore`), then `reader_hosts` (always the reader view) and
    `direct_hosts` (never) from the config."""

    def __init__(
        self,
        always: Sequence[str],
        never: Sequence[str],
        store: ProxyStore | None = None,
        own_port: int | None = None,
        own_hosts: Sequence[str] = (),
    ) -> None:
        self.always = tuple(always)
        self.never = tuple(never)
        self.store = store
        self.own_port = own_port
        self.own_hosts = frozenset(("127.0.0.1", "localhost", "::1", *own_hosts))

    def is_own(self, flow: Flow) -> bool:
        """A request for the reader server itself (on an address of this machine)."""
        request = flow.request
        if request.port != self.own_port:
            return False
        local = flow.notes.get("local")
        local_host = str(local[0]).removeprefix("::ffff:") if isinstance(local, tuple) and local else None
        return request.host in self.own_hosts or request.host == local_host or request.host.startswith("127.")

    async def request(self, flow: Flow) -> None:
        request = flow.request
        marked = wanted = False
        if "readerproxy-" in request.path:  # both markers' start: most paths have neither
            request.path, marked = strip_marker(request.path)
            request.path, wanted = strip_marker(request.path, READER_MARKER)
        if self.is_own(flow) or request.host in SETUP_HOSTS or marked:
            flow.reader_rule = "never"
        elif wanted:
            flow.reader_rule = "always"
        else:
            rule = (
                await self.store.rule_for(request.host)
                if self.store is not None and is_navigation(flow)
                else None
            )
            if rule == "original" or (rule is None and host_matches(request.host, self.never)):
                flow.reader_rule = "never"
            elif rule == "reader" or host_matches(request.host, self.always):
                flow.reader_rule = "always"


# ---- the reader view ----------------------------------------------------------------------------

#: Schema.org types (JSON-LD in the head) that name the page a product or a list of them. Chosen on
#: the 1,310 wcxb-dev pages for precision (benchmarks/proxy_latency.py --sniff): `Offer` (a course
#: offer on an article page) and `ItemList` (listicles) are left out.
NOT_ARTICLE_TYPES = frozenset({"product", "productgroup", "collectionpage", "searchresultspage"})
#: OpenGraph `og:type` values of product pages (ogp.me, and the vendor spellings found in wcxb-dev).
NOT_ARTICLE_OG_TYPES = frozenset(
    {"product", "product.group", "product.item", "og:product", "ebay-objects:item", "zalando_sharing:product"}
)
#: Types that say the page is (or holds) something to read; any of them in the head vetoes the above
#: (a review of a product names the product too).
ARTICLE_TYPES = frozenset(
    {
        "article",
        "newsarticle",
        "blogposting",
        "review",
        "techarticle",
        "scholarlyarticle",
        "report",
        "reportagenewsarticle",
        "analysisnewsarticle",
        "opinionnewsarticle",
        "liveblogposting",
        "socialmediaposting",
        "discussionforumposting",
        "qapage",
        "howto",
        "recipe",
    }
)
#: How far into the decoded body the end of the head is looked for; past it, no early decision
#: (the largest head in wcxb-dev, inline styles and scripts, is 1.5 MB).
SNIFF_LIMIT = 2 * 1024 * 1024
_HEAD_END = re.compile(rb"</head\b", re.IGNORECASE)
_LD_SCRIPT = re.compile(
    rb"<script\b[^>]*\btype\s*=\s*[\"']?application/ld\+json[^>]*>(.*?)</script", re.IGNORECASE | re.DOTALL
)
_OG_TYPE = re.compile(rb"<meta\b[^>]*\b(?:property|name)\s*=\s*[\"']og:type[\"'][^>]*>", re.IGNORECASE)
_CONTENT = re.compile(rb"\bcontent\s*=\s*[\"']([^\"']{0,80})", re.IGNORECASE)


def head_types(head: bytes) -> tuple[set[str], set[str]]:
    """The schema.org types named in the head's JSON-LD (lower case, without the vocabulary) and its
    `og:type` values (lower case). Read without parsing the JSON, by the engine's reader
    (`schema.bytes_types`, the one `engine.kind.pagekind` reads decoded text with)."""
    names = {name for block in _LD_SCRIPT.findall(head) for name in bytes_types(block)}
    og = set()
    for tag in _OG_TYPE.findall(head):
        if (content := _CONTENT.search(tag)) is not None:
            og.add(content.group(1).decode("ascii", "replace").strip().lower())
    return names, og


def head_says_not_article(head: bytes) -> str | None:
    """Why the page whose `<head>` this is is no article (a product, a category or search page),
    or None. Precision over recall: only what the head states in structured data, and never when
    it also names something to read. On wcxb-dev: 0 of 696 articles, 39 of 91 products, 17 of 89
    collections, 4 of 92 listings and 3 of 159 service pages."""
    names, og = head_types(head)
    if names & ARTICLE_TYPES or "article" in og:
        return None
    if found := sorted(names & NOT_ARTICLE_TYPES):
        return f"not_article:{found[0]}"
    if found := sorted(og & NOT_ARTICLE_OG_TYPES):
        return f"not_article:og:{found[0]}"
    return None


class HeadSniffer:
    """`Flow.sniff` for a navigation: decodes the body as it arrives (its Content-Encoding) until the
    end of the head, then answers once with `head_says_not_article`; None ever after."""

    def __init__(self, encoding: str, settings: Settings, url: str) -> None:
        self.decoder: BodyDecoder | None = BodyDecoder(encoding, settings.fetch, url)
        self.decoded = bytearray()  # the body so far, decoded

    def __call__(self, chunk: bytes) -> str | None:
        decoder = self.decoder
        if decoder is None:
            return None
        try:
            decoder.feed(chunk)
        except FetchError:  # corrupt or a bomb: the reader addon's full decode says so later
            self.decoder = None
            return None
        searched = len(self.decoded)
        self.decoded += b"".join(decoder.parts)
        decoder.parts.clear()  # each decoded byte kept once, here
        end = _HEAD_END.search(self.decoded, max(0, searched - 8))
        if end is None:
            if len(self.decoded) > SNIFF_LIMIT:
                self.decoder = None
                self.decoded = bytearray()
            return None
        self.decoder = None  # decided: nothing more to look at
        head = bytes(self.decoded[: end.start()])
        self.decoded = bytearray()
        return head_says_not_article(head)


def is_navigation(flow: Flow) -> bool:
    """A top-level navigation to a page: GET, Accept prefers HTML, and (when the browser says) a document."""
    request = flow.request
    dest = header(request.headers, "sec-fetch-dest")
    return (
        request.method == "GET"
        and prefers_html(header(request.headers, "accept"))
        and dest in (None, "document")
    )


def is_article(data: dict[str, Any], rule: str | None) -> bool:
    """The readerable check's answer (`readerproxy.engine.kind.readerable`, in the result as `readerable`, which
    the pipeline always sets); `always` hosts need only some text."""
    if rule == "always":
        return bool((data.get("text") or "").strip())
    return bool(data.get("readerable"))


def same_origin_links(page: str) -> str:
    """A reader-server page made for a proxied origin: its stylesheet and script under ASSET_PREFIX
    on the same origin; its /read links (preferences, formats, algorithms) and home link to
    `http://readerproxy/`, which every client of the proxy reaches (the reader server's own
    address may not be reachable, and on a phone 127.0.0.1 is the phone); preference links that
    navigate there rather than change the page alone (see `_INSTANT`)."""
    page = _STATIC_LINKS.sub(lambda m: f'{m.group(1)}="{ASSET_PREFIX}static/', page)
    page = _READ_LINKS.sub(f'href="{SETUP_ORIGIN}/view?', page)
    page = _READ_FORMS.sub(f'action="{SETUP_ORIGIN}/read"', page)
    page = _HOME_LINKS.sub(f'href="{SETUP_ORIGIN}/"', page)
    page = route_images_to(page, SETUP_ORIGIN)  # the article's images: /image of the reader server
    # preferences live at http://readerproxy/: static/reader.js writes no cookie on the site's origin
    page = page.replace("<html", f'<html data-prefs-at="{SETUP_ORIGIN}"', 1)
    page = _SAVE_FORM.sub(_save_form, page)
    return _INSTANT.sub(r"\1", page)


def _save_form(match: re.Match[str]) -> str:
    if 'name="token"' not in match[2]:
        return ""
    return f'<form class="save-form" action="{SETUP_ORIGIN}{LIST_SAVE}"{match[1]}>{match[2]}</form>'


#: The extraction each client's latest reader views showed, by client and page address: Save on
#: such a view keeps it as shown, with no new fetch (`setup.SetupAddon.posted_save`).
RECENT_VIEWS: OrderedDict[tuple[str, str], dict[str, Any]] = OrderedDict()
RECENT_VIEWS_KEPT = 32


def _view_key(client: Client, url: str) -> tuple[str, str]:
    return (f"user:{client.user}" if client.user else f"addr:{client.address}", url)


def remember_view(client: Client, url: str, data: dict[str, Any]) -> None:
    """Keep the extraction a client's reader view of `url` showed (the latest `RECENT_VIEWS_KEPT`)."""
    key = _view_key(client, url)
    RECENT_VIEWS[key] = data
    RECENT_VIEWS.move_to_end(key)
    while len(RECENT_VIEWS) > RECENT_VIEWS_KEPT:
        RECENT_VIEWS.popitem(last=False)


def recent_view(client: Client, url: str) -> dict[str, Any] | None:
    """The extraction this client's reader view of `url` showed, when it is one of the latest."""
    return RECENT_VIEWS.get(_view_key(client, url))


def save_scope(host: str) -> str:
    """The scope of the token a proxied reader view's Save form carries (`store.rules_token`): the
    view's site, so that a site's own pages, which can read its views, can save only its own pages
    to the reader's list."""
    return f"list-save|{rule_host(host)}"


def with_save_token(page: str, token: str) -> str:
    """The reader view's Save form with the client's token for this site (`save_scope`)."""
    hidden = f'<input type="hidden" name="token" value="{html_escape(token)}">'
    return _SAVE_FORM.sub(
        lambda m: f'<form class="save-form" action="/list/save"{m[1]}>{hidden}{m[2]}</form>', page, 1
    )


def rules_form(host: str, rule: str, back: str | None, token: str, button: str, label: str) -> str:
    """A small form changing a site rule at `http://readerproxy/rules/set` by POST, with the
    client's token (`store.rules_token`): a rule changes from readerproxy's own forms only, never
    by a link another site could navigate to. `button` is the button's class."""
    fields = [("host", host), ("rule", rule), ("token", token)] + ([("back", back)] if back else [])
    inputs = "".join(
        f'<input type="hidden" name="{name}" value="{html_escape(value)}">' for name, value in fields
    )
    return (
        f'<form class="inline-form" method="post" action="{SETUP_ORIGIN}/rules/set">{inputs}'
        f'<button class="{button}" type="submit">{label}</button></form>'
    )


def site_choices(page: str, url: str, host: str, token: str) -> str:
    """The reader view's "Original" choices for this site: this time (the way-back marker) or
    always (a site rule kept at `http://readerproxy/rules`, chosen by a form carrying `token`, the
    client's for this host), in the preferences panel and at the article's foot."""
    name = rule_host(host)
    once = html_escape(with_marker(url))
    label = html_escape(name)
    row = (
        f'<div class="prefs-row site-row" role="group" aria-label="This site">'
        f'<span class="prefs-label">{label}</span>'
        f'<a class="chip" href="{once}" rel="noopener noreferrer">Original this time</a>'
        + rules_form(name, "original", url, token, "chip always", "Always original")
        + f'<a class="chip" href="{SETUP_ORIGIN}/rules">Site rules</a></div>'
    )
    page = page.replace('<p class="prefs-row keys-row"', row + '<p class="prefs-row keys-row"', 1)
    foot = rules_form(name, "original", url, token, "original always", f"Always the original on {label}")
    return page.replace("</footer>", foot + "</footer>", 1)


def html_to_buffer(response: Response, settings: Settings, types: tuple[str, ...] = HTML_TYPES) -> bool:
    """Whether an answer is a page an addon may hold whole before sending it: one of the HTML
    `types`, not an attachment, and no Content-Length over the fetch cap (none: read up to it)."""
    if media_type(header(response.headers, "content-type") or "") not in types:
        return False
    if "attachment" in (header(response.headers, "content-disposition") or "").lower():
        return False
    length = header(response.headers, "content-length")
    return length is None or (length.isdigit() and int(length) <= settings.fetch.max_bytes)


def decoded_body(response: Response, body: bytes, settings: Settings, url: str) -> bytes:
    """A buffered response's body without its Content-Encoding (gzip, br, zstd), within the
    fetch limits; raises `FetchError` for a corrupt or oversized encoding."""
    decoder = BodyDecoder(header(response.headers, "content-encoding") or "", settings.fetch, url)
    decoder.feed(body)
    return decoder.finish()


#: How many "no article" verdicts the reader addon remembers (`ReaderAddon.not_articles`).
NOT_ARTICLE_MEMO = 4096
#: The prefix of a proxied page's reader view in the cache backend (`ReaderAddon.view_key`); the
#: number is the stored value's shape, bumped with `reader.RESULT_VERSION`.
VIEW_PREFIX = "proxyview:4:"
#: The prefix of a slow page's last reader view by URL (`ReaderAddon.late_key`): the view's key.
LATE_PREFIX = "proxylate:4:"


class ReaderAddon(Addon):
    """The reader view for article navigations, through `Reader` (extraction) and `Renderer` (page).

    A page found to be no article is remembered by a digest of what decided it (URL, Content-Type,
    Content-Encoding, whether the host is an `always` host, the body's bytes): the same bytes
    navigated to again pass through without a second extraction, which would say the same. Only
    for algorithms that read the page alone (not a browser's rendering of it, which may change).

    An article's reader view is kept in the cache backend (memory, SQLite or Redis, as `/read`'s
    results: shared by every server process and kept across restarts) under the page's digest (the
    same URL, type, encoding and bytes), the algorithm and its parameters: a
    repeat visit to an unchanged page renders it again with no extraction. What is kept is the
    extraction's result, not HTML: the reader's preferences, the site choices and the way back are
    applied at each render, so a preference changed between visits applies.

    A page that streamed through because its body was late (`--reader-wait`) is read once it has
    arrived (`body_arrived`: a GET navigation answered 200 in HTML, its body whole
    within the fetch size cap, in the extraction pool under the client's share, at most
    `LATE_READS` at once), and its view is kept also under its URL (`late_key`). The next
    navigation to that URL, the bar's and the bookmarklet's "Reader view" included, is answered
    with that view as soon as the site's head arrives (`EARLY_VIEW`): a slow page would stream
    through again otherwise. Its body is still read to the end after the answer: when it came in
    time the URL is no longer treated as slow; either way the view is made again from the new bytes
    (kept, when they changed), so the view answered at once is at most one visit old.
    """

    def __init__(
        self,
        reader: Reader,
        renderer: Renderer,
        settings: Settings,
        reader_base: str,
        store: ProxyStore | None = None,
        user: str | None = None,
    ) -> None:
        self.reader = reader
        self.renderer = renderer
        self.settings = settings
        self.reader_base = reader_base  # the reader server (reached as http://readerproxy/ by clients)
        self.store = store
        self.user = user  # the proxy login's user name with --auth: the key of its preferences
        self.not_articles: OrderedDict[bytes, None] = OrderedDict()  # digests, oldest first
        # the stored views decoded once while the memory cache hands back the same bytes
        self._views: DecodedMemo[dict[str, Any]] = DecodedMemo(json.loads, 8 * 1024 * 1024)
        self._late: set[asyncio.Task[None]] = set()  # slow pages being read after they arrived

    @staticmethod
    def page_digest(flow: Flow, upstream: Response, body: bytes) -> bytes:
        """The digest of the answer as the site sent it: URL, Content-Type, Content-Encoding, bytes."""
        digest = hashlib.blake2b(digest_size=32)
        for part in (
            flow.request.url,
            header(upstream.headers, "content-type") or "",
            header(upstream.headers, "content-encoding") or "",
        ):
            data = part.encode("utf-8", "surrogateescape")
            digest.update(len(data).to_bytes(4, "big") + data)
        digest.update(body)
        return digest.digest()

    @staticmethod
    def verdict_key(flow: Flow, page_digest: bytes) -> bytes:
        """The key of the "no article" verdict on an answer: the page, and whether its host is an
        `always` host (which needs only some text)."""
        return page_digest + (b"a" if flow.reader_rule == "always" else b"")

    @staticmethod
    def view_key(page_digest: bytes, extractor: Extractor[Any], params: object) -> str:
        """The cache key of a page's reader view: the page's digest, the algorithm, its parameters."""
        return f"{VIEW_PREFIX}{page_digest.hex()}|{extractor.name}|{_params_signature(params)}"

    @staticmethod
    def late_key(url: str, extractor: Extractor[Any], params: object) -> str:
        """The cache key under which a slow page's last view is found by its URL (`late_key` of
        the class docstring): the URL's digest, the algorithm, its parameters."""
        url_digest = hashlib.blake2b(url.encode("utf-8", "surrogateescape"), digest_size=32).hexdigest()
        return f"{LATE_PREFIX}{url_digest}|{extractor.name}|{_params_signature(params)}"

    async def cached_view(self, key: str) -> dict[str, Any] | None:
        """The extraction kept for `key`, or None (absent, or not readable as one)."""
        cache = self.reader.cache
        raw = await cache.get(key) if cache is not None else None
        if raw is None:
            return None
        try:
            data = self._views.decode(key, raw)
        except ValueError:
            return None
        return data if isinstance(data, dict) else None

    async def keep_view(self, key: str, data: dict[str, Any]) -> None:
        """Keep an article's extraction for later visits (for `--result-ttl`, as `/read`'s results)."""
        if self.reader.cache is not None:
            value = json.dumps(data, ensure_ascii=False).encode("utf-8")
            await self.reader.cache.set(key, value, self.settings.result_ttl)

    def remember_not_article(self, key: bytes) -> None:
        self.not_articles[key] = None
        if len(self.not_articles) > NOT_ARTICLE_MEMO:
            self.not_articles.popitem(last=False)

    def client(self, flow: Flow) -> Client:
        address = flow.client.rpartition(":")[0] or flow.client
        return Client(address.strip("[]"), flow_user(flow) or self.user)

    async def preferences(self, flow: Flow) -> Preferences:
        """The client's stored preferences (`http://readerproxy/`), else the defaults; lite when the
        browser's data saver is on (`Save-Data: on`), whatever was stored."""
        stored = await self.store.preferences(self.client(flow)) if self.store is not None else {}
        prefs = preferences({}, stored)[0]
        if saves_data(header(flow.request.headers, "save-data")):
            prefs = dataclasses.replace(prefs, lite=True)
        return prefs

    async def request(self, flow: Flow) -> None:
        request = flow.request
        if request.method not in ("GET", "HEAD") or not request.path.startswith(ASSET_PREFIX):
            return
        rest = request.path[len(ASSET_PREFIX) :]
        if rest.startswith("static/"):
            asset = self.renderer.static.get(rest.removeprefix("static/").partition("?")[0])
            if asset is None:
                flow.response = simple_response(404, "Not Found", "No such file.\n")
            else:
                flow.response = Response(
                    200,
                    "OK",
                    [
                        ("Content-Type", asset.content_type),
                        ("Cache-Control", "public, max-age=31536000, immutable"),
                    ],
                    asset.body,
                )
        else:  # /read?… (preference and format links): http://readerproxy/ answers those
            flow.response = Response(
                302, "Found", [("Location", SETUP_ORIGIN + "/" + rest), ("Content-Length", "0")], b""
            )
        flow.outcome = Outcome.READER

    async def response_headers(self, flow: Flow) -> None:
        response = flow.response
        if (
            response is None
            or flow.reader_rule == "never"
            or response.status != 200
            or not is_navigation(flow)
        ):
            return
        if not html_to_buffer(response, self.settings):
            return
        flow.wants_body = True
        if (view := await self.early_view(flow, response)) is not None:
            flow.notes[EARLY_VIEW] = view
            return
        if flow.reader_rule != "always":
            try:
                encoding = header(response.headers, "content-encoding") or ""
                flow.sniff = HeadSniffer(encoding, self.settings, flow.request.url)
            except FetchError:  # an encoding readerproxy does not decode: no early look
                flow.sniff = None

    async def response(self, flow: Flow, body: bytes) -> None:
        assert flow.response is not None
        if flow.reader_rule == "never":  # buffered for another addon (backbar.py), never a reader view
            return
        upstream = flow.response
        extractor, params = self.reader.resolve_request(self.settings.default_algorithm, {})
        digest = None if extractor.needs_browser else self.page_digest(flow, upstream, body)
        key = None if digest is None else self.verdict_key(flow, digest)
        if key is not None and key in self.not_articles:  # these bytes were no article a moment ago
            self.not_articles.move_to_end(key)
            return
        view_key = None if digest is None else self.view_key(digest, extractor, params)
        try:
            data = await self.cached_view(view_key) if view_key is not None else None
            fresh = data is None
            if data is None:
                data = await self.extract(flow, upstream, body, extractor, params)
            prefs = await self.preferences(flow)
        except FetchError as exc:  # a corrupt or oversized encoding: leave the page to the browser
            fall_back(flow, "undecodable", exc.message)
            return
        except ClientGone:  # nobody to answer: the connection closes
            raise
        except ReaderproxyError as exc:  # overloaded, past the deadline, a worker that died, …
            fall_back(flow, exc.kind, exc.message)
            return
        if not is_article(data, flow.reader_rule):
            if key is not None:
                self.remember_not_article(key)
            return
        if fresh and view_key is not None:
            await self.keep_view(view_key, data)
        flow.response = self.render_view(flow, upstream, data, prefs, extractor)
        flow.outcome = Outcome.READER

    def render_view(
        self,
        flow: Flow,
        upstream: Response,
        data: dict[str, Any],
        prefs: Preferences,
        extractor: Extractor[Any],
    ) -> Response:
        """The reader view of an extraction, with the reader's preferences of now, the site's
        choices and the way back; the site's cookies go with it."""
        url = flow.request.url
        data = dict(data)  # a kept one stays as the extraction made it
        data["url"] = url
        data["final_url"] = with_marker(url)  # the reader page's "Original" links: the way back
        client = self.client(flow)
        remember_view(client, url, {**data, "final_url": url})
        page_html = self.renderer.reader_page(data, prefs, extractor.name)
        page_html = same_origin_links(
            with_save_token(page_html, rules_token(client, save_scope(flow.request.host)))
        )
        token = rules_token(client, rule_host(flow.request.host))
        html = site_choices(page_html, url, flow.request.host, token).encode("utf-8")
        cookies = [(key, value) for key, value in upstream.headers if key.lower() == "set-cookie"]
        return Response(
            200,
            "OK",
            [
                ("Content-Type", "text/html; charset=utf-8"),
                ("Cache-Control", "no-store"),
                ("X-Readerproxy", "reader-view"),
                *SECURITY_HEADERS,
                *cookies,
            ],
            html,
        )

    # ---- slow pages, read after they arrived ----------------------------------------------------
    async def early_view(self, flow: Flow, upstream: Response) -> Response | None:
        """The reader view to answer at the head with: this URL's page was slow last time and its
        view is kept (`late_key`); None otherwise."""
        if self.reader.cache is None:
            return None
        extractor, params = self.reader.resolve_request(self.settings.default_algorithm, {})
        if extractor.needs_browser:
            return None
        raw = await self.reader.cache.get(self.late_key(flow.request.url, extractor, params))
        if raw is None:
            return None
        data = await self.cached_view(raw.decode("utf-8", "replace"))
        if data is None or not is_article(data, flow.reader_rule):
            return None
        return self.render_view(flow, upstream, data, await self.preferences(flow), extractor)

    async def body_arrived(self, flow: Flow, upstream: Response, body: bytes) -> None:
        """A navigation's body, whole, after its answer: read in the background (bounded)."""
        if flow.reader_rule == "never" or upstream.status != 200 or not is_navigation(flow):
            return
        if len(self._late) >= LATE_READS:
            log.info(
                "not reading %s after it arrived: %d slow pages being read", flow.request.url, LATE_READS
            )
            return
        task = asyncio.create_task(
            self._read_late(flow, upstream, body, flow.notes.get("streamed") == "slow")
        )
        self._late.add(task)
        task.add_done_callback(self._late.discard)

    async def _read_late(self, flow: Flow, upstream: Response, body: bytes, slow: bool) -> None:
        """Read a page whose answer went before its body; keep its view, and under its URL when it
        was slow (or forget the URL when it came in time after all)."""
        CONNECTED.set(None)  # the browser's connection may close: this read is for its next visit
        url = flow.request.url
        cache = self.reader.cache
        extractor, params = self.reader.resolve_request(self.settings.default_algorithm, {})
        if cache is None or extractor.needs_browser:
            return
        digest = self.page_digest(flow, upstream, body)
        view_key = self.view_key(digest, extractor, params)
        late_key = self.late_key(url, extractor, params)
        try:
            data = await self.cached_view(view_key)
            fresh = data is None
            if data is None:
                data = await self.extract(flow, upstream, body, extractor, params)
            if not is_article(data, flow.reader_rule):
                self.remember_not_article(self.verdict_key(flow, digest))
                await cache.delete(late_key)
                return
            if fresh:
                await self.keep_view(view_key, data)
            if slow:
                await cache.set(late_key, view_key.encode("utf-8"), self.settings.result_ttl)
            else:
                await cache.delete(late_key)
        except (ReaderproxyError, FetchError) as exc:  # overloaded, too slow, …: the next visit tries
            log.info("reading %s after it arrived failed: %s", url, exc)
        except Exception:
            log.exception("reading %s after it arrived failed", url)

    async def close(self) -> None:
        for task in list(self._late):
            task.cancel()
        await asyncio.gather(*self._late, return_exceptions=True)

    async def extract(
        self, flow: Flow, upstream: Response, body: bytes, extractor: Extractor[Any], params: object
    ) -> dict[str, Any]:
        """The page's extraction in the worker pool (FetchError for a body that does not decode)."""
        url = flow.request.url
        page = decoded_body(upstream, body, self.settings, url)
        return await self.reader.extract_bytes(
            page,
            url,
            header(upstream.headers, "content-type"),
            extractor,
            params,
            images=True,  # as on /read: lite folds each image behind a tap when it renders
            reader_links=False,
        )


# ---- metrics ------------------------------------------------------------------------------------


#: The fallback counter of each metrics registry (several proxies may share one in tests).
_FALLBACKS: weakref.WeakKeyDictionary[CollectorRegistry, Any] = weakref.WeakKeyDictionary()


def fallback_counter(metrics: Metrics) -> Any:
    """`readerproxy_proxy_reader_fallbacks_total{reason}` on the server's registry, made once."""
    counter = _FALLBACKS.get(metrics.registry)
    if counter is None:
        from prometheus_client import Counter

        counter = _FALLBACKS[metrics.registry] = Counter(
            "readerproxy_proxy_reader_fallbacks",
            "Pages passed through as they came because reading them failed, by reason "
            "(overloaded, extraction_timeout, extraction_failed, undecodable, internal, ...).",
            ["reason"],
            registry=metrics.registry,
        )
    return counter


class MetricsAddon(Addon):
    """Every finished flow counted by outcome, and every failed reading by reason (`fall_back`)."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics
        self.fallbacks = fallback_counter(metrics)

    async def done(self, flow: Flow) -> None:
        self.metrics.proxy_request(str(flow.outcome or Outcome.ERROR))
        if (reason := flow.notes.get(FALLBACK_NOTE)) is not None:
            self.fallbacks.labels(str(reason)).inc()


def reader_base(settings: Settings) -> str:
    """The reader server's address as a browser reaches it."""
    host = settings.host if settings.host not in ("0.0.0.0", "::", "") else "127.0.0.1"
    host = f"[{host}]" if ":" in host else host
    return f"http://{host}:{settings.port}"


def url_host(url: str) -> str:
    return (urlsplit(url).hostname or "").lower()
