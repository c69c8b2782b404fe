"""Safe upstream fetching: one pooled aiohttp session, SSRF guard, redirects re-checked, size and bomb caps.

The steps of `Fetcher.fetch`, each a named function below:

1. `validate_url` — only absolute http(s) URLs with a host; normalised (lower-case scheme/host, no fragment).
2. `check_host` — a literal IP address in the URL is checked before any connection is made; host names
   are checked by `GuardedResolver` on the addresses DNS returns, and the connection uses exactly those
   addresses, so there is no DNS-rebinding gap. `guarded_socket`, the connector's socket factory, checks
   the exact address about to be connected as the last line (it also covers literal addresses).
   Before any of it, a fetch waits for a slot (`limits.FetchSlots`: a global cap and a per-host cap);
   that wait is timed on its own (503 "busy" when it does not move) and never counts against the
   site's timeouts, which start once the slot is held.
3. Redirects are followed by hand (at most `max_redirects`), every hop going through steps 1-2 again.
4. `check_content_type` — only HTML is read; anything else is a 415 carrying the final URL.
5. `read_body` — the wire size is capped while streaming (`max_bytes`), and `BodyDecoder` decodes
   gzip/deflate/br incrementally with a cap on the decoded size and on the expansion ratio.
"""

from __future__ import annotations

import asyncio
import errno
import functools
import ipaddress
import json
import re
import socket
import struct
import time
import zlib
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import IO, Any, cast
from urllib.parse import urljoin, urlsplit, urlunsplit

import aiohttp
import brotli
from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import DefaultResolver

from ..errors import ReaderproxyError
from .limits import FetchSlots

try:  # zstd content-encoding (browsers offer it): the optional `zstandard` binding, no stdlib zstd on 3.11
    import zstandard
except ImportError:  # pragma: no cover - a base install without it offers upstream only what it decodes
    zstandard = None  # type: ignore[assignment]

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
#: Below this decoded size the expansion ratio is not checked (small, repetitive pages compress very well).
RATIO_CHECK_FLOOR = 1024 * 1024
CHUNK_BYTES = 64 * 1024
#: Largest piece of output one decoder step may produce, so the caps are checked at a fine grain.
DECODE_STEP = 256 * 1024
#: The content-codings BodyDecoder decodes: the only ones offered upstream (`Accept-Encoding`).
DECODABLE_ENCODINGS: tuple[str, ...] = ("gzip", "deflate", "br") + (("zstd",) if zstandard else ())
#: Largest zstd window accepted (RFC 9659 §3: 8 MB for HTTP; a larger one is refused, not allocated).
ZSTD_MAX_WINDOW = 8 * 1024 * 1024
#: Headers never kept in a FetchedPage (they must not be shared through the cache).
DROPPED_HEADERS = frozenset({"set-cookie", "set-cookie2"})


@dataclass(frozen=True)
class FetchSettings:
    """Limits of upstream fetching; the defaults are documented in the README (Server)."""

    connect_timeout: float = 5.0
    read_timeout: float = 10.0
    total_timeout: float = 20.0
    max_redirects: int = 10
    max_bytes: int = 10 * 1024 * 1024  # on the wire, enforced while streaming
    max_decoded_bytes: int = 20 * 1024 * 1024  # after gzip/deflate/br
    max_ratio: float = 100.0  # decoded / wire, checked once RATIO_CHECK_FLOOR is decoded
    allow_private: bool = False
    max_fetches: int = 64  # upstream fetches at once, all sites together
    max_per_host: int = 8  # upstream fetches at once to one host (politeness)
    queue_timeout: float = 10.0  # seconds a fetch may wait for a slot before a 503 "busy"
    user_agent: str = "readerproxy/0.1 (+reader mode)"


@dataclass(frozen=True)
class FetchedPage:
    """One upstream response: body decoded from its content-encoding, charset left to decoding.decode_html."""

    url: str
    final_url: str
    status: int
    headers: Mapping[str, str]  # lower-case keys, as received (content-encoding/-length describe the wire)
    content_type: str
    body: bytes
    etag: str | None
    last_modified: str | None
    fetched_at: float  # wall-clock seconds (time.time())
    elapsed_ms: float
    not_modified: bool = False

    def to_bytes(self) -> bytes:
        """Serialise for the cache: 4-byte length, JSON metadata, then the raw body."""
        meta = asdict(self)
        del meta["body"]
        meta["headers"] = dict(self.headers)
        head = json.dumps(meta, separators=(",", ":")).encode()
        return struct.pack("!I", len(head)) + head + self.body

    @classmethod
    def from_bytes(cls, data: bytes) -> FetchedPage:
        """Inverse of to_bytes; raises ValueError on a malformed entry."""
        if len(data) < 4:
            raise ValueError("truncated FetchedPage entry")
        (size,) = struct.unpack("!I", data[:4])
        try:
            meta: dict[str, Any] = json.loads(data[4 : 4 + size])
            return cls(body=bytes(data[4 + size :]), **meta)
        except (TypeError, json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ValueError(f"malformed FetchedPage entry: {exc}") from exc


class FetchError(ReaderproxyError):
    """A fetch that cannot give a page; `status` is the HTTP status our server should answer with."""

    def __init__(
        self,
        kind: str,
        status: int,
        message: str,
        url: str | None = None,
        *,
        final_url: str | None = None,
        content_type: str | None = None,
        upstream_status: int | None = None,
    ) -> None:
        # kind: "bad_url" | "refused" | "too_large" | "not_html" | "upstream" | "empty" | "timeout"
        # status: 400 | 403 | 413 | 415 | 502 | 504
        super().__init__(message, status=status, kind=kind)
        self.url = url
        self.final_url = final_url or url
        self.content_type = content_type
        self.upstream_status = upstream_status

    def __repr__(self) -> str:
        return f"FetchError({self.kind!r}, {self.status}, {self.message!r}, url={self.url!r})"


def bad_url(message: str, url: str | None) -> FetchError:
    return FetchError("bad_url", 400, message, url)


def refused(address: str, url: str | None) -> FetchError:
    return FetchError("refused", 403, f"refusing to fetch a non-public address ({address})", url)


# ---- step 1: the URL ---------------------------------------------------------------------------------


#: An authority as `validate_url` takes it (credentials are refused before): a name or IPv4 address
#: (no brackets, no colon), or an IPv6 address in brackets, then an optional :PORT and nothing else.
_AUTHORITY = re.compile(r"(?:\[[0-9A-Fa-f:.]+\]|[^\[\]:]*)(?::[0-9]*)?")


def validate_url(url: str) -> str:
    """Normalised absolute http(s) URL (lower-case scheme and host, IDNA host, no fragment) or bad_url 400."""
    if not isinstance(url, str) or not url.strip():
        raise bad_url("no URL given", None)
    url = url.strip()
    if any(c in url for c in "\r\n\t\x00 "):
        raise bad_url("the URL contains whitespace or control characters", url)
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise bad_url(f"malformed URL: {exc}", url) from exc
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise bad_url("only http and https URLs can be read", url)
    if parts.username is not None or parts.password is not None:
        raise bad_url("URLs with credentials are not fetched", url)
    if not _AUTHORITY.fullmatch(parts.netloc):
        # urlsplit reads "[::1]x" as ::1 and "[v1.x]" as v1.x: what a browser refuses is not fetched
        raise bad_url(
            "malformed URL: the host must be a name, or an IPv6 address in brackets, then :PORT", url
        )
    host = parts.hostname
    if not host:
        raise bad_url("the URL has no host", url)
    try:
        host = host.encode("idna").decode("ascii") if not host.isascii() else host.lower()
    except UnicodeError as exc:
        raise bad_url(f"invalid host name: {exc}", url) from exc
    if ":" in host:
        host = f"[{host}]"
    else:
        check_host_name(host, url)
    default_port = 80 if scheme == "http" else 443
    netloc = host if port in (None, default_port) else f"{host}:{port}"
    return urlunsplit((scheme, netloc, parts.path or "/", parts.query, ""))


#: DNS limits (RFC 1035 2.3.4): a label of 1 to 63 octets, a name of at most 253 (without the final dot).
MAX_LABEL = 63
MAX_NAME = 253


#: What a label of a host name may hold: letters, digits, hyphens, and the underscore that DNS and
#: browsers accept in practice (an IDNA name is ASCII by now).
_HOST_LABEL = re.compile(r"[A-Za-z0-9_-]+")


def check_host_name(host: str, url: str | None) -> None:
    """A host name (already ASCII) the resolver can take: bad_url 400 for an empty label ("a..b") or
    one over 63 characters, or a name over 253, which `getaddrinfo` would refuse with a UnicodeError."""
    name = host[:-1] if host.endswith(".") else host
    if len(name) > MAX_NAME:
        raise bad_url(f"invalid host name: longer than {MAX_NAME} characters", url)
    for label in name.split("."):
        if not label:
            raise bad_url("invalid host name: an empty label (two dots in a row)", url)
        if len(label) > MAX_LABEL:
            raise bad_url(f"invalid host name: a label longer than {MAX_LABEL} characters", url)
        if not _HOST_LABEL.fullmatch(label):
            # "%zz", spaces, quotes…: no resolver answers these; a 400 before any lookup
            raise bad_url(f"invalid host name: {label!r} holds characters a host name cannot", url)


@functools.lru_cache(maxsize=4096)
def canonical_url(url: str) -> str:
    """`validate_url`, memoised: the cache-key form of a URL (the server's hot path asks it per request)."""
    return validate_url(url)


# ---- step 2: the address -----------------------------------------------------------------------------

_CGNAT = ipaddress.ip_network("100.64.0.0/10")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def is_public_address(address: str) -> bool:
    """False for loopback, private, link-local, CGNAT, multicast, unspecified, reserved, ULA, IPv4-mapped."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and embeds_ipv4(ip):
        return False  # an IPv4 address in IPv6 clothing: refuse rather than unwrap
    if isinstance(ip, ipaddress.IPv4Address) and ip in _CGNAT:
        return False
    return not (
        ip.is_loopback
        or ip.is_private
        or ip.is_link_local
        or ip.is_multicast
        or ip.is_unspecified
        or ip.is_reserved
        or not ip.is_global
    )


def embeds_ipv4(ip: ipaddress.IPv6Address) -> bool:
    """IPv4-mapped (::ffff:a.b.c.d), 6to4, Teredo or NAT64 addresses, which carry an IPv4 address inside."""
    return ip.ipv4_mapped is not None or ip.sixtofour is not None or ip.teredo is not None or ip in _NAT64


def literal_address(host: str) -> str | None:
    """The IP address if `host` is a literal one (brackets stripped), else None.

    Legacy IPv4 spellings that the C resolver accepts ("127.1", "2130706433", "0x7f.0.0.1") count as
    literal addresses too, so they are checked rather than slipping through as names.
    """
    host = host.strip("[]")
    try:
        return str(ipaddress.ip_address(host.split("%", 1)[0]))
    except ValueError:
        pass
    try:
        return socket.inet_ntoa(socket.inet_aton(host))
    except OSError:
        return None


def check_host(url: str, settings: FetchSettings) -> None:
    """Refuse (403) a literal non-public IP host before connecting; names are checked by GuardedResolver."""
    if settings.allow_private:
        return
    host = urlsplit(url).hostname or ""
    try:  # full-width digits and ideographic full stops fold to ASCII (IDNA, as a browser would)
        host = host.encode("idna").decode("ascii") if not host.isascii() else host
    except UnicodeError as exc:
        raise bad_url(f"invalid host name: {exc}", url) from exc
    host = host.rstrip(".").lower()  # "127.0.0.1." and "localhost." are the same hosts
    if host == "localhost" or host.endswith(".localhost"):  # loopback by definition (RFC 6761, 6.3)
        raise refused(f"{host}: loopback, 127.0.0.1 or ::1", url)
    address = literal_address(host)
    if address is not None and not is_public_address(address):
        raise refused(address, url)


REFUSED_MARK = "non-public address"


class AddressRefused(OSError):
    """Raised by GuardedResolver / guarded_socket for hosts or addresses that are not public."""

    def __init__(self, host: str, addresses: list[str]) -> None:
        super().__init__(errno.EACCES, f"{host}: {REFUSED_MARK} ({', '.join(addresses)})")
        self.host = host
        self.addresses = addresses


class GuardedResolver(AbstractResolver):
    """DNS resolver that drops non-public addresses, so the connector can only connect to public ones."""

    def __init__(self, allow_private: bool = False) -> None:
        self.allow_private = allow_private
        self._resolver = DefaultResolver()

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        results = await self._resolver.resolve(host, port, family)
        if self.allow_private:
            return results
        public = [r for r in results if is_public_address(r["host"])]
        if not public:
            raise AddressRefused(host, [r["host"] for r in results])
        return public

    async def close(self) -> None:
        await self._resolver.close()


def guarded_socket(addr_info: tuple[Any, ...]) -> socket.socket:
    """Socket factory for the connector: the last check, on the exact address about to be connected."""
    family, type_, proto, _, sockaddr = addr_info
    if not is_public_address(str(sockaddr[0])):
        raise AddressRefused(str(sockaddr[0]), [str(sockaddr[0])])
    return socket.socket(family=family, type=type_, proto=proto)


def is_refusal(error: OSError | None) -> bool:
    """True for AddressRefused, also when the connector merged several of them into one OSError."""
    return isinstance(error, AddressRefused) or (error is not None and REFUSED_MARK in str(error))


# ---- steps 4 and 5: the response ---------------------------------------------------------------------


def media_type(content_type: str) -> str:
    """'text/html; charset=utf-8' -> 'text/html'."""
    return content_type.split(";", 1)[0].strip().lower()


def check_content_type(content_type: str, url: str, final_url: str) -> None:
    """Only HTML is read: anything else is a 415 that carries the final URL for a link to the original."""
    kind = media_type(content_type)
    if kind and kind not in HTML_TYPES:
        raise FetchError(
            "not_html",
            415,
            f"the page is not HTML ({kind}); open the original instead",
            url,
            final_url=final_url,
            content_type=kind,
        )


def too_large(message: str, url: str) -> FetchError:
    return FetchError("too_large", 413, message, url)


class BodyDecoder:
    """Incremental gzip/deflate/br decoding with caps on the decoded size and the expansion ratio."""

    def __init__(self, encoding: str, settings: FetchSettings, url: str) -> None:
        self.encoding = encoding.strip().lower()
        self.settings = settings
        self.url = url
        self.wire = 0
        self.consumed = 0  # compressed bytes actually used by the decoder so far
        self.decoded = 0
        self.parts: list[bytes] = []
        self._zlib: Any = None
        self._brotli: Any = None
        self._zstd: Any = None
        self._raw_deflate_tried = False
        if self.encoding in ("gzip", "x-gzip"):
            self._zlib = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif self.encoding == "deflate":
            self._zlib = zlib.decompressobj(zlib.MAX_WBITS)  # zlib-wrapped; raw deflate tried on failure
        elif self.encoding == "br":
            self._brotli = brotli.Decompressor()
        elif self.encoding == "zstd" and zstandard is not None:
            # a writer that hands its output over in DECODE_STEP pieces, each through _emit's caps
            # (an exception there stops the decoder: a bomb is never decoded whole)
            self._zstd = zstandard.ZstdDecompressor(max_window_size=ZSTD_MAX_WINDOW).stream_writer(
                cast("IO[bytes]", _ZstdSink(self)), write_size=DECODE_STEP, closefd=False
            )
        elif self.encoding not in ("", "identity"):
            raise FetchError("upstream", 502, f"unsupported content-encoding {self.encoding!r}", url)

    def feed(self, chunk: bytes) -> None:
        """Decode one wire chunk in steps of at most DECODE_STEP bytes, checking the caps after each step."""
        self.wire += len(chunk)
        if self._zlib is not None:
            self._feed_zlib(chunk)
        elif self._brotli is not None:
            self._feed_brotli(chunk)
        elif self._zstd is not None:
            self.consumed = self.wire  # the writer takes all it is given
            try:
                self._zstd.write(chunk)
            except zstandard.ZstdError as exc:
                raise FetchError("upstream", 502, f"corrupt zstd body: {exc}", self.url) from exc
        else:
            self.consumed = self.wire
            self._emit(chunk)

    def _feed_zlib(self, chunk: bytes) -> None:
        data = chunk
        while data and not self._zlib.eof:
            try:
                out = self._zlib.decompress(data, DECODE_STEP)
            except zlib.error as exc:
                if self.encoding == "deflate" and not self._raw_deflate_tried and self.decoded == 0:
                    self._raw_deflate_tried = True  # some servers send raw deflate without the zlib wrapper
                    self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)
                    continue
                raise FetchError("upstream", 502, f"corrupt {self.encoding} body: {exc}", self.url) from exc
            self.consumed += len(data) - len(self._zlib.unconsumed_tail)
            data = self._zlib.unconsumed_tail
            self._emit(out)

    def _feed_brotli(self, chunk: bytes) -> None:
        self.consumed = self.wire  # brotli buffers input internally: count what was fed
        try:
            self._emit(self._brotli.process(chunk, output_buffer_limit=DECODE_STEP))
            while not self._brotli.can_accept_more_data():
                self._emit(self._brotli.process(b"", output_buffer_limit=DECODE_STEP))
        except brotli.error as exc:
            raise FetchError("upstream", 502, f"corrupt br body: {exc}", self.url) from exc

    def _emit(self, out: bytes) -> None:
        """Keep decoded output, refusing (413) past max_decoded_bytes or past max_ratio x the input used."""
        if not out:
            return
        self.decoded += len(out)
        if self.decoded > self.settings.max_decoded_bytes:
            raise too_large(
                f"the page decodes to more than {self.settings.max_decoded_bytes} bytes", self.url
            )
        if self.decoded > RATIO_CHECK_FLOOR and self.decoded > self.settings.max_ratio * max(
            self.consumed, 1
        ):
            raise too_large(
                f"the page expands more than {self.settings.max_ratio:g}x when decoded (a compression bomb?)",
                self.url,
            )
        self.parts.append(out)

    def finish(self) -> bytes:
        """The whole decoded body; a compressed stream that did not end is a 502."""
        if self._zlib is not None and self.wire:
            self._emit(self._zlib.flush())
            if not self._zlib.eof:
                raise FetchError("upstream", 502, f"truncated {self.encoding} body", self.url)
        return b"".join(self.parts)


class _ZstdSink:
    """Where the zstd writer puts its output: straight into BodyDecoder._emit (and its caps)."""

    def __init__(self, decoder: BodyDecoder) -> None:
        self.decoder = decoder

    def write(self, data: bytes) -> int:
        self.decoder._emit(bytes(data))
        return len(data)


async def read_body(
    response: aiohttp.ClientResponse, url: str, settings: FetchSettings, *, page: bool = True
) -> bytes:
    """Stream the body: wire size capped at max_bytes, decoded by BodyDecoder with its own caps;
    a `page` (HTML, not a subresource) that is gzip again once decoded is unwrapped here too, under
    the same caps (`unwrap_gzip`), so no later step ever decompresses a fetched page."""
    declared = response.content_length
    if declared is not None and declared > settings.max_bytes:
        raise too_large(f"the page is larger than {settings.max_bytes} bytes", url)
    decoder = BodyDecoder(response.headers.get("Content-Encoding", ""), settings, url)
    async for chunk in response.content.iter_chunked(CHUNK_BYTES):
        if decoder.wire + len(chunk) > settings.max_bytes:
            raise too_large(f"the page is larger than {settings.max_bytes} bytes", url)
        decoder.feed(chunk)
    body = decoder.finish()
    if page and body[:2] == GZIP_MAGIC:
        body = await asyncio.to_thread(unwrap_gzip, body, settings, url)
    return body


#: The first bytes of a gzip stream.
GZIP_MAGIC = b"\x1f\x8b"
#: gzip layers inside the Content-Encoding that are undone (a page gzipped twice is a misconfigured
#: server or a bomb: its inner layer expanded without any cap before this).
MAX_GZIP_LAYERS = 2


def unwrap_gzip(body: bytes, settings: FetchSettings, url: str) -> bytes:
    """`body` with its gzip layers undone, each through a `BodyDecoder` (the decoded-size and
    expansion caps hold for every layer: 413); more than MAX_GZIP_LAYERS is a 502. Blocking: the
    server calls it in a thread."""
    for _ in range(MAX_GZIP_LAYERS):
        if body[:2] != GZIP_MAGIC:
            return body
        decoder = BodyDecoder("gzip", settings, url)
        for start in range(0, len(body), CHUNK_BYTES):
            decoder.feed(body[start : start + CHUNK_BYTES])
        body = decoder.finish()
    if body[:2] == GZIP_MAGIC:
        raise FetchError("upstream", 502, "the page is compressed more times than it can be read", url)
    return body


def header_map(response: aiohttp.ClientResponse) -> dict[str, str]:
    """Response headers with lower-case keys (repeated ones joined by ', '); cookies dropped."""
    headers: dict[str, str] = {}
    for name, value in response.headers.items():
        key = name.lower()
        if key in DROPPED_HEADERS:
            continue
        headers[key] = f"{headers[key]}, {value}" if key in headers else value
    return headers


# ---- the fetcher -------------------------------------------------------------------------------------


class Fetcher:
    """Fetches pages through one shared, pooled aiohttp.ClientSession (created in start, closed in close)."""

    def __init__(self, settings: FetchSettings | None = None) -> None:
        self.settings = settings or FetchSettings()
        self._session: aiohttp.ClientSession | None = None
        self.slots = FetchSlots(
            self.settings.max_fetches, self.settings.max_per_host, self.settings.queue_timeout
        )

    async def start(self) -> None:
        if self._session is not None:
            return
        connector = aiohttp.TCPConnector(
            resolver=GuardedResolver(self.settings.allow_private),
            socket_factory=None if self.settings.allow_private else guarded_socket,
            limit=0,
            limit_per_host=0,
            ttl_dns_cache=60,  # `slots` caps fetches, outside the site's timeouts
        )
        self._session = aiohttp.ClientSession(
            connector=connector,
            # sock_connect times the site's TCP/TLS connect only (`connect` would include a pool wait)
            timeout=aiohttp.ClientTimeout(
                total=None, sock_connect=self.settings.connect_timeout, sock_read=self.settings.read_timeout
            ),
            auto_decompress=False,  # BodyDecoder decodes with caps
            trust_env=False,  # no proxy from the environment: the SSRF guard must see the real target
            cookie_jar=aiohttp.DummyCookieJar(),  # one session serves every reader: never share cookies
            headers={"User-Agent": self.settings.user_agent},
        )

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def __aenter__(self) -> Fetcher:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def fetch(
        self, url: str, *, etag: str | None = None, last_modified: str | None = None, html_only: bool = True
    ) -> FetchedPage:
        """Fetch an HTML page (validators make it conditional: a 304 gives not_modified=True, empty body).

        `html_only=False` reads any type, for the browser service's subresources (same guard and caps).
        """
        if self._session is None:
            raise RuntimeError("Fetcher.start() was not called")
        original = validate_url(url)
        async with self.slots.slot(urlsplit(original).hostname or "", original):
            return await self._timed_fetch(original, etag, last_modified, html_only)

    async def _timed_fetch(
        self, original: str, etag: str | None, last_modified: str | None, html_only: bool = True
    ) -> FetchedPage:
        """The fetch proper, timed from when a slot is held: these timeouts are the site's."""
        s = self.settings
        started = time.perf_counter()
        try:
            async with asyncio.timeout(s.total_timeout):
                return await self._follow(original, etag, last_modified, started, html_only)
        except aiohttp.ConnectionTimeoutError as exc:
            raise FetchError(
                "timeout",
                504,
                f"the site did not accept a connection within {s.connect_timeout:g} s",
                original,
            ) from exc
        except aiohttp.SocketTimeoutError as exc:
            raise FetchError(
                "timeout", 504, f"the site stopped sending for {s.read_timeout:g} s", original
            ) from exc
        except TimeoutError as exc:
            raise FetchError(
                "timeout", 504, f"the site took longer than {s.total_timeout:g} s to answer in full", original
            ) from exc
        except aiohttp.ClientConnectorError as exc:
            if isinstance(exc.os_error, AddressRefused):
                raise refused(", ".join(exc.os_error.addresses), original) from exc
            if is_refusal(exc.os_error):
                raise refused(str(exc.os_error), original) from exc
            raise FetchError("upstream", 502, f"could not connect to {exc.host}", original) from exc
        except UnicodeError as exc:  # a host name the resolver's IDNA codec refuses
            raise bad_url(f"invalid host name: {exc}", original) from exc
        except aiohttp.TooManyRedirects as exc:
            raise FetchError("upstream", 502, "too many redirects", original) from exc
        except (aiohttp.ClientError, OSError) as exc:
            raise FetchError(
                "upstream", 502, f"the site could not be read ({type(exc).__name__})", original
            ) from exc

    async def _follow(
        self,
        original: str,
        etag: str | None,
        last_modified: str | None,
        started: float,
        html_only: bool = True,
    ) -> FetchedPage:
        """Step 3: follow redirects by hand, re-validating every hop."""
        assert self._session is not None
        headers = {
            "Accept": "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5",
            "Accept-Encoding": ", ".join(DECODABLE_ENCODINGS),
        }
        if etag:
            headers["If-None-Match"] = etag
        if last_modified:
            headers["If-Modified-Since"] = last_modified
        current = original
        for _hop in range(self.settings.max_redirects + 1):
            check_host(current, self.settings)
            async with self._session.get(current, headers=headers, allow_redirects=False) as response:
                location = response.headers.get("Location")
                if response.status in REDIRECT_STATUSES and location:
                    current = validate_url(urljoin(current, location))
                    continue
                return await self._page(
                    response, original, current, started, bool(etag or last_modified), html_only
                )
        raise FetchError("upstream", 502, f"more than {self.settings.max_redirects} redirects", original)

    async def _page(
        self,
        response: aiohttp.ClientResponse,
        original: str,
        final: str,
        started: float,
        conditional: bool,
        html_only: bool = True,
    ) -> FetchedPage:
        headers = header_map(response)
        content_type = headers.get("content-type", "")
        if response.status == 304 and conditional:
            return self._make(original, final, response.status, headers, content_type, b"", started, True)
        if response.status == 204:
            raise FetchError(
                "empty",
                502,
                "the page has no content (the site answered 204 No Content)",
                original,
                final_url=final,
                upstream_status=204,
            )
        if not 200 <= response.status < 300:  # errors, unasked 304s, redirects without a Location
            raise FetchError(
                "upstream",
                502,
                f"the site answered HTTP {response.status}",
                original,
                final_url=final,
                upstream_status=response.status,
            )
        if html_only:
            check_content_type(content_type, original, final)
        body = await read_body(response, original, self.settings, page=html_only)
        if not body.strip():
            raise FetchError(
                "empty",
                502,
                "the page has no content (the site sent an empty body)",
                original,
                final_url=final,
                upstream_status=response.status,
            )
        return self._make(original, final, response.status, headers, content_type, body, started, False)

    @staticmethod
    def _make(
        original: str,
        final: str,
        status: int,
        headers: dict[str, str],
        content_type: str,
        body: bytes,
        started: float,
        not_modified: bool,
    ) -> FetchedPage:
        return FetchedPage(
            url=original,
            final_url=final,
            status=status,
            headers=headers,
            content_type=content_type,
            body=body,
            etag=headers.get("etag"),
            last_modified=headers.get("last-modified"),
            fetched_at=time.time(),
            elapsed_ms=(time.perf_counter() - started) * 1000.0,
            not_modified=not_modified,
        )
