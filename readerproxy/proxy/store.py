"""What proxy clients choose in the browser, kept in the cache backend: reading preferences per
client, and site rules (always the reader view / always the original) for every client.

Both live in the layered cache (`Reader.cache`): with SQLite or Redis they are read from the
backend on every use, so a choice made through one server process applies in all of them at once,
and both outlast a restart; with `--cache memory` they last as long as the process. A copy in
this process answers when the cache is unavailable.

A client is known by the proxy user with `--auth` (one login, on every site and on
`http://readerproxy/`), else by its address; a cookie set on `readerproxy` names the client too,
so its preferences follow it when its address changes (a phone on another network).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..web.limits import gateway_secret

if TYPE_CHECKING:
    from ..web.cache import LayeredCache

PREFS_PREFIX = "proxy:prefs:"
RULES_KEY = "proxy:rules"
#: The cookie on `readerproxy` that names a client when there is no proxy login.
CLIENT_COOKIE = "rp_client"
#: Site rules: the reader view whenever the page has text, or always the original.
RULES = ("reader", "original")
MAX_RULES = 2000
#: The scope of a rules token good for every host: only readerproxy's own pages carry one.
ANY_HOST = "*"


@dataclass(frozen=True)
class Client:
    """Who is browsing: the proxy user (with --auth), or the address and, on readerproxy's own
    pages, the client cookie."""

    address: str
    user: str | None = None
    cookie: str | None = None

    def store_keys(self) -> list[str]:
        """The store keys of this client, most specific first."""
        if self.user is not None:
            return [f"user:{self.user}"]
        keys = [f"addr:{self.address}"]
        if self.cookie:
            keys.insert(0, f"client:{self.cookie}")
        return keys


def rule_host(value: str) -> str:
    """The host name a site rule is kept under: lower case, no final dot, no `www.`."""
    return value.strip().lower().rstrip(".").removeprefix("www.")


def rules_token(client: Client, scope: str) -> str:
    """The token a form must carry to change a site rule (`setup.SetupAddon.set_rule`): an HMAC,
    with the data directory's secret, of who the client is (its proxy login and address) and of
    what the form may change: `ANY_HOST` on readerproxy's own rules page, one host (`rule_host`) in
    a reader view on that site's origin. Another site cannot know it, so it cannot make a client
    change a rule; a site's own pages, which can read its reader views, can change its own rule
    only. A client whose address changed reloads the form (it is refused with a note)."""
    identity = f"rules|{client.user or ''}|{client.address}|{scope}".encode("utf-8", "surrogateescape")
    return hmac.new(gateway_secret(), identity, hashlib.sha256).hexdigest()[:32]


def new_client_cookie() -> str:
    return secrets.token_urlsafe(18)


def valid_client_cookie(value: str | None) -> str | None:
    """The cookie's value when it looks like one readerproxy set, else None."""
    if value and 16 <= len(value) <= 64 and all(c.isalnum() or c in "-_" for c in value):
        return value
    return None


class ProxyStore:
    """Preferences per client and site rules, in the cache backend (see the module's docstring)."""

    def __init__(self, cache: LayeredCache | None) -> None:
        self.cache = cache
        self._local: dict[str, bytes] = {}

    async def _get(self, key: str) -> Any:
        raw: bytes | None = None
        if self.cache is not None:
            raw = await self.cache.get(key, skip_memory=self.cache.backend is not None)
        if raw is None:
            raw = self._local.get(key)
        if raw is None:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            return None

    async def _set(self, key: str, value: Any) -> None:
        raw = json.dumps(value, sort_keys=True).encode("utf-8")
        self._local[key] = raw
        if self.cache is not None:
            await self.cache.set(key, raw, None)

    # ---- preferences ----------------------------------------------------------------------------
    async def preferences(self, client: Client) -> dict[str, str]:
        """The stored preference values (`rp_<key>` cookie names to values) of a client; when only
        its cookie knows them (a new address), they are bound to the address as well."""
        keys = client.store_keys()
        for index, key in enumerate(keys):
            stored = await self._get(PREFS_PREFIX + key)
            if isinstance(stored, dict):
                values = {str(k): str(v) for k, v in stored.items()}
                if index == 0 and len(keys) > 1:
                    address_key = PREFS_PREFIX + keys[-1]
                    if await self._get(address_key) != values:
                        await self._set(address_key, values)
                return values
        return {}

    async def save_preferences(self, client: Client, values: dict[str, str]) -> None:
        """Store a client's preferences under each of its keys."""
        for key in client.store_keys():
            await self._set(PREFS_PREFIX + key, values)

    # ---- site rules -----------------------------------------------------------------------------
    async def rules(self) -> dict[str, str]:
        """Every site rule: host → "reader" | "original"."""
        stored = await self._get(RULES_KEY)
        if not isinstance(stored, dict):
            return {}
        return {str(host): str(rule) for host, rule in stored.items() if rule in RULES}

    async def set_rule(self, host: str, rule: str | None) -> None:
        """Add, change or (rule None) remove the rule of a host."""
        rules = await self.rules()
        if rule is None:
            rules.pop(host, None)
        elif rule in RULES and (host in rules or len(rules) < MAX_RULES):
            rules[host] = rule
        await self._set(RULES_KEY, rules)

    async def rule_for(self, host: str) -> str | None:
        """The rule of a host, or of the nearest parent domain that has one."""
        rules = await self.rules()
        if not rules:
            return None
        name = host.lower().rstrip(".")
        while name:
            if name in rules:
                return rules[name]
            _, dot, name = name.partition(".")
            if not dot:
                return None
        return None
