"""`http://readerproxy/` and what it sets, with real headless Chromium through the proxy: the setup
page at phone and desktop width (screenshots in artifacts/screenshots/), the CA downloaded in every
format, a preference chosen on one site applied on another, "always the original" for a site, the
PAC file as Chromium evaluates it, and no reader view of readerproxy's own pages.

And a phone's whole journey: the CA downloaded from the setup page's own link and trusted by its
SPKI, then an HTTPS article as a reader view under that CA; the bar back to the reader view on an
article shown as the original (and none where the page's CSP forbids it, the bytes unchanged); a
size chosen on a proxied reader view kept at `http://readerproxy/`, never sent to the site."""

from __future__ import annotations

import asyncio
import base64
import plistlib
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.x509.oid import NameOID
from support.chromium import CHROMIUM, SCREENSHOTS, Chromium, DevToolsError, Page
from support.proxy_browser import browser_through, recording_site, text_of
from support.upstream import Upstream
from test_proxy_setup import setup_proxy

from readerproxy.proxy.addons import MARKER, Addon
from readerproxy.proxy.flow import Flow
from readerproxy.proxy.pac import pac_text
from readerproxy.proxy.tls import CertificateAuthority, spki_sha256

pytestmark = pytest.mark.browser

SETUP = "http://readerproxy"


class Seen(Addon):
    """Records the host of every flow the proxy finished."""

    def __init__(self) -> None:
        self.hosts: list[str] = []

    async def done(self, flow: Flow) -> None:
        self.hosts.append(flow.request.host)


async def click_and_wait(page: Page, selector: str) -> None:
    """Click the first element matching `selector` and wait for the page it leads to."""
    loaded = page.browser.subscribe("Page.loadEventFired", page.session)
    await page.evaluate(f"document.querySelector({selector!r}).click()")
    await asyncio.wait_for(loaded.get(), 30)


async def test_setup_page_at_phone_and_desktop_width_and_the_ca_in_every_format(
    tmp_path: Path,
) -> None:
    ca = CertificateAuthority.load_or_create(tmp_path / "ca")
    expected = ca.cert.fingerprint(hashes.SHA256())
    downloads = tmp_path / "downloads"
    async with (
        setup_proxy(ca=ca) as proxy,
        browser_through(proxy, f"--ignore-certificate-errors-spki-list={ca.spki_sha256}") as (browser, page),
    ):
        for width, height, mobile in ((375, 812, True), (1280, 900, False)):
            await page.set_viewport(width, height, mobile)
            await page.navigate(f"{SETUP}/")
            assert "Set up readerproxy" in await text_of(page)
            assert expected.hex(":").upper() in await text_of(page)
            # nothing wider than the screen, and the stylesheets applied
            assert await page.evaluate("document.documentElement.scrollWidth") <= width
            assert (
                await page.evaluate("getComputedStyle(document.querySelector('.downloads')).display")
                == "grid"
            )
            await page.evaluate("document.querySelector('.platforms details').open = true")
            await page.screenshot(SCREENSHOTS / f"proxy-setup-{width}.png", full_page=True)
        await page.navigate(f"{SETUP}/rules")
        await page.screenshot(SCREENSHOTS / "proxy-rules-375.png")
        await page.navigate(f"{SETUP}/")
        await browser.send(
            "Browser.setDownloadBehavior",
            {"behavior": "allow", "downloadPath": str(downloads), "eventsEnabled": True},
        )
        progress = browser.subscribe("Browser.downloadProgress")
        for href in ("/ca.pem", "/ca.crt", "/ca.cer", "/readerproxy.mobileconfig"):
            await page.evaluate(f"document.querySelector('.downloads a[href=\"{href}\"]').click()")
            state: dict[str, Any] = {}
            async with asyncio.timeout(30):
                while state.get("state") not in ("completed", "canceled"):
                    state = await progress.get()
            assert state["state"] == "completed", href
    files = {path.name: path.read_bytes() for path in downloads.iterdir()}
    assert set(files) == {
        "readerproxy-ca.pem",
        "readerproxy-ca.crt",
        "readerproxy-ca.cer",
        "readerproxy.mobileconfig",
    }
    assert (
        x509.load_pem_x509_certificate(files["readerproxy-ca.pem"]).fingerprint(hashes.SHA256()) == expected
    )
    for name in ("readerproxy-ca.crt", "readerproxy-ca.cer"):
        assert x509.load_der_x509_certificate(files[name]).fingerprint(hashes.SHA256()) == expected
    (payload,) = plistlib.loads(files["readerproxy.mobileconfig"])["PayloadContent"]
    assert payload["PayloadType"] == "com.apple.security.root"
    assert x509.load_der_x509_certificate(payload["PayloadContent"]).fingerprint(hashes.SHA256()) == expected


async def test_setup_page_without_interception_offers_the_pac(upstream: Upstream) -> None:
    async with setup_proxy() as proxy, browser_through(proxy) as (_, page):
        await page.set_viewport(375, 812, True)
        await page.navigate(f"{SETUP}/")
        text = await text_of(page)
        assert "interception is off" in text and f"{SETUP}/proxy.pac" in text
        assert await page.evaluate("document.documentElement.scrollWidth") <= 375
        await page.screenshot(SCREENSHOTS / "proxy-setup-off-375.png", full_page=True)


async def test_a_preference_chosen_on_one_site_applies_on_another(upstream: Upstream) -> None:
    async with setup_proxy() as proxy, browser_through(proxy) as (_, page):
        await page.set_viewport(375, 812, True)
        await page.navigate(f"http://news.test:{upstream.port}/article")
        assert await page.evaluate("document.documentElement.dataset.theme") == "auto"
        await page.evaluate("document.querySelector('details.prefs').open = true")
        await click_and_wait(page, "a.chip.theme-dark")
        # back on the same article, now dark, and the choice kept by the proxy for this client
        assert await page.evaluate("location.href") == f"http://news.test:{upstream.port}/article"
        assert await page.evaluate("document.documentElement.dataset.theme") == "dark"
        await click_and_wait(page, 'a.chip.step.big[data-key="+"]')
        assert await page.evaluate("document.documentElement.dataset.size") == "l"
        await page.navigate(f"http://wrong.test:{upstream.port}/article")  # another site
        assert "The Upstream Test Article" in await text_of(page)
        assert await page.evaluate("document.documentElement.dataset.theme") == "dark"
        assert await page.evaluate("document.documentElement.dataset.size") == "l"
        await page.screenshot(SCREENSHOTS / "proxy-prefs-other-site-375.png")
        # and the setup page shows them
        await page.navigate(f"{SETUP}/")
        assert await page.evaluate("document.querySelector('input[name=theme][value=dark]').checked")


async def test_always_original_for_this_site(upstream: Upstream) -> None:
    article = f"http://news.test:{upstream.port}/article"
    async with setup_proxy() as proxy, browser_through(proxy) as (_, page):
        await page.navigate(article)
        assert "Copyright the upstream site" not in await text_of(page)
        assert await page.evaluate("document.querySelector('a.original-top').href") == f"{article}?{MARKER}"
        await click_and_wait(page, ".site-row button.chip.always")  # "Always original"
        assert await page.evaluate("location.href") == article
        assert "Copyright the upstream site" in await text_of(page)  # the original
        await page.navigate(article + "?again=1")  # the next page of that site too
        assert "Copyright the upstream site" in await text_of(page)
        await page.navigate(f"{SETUP}/rules")
        assert "news.test" in await text_of(page)
        await page.screenshot(SCREENSHOTS / "proxy-rules-375.png")
        await click_and_wait(page, ".rules button.chip.remove")
        await page.navigate(article)
        assert "Copyright the upstream site" not in await text_of(page)


async def test_no_reader_view_of_readerproxy_itself(upstream: Upstream) -> None:
    async with setup_proxy() as proxy, browser_through(proxy) as (_, page):
        # loopback through the proxy too (--proxy-bypass-list=<-loopback>)
        read = proxy.server.url("/read", url=upstream.url("/article"))
        await page.navigate(read)
        assert await page.evaluate("location.href") == read
        sheet = await page.evaluate("document.querySelector('link[rel=stylesheet]').getAttribute('href')")
        assert sheet.startswith("/static/")  # the reader server's own page, not a reader view of it
        assert proxy.metric("reader_view") == 0
        await page.navigate(f"{SETUP}/read?url={quote(upstream.url('/article'), safe='')}")
        assert "The Upstream Test Article" in await text_of(page)
        links = await page.evaluate("[...document.querySelectorAll('a[href]')].map(a => a.href)")
        assert not any(link.count("/read?") > 1 or "read%3Furl" in link for link in links)


async def test_pac_file_as_chromium_evaluates_it(upstream: Upstream) -> None:
    if not CHROMIUM.exists():
        pytest.skip("/usr/bin/chromium is not installed")
    async with setup_proxy() as proxy:
        pac = base64.b64encode(pac_text("127.0.0.1", proxy.proxy.port).encode()).decode()
        browser = Chromium(
            extra_flags=(f"--proxy-pac-url=data:application/x-ns-proxy-autoconfig;base64,{pac}",)
        )
        try:
            await browser.start()
            page = await browser.new_page()
            await page.navigate(f"http://news.test:{upstream.port}/article")  # through the proxy
            assert "The Upstream Test Article" in await text_of(page)
            assert proxy.metric("reader_view") >= 1
            await page.navigate(f"{SETUP}/")  # a plain host name, but readerproxy's own: the proxy
            assert "Set up readerproxy" in await text_of(page)
            hosts = Seen()
            proxy.proxy.addons.append(hosts)
            await page.navigate(proxy.server.url("/"))  # loopback: direct
            assert "Read any page, clean." in await text_of(page)
            with pytest.raises(DevToolsError, match="NAME_NOT_RESOLVED"):  # a plain name: direct
                await page.navigate("http://intranet/")
            await page.navigate(f"{SETUP}/rules")  # readerproxy's own name: through the proxy
            assert {"127.0.0.1", "intranet"}.isdisjoint(hosts.hosts) and "readerproxy" in hosts.hosts
        finally:
            await browser.close()


# ---- the phone's journey: setup page, CA from its own link, an HTTPS article ------------------------


async def download_from_link(browser: Chromium, page: Page, selector: str, directory: Path) -> bytes:
    """Click the link `selector` of the page, let Chromium save what it leads to in `directory`,
    and return those bytes (the one file Chromium saved)."""
    await browser.send(
        "Browser.setDownloadBehavior",
        {"behavior": "allow", "downloadPath": str(directory), "eventsEnabled": True},
    )
    progress = browser.subscribe("Browser.downloadProgress")
    await page.evaluate(f"document.querySelector({selector!r}).click()")
    state: dict[str, Any] = {}
    async with asyncio.timeout(30):
        while state.get("state") not in ("completed", "canceled"):
            state = await progress.get()
    assert state["state"] == "completed", state
    (saved,) = directory.iterdir()
    return saved.read_bytes()


async def test_phone_journey_ca_from_the_setup_page_then_an_https_article(
    tls_upstream: Upstream, tmp_path: Path
) -> None:
    ca = CertificateAuthority.load_or_create(tmp_path / "ca")
    article = f"https://secure.test:{tls_upstream.port}/article"
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    async with setup_proxy(ca=ca, upstream_ca=tls_upstream.ca_file) as proxy:
        # the phone, before it trusts anything: the setup page, and the CA from the page's own link
        async with browser_through(proxy) as (browser, page):
            await page.set_viewport(375, 812, True)
            await page.navigate(f"{SETUP}/")
            shown = await text_of(page)
            assert "Set up readerproxy" in shown
            link = await page.evaluate("document.querySelector('.downloads a[href$=\".pem\"]').href")
            assert link == f"{SETUP}/ca.pem"
            pem_bytes = await download_from_link(browser, page, ".downloads a[href$='.pem']", downloads)
            for width, height, mobile in ((375, 812, True), (1280, 900, False)):
                await page.set_viewport(width, height, mobile)
                await page.navigate(f"{SETUP}/")
                await page.screenshot(SCREENSHOTS / f"proxy-journey-setup-{width}.png")
            # not trusted yet: the intercepted site's certificate is refused
            with pytest.raises(DevToolsError, match="ERR_CERT_AUTHORITY_INVALID"):
                await page.navigate(article)
        downloaded = x509.load_pem_x509_certificate(pem_bytes)
        fingerprint = downloaded.fingerprint(hashes.SHA256()).hex(":").upper()
        assert fingerprint in shown  # what the page told the reader to check
        # trusted by SPKI, computed from the bytes the page served (Chromium's flag for a CA import)
        trust = f"--ignore-certificate-errors-spki-list={spki_sha256(downloaded)}"
        async with browser_through(proxy, trust) as (browser, page):
            await page.send("Network.enable")
            responses = browser.subscribe("Network.responseReceived", page.session)
            await page.set_viewport(375, 812, True)
            await page.navigate(article)
            text = await text_of(page)
            assert "The Upstream Test Article" in text and "Copyright the upstream site" not in text
            assert await page.evaluate("!!document.querySelector('article.reader')")
            assert await page.evaluate("location.href") == article
            await page.screenshot(SCREENSHOTS / "proxy-journey-reader-375.png")
            await page.set_viewport(1280, 900, False)
            await page.screenshot(SCREENSHOTS / "proxy-journey-reader-1280.png")
            event: dict[str, Any] = {}
            async with asyncio.timeout(10):
                while event.get("type") != "Document":
                    event = await responses.get()
            # its original, over HTTPS too, with the bar back to the reader view
            await click_and_wait(page, "a.original-top")
            assert "Copyright the upstream site" in await text_of(page)
            assert await bar_box(page) is not None
            await click_and_wait(page, "readerproxy-bar a")
            assert await page.evaluate("!!document.querySelector('article.reader')")
    details = event["response"]["securityDetails"]
    issuer = downloaded.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value
    assert details["issuer"] == issuer
    assert event["response"]["headers"].get("X-Readerproxy") == "reader-view"
    assert proxy.metric("reader_view") >= 1


# ---- the way back to the reader view on an original page -------------------------------------------


async def bar_box(page: Page) -> dict[str, float] | None:
    """Where the proxy's bar is on the page (None when there is none)."""
    found = await page.evaluate(
        "(() => { const bar = document.querySelector('readerproxy-bar');"
        " if (!bar) return null; const r = bar.getBoundingClientRect();"
        " const s = getComputedStyle(bar), a = getComputedStyle(bar.querySelector('a'));"
        " return {top: r.top, bottom: r.bottom, width: r.width, height: r.height,"
        " font: parseFloat(a.fontSize), background: s.backgroundColor}; })()"
    )
    return dict(found) if found is not None else None


async def document_body(browser: Chromium, page: Page, responses: Any, url: str) -> bytes:
    """The bytes Chromium received for the document at `url` (Network must be enabled)."""
    event: dict[str, Any] = {}
    async with asyncio.timeout(10):
        while not (event.get("type") == "Document" and event["response"]["url"] == url):
            event = await responses.get()
    body = await page.send("Network.getResponseBody", {"requestId": event["requestId"]})
    return base64.b64decode(body["body"]) if body["base64Encoded"] else body["body"].encode("utf-8")


async def test_bar_back_to_the_reader_on_an_article_shown_as_the_original() -> None:
    async with recording_site() as site, setup_proxy() as proxy, browser_through(proxy) as (_, page):
        article = site.url("/article/one")
        for width, height, mobile in ((375, 812, True), (1280, 900, False)):
            await page.set_viewport(width, height, mobile)
            await page.navigate(article)
            assert await page.evaluate("!!document.querySelector('article.reader')")
            await click_and_wait(page, "a.original-top")  # "Original this time"
            assert "Copyright the upstream site" in await text_of(page)  # the original page
            bar = await bar_box(page)
            assert bar is not None, "no bar on an article shown as the original"
            # small and readable, its stylesheet applied, at the top, above the page and not over it
            assert bar["top"] <= 8 and 40 <= bar["height"] <= 56 and bar["font"] >= 14, bar
            assert bar["background"] == "rgb(246, 244, 239)", bar
            first = await page.evaluate("document.querySelector('nav').getBoundingClientRect().top")
            assert first >= bar["bottom"], (first, bar)
            assert await page.evaluate("document.documentElement.scrollWidth") <= width
            await page.screenshot(SCREENSHOTS / f"proxy-backbar-{width}.png")
            await click_and_wait(page, "readerproxy-bar a")  # one tap: the reader view
            assert await page.evaluate("!!document.querySelector('article.reader')")
            assert "Copyright the upstream site" not in await text_of(page)
        # "always original" for the site: every article of it gets the bar, a page that is no
        # article does not
        await click_and_wait(page, ".site-row button.chip.always")
        assert await page.evaluate("location.href") == article
        assert await bar_box(page) is not None
        await page.navigate(site.url("/article/two"))
        assert "Copyright the upstream site" in await text_of(page) and await bar_box(page) is not None
        await page.navigate(site.url("/plain"))
        assert "Not an article" in await text_of(page) and await bar_box(page) is None


async def test_no_bar_where_the_page_csp_forbids_it_and_the_bytes_unchanged() -> None:
    async with (
        recording_site() as site,
        setup_proxy() as proxy,
        browser_through(proxy) as (browser, page),
    ):
        await page.send("Network.enable")
        responses = browser.subscribe("Network.responseReceived", page.session)
        await page.set_viewport(375, 812, True)
        for path in ("/csp/strict", "/csp/meta"):  # "Original this time" on a strict CSP
            url = f"{site.url(path)}?{MARKER}"
            await page.navigate(url)
            assert "Copyright the upstream site" in await text_of(page)
            assert await bar_box(page) is None, path
            assert await document_body(browser, page, responses, url) == site.served(path), path
        await page.screenshot(SCREENSHOTS / "proxy-backbar-strict-csp-375.png")
        url = f"{site.url('/csp/self')}?{MARKER}"  # a CSP that allows the page's own stylesheets
        await page.navigate(url)
        assert await bar_box(page) is not None
        await document_body(browser, page, responses, url)
        await page.navigate(f"{SETUP}/rules")  # always original, by the rules page's form
        await page.evaluate("document.querySelector('#rule-host').value = 'news.test'")
        await click_and_wait(page, ".rule-form button[type=submit]")
        for path in ("/csp/strict", "/plain"):  # strict CSP, and no article: as they came
            url = site.url(path)
            await page.navigate(url)
            assert await bar_box(page) is None, path
            assert await document_body(browser, page, responses, url) == site.served(path), path


# ---- preferences stay with readerproxy: no rp_* cookie for the site ----------------------------------


async def test_a_size_chosen_on_a_proxied_reader_view_never_reaches_the_site() -> None:
    async with recording_site() as site, setup_proxy() as proxy, browser_through(proxy) as (browser, page):
        await page.set_viewport(375, 812, True)
        await page.navigate(site.url("/article/one"))
        assert await page.evaluate("document.documentElement.dataset.prefsAt") == SETUP
        assert await page.evaluate("document.documentElement.dataset.size") == "m"
        # the keyboard's + (reader.js): the choice is made at http://readerproxy/, the page comes back
        loaded = browser.subscribe("Page.loadEventFired", page.session)
        await page.evaluate("document.dispatchEvent(new KeyboardEvent('keydown', {key: '+'}))")
        await asyncio.wait_for(loaded.get(), 30)
        assert await page.evaluate("location.href") == site.url("/article/one")
        assert await page.evaluate("document.documentElement.dataset.size") == "l"
        # and the A+ link of the preferences
        await page.evaluate("document.querySelector('details.prefs').open = true")
        await click_and_wait(page, 'a.chip.step.big[data-key="+"]')
        assert await page.evaluate("document.documentElement.dataset.size") == "xl"
        assert "rp_" not in await page.evaluate("document.cookie")
        await page.screenshot(SCREENSHOTS / "proxy-prefs-size-375.png")
        # the next article has the choice; the site never got it
        await page.navigate(site.url("/article/two"))
        assert await page.evaluate("document.documentElement.dataset.size") == "xl"
        # a rp_ cookie already on the site's origin (an older reader.js wrote one) stays in the browser
        await page.evaluate("document.cookie = 'rp_size=s; path=/'; document.cookie = 'session=abc; path=/'")
        await page.navigate(site.url("/article/three"))
        assert await page.evaluate("document.documentElement.dataset.size") == "xl"
    cookies = site.cookies()
    assert cookies and all("session=abc" in cookie for cookie in cookies), cookies  # the site's own go
    assert not any("rp_" in cookie for cookie in cookies), cookies
    assert [each.path for each in site.seen if each.path.startswith("/article/")] == [
        "/article/one",
        "/article/one",
        "/article/one",
        "/article/two",
        "/article/three",
    ]


# ---- site rules by tapping, at phone width --------------------------------------


async def tap(page: Page, selector: str, *, navigates: bool = True) -> dict[str, float]:
    """Tap the element `selector` with a touch (as a phone does), at its middle; wait for the page
    it leads to unless `navigates` is False. Returns the element's box as it was tapped."""
    box = await page.evaluate(
        f"(() => {{ const e = document.querySelector({selector!r}); e.scrollIntoView({{block: 'center'}});"
        " const r = e.getBoundingClientRect();"
        " return {x: r.left + r.width / 2, y: r.top + r.height / 2, width: r.width, height: r.height}; })()"
    )
    loaded = page.browser.subscribe("Page.loadEventFired", page.session) if navigates else None
    point = [{"x": box["x"], "y": box["y"]}]
    await page.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": point})
    await page.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
    if loaded is not None:
        await asyncio.wait_for(loaded.get(), 30)
    return dict(box)


async def test_the_rules_page_works_by_tapping_at_375_px(upstream: Upstream) -> None:
    """Issue 46, item 10: site rules now change by POST forms carrying the client's token (a GET
    is 405), so the rules page's Add, Switch and Remove, and a reader view's "Always original",
    are buttons in small forms: each tapped here on a 375 px phone screen, each at least 44 px
    square, and the page never wider than the screen."""
    article = f"http://news.test:{upstream.port}/article"
    async with setup_proxy() as proxy, browser_through(proxy) as (_, page):
        await page.set_viewport(375, 812, True)
        await page.send("Emulation.setTouchEmulationEnabled", {"enabled": True, "maxTouchPoints": 1})
        await page.navigate(f"{SETUP}/rules")
        await tap(page, "#rule-host", navigates=False)
        await page.send("Input.insertText", {"text": "news.test"})
        box = await tap(page, ".rule-form button[type=submit]")  # Add (the original)
        assert box["height"] >= 44 and box["width"] >= 44, box
        assert "news.test" in await text_of(page) and "the original" in await text_of(page)
        await page.navigate(article)
        assert "Copyright the upstream site" in await text_of(page)  # the rule holds
        await page.navigate(f"{SETUP}/rules")
        assert await page.evaluate("document.documentElement.scrollWidth") <= 375
        await page.screenshot(SCREENSHOTS / "proxy-rules-forms-375.png")
        box = await tap(page, ".rules button.chip.switch")
        assert box["height"] >= 44 and box["width"] >= 44, box
        assert "a reader view" in await text_of(page)
        box = await tap(page, ".rules button.chip.remove")
        assert box["height"] >= 44 and box["width"] >= 44, box
        assert "No site rules yet" in await text_of(page)
        # a reader view's "Always original", in the "Aa" panel and at the foot
        await page.navigate(article)
        assert "Copyright the upstream site" not in await text_of(page)
        await page.evaluate("document.querySelector('details.prefs').open = true")
        box = await tap(page, ".site-row button.chip.always")
        assert box["height"] >= 44 and box["width"] >= 44, box
        assert await page.evaluate("location.href") == article
        assert "Copyright the upstream site" in await text_of(page)
        await page.navigate(f"{SETUP}/rules")
        await tap(page, ".rules button.chip.remove")
        await page.navigate(article)
        foot = await tap(page, ".article-foot button.original.always")
        assert foot["height"] >= 44, foot
        assert "Copyright the upstream site" in await text_of(page)
        await page.navigate(f"{SETUP}/rules/set?host=wrong.test&rule=original")  # a link: refused
        assert "own forms" in await text_of(page)
