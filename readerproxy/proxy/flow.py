"""The HTTP flow as data: what the browser asked, what the proxy answers, and how it ended.

A `Flow` is made per request by the proxy core (`proxy/server.py`) and handed to the addons
(`proxy/addons.py`) at fixed points, as in mitmproxy. This module also holds the HTTP/1.1 message
syntax the core needs beyond h11's framing (`proxy/http1.py`): the request as the proxy requires
it (absolute targets, valid host names), and the hop-by-hop header rules of RFC 9110 §7.6.1.
"""

from __future__ import annotations

import enum
import functools
import ipaddress
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple
from urllib.parse import urlsplit

#: Longest request line (URL included) and longest head (request line and all headers), bytes.
MAX_REQUEST_LINE = 16 * 1024
MAX_HEAD = 64 * 1024
MAX_HEADERS = 200
#: A header name or method (RFC 9110 §5.6.2 `token`), as bytes for the heads' regular expressions.
TOKEN = rb"[-!#$%&'*+.^_`|~0-9a-zA-Z]+"
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
#: host[:port] with the host a name or a bracketed IPv6 literal (a zone as "%25" + zone).
_AUTHORITY = re.compile(
    r"^(?:\[(?P<v6>[0-9A-Fa-f:.]+(?:%25[A-Za-z0-9._~-]+)?)\]|(?P<name>[^\[\]:@/?#\s]+))(?::(?P<port>[0-9]{1,5}))?$"
)
#: Control characters other than tab (RFC 9110 §5.5): refused in request header values.
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
_IPV4_CHARACTERS = "0123456789."
_LABEL = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?$")
_LABEL_UNDERSCORE = re.compile(r"^[A-Za-z0-9_](?:[A-Za-z0-9_-]*[A-Za-z0-9_])?$")


class Outcome(enum.StrEnum):
    """How a proxied request ended; the label of the `/metrics` counter."""

    READER = "reader_view"
    PASSED = "passed_through"
    TUNNELLED = "tunnelled"
    REFUSED = "refused"  # the SSRF guard, access control, or a malformed request
    BLOCKED = "blocked"  # a host on the block list (`blocklist.py`)
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
    for key, value in headers:  # a loop, not a generator: called several times per request
        if key.lower() == name:
            return value
    return None


def header_values(headers: Headers, name: str) -> list[str]:
    """Every comma-separated element of every occurrence of a header, lower-cased and trimmed."""
    name = name.lower()
    values = [value for key, value in headers if key.lower() == name]
    if not values:
        return []
    return [item for value in values for item in (part.strip().lower() for part in value.split(",")) if item]


def end_to_end(headers: Headers) -> Headers:
    """The headers without the hop-by-hop ones: the fixed set and those the Connection header names."""
    named = header_values(headers, "connection")
    dropped = HOP_BY_HOP.union(named) if named else HOP_BY_HOP  # once, not per field
    return [(key, value) for key, value in headers if key.lower() not in dropped]


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
    #: Set with `wants_body` by the reader addon: a look at each chunk of the body as it arrives;
    #: a reason returned (the head already shows no article) streams the page through at once.
    sniff: Callable[[bytes], str | None] | None = None
    error: str | None = None
    notes: dict[str, object] = field(default_factory=dict)
    #: The request's body, whole, up to a limit in bytes (`http1.BodyTooLarge` past it), for an
    #: addon that answers a small form itself (`setup.py`'s site rules); set by the core.
    read_body: Callable[[int], Awaitable[bytes]] | None = None


class RequestHead(NamedTuple):
    """A request head as parsed: by h11 (`http1.head_of`) or, for a common well-formed head, by
    `http1.ClientConnection`'s fast path, which gives exactly what h11 would (the differential
    test `tests/proxy/test_proxy_http1_fast.py`)."""

    method: bytes
    target: bytes
    http_version: bytes  # b"1.1", b"1.0"
    fields: list[tuple[bytes, bytes]]  # names as the browser spelled them, values without OWS


def request_from_head(
    head: RequestHead,
    *,
    default_scheme: str = "http",
    default_host: str | None = None,
    default_port: int | None = None,
) -> Request:
    """The Request the proxy works with, from a well-formed head (h11's checks, or the fast path's
    stricter ones: the request line, header syntax, Content-Length and Transfer-Encoding).

    Absolute-form targets ("GET http://host/path HTTP/1.1") are required outside a tunnel; inside
    an intercepted tunnel (default_host given) the origin form ("GET /path") is taken relative to it.
    Every host must be a valid host name or IP literal (`valid_host`).
    """
    method = head.method.decode("ascii")
    version = "HTTP/" + head.http_version.decode("ascii")
    if version not in ("HTTP/1.0", "HTTP/1.1"):
        raise BadRequest(400, "the proxy speaks HTTP/1.0 and HTTP/1.1")
    target = head.target.decode("latin-1")
    headers: Headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in head.fields]
    # h11 lets them through, for old cookies (the values searched at once: a tab, their joint, passes)
    if headers and _CONTROL.search("\t".join([value for _, value in headers])):
        raise BadRequest(400, "control character in a header value")
    if header(headers, "content-length") is not None and header(headers, "transfer-encoding") is not None:
        raise BadRequest(400, "both Content-Length and Transfer-Encoding")  # a smuggling vector
    if method == "CONNECT":
        host, connect_port = split_authority(target, None)
        check_request_host(host, strict=True)
        return Request(method, "tunnel", host, connect_port, target, version, headers)
    if target.startswith("/") and default_host is not None:
        return Request(method, default_scheme, default_host, default_port or 443, target, version, headers)
    try:
        parts_ = urlsplit(target)
    except ValueError as exc:
        raise BadRequest(400, f"malformed request target: {exc}") from exc
    # ws:// is http:// for a WebSocket handshake (as some clients send it to a proxy)
    if parts_.scheme.lower() not in ("http", "ws") or not parts_.netloc or "@" in parts_.netloc:
        raise BadRequest(400, "the proxy takes absolute http:// request targets (use CONNECT for https)")
    hostname, port = split_authority(parts_.netloc, 80)
    check_request_host(hostname, strict=False)
    path = parts_.path or "/"
    if parts_.query:
        path += "?" + parts_.query
    return Request(method, "http", hostname, port, path, version, headers)


def check_request_host(host: str, *, strict: bool) -> None:
    """BadRequest (400) unless `host` is a valid host name or IP literal (`valid_host`)."""
    problem = host_problem(host, allow_underscore=not strict)
    if problem is not None:
        raise BadRequest(400, f"invalid host {host[:80]!r}: {problem}")


def valid_host(host: str, *, allow_underscore: bool = False) -> bool:
    """Whether `host` is an IP literal or a host name: LDH labels of 1-63 characters that neither
    start nor end with '-', at most 253 in all, IDNA-encodable (one trailing dot allowed)."""
    return host_problem(host, allow_underscore=allow_underscore) is None


@functools.lru_cache(maxsize=1024)  # asked per request, of the few hosts a browser visits
def host_problem(host: str, *, allow_underscore: bool = False) -> str | None:
    """Why `host` is not a valid host (`valid_host`), or None when it is.

    `allow_underscore` admits '_' in labels, as DNS and browsers do for plain http:// sites; a
    name a certificate is minted for (CONNECT) is held to the LDH rule of RFC 952/1123.
    """
    # an IP literal has a ':' (IPv6) or only digits and dots (IPv4): a name is not tried as one,
    # which costs a failed parse and two exceptions per request
    literal = host.strip("[]") if host.startswith("[") else host
    if ":" in literal or not literal.strip(_IPV4_CHARACTERS):
        try:
            ipaddress.ip_address(literal)
            return None
        except ValueError:
            pass
    name = host[:-1] if host.endswith(".") else host
    if not name:
        return "empty host name"
    if not name.isascii():
        try:
            name = name.encode("idna").decode("ascii")
        except UnicodeError:
            return "not an IDNA-encodable name"
    if len(name) > 253:
        return "longer than 253 characters"
    label = _LABEL_UNDERSCORE if allow_underscore else _LABEL
    for part in name.split("."):
        if not part:
            return "empty label"
        if len(part) > 63:
            return "a label longer than 63 characters"
        if not label.match(part):
            return "letters, digits and '-' only, and not at the start or end of a label"
    return None


@functools.lru_cache(maxsize=1024)  # a pure function of its arguments; errors are raised anew
def split_authority(authority: str, default_port: int | None) -> tuple[str, int]:
    """ "host[:port]" (IPv6 in brackets) as (host, port), the host lower-case without brackets;
    BadRequest unless it is exactly that (no user info, nothing after an IPv6 literal's bracket,
    a port of 1-65535, or `default_port` when none is given)."""
    match = _AUTHORITY.match(authority)
    if match is None:
        raise BadRequest(400, f"malformed authority {authority[:200]!r}")
    host = match.group("v6") or match.group("name") or ""
    digits = match.group("port")
    port = int(digits) if digits else default_port
    if not host or port is None or not 0 < port < 65536:
        what = "host:port" if default_port is None else "a host and an optional port"
        raise BadRequest(400, f"the authority must be {what}, got {authority[:200]!r}")
    return host.lower(), port


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


def offered_encodings(headers: Sequence[tuple[str, str]], decodable: Sequence[str]) -> str | None:
    """The browser's `Accept-Encoding` cut to the codings readerproxy decodes (with their q-values);
    None when the browser sent none. A coding the reader view could not decode is never offered."""
    values = [value for key, value in headers if key.lower() == "accept-encoding"]
    if not values:
        return None
    kept = []
    for item in ",".join(values).split(","):
        coding = item.split(";", 1)[0].strip().lower()
        if coding in decodable or coding == "identity":
            kept.append(item.strip())
    return ", ".join(kept) if kept else "identity"
