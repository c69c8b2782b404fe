"""`http://readerproxy/`: the proxy's own pages, answered by the proxy to any client that uses it.

The name is never resolved (as mitmproxy's `mitm.it` is not): a browser sends every request for it
to its proxy, and `SetupAddon` answers. `readerproxy.internal` is the same with a dot, for clients
that send plain host names direct. The pages:

- `/`: the setup page (phone first): the CA in every format a device takes (`/ca.pem`, DER
  `/ca.crt` and `/ca.cer`, the iOS profile `/readerproxy.mobileconfig`), steps per platform, the
  fingerprint, how to remove it and what trusting it means; the PAC file; the client's reading
  preferences; the site rules; a bookmarklet that brings the reader view back on an original page.
- `/proxy.pac`: the PAC file, pointing at the address the client reached the proxy on.
- `/view?url=…&theme=…`: the target of every preference link in the proxy's reader views: the
  choice is stored for the client (`store.ProxyStore`), then the page is shown again.
- `/rules`, `POST /rules/set` (host, rule=reader|original|none, back, token): the site rules,
  listed and edited.
- `/reader?url=…`: the way back from an original page (the bookmarklet): that page as a reader view.
- `/read…`, `/api/…`, `/static/…`: the reader server itself, reached through the proxy with the
  proxy's login (one login per client) and the client's stored preferences; the client's own
  address goes with it, signed (`limits.CLIENT_HEADER`), for its rate limit and worker share.

`SiteCookiesAddon` keeps readerproxy's own cookies (`rp_theme`, `rp_size`, …, `rp_client`) out of
every Cookie header the proxy forwards to a site: preferences live here, never on the sites.

Preferences are changed by GET (links work in every reader view, whose CSP allows no script of
ours), and only from a top-level navigation, so another site's images or fetches cannot make one;
`/prefs?back=` goes back to readerproxy's own pages only. Site rules apply to every client, so they
change only by POST from readerproxy's own forms, which carry the client's token (`store.rules_token`):
a GET is 405, and a form another site made (a cross-site navigation or post) has no valid token.
"""

from __future__ import annotations

import base64
import datetime
import hmac
import json
import plistlib
import re
import uuid
from collections.abc import Callable, Mapping, Sequence
from http import HTTPStatus
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

import aiohttp
from markupsafe import Markup

from ..web.auth import ARTICLE_HEADER, SAME_SITE_COOKIE, article_signature, configured_credentials
from ..web.download import attachment_headers
from ..web.limits import CLIENT_HEADER, signed_client
from ..web.public import public_of
from ..web.templating import (
    COOKIE_MAX_AGE,
    COOKIE_PREFIX,
    FONTS,
    LINK_MODES,
    PREFERENCE_KEYS,
    SIZE_LABELS,
    SIZES,
    SPACINGS,
    THEMES,
    WIDTHS,
    Preferences,
    preferences,
)
from .addons import (
    LIST_SAVE,
    LOGIN_NOTE,
    READER_MARKER,
    SETUP_HOSTS,
    SETUP_ORIGIN,
    Addon,
    flow_user,
    host_list,
    reader_base,
    recent_view,
    save_scope,
    simple_response,
)
from .flow import BadRequest, Flow, Outcome, Response, header, valid_host
from .http1 import BodyTooLarge
from .lan import qr_svg, share_url
from .pac import PAC_TYPE, pac_text
from .store import (
    ANY_HOST,
    CLIENT_COOKIE,
    RULES,
    Client,
    ProxyStore,
    new_client_cookie,
    rule_host,
    rules_token,
    valid_client_cookie,
)

if TYPE_CHECKING:
    from cryptography import x509

    from ..web.templating import Renderer
    from .settings import Settings
    from .tls import CertificateAuthority

#: The setup page's one script (static/setup-check.js) loads the HTTPS check image, which only a
#: device that trusts the CA can load (`CHECK_URL`).
PAGE_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: "
    "https://readerproxy; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
#: The check step's resource over HTTPS: the proxy answers it inside a TLS connection whose
#: certificate its CA signed, so it loads only on a device that trusts that CA.
CHECK_PATH = "/check"
CHECK_URL = f"https://readerproxy{CHECK_PATH}"
#: The check resource: a small green tick (an image, so that loading it needs no CORS).
CHECK_IMAGE = (
    b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16" width="16" height="16">'
    b'<path d="M3 8.5l3 3 7-7" fill="none" stroke="#1a7f37" stroke-width="2"/></svg>'
)
#: Marks a CONNECT to readerproxy:443 that the proxy serves itself (the check step), in flow.notes.
SETUP_TUNNEL = "setup_tunnel"
PAGE_HEADERS = [
    ("Content-Security-Policy", PAGE_CSP),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
    ("Cache-Control", "no-store"),
]
#: Where site rules change (by POST only, from readerproxy's own forms: `SetupAddon.set_rule`).
RULES_SET = "/rules/set"
#: The largest rules form read (a host name, a rule, a page URL, a token).
FORM_BYTES = 16 * 1024
#: Reader server paths reached through `http://readerproxy/`.
GATEWAY_PATHS = ("/read", "/api/", "/static/", "/favicon.", "/image", "/list")
#: Reader server paths that take a POST (or a DELETE) through the gateway: the reading list's.
GATEWAY_CHANGES = ("/list/", "/api/list")
#: The largest body the gateway passes on (the reading list's forms and JSON are small).
GATEWAY_BODY_BYTES = 64 * 1024
#: Response headers of the reader server passed on by the gateway.
GATEWAY_HEADERS = frozenset(
    {
        "content-type",
        "cache-control",
        "content-security-policy",
        "x-content-type-options",
        "referrer-policy",
        "content-disposition",
        "x-cache",
        "location",
        "set-cookie",
        "retry-after",
        "vary",  # /image's answer depends on Save-Data
    }
)


def is_setup_host(host: str) -> bool:
    return host.lower().rstrip(".") in SETUP_HOSTS


# ---- the certificate in the formats devices take -----------------------------------------------


def fingerprint(cert: x509.Certificate) -> str:
    """The certificate's SHA-256 fingerprint, as devices show it (AA:BB:…)."""
    from cryptography.hazmat.primitives import hashes

    return cert.fingerprint(hashes.SHA256()).hex(":").upper()


def common_name(cert: x509.Certificate) -> str:
    """The certificate's subject common name (what devices list it as)."""
    from cryptography.x509.oid import NameOID

    names = cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    return str(names[0].value) if names else cert.subject.rfc4514_string()


def der(cert: x509.Certificate) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return cert.public_bytes(serialization.Encoding.DER)


def mobileconfig(cert: x509.Certificate) -> bytes:
    """An iOS/iPadOS configuration profile installing the CA (a `com.apple.security.root` payload
    carrying the DER certificate); its identifiers follow from the certificate, so downloading it
    again gives the same profile."""
    digest = fingerprint(cert).replace(":", "").lower()
    name = "readerproxy local CA"
    payload = {
        "PayloadType": "com.apple.security.root",
        "PayloadVersion": 1,
        "PayloadIdentifier": f"org.readerproxy.ca.{digest[:16]}.cert",
        "PayloadUUID": str(uuid.uuid5(uuid.NAMESPACE_URL, f"readerproxy-ca-cert:{digest}")).upper(),
        "PayloadDisplayName": name,
        "PayloadDescription": "Lets readerproxy show reader views of HTTPS pages on this device.",
        "PayloadCertificateFileName": "readerproxy-ca.cer",
        "PayloadContent": der(cert),
    }
    profile = {
        "PayloadType": "Configuration",
        "PayloadVersion": 1,
        "PayloadIdentifier": f"org.readerproxy.ca.{digest[:16]}",
        "PayloadUUID": str(uuid.uuid5(uuid.NAMESPACE_URL, f"readerproxy-ca:{digest}")).upper(),
        "PayloadDisplayName": name,
        "PayloadDescription": (
            "The certificate authority of your readerproxy. Remove this profile to stop trusting it."
        ),
        "PayloadOrganization": "readerproxy",
        "PayloadRemovalDisallowed": False,
        "PayloadContent": [payload],
    }
    return plistlib.dumps(profile, fmt=plistlib.FMT_XML)


def certificate_downloads(ca: CertificateAuthority) -> dict[str, tuple[bytes, str, str]]:
    """Path → (body, content type, file name) of each format of the CA certificate."""
    from .tls import pem

    cert = ca.cert
    return {
        "/ca.pem": (pem(cert), "application/x-pem-file", "readerproxy-ca.pem"),
        "/ca.crt": (der(cert), "application/x-x509-ca-cert", "readerproxy-ca.crt"),
        "/ca.cer": (der(cert), "application/pkix-cert", "readerproxy-ca.cer"),
        "/readerproxy.mobileconfig": (
            mobileconfig(cert),
            "application/x-apple-aspen-config",
            "readerproxy.mobileconfig",
        ),
    }


# ---- helpers ------------------------------------------------------------------------------------


def proxy_address(flow: Flow, settings: Settings) -> tuple[str, int]:
    """The proxy's address as this client reached it (the connection's local end, or the
    pass-through's in a PROXY header), else --host; `--public-url`'s host name before either."""
    local = flow.notes.get("local")
    public = public_of(settings)
    if public is not None:
        if isinstance(local, tuple) and len(local) >= 2:
            return public.host, int(local[1])
        return public.host, int(settings.proxy_port or 0)
    if isinstance(local, tuple) and len(local) >= 2 and local[0] not in ("0.0.0.0", "::"):
        host = str(local[0]).removeprefix("::ffff:")
        return host, int(local[1])
    host = settings.host if settings.host not in ("0.0.0.0", "::", "") else "127.0.0.1"
    return host, int(settings.proxy_port or 0)


def cookies_of(flow: Flow) -> dict[str, str]:
    """The request's cookies by name (the first of each)."""
    jar: dict[str, str] = {}
    for key, value in flow.request.headers:
        if key.lower() != "cookie":
            continue
        for item in value.split(";"):
            name, sep, val = item.strip().partition("=")
            if sep and name and name not in jar:
                jar[name] = val
    return jar


def user_of(credentials: str | None) -> str | None:
    return credentials.partition(":")[0] if credentials else None


def is_top_level(flow: Flow) -> bool:
    """A navigation the user made (or a client that says nothing about it): a change may be made."""
    mode = header(flow.request.headers, "sec-fetch-mode")
    dest = header(flow.request.headers, "sec-fetch-dest")
    return (mode in (None, "navigate")) and (dest in (None, "document"))


def page_url(value: str | None) -> str | None:
    """An http(s) URL with a valid host, else None."""
    if not value:
        return None
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname or not valid_host(parts.hostname):
        return None
    return value


def own_page(value: str | None) -> str | None:
    """`value` as one of readerproxy's own pages (`http://readerproxy/…`, or a path on it), else
    None: where `/prefs?back=` may send a client (any http(s) URL was an open redirect)."""
    if not value:
        return None
    parts = urlsplit(value)
    if parts.scheme or parts.netloc:
        if parts.scheme != "http" or (parts.hostname or "") not in SETUP_HOSTS or parts.port is not None:
            return None
    elif not value.startswith("/") or value.startswith("//") or "\\" in value:
        return None
    rest = (
        (parts.path or "/")
        + (f"?{parts.query}" if parts.query else "")
        + (f"#{parts.fragment}" if parts.fragment else "")
    )
    return SETUP_ORIGIN + rest


def with_query_item(url: str, item: str) -> str:
    base, sep, fragment = url.partition("#")
    joined = f"{base}&{item}" if "?" in base else f"{base}?{item}"
    return joined + (sep + fragment if sep else "")


def redirect(location: str, headers: Sequence[tuple[str, str]] = ()) -> Response:
    return Response(
        303,
        "See Other",
        [("Location", location), ("Cache-Control", "no-store"), ("Content-Length", "0"), *headers],
        b"",
    )


def preference_cookies(values: Mapping[str, str]) -> list[tuple[str, str]]:
    """Set-Cookie headers mirroring the stored preferences on the readerproxy origin."""
    return [
        ("Set-Cookie", f"{name}={value}; Path=/; Max-Age={COOKIE_MAX_AGE}; SameSite=Lax")
        for name, value in values.items()
    ]


def bookmarklet() -> str:
    """A javascript: URL showing the current page as a reader view through the proxy."""
    return (
        "javascript:void(location.href='" + SETUP_ORIGIN + "/reader?url='+encodeURIComponent(location.href))"
    )


#: The setup page's platform sections (their <summary>, each one's steps in templates/setup.html) by
#: what a User-Agent says; the first that matches is the visitor's (Android before Linux: an Android
#: browser names both).
PLATFORMS = (
    ("Android", re.compile(r"\bAndroid\b")),
    ("iPhone and iPad", re.compile(r"\b(?:iPhone|iPad|iPod)\b")),
    ("Firefox (Windows, macOS, Linux)", re.compile(r"\bFirefox/")),
    ("Chrome or Edge on Windows", re.compile(r"\bWindows\b")),
    ("Chrome or Safari on macOS", re.compile(r"\bMacintosh\b")),
    ("Chrome or Chromium on Linux", re.compile(r"\b(?:Linux|X11|CrOS)\b")),
)


def platform_of(user_agent: str | None) -> str | None:
    """The setup page's section for the system a User-Agent names, or None."""
    return next((name for name, pattern in PLATFORMS if pattern.search(user_agent or "")), None)


def platforms_for(platform: str | None) -> list[str]:
    """The setup page's platform sections in order: the visitor's own system first (the template
    opens it), the others below it as `PLATFORMS` lists them, one tap away."""
    names = [name for name, _ in PLATFORMS]
    return sorted(names, key=lambda name: name != platform)


class SetupAddon(Addon):
    """Answers every request for `SETUP_HOSTS` (see the module's docstring)."""

    def __init__(
        self,
        settings: Settings,
        renderer: Renderer,
        store: ProxyStore,
        ca: CertificateAuthority | None,
        config_rules: Mapping[str, Sequence[str]],
    ) -> None:
        self.settings = settings
        self.renderer = renderer
        self.store = store
        self.ca = ca
        self.config_rules = config_rules
        self.credentials = configured_credentials(settings)
        self.downloads = certificate_downloads(ca) if ca is not None else {}
        self.reader_base = reader_base(settings)  # where the gateway reaches the reader server

    def client(self, flow: Flow) -> Client:
        """Who this flow is from (see `store.Client`)."""
        address = flow.client.rpartition(":")[0] or flow.client
        cookie = valid_client_cookie(cookies_of(flow).get(CLIENT_COOKIE))
        return Client(address.strip("[]"), flow_user(flow) or user_of(self.credentials), cookie)

    async def request(self, flow: Flow) -> None:
        request = flow.request
        if not is_setup_host(request.host):
            return
        flow.outcome = Outcome.READER
        flow.reader_rule = "never"
        if request.method == "CONNECT":
            if self.ca is not None and request.port == 443:  # https://readerproxy/: the check step
                flow.notes[SETUP_TUNNEL] = True  # intercepted and answered here (server._tunnel)
                return
            flow.response = simple_response(
                400, "Bad Request", f"Open {SETUP_ORIGIN}/ (plain http): it is answered by the proxy.\n"
            )
            return
        path, _, query_string = request.path.partition("?")
        client = self.client(flow)
        if request.method == "POST" and path == RULES_SET:
            response = await self.posted_rule(flow, client)
        elif request.method == "POST" and path == LIST_SAVE:
            response = await self.posted_save(flow, client)
        elif request.method in ("POST", "DELETE") and path.startswith(GATEWAY_CHANGES):
            response = await self.gateway(flow, client)
        elif request.method not in ("GET", "HEAD"):
            flow.response = simple_response(
                405, "Method Not Allowed", "GET only (POST for /rules/set).\n", [("Allow", "GET, HEAD")]
            )
            return
        else:
            query = dict(parse_qsl(query_string, keep_blank_values=True))
            response = await self.answer(flow, path, query, client)
        if client.user is None and client.cookie is None:  # name this client from now on
            response.headers.append(
                (
                    "Set-Cookie",
                    f"{CLIENT_COOKIE}={new_client_cookie()}; Path=/; Max-Age={COOKIE_MAX_AGE}; "
                    "SameSite=Lax; HttpOnly",
                )
            )
        if request.method == "HEAD":
            response.body = b""
        flow.response = response

    async def answer(self, flow: Flow, path: str, query: dict[str, str], client: Client) -> Response:
        """The answer for one path of the setup host."""
        if path in ("", "/"):
            return await self.setup_page(flow, client)
        if path == CHECK_PATH:  # over https only on a device that trusts the CA
            return Response(
                200,
                "OK",
                [
                    ("Content-Type", "image/svg+xml"),
                    ("Cache-Control", "no-store"),
                    ("X-Content-Type-Options", "nosniff"),
                ],
                CHECK_IMAGE,
            )
        if path in self.downloads:
            body, content_type, name = self.downloads[path]
            return Response(200, "OK", attachment_headers(content_type, name), body)
        if path in ("/ca.pem", "/ca.crt", "/ca.cer", "/readerproxy.mobileconfig"):
            return simple_response(
                404,
                "Not Found",
                "HTTPS interception is off (--intercept-https): there is no CA to install.\n",
            )
        if path == "/proxy.pac":
            host, port = proxy_address(flow, self.settings)
            return simple_response(
                200,
                "OK",
                pac_text(host, port),
                [("Cache-Control", "no-store")],
                content_type=PAC_TYPE,
            )
        if path == "/view":
            return await self.view(flow, query, client)
        if path == "/prefs":
            return await self.save_prefs(flow, query, client, own_page(query.get("back")))
        if path == "/rules":
            return await self.rules_page(flow, client)
        if path == RULES_SET:  # a change by GET is what any other site could make a client do
            return simple_response(
                405,
                "Method Not Allowed",
                "Site rules change from readerproxy's own forms (POST) only.\n",
                [("Allow", "POST")],
            )
        if path == "/reader":
            return self.way_back(query)
        if path.startswith(GATEWAY_PATHS):
            return await self.gateway(flow, client)
        return simple_response(404, "Not Found", "No such page here.\n")

    # ---- preferences ----------------------------------------------------------------------------
    async def view(self, flow: Flow, query: dict[str, str], client: Client) -> Response:
        """A preference link of a proxied reader view: store the choice, show the page again.
        Anything else a reader view links to under /read (formats, algorithms, the overlay) is
        the reader server's."""
        url = page_url(query.get("url"))
        others = set(query) - {"url", *PREFERENCE_KEYS}
        if url is None or others:
            return redirect(f"{SETUP_ORIGIN}/read?{urlencode(query)}")
        return await self.save_prefs(flow, query, client, url)

    async def save_prefs(
        self, flow: Flow, query: Mapping[str, str], client: Client, back: str | None
    ) -> Response:
        """Store the preferences in `query` (over the stored ones), then go `back` (a page the
        caller checked: the proxied page of a reader view's link, or one of readerproxy's own)."""
        target = page_url(back) or f"{SETUP_ORIGIN}/#prefs"
        if not is_top_level(flow):
            return simple_response(403, "Forbidden", "Preferences change from a page you open only.\n")
        stored = await self.store.preferences(client)
        prefs, changed = preferences(query, stored)
        values = prefs.cookies()
        if changed:
            await self.store.save_preferences(client, values)
        return redirect(target, preference_cookies(values))

    async def client_prefs(self, client: Client) -> Preferences:
        return preferences({}, await self.store.preferences(client))[0]

    # ---- site rules -------------------------------------------------------------------------------
    async def posted_rule(self, flow: Flow, client: Client) -> Response:
        """A site rule's form (`POST /rules/set`, url-encoded, at most `FORM_BYTES`)."""
        if flow.read_body is None:
            return simple_response(400, "Bad Request", "No form.\n")
        try:
            body = await flow.read_body(FORM_BYTES)
        except BodyTooLarge:
            return simple_response(413, "Content Too Large", "The form is too large.\n")
        except BadRequest as exc:
            return simple_response(400, "Bad Request", f"{exc.message}\n")
        form = dict(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))
        return await self.set_rule(flow, form, client)

    async def set_rule(self, flow: Flow, form: dict[str, str], client: Client) -> Response:
        """Add, change or remove a site rule, from a form of readerproxy's own: its token must be
        this client's, for any host (the rules page) or for this one (a reader view of it)."""
        host = rule_host(form.get("host") or "")
        rule = form.get("rule") or ""
        back = page_url(form.get("back"))
        if not is_top_level(flow):
            return simple_response(403, "Forbidden", "Rules change from a page you open only.\n")
        if not host or not valid_host(host) or rule not in (*RULES, "none"):
            return simple_response(400, "Bad Request", "Give host=NAME and rule=reader|original|none.\n")
        token = (form.get("token") or "").encode("ascii", "replace")
        if not any(
            hmac.compare_digest(token, rules_token(client, scope).encode()) for scope in (ANY_HOST, host)
        ):
            return simple_response(
                403,
                "Forbidden",
                "Site rules change from readerproxy's own forms only; this one is not, or is out of "
                f"date (a new address?): open {SETUP_ORIGIN}/rules and choose again.\n",
            )
        await self.store.set_rule(host, None if rule == "none" else rule)
        if back is not None:
            back_host = (urlsplit(back).hostname or "").lower()
            if back_host == host or back_host.endswith("." + host):
                return redirect(back)
        return redirect(f"{SETUP_ORIGIN}/rules")

    async def posted_save(self, flow: Flow, client: Client) -> Response:
        """A reader view's Save (`POST /list/save`): from a proxied view, its form carries the
        client's token for the view's site (`addons.save_scope`) and may save a page of that site
        only, then goes to the reader server as this client; from the reader server's own pages
        (`http://readerproxy/read`), it has no token and the reader server judges where it came
        from (`web/list_routes.py`)."""
        if flow.read_body is None:
            return simple_response(400, "Bad Request", "No form.\n")
        try:
            body = await flow.read_body(FORM_BYTES)
        except BodyTooLarge:
            return simple_response(413, "Content Too Large", "The form is too large.\n")
        except BadRequest as exc:
            return simple_response(400, "Bad Request", f"{exc.message}\n")
        form = dict(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))
        if "token" not in form:
            return await self.gateway(flow, client, body)
        host = rule_host(urlsplit(form.get("url") or "").hostname or "")
        token = form["token"].encode("ascii", "replace")
        if not (
            is_top_level(flow)
            and host
            and hmac.compare_digest(token, rules_token(client, save_scope(host)).encode())
        ):
            return simple_response(
                403,
                "Forbidden",
                "Pages are saved from readerproxy's own Save buttons only; this one is not, or is out "
                "of date (a new address?): open the page again and save.\n",
            )
        url = form.get("url") or ""
        view = recent_view(client, url)
        if view is not None:  # saved as the reader view showed it: nothing fetched again
            return await self.save_view(flow, client, url, form.get("tags") or "", view)
        kept = urlencode({key: value for key, value in form.items() if key in ("url", "tags")})
        return await self.gateway(flow, client, kept.encode(), trusted=True)

    async def save_view(
        self, flow: Flow, client: Client, url: str, tags: str, view: dict[str, Any]
    ) -> Response:
        """The reader server keeps the extraction this client's reader view of `url` showed
        (`POST /api/list` with the signed article, `auth.article_signature`); then the saved
        copy, as after any Save."""
        body = json.dumps({"url": url, "tags": tags, "article": view}, ensure_ascii=False).encode("utf-8")
        headers = {"Content-Type": "application/json", ARTICLE_HEADER: article_signature(body)}
        answer = await self.gateway(flow, client, body, trusted=True, path="/api/list", extra=headers)
        if answer.status not in (200, 201):
            return answer
        try:
            entry_id = str(json.loads(answer.body or b"")["id"])
        except (ValueError, KeyError, TypeError):
            return simple_response(502, "Bad Gateway", "The reader server did not answer as expected.\n")
        return redirect(f"{SETUP_ORIGIN}/list/{quote(entry_id)}?saved=1")

    def way_back(self, query: dict[str, str]) -> Response:
        """The bookmarklet's target: the page as a reader view, once."""
        url = page_url(query.get("url"))
        if url is None:
            return redirect(f"{SETUP_ORIGIN}/")
        if url.startswith("https:") and self.ca is None:  # the proxy cannot see inside: the reader server
            return redirect(f"{SETUP_ORIGIN}/read?url={quote(url, safe='')}")
        return redirect(with_query_item(url, READER_MARKER))

    async def rules_page(self, flow: Flow, client: Client) -> Response:
        rules = sorted((await self.store.rules()).items())
        return self.page(
            "rules.html",
            await self.client_prefs(client),
            rules=rules,
            config_rules=self.config_rules,
            token=rules_token(client, ANY_HOST),  # in its forms: readerproxy's own page
        )

    # ---- the setup page ---------------------------------------------------------------------------
    async def setup_page(self, flow: Flow, client: Client) -> Response:
        """The setup page through the proxy: the check step says the device is connected."""
        host, port = proxy_address(flow, self.settings)
        prefs = await self.client_prefs(client)
        return self.page(
            "setup.html",
            prefs,
            **self.setup_context(host, port, header(flow.request.headers, "user-agent")),
            through_proxy=True,
            choices=self.choices(prefs),
            rules_count=len(await self.store.rules()),
        )

    def direct_page(self, host: str, user_agent: str | None) -> Response:
        """The setup page as the reader server answers it at `/setup` (`--lan`'s QR code), to a
        device that does not use the proxy yet: its settings and the certificate; the check step
        says it is not through the proxy yet."""
        if host in ("0.0.0.0", "::", ""):  # the address the device reached is the proxy's too
            host = "127.0.0.1"
        port = int(self.settings.proxy_port or 0)
        return self.page(
            "setup.html", Preferences(), **self.setup_context(host, port, user_agent), through_proxy=False
        )

    def setup_context(self, host: str, port: int, user_agent: str | None) -> dict[str, Any]:
        """What the setup page shows for a proxy reached on `host:port` and a visitor's system."""
        shown = f"[{host}]" if ":" in host else host
        cert: dict[str, Any] | None = None
        if self.ca is not None:
            ca_cert = self.ca.cert
            cert = {
                "fingerprint": fingerprint(ca_cert),
                "subject": common_name(ca_cert),
                "expires": ca_cert.not_valid_after_utc.date().isoformat(),
            }
        platform = platform_of(user_agent)
        reader_port = urlsplit(self.reader_base).port or 80
        share = share_url(self.settings, reader_port)
        return {
            "proxy_host": shown,
            "proxy_port": port,
            "origin": SETUP_ORIGIN,
            "alias": f"http://{SETUP_HOSTS[1]}",
            "pac_url": f"{SETUP_ORIGIN}/proxy.pac",
            "reader_pac_url": public.url("/proxy.pac")
            if (public := public_of(self.settings)) is not None
            else f"http://{shown}:{reader_port}/proxy.pac",
            "intercepting": self.ca is not None,
            "cert": cert,
            "auth": self.credentials is not None,
            "bookmarklet": bookmarklet(),
            "year": datetime.date.today().year,
            "platforms": platforms_for(platform),
            "yours": platform,
            # without interception, what a blocked HTTPS site looks like (the template's note)
            "blocked_note": bool(self.settings.block_hosts or self.settings.block_lists),
            "check_url": CHECK_URL,
            # the QR code of the setup page for a device not on the proxy yet (the landing page's)
            "setup_url": share,
            "setup_qr": Markup(qr_svg(share)) if share else None,
        }

    @staticmethod
    def choices(prefs: Preferences) -> list[tuple[str, str, list[tuple[str, str]], str]]:
        """The reading preferences' choices, each with the client's current value."""
        options = [
            ("theme", "Theme", [(t, t.capitalize()) for t in THEMES]),
            ("size", "Text size", [(s, SIZE_LABELS[s]) for s in SIZES]),
            ("font", "Font", [("serif", "Serif"), ("sans", "Sans")] if FONTS else []),
            ("width", "Width", [(w, w.capitalize()) for w in WIDTHS]),
            ("spacing", "Line spacing", [(s, s.capitalize()) for s in SPACINGS]),
            ("lite", "Images", [("0", "Show"), ("1", "Hide (Lite)")]),
            (
                "links",
                "Links open",
                [(m, {"reader": "In reader", "original": "On the site"}[m]) for m in LINK_MODES],
            ),
        ]
        current = prefs.cookies()
        return [(key, label, values, current[COOKIE_PREFIX + key]) for key, label, values in options]

    def page(self, template: str, prefs: Preferences, **context: Any) -> Response:
        html = self.renderer.env.get_template(template).render(prefs=prefs, **context)
        return Response(
            200, "OK", [("Content-Type", "text/html; charset=utf-8"), *PAGE_HEADERS], html.encode("utf-8")
        )

    # ---- the reader server through the proxy ----------------------------------------------------
    async def gateway(
        self,
        flow: Flow,
        client: Client,
        body: bytes | None = None,
        *,
        trusted: bool = False,
        path: str | None = None,
        extra: Mapping[str, str] | None = None,
    ) -> Response:
        """A reader server route, with the proxy's login and the client's stored preferences (the
        browser's own rp_* cookies on this origin, when they differ, are the newer choice); `path`
        and `extra` headers for a request of the proxy's own (a save with its view, `save_view`)."""
        request = flow.request
        path = path or request.path
        if path.startswith("/static/"):
            name = path.removeprefix("/static/").partition("?")[0]
            asset = self.renderer.static.get(name)
            if asset is None:
                return simple_response(404, "Not Found", "No such file.\n")
            return Response(
                200,
                "OK",
                [
                    ("Content-Type", asset.content_type),
                    ("Cache-Control", "public, max-age=31536000, immutable"),
                ],
                asset.body,
            )
        stored = await self.store.preferences(client)
        jar = cookies_of(flow)
        browser = {
            k: v
            for k, v in jar.items()
            if k.startswith(COOKIE_PREFIX) and k not in (CLIENT_COOKIE, SAME_SITE_COOKIE)
        }
        merged = {**stored, **browser}
        if browser and merged != stored and is_top_level(flow):
            values = preferences({}, merged)[0].cookies()
            await self.store.save_preferences(client, values)
            merged = values
        headers = {"Accept": header(request.headers, "accept") or "*/*", "Accept-Encoding": "identity"}
        if language := header(request.headers, "accept-language"):
            headers["Accept-Language"] = language
        if save_data := header(request.headers, "save-data"):  # /image halves widths, as on /read
            headers["Save-Data"] = save_data
        if merged:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in merged.items())
        # the reader server with this client's own login (one reading list per reader, `flow_user`)
        login = flow.notes.get(LOGIN_NOTE) or self.credentials
        if isinstance(login, str):
            headers["Authorization"] = "Basic " + base64.b64encode(login.encode()).decode()
        # this client's own rate limit and worker share there, not 127.0.0.1's (`limits.client_key`)
        headers[CLIENT_HEADER] = signed_client(client.address)
        base = self.reader_base
        if request.method in ("POST", "DELETE"):  # a reading list change (`GATEWAY_CHANGES`)
            if body is None:
                if flow.read_body is None:
                    return simple_response(400, "Bad Request", "No body.\n")
                try:
                    body = await flow.read_body(GATEWAY_BODY_BYTES)
                except BodyTooLarge:
                    return simple_response(413, "Content Too Large", "The body is too large.\n")
                except BadRequest as exc:
                    return simple_response(400, "Bad Request", f"{exc.message}\n")
            changes = self._change_headers(flow, jar, base, trusted)
            if "Cookie" in changes and "Cookie" in headers:
                changes["Cookie"] = f"{headers['Cookie']}; {changes['Cookie']}"
            headers.update(changes)
        headers.update(extra or {})
        try:
            async with (
                aiohttp.ClientSession(trust_env=False, auto_decompress=False) as session,
                session.request(
                    request.method, base + path, headers=headers, data=body, allow_redirects=False
                ) as answer,
            ):
                body = await answer.read()
                kept: list[tuple[str, str]] = []
                saved: dict[str, str] = {}
                for key, value in answer.headers.items():
                    name = key.lower()
                    if name not in GATEWAY_HEADERS:
                        continue
                    if name == "location" and value.startswith(base):
                        value = SETUP_ORIGIN + value[len(base) :]
                    if name == "set-cookie":
                        cookie_name, _, rest = value.partition("=")
                        if cookie_name.startswith(COOKIE_PREFIX):
                            saved[cookie_name] = rest.partition(";")[0]
                    kept.append((key, value))
                if saved and is_top_level(flow):
                    await self.store.save_preferences(
                        client, preferences({}, {**merged, **saved})[0].cookies()
                    )
                reason = answer.reason or HTTPStatus(answer.status).phrase
                return Response(answer.status, reason, kept, body)
        except (aiohttp.ClientError, TimeoutError) as exc:
            return simple_response(
                502, "Bad Gateway", f"The reader server did not answer: {type(exc).__name__}.\n"
            )

    @staticmethod
    def _change_headers(flow: Flow, jar: Mapping[str, str], base: str, trusted: bool) -> dict[str, str]:
        """The headers of a reading list change sent on to the reader server: its body's type,
        and, unless readerproxy checked it already (`trusted`), what the browser said of where it
        came from: `Sec-Fetch-Site`, `Origin` (readerproxy's own named as the reader server's, so
        that it counts as its own pages') and the SameSite cookie (`auth.SAME_SITE_COOKIE`)."""
        request = flow.request
        headers = {
            "Content-Type": header(request.headers, "content-type") or "application/x-www-form-urlencoded"
        }
        if trusted:
            return headers
        if site := header(request.headers, "sec-fetch-site"):
            headers["Sec-Fetch-Site"] = site
        if origin := header(request.headers, "origin"):
            own = origin != "null" and is_setup_host(urlsplit(origin).hostname or "")
            headers["Origin"] = base if own else origin
        if jar.get(SAME_SITE_COOKIE) == "1":
            headers["Cookie"] = "; ".join(filter(None, (headers.get("Cookie"), f"{SAME_SITE_COOKIE}=1")))
        return headers


#: readerproxy's own cookie names (the preferences, and the client's name on `readerproxy`): they
#: belong to readerproxy's origins only, and never go to a site.
OWN_COOKIES = frozenset({*(COOKIE_PREFIX + key for key in PREFERENCE_KEYS), CLIENT_COOKIE})


def without_own_cookies(value: str) -> str:
    """A Cookie header's value without readerproxy's own cookies (`OWN_COOKIES`)."""
    kept = [item for item in value.split(";") if item.strip().partition("=")[0] not in OWN_COOKIES]
    return ";".join(kept).strip()


class SiteCookiesAddon(Addon):
    """Keeps readerproxy's preference cookies from the sites: a proxied reader view lives on the
    site's origin, so a `rp_*` cookie written there (by an older reader.js, or by hand) would be sent
    to the site with every request; the proxy takes them out of every Cookie header it forwards
    (requests for the reader server itself keep them: they are its preferences)."""

    def __init__(self, is_own: Callable[[Flow], bool]) -> None:
        self.is_own = is_own

    async def request(self, flow: Flow) -> None:
        headers = flow.request.headers
        if self.is_own(flow) or not any(key.lower() == "cookie" for key, _ in headers):
            return
        cleaned = [
            (key, without_own_cookies(value) if key.lower() == "cookie" else value) for key, value in headers
        ]
        flow.request.headers = [(key, value) for key, value in cleaned if key.lower() != "cookie" or value]


def config_rules(settings: Settings) -> dict[str, tuple[str, ...]]:
    """The site rules of the config file (`reader_hosts`, `direct_hosts`), listed on /rules."""
    return {"reader": host_list(settings.reader_hosts), "original": host_list(settings.direct_hosts)}
