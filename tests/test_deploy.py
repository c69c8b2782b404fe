"""The deployment files under deploy/, checked by the real tools and run on loopback.

Each configuration is checked by the program that reads it (Debian's packages, which `./dev test`
installs): `systemd-analyze verify` for the unit and its Chromium drop-in, `haproxy -c` and
`nginx -t` for theirs, `caddy validate` and `caddy fmt` for the Caddyfile. Then HAProxy and nginx
run with their file as shipped, only its addresses, certificate and log paths moved to this
machine's loopback and a temporary directory: in front of a header-echoing backend (which headers
the reader routes get, forged ones dropped, the PROXY protocol header of the proxy port) and in
front of a real `readerproxy serve --trusted-proxies 127.0.0.1` (TLS to the reader routes, a CONNECT
through the TCP pass-through). Two instances behind HAProxy with Redis: tests/web/test_instances.py.
A test whose tool is missing skips, naming the package.
"""

from __future__ import annotations

import base64
import datetime
import http.client
import http.server
import json
import os
import re
import shutil
import socket
import ssl
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from support.fronts import Running, running, tool
from support.reader_server import free_port, start_server_process, stop_process

REPO = Path(__file__).resolve().parent.parent
DEPLOY = REPO / "deploy"
NAME = "reader.example"
PUBLIC_ADDRESS = "203.0.113.10"  # the placeholder for the machine's public address
LOGIN = "reader:a-long-test-password"


def replaced(text: str, changes: dict[str, str]) -> str:
    """`text` with each key replaced by its value; every key must be there (a config that no longer
    has it needs this test changed, not silently less tested)."""
    for old, new in changes.items():
        assert old in text, f"{old!r} is no longer in the file: update tests/test_deploy.py"
        text = text.replace(old, new)
    return text


@dataclass(frozen=True)
class Certificate:
    cert: Path
    key: Path
    both: Path  # HAProxy's one file: the certificate, then the key


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> Certificate:
    """A self-signed certificate for reader.example, made here."""
    directory = tmp_path_factory.mktemp("tls")
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, NAME)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(NAME)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_pem = cert.public_bytes(serialization.Encoding.PEM)
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    paths = Certificate(directory / "cert.pem", directory / "key.pem", directory / "both.pem")
    paths.cert.write_bytes(cert_pem)
    paths.key.write_bytes(key_pem)
    paths.both.write_bytes(cert_pem + key_pem)
    return paths


# --- systemd ---------------------------------------------------------------------------------------


def verify_unit(tmp_path: Path, dropin: bool) -> subprocess.CompletedProcess[str]:
    """`systemd-analyze verify` on the unit (and its drop-in beside it), with ExecStart pointing at
    this checkout's readerproxy (verify checks that the program exists)."""
    analyze = tool("systemd-analyze", "systemd")
    readerproxy = Path(sys.executable).with_name("readerproxy")
    assert readerproxy.exists(), readerproxy
    unit = tmp_path / "readerproxy.service"
    unit.write_text(
        replaced(
            (DEPLOY / "readerproxy.service").read_text(),
            {"ExecStart=/opt/readerproxy/bin/readerproxy": f"ExecStart={readerproxy}"},
        )
    )
    if dropin:
        (tmp_path / "readerproxy.service.d").mkdir()
        shutil.copy(DEPLOY / "readerproxy.service.d" / "chromium.conf", tmp_path / "readerproxy.service.d")
    return subprocess.run(
        [analyze, "verify", "--man=no", str(unit)], capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize("dropin", [False, True], ids=["unit", "unit+chromium"])
def test_systemd_unit_verifies(tmp_path: Path, dropin: bool) -> None:
    """No error and no warning: verify exits 0 even on an unknown key or a bad value, which it only
    prints, so any line it prints fails this test."""
    result = verify_unit(tmp_path, dropin)
    assert result.returncode == 0, result.stderr
    assert (result.stdout + result.stderr).strip() == ""


def test_systemd_verify_catches_a_bad_line(tmp_path: Path) -> None:
    """The check above can fail: a drop-in with an unknown key is reported."""
    (tmp_path / "readerproxy.service.d").mkdir()
    (tmp_path / "readerproxy.service.d" / "bad.conf").write_text("[Service]\nProtectSystem=strictest\n")
    result = verify_unit(tmp_path, dropin=False)
    assert "strictest" in result.stderr


def test_systemd_unit_sandbox() -> None:
    """What the unit promises: a dynamic user, the data directory in its state directory, and the
    sandbox settings the README names."""
    unit = (DEPLOY / "readerproxy.service").read_text()
    lines = set(unit.splitlines())
    for setting in (
        "DynamicUser=yes",
        "StateDirectory=readerproxy",
        "Environment=XDG_DATA_HOME=%S HOME=%S/readerproxy",  # data_dir() = /var/lib/readerproxy
        "ProtectSystem=strict",
        "ProtectHome=yes",
        "PrivateTmp=yes",
        "NoNewPrivileges=yes",
        "CapabilityBoundingSet=",
        "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6",
        "LoadCredential=auth:/etc/readerproxy/auth",
        "Environment=READERPROXY_AUTH_FILE=%d/auth",
    ):
        assert setting in lines, setting
    assert re.search(r"^MemoryMax=\d+G$", unit, re.M)


# --- HAProxy ---------------------------------------------------------------------------------------


def haproxy_text(certificate: Certificate) -> str:
    return replaced(
        (DEPLOY / "haproxy.cfg").read_text(),
        {
            f"/etc/haproxy/certs/{NAME}.pem": str(certificate.both),
            "log /dev/log local0": "log stderr local0",
        },
    )


def test_haproxy_config_valid(tmp_path: Path, certificate: Certificate) -> None:
    """`haproxy -c` in zero-warning mode (-dW): a warning fails too."""
    haproxy = tool("haproxy", "haproxy")
    config = tmp_path / "haproxy.cfg"
    config.write_text(haproxy_text(certificate))
    result = subprocess.run(
        [haproxy, "-dW", "-c", "-f", str(config)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stdout + result.stderr


# --- nginx -----------------------------------------------------------------------------------------


def nginx_text(tmp_path: Path, certificate: Certificate) -> str:
    logs = tmp_path / "logs"
    logs.mkdir(exist_ok=True)
    return replaced(
        (DEPLOY / "nginx.conf").read_text(),
        {
            f"/etc/letsencrypt/live/{NAME}/fullchain.pem": str(certificate.cert),
            f"/etc/letsencrypt/live/{NAME}/privkey.pem": str(certificate.key),
            "/var/log/nginx/": f"{logs}/",
            "/run/nginx.pid": str(tmp_path / "nginx.pid"),
        },
    )


def nginx_prefix(tmp_path: Path) -> Path:
    """A temporary prefix whose modules/ is Debian's (nginx.conf loads the stream module from
    /etc/nginx/modules-enabled, by a path relative to the prefix)."""
    prefix = tmp_path / "prefix"
    prefix.mkdir(exist_ok=True)
    modules = Path("/usr/lib/nginx/modules")
    if not (modules / "ngx_stream_module.so").exists():
        pytest.skip("nginx's stream module is not installed (Debian package libnginx-mod-stream)")
    if not (prefix / "modules").exists():
        (prefix / "modules").symlink_to(modules)
    return prefix


def test_nginx_config_valid(tmp_path: Path, certificate: Certificate) -> None:
    """`nginx -t` with a temporary prefix. nginx -t binds its listeners, so they move to free
    loopback ports (the public address is not this machine's)."""
    nginx = tool("nginx", "nginx")
    prefix = nginx_prefix(tmp_path)
    text, _ = on_loopback(nginx_text(tmp_path, certificate), NGINX_LISTEN, {})
    config = tmp_path / "nginx.conf"
    config.write_text(text)
    result = subprocess.run(
        [nginx, "-t", "-p", str(prefix), "-c", str(config)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert "[warn]" not in result.stderr.replace(USER_WARNING, "")


#: nginx's warning when the `user` line cannot apply (a test run that is not root).
USER_WARNING = 'the "user" directive makes sense only if the master process runs with super-user privileges'


# --- Caddy -----------------------------------------------------------------------------------------


def caddy_env(tmp_path: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }


def test_caddyfile_valid(tmp_path: Path) -> None:
    """`caddy validate` loads the Caddyfile (it obtains no certificate), and `caddy fmt` would not
    change it (Caddy warns on an unformatted file)."""
    caddy = tool("caddy", "caddy")
    caddyfile = DEPLOY / "Caddyfile"
    result = subprocess.run(
        [caddy, "validate", "--adapter", "caddyfile", "--config", str(caddyfile)],
        capture_output=True,
        text=True,
        timeout=60,
        env=caddy_env(tmp_path),
    )
    assert result.returncode == 0, result.stderr
    assert "Valid configuration" in result.stdout + result.stderr
    formatted = subprocess.run(
        [caddy, "fmt", str(caddyfile)], capture_output=True, text=True, timeout=60, env=caddy_env(tmp_path)
    )
    assert formatted.returncode == 0, formatted.stderr
    assert formatted.stdout == caddyfile.read_text()


# --- Containerfiles and compose --------------------------------------------------------------------


def instructions(path: Path) -> list[tuple[str, str]]:
    """A Containerfile's instructions (keyword, arguments), continuation lines joined."""
    joined = re.sub(r"\\\n", " ", path.read_text())
    found = []
    for line in joined.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            keyword, _, rest = line.partition(" ")
            found.append((keyword.upper(), rest.strip()))
    return found


def test_containerfile_installs_as_the_readme_and_runs_unprivileged() -> None:
    """The image installs with the README's command, runs as a user of its own (the last USER,
    of both files, not root) and keeps its data directory in the volume."""
    readme = (REPO / "README.md").read_text()
    steps = instructions(DEPLOY / "Containerfile")
    install = "python3 -m venv /opt/readerproxy && /opt/readerproxy/bin/pip install"
    assert install in readme.split("## Deploying", 1)[1]
    assert any(keyword == "RUN" and install in rest for keyword, rest in steps)
    for name in ("Containerfile", "Containerfile.chromium"):
        users = [rest for keyword, rest in instructions(DEPLOY / name) if keyword == "USER"]
        assert users and users[-1].split(":")[0] not in ("root", "0"), name
    env = " ".join(rest for keyword, rest in steps if keyword == "ENV")
    assert "XDG_DATA_HOME=/var/lib" in env  # data_dir() = /var/lib/readerproxy, the VOLUME
    assert ("VOLUME", "/var/lib/readerproxy") in steps


def healthcheck_command(path: Path) -> list[str]:
    (arguments,) = [rest for keyword, rest in instructions(path) if keyword == "HEALTHCHECK"]
    command = json.loads(arguments.split("CMD", 1)[1])
    assert command[0] == "/opt/readerproxy/bin/python"
    return [sys.executable, *command[1:]]


def test_containerfile_healthcheck_asks_healthz() -> None:
    """The HEALTHCHECK's own command, run against a real `readerproxy serve` on the port
    READERPROXY_PORT names: it passes while the server answers /healthz, fails once it is gone."""
    command = healthcheck_command(DEPLOY / "Containerfile")
    port = free_port()
    env = {**os.environ, "READERPROXY_PORT": str(port)}
    process, _ = start_server_process("--cache", "memory", port=port)
    try:
        assert subprocess.run(command, env=env, capture_output=True, timeout=30).returncode == 0
    finally:
        stop_process(process)
    assert subprocess.run(command, env=env, capture_output=True, timeout=30).returncode != 0


def test_chromium_variant_flags(tmp_path: Path) -> None:
    """The /etc/chromium.d snippet of Containerfile.chromium, sourced by sh as Debian's
    /usr/bin/chromium does: --no-sandbox added unless READERPROXY_CHROMIUM_SANDBOX=1."""
    (run,) = [
        rest for keyword, rest in instructions(DEPLOY / "Containerfile.chromium") if "chromium.d" in rest
    ]
    snippet = tmp_path / "snippet"
    script = run.replace("/etc/chromium.d/readerproxy-sandbox", str(snippet))
    subprocess.run(["sh", "-c", script], check=True, timeout=30)
    show = f'CHROMIUM_FLAGS=""; . {snippet}; printf %s "$CHROMIUM_FLAGS"'
    base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    off = subprocess.run(["sh", "-c", show], capture_output=True, text=True, env=base, timeout=30)
    assert off.stdout.split() == ["--no-sandbox"]
    on = subprocess.run(
        ["sh", "-c", show],
        capture_output=True,
        text=True,
        env={**base, "READERPROXY_CHROMIUM_SANDBOX": "1"},
        timeout=30,
    )
    assert on.stdout.split() == []


def test_deploy_command_lines_are_real_options() -> None:
    """The options the unit, the compose file and the containers pass to `readerproxy serve` are
    options it has, with values it takes (the parser and settings readerproxy itself uses)."""
    from readerproxy.app import SERVE_OPTIONS, load_settings
    from readerproxy.cli import build_parser

    compose = (DEPLOY / "compose.yaml").read_text()
    (command,) = re.findall(r'^\s*command: (\["serve".*\])$', compose, re.M)
    args = build_parser().parse_args(json.loads(command))
    cli = {option.name: getattr(args, option.name) for option in SERVE_OPTIONS}
    settings = load_settings(cli, env={"READERPROXY_HOST": "127.0.0.1"})
    assert settings.cache == "redis://redis:6379/0"
    names = set(re.findall(r"\b(READERPROXY_[A-Z_]+)\b", compose))
    for path in (DEPLOY / "Containerfile", DEPLOY / "readerproxy.service"):
        names |= set(re.findall(r"\b(READERPROXY_[A-Z_]+)=", path.read_text()))
    known = {option.env for option in SERVE_OPTIONS}
    assert names - {"READERPROXY_CHROMIUM_SANDBOX"} <= known, names - known


# --- running the reverse proxies -------------------------------------------------------------------

#: `listen ADDRESS[ options];` (nginx) and `bind ADDRESS[ options]` (HAProxy).
NGINX_LISTEN = re.compile(r"^(\s*listen\s+)(\S+?)((?:\s[^;]*)?;)$", re.M)
HAPROXY_BIND = re.compile(r"^(\s*bind\s+)(\S+)(.*)$", re.M)


def on_loopback(text: str, pattern: re.Pattern[str], ports: dict[int, int]) -> tuple[str, dict[int, int]]:
    """Every listening address moved to 127.0.0.1 on a free port, one per port of the file (its
    IPv6 twins dropped); returns the text and {port in the file: port here}."""

    def move(match: re.Match[str]) -> str:
        address = match.group(2)
        if address.startswith("[") or address.startswith(":::"):
            return ""  # the same port on IPv6: one loopback listener is enough here
        port = int(address.rsplit(":", 1)[-1])
        if port not in ports:
            ports[port] = free_port()
        return f"{match.group(1)}127.0.0.1:{ports[port]}{match.group(3)}"

    return pattern.sub(move, text), ports


def start_haproxy(tmp_path: Path, certificate: Certificate, reader: int, proxy: int) -> Iterator[Running]:
    haproxy = tool("haproxy", "haproxy")
    text = replaced(
        haproxy_text(certificate),
        {"127.0.0.1:8080": f"127.0.0.1:{reader}", "127.0.0.1:8081": f"127.0.0.1:{proxy}"},
    )
    text, ports = on_loopback(text, HAPROXY_BIND, {})
    config = tmp_path / "haproxy.cfg"
    config.write_text(text)
    return running([haproxy, "-db", "-f", str(config)], ports)


def start_nginx(tmp_path: Path, certificate: Certificate, reader: int, proxy: int) -> Iterator[Running]:
    nginx = tool("nginx", "nginx")
    prefix = nginx_prefix(tmp_path)
    text = replaced(
        nginx_text(tmp_path, certificate),
        {"server 127.0.0.1:8080;": f"server 127.0.0.1:{reader};", "127.0.0.1:8081;": f"127.0.0.1:{proxy};"},
    )
    text, ports = on_loopback(text, NGINX_LISTEN, {})
    config = tmp_path / "nginx.conf"
    config.write_text(text)
    return running([nginx, "-p", str(prefix), "-c", str(config), "-g", "daemon off;"], ports)


FRONTS: dict[str, Callable[..., Iterator[Running]]] = {
    "haproxy": start_haproxy,
    "nginx": start_nginx,
}


class EchoHandler(http.server.BaseHTTPRequestHandler):
    """Answers any request with its headers as JSON (a list of [name, value])."""

    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        body = json.dumps(list(self.headers.items())).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def echo_server() -> Iterator[int]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), EchoHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


@dataclass
class TcpRecorder:
    """A TCP server that keeps what each connection sent until its first empty line, then
    answers as a proxy answers CONNECT."""

    port: int = 0
    received: list[bytes] = field(default_factory=list)


#: The signature a PROXY protocol version 2 header starts with; it holds an empty line itself.
PROXY_V2 = b"\r\n\r\n\x00\r\nQUIT\n"


def _request_ended(data: bytes) -> bool:
    """Whether `data` holds a whole request head after any PROXY header: HAProxy may send its
    version 2 header in a segment of its own, and that header begins with CRLF CRLF."""
    if data.startswith(PROXY_V2[: len(data)]) and len(data) < 16:
        return False
    if data.startswith(PROXY_V2):
        end = 16 + int.from_bytes(data[14:16], "big")
        return len(data) > end and b"\r\n\r\n" in data[end:]
    return b"\r\n\r\n" in data


@contextmanager
def tcp_recorder() -> Iterator[TcpRecorder]:
    recorder = TcpRecorder()
    listener = socket.create_server(("127.0.0.1", 0))
    recorder.port = listener.getsockname()[1]
    stop = threading.Event()

    def handle(connection: socket.socket) -> None:
        with connection:
            connection.settimeout(5)
            data = b""
            try:
                while not _request_ended(data):
                    chunk = connection.recv(4096)
                    if not chunk:
                        return  # a health check: connected, sent nothing
                    data += chunk
                recorder.received.append(data)
                connection.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            except OSError:
                return

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            threading.Thread(target=handle, args=(connection,), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield recorder
    finally:
        stop.set()
        thread.join()
        listener.close()


def tls_request(
    port: int, certificate: Certificate, path: str, headers: dict[str, str] | None = None
) -> tuple[int, http.client.HTTPMessage, bytes]:
    """GET over TLS to 127.0.0.1:port as https://reader.example (SNI and Host), the certificate
    checked against the test's own."""
    context = ssl.create_default_context(cafile=str(certificate.cert))
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    try:
        connection.sock = context.wrap_socket(
            socket.create_connection(("127.0.0.1", port), timeout=20), server_hostname=NAME
        )
        connection.request("GET", path, headers={"Host": NAME, **(headers or {})})
        response = connection.getresponse()
        return response.status, response.msg, response.read()
    finally:
        connection.close()


def http_request(port: int, path: str) -> tuple[int, http.client.HTTPMessage]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    try:
        connection.request("GET", path, headers={"Host": NAME})
        response = connection.getresponse()
        response.read()
        return response.status, response.msg
    finally:
        connection.close()


def through_pass_through(port: int, request: bytes) -> bytes:
    """Send `request` to the proxy port's pass-through; what comes back until the headers end."""
    with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
        sock.sendall(request)
        answer = b""
        while b"\r\n\r\n" not in answer:
            chunk = sock.recv(4096)
            if not chunk:
                break
            answer += chunk
        return answer


@pytest.mark.parametrize("front", sorted(FRONTS))
def test_reader_routes_get_forwarded_headers(tmp_path: Path, certificate: Certificate, front: str) -> None:
    """Through TLS, the backend gets the client's own address, the scheme and the public host in
    X-Forwarded-For/-Proto/-Host (and nginx also Forwarded), a request id, and nothing a client
    forged in those headers; plain HTTP is redirected to https://reader.example/."""
    forged = {
        "X-Forwarded-For": "198.51.100.66",
        "X-Forwarded-Proto": "gopher",
        "X-Forwarded-Host": "evil.example",
        "Forwarded": "for=198.51.100.66",
    }
    with echo_server() as backend, FRONTS[front](tmp_path, certificate, backend, free_port()) as proxy:
        status, _, body = tls_request(proxy.ports[443], certificate, "/read?url=x", forged)
        assert status == 200
        seen: dict[str, list[str]] = {}
        for name, value in json.loads(body):
            seen.setdefault(name.lower(), []).append(value)
        assert seen["x-forwarded-for"] == ["127.0.0.1"]
        assert seen["x-forwarded-proto"] == ["https"]
        assert seen["x-forwarded-host"] == [NAME]
        assert seen["host"] == [NAME]
        assert len(seen["x-request-id"]) == 1 and seen["x-request-id"][0]
        if front == "nginx":
            assert seen["forwarded"] == [f"for=127.0.0.1;proto=https;host={NAME}"]
        else:  # HAProxy 2.6 has no `option forwarded` (2.7): a forged one is dropped all the same
            assert "forwarded" not in seen
        assert "198.51.100.66" not in body.decode()
        status, headers = http_request(proxy.ports[80], "/read?url=x")
        assert status == 301
        assert headers["Location"] == f"https://{NAME}/read?url=x"


@pytest.mark.parametrize("front", sorted(FRONTS))
def test_proxy_port_is_a_tcp_pass_through(tmp_path: Path, certificate: Certificate, front: str) -> None:
    """The proxy port's bytes reach readerproxy's proxy listener as the client sent them (a
    CONNECT and its answer), behind a PROXY protocol header naming the client (nginx sends version
    1, HAProxy version 2), which readerproxy reads from its --trusted-proxies."""
    connect = b"CONNECT site.example:443 HTTP/1.1\r\nHost: site.example:443\r\n\r\n"
    with (
        tcp_recorder() as backend,
        FRONTS[front](tmp_path, certificate, free_port(), backend.port) as proxy,
    ):
        answer = through_pass_through(proxy.ports[8081], connect)
        assert answer.startswith(b"HTTP/1.1 200 ")
    # (HAProxy's health checks connect too: with send-proxy-v2 they send a LOCAL header alone)
    (received,) = [data for data in backend.received if data.endswith(connect)]
    if front == "nginx":
        assert re.match(rb"PROXY TCP4 127\.0\.0\.1 127\.0\.0\.1 \d+ \d+\r\n", received)
        assert received.endswith(connect)
    else:
        assert received.startswith(b"\r\n\r\n\x00\r\nQUIT\n\x21\x11")  # v2, PROXY, TCP over IPv4
        assert received[16:20] == socket.inet_aton("127.0.0.1")
        assert received.endswith(connect)


@pytest.mark.parametrize("front", sorted(FRONTS))
def test_readerproxy_behind_the_front(tmp_path: Path, certificate: Certificate, front: str) -> None:
    """A real `readerproxy serve --proxy-port --auth --trusted-proxies 127.0.0.1` behind the file
    (the proxy port's PROXY protocol header read): /healthz over TLS, the login
    asked on the reader routes, the PAC file naming the public name and readerproxy's proxy port,
    and a CONNECT through the pass-through, with the login, opening a tunnel (here to the reader
    server itself, on loopback)."""
    reader, proxy_port = free_port(), free_port()
    process, _ = start_server_process(
        "--cache",
        "memory",
        "--allow-private",
        "--proxy-port",
        str(proxy_port),
        "--auth",
        LOGIN,
        "--trusted-proxies",
        "127.0.0.1",
        port=reader,
    )
    try:
        with FRONTS[front](tmp_path, certificate, reader, proxy_port) as proxy:
            status, _, body = tls_request(proxy.ports[443], certificate, "/healthz")
            assert status == 200 and json.loads(body)["status"] == "ok"
            status, headers, _ = tls_request(proxy.ports[443], certificate, "/read?url=https://a.example/")
            assert status == 401 and "Basic" in headers["WWW-Authenticate"]
            status, _, body = tls_request(proxy.ports[443], certificate, "/proxy.pac")
            assert status == 200
            assert f"PROXY {NAME}:{proxy_port}; DIRECT".encode() in body
            login = base64.b64encode(LOGIN.encode()).decode()
            target = f"127.0.0.1:{reader}"
            answer = through_pass_through(
                proxy.ports[8081],
                f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\nProxy-Authorization: Basic {login}\r\n\r\n".encode(),
            )
            assert answer.startswith(b"HTTP/1.1 200"), answer
            refused = through_pass_through(
                proxy.ports[8081], f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode()
            )
            assert refused.startswith(b"HTTP/1.1 407"), refused
    finally:
        stop_process(process)
