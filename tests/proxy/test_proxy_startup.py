"""The start-up line of proxy mode: the machine's real addresses when listening
on every address, never a placeholder such as "ADDRESS:8091", and no loopback address offered for a
phone. The last test runs `readerproxy serve` as a process and reads what it prints.
"""

from __future__ import annotations

import ipaddress
import subprocess

from support.reader_server import free_port, start_server_process, stop_process

from readerproxy.proxy.addresses import interface_addresses, lan_addresses, proxy_lines, route_address


def test_every_address_listener_names_the_lan_addresses() -> None:
    lines = proxy_lines("0.0.0.0", 8091, 8090, ["192.168.1.20", "10.0.0.5", "fd00::7"])
    text = "\n".join(lines)
    assert lines[0].startswith("proxy mode: set 192.168.1.20:8091 as the browser's or phone's proxy")
    assert "10.0.0.5:8091" in text and "[fd00::7]:8091" in text
    assert "http://192.168.1.20:8090/proxy.pac" in text
    assert "ADDRESS" not in text and "127.0.0.1" not in text


def test_a_loopback_listener_is_for_this_machine_only() -> None:
    (line,) = proxy_lines("127.0.0.1", 8081, 8080)
    assert "set 127.0.0.1:8081 as this machine's browser proxy" in line
    assert "phone's proxy" not in line and "--host 0.0.0.0 and --auth" in line
    (line,) = proxy_lines("0.0.0.0", 8091, 8090, [])  # no network at all: still no placeholder
    assert "127.0.0.1:8091 as this machine's browser proxy" in line and "ADDRESS" not in line


def test_lan_addresses_are_this_machines_and_reachable() -> None:
    found = lan_addresses()
    assert len(found) == len(set(found))
    own = {*interface_addresses(), route_address()}
    for address in found:
        ip = ipaddress.ip_address(address)
        assert not (ip.is_loopback or ip.is_link_local or ip.is_unspecified)
        assert address in own


def test_serve_on_every_address_prints_real_addresses() -> None:
    proxy_port = free_port()
    process, _ = start_server_process(
        "--host",
        "0.0.0.0",
        "--auth",
        "reader:s3cret-passphrase",
        "--proxy-port",
        str(proxy_port),
        "--cache",
        "memory",
        stdout=subprocess.PIPE,
    )
    stop_process(process)
    assert process.stdout is not None
    printed = process.stdout.read().decode()
    process.stdout.close()
    assert "proxy mode: set " in printed and "ADDRESS" not in printed
    for address in lan_addresses():
        assert f"{address}:{proxy_port}" in printed
