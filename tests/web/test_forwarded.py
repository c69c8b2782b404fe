"""`--trusted-proxies`: the client's address, scheme and host from `Forwarded`, `X-Forwarded-*`
(readerproxy/web/forwarded.py) and the proxy port's PROXY protocol (readerproxy/proxy/proxyprotocol.py),
believed from trusted peers only, right to left. The real HAProxy in front of two instances is
tests/web/test_instances.py."""

from __future__ import annotations

import asyncio
import socket
import struct

import aiohttp
import pytest
from multidict import CIMultiDict
from support.reader_server import serve, test_settings
from test_proxy_setup import setup_proxy

from readerproxy.app import load_settings
from readerproxy.proxy.proxyprotocol import (
    V2_SIGNATURE,
    ProxyHeader,
    ProxyProtocolError,
    parse_v1,
    read_header,
)
from readerproxy.web.forwarded import Origin, parse_trusted, real_origin
from readerproxy.web.settings import SettingsError

LOOPBACK = parse_trusted("127.0.0.1")
CHAIN = parse_trusted("127.0.0.1, 10.0.0.0/8")


def origin(peer: str, trusted: str = "127.0.0.1", **headers: str | list[str]) -> Origin:
    multi: CIMultiDict[str] = CIMultiDict()
    for name, value in headers.items():
        for each in [value] if isinstance(value, str) else value:
            multi.add(name.replace("_", "-"), each)
    return real_origin(peer, multi, parse_trusted(trusted))


def test_headers_from_an_untrusted_peer_are_ignored() -> None:
    """A direct client names any address it likes: it stays its own address."""
    forged = {
        "X_Forwarded_For": "198.51.100.7",
        "Forwarded": "for=198.51.100.8;proto=https;host=evil.example",
    }
    assert origin("203.0.113.5", **forged) == Origin("203.0.113.5")
    assert origin("203.0.113.5", trusted="", **forged) == Origin("203.0.113.5")


def test_x_forwarded_for_is_walked_right_to_left() -> None:
    """What the trusted proxy appended is the client; what the client sent before it is never
    reached; hops in the trusted networks are stepped over."""
    assert origin("127.0.0.1", X_Forwarded_For="198.51.100.7").remote == "198.51.100.7"
    forged = origin("127.0.0.1", X_Forwarded_For="6.6.6.6, 198.51.100.7")
    assert forged.remote == "198.51.100.7"
    chained = origin("127.0.0.1", "127.0.0.1,10.0.0.0/8", X_Forwarded_For="6.6.6.6, 198.51.100.7, 10.1.2.3")
    assert chained.remote == "198.51.100.7"
    # not trusting 10/8, the hop at 10.1.2.3 is the client as far as this server can know
    assert origin("127.0.0.1", X_Forwarded_For="198.51.100.7, 10.1.2.3").remote == "10.1.2.3"
    # every hop trusted: the leftmost
    assert origin("127.0.0.1", "127.0.0.0/8", X_Forwarded_For="127.0.0.9, 127.0.0.8").remote == "127.0.0.9"


def test_proto_and_host_come_with_the_chosen_hop() -> None:
    one = origin(
        "127.0.0.1",
        X_Forwarded_For="198.51.100.7",
        X_Forwarded_Proto="https",
        X_Forwarded_Host="reader.example",
    )
    assert one == Origin("198.51.100.7", "https", "reader.example", True)
    appended = origin(
        "127.0.0.1",
        X_Forwarded_For="6.6.6.6, 198.51.100.7",
        X_Forwarded_Proto="gopher, https",
        X_Forwarded_Host="evil.example, reader.example",
    )
    assert appended == Origin("198.51.100.7", "https", "reader.example", True)
    bad = origin(
        "127.0.0.1", X_Forwarded_For="198.51.100.7", X_Forwarded_Proto="gopher", X_Forwarded_Host="a b"
    )
    assert bad == Origin("198.51.100.7", None, None, True)


def test_forwarded_rfc_7239() -> None:
    assert origin(
        "127.0.0.1", Forwarded='for=6.6.6.6, for="[2001:db8:cafe::17]:4711";proto=https;host=reader.example'
    ) == Origin("2001:db8:cafe::17", "https", "reader.example", True)
    # several header fields are one list; Forwarded wins over X-Forwarded-For
    assert (
        origin(
            "127.0.0.1", Forwarded=["for=6.6.6.6", 'for="198.51.100.7:80"'], X_Forwarded_For="6.6.6.7"
        ).remote
        == "198.51.100.7"
    )
    assert origin("::ffff:127.0.0.1", Forwarded="for=198.51.100.7").remote == "198.51.100.7"


@pytest.mark.parametrize(
    "value",
    [
        "for=",
        "for=198.51.100.7;for=198.51.100.8",
        'for="198.51.100.7',
        "for=unknown",
        "for=_hidden",
        "garbage",
        "for=198.51.100.7;;",
        "x" * 9000,
        "for=198.51.100.7, " + "for=\x00",
    ],
)
def test_a_malformed_forwarded_is_ignored_safely(value: str) -> None:
    """The walk stops before what it cannot read: the client is the last hop it could trust."""
    assert origin("127.0.0.1", Forwarded=value) == Origin("127.0.0.1")


def test_a_client_quote_cannot_swallow_what_the_proxy_appended() -> None:
    assert origin("127.0.0.1", Forwarded='for="6.6.6.6, for=198.51.100.7').remote == "198.51.100.7"


@pytest.mark.parametrize("value", ["10.0.0.1/8", "localhost", "300.1.1.1", "127.0.0.1/33"])
def test_a_bad_cidr_is_a_settings_error(value: str) -> None:
    with pytest.raises(SettingsError, match="trusted-proxies"):
        load_settings({"trusted_proxies": value}, env={})
    assert load_settings({"trusted_proxies": "127.0.0.1, ::1 10.0.0.0/8"}, env={}).trusted_proxies


# ---- the reader server ----------------------------------------------------------------------------


async def statuses(base: str, headers: dict[str, str], count: int) -> list[int]:
    async with aiohttp.ClientSession() as http:
        found = []
        for _ in range(count):
            async with http.get(f"{base}/api/algorithms", headers=headers) as response:
                found.append(response.status)
        return found


async def test_clients_behind_a_trusted_proxy_get_buckets_of_their_own() -> None:
    """Behind a trusted proxy, two clients' rate buckets are apart; a third's forged prefix does
    not buy it a fresh one; and a malformed header is never a 500."""
    async with serve(test_settings(trusted_proxies="127.0.0.1", rate_limit=0.5, rate_burst=2)) as server:
        base = server.base
        assert await statuses(base, {"X-Forwarded-For": "198.51.100.1"}, 3) == [200, 200, 429]
        assert await statuses(base, {"X-Forwarded-For": "198.51.100.2"}, 2) == [200, 200]
        forged = [{"X-Forwarded-For": f"6.6.6.{i}, 198.51.100.1"} for i in range(2)]
        assert [(await statuses(base, headers, 1))[0] for headers in forged] == [429, 429]
        assert await statuses(base, {"Forwarded": 'for="[2001:db8::1'}, 2) == [200, 200]  # 127.0.0.1's
        assert await statuses(base, {"Forwarded": "for=198.51.100.2"}, 1) == [
            429
        ]  # one client, two spellings


async def test_without_trust_a_forged_header_is_no_new_bucket() -> None:
    async with serve(test_settings(rate_limit=0.5, rate_burst=2)) as server:
        found = []
        for index in range(4):
            found += await statuses(server.base, {"X-Forwarded-For": f"198.51.100.{index}"}, 1)
        assert found == [200, 200, 429, 429]


# ---- the proxy port's PROXY protocol ------------------------------------------------------------


def v2_header(source: str, port: int, command: int = 1) -> bytes:
    body = socket.inet_aton(source) + socket.inet_aton("203.0.113.10") + struct.pack("!HH", port, 8081)
    return V2_SIGNATURE + bytes([0x20 | command, 0x11]) + struct.pack("!H", len(body)) + body


def v1_header(source: str, port: int) -> bytes:
    return f"PROXY TCP4 {source} 203.0.113.10 {port} 8081\r\n".encode()


GATEWAY = b"GET http://readerproxy/api/algorithms HTTP/1.1\r\nHost: readerproxy\r\nConnection: close\r\n\r\n"


async def exchange(port: int, data: bytes, *, end: bool = False) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(data)
        await writer.drain()
        if end:
            writer.write_eof()
        return await asyncio.wait_for(reader.read(-1), 10)
    finally:
        writer.close()


def status_of(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/1.1 ") else 0


def test_proxy_protocol_units() -> None:
    assert parse_v1(b"PROXY TCP6 2001:db8::1 2001:db8::2 5 6\r\n") == ProxyHeader(
        ("2001:db8::1", 5), ("2001:db8::2", 6), 1
    )
    assert parse_v1(b"PROXY UNKNOWN\r\n").source is None
    for bad in (b"PROXY TCP4 1.2.3.4 5.6.7.8 99999 1\r\n", b"PROXY TCP4 ::1 5.6.7.8 1 1\r\n", b"PROXY X\r\n"):
        with pytest.raises(ProxyProtocolError):
            parse_v1(bad)

    async def read(data: bytes) -> ProxyHeader:
        reader = asyncio.StreamReader()
        reader.feed_data(data + b"GET / HTTP/1.1\r\n")
        header = await read_header(reader)
        assert await reader.read(3) == b"GET"  # not a byte more than the header
        return header

    assert asyncio.run(read(v2_header("198.51.100.9", 4242))).source == ("198.51.100.9", 4242)
    assert asyncio.run(read(v2_header("198.51.100.9", 4242, command=0))).source is None  # LOCAL
    assert asyncio.run(read(v1_header("198.51.100.9", 4242))).destination == ("203.0.113.10", 8081)


async def test_the_proxy_port_sees_each_client_named_by_a_trusted_pass_through() -> None:
    """Behind a pass-through at 127.0.0.1 (trusted), two clients named by PROXY headers (v1 and v2)
    have rate buckets of their own on the gateway's reader routes (signed: `limits.client_key`)."""
    async with setup_proxy(trusted_proxies="127.0.0.1", rate_limit=0.5, rate_burst=2) as running:
        port = running.proxy.port
        one = [
            status_of(await exchange(port, v2_header("198.51.100.1", 1000 + i) + GATEWAY)) for i in range(3)
        ]
        other = [
            status_of(await exchange(port, v1_header("198.51.100.2", 2000 + i) + GATEWAY)) for i in range(2)
        ]
        assert one == [200, 200, 429] and other == [200, 200]
        # HAProxy's health check: a LOCAL header alone, then the connection closes
        assert await exchange(port, v2_header("0.0.0.0", 0, command=0), end=True) == b""
        # a trusted peer's connection without a header is refused, never taken as the client's bytes
        refused = await exchange(port, GATEWAY)
        assert status_of(refused) == 400 and b"PROXY protocol header" in refused
        assert status_of(await exchange(port, b"PROXY TCP4 1.2.3.4 5.6.7.8 1 99999\r\n" + GATEWAY)) == 400


async def test_a_proxy_header_from_an_untrusted_peer_is_a_bad_request() -> None:
    """Not trusted: a client's own PROXY header is not read (400), and cannot rename it."""
    async with setup_proxy(trusted_proxies="127.0.0.2", rate_limit=0.5, rate_burst=2) as running:
        port = running.proxy.port
        forged = [
            status_of(await exchange(port, v1_header(f"198.51.100.{i}", 1) + GATEWAY)) for i in range(2)
        ]
        assert forged == [400, 400]
        plain = [status_of(await exchange(port, GATEWAY)) for _ in range(3)]
        assert plain == [200, 200, 429]
