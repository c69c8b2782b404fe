"""Whose request this is: the reader's login (`--auth`, or one line of `--auth-file` per reader),
else the client the reader server already tells apart (`limits.client_key`: the address seen, or
proxy mode's signed client address).

`basic_user` checks an `Authorization: Basic` header against every configured login in constant
time per login and answers the user's name; `reader_key` is the key of a reader's own things (the
reading list, `readinglist.py`): `user:NAME` with a login, `addr:ADDRESS` without one, the same
strings proxy mode keeps a client's preferences under (`proxy/store.Client.store_keys`).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from collections.abc import Sequence

from aiohttp import web

from .limits import CLIENT_HEADER, client_key, gateway_secret

#: A SameSite=Strict cookie the reading list's pages set: a browser sends it with requests our own
#: pages make only, so it vouches for a form POST whose origin the browser hid (`list_routes`);
#: proxy mode's gateway passes it on (`proxy/setup.py`).
SAME_SITE_COOKIE = "rp_same"
#: The header of a save that proxy mode's gateway makes with the extraction a proxied reader view
#: showed (`list_routes.api_save`): the body's signature (`article_signature`).
ARTICLE_HEADER = "X-Readerproxy-Article"
#: The request's slot for the user `basic_user` found (set by the server's auth middleware).
USER = web.RequestKey("user", str)


def basic_user(authorization: str | None, logins: Sequence[str]) -> str | None:
    """The user of the login an `Authorization: Basic` header carries, when it is one of `logins`
    ("USER:PASS" each); None otherwise. Every login is compared, whichever matches."""
    scheme, _, token = (authorization or "").strip().partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        given = base64.b64decode(token.strip(), validate=True)
    except (binascii.Error, ValueError):
        return None
    found: str | None = None
    for login in logins:
        if hmac.compare_digest(given, login.encode("utf-8")) and found is None:
            found = login.partition(":")[0]
    return found


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
