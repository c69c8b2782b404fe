"""The HTTP flow as data: what the browser asked, what the proxy answers, and how it ended.

A `Flow` is made per request by the proxy core (`proxy/server.py`) and handed to the addons
(`proxy/addons.py`) at fixed points, as in mitmproxy. This module also holds the HTTP/1.1 message
syntax the core needs and nothing else: reading a request head with limits, the hop-by-hop header
rules of RFC 9110 §7.6.1, and writing a response head.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field
from urllib.parse import urlsplit

#: Longest request line (URL included) and longest head (request line and all headers), bytes.
MAX_REQUEST_LINE = 16 * 1024
MAX_HEAD = 64 * 1024
MAX_HEADERS = 200
#: Always hop-by-hop (RFC 9110 §7.6.1, plus the de-facto Proxy-Connection and the browser's
#: credentials for this proxy, which are never for the site).
HOP_BY_HOP = frozenset(
    {
        "connection",
        "proxy-connection",
        "keep-alive",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "proxy-authorization",
    }
)
VIA = "1.1 readerproxy"
_TOKEN = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
_VERSION = re.compile(r"^HTTP/1\.[01]$")


class Outcome(enum.StrEnum):
    """How a proxied request ended; the label of the `/metrics` counter."""

    READER = "reader_view"
    PASSED = "passed_through"
    TUNNELLED = "tunnelled"
    REFUSED = "refused"  # the SSRF guard, access control, or a malformed request
    ERROR = "error"  # the site could not be reached or answered badly


class BadRequest(Exception):
    """A request the proxy cannot parse; `status` is what to answer (400, 414, 431)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


Headers = list[tuple[str, str]]


def header(headers: Headers, name: str) -> str | None:
    """The first value of a header (case-insensitive name), or None."""
    name = name.lower()
    return next((value for key, value in headers if key.lower() == name), None)


def header_values(headers: Headers, name: str) -> list[str]:
    """Every comma-separated element of every occurrence of a header, lower-cased and trimmed."""
    name = name.lower()
    return [
        item.strip().lower()
        for key, value in headers
        if key.lower() == name
        for item in value.split(",")
        if item.strip()
    ]


def end_to_end(headers: Headers) -> Headers:
    """The headers without the hop-by-hop ones: the fixed set and those the Connection header names."""
    named = set(header_values(headers, "connection"))
    return [(key, value) for key, value in headers if key.lower() not in HOP_BY_HOP | named]


@dataclass
class Request:
    """A request as the proxy understood it: always with an absolute target (scheme, host, port)."""

    method: str
    scheme: str  # "http", or "https" inside an intercepted tunnel
    host: str  # lower-case, no brackets around IPv6
    port: int
    path: str  # origin-form: "/path?query"; the authority "host:port" for CONNECT
    version: str  # "HTTP/1.1" | "HTTP/1.0"
    headers: Headers

    @property
    def url(self) -> str:
        default = 80 if self.scheme == "http" else 443
        host = f"[{self.host}]" if ":" in self.host else self.host
        netloc = host if self.port == default else f"{host}:{self.port}"
        return f"{self.scheme}://{netloc}{self.path}"

    @property
    def content_length(self) -> int | None:
        value = header(self.headers, "content-length")
        return int(value) if value is not None else None

    @property
    def chunked(self) -> bool:
        return "chunked" in header_values(self.headers, "transfer-encoding")

    @property
    def keep_alive(self) -> bool:
        tokens = header_values(self.headers, "connection") + header_values(self.headers, "proxy-connection")
        if self.version == "HTTP/1.0":
            return "keep-alive" in tokens
        return "close" not in tokens


@dataclass
class Response:
    """An answer to the browser: status and headers, then either `body` (the whole of it, known to
    the proxy) or, when `body` is None, the upstream response streamed by the core."""

    status: int
    reason: str
    headers: Headers
    body: bytes | None = None


@dataclass
class Flow:
    """One request through the proxy, its answer and its outcome; the addons read and change it."""

    client: str  # "ip:port" of the browser
    request: Request
    response: Response | None = None
    outcome: Outcome | None = None
    #: "always" | "never" | None: what the rules (and the way-back marker) say about the reader view.
    reader_rule: str | None = None
    #: Set by the reader addon when it wants the whole HTML body before the answer is chosen.
    wants_body: bool = False
    error: str | None = None
    notes: dict[str, object] = field(default_factory=dict)


def parse_request_head(
    head: bytes,
    *,
    default_scheme: str = "http",
    default_host: str | None = None,
    default_port: int | None = None,
) -> Request:
    """A request head (request line and headers, CRLF-separated, without the empty line) as a Request.

    Absolute-form targets ("GET http://host/path HTTP/1.1") are required outside a tunnel; inside
    an intercepted tunnel (default_host given) the origin form ("GET /path") is taken relative to it.
    """
    try:
        text = head.decode("latin-1")
    except UnicodeDecodeError as exc:  # pragma: no cover - latin-1 decodes every byte
        raise BadRequest(400, "undecodable request head") from exc
    lines = text.split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not _TOKEN.match(parts[0]) or not _VERSION.match(parts[2]) or not parts[1]:
        raise BadRequest(400, "malformed request line")
    method, target, version = parts
    if len(lines) - 1 > MAX_HEADERS:
        raise BadRequest(431, "too many header fields")
    headers: Headers = []
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if not sep or not _TOKEN.match(name):
            raise BadRequest(400, "malformed header field")
        if any(c in value for c in "\r\n\x00"):
            raise BadRequest(400, "control character in a header value")
        headers.append((name, value.strip(" \t")))
    if header(headers, "content-length") is not None:
        lengths = {value.strip() for key, value in headers if key.lower() == "content-length"}
        if len(lengths) != 1 or not next(iter(lengths)).isdigit():
            raise BadRequest(400, "invalid Content-Length")
        if "transfer-encoding" in {key.lower() for key, _ in headers}:
            raise BadRequest(400, "both Content-Length and Transfer-Encoding")  # a smuggling vector
    te = header_values(headers, "transfer-encoding")
    if te and te != ["chunked"]:
        raise BadRequest(400, "only the chunked transfer coding is accepted")
    if method == "CONNECT":
        host, connect_port = split_authority(target, None)
        return Request(method, "tunnel", host, connect_port, target, version, headers)
    if target.startswith("/") and default_host is not None:
        return Request(method, default_scheme, default_host, default_port or 443, target, version, headers)
    try:
        parts_ = urlsplit(target)
        port = parts_.port
    except ValueError as exc:
        raise BadRequest(400, f"malformed request target: {exc}") from exc
    if parts_.scheme.lower() != "http" or not parts_.hostname or parts_.username or parts_.password:
        raise BadRequest(400, "the proxy takes absolute http:// request targets (use CONNECT for https)")
    path = parts_.path or "/"
    if parts_.query:
        path += "?" + parts_.query
    return Request(method, "http", parts_.hostname.lower(), port or 80, path, version, headers)


def split_authority(authority: str, default_port: int | None) -> tuple[str, int]:
    """ "host:port" (IPv6 in brackets) as (host, port); BadRequest when it is not one."""
    try:
        parts = urlsplit("//" + authority)
        port = parts.port or default_port
    except ValueError as exc:
        raise BadRequest(400, f"malformed authority {authority!r}") from exc
    if not parts.hostname or port is None or parts.path or parts.query or parts.username:
        raise BadRequest(400, f"CONNECT needs host:port, got {authority!r}")
    return parts.hostname.lower(), port


def response_head(status: int, reason: str, headers: Headers) -> bytes:
    """Status line and headers, ending with the empty line."""
    lines = [f"HTTP/1.1 {status} {reason}"]
    lines.extend(f"{name}: {value}" for name, value in headers)
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "replace")


def with_via(headers: Headers) -> Headers:
    """`Via` appended to whatever Via the message already carried (RFC 9110 §7.6.3)."""
    previous = ", ".join(value for key, value in headers if key.lower() == "via")
    rest = [(key, value) for key, value in headers if key.lower() != "via"]
    return [*rest, ("Via", f"{previous}, {VIA}" if previous else VIA)]


def prefers_html(accept: str | None) -> bool:
    """Whether an Accept header puts text/html first (at the highest quality), as navigations do."""
    if not accept:
        return False
    best_q = -1.0
    best = ""
    for item in accept.split(","):
        media, *params = (part.strip() for part in item.split(";"))
        q = 1.0
        for param in params:
            key, _, value = param.partition("=")
            if key.strip().lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        if q > best_q:
            best_q, best = q, media.lower()
    return best in ("text/html", "application/xhtml+xml")
