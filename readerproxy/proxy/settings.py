"""Proxy mode's options: declared here, beside the reader server's (`web/settings.py`), and composed
with them into the one `Settings` that `readerproxy serve` loads (`readerproxy/app.py`).

- `PROXY_PORT_OPTION` and `PROXY_OPTIONS`: proxy mode's lines of `readerproxy serve --help`, its
  environment variables and config keys; `SERVE_OPTIONS` is every option, in --help's order.
- `Settings`: the reader server's settings and proxy mode's fields; `Settings.completed` applies
  `--lan`'s defaults (`lan_settings`) and proxy mode's checks when the settings are loaded.
- `load_settings`: defaults < TOML config file < environment < command line, as the reader's
  (`web/settings.settings_from`), for the whole.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self, TypeVar

from ..web.datadir import data_dir
from ..web.settings import READER_OPTIONS, ServeOption, SettingsError, settings_from
from ..web.settings import Settings as ReaderSettings

#: `--proxy-port`, the switch of proxy mode.
PROXY_PORT_OPTION = ServeOption(
    "proxy_port", "also listen as a browser proxy on this port (proxy mode; off by default)", "PORT"
)
#: The rest of proxy mode's options, in --help order.
PROXY_OPTIONS: tuple[ServeOption, ...] = (
    ServeOption("insecure_open_proxy", "allow a proxy on a non-loopback address without --auth"),
    ServeOption(
        "lan",
        "home network: proxy and reader on this machine's LAN addresses, with a login (generated and "
        "kept in the data directory when no --auth is given), a QR code of the setup page",
    ),
    ServeOption(
        "intercept_https", "decrypt HTTPS with a local CA (see `readerproxy ca`) to show reader views"
    ),
    ServeOption(
        "resolve", "HOST:IP[,HOST:IP…] host names mapped to addresses inside the proxy (tests)", "MAP"
    ),
    ServeOption(
        "upstream_ca", "extra CA certificates (PEM) trusted for upstream HTTPS in proxy mode", "FILE"
    ),
    ServeOption(
        "intercept_hosts",
        "with --intercept-https, decrypt only these hosts (globs, or regexes on host:port; see README)",
        "PATTERNS",
    ),
    ServeOption("ignore_hosts", "never decrypt these hosts: a plain tunnel (patterns as above)", "PATTERNS"),
    ServeOption(
        "reader_wait",
        "seconds a page's body may take to arrive before it streams through as the original",
        "SECONDS",
    ),
    ServeOption(
        "upgrade_https",
        "for plain-HTTP clients: fetch https:// when a site redirects there, serve it over http",
    ),
    ServeOption(
        "block_hosts",
        "proxy: refuse these hosts (403; ad and tracker servers): names with their subdomains, globs, regexes",
        "PATTERNS",
    ),
    ServeOption(
        "block_lists",
        "proxy: files of hosts to refuse: hosts files, domain lists or ||host^ rules (EasyList, uBlock)",
        "FILES",
    ),
)


def _serve_options() -> tuple[ServeOption, ...]:
    """Every option of `readerproxy serve` in the order --help has always shown: the reader's up to
    its login, proxy mode's port, the login (which proxy clients give too), the rest of proxy mode,
    then the reader's browser and later options."""
    names = [option.name for option in READER_OPTIONS]
    login, after = names.index("auth"), names.index("auth_file") + 1
    return (
        *READER_OPTIONS[:login],
        PROXY_PORT_OPTION,
        *READER_OPTIONS[login:after],
        *PROXY_OPTIONS,
        *READER_OPTIONS[after:],
    )


#: Every option of `readerproxy serve`, in --help order: the command line, the environment variables
#: and the help text are all made from this table.
SERVE_OPTIONS = _serve_options()


@dataclass(frozen=True)
class Settings(ReaderSettings):
    """Everything `readerproxy serve` needs: the reader server's settings and proxy mode's."""

    # Proxy mode: off unless proxy_port is set.
    proxy_port: int | None = None
    insecure_open_proxy: bool = False
    lan: bool = False  # --lan: LAN addresses, a login always, the proxy on LAN_PROXY_PORT by default
    intercept_https: bool = False
    resolve: str = ""  # HOST:IP,HOST:IP
    upstream_ca: Path | None = None
    reader_hosts: tuple[str, ...] = ()  # config only: always the reader view (a list, or "a.com,b.org")
    direct_hosts: tuple[str, ...] = ()  # config only: never the reader view
    intercept_hosts: tuple[str, ...] = ()  # decrypt only these (patterns: proxy/intercept.py)
    ignore_hosts: tuple[str, ...] = ()  # never decrypt these (and never `direct_hosts`)
    reader_wait: float = 1.0  # a navigation not in whole by then streams through as the original
    upgrade_https: bool = False  # http:// redirected to its https:// is fetched and served over http
    block_hosts: tuple[str, ...] = ()  # refused by the proxy (patterns: proxy/blocklist.py)
    block_lists: tuple[str, ...] = ()  # files of hosts refused by the proxy (proxy/blocklist.py)

    def completed(self, env: Mapping[str, str]) -> Self:
        """`--lan`'s defaults applied (`lan_settings`), then proxy mode's checks: no open proxy
        beyond loopback, block lists readable, host patterns that compile."""
        settings = lan_settings(self, env)
        check_open_proxy(settings)
        check_block_lists(settings.block_lists)
        check_host_patterns(settings)
        return settings

    def exposure(self) -> str | None:
        """`--lan` listens on the LAN's addresses whatever --host says; else as the reader's."""
        return "--lan" if self.lan else super().exposure()


#: Proxy mode's `Settings`, or a class extending it.
P = TypeVar("P", bound=Settings)


def load_settings(
    cli: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
) -> Settings:
    """Defaults < config file < environment < command line (None values on the CLI mean "unset"),
    for every option of `readerproxy serve`; SettingsError for one that cannot be used."""
    return settings_from(Settings, SERVE_OPTIONS, cli, env)


#: The proxy's port with `--lan` when no `--proxy-port` is given.
LAN_PROXY_PORT = 8081
#: The file of the login `--lan` generates, in the data directory (`proxy/lan.py` writes it).
LAN_LOGIN_FILE = "lan-login"


def lan_login_path(data: Path) -> Path:
    """Where `--lan` keeps the login it generated."""
    return data / LAN_LOGIN_FILE


def lan_settings(settings: P, env: Mapping[str, str] | None = None) -> P:
    """`--lan` is never an open proxy: without `--auth` or `--auth-file` its login is the file
    `proxy/lan.py` generates in the data directory (created when the server starts), and the proxy
    runs on `LAN_PROXY_PORT` unless told otherwise. Other settings are left as they are."""
    if not settings.lan:
        return settings
    changes: dict[str, Any] = {}
    if settings.proxy_port is None:
        changes["proxy_port"] = LAN_PROXY_PORT
    if not (settings.auth or settings.auth_file):
        changes["auth_file"] = lan_login_path(data_dir(env))
    return dataclasses.replace(settings, **changes) if changes else settings


def check_open_proxy(settings: Settings) -> None:
    """A proxy on a non-loopback address needs --auth (or an explicit --insecure-open-proxy)."""
    if settings.proxy_port is None or settings.auth or settings.auth_file or settings.insecure_open_proxy:
        return
    host = settings.host.strip()
    if host.lower() != "localhost":
        try:  # one address, parsed as such: "127.0.0.1 0.0.0.0" or "127.evil" are not loopback
            loopback = ipaddress.ip_address(host[1:-1] if host.startswith("[") else host).is_loopback
        except ValueError:
            raise SettingsError(
                f"--host {settings.host!r} is not a single IP address (or localhost): the proxy "
                "cannot tell whether it is loopback; give one address, or --auth USER:PASS"
            ) from None
        if not loopback:
            raise SettingsError(
                f"refusing to run an open proxy on {settings.host}: give --auth USER:PASS "
                "(or --insecure-open-proxy if you really mean it)"
            )


#: The glob syntax of the proxy's host patterns (`proxy/intercept.py`); anything else is a regex.
_HOST_GLOB = re.compile(r"^[A-Za-z0-9.\-_:*?]+$")


def check_host_patterns(settings: Settings) -> None:
    """Every pattern of `intercept_hosts`, `ignore_hosts` and `block_hosts` a glob or a regex that
    compiles (commas and spaces separate them on the command line and in the environment)."""
    for name in ("intercept_hosts", "ignore_hosts", "block_hosts"):
        value = getattr(settings, name)
        items = re.split(r"[,\s]+", value) if isinstance(value, str) else value
        for text in (str(item).strip() for item in items if str(item).strip()):
            if _HOST_GLOB.match(text):
                continue
            try:
                re.compile(text)
            except re.error as exc:
                flag = "--" + name.replace("_", "-")
                raise SettingsError(
                    f"{flag}: {text!r} is neither a host glob nor a valid regex ({exc})"
                ) from None


def check_block_lists(value: object) -> None:
    """Every `block_lists` file readable (a list, or paths separated by commas or spaces)."""
    items = value.replace(",", " ").split() if isinstance(value, str) else value
    for item in items if isinstance(items, list | tuple) else ():
        path = Path(str(item)).expanduser()
        if not path.is_file():
            raise SettingsError(f"block list {item} is not a readable file")
