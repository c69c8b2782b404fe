"""The first run, as a user does it: build the wheel, install it with the base dependencies only into
a fresh virtualenv, and run `readerproxy` from a directory that is not the repository.

This is the check that CI cannot give by itself (`./dev test` installs every extra into the
project's own virtualenv): the base install must serve styled pages, extract and list algorithms,
and the commands that need an extra must say which one in one line.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.reader_server import free_port
from support.upstream import ARTICLE_TEXT, Upstream

REPO = Path(__file__).resolve().parent.parent
#: Only what a normal `pip install readerproxy` brings; none of the extras.
EXTRA_MODULES = ("rapidfuzz", "trafilatura", "readability", "pytest", "hypothesis")

pytestmark = pytest.mark.slow


@dataclass(frozen=True)
class Installed:
    """A fresh virtualenv with the readerproxy wheel installed, and a working directory outside the repo."""

    venv: Path
    workdir: Path
    wheel: Path

    @property
    def readerproxy(self) -> str:
        return str(self.venv / "bin" / "readerproxy")

    @property
    def python(self) -> str:
        return str(self.venv / "bin" / "python")

    def run(self, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            [self.readerproxy, *args],
            cwd=self.workdir,
            input=stdin,
            capture_output=True,
            timeout=120,
            env=_clean_env(self.workdir),
        )


def _clean_env(home: Path) -> dict[str, str]:
    """No PYTHONPATH or virtualenv of ours leaks in; HOME is the temporary directory."""
    return {"PATH": "/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8"}


def _pip(python: str, *args: str, cwd: Path) -> None:
    result = subprocess.run(
        [python, "-m", "pip", "--disable-pip-version-check", *args], cwd=cwd, capture_output=True, timeout=900
    )
    assert result.returncode == 0, result.stderr.decode(errors="replace")[-3000:]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    base = tmp_path_factory.mktemp("install")
    wheels = base / "wheels"
    _pip(sys.executable, "wheel", "--no-deps", "-q", "-w", str(wheels), str(REPO), cwd=base)
    (wheel,) = wheels.glob("readerproxy-*.whl")
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    _pip(str(venv / "bin" / "python"), "install", "-q", str(wheel), cwd=base)
    workdir = base / "elsewhere"
    workdir.mkdir()
    return Installed(venv, workdir, wheel)


def test_the_wheel_carries_the_compiled_kernels_and_uses_them(installed: Installed) -> None:
    """The build hook compiled readerproxy/_native.c into a platform wheel, which also ships the
    kernels' type stub (_native.pyi), and the fresh install runs the C kernels (not the numpy
    fallback) from its own site-packages."""
    assert not installed.wheel.name.endswith("-none-any.whl"), installed.wheel.name
    with zipfile.ZipFile(installed.wheel) as archive:
        assert any(re.fullmatch(r"readerproxy/_native\..+\.so", name) for name in archive.namelist())
        assert "readerproxy/_native.pyi" in archive.namelist()
    code = "import readerproxy._speedups as s, readerproxy.engine.parse.scan as d; print(s.native.__file__, d.native is s.native)"
    check = subprocess.run(
        [installed.python, "-c", code],
        cwd=installed.workdir,
        capture_output=True,
        text=True,
        env=_clean_env(installed.workdir),
        check=True,
    )
    module, shared = check.stdout.split()
    assert installed.venv in Path(module).parents and shared == "True"


def test_without_a_compiler_the_wheel_is_pure_python(tmp_path: Path) -> None:
    """No compiler: the build hook warns and the wheel is pure Python, so `pip install` still works."""
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--disable-pip-version-check",
            "wheel",
            "--no-deps",
            "-w",
            str(tmp_path),
            str(REPO),
        ],
        cwd=tmp_path,
        capture_output=True,
        timeout=900,
        env={**os.environ, "CC": "/nonexistent/cc"},
    )
    assert result.returncode == 0, result.stderr.decode(errors="replace")[-3000:]
    (wheel,) = tmp_path.glob("readerproxy-*.whl")
    assert wheel.name.endswith("-py3-none-any.whl")
    with zipfile.ZipFile(wheel) as archive:
        assert not [name for name in archive.namelist() if name.endswith(".so")]


def test_the_wheel_carries_templates_and_static_files(installed: Installed) -> None:
    check = subprocess.run(
        [
            installed.python,
            "-c",
            "import readerproxy.web.templating as r; print(r.TEMPLATES_DIR); print(r.STATIC_DIR)",
        ],
        cwd=installed.workdir,
        capture_output=True,
        text=True,
        env=_clean_env(installed.workdir),
        check=True,
    )
    templates, static = (Path(line) for line in check.stdout.split())
    assert installed.venv in templates.parents and installed.venv in static.parents
    assert (templates / "reader.html").is_file() and (static / "reader.css").is_file()


def test_only_the_base_dependencies_are_installed(installed: Installed) -> None:
    code = f"import importlib.util as u; print([m for m in {EXTRA_MODULES!r} if u.find_spec(m)])"
    check = subprocess.run(
        [installed.python, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=installed.workdir,
        env=_clean_env(installed.workdir),
    )
    assert check.stdout.strip() == "[]"


def test_version_algorithms_and_extract_work_without_extras(installed: Installed, tmp_path: Path) -> None:
    version = installed.run("--version")
    assert version.returncode == 0 and re.fullmatch(
        rb"readerproxy \d+\.\d+\.\d+ \(native kernels: yes\)\n", version.stdout
    )
    listing = installed.run("algorithms")
    assert listing.returncode == 0 and listing.stdout.startswith(b"auto ")
    page = (
        f"<html><head><title>Installed</title></head><body><nav>Menu</nav><article><h1>Installed</h1>"
        f"<p>{ARTICLE_TEXT * 3}</p></article></body></html>"
    )
    extracted = installed.run("extract", "-", stdin=page.encode())
    assert extracted.returncode == 0, extracted.stderr
    assert ARTICLE_TEXT.split(".")[0].encode() in extracted.stdout


@pytest.mark.parametrize(("command", "extra"), [("eval", "eval"), ("bench", "bench")])
def test_commands_needing_an_extra_name_it_in_one_line(
    installed: Installed, command: str, extra: str
) -> None:
    result = installed.run(command)
    assert result.returncode == 2
    message = result.stderr.decode()
    assert message.count("\n") == 1 and "Traceback" not in message
    assert f"pip install 'readerproxy[{extra}]'" in message


def test_serve_help_lists_every_option_with_default_and_environment_variable(installed: Installed) -> None:
    result = installed.run("serve", "--help")
    assert result.returncode == 0
    text = " ".join(result.stdout.decode().split())
    for flag, env in [
        ("--host", "READERPROXY_HOST"),
        ("--port", "READERPROXY_PORT"),
        ("--cache", "READERPROXY_CACHE"),
        ("--allow-private", "READERPROXY_ALLOW_PRIVATE"),
        ("--config", "READERPROXY_CONFIG"),
    ]:
        assert flag in text and env in text
    assert text.count("(default:") == text.count("; env READERPROXY_")
    assert text.count("; env READERPROXY_") >= 5


@pytest.fixture
def served(installed: Installed) -> Iterator[str]:
    """`readerproxy serve` from the installed wheel, started in a directory that is not the repository."""
    port = free_port()
    process = subprocess.Popen(
        [installed.readerproxy, "serve", "--port", str(port), "--allow-private"],
        cwd=installed.workdir,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_clean_env(installed.workdir),
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline().decode()  # the address to open, printed once listening
        assert f"open http://127.0.0.1:{port}/" in line, (line, process.stderr and process.stderr.read(2000))
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(30)  # a bound for a hang, not a measure
        assert process.returncode == 0, "the server did not stop cleanly on SIGTERM"


def _get(url: str) -> tuple[int, str, bytes]:
    with urllib.request.urlopen(url, timeout=30) as response:
        return response.status, response.headers.get("Content-Type", ""), response.read()


def test_the_installed_server_serves_styled_pages(
    installed: Installed, served: str, upstream: Upstream
) -> None:
    status, _, body = _get(served + "/healthz")
    assert status == 200 and b'"ok"' in body
    status, content_type, landing = _get(served + "/")
    assert status == 200 and content_type.startswith("text/html")
    stylesheet = re.search(rb'<link rel="stylesheet" href="([^"]+)"', landing)
    assert stylesheet is not None
    status, content_type, css = _get(served + stylesheet.group(1).decode().replace("&amp;", "&"))
    assert status == 200 and content_type.startswith("text/css") and len(css) > 1000
    target = urllib.parse.quote(upstream.url("/article"), safe="")
    status, _, page = _get(f"{served}/read?url={target}")
    assert status == 200
    assert ARTICLE_TEXT.split(".")[0].encode() in page and stylesheet.group(1) in page
    # the default cache is SQLite in the (temporary) home's data directory, created on first use
    assert (installed.workdir / ".local" / "share" / "readerproxy" / "cache.sqlite3").is_file()


def test_the_installed_server_on_the_lan_prints_the_qr_code(installed: Installed) -> None:
    """`serve --lan` from the base install: segno (a base dependency) draws the setup page's QR code
    in the terminal, the login is generated in the home's data directory, and the setup page with
    its check script is served from the wheel's templates and static files."""
    port, proxy_port = free_port(), free_port()
    process = subprocess.Popen(
        [installed.readerproxy, "serve", "--lan", "--port", str(port), "--proxy-port", str(proxy_port)],
        cwd=installed.workdir,
        env=_clean_env(installed.workdir),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                status, _, page = _get(f"http://127.0.0.1:{port}/setup")
                break
            except OSError:
                assert process.poll() is None and time.monotonic() < deadline, "serve --lan did not start"
                time.sleep(0.2)
        assert status == 200 and b"Set up readerproxy" in page
    finally:
        process.terminate()
        printed = process.communicate(timeout=20)[0].decode()
    login = installed.workdir / ".local" / "share" / "readerproxy" / "lan-login"
    assert login.read_text().startswith("reader:") and (login.stat().st_mode & 0o777) == 0o600
    assert "ADDRESS" not in printed and "login: user reader, password " in printed
    if "home network (--lan): set " in printed:  # a machine with a network address: its QR code
        assert "/setup" in printed and "▄" in printed
    names = {Path(name).name for name in zipfile.ZipFile(installed.wheel).namelist()}
    assert "setup-check.js" in names
