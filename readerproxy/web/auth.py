"""The login: `--auth USER:PASS`, or `--auth-file` with one USER:PASS line per reader, asked of the
reader routes (HTTP Basic) and of proxy clients (`Proxy-Authorization`, `proxy/addons.AuthAddon`).

- The logins configured: `auth_lines` (where each comes from), `auth_logins`, and
  `configured_credentials` (the first, which proxy mode's gateway speaks with); `check_logins` is
  the start-up check `settings.check_auth` runs (a user and a password, at least `MIN_PASSWORD`
  characters when other machines can reach the server, each user once).
- `basic_user` and `basic_matches`: an `Authorization: Basic` header against the logins, each
  compared in constant time (`hmac.compare_digest`), every login compared whichever matches.
- `install_auth`: the reader server's `auth_middleware` (401 with `WWW-Authenticate`), which lets the
  paths of `leave_open` through without a login.
- Whose request this is: the reader's login, else the client the reader server already tells apart
  (`limits.client_key`: the address seen, or proxy mode's signed client address). `reader_key` is
  the key of a reader's own things (the reading list, `readinglist.py`): `user:NAME` with a login,
  `addr:ADDRESS` without one, the same strings proxy mode keeps a client's preferences under
  (`proxy/store.Client.store_keys`).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from aiohttp import web

from .limits import CLIENT_HEADER, client_key, gateway_secret

if TYPE_CHECKING:
    from .settings import Settings

#: The shortest password `--auth` may have when the server listens beyond this machine: the proxy
#: and the reader routes are then behind HTTP Basic alone, which anyone on the network may try as
#: often as they like (NIST SP 800-63B asks at least 8 characters of a memorised secret, 15 when it
#: is the only factor; 12 is what a person still types on a phone).
MIN_PASSWORD = 12
#: The most of an `--auth-file` read (a few thousand logins).
MAX_AUTH_FILE_BYTES = 256 * 1024
#: A SameSite=Strict cookie the reading list's pages set: a browser sends it with requests our own
#: pages make only, so it vouches for a form POST whose origin the browser hid (`list_routes`);
#: proxy mode's gateway passes it on (`proxy/setup.py`).
SAME_SITE_COOKIE = "rp_same"
#: The header of a save that proxy mode's gateway makes with the extraction a proxied reader view
#: showed (`list_routes.api_save`): the body's signature (`article_signature`).
ARTICLE_HEADER = "X-Readerproxy-Article"
#: The request's slot for the user `basic_user` found (set by `auth_middleware`).
USER = web.RequestKey("user", str)
#: "USER:PASS" of --auth, or the first line of --auth-file (`configured_credentials`), read once.
CREDENTIALS = web.AppKey("credentials", str)
#: Every login: --auth, or each line of --auth-file (`auth_logins`), one per reader.
LOGINS = web.AppKey("logins", tuple[str, ...])
#: Paths answered without a login (`leave_open`).
OPEN_PATHS = web.AppKey("open_paths", set[str])

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class LoginError(ValueError):
    """A login that cannot be used; `settings.check_auth` reports it as a SettingsError."""


# ---- the logins configured ----------------------------------------------------------------------


def auth_lines(settings: Settings) -> list[tuple[str, str]]:
    """The logins as (where, "USER:PASS"): `--auth`, or every line of `--auth-file` that is not
    blank or a `#` comment (one reader each; each has a reading list of their own). LoginError
    for a file that cannot be read or whose first line is empty; [] when auth is off."""
    if settings.auth:
        return [("--auth", settings.auth)]
    if not settings.auth_file:
        return []
    path = Path(settings.auth_file).expanduser()
    source = f"--auth-file {settings.auth_file}"
    try:
        with path.open(encoding="utf-8") as file:
            lines = file.read(MAX_AUTH_FILE_BYTES).splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise LoginError(f"cannot read {source}: {reason}") from None
    if not lines or not lines[0].strip():
        raise LoginError(f"{source} is empty: its first line must be USER:PASS")
    found = [(source, lines[0].strip())]
    for number, line in enumerate(lines[1:], start=2):
        text = line.strip()
        if text and not text.startswith("#"):
            found.append((f"{source} line {number}", text))
    return found


def auth_logins(settings: Settings) -> tuple[str, ...]:
    """Every "USER:PASS" login (`auth_lines`), checked by `check_logins` at start-up."""
    return tuple(value for _, value in auth_lines(settings))


def configured_credentials(settings: Settings) -> str | None:
    """ "USER:PASS" from `--auth`, or the first line of `--auth-file`; None when auth is off."""
    if settings.auth:
        value = settings.auth
    elif settings.auth_file:
        lines = Path(settings.auth_file).expanduser().read_text(encoding="utf-8").splitlines()
        value = lines[0].strip() if lines else ""
    else:
        return None
    if ":" not in value or not value.partition(":")[0]:
        raise ValueError("credentials must be USER:PASS")
    return value


def check_logins(settings: Settings) -> None:
    """`--auth` (or each line of `--auth-file`) is USER:PASS with a user and a password, the
    password at least `MIN_PASSWORD` characters when other machines can reach the server
    (`Settings.exposure`: a --host beyond loopback, or proxy mode's --lan, which listens on the
    LAN's addresses whatever --host says); LoginError with one line saying what is wrong otherwise
    (the value itself is never printed: it is a password). A missing or unreadable `--auth-file` is
    refused here too, not at start-up, and so is a user named twice."""
    users: set[str] = set()
    for source, value in auth_lines(settings):
        _check_login(settings, source, value)
        user = value.partition(":")[0]
        if user in users:
            raise LoginError(f"{source}: the user {user!r} has a login already")
        users.add(user)


def _check_login(settings: Settings, source: str, value: str) -> None:
    user, colon, password = value.partition(":")
    exposure = settings.exposure()
    if not colon:
        problem = "no ':' between the user name and the password"
    elif not user:
        problem = "the user name before the ':' is empty"
    elif not password:
        problem = "the password after the ':' is empty"
    elif len(password) < MIN_PASSWORD and exposure is not None:
        problem = (
            f"the password has {len(password)} characters; on {exposure}, which other machines can "
            f"reach, it needs at least {MIN_PASSWORD}"
        )
    else:
        return
    raise LoginError(f"{source} must be USER:PASS: {problem}")


# ---- the checks ---------------------------------------------------------------------------------


def _basic_token(authorization: str | None) -> bytes | None:
    """The decoded token of an `Authorization: Basic` (or `Proxy-Authorization`) value, or None."""
    scheme, _, token = (authorization or "").strip().partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        return base64.b64decode(token.strip(), validate=True)
    except (binascii.Error, ValueError):
        return None


def basic_matches(authorization: str | None, credentials: str) -> bool:
    """Whether a `Basic` authorization header carries exactly these credentials (constant time)."""
    given = _basic_token(authorization)
    if given is None:
        return False
    return hmac.compare_digest(given, credentials.encode("utf-8"))


def basic_user(authorization: str | None, logins: Sequence[str]) -> str | None:
    """The user of the login an `Authorization: Basic` header carries, when it is one of `logins`
    ("USER:PASS" each); None otherwise. Every login is compared, whichever matches."""
    given = _basic_token(authorization)
    if given is None:
        return None
    found: str | None = None
    for login in logins:
        if hmac.compare_digest(given, login.encode("utf-8")) and found is None:
            found = login.partition(":")[0]
    return found


# ---- the reader server's middleware -------------------------------------------------------------


def leave_open(app: web.Application, *paths: str) -> None:
    """Answer these paths without a login (a health check; proxy mode's PAC file and setup page)."""
    if OPEN_PATHS not in app:
        app[OPEN_PATHS] = set()
    app[OPEN_PATHS].update(paths)


def install_auth(app: web.Application, settings: Settings) -> None:
    """`--auth` or `--auth-file`: HTTP Basic on every route but those left open; nothing without."""
    if not (settings.auth or settings.auth_file):
        return
    credentials = configured_credentials(settings)
    assert credentials is not None
    app[CREDENTIALS] = credentials
    app[LOGINS] = auth_logins(settings)
    app.middlewares.append(auth_middleware)


@web.middleware
async def auth_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """`--auth`: HTTP Basic on the reader routes, with the proxy's credentials (any line of
    `--auth-file`: the user is noted on the request, `reader_key`)."""
    if request.path in request.app.get(OPEN_PATHS, ()):
        return await handler(request)
    logins: tuple[str, ...] = request.app[LOGINS]
    user = basic_user(request.headers.get("Authorization"), logins)
    if user is not None:
        request[USER] = user
        return await handler(request)
    return web.Response(
        status=401,
        text="Authentication required.\n",
        headers={"WWW-Authenticate": 'Basic realm="readerproxy", charset="UTF-8"'},
    )


# ---- whose request this is ----------------------------------------------------------------------


def reader_key(request: web.Request) -> str:
    """The key a reader's own things are kept under: `user:NAME` when the request logged in,
    else `addr:ADDRESS` of the client (`limits.client_key`)."""
    user = request.get(USER)
    if isinstance(user, str) and user:
        return f"user:{user}"
    return f"addr:{client_key(request.remote or '', request.headers.get(CLIENT_HEADER))}"


def article_signature(body: bytes, secret: bytes | None = None) -> str:
    """HMAC-SHA256 of a save's body with the data directory's secret (`limits.gateway_secret`),
    which only this machine's readerproxy processes know."""
    return hmac.new(secret or gateway_secret(), b"article|" + body, hashlib.sha256).hexdigest()
