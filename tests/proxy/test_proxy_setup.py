"""Proxy mode's own pages (`http://readerproxy/`, `readerproxy/proxy/setup.py`), the PAC file,
preferences that follow the client, site rules from the browser, and no reader view of readerproxy
itself. aiohttp through the proxy as the client; the browser tests are in
test_proxy_setup_browser.py."""

from __future__ import annotations

import contextlib
import html
import json
import plistlib
import re
import shutil
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import aiohttp
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from support.reader_server import free_port, serve, test_settings
from support.upstream import Upstream
from test_proxy import HTML_ACCEPT, RunningProxy, running_proxy, site

from readerproxy.proxy.addons import MARKER, READER_MARKER, RulesAddon, same_origin_links
from readerproxy.proxy.pac import pac_file, pac_text
from readerproxy.proxy.setup import SETUP_ORIGIN, SetupAddon, mobileconfig
from readerproxy.proxy.store import ANY_HOST, Client, ProxyStore, rules_token
from readerproxy.proxy.tls import CertificateAuthority
from readerproxy.web.limits import CLIENT_HEADER, SECRET_FILE, load_secret, signed_client

SETUP = SETUP_ORIGIN


@contextlib.asynccontextmanager
async def setup_proxy(ca: CertificateAuthority | None = None, **changes: Any) -> AsyncIterator[RunningProxy]:
    """`running_proxy`, told the reader server's real port (its settings say 0: an ephemeral port)."""
    async with running_proxy(ca, **changes) as running:
        port = int(running.server.base.rsplit(":", 1)[1])
        for addon in running.proxy.addons:
            if isinstance(addon, SetupAddon):
                addon.reader_base = running.server.base
            elif isinstance(addon, RulesAddon):
                addon.own_port = port
        yield running


@pytest.fixture
async def proxy() -> AsyncIterator[RunningProxy]:
    async with setup_proxy() as running:
        yield running


async def get(
    http: aiohttp.ClientSession, proxy: RunningProxy, url: str, **headers: str
) -> tuple[int, dict[str, str], bytes]:
    """A navigation through the proxy: status, headers, body (redirects not followed)."""
    async with http.get(
        url, proxy=proxy.url, headers={"Accept": HTML_ACCEPT, **headers}, allow_redirects=False
    ) as r:
        return r.status, dict(r.headers), await r.read()


_FORM = re.compile(r'<form class="inline-form" method="post" action="([^"]+)">(.*?)</form>', re.S)
_HIDDEN = re.compile(r'<input type="hidden" name="(\w+)" value="([^"]*)">')


def rule_forms(page: str) -> list[tuple[str, dict[str, str], str]]:
    """The site-rule forms of a page: action, hidden fields, the button's text."""
    found = []
    for action, inner in _FORM.findall(page):
        fields = {name: html.unescape(value) for name, value in _HIDDEN.findall(inner)}
        button = re.sub(r"<[^>]+>", "", inner.rsplit("<button", 1)[1].split(">", 1)[1]).strip()
        found.append((html.unescape(action), fields, html.unescape(button)))
    return found


async def post(
    http: aiohttp.ClientSession, proxy: RunningProxy, url: str, form: dict[str, str], **headers: str
) -> tuple[int, dict[str, str], bytes]:
    """A form posted through the proxy as a navigation: status, headers, body (no redirects)."""
    async with http.post(
        url, data=form, proxy=proxy.url, headers={"Accept": HTML_ACCEPT, **headers}, allow_redirects=False
    ) as r:
        return r.status, dict(r.headers), await r.read()


async def rules_token_of(http: aiohttp.ClientSession, proxy: RunningProxy) -> str:
    """This client's token from the rules page's add form."""
    _, _, body = await get(http, proxy, f"{SETUP}/rules")
    return re.search(r'name="token" value="([^"]+)"', body.decode()).group(1)  # type: ignore[union-attr]


async def set_rule(http: aiohttp.ClientSession, proxy: RunningProxy, host: str, rule: str) -> int:
    """A site rule set as the rules page's form sets it; the answer's status."""
    form = {"host": host, "rule": rule, "token": await rules_token_of(http, proxy)}
    status, _, _ = await post(http, proxy, f"{SETUP}/rules/set", form)
    return status


# ---- the PAC file -------------------------------------------------------------------------------

PAC_HARNESS = """
const ip = (s) => s.split('.').reduce((a, b) => a * 256 + Number(b), 0);
globalThis.isPlainHostName = (h) => h.indexOf('.') < 0;
globalThis.dnsDomainIs = (h, d) => h.length >= d.length && h.slice(-d.length) === d;
globalThis.isInNet = (h, net, mask) => {
  if (!/^\\d+\\.\\d+\\.\\d+\\.\\d+$/.test(h)) throw new Error('isInNet on a name resolves it: ' + h);
  return ((ip(h) & ip(mask)) >>> 0) === ((ip(net) & ip(mask)) >>> 0);
};
eval(require('fs').readFileSync(process.argv[1], 'utf8'));
const out = {};
for (const host of JSON.parse(process.argv[2])) out[host] = FindProxyForURL('http://' + host + '/', host);
console.log(JSON.stringify(out));
"""

DIRECT_HOSTS = [
    "localhost",
    "app.localhost",
    "127.0.0.1",
    "127.9.9.9",
    "10.1.2.3",
    "172.16.0.1",
    "172.31.255.254",
    "192.168.1.20",
    "169.254.10.10",
    "intranet",
    "nas",
    "[::1]",
    "[fd12:3456::1]",
    "[fe80::1]",
]
PROXIED_HOSTS = [
    "readerproxy",
    "readerproxy.internal",
    "example.com",
    "news.example.org",
    "8.8.8.8",
    "172.32.0.1",
    "11.0.0.1",
    "[2001:db8::1]",
]


def test_pac_direct_rules_evaluated(tmp_path: Path) -> None:
    node = shutil.which("node")
    text = pac_text("192.168.1.5", 8081)
    assert 'return "PROXY 192.168.1.5:8081; DIRECT";' in text
    if node is None:
        pytest.skip("node is not installed: the PAC text was checked only")
    pac = tmp_path / "proxy.pac"
    pac.write_text(text)
    hosts = [h.strip("[]") for h in DIRECT_HOSTS + PROXIED_HOSTS]
    out = subprocess.run(
        [node, "-e", PAC_HARNESS, str(pac), json.dumps(hosts)],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    ).stdout
    answers = json.loads(out)
    for host in DIRECT_HOSTS:
        assert answers[host.strip("[]")] == "DIRECT", host
    for host in PROXIED_HOSTS:
        assert answers[host.strip("[]")] == "PROXY 192.168.1.5:8081; DIRECT", host


def test_pac_host_header_is_validated() -> None:
    assert "PROXY 127.0.0.1:8081; DIRECT" in pac_file('evil");alert(1);//', 8081, "127.0.0.1")
    assert "PROXY proxy.lan:8081; DIRECT" in pac_file("proxy.lan:8080", 8081, "127.0.0.1")
    assert "PROXY [::1]:8081; DIRECT" in pac_file("[::1]:8080", 8081, "127.0.0.1")


async def test_pac_on_readerproxy_points_at_the_address_reached(
    proxy: RunningProxy, http: aiohttp.ClientSession
) -> None:
    status, headers, body = await get(http, proxy, f"{SETUP}/proxy.pac")
    assert status == 200 and headers["Content-Type"].startswith("application/x-ns-proxy-autoconfig")
    assert f'"PROXY 127.0.0.1:{proxy.proxy.port}; DIRECT"' in body.decode()


# ---- the setup page and the certificate ------------------------------------------------------


async def test_setup_page_without_interception(proxy: RunningProxy, http: aiohttp.ClientSession) -> None:
    for origin in (SETUP, "http://readerproxy.internal"):
        status, headers, body = await get(http, proxy, origin + "/")
        page = body.decode()
        assert status == 200 and "Set up readerproxy" in page
        assert "interception is <strong>off</strong>" in page
        assert "/proxy.pac" in page and f"127.0.0.1</code>, port <code>{proxy.proxy.port}" in page
        assert "default-src 'none'" in headers["Content-Security-Policy"]
        assert "X-Readerproxy" not in headers  # answered, never read
    status, _, _ = await get(http, proxy, f"{SETUP}/ca.pem")
    assert status == 404
    # its stylesheet comes from the proxy too
    css = page.split('href="/static/setup.css', 1)[1].split('"', 1)[0]
    status, headers, _ = await get(http, proxy, f"{SETUP}/static/setup.css{css}")
    assert status == 200 and headers["Content-Type"].startswith("text/css")


async def test_certificate_in_every_format(tmp_path: Path, http: aiohttp.ClientSession) -> None:
    ca = CertificateAuthority.load_or_create(tmp_path / "ca")
    expected = ca.cert.fingerprint(hashes.SHA256())
    async with setup_proxy(ca=ca) as proxy:
        _, _, body = await get(http, proxy, f"{SETUP}/")
        page = body.decode()
        assert expected.hex(":").upper() in page
        for name in ("Android", "iPhone and iPad", "Firefox", "on Windows", "on macOS", "on Linux"):
            assert name in page
        assert "Remove it" in page and "What trusting it means" in page
        certs = {}
        for path in ("/ca.pem", "/ca.crt", "/ca.cer", "/readerproxy.mobileconfig"):
            status, headers, data = await get(http, proxy, SETUP + path)
            assert status == 200 and "attachment" in headers["Content-Disposition"], path
            certs[path] = (headers["Content-Type"], data)
    assert x509.load_pem_x509_certificate(certs["/ca.pem"][1]).fingerprint(hashes.SHA256()) == expected
    assert x509.load_der_x509_certificate(certs["/ca.crt"][1]).fingerprint(hashes.SHA256()) == expected
    assert x509.load_der_x509_certificate(certs["/ca.cer"][1]).fingerprint(hashes.SHA256()) == expected
    content_type, profile_bytes = certs["/readerproxy.mobileconfig"]
    assert content_type == "application/x-apple-aspen-config"
    profile = plistlib.loads(profile_bytes)
    assert profile["PayloadType"] == "Configuration" and profile["PayloadVersion"] == 1
    (payload,) = profile["PayloadContent"]
    assert payload["PayloadType"] == "com.apple.security.root"
    assert x509.load_der_x509_certificate(payload["PayloadContent"]).fingerprint(hashes.SHA256()) == expected
    assert profile["PayloadUUID"] != payload["PayloadUUID"]
    assert mobileconfig(ca.cert) == profile_bytes  # the same profile every time


# ---- preferences that follow the client ---------------------------------------------------------


async def test_preference_chosen_on_one_site_applies_on_another(
    proxy: RunningProxy, upstream: Upstream, http: aiohttp.ClientSession
) -> None:
    article = site(upstream, "/article")
    _, headers, body = await get(http, proxy, article)
    page = body.decode()
    assert headers["X-Readerproxy"] == "reader-view" and 'data-theme="auto"' in page
    # every control links to http://readerproxy/, never to the reader server's address
    assert f'href="{SETUP}/view?url=' in page and "127.0.0.1" not in page
    assert re.search(r"<a\b[^>]*data-pref", page) is None  # choices navigate, so the proxy keeps them
    link = page.split(f'href="{SETUP}/view?', 1)[1].split('"', 1)[0].replace("&amp;", "&")
    assert "url=" in link
    status, headers, _ = await get(
        http, proxy, f"{SETUP}/view?url={quote(article, safe='')}&theme=dark&size=xl&font=sans&lite=1"
    )
    assert status == 303 and headers["Location"] == article
    other = f"http://wrong.test:{upstream.port}/article"
    _, headers, body = await get(http, proxy, other)
    page = body.decode()
    assert headers["X-Readerproxy"] == "reader-view"
    assert 'data-theme="dark"' in page and 'data-size="xl"' in page and 'data-font="sans"' in page
    assert "<img" not in page.split('<div class="content">', 1)[1]  # lite: no images
    # a change from another site's image (not a navigation) is refused
    async with http.get(
        f"{SETUP}/view?url={quote(other, safe='')}&theme=light",
        proxy=proxy.url,
        headers={"Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "image"},
        allow_redirects=False,
    ) as r:
        assert r.status == 403
    # the setup page's form shows and changes the same preferences
    _, _, body = await get(http, proxy, f"{SETUP}/")
    assert 'value="dark" checked' in body.decode()
    status, _, _ = await get(http, proxy, f"{SETUP}/prefs?theme=sepia")
    assert status == 303
    _, _, body = await get(http, proxy, article)
    assert 'data-theme="sepia"' in body.decode() and 'data-size="xl"' in body.decode()


async def test_other_reader_links_go_to_the_reader_server_through_the_proxy(
    upstream: Upstream, http: aiohttp.ClientSession
) -> None:
    article = upstream.url("/article")  # the reader server reaches it (--resolve is the proxy's)
    async with setup_proxy(auth="reader:s3cret") as proxy:
        auth = aiohttp.encode_basic_auth("reader", "s3cret")
        status, headers, _ = await get(
            http,
            proxy,
            f"{SETUP}/view?url={quote(article, safe='')}&format=md",
            **{"Proxy-Authorization": auth},
        )
        assert status == 303 and headers["Location"].startswith(f"{SETUP}/read?")
        # one login: the proxy's credentials open the reader server's routes too
        status, headers, body = await get(http, proxy, headers["Location"], **{"Proxy-Authorization": auth})
        assert status == 200 and headers["Content-Type"].startswith("text/markdown")
        assert "Upstream Test Article" in body.decode()
        status, _, _ = await get(http, proxy, f"{SETUP}/")
        assert status == 407
        # the preferences kept for this login apply on /read too
        status, _, _ = await get(http, proxy, f"{SETUP}/prefs?theme=sepia", **{"Proxy-Authorization": auth})
        assert status == 303
        _, _, body = await get(
            http, proxy, f"{SETUP}/read?url={quote(article, safe='')}", **{"Proxy-Authorization": auth}
        )
        assert 'data-theme="sepia"' in body.decode()


async def test_store_binds_a_known_cookie_to_a_new_address() -> None:
    store = ProxyStore(None)
    await store.save_preferences(Client("10.0.0.2", cookie="c" * 24), {"rp_theme": "dark"})
    moved = Client("10.0.0.9", cookie="c" * 24)
    assert await store.preferences(moved) == {"rp_theme": "dark"}
    assert await store.preferences(Client("10.0.0.9")) == {"rp_theme": "dark"}
    assert await store.preferences(Client("10.0.0.3")) == {}
    assert Client("10.0.0.9", user="reader", cookie="x" * 24).store_keys() == ["user:reader"]


# ---- site rules ---------------------------------------------------------------------------------


async def test_always_original_for_this_site_and_the_way_back(
    proxy: RunningProxy, upstream: Upstream, http: aiohttp.ClientSession
) -> None:
    article = site(upstream, "/article")
    _, _, body = await get(http, proxy, article)
    page = body.decode()
    assert f'href="{article}?{MARKER}"' in page  # this time
    forms = rule_forms(page)  # "Always original" in the panel and at the foot, both POST forms
    assert [button for _, _, button in forms] == ["Always original", "Always the original on news.test"]
    action, fields, _ = forms[1]
    assert action == f"{SETUP}/rules/set"
    assert fields["host"] == "news.test" and fields["rule"] == "original" and fields["back"] == article
    status, headers, _ = await post(http, proxy, action, fields)
    assert status == 303 and headers["Location"] == article
    for path in ("/article", "/article?page=2"):
        _, headers, body = await get(http, proxy, site(upstream, path))
        assert "X-Readerproxy" not in headers and b"Copyright the upstream site" in body
    _, _, body = await get(http, proxy, f"{SETUP}/rules")
    assert "<code>news.test</code>" in body.decode() and "the original" in body.decode()
    # the bookmarklet's way back: this page as a reader view, once
    status, headers, _ = await get(http, proxy, f"{SETUP}/reader?url={quote(article, safe='')}")
    assert status == 303 and headers["Location"] == f"{article}?{READER_MARKER}"
    _, headers, _ = await get(http, proxy, headers["Location"])
    assert headers["X-Readerproxy"] == "reader-view"
    # an open redirect is not possible through `back`
    form = {**fields, "rule": "none", "back": "http://evil.test/"}
    status, headers, _ = await post(http, proxy, f"{SETUP}/rules/set", form)
    assert status == 303 and headers["Location"] == f"{SETUP}/rules"
    _, headers, _ = await get(http, proxy, article)
    assert headers["X-Readerproxy"] == "reader-view"


async def test_config_rules_still_work_and_are_listed(
    upstream: Upstream, http: aiohttp.ClientSession
) -> None:
    async with setup_proxy(direct_hosts=("news.test",), reader_hosts=("wrong.test",)) as proxy:
        _, headers, _ = await get(http, proxy, site(upstream, "/article"))
        assert "X-Readerproxy" not in headers
        _, headers, _ = await get(http, proxy, f"http://wrong.test:{upstream.port}/plain")
        assert headers["X-Readerproxy"] == "reader-view"
        _, _, body = await get(http, proxy, f"{SETUP}/rules")
        assert "From the config file" in body.decode() and "<code>wrong.test</code>" in body.decode()
        # a rule from the browser comes first
        assert await set_rule(http, proxy, "news.test", "reader") == 303
        _, headers, _ = await get(http, proxy, site(upstream, "/article"))
        assert headers["X-Readerproxy"] == "reader-view"


# ---- never a reader view of readerproxy itself --------------------------------------------------


async def test_no_reader_view_of_the_reader_server(
    proxy: RunningProxy, upstream: Upstream, http: aiohttp.ClientSession
) -> None:
    read = proxy.server.url("/read", url=upstream.url("/article"))
    _, headers, body = await get(http, proxy, read)
    assert headers.get("X-Readerproxy") != "reader-view"
    assert b"/.readerproxy/" not in body and b'href="/static/reader.css' in body  # as it is
    assert b"read%3Furl" not in body  # never /read?url=…/read?url=…
    # nor through the name the proxy answers itself, nor the address the client reached
    _, headers, _ = await get(http, proxy, read.replace("127.0.0.1", "localhost"))
    assert headers.get("X-Readerproxy") != "reader-view"


def test_reader_page_links_point_at_readerproxy() -> None:
    page = (
        '<link rel="stylesheet" href="/static/reader.css?v=1"><a class="brand" href="/">r</a>'
        '<a class="chip" href="/read?url=x&amp;theme=dark" data-pref="theme" data-value="dark">Dark</a>'
        '<form action="/read" method="get"></form>'
    )
    out = same_origin_links(page)
    assert 'href="/.readerproxy/static/reader.css?v=1"' in out
    assert f'href="{SETUP}/"' in out and f'href="{SETUP}/view?url=x&amp;theme=dark"' in out
    assert f'action="{SETUP}/read"' in out and "data-pref" not in out


async def test_landing_page_points_at_the_setup_page(http: aiohttp.ClientSession) -> None:
    async with serve(test_settings(proxy_port=free_port())) as server, http.get(server.url("/")) as r:
        page = await r.text()
    assert 'href="http://readerproxy/"' in page and "Proxy mode" in page
    async with serve(test_settings()) as server, http.get(server.url("/")) as r:
        # without proxy mode the landing page explains it, but links no setup page that is not there
        assert 'href="http://readerproxy/"' not in await r.text()


async def test_rules_and_preferences_are_kept_in_the_cache_backend(
    tmp_path: Path, upstream: Upstream, http: aiohttp.ClientSession
) -> None:
    cache = f"sqlite:{tmp_path / 'cache.sqlite3'}"
    async with setup_proxy(cache=cache) as proxy:
        assert await set_rule(http, proxy, "news.test", "original") == 303
        await get(http, proxy, f"{SETUP}/prefs?theme=dark")
    async with setup_proxy(cache=cache) as proxy:  # another server (or worker) on the same backend
        _, headers, _ = await get(http, proxy, site(upstream, "/article"))
        assert "X-Readerproxy" not in headers
        _, headers, body = await get(http, proxy, f"http://wrong.test:{upstream.port}/article")
        assert headers["X-Readerproxy"] == "reader-view" and 'data-theme="dark"' in body.decode()


# ---- one client's flood is its own ------------------------------------------


async def gateway_statuses(proxy: RunningProxy, source: str, count: int, **headers: str) -> list[int]:
    """`count` requests for the reader server's `/api/algorithms` through `http://readerproxy/`,
    from a proxy client on the loopback address `source`; their statuses."""
    connector = aiohttp.TCPConnector(local_addr=(source, 0), force_close=True)
    statuses = []
    async with aiohttp.ClientSession(connector=connector) as http:
        for _ in range(count):
            async with http.get(f"{SETUP}/api/algorithms", proxy=proxy.url, headers=headers) as r:
                statuses.append(r.status)
    return statuses


async def test_one_proxy_client_flooding_the_gateway_leaves_the_others_alone() -> None:
    """Issue 46, item 5: the gateway reached the reader routes from 127.0.0.1 for every proxy
    client, so one client's flood (3,877 × 429) got the other proxy client 429 on 5 of 6 reads.
    The gateway now names the client (signed), and the rate limit counts each apart."""
    async with setup_proxy(rate_limit=0.5, rate_burst=3) as proxy:
        flooder = await gateway_statuses(proxy, "127.0.0.2", 8)
        assert flooder[:3] == [200, 200, 200] and flooder[3:] == [429] * 5
        assert await gateway_statuses(proxy, "127.0.0.3", 3) == [200, 200, 200]


async def test_the_client_header_cannot_be_forged(http: aiohttp.ClientSession) -> None:
    """A client naming itself in the gateway's header still counts as itself: straight to the
    reader server an unsigned (or otherwise signed) name is ignored; through the proxy, even a
    rightly signed one (had it leaked) is taken out before the request goes on. Each new name
    would otherwise be a fresh bucket."""
    async with setup_proxy(rate_limit=0.5, rate_burst=3) as proxy:
        direct = []
        for index in range(5):
            forged = {CLIENT_HEADER: f"10.0.0.{index} {'0' * 64}"}
            if index == 4:
                forged = {CLIENT_HEADER: signed_client("10.0.0.99", b"another secret" * 3)}
            async with http.get(proxy.server.url("/api/algorithms"), headers=forged) as r:
                direct.append(r.status)
        assert direct == [200, 200, 200, 429, 429]
    async with setup_proxy(rate_limit=0.5, rate_burst=3) as proxy:
        through = []
        for index in range(5):
            headers = {CLIENT_HEADER: signed_client(f"10.1.0.{index}")}
            async with http.get(proxy.server.url("/api/algorithms"), proxy=proxy.url, headers=headers) as r:
                through.append(r.status)
        assert through == [200, 200, 200, 429, 429]


def test_the_secret_is_made_once_and_kept_private(tmp_path: Path) -> None:
    """The data directory's secret (`limits.load_secret`): made on first use, owner-only, and the
    same for every later reader (every server process of the machine)."""
    first = load_secret(tmp_path / "data")
    assert len(first) == 32 and load_secret(tmp_path / "data") == first
    path = tmp_path / "data" / SECRET_FILE
    assert path.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in path.parent.iterdir()] == [SECRET_FILE]  # no temporary file left


# ---- site rules change from readerproxy's own forms only -------------------


async def test_a_rule_cannot_be_changed_cross_site(
    proxy: RunningProxy, upstream: Upstream, http: aiohttp.ClientSession
) -> None:
    """Issue 46, item 10: a cross-site page navigating to `http://readerproxy/rules/set?host=X&rule=
    original` set the rule for every client. A GET is now 405; a POST needs the client's token
    (an HMAC of its address with the data directory's secret), which only readerproxy's own
    forms carry: none, a made-up one, another client's, or a reader view's token for another
    host are 403, and no rule changes."""
    article = site(upstream, "/article")
    status, headers, _ = await get(http, proxy, f"{SETUP}/rules/set?host=news.test&rule=original")
    assert status == 405 and headers["Allow"] == "POST"
    cross_site = {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}
    target = f"{SETUP}/rules/set"
    form = {"host": "news.test", "rule": "original"}
    assert (await post(http, proxy, target, form, **cross_site))[0] == 403
    assert (await post(http, proxy, target, {**form, "token": "0" * 32}, **cross_site))[0] == 403
    other = Client("127.0.0.2")  # another proxy client's token is not this one's
    assert (await post(http, proxy, target, {**form, "token": rules_token(other, ANY_HOST)}))[0] == 403
    # a reader view of wrong.test carries a token for wrong.test's rule only
    _, _, body = await get(http, proxy, f"http://wrong.test:{upstream.port}/article")
    (_, fields, _), _ = rule_forms(body.decode())
    assert fields["host"] == "wrong.test"
    assert (await post(http, proxy, target, {**form, "token": fields["token"]}))[0] == 403
    assert "<code>news.test</code>" not in (await get(http, proxy, f"{SETUP}/rules"))[2].decode()
    _, headers, _ = await get(http, proxy, article)
    assert headers["X-Readerproxy"] == "reader-view"  # no rule was set
    assert (await post(http, proxy, target, fields))[0] == 303  # its own host: yes
    # and any other method is 405 too
    async with http.put(target, data=form, proxy=proxy.url) as r:
        assert r.status == 405


async def test_prefs_go_back_to_readerproxy_pages_only(
    proxy: RunningProxy, http: aiohttp.ClientSession
) -> None:
    """Issue 46, item 10: `/prefs?back=` redirected to any http(s) URL."""
    for back, location in [
        ("http://evil.test/", f"{SETUP}/#prefs"),
        ("https://evil.test/x", f"{SETUP}/#prefs"),
        ("//evil.test/", f"{SETUP}/#prefs"),
        ("http://readerproxy@evil.test/", f"{SETUP}/#prefs"),
        ("/rules", f"{SETUP}/rules"),
        (f"{SETUP}/#prefs", f"{SETUP}/#prefs"),
    ]:
        status, headers, _ = await get(http, proxy, f"{SETUP}/prefs?theme=dark&back={quote(back, safe='')}")
        assert status == 303 and headers["Location"] == location, back
