"""The addresses a phone or another computer reaches this machine on, for the start-up line.

Listening on every address (`--host 0.0.0.0` or `::`), the start-up line used to print a
placeholder ("ADDRESS:8091") for the person to fill in, and on the default loopback host it told
them to set 127.0.0.1 on a phone, which on the phone is the phone itself. These are the
machine's own addresses instead, read from its interfaces with no packet sent and nothing
installed: every IPv4 address of an interface that is up (Linux: the `SIOCGIFADDR` ioctl per
interface), else the address the system would send from (a UDP socket "connected" to a
documentation address, which sends nothing). Loopback and link-local addresses are left out: no
other device reaches them.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import struct
import sys
from collections.abc import Sequence

#: Linux's ioctl for an interface's IPv4 address (<linux/sockios.h>).
SIOCGIFADDR = 0x8915


def usable(address: str) -> bool:
    """An address another device on the network can reach: not loopback, link-local or unspecified."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return not (ip.is_loopback or ip.is_link_local or ip.is_unspecified or ip.is_multicast)


def interface_addresses() -> list[str]:
    """The IPv4 address of each interface that has one (Linux), in interface order."""
    if not sys.platform.startswith("linux"):
        return []
    import fcntl

    found: list[str] = []
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        for _, name in socket.if_nameindex():
            request = struct.pack("256s", name.encode()[:15])
            try:
                answer = fcntl.ioctl(probe.fileno(), SIOCGIFADDR, request)
            except OSError:  # no IPv4 address on this interface, or it is down
                continue
            found.append(socket.inet_ntoa(answer[20:24]))
    return found


def route_address() -> str | None:
    """The address this machine sends from towards the internet (no packet is sent)."""
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("192.0.2.1", 9))  # TEST-NET-1: a UDP "connect" only picks the route
        return str(probe.getsockname()[0])
    return None


def lan_addresses() -> list[str]:
    """This machine's addresses other devices can reach, each once, the sending address first."""
    candidates = [route_address() or "", *interface_addresses()]
    seen: list[str] = []
    for address in candidates:
        if usable(address) and address not in seen:
            seen.append(address)
    return seen


def proxy_lines(
    host: str, proxy_port: int, reader_port: int, addresses: Sequence[str] | None = None
) -> list[str]:
    """What the start-up line says about proxy mode for a listener on `host`: the real addresses
    to set on a device (`addresses`, this machine's `lan_addresses` by default) when it listens on
    every address, only this machine when it listens on loopback. Never a placeholder."""
    setup = "then open http://readerproxy/ through it to set up: certificate, preferences, site rules"
    if host in ("0.0.0.0", "::", ""):
        reachable = list(lan_addresses() if addresses is None else addresses)
        if not reachable:
            return [
                f"proxy mode: set 127.0.0.1:{proxy_port} as this machine's browser proxy "
                f"(no network address found for other devices), {setup}"
            ]
        shown = [f"[{a}]" if ":" in a else a for a in reachable]
        lines = [f"proxy mode: set {shown[0]}:{proxy_port} as the browser's or phone's proxy, {setup}"]
        lines += [f"  also reachable as {a}:{proxy_port}" for a in shown[1:]]
        lines.append(f"  PAC file: http://{shown[0]}:{reader_port}/proxy.pac")
        return lines
    shown_host = f"[{host}]" if ":" in host else host
    if not usable(host):
        return [
            f"proxy mode: set {shown_host}:{proxy_port} as this machine's browser proxy (PAC file "
            f"http://{shown_host}:{reader_port}/proxy.pac), {setup}; for a phone, listen on the "
            "network with --host 0.0.0.0 and --auth USER:PASS"
        ]
    return [
        f"proxy mode: set {shown_host}:{proxy_port} as the browser's or phone's proxy (PAC file "
        f"http://{shown_host}:{reader_port}/proxy.pac), {setup}"
    ]
