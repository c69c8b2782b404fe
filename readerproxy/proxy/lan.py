"""`readerproxy serve --lan`: a phone on board in one scan.

On a home network the person at the terminal should not have to find the machine's address, make
up a password, and type a URL into a phone. `--lan`:

- listens on loopback and the machine's LAN addresses (`addresses.lan_addresses`, read from the
  interfaces), the reader server on `--port` and the proxy on `--proxy-port` (8081 by default);
- is never an open proxy: without `--auth` or `--auth-file` its login is generated once
  (`secrets`, a fixed user name and a random password), kept in the data directory in a file only
  its owner may read (0600), and reused on every later start; `web/settings.lan_settings` points
  `auth_file` at it, `ensure_login` creates it when the server starts;
- prints the real addresses, the PAC file's URL, the login (only the start that created it shows
  the password; later ones say where it is kept) and a QR code of the setup page's address, which
  a phone can open before it uses the proxy (`/setup` on the reader server, open without the login:
  it holds only what a device needs to be set up, the CA certificate is public);
- shows the same QR code as inline SVG on the landing page and on `http://readerproxy/`, so a
  computer already set up can hand the set-up on to a phone.

The QR code comes from `segno` (a pure-Python encoder, kept up to date, with both renderings used
here): an encoder is Reed-Solomon error correction, eight masks scored by the standard's penalty
rules and version and format information, which is a lot to write and test for one picture.
"""

from __future__ import annotations

import io
import os
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..web.public import public_of
from . import addresses

if TYPE_CHECKING:
    from segno import QRCode

    from .settings import Settings

#: The user name of a generated login (the password is what keeps others out).
LOGIN_USER = "reader"
#: The reader server's setup page: what the QR code opens on a phone not yet using the proxy.
SETUP_PATH = "/setup"


def new_login() -> str:
    """USER:PASS with a random password (16 URL-safe characters, 96 bits): easy to type on a phone,
    far too many to guess through a proxy that answers each try."""
    return f"{LOGIN_USER}:{secrets.token_urlsafe(12)}"


def ensure_login(path: Path) -> tuple[str, bool]:
    """The login kept at `path`, and whether it was created now (it is printed only then).

    Created with O_EXCL and mode 0600 in one call, so it is never readable by others, not even for
    a moment, and two servers starting at once cannot both write one; a file that exists but holds
    no USER:PASS is an error rather than silently replaced (someone put it there)."""
    try:
        first = path.read_text(encoding="utf-8").splitlines()[:1]
    except FileNotFoundError:
        pass
    else:
        value = first[0].strip() if first else ""
        if ":" not in value or not value.partition(":")[0]:
            raise ValueError(f"{path} holds no USER:PASS login; remove it to have one generated")
        return value, False
    path.parent.mkdir(parents=True, exist_ok=True)
    login = new_login()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another server created it since: use that one
        return ensure_login(path)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(login + "\n")
    return login, True


def listen_hosts(settings: Settings) -> list[str]:
    """The addresses to listen on: `--host` alone, or with `--lan` loopback (or `--host`) and the
    machine's LAN addresses (just `--host` when it is already every address)."""
    if not getattr(settings, "lan", False) or settings.host in ("0.0.0.0", "::", ""):
        return [settings.host]
    hosts = [settings.host]
    hosts += [address for address in addresses.lan_addresses() if address not in hosts]
    return hosts


def share_host(settings: Settings) -> str | None:
    """The address another device reaches this machine on (for the QR code), or None when the
    server listens on loopback only: a QR code of 127.0.0.1 would open the phone itself."""
    host = settings.host.strip()
    if getattr(settings, "lan", False) or host in ("0.0.0.0", "::", ""):
        found = addresses.lan_addresses()
        return found[0] if found else None
    return host if addresses.usable(host) else None


def setup_url(host: str, reader_port: int) -> str:
    """The reader server's setup page on `host`: opened on a device before it uses the proxy."""
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{reader_port}{SETUP_PATH}"


def share_url(settings: Settings, reader_port: int) -> str | None:
    """The URL the QR code holds, or None when no other device can reach this server; with
    `--public-url`, the setup page there."""
    public = public_of(settings)
    if public is not None:
        return public.url(SETUP_PATH)
    host = share_host(settings)
    return setup_url(host, reader_port) if host is not None else None


def _qr(url: str) -> QRCode:
    import segno

    # error correction M (15 %): a code shown on a screen, photographed at an angle
    return segno.make_qr(url, error="m", boost_error=False)


def qr_svg(url: str) -> str:
    """The QR code of `url` as an inline SVG element: black on white whatever the page's theme
    (scanners want dark modules on light), sized by CSS (no width/height), titled with the URL.
    The same URL always gives the same SVG."""
    code = _qr(url)
    return str(
        code.svg_inline(
            scale=1,
            border=4,
            dark="#000",
            light="#fff",
            omitsize=True,
            title=f"QR code of {url}",
            svgclass="qr",
            lineclass=None,
        )
    )


def qr_terminal(url: str) -> list[str]:
    """The QR code of `url` for a terminal, two rows of modules per line (half blocks), light
    modules drawn: a terminal's dark background is the code's dark."""
    buffer = io.StringIO()
    _qr(url).terminal(out=buffer, compact=True, border=4)
    return buffer.getvalue().rstrip("\n").split("\n")


@dataclass(frozen=True)
class Login:
    """How the start-up lines speak of the login: the password only when it was just generated."""

    credentials: str | None  # USER:PASS to print (a login generated by this start), else None
    where: str  # where the login comes from: the file, or --auth


def login_note(settings: Settings, created: str | None) -> Login:
    """`created`: the login `ensure_login` generated by this start, else None."""
    if created is not None:
        return Login(created, str(settings.auth_file))
    if settings.auth:
        return Login(None, "--auth")
    return Login(None, str(settings.auth_file))


def startup_lines(
    settings: Settings, reader_port: int, login: Login, found: Sequence[str] | None = None
) -> list[str]:
    """What `--lan` prints once listening: the proxy on each LAN address, the PAC file, the login,
    the setup page's URL and its QR code. Real addresses only: with none found it says so, and
    that only this machine can use it (never a placeholder)."""
    assert settings.proxy_port is not None
    reachable = list(addresses.lan_addresses() if found is None else found)
    port = settings.proxy_port
    if login.credentials is not None:
        user, _, password = login.credentials.partition(":")
        login_line = (
            f"  login: user {user}, password {password} (generated now and kept in {login.where}, "
            "readable by you only; it is not printed again)"
        )
    elif login.where == "--auth":
        login_line = "  login: the user and password given with --auth"
    else:
        login_line = f"  login: the user and password in {login.where}"
    if not reachable:
        return [
            f"home network (--lan): no network address found; the proxy is on 127.0.0.1:{port} "
            "for this machine only",
            login_line,
        ]
    shown = [f"[{a}]" if ":" in a else a for a in reachable]
    url = setup_url(reachable[0], reader_port)
    lines = [f"home network (--lan): set {shown[0]}:{port} as the phone's or browser's proxy"]
    lines += [f"  also reachable as {a}:{port}" for a in shown[1:]]
    lines.append(f"  PAC file: http://{shown[0]}:{reader_port}/proxy.pac")
    lines.append(login_line)
    lines.append(f"  set-up page (scan it with the phone's camera): {url}")
    lines += qr_terminal(url)
    return lines
