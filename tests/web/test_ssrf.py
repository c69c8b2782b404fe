"""The SSRF address matrix: every spelling of a non-public address, through `/read`, `/api/extract`
and the browser proxy, refused with 403 `refused` before anything is contacted.

One table (`FORMS`) lists the hosts: loopback, private, link-local (the cloud metadata address),
shared, multicast and reserved IPv4 in decimal, octal, hex and short forms; IPv6 loopback,
IPv4-mapped and -compatible, NAT64 (RFC 6052) and 6to4 (RFC 3056) embeddings; full-width digits
and ideographic full stops (folded by IDNA, UTS #46); trailing dots; userinfo and fragment tricks
that put a public-looking name before the real host. Then: redirects to refused addresses, a name
answering both a loopback and a "public" address, and the socket-level check with the literal check
and the resolver filter both switched off. Rows go to artifacts/security/ssrf.json for the table in
docs/security.md.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from support.reader_server import serve, test_settings
from support.resolver import StaticResolver
from support.upstream import Upstream
from test_proxy import raw, running_proxy

from readerproxy.app import Settings
from readerproxy.web import fetch as fetch_module

ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts" / "security"

#: (label, URL host[:port] part as typed); every one names a non-public address.
FORMS: list[tuple[str, str]] = [
    ("loopback", "127.0.0.1"),
    ("loopback, other", "127.255.255.254"),
    ("loopback, short", "127.1"),
    ("loopback, short 3", "127.0.1"),
    ("loopback, decimal", "2130706433"),
    ("loopback, hex", "0x7f000001"),
    ("loopback, hex dotted", "0x7f.0x0.0x0.0x1"),
    ("loopback, octal", "0177.0.0.1"),
    ("loopback, octal short", "0177.1"),
    ("loopback, octal whole", "017700000001"),
    ("loopback, leading zeros", "127.000.000.001"),
    ("loopback, mixed", "0x7f.0.1"),
    ("loopback, trailing dot", "127.0.0.1."),
    ("loopback, port", "127.0.0.1:80"),
    ("loopback, full-width digits", "\uff11\uff12\uff17.\uff10.\uff10.\uff11"),
    ("loopback, ideographic stops", "127\u30020\u30020\u30021"),
    ("loopback, full-width stops", "127\uff0e0\uff0e0\uff0e1"),
    ("localhost", "localhost"),
    ("localhost, upper case", "LOCALHOST"),
    ("localhost, trailing dot", "localhost."),
    ("unspecified", "0.0.0.0"),
    ("unspecified, short", "0"),
    ("private 10/8", "10.0.0.1"),
    ("private 10/8, octal", "012.0.0.1"),
    ("private 10/8, decimal", "167772161"),
    ("private 172.16/12", "172.16.0.1"),
    ("private 172.16/12, top", "172.31.255.255"),
    ("private 192.168/16", "192.168.0.1"),
    ("private 192.168/16, octal", "0300.0250.0.1"),
    ("private 192.168/16, hex", "0xc0a80001"),
    ("metadata", "169.254.169.254"),
    ("metadata, decimal", "2852039166"),
    ("metadata, hex", "0xa9fea9fe"),
    ("metadata, hex dotted", "0xa9.0xfe.0xa9.0xfe"),
    ("metadata, octal", "0251.0376.0251.0376"),
    ("shared 100.64/10", "100.64.0.1"),
    ("benchmarking 198.18/15", "198.18.0.1"),
    ("IETF 192.0.0/24", "192.0.0.1"),
    ("TEST-NET-1", "192.0.2.1"),
    ("multicast", "224.0.0.1"),
    ("reserved 240/4", "240.0.0.1"),
    ("broadcast", "255.255.255.255"),
    ("IPv6 loopback", "[::1]"),
    ("IPv6 loopback, long", "[0:0:0:0:0:0:0:1]"),
    ("IPv6 loopback, zeros", "[0000:0000:0000:0000:0000:0000:0000:0001]"),
    ("IPv6 unspecified", "[::]"),
    ("IPv4-mapped loopback", "[::ffff:127.0.0.1]"),
    ("IPv4-mapped loopback, hex", "[::ffff:7f00:1]"),
    ("IPv4-mapped metadata", "[::ffff:169.254.169.254]"),
    ("IPv4-mapped private", "[::ffff:a00:1]"),
    ("IPv4-compatible loopback", "[::127.0.0.1]"),
    ("NAT64 loopback", "[64:ff9b::7f00:1]"),
    ("NAT64 metadata", "[64:ff9b::169.254.169.254]"),
    ("NAT64 local-use", "[64:ff9b:1::a00:1]"),
    ("6to4 loopback", "[2002:7f00:1::1]"),
    ("6to4 metadata", "[2002:a9fe:a9fe::1]"),
    ("unique local", "[fc00::1]"),
    ("unique local fd", "[fd12:3456::1]"),
    ("link-local", "[fe80::1]"),
    ("multicast v6", "[ff02::1]"),
    ("userinfo before loopback", "example.com@127.0.0.1"),
    ("userinfo with port", "example.com:80@127.0.0.1"),
    ("userinfo before metadata", "user:pass@169.254.169.254"),
    ("userinfo, encoded @", "example.com%40@127.0.0.1"),
]

#: Refused hosts for the redirect rows (127.0.0.1 itself stands for a public site there).
REDIRECT_TARGETS = [
    "http://127.0.0.2/",
    "http://0177.0.0.2/",
    "http://2130706434/",
    "http://[::1]/",
    "http://[::ffff:127.0.0.2]/",
    "http://169.254.169.254/latest/meta-data/",
    "http://0xa9fea9fe/",
    "http://10.0.0.1/",
    "http://[64:ff9b::a9fe:a9fe]/",
    "http://[2002:a9fe:a9fe::1]/",
    "http://localhost./",
    "http://example.com@10.0.0.1/",
]

ROWS: list[dict[str, Any]] = []

#: Every test adds its rows to ROWS and rewrites ssrf.json: under pytest-xdist the module's tests run
#: in one worker (`--dist loadgroup`), so the file holds all the rows, not one worker's share.
pytestmark = pytest.mark.xdist_group("artifacts-ssrf")


def record(**row: Any) -> None:
    ROWS.append(row)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "ssrf.json").write_text(json.dumps(ROWS, indent=1, ensure_ascii=False))


async def _answer(http: aiohttp.ClientSession, url: str) -> tuple[int, str | None]:
    async with http.get(url) as response:
        status = response.status
        kind = (
            (await response.json()).get("error", {}).get("kind")
            if response.content_type == "application/json"
            else None
        )
    return status, kind


def _guarded() -> Settings:
    """Test settings with the SSRF guard on (the test server otherwise allows loopback)."""
    return test_settings(rate_limit=0, fetch=dataclasses.replace(test_settings().fetch, allow_private=False))


@pytest.mark.parametrize(("label", "host"), FORMS, ids=[label for label, _ in FORMS])
async def test_every_spelling_is_refused_by_read_api_and_proxy(label: str, host: str) -> None:
    target = f"http://{host}/latest/meta-data/"
    async with serve(_guarded()) as server, aiohttp.ClientSession() as http:
        read = await _answer(http, server.url("/api/extract", url=target))
        async with http.get(server.read_url(target)) as response:
            page = response.status, await response.text()
    async with running_proxy(fetch=_guarded().fetch) as proxy:
        answer = await raw(
            proxy, f"GET {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode()
        )
    proxied = answer.split(b"\r\n", 1)[0].decode("latin-1")
    record(case=label, host=host, api=f"{read[0]} {read[1]}", read=page[0], proxy=proxied[9:])
    if "@" in host:  # credentials in a URL are refused as such, whatever the host
        assert read == (400, "bad_url") and page[0] == 400 and "credentials" in page[1], (label, read)
    else:
        assert read == (403, "refused"), (label, read)
        assert page[0] == 403 and "not allowed" in page[1], (label, page[0])
    # the proxy: 403 "That address is not allowed"; 400 for a request line with credentials, and
    # (since the proxy reads HTTP/1.1 with h11) for a request line that is not ASCII: a browser
    # sends a full-width host as punycode, so such a line is malformed before it is an address.
    if "@" in host or not host.isascii():
        assert proxied.startswith("HTTP/1.1 400"), (label, proxied)
    else:
        assert proxied.startswith("HTTP/1.1 403"), (label, proxied)


@pytest.fixture
def loopback_is_public(monkeypatch: pytest.MonkeyPatch) -> None:
    """Exactly 127.0.0.1 counts as public (it stands for a public site: the test upstream), so the
    guarded server reaches the upstream and we can watch it refuse what comes next."""
    real: Callable[[str], bool] = fetch_module.is_public_address
    monkeypatch.setattr(fetch_module, "is_public_address", lambda a: a == "127.0.0.1" or real(a))


@pytest.mark.usefixtures("loopback_is_public")
@pytest.mark.parametrize("target", REDIRECT_TARGETS)
async def test_redirects_to_refused_addresses_are_refused(target: str, upstream: Upstream) -> None:
    async with serve(_guarded()) as server, aiohttp.ClientSession() as http:
        read = await _answer(http, server.url("/api/extract", url=upstream.url(f"/redirect-to?url={target}")))
    record(case="redirect", host=target, api=f"{read[0]} {read[1]}")
    expected = (400, "bad_url") if "@" in target else (403, "refused")
    assert read == expected, (target, read)


@pytest.mark.usefixtures("loopback_is_public")
async def test_a_name_answering_loopback_and_public_connects_only_to_the_public_one(
    upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 127.0.0.2 (loopback, refused) first, then 127.0.0.1 (public in this test): the upstream listens
    # on 127.0.0.1 only, so a 200 means the refused address was dropped, not tried and failed over
    monkeypatch.setattr(fetch_module, "DefaultResolver", lambda: StaticResolver(["127.0.0.2", "127.0.0.1"]))
    async with serve(_guarded()) as server, aiohttp.ClientSession() as http:
        async with http.get(
            server.url("/api/extract", url=f"http://rebind.test:{upstream.port}/article")
        ) as r:
            assert r.status == 200
        monkeypatch.setattr(
            fetch_module, "DefaultResolver", lambda: StaticResolver(["127.0.0.2", "10.0.0.1"])
        )
    async with serve(_guarded()) as server, aiohttp.ClientSession() as http:
        read = await _answer(
            http, server.url("/api/extract", url=f"http://rebind.test:{upstream.port}/article")
        )
    record(case="name answering only refused addresses", host="rebind.test", api=f"{read[0]} {read[1]}")
    assert read == (403, "refused")


class UnfilteredResolver(fetch_module.GuardedResolver):
    """The resolver with its address filter switched off (as if it had a bug)."""

    def __init__(self, allow_private: bool = False) -> None:
        super().__init__(allow_private=True)


async def test_the_socket_check_holds_with_the_literal_check_and_resolver_filter_off(
    upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fetch_module, "check_host", lambda url, settings: None)
    monkeypatch.setattr(fetch_module, "GuardedResolver", UnfilteredResolver)
    before = upstream.count("/article")
    async with serve(_guarded()) as server, aiohttp.ClientSession() as http:
        for url in (upstream.url("/article"), f"http://localhost:{upstream.port}/article"):
            read = await _answer(http, server.url("/api/extract", url=url))
            record(case="socket check only", host=url, api=f"{read[0]} {read[1]}")
            assert read == (403, "refused"), url
    assert upstream.count("/article") == before
