"""`readerproxy serve --lan`: a login generated once, kept 0600 and reused; the
start-up lines with the real addresses, the PAC URL, the login and the QR code, never a
placeholder; and never an open proxy, on loopback or on a LAN address. The setup page it shows
in a browser is tested in test_proxy_lan_browser.py.
"""

from __future__ import annotations

import base64
import socket
import stat
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from support.reader_server import free_port, start_server_process, stop_process

from readerproxy.app import Settings, load_settings
from readerproxy.proxy import addresses, lan
from readerproxy.proxy.settings import LAN_PROXY_PORT, lan_login_path


def test_the_login_is_generated_once_kept_0600_and_reused(tmp_path: Path) -> None:
    path = lan_login_path(tmp_path / "data")
    first, created = lan.ensure_login(path)
    assert created and first.startswith("reader:") and len(first.partition(":")[2]) == 16
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    again, created_again = lan.ensure_login(path)
    assert (again, created_again) == (first, False)
    assert path.read_text() == first + "\n"
    assert lan.new_login() != lan.new_login()  # random, not derived from anything


def test_a_login_file_without_a_login_is_an_error_not_replaced(tmp_path: Path) -> None:
    path = tmp_path / "lan-login"
    path.write_text("nothing here\n")
    with pytest.raises(ValueError, match="USER:PASS"):
        lan.ensure_login(path)
    assert path.read_text() == "nothing here\n"


def test_lan_settings_always_have_a_login(tmp_path: Path) -> None:
    env = {"XDG_DATA_HOME": str(tmp_path)}
    settings = load_settings({"lan": True}, env=env)
    assert settings.auth_file == tmp_path / "readerproxy" / "lan-login"
    assert settings.proxy_port == LAN_PROXY_PORT and settings.auth is None
    # every address: refused as an open proxy without --lan, given the login with it
    settings = load_settings({"lan": True, "host": "0.0.0.0", "proxy_port": "9001"}, env=env)
    assert settings.auth_file is not None and settings.proxy_port == 9001
    # a given login is used, none generated
    given = load_settings({"lan": True, "auth": "me:a-long-passphrase"}, env=env)
    assert given.auth == "me:a-long-passphrase" and given.auth_file is None


def test_listen_and_share_hosts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(addresses, "lan_addresses", lambda: ["192.168.1.20", "10.0.0.5"])
    settings = Settings(lan=True, proxy_port=8081)
    assert lan.listen_hosts(settings) == ["127.0.0.1", "192.168.1.20", "10.0.0.5"]
    assert lan.listen_hosts(Settings(lan=True, host="0.0.0.0")) == ["0.0.0.0"]  # already every one
    assert lan.listen_hosts(Settings()) == ["127.0.0.1"]
    assert lan.share_url(settings, 8080) == "http://192.168.1.20:8080/setup"
    assert lan.share_url(Settings(host="0.0.0.0"), 8080) == "http://192.168.1.20:8080/setup"
    assert lan.share_url(Settings(host="10.0.0.5"), 8080) == "http://10.0.0.5:8080/setup"
    assert lan.share_url(Settings(), 8080) is None  # loopback: a phone would open itself
    monkeypatch.setattr(addresses, "lan_addresses", list)
    assert lan.share_url(settings, 8080) is None


def test_qr_code_is_the_same_for_the_same_url() -> None:
    url = "http://192.168.1.20:8080/setup"
    svg = lan.qr_svg(url)
    assert svg.startswith('<svg viewBox="0 0 37 37" class="qr">') and svg == lan.qr_svg(url)
    assert f"<title>QR code of {url}</title>" in svg and "width=" not in svg.partition(">")[0]
    assert svg != lan.qr_svg("http://192.168.1.21:8080/setup")
    rows = lan.qr_terminal(url)
    assert len(rows) == (29 + 8 + 1) // 2 and {len(row) for row in rows} == {37}  # version 3, border 4
    assert set("".join(rows)) <= {"█", "▀", "▄", " "}


def test_startup_lines_name_real_addresses_the_pac_file_and_the_login() -> None:
    settings = Settings(lan=True, proxy_port=8081, auth_file=Path("/data/lan-login"))
    new = lan.login_note(settings, "reader:Secret-Pass_123")
    lines = lan.startup_lines(settings, 8080, new, ["192.168.1.20", "10.0.0.5"])
    text = "\n".join(lines)
    assert lines[0] == "home network (--lan): set 192.168.1.20:8081 as the phone's or browser's proxy"
    assert "  also reachable as 10.0.0.5:8081" in lines
    assert "  PAC file: http://192.168.1.20:8080/proxy.pac" in lines
    assert "user reader, password Secret-Pass_123" in text and "/data/lan-login" in text
    assert "  set-up page (scan it with the phone's camera): http://192.168.1.20:8080/setup" in lines
    assert lines[-len(lan.qr_terminal("http://192.168.1.20:8080/setup")) :] == lan.qr_terminal(
        "http://192.168.1.20:8080/setup"
    )
    assert "ADDRESS" not in text and "127.0.0.1" not in text
    # a later start: where the login is, never the password
    later = "\n".join(lan.startup_lines(settings, 8080, lan.login_note(settings, None), ["192.168.1.20"]))
    assert "Secret-Pass_123" not in later and "password in /data/lan-login" in later
    given = Settings(lan=True, proxy_port=8081, auth="me:pw")
    said = "\n".join(lan.startup_lines(given, 8080, lan.login_note(given, None), ["192.168.1.20"]))
    assert "pw" not in said.replace("password", "") and "given with --auth" in said
    # no network: this machine only, still no placeholder
    alone = lan.startup_lines(settings, 8080, lan.login_note(settings, None), [])
    assert "no network address found" in alone[0] and "127.0.0.1:8081" in alone[0]
    assert "ADDRESS" not in "\n".join(alone)


def _proxy_answer(host: str, port: int, authorization: str | None = None) -> bytes:
    """The head of what the proxy at host:port answers to one plain-HTTP request for the setup page."""
    head = "GET http://readerproxy/ HTTP/1.1\r\nHost: readerproxy\r\nConnection: close\r\n"
    if authorization:
        head += f"Proxy-Authorization: Basic {base64.b64encode(authorization.encode()).decode()}\r\n"
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.sendall((head + "\r\n").encode())
        answer = b""
        while b"\r\n\r\n" not in answer and (data := sock.recv(65536)):
            answer += data
    return answer.partition(b"\r\n\r\n")[0]


def _serve_lan(tmp_path: Path, proxy_port: int) -> str:
    """`readerproxy serve --lan` without a login, as a process: what it printed."""
    process, base = start_server_process(
        "--lan",
        "--proxy-port",
        str(proxy_port),
        "--cache",
        "memory",
        env={"XDG_DATA_HOME": str(tmp_path)},
        stdout=subprocess.PIPE,
    )
    try:
        lan_hosts = addresses.lan_addresses()
        login = (tmp_path / "readerproxy" / "lan-login").read_text().strip()
        for host in ["127.0.0.1", *lan_hosts]:  # never open: on loopback nor on a LAN address
            assert _proxy_answer(host, proxy_port).startswith(b"HTTP/1.1 407 "), host
            assert _proxy_answer(host, proxy_port, "reader:wrong").startswith(b"HTTP/1.1 407 ")
            assert _proxy_answer(host, proxy_port, login).startswith(b"HTTP/1.1 200 "), host
        # the reader server: its setup page (the QR code's) open, the rest behind the login
        with urllib.request.urlopen(base + "/setup", timeout=10) as answer:
            assert answer.status == 200 and b"Not through the proxy yet" in answer.read()
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(base + "/", timeout=10)
        assert refused.value.code == 401
    finally:
        stop_process(process)
    assert process.stdout is not None
    printed = process.stdout.read().decode()
    process.stdout.close()
    return printed


def test_serve_lan_without_a_login_generates_one_and_never_runs_open(tmp_path: Path) -> None:
    proxy_port = free_port()
    first = _serve_lan(tmp_path, proxy_port)
    login = (tmp_path / "readerproxy" / "lan-login").read_text().strip()
    password = login.partition(":")[2]
    assert stat.S_IMODE((tmp_path / "readerproxy" / "lan-login").stat().st_mode) == 0o600
    assert f"password {password}" in first and "ADDRESS" not in first
    for address in addresses.lan_addresses():
        assert f"{address}:{proxy_port}" in first
    if addresses.lan_addresses():
        assert "/proxy.pac" in first and "/setup" in first and "▄" in first  # the QR code
    time.sleep(0.2)  # the port freed before the next start
    second = _serve_lan(tmp_path, proxy_port)
    assert (tmp_path / "readerproxy" / "lan-login").read_text().strip() == login  # reused
    assert password not in second and "password in " in second  # printed once only
