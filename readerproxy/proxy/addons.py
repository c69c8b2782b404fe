"""The addons around the proxy core, each one concern (mitmproxy's design):

- `AuthAddon`: `Proxy-Authorization: Basic` when credentials are configured, 407 otherwise.
- `RulesAddon`: per-host rules from the config (always reader / never reader) and the way-back
  marker: a URL carrying `readerproxy-original=1` passes through once, the marker removed before the
  request goes upstream.
- `ReaderAddon`: asks for the body of top-level HTML navigations and, when the page is an article,
  answers with the reader view made by the request layer `/read` uses (`Reader`) and its `Renderer`.
  It also serves the reader view's own assets under `/.readerproxy/` on every proxied host, so the
  page stays same-origin (its CSP holds, and nothing is mixed content inside intercepted HTTPS).
- `MetricsAddon`: counts every flow by outcome on `/metrics`.

Hooks, called by the core in this order for every flow: `request(flow)` (an addon may answer by
setting `flow.response`), `response_headers(flow)` (the upstream head is in `flow.response`; an addon
may set `flow.wants_body`), `response(flow, body)` (only when the body was buffered; an addon may
replace `flow.response`), `done(flow)`.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..fetch import BodyDecoder, FetchError, media_type
from ..render import Preferences
from .flow import Flow, Outcome, Response, header, prefers_html

if TYPE_CHECKING:
    from ..metrics import Metrics
    from ..reader import Reader
    from ..render import Renderer
    from ..settings import Settings

#: The way-back marker: a query item on the original's URL in every proxied reader view.
MARKER = "readerproxy-original=1"
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
_ROOT_LINKS = re.compile(r'\b(href|src|action)="/(read\b|static/)')


class Addon:
    """No-op hooks; an addon overrides the ones it needs."""

    async def request(self, flow: Flow) -> None:
        return None

    async def response_headers(self, flow: Flow) -> None:
        return None

    async def response(self, flow: Flow, body: bytes) -> None:
        return None

    async def done(self, flow: Flow) -> None:
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


def configured_credentials(settings: Settings) -> str | None:
    """ "USER:PASS" from `--auth`, or the first line of `--auth-file`; None when auth is off."""
    if settings.auth:
        value = settings.auth
    elif settings.auth_file:
        lines = Path(settings.auth_file).expanduser().read_text(encoding="utf-8").splitlines()
        value = lines[0].strip() if lines else ""
    else:
        return None
    if ":" not in value or not value.partition(":")[0]:
        raise ValueError("credentials must be USER:PASS")
    return value


def basic_matches(authorization: str | None, credentials: str) -> bool:
    """Whether a `Basic` authorization header carries exactly these credentials (constant time)."""
    scheme, _, token = (authorization or "").strip().partition(" ")
    if scheme.lower() != "basic":
        return False
    try:
        given = base64.b64decode(token.strip(), validate=True)
    except (binascii.Error, ValueError):
        return False
    return hmac.compare_digest(given, credentials.encode("utf-8"))


class AuthAddon(Addon):
    """407 with `Proxy-Authenticate` unless the request carries the configured credentials."""

    def __init__(self, credentials: str | None) -> None:
        self.credentials = credentials

    async def request(self, flow: Flow) -> None:
        if self.credentials is None or flow.notes.get("in_tunnel"):  # a tunnel was authorised once
            return
        if not basic_matches(header(flow.request.headers, "proxy-authorization"), self.credentials):
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


def strip_marker(path: str) -> tuple[str, bool]:
    """The path without the way-back marker, and whether it was there."""
    base, sep, query = path.partition("?")
    if not sep:
        return path, False
    items = query.split("&")
    kept = [item for item in items if item != MARKER]
    if len(kept) == len(items):
        return path, False
    return (f"{base}?{'&'.join(kept)}" if kept else base), True


def with_marker(url: str) -> str:
    """The URL with the way-back marker added to its query."""
    base, sep, fragment = url.partition("#")
    joined = f"{base}&{MARKER}" if "?" in base else f"{base}?{MARKER}"
    return joined + (sep + fragment if sep else "")


class RulesAddon(Addon):
    """`reader_hosts` (always the reader view) and `direct_hosts` (never) from the config; the marker."""

    def __init__(self, always: Sequence[str], never: Sequence[str]) -> None:
        self.always = tuple(always)
        self.never = tuple(never)

    async def request(self, flow: Flow) -> None:
        request = flow.request
        request.path, marked = strip_marker(request.path)
        if marked or host_matches(request.host, self.never):
            flow.reader_rule = "never"
        elif host_matches(request.host, self.always):
            flow.reader_rule = "always"


# ---- the reader view ----------------------------------------------------------------------------


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
    """The readerable check's answer (`readerproxy.readerable`, in the result as `readerable`, which
    the pipeline always sets); `always` hosts need only some text."""
    if rule == "always":
        return bool((data.get("text") or "").strip())
    return bool(data.get("readerable"))


def same_origin_links(page: str) -> str:
    """Root-relative /read and /static/ links of the reader page moved under ASSET_PREFIX."""
    return _ROOT_LINKS.sub(lambda m: f'{m.group(1)}="{ASSET_PREFIX}{m.group(2)}', page)


class ReaderAddon(Addon):
    """The reader view for article navigations, through `Reader` (extraction) and `Renderer` (page)."""

    def __init__(self, reader: Reader, renderer: Renderer, settings: Settings, reader_base: str) -> None:
        self.reader = reader
        self.renderer = renderer
        self.settings = settings
        self.reader_base = reader_base  # the reader server, for the preference links

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
        else:  # /read?… (preference and format links): the reader server answers those
            flow.response = Response(
                302, "Found", [("Location", self.reader_base + "/" + rest), ("Content-Length", "0")], b""
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
        if media_type(header(response.headers, "content-type") or "") not in HTML_TYPES:
            return
        if "attachment" in (header(response.headers, "content-disposition") or "").lower():
            return
        length = header(response.headers, "content-length")
        if length is not None and (not length.isdigit() or int(length) > self.settings.fetch.max_bytes):
            return
        flow.wants_body = True

    async def response(self, flow: Flow, body: bytes) -> None:
        assert flow.response is not None
        upstream = flow.response
        url = flow.request.url
        try:
            decoder = BodyDecoder(
                header(upstream.headers, "content-encoding") or "", self.settings.fetch, url
            )
            decoder.feed(body)
            page = decoder.finish()
            extractor, params = self.reader.resolve_request(self.settings.default_algorithm, {})
            data = await self.reader.extract_bytes(
                page,
                url,
                header(upstream.headers, "content-type"),
                extractor,
                params,
                images=True,
                reader_links=False,
            )
        except FetchError as exc:  # a corrupt or oversized encoding: leave the page to the browser
            flow.error = exc.message
            return
        if not is_article(data, flow.reader_rule):
            return
        data["url"] = url
        data["final_url"] = with_marker(url)  # the reader page's "Original" links: the way back
        html = same_origin_links(self.renderer.reader_page(data, Preferences(), extractor.name)).encode(
            "utf-8"
        )
        cookies = [(key, value) for key, value in upstream.headers if key.lower() == "set-cookie"]
        flow.response = Response(
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
        flow.outcome = Outcome.READER


# ---- metrics ------------------------------------------------------------------------------------


class MetricsAddon(Addon):
    """Every finished flow counted by outcome."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics

    async def done(self, flow: Flow) -> None:
        self.metrics.proxy_request(str(flow.outcome or Outcome.ERROR))


def reader_base(settings: Settings) -> str:
    """The reader server's address as a browser reaches it."""
    host = settings.host if settings.host not in ("0.0.0.0", "::", "") else "127.0.0.1"
    host = f"[{host}]" if ":" in host else host
    return f"http://{host}:{settings.port}"


def url_host(url: str) -> str:
    return (urlsplit(url).hostname or "").lower()
