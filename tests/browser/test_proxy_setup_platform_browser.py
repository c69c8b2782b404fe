"""The setup page opens the visitor's own system first: from the User-Agent, the
section for Android, iPhone and iPad, or a desktop system comes first and open, the others closed
below it with a visible disclosure marker each. Headless Chromium at 375 px (1280 for a desktop)
through the proxy, the User-Agent set by DevTools; screenshots in artifacts/screenshots/.
"""

from __future__ import annotations

import re
from pathlib import Path

import aiohttp
import pytest
from support.chromium import SCREENSHOTS
from support.proxy_browser import browser_through
from test_proxy_setup import setup_proxy

from readerproxy.proxy.setup import PLATFORMS, platform_of, platforms_for
from readerproxy.proxy.tls import CertificateAuthority

SETUP = "http://readerproxy"
ANDROID = (
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/131.0.0.0 Mobile Safari/537.36"
)
IPHONE = (
    "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
    "Version/18.1 Mobile/15E148 Safari/604.1"
)
WINDOWS = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/131.0.0.0 Safari/537.36"
)
FIREFOX_LINUX = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0"


def test_platform_of_the_user_agent() -> None:
    assert platform_of(ANDROID) == "Android"
    assert platform_of(IPHONE) == "iPhone and iPad"
    assert platform_of(WINDOWS) == "Chrome or Edge on Windows"
    assert platform_of(FIREFOX_LINUX) == "Firefox (Windows, macOS, Linux)"
    assert platform_of("curl/8.5.0") is None and platform_of(None) is None
    names = [name for name, _ in PLATFORMS]
    assert platform_of("x") is None and platforms_for(None) == names
    moved = platforms_for("Chrome or Safari on macOS")
    assert moved[0] == "Chrome or Safari on macOS" and moved[1:] == [n for n in names if n != moved[0]]
    assert len(PLATFORMS) == 6


async def test_setup_page_has_the_visitors_system_first_and_open(tmp_path: Path) -> None:
    ca = CertificateAuthority.load_or_create(tmp_path / "ca")
    async with setup_proxy(ca=ca) as proxy, aiohttp.ClientSession() as http:
        for agent, first in ((IPHONE, "iPhone and iPad"), ("curl/8.5.0", "Android")):
            async with http.get(f"{SETUP}/", proxy=proxy.url, headers={"User-Agent": agent}) as r:
                page = await r.text()
            sections = re.findall(r"<details( open class=\"yours\")?>\s*<summary>([^<]*)</summary>", page)
            assert sections[0][1] == first and len(sections) == 6
            assert [bool(opened) for opened, _ in sections] == [agent == IPHONE] + [False] * 5


@pytest.mark.browser
@pytest.mark.parametrize(
    ("name", "agent", "width", "first"),
    [
        ("android", ANDROID, 375, "Android"),
        ("ios", IPHONE, 375, "iPhone and iPad"),
        ("desktop", WINDOWS, 1280, "Chrome or Edge on Windows"),
        ("desktop-narrow", WINDOWS, 375, "Chrome or Edge on Windows"),
    ],
)
async def test_setup_page_opens_the_visitors_system_first(
    tmp_path: Path, name: str, agent: str, width: int, first: str
) -> None:
    ca = CertificateAuthority.load_or_create(tmp_path / "ca")
    async with setup_proxy(ca=ca) as proxy, browser_through(proxy) as (_, page):
        await page.set_viewport(width, 812 if width == 375 else 900, width == 375)
        await page.send("Emulation.setUserAgentOverride", {"userAgent": agent})
        await page.navigate(f"{SETUP}/")
        sections = await page.evaluate(
            "[...document.querySelectorAll('.platforms details')]"
            ".map(d => [d.querySelector('summary').textContent, d.open])"
        )
        assert sections[0] == [first, True]
        assert [opened for _, opened in sections[1:]] == [False] * 5  # the others one tap away
        assert sorted(title for title, _ in sections) == sorted(title for title, _ in PLATFORMS)
        markers = await page.evaluate(
            "[...document.querySelectorAll('.platforms summary')]"
            ".map(s => getComputedStyle(s, '::before').content)"
        )
        assert set(markers) == {'"▸"'}  # a visible disclosure marker on every section
        turned = await page.evaluate(
            "[...document.querySelectorAll('.platforms summary')]"
            ".map(s => getComputedStyle(s, '::before').transform)"
        )
        assert turned[0] != "none" and set(turned[1:]) == {"none"}  # open: the marker points down
        assert await page.evaluate("document.documentElement.scrollWidth") <= width
        await page.evaluate("document.querySelector('.platforms').scrollIntoView()")
        await page.screenshot(SCREENSHOTS / f"proxy-setup-{name}-{width}.png")
