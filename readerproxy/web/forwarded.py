"""Who a request really comes from behind a reverse proxy: `--trusted-proxies`.

Behind nginx, Caddy or HAProxy every connection comes from the reverse proxy; the client's own
address, the scheme and the host it asked for are in `Forwarded` (RFC 7239) or `X-Forwarded-For`,
`-Proto` and `-Host`. Those headers are only as true as whoever wrote them, and any client can send
them, so they are read only when the connection's peer is a trusted proxy, and then right to left:
each element was appended by the hop named by the element after it (the last by the peer itself).
The walk starts at the peer and steps left while the hop it reaches is trusted too; the first hop
that is not is the client. A client's forged elements sit to the left of what the first trusted
proxy wrote, so they are never reached, however they are spelt.

- `TrustedProxies`: the parsed CIDR list (`parse_trusted`: a bad one is a settings error).
- `real_origin(peer, headers, trusted)`: the client's address, and the scheme and host the first
  trusted proxy saw, or the peer alone when it is not trusted (the headers are then ignored).
- `forwarded_middleware`: makes `request.remote`, `request.scheme` and `request.host` the real
  ones for every handler and middleware after it (rate limits, worker shares, logs, links).

Not aiohttp-remotes, which was looked at first: its `XForwardedFiltered` takes X-Forwarded-For from
any peer (a direct client spoofs its address), its `*Strict` classes want a fixed number of hops
and answer 400 to a request with another count (a direct request, a health check), and neither
reads `Forwarded` and `X-Forwarded-*` under one rule. The proxy port's PROXY protocol, which none
of it covers, is `proxy/proxyprotocol.py`, with the same `TrustedProxies`.

A malformed element is never an error: the walk stops before it, at the last hop it could trust.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

#: A header value longer than this is not walked (no proxy writes one; a client padding it is
#: left of it all anyway): the client is then the peer.
MAX_HEADER = 8192
#: Elements walked at most (a chain of reverse proxies is a few hops).
MAX_HOPS = 32
_TOKEN = r"[!#$%&'*+.^_`|~0-9A-Za-z-]+"
_PAIR = re.compile(rf'\s*({_TOKEN})\s*=\s*({_TOKEN}|"(?:[^"\\]|\\.)*")\s*')
_HOST = re.compile(r"^[A-Za-z0-9.\-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$")
SCHEMES = ("http", "https")


@dataclass(frozen=True)
class TrustedProxies:
    """The networks whose connections may say who the client is (`--trusted-proxies`)."""

    networks: tuple[IPNetwork, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.networks)

    def trusts(self, address: str | IPAddress | None) -> bool:
        ip = address if isinstance(address, IPAddress) else parse_address(address)
        return ip is not None and any(ip in network for network in self.networks)


def parse_trusted(value: str | Iterable[str]) -> TrustedProxies:
    """`127.0.0.1,10.0.0.0/8 ::1` (commas or spaces) as `TrustedProxies`; ValueError naming the
    entry that is not an address or a network (`10.0.0.1/8`, host bits set, is refused: a typo for
    10.0.0.0/8 or for 10.0.0.1 is not guessed)."""
    items = value.replace(",", " ").split() if isinstance(value, str) else list(value)
    networks: list[IPNetwork] = []
    for item in items:
        text = str(item).strip()
        if not text:
            continue
        try:
            networks.append(ipaddress.ip_network(text, strict=True))
        except ValueError as exc:
            raise ValueError(f"--trusted-proxies: {text!r} is not an IP address or network ({exc})") from None
    return TrustedProxies(tuple(networks))


def parse_address(value: str | None) -> IPAddress | None:
    """An IP address (an IPv4-mapped IPv6 one as IPv4, a zone index dropped), else None."""
    if not value:
        return None
    try:
        ip = ipaddress.ip_address(value.split("%", 1)[0])
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def normal_address(value: str) -> str:
    """An address as the rate limits and stores key it: `::ffff:192.0.2.1` is 192.0.2.1."""
    ip = parse_address(value)
    return str(ip) if ip is not None else value


@dataclass(frozen=True)
class Origin:
    """Who a request is from: the client's address; the scheme and host it asked for, None when
    the request's own are right (no trusted proxy said otherwise)."""

    remote: str
    scheme: str | None = None
    host: str | None = None
    forwarded: bool = False  # taken from a trusted proxy's headers


def _node(value: str) -> IPAddress | None:
    """The address of a `for=` node (RFC 7239 §6): `192.0.2.1`, `192.0.2.1:80`, `[2001:db8::1]`,
    `[2001:db8::1]:80`; `unknown` and obfuscated names are None."""
    if value.startswith("["):
        inside, sep, _ = value[1:].partition("]")
        return parse_address(inside) if sep else None
    if value.count(":") == 1:
        value = value.partition(":")[0]
    return parse_address(value)


def _forwarded_elements(values: list[str]) -> list[dict[str, str]] | None:
    """The elements of the `Forwarded` header fields, in order; an element that is not
    `pair *(";" pair)` is an empty dict (it stops the walk). Split on every comma, quoted or not:
    no address has one, and a client's unbalanced quote must not swallow what a proxy appended."""
    joined = ",".join(values)
    if len(joined) > MAX_HEADER:
        return None
    elements: list[dict[str, str]] = []
    for raw in joined.split(","):
        element: dict[str, str] = {}
        for part in raw.split(";"):
            match = _PAIR.fullmatch(part)
            if match is None:
                element = {}
                break
            name, value = match[1].lower(), match[2]
            if value.startswith('"'):
                value = re.sub(r"\\(.)", r"\1", value[1:-1])
            if name in element:  # a parameter twice in one element: not valid
                element = {}
                break
            element[name] = value
        elements.append(element)
    return elements


def _list(values: list[str]) -> list[str] | None:
    joined = ",".join(values)
    if len(joined) > MAX_HEADER:
        return None
    return [item.strip() for item in joined.split(",")]


def _scheme(value: str | None) -> str | None:
    value = (value or "").strip().lower()
    return value if value in SCHEMES else None


def _host(value: str | None) -> str | None:
    value = (value or "").strip()
    return value if value and len(value) <= 255 and _HOST.match(value) else None


def real_origin(peer: str, headers: Any, trusted: TrustedProxies) -> Origin:
    """The client, scheme and host of a request whose connection comes from `peer` (module doc).

    `headers` is a multidict (`getall`); `Forwarded` is read when present, else `X-Forwarded-*`."""
    peer_ip = parse_address(peer)
    if peer_ip is None or not trusted.trusts(peer_ip):
        return Origin(normal_address(peer))
    forwarded = headers.getall("Forwarded", [])
    if forwarded:
        elements = _forwarded_elements(forwarded)
        if not elements:
            return Origin(str(peer_ip))
        client, index = str(peer_ip), None
        for position in range(len(elements) - 1, max(-1, len(elements) - 1 - MAX_HOPS), -1):
            address = _node(elements[position].get("for", ""))
            if address is None:
                break  # unknown, obfuscated or malformed: the last trusted hop is what we know
            client, index = str(address), position
            if not trusted.trusts(address):
                break
        if index is None:
            return Origin(str(peer_ip))
        chosen = elements[index]
        return Origin(client, _scheme(chosen.get("proto")), _host(chosen.get("host")), True)
    chain = _list(headers.getall("X-Forwarded-For", []))
    if not chain:
        return Origin(str(peer_ip))
    client, steps = str(peer_ip), 0
    for item in reversed(chain[-MAX_HOPS:]):
        address = _node(item.strip('"'))
        if address is None:
            break
        client, steps = str(address), steps + 1
        if not trusted.trusts(address):
            break
    if steps == 0:
        return Origin(str(peer_ip))
    return Origin(
        client,
        _scheme(_matching(headers.getall("X-Forwarded-Proto", []), len(chain), steps)),
        _host(_matching(headers.getall("X-Forwarded-Host", []), len(chain), steps)),
        True,
    )


def _matching(values: list[str], hops: int, steps: int) -> str | None:
    """The X-Forwarded-Proto or -Host entry of the hop chosen `steps` from the right of an
    X-Forwarded-For of `hops` entries: the one at that place when the lists are as long, the only
    one when there is one (a proxy that sets rather than appends), else none (which is which
    cannot be told)."""
    items = _list(values)
    if not items:
        return None
    if len(items) == hops:
        return items[-steps]
    return items[0] if len(items) == 1 else None


TRUSTED = web.AppKey("trusted_proxies", TrustedProxies)
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@web.middleware
async def forwarded_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """The request as the client made it (`real_origin`), for everything after this middleware.
    Installed only with `--trusted-proxies`: without it nothing is read from these headers."""
    transport = request.transport
    peer = transport.get_extra_info("peername") if transport is not None else None
    if not peer:
        return await handler(request)
    origin = real_origin(str(peer[0]), request.headers, request.app[TRUSTED])
    changes: dict[str, str] = {}
    if origin.remote != request.remote:
        changes["remote"] = origin.remote
    if origin.scheme and origin.scheme != request.scheme:
        changes["scheme"] = origin.scheme
    if origin.host and origin.host != request.host:
        changes["host"] = origin.host
    if changes:
        request = request.clone(**changes)  # type: ignore[arg-type]
    return await handler(request)
