"""The way back to the reader view on an article shown as the original: a small bar the proxy adds
at the top of the page, with one link that shows the page as a reader view again.

`BackBarAddon` adds it only to a page that could have been a reader view and was passed through by
the reader's own choice: the "Original this time" link of a reader view (the way-back marker), or a
site rule "always original" chosen in the browser (`store.ProxyStore`). And only when everything
below holds, else the page's bytes go through unchanged:

- a top-level navigation (GET) answered 200 with `text/html` (no attachment, not UTF-16) whose body
  arrived whole within `--reader-wait` and decodes under the fetch caps;
- the page is an article by the same decision the reader view takes (`addons.is_article` on the
  extraction `ReaderAddon` runs), so pages that are not articles are never touched;
- every Content-Security-Policy of the page (headers and `<meta http-equiv>`) lets it load a
  stylesheet from its own origin (`style-src-elem`, else `style-src`, else `default-src`, allows
  `'self'`, the page's scheme or host, or `*`) and none sandboxes it: the bar is markup plus a
  stylesheet served by the proxy on the page's own origin (`/.readerproxy/static/backbar.css`),
  with no script and no inline style;
- the page has a `<body>` start tag to put the bar after.

The bar sits in the page's flow at the top (it pushes the page down rather than covering it) and
scrolls away with it. Its link is the page's URL with the reader marker (`addons.READER_MARKER`),
which the rules answer with the reader view once. The changed page goes out decoded (no
Content-Encoding) and without the site's validators (ETag, Content-MD5), since its bytes changed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from html import escape as html_escape
from typing import TYPE_CHECKING

from ..errors import ReaderproxyError
from ..web.fetch import FetchError
from .addons import (
    ASSET_PREFIX,
    MARKER,
    READER_MARKER,
    Addon,
    decoded_body,
    html_to_buffer,
    is_article,
    is_navigation,
    strip_marker,
)
from .flow import Flow, Outcome, Response, header
from .setup import with_query_item

if TYPE_CHECKING:
    from ..web.reader import Reader
    from ..web.templating import Renderer
    from .settings import Settings
    from .store import ProxyStore

STYLESHEET = "backbar.css"
#: Headers of the site's answer that no longer describe the changed bytes.
STALE_HEADERS = frozenset({"content-encoding", "content-length", "etag", "content-md5", "digest"})
#: Where the bar goes: the first <body> start tag outside comments and scripts.
_BODY_OR_SKIPPED = re.compile(
    rb"<!--.*?-->|<script\b.*?</script\s*>|<style\b.*?</style\s*>|<body(?:\s[^>]*)?>",
    re.IGNORECASE | re.DOTALL,
)
_META = re.compile(rb"<meta\b[^>]*>", re.IGNORECASE)
_ATTRIBUTE = re.compile(r"""([a-zA-Z-]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""")
_UTF16 = re.compile(r"charset\s*=\s*\"?utf-16", re.IGNORECASE)


@dataclass(frozen=True)
class Origin:
    """The page's origin, as a CSP source expression is matched against it."""

    scheme: str
    host: str
    port: int


def directive_sources(policy: str) -> dict[str, list[str]]:
    """A serialized CSP as directive name → source list (the first of a repeated directive wins)."""
    directives: dict[str, list[str]] = {}
    for part in policy.split(";"):
        tokens = part.split()
        if tokens:
            directives.setdefault(tokens[0].lower(), [token for token in tokens[1:]])
    return directives


def source_allows(source: str, origin: Origin) -> bool:
    """Whether one source expression allows a URL on the page's own origin (CSP3 §6.7.2, the part a
    same-origin stylesheet needs: `*`, `'self'`, a scheme source, a host source)."""
    source = source.lower()
    if source in ("*", "'self'"):
        return True
    if source.endswith(":") and "/" not in source:  # a scheme source; http: also allows https:
        scheme = source[:-1]
        return scheme == origin.scheme or (scheme == "http" and origin.scheme == "https")
    if source.startswith("'"):  # 'none', nonces, hashes, 'unsafe-…': no URL
        return False
    scheme, sep, rest = source.partition("://")
    if not sep:
        scheme, rest = "", source
    if scheme and scheme != origin.scheme and not (scheme == "http" and origin.scheme == "https"):
        return False
    host_port = rest.split("/", 1)[0]
    host, _, port = host_port.partition(":")
    default = 443 if origin.scheme == "https" else 80
    if port and port != "*" and port != str(origin.port):
        return False
    if not port and origin.port != default:
        return False
    if host.startswith("*."):
        return origin.host.endswith(host[1:])
    return host == origin.host


def policy_allows_bar(policy: str, origin: Origin) -> bool:
    """Whether one policy lets the page load a stylesheet from its own origin, unsandboxed."""
    directives = directive_sources(policy)
    if "sandbox" in directives:
        return False
    for name in ("style-src-elem", "style-src", "default-src"):
        if name in directives:
            return any(source_allows(source, origin) for source in directives[name])
    return True


def meta_policies(page: bytes) -> list[str]:
    """The policies a page states in `<meta http-equiv="Content-Security-Policy">` before its body."""
    start = _BODY_OR_SKIPPED.search(page)
    head = page[: start.start()] if start is not None else page[:65536]
    policies = []
    for tag in _META.finditer(head):
        attributes = {
            match.group(1).lower(): match.group(2) or match.group(3) or match.group(4) or ""
            for match in _ATTRIBUTE.finditer(tag.group(0).decode("latin-1"))
        }
        if attributes.get("http-equiv", "").lower() == "content-security-policy":
            policies.append(attributes.get("content", ""))
    return policies


def header_policies(flow: Flow) -> list[str]:
    assert flow.response is not None
    return [value for key, value in flow.response.headers if key.lower() == "content-security-policy"]


def body_start(page: bytes) -> int | None:
    """The offset just after the page's `<body>` start tag, or None when it has none."""
    for match in _BODY_OR_SKIPPED.finditer(page):
        if match.group(0)[:5].lower() == b"<body":
            return match.end()
    return None


def bar_markup(reader_url: str, stylesheet: str) -> bytes:
    """The bar: a custom element (no page rule names it) holding its stylesheet link and the way back."""
    href = html_escape(reader_url)
    return (
        f'<readerproxy-bar role="region" aria-label="readerproxy">'
        f'<link rel="stylesheet" href="{html_escape(stylesheet)}">'
        f'<readerproxy-brand aria-hidden="true">reader<b>proxy</b></readerproxy-brand>'
        f'<a href="{href}" rel="nofollow">Reader view</a></readerproxy-bar>'
    ).encode()


class BackBarAddon(Addon):
    """The bar back to the reader view on an article passed through by choice (module docstring).

    Placed before `RulesAddon`, whose request hook removes the way-back marker this one notes."""

    NOTE = "backbar"

    def __init__(
        self,
        reader: Reader,
        renderer: Renderer,
        settings: Settings,
        store: ProxyStore | None,
        is_own: Callable[[Flow], bool] = lambda flow: False,
    ) -> None:
        self.reader = reader
        self.settings = settings
        self.store = store
        self.is_own = is_own
        asset = renderer.static.get(STYLESHEET)
        self.stylesheet = ASSET_PREFIX + asset.url.removeprefix("/") if asset is not None else None

    async def request(self, flow: Flow) -> None:
        if strip_marker(flow.request.path, MARKER)[1]:
            flow.notes[self.NOTE] = "original this time"

    async def chosen_original(self, flow: Flow) -> bool:
        """Passed through because the reader chose the original: this time, or always for the site."""
        if self.NOTE in flow.notes:
            return True
        if self.store is None or await self.store.rule_for(flow.request.host) != "original":
            return False
        flow.notes[self.NOTE] = "always original"
        return True

    async def response_headers(self, flow: Flow) -> None:
        response = flow.response
        if (
            self.stylesheet is None
            or response is None
            or response.status != 200
            or flow.reader_rule != "never"
            or not is_navigation(flow)
            or self.is_own(flow)
        ):
            return
        if not html_to_buffer(response, self.settings, ("text/html",)):
            return
        if _UTF16.search(header(response.headers, "content-type") or ""):
            return
        origin = Origin(flow.request.scheme, flow.request.host, flow.request.port)
        if not all(policy_allows_bar(policy, origin) for policy in header_policies(flow)):
            flow.notes[self.NOTE + "_refused"] = "content-security-policy"
            return
        if await self.chosen_original(flow):
            flow.wants_body = True

    async def response(self, flow: Flow, body: bytes) -> None:
        upstream = flow.response
        if upstream is None or self.NOTE not in flow.notes or not flow.wants_body:
            return
        assert self.stylesheet is not None
        url = flow.request.url
        try:
            page = decoded_body(upstream, body, self.settings, url)
        except FetchError:
            return
        if page[:2] in (b"\xff\xfe", b"\xfe\xff"):  # UTF-16: the bar's bytes would not be text there
            return
        origin = Origin(flow.request.scheme, flow.request.host, flow.request.port)
        if not all(policy_allows_bar(policy, origin) for policy in meta_policies(page)):
            flow.notes[self.NOTE + "_refused"] = "content-security-policy"
            return
        start = body_start(page)
        if start is None or not await self.is_an_article(page, url, header(upstream.headers, "content-type")):
            return
        bar = bar_markup(with_query_item(url, READER_MARKER), self.stylesheet)
        headers = [(key, value) for key, value in upstream.headers if key.lower() not in STALE_HEADERS]
        flow.response = Response(upstream.status, upstream.reason, headers, page[:start] + bar + page[start:])
        flow.outcome = Outcome.PASSED

    async def is_an_article(self, page: bytes, url: str, content_type: str | None) -> bool:
        """The reader view's own decision (`addons.is_article` on the same extraction)."""
        extractor, params = self.reader.resolve_request(self.settings.default_algorithm, {})
        try:
            data = await self.reader.extract_bytes(
                page, url, content_type, extractor, params, images=False, reader_links=False
            )
        except ReaderproxyError:  # an extraction that failed, timed out or was refused: the page as it came
            return False
        return is_article(data, None)
