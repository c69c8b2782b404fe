"""The PROXY protocol (HAProxy's, versions 1 and 2) on the proxy port, from trusted peers only.

A TCP pass-through in front of the proxy port (HAProxy's `send-proxy-v2`, nginx's `stream` with
`proxy_protocol on`) connects from its own address; it names the client's in a header sent before
the client's first byte. A connection from a peer in `--trusted-proxies` must begin with one (as
HAProxy's own `tcp-request connection expect-proxy layer4 if { src -f trusted }` has it): were it
optional, a pass-through without the header would let any client write one of its own. A header from
any other peer is never read: the proxy takes it for a bad HTTP request (400).

`read_header(reader)` reads one header and nothing after it; `ProxyHeader.source` is the client's
(address, port) and `destination` the address the client reached (the pass-through's public
address), or both None for a LOCAL (v2: the pass-through's own health check) or UNKNOWN (v1)
connection, which stands for itself. Written from the specification (haproxy.org's
proxy-protocol.txt): the PyPI package `proxy-protocol` brings an asyncio server of its own around
the same hundred lines, where the proxy already owns its server and its stream reader.
"""

from __future__ import annotations

import asyncio
import ipaddress
import struct
from dataclasses import dataclass

#: The first 12 bytes of a version 2 header.
V2_SIGNATURE = b"\r\n\r\n\x00\r\nQUIT\n"
#: A version 1 header's longest line, CRLF included (the specification's bound).
V1_MAX = 107
#: The longest version 2 address block read (IPv6 is 36 bytes; HAProxy adds a few TLVs).
V2_MAX = 1024
#: Seconds a trusted peer has to send the header (HAProxy sends it with the connection).
HEADER_TIMEOUT = 5.0

Address = tuple[str, int]


class ProxyProtocolError(ValueError):
    """Not a PROXY protocol header, or a malformed one: the connection is answered 400 and closed."""


@dataclass(frozen=True)
class ProxyHeader:
    """What a PROXY protocol header said: None for a connection that stands for itself."""

    source: Address | None = None
    destination: Address | None = None
    version: int = 2


def _address(text: str, family: type[ipaddress.IPv4Address | ipaddress.IPv6Address]) -> str:
    try:
        return str(family(text))
    except ValueError:
        raise ProxyProtocolError(f"PROXY header: {text[:48]!r} is not an address of its family") from None


def _port(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or len(text) > 5 or int(text) > 65535:
        raise ProxyProtocolError(f"PROXY header: {text[:8]!r} is not a port")
    return int(text)


def parse_v1(line: bytes) -> ProxyHeader:
    """`PROXY TCP4|TCP6 SRC DST SPORT DPORT\\r\\n`, or `PROXY UNKNOWN …\\r\\n`."""
    if len(line) > V1_MAX or not line.endswith(b"\r\n"):
        raise ProxyProtocolError(f"PROXY header v1 longer than {V1_MAX} bytes or not ended by CRLF")
    try:
        text = line[:-2].decode("ascii")
    except UnicodeDecodeError:
        raise ProxyProtocolError("PROXY header v1 is not ASCII") from None
    parts = text.split(" ")
    if parts[0] != "PROXY" or len(parts) < 2:
        raise ProxyProtocolError("not a PROXY header")
    if parts[1] == "UNKNOWN":
        return ProxyHeader(version=1)
    if parts[1] not in ("TCP4", "TCP6") or len(parts) != 6:
        raise ProxyProtocolError(f"PROXY header v1: {text[:V1_MAX]!r} is not TCP4/TCP6 with four fields")
    family = ipaddress.IPv4Address if parts[1] == "TCP4" else ipaddress.IPv6Address
    source = (_address(parts[2], family), _port(parts[4]))
    destination = (_address(parts[3], family), _port(parts[5]))
    return ProxyHeader(source, destination, 1)


def parse_v2(head: bytes, body: bytes) -> ProxyHeader:
    """The 16-byte head (signature, version and command, family, length) and the address block."""
    version, command = head[12] >> 4, head[12] & 0x0F
    if head[:12] != V2_SIGNATURE or version != 2:
        raise ProxyProtocolError("PROXY header v2: bad signature or version")
    if command == 0:  # LOCAL: the pass-through itself (a health check); the address block is ignored
        return ProxyHeader()
    if command != 1:
        raise ProxyProtocolError(f"PROXY header v2: unknown command {command}")
    family, transport = head[13] >> 4, head[13] & 0x0F
    if family == 0 or transport != 1:  # UNSPEC, or not a stream: stands for itself
        return ProxyHeader()
    if family == 1 and len(body) >= 12:
        src, dst, sport, dport = struct.unpack("!4s4sHH", body[:12])
        return ProxyHeader((str(ipaddress.IPv4Address(src)), sport), (str(ipaddress.IPv4Address(dst)), dport))
    if family == 2 and len(body) >= 36:
        src, dst, sport, dport = struct.unpack("!16s16sHH", body[:36])
        return ProxyHeader((str(ipaddress.IPv6Address(src)), sport), (str(ipaddress.IPv6Address(dst)), dport))
    if family == 3:  # AF_UNIX: no address to key a client by
        return ProxyHeader()
    raise ProxyProtocolError(f"PROXY header v2: family {family} with a {len(body)}-byte address block")


async def read_header(reader: asyncio.StreamReader) -> ProxyHeader:
    """One PROXY protocol header (v1 or v2) from the start of a connection, not a byte more.

    ProxyProtocolError when the connection starts otherwise; asyncio.IncompleteReadError (an
    EOFError) when it ends first. Bounded: 107 bytes for v1, 16 + `V2_MAX` for v2."""
    first = await reader.readexactly(12)  # the shortest v1 header ("PROXY UNKNOWN\r\n") is 15
    if first == V2_SIGNATURE:
        rest = await reader.readexactly(4)
        (length,) = struct.unpack("!H", rest[2:4])
        if length > V2_MAX:
            raise ProxyProtocolError(f"PROXY header v2 of {length} bytes (at most {V2_MAX} read)")
        return parse_v2(first + rest, await reader.readexactly(length))
    if not first.startswith(b"PROXY "):
        raise ProxyProtocolError("a trusted proxy's connection must start with a PROXY protocol header")
    line = first
    while not line.endswith(b"\r\n"):
        if len(line) >= V1_MAX:
            raise ProxyProtocolError(f"PROXY header v1 longer than {V1_MAX} bytes")
        line += await reader.readexactly(1)
    return parse_v1(line)
