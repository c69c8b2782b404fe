"""Server settings: embedded defaults, overridden by a TOML config file, then environment, then CLI.

`Settings` is a frozen dataclass composing the fetcher's `FetchSettings`. `load_settings` merges
the sources in that order of precedence; every top-level option has an environment variable
(`READERPROXY_HOST`, `_PORT`, `_CACHE`, `_ALLOW_PRIVATE`, `_CONFIG`, … : see `READER_OPTIONS`). The
config file may set any `Settings` field at the top level and any `FetchSettings` field in a
`[fetch]` table:

    host = "0.0.0.0"
    port = 8080
    cache = "redis://127.0.0.1:6379/0"
    [fetch]
    allow_private = false
    total_timeout = 15.0

Proxy mode extends both: `proxy/settings.py` declares its options and fields, and its `Settings`
(this one's fields and proxy mode's) is the one `readerproxy serve` loads (`settings_from`).
"""

from __future__ import annotations

import dataclasses
import ipaddress
import os
import tomllib
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self, TypeVar

from ..engine.convert import coerce
from .auth import LoginError, check_logins
from .browser import BrowserSettings
from .cache import parse_cache_spec
from .datadir import data_dir
from .fetch import FetchSettings
from .forwarded import parse_trusted
from .public import parse_public_url

ENV_PREFIX = "READERPROXY_"
#: Where article images come from (`Settings.images`).
IMAGE_MODES = ("proxy", "direct")


@dataclass(frozen=True, slots=True)
class ServeOption:
    """One option of `readerproxy serve`: a Settings field (or `config`), its flag, env var and help."""

    name: str  # the Settings field; `allow_private` reaches into `fetch`; `config` names the TOML file
    help: str
    metavar: str | None = None  # None: a boolean switch

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    @property
    def env(self) -> str:
        return ENV_PREFIX + self.name.upper()


#: The reader server's options, in --help order (proxy mode's are declared in `proxy/settings.py`
#: and join these there, as `SERVE_OPTIONS`). The command line, the environment variables and the
#: help text are all made from the table.
READER_OPTIONS: tuple[ServeOption, ...] = (
    ServeOption("host", "address to listen on", "ADDR"),
    ServeOption("port", "port to listen on", "PORT"),
    ServeOption("cache", "memory | sqlite:PATH | redis://HOST:PORT/DB", "SPEC"),
    ServeOption("allow_private", "allow fetching loopback and private addresses (local testing only)"),
    ServeOption("default_algorithm", "algorithm used when a request names none", "NAME"),
    ServeOption("memory_cache_bytes", "bytes of the in-process cache in front of the backend", "BYTES"),
    ServeOption("cache_max_bytes", "bytes the SQLite cache file may use (oldest out first)", "BYTES"),
    ServeOption("page_ttl", "seconds a fetched page stays fresh without Cache-Control/Expires", "SECONDS"),
    ServeOption("max_ttl", "upper bound in seconds on any upstream freshness", "SECONDS"),
    ServeOption("result_ttl", "seconds an extraction result is kept", "SECONDS"),
    ServeOption("extract_workers", "worker processes for parsing and extraction", "N"),
    ServeOption("workers", "server processes sharing the port (SO_REUSEPORT) and the cache", "N"),
    ServeOption(
        "extract_timeout", "seconds an extraction may run before its worker is killed (503)", "SECONDS"
    ),
    ServeOption("extract_queue", "extractions that may wait for a worker; more get 503 + Retry-After", "N"),
    ServeOption(
        "extract_per_client",
        "extraction workers one client address may hold at once (0: half the workers)",
        "N",
    ),
    ServeOption(
        "rate_limit", "requests per second per client address on /read and /api (0: no limit)", "RATE"
    ),
    ServeOption("rate_burst", "requests a client may make at once before the rate limit applies", "N"),
    ServeOption("header_timeout", "seconds a connection may take to send its request headers", "SECONDS"),
    ServeOption(
        "shutdown_timeout",
        "seconds requests in flight may take to finish on SIGTERM; then they get 503 + Retry-After",
        "SECONDS",
    ),
    ServeOption(
        "auth", "USER:PASS required from proxy clients (Proxy-Authorization) and reader routes", "USER:PASS"
    ),
    ServeOption(
        "auth_file",
        "file of USER:PASS lines, one per reader (instead of --auth); each has its own list",
        "FILE",
    ),
    ServeOption("browser", "Chromium for algorithm visual and render=1 (started on first use)", "PATH"),
    ServeOption("browser_pages", "pages the browser renders at once", "N"),
    ServeOption("render_timeout", "seconds a page may take to render in the browser (504)", "SECONDS"),
    ServeOption("render_max_bytes", "bytes of subresources one rendered page may receive", "BYTES"),
    ServeOption("render_max_requests", "requests one rendered page may make; more are failed", "N"),
    ServeOption("render_max_elements", "elements a rendered DOM may have (413 past it)", "N"),
    ServeOption("render_queue", "renders that may wait for a browser page; more get 503 + Retry-After", "N"),
    ServeOption(
        "render_per_client", "browser pages one client address may hold at once (0: half the pages)", "N"
    ),
    ServeOption("render_max_memory", "resident bytes of one browser page process (killed past it)", "BYTES"),
    ServeOption(
        "images",
        "proxy: article images resized and served by readerproxy (/image); direct: from the original sites",
        "MODE",
    ),
    ServeOption("image_memory_bytes", "bytes of resized images kept in memory (before the backend)", "BYTES"),
    ServeOption(
        "trusted_proxies",
        "reverse proxies (addresses or CIDRs) whose Forwarded / X-Forwarded-* headers, and PROXY protocol "
        "header on the proxy port, name the client; from any other peer they are ignored",
        "CIDRS",
    ),
    ServeOption(
        "public_url",
        "the address people reach this server by (https://reader.example/ or with a path prefix): "
        "links, the bookmarklet, the PAC file and the setup page use it",
        "URL",
    ),
    ServeOption(
        "instance", "this instance's name in /metrics and the logs (host name:port when not given)", "NAME"
    ),
    ServeOption("log_format", "text | json (one JSON line per request, with its request id)", "FORMAT"),
    ServeOption(
        "reading_list",
        "where reading lists are kept: sqlite:PATH | redis://HOST:PORT/DB",
        "SPEC",
    ),
    ServeOption("config", "TOML config file (top-level options and a [fetch] table)", "FILE"),
)


#: A `Settings` class: the reader server's, or one extending it (proxy mode's).
S = TypeVar("S", bound="Settings")


class SettingsError(ValueError):
    """A setting that cannot be used (bad type, unknown name, unreadable config file)."""


def default_cache_spec(env: Mapping[str, str] | None = None) -> str:
    """The embedded default cache: SQLite in the per-user data directory."""
    return f"sqlite:{data_dir(env) / 'cache.sqlite3'}"


@dataclass(frozen=True)
class Settings:
    """Everything the server needs to start; the fetcher's own settings nested as `fetch`."""

    host: str = "127.0.0.1"
    port: int = 8080
    cache: str = field(default_factory=default_cache_spec)  # memory | sqlite:PATH | redis://HOST:PORT/DB
    fetch: FetchSettings = field(default_factory=FetchSettings)
    memory_cache_bytes: int = 64 * 1024 * 1024  # the in-process LRU in front of the backend
    cache_max_bytes: int = 1024 * 1024 * 1024  # the SQLite file's bound (oldest entries evicted first)
    page_ttl: float = 300.0  # freshness of a fetched page without Cache-Control/Expires, seconds
    max_ttl: float = 86400.0  # upper bound on any upstream freshness, seconds
    result_ttl: float = 86400.0  # extraction results (keyed by the page version they came from)
    extract_workers: int = 2  # worker processes for parse + extract + render (workers.py)
    workers: int = 1  # server processes on one port (SO_REUSEPORT), sharing the SQLite or Redis cache
    extract_timeout: float = 10.0  # an extraction's deadline; then its worker is killed (503)
    extract_queue: int = 32  # extractions waiting for a worker; one more gets 503 + Retry-After
    extract_per_client: int = 0  # workers one client address may hold at once (0: half, at least 1)
    worker_max_rss_bytes: int = 768 * 1024 * 1024  # a worker whose peak passes this is replaced
    rate_limit: float = 20.0  # token bucket per client address on /read and /api/*: requests per second
    rate_burst: int = 100  # the bucket's size (0 rate: no limit)
    header_timeout: float = 10.0  # seconds to receive a request's headers (slowloris clients)
    shutdown_timeout: float = 5.0  # on SIGTERM: in-flight requests finish within this, or get 503
    default_algorithm: str = "auto"
    templates_dir: Path | None = None  # None: the templates shipped with the package
    static_dir: Path | None = None  # None: the static files shipped with the package
    # The login of the reader routes, and of proxy mode's clients (auth.py).
    auth: str | None = None  # USER:PASS
    auth_file: Path | None = None  # USER:PASS lines, one per reader
    # The browser service (browser.py): started on the first `visual` or render=1 request.
    browser: str = "/usr/bin/chromium"
    browser_pages: int = 2
    render_timeout: float = 15.0
    render_max_bytes: int = 4 * 1024 * 1024
    render_max_requests: int = 100
    render_max_elements: int = 200_000
    render_queue: int = 8
    render_per_client: int = 0
    render_max_memory: int = 1024 * 1024 * 1024
    # Article images (images.py): "proxy" through /image (resized, re-encoded, cached; the CSP's
    # img-src is 'self'), or "direct" from the original sites.
    images: str = "proxy"
    image_memory_bytes: int = 32 * 1024 * 1024
    # Behind a reverse proxy and as one of several instances (web/forwarded.py, web/requestlog.py).
    trusted_proxies: str = ""  # CIDRs whose forwarding headers (and PROXY protocol) are believed
    public_url: str = ""  # https://reader.example/ or https://example.org/reader/: links use it
    instance: str = ""  # the instance label of /metrics and the logs ("": host name:port)
    log_format: str = "text"  # text | json
    # The reading list (readinglist.py): "" keeps it beside the cache (`reading_list_spec`).
    reading_list: str = ""

    def browser_settings(self) -> BrowserSettings:
        """The browser service's settings (ValueError for a pool size, timeout or budget out of
        range); the rendered DOM's HTML has the fetch's size cap."""
        return BrowserSettings(
            executable=self.browser,
            pages=self.browser_pages,
            timeout=self.render_timeout,
            max_bytes=self.render_max_bytes,
            max_requests=self.render_max_requests,
            max_html_bytes=self.fetch.max_bytes,
            max_elements=self.render_max_elements,
            queue=self.render_queue,
            per_client=self.render_per_client,
            max_memory=self.render_max_memory,
        )

    def completed(self, env: Mapping[str, str]) -> Self:
        """These settings completed and checked by what extends them (proxy mode: `--lan`'s
        defaults, the open-proxy check, the host patterns and block lists); the reader's own as
        they are. Run by `settings_from` after the login's check and before the front's."""
        return self

    def exposure(self) -> str | None:
        """What lets other machines reach this server ("--host 0.0.0.0", proxy mode's "--lan"), or None when
        only this machine can (a loopback --host): a login's password is then held to
        `auth.MIN_PASSWORD` characters."""
        return None if is_loopback_host(self.host) else f"--host {self.host}"

    @property
    def allow_private(self) -> bool:
        return self.fetch.allow_private

    def with_overrides(self, **changes: Any) -> Settings:
        """A copy with top-level fields changed; `allow_private` reaches into `fetch`."""
        if "allow_private" in changes:
            allow = changes.pop("allow_private")
            changes["fetch"] = dataclasses.replace(changes.get("fetch", self.fetch), allow_private=allow)
        return dataclasses.replace(self, **changes)


def load_settings(
    cli: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
) -> Settings:
    """The reader server's settings alone (`settings_from`); `readerproxy serve` loads proxy
    mode's too (`proxy/settings.load_settings`)."""
    return settings_from(Settings, READER_OPTIONS, cli, env)


def settings_from(
    kind: type[S],
    options: Sequence[ServeOption],
    cli: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
) -> S:
    """Settings of class `kind` (this module's `Settings` or one extending it) with `options` (their
    environment variables): defaults < config file < environment < command line (None values on
    the CLI mean "unset"), then checked."""
    env = os.environ if env is None else env
    cli = {key: value for key, value in (cli or {}).items() if value is not None}
    config_path = cli.pop("config", None) or env.get(ENV_PREFIX + "CONFIG")
    top: dict[str, Any] = {}
    fetch: dict[str, Any] = {}
    if config_path:
        file_top, file_fetch = read_config(Path(config_path))
        top.update(file_top)
        fetch.update(file_fetch)
    top.update(env_values(env, options))
    top.update(cli)
    if "allow_private" in top:
        fetch["allow_private"] = top.pop("allow_private")
    settings = kind(cache=default_cache_spec(env))
    settings = dataclasses.replace(
        settings,
        **_typed(kind, top, source="settings"),
        fetch=dataclasses.replace(settings.fetch, **_typed(FetchSettings, fetch, source="[fetch]")),
    )
    check_cache_spec(settings.cache)
    check_reading_list_spec(settings.reading_list)
    check_auth(settings)  # before --lan names its generated login file, which is made at start
    settings = settings.completed(env)
    check_front(settings)
    if settings.images not in IMAGE_MODES:
        raise SettingsError(f"images must be one of {', '.join(IMAGE_MODES)}, got {settings.images!r}")
    try:
        settings.browser_settings()
    except ValueError as exc:
        raise SettingsError(str(exc)) from None
    return settings


def check_auth(settings: Settings) -> None:
    """The logins of `--auth` or `--auth-file` (`auth.check_logins` says what is asked of them),
    SettingsError with one line saying what is wrong."""
    try:
        check_logins(settings)
    except LoginError as exc:
        raise SettingsError(str(exc)) from None


def is_loopback_host(host: str) -> bool:
    """Whether `host` is `localhost` or one loopback address (anything else, an address list or a
    name included, may be reachable from other machines)."""
    host = host.strip()
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host[1:-1] if host.startswith("[") else host).is_loopback
    except ValueError:
        return False


#: `--log-format` values.
LOG_FORMATS = ("text", "json")


def check_front(settings: Settings) -> None:
    """`--trusted-proxies` (CIDRs), `--public-url` (an absolute http(s) URL) and `--log-format`,
    each refused with a line naming what is wrong rather than half-applied at start-up."""
    try:
        parse_trusted(settings.trusted_proxies)
        parse_public_url(settings.public_url)
    except ValueError as exc:
        raise SettingsError(str(exc)) from None
    if settings.log_format not in LOG_FORMATS:
        raise SettingsError(
            f"log_format must be one of {', '.join(LOG_FORMATS)}, got {settings.log_format!r}"
        )


def check_cache_spec(spec: str) -> None:
    """A cache spec `cache.parse_cache_spec` accepts, or SettingsError saying why not."""
    try:
        parse_cache_spec(spec)
    except ValueError as exc:
        raise SettingsError(str(exc)) from None


def check_reading_list_spec(spec: str) -> None:
    """An empty spec, or a SQLite or Redis spec (`cache.parse_cache_spec`'s syntax; memory keeps nothing), or
    SettingsError saying why not."""
    if not spec:
        return
    try:
        kind = parse_cache_spec(spec).kind
    except ValueError as exc:
        raise SettingsError(f"reading_list: {exc}") from None
    if kind == "memory":
        raise SettingsError("reading_list must be sqlite:PATH or redis://HOST:PORT/DB (memory keeps nothing)")


def read_config(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """Top-level values and the [fetch] table of a TOML config file."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise SettingsError(f"cannot read config file {path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"config file {path} is not valid TOML: {exc}") from None
    fetch = data.pop("fetch", {})
    if not isinstance(fetch, dict):
        raise SettingsError(f"config file {path}: [fetch] must be a table")
    return data, fetch


def env_values(env: Mapping[str, str], options: Sequence[ServeOption] = READER_OPTIONS) -> dict[str, Any]:
    """READERPROXY_<OPTION> for every one of `options`, as raw strings to be typed later."""
    values: dict[str, Any] = {}
    for option in options:
        if option.name == "config":
            continue
        raw = env.get(option.env)
        if raw is not None and (raw.strip() or option.name == "allow_private"):
            values[option.name] = raw.strip()
    return values


def _typed(cls: type, values: Mapping[str, Any], source: str) -> dict[str, Any]:
    """Values converted to the dataclass fields' types; unknown names are an error."""
    hints = typing.get_type_hints(cls)
    fields = {f.name for f in dataclasses.fields(cls) if f.name != "fetch"}
    unknown = sorted(set(values) - fields)
    if unknown:
        raise SettingsError(
            f"unknown {source} option(s): {', '.join(unknown)}; valid: {', '.join(sorted(fields))}"
        )
    return {name: _convert(name, value, hints[name]) for name, value in values.items()}


def _convert(name: str, value: Any, hint: Any) -> Any:
    """`convert.coerce` (shared with the extractors' parameters), failing as a SettingsError."""
    try:
        result = coerce(name, value, hint)
        if name == "port" and not 0 <= result <= 65535:
            raise ValueError(f"{name} expects int in [0, 65535], got {value!r}")
    except ValueError as error:
        raise SettingsError(f"setting {error}") from None
    return result
