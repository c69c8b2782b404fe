"""The reading list in proxy mode: a proxied reader view's Save button posts to
`http://readerproxy/list/save` with the client's token for the site, the list is
`http://readerproxy/list`, and two readers of one `--auth-file` (two lines, two proxy logins) each
see only their own list through the proxy, as through the reader routes. aiohttp through the real
proxy as the client, the upstream test site as `news.test`.
"""

from __future__ import annotations

import base64
import html
import json
import re
from pathlib import Path
from typing import Any

import aiohttp
from support.upstream import ARTICLE_TITLE, Upstream
from test_proxy import HTML_ACCEPT, RunningProxy, site
from test_proxy_setup import SETUP, setup_proxy

ALICE = ("alice", "alice-password-1")
BOB = ("bob", "bob-password-22")
Login = tuple[str, str]


def basic(login: Login) -> str:
    return "Basic " + base64.b64encode(":".join(login).encode()).decode()


_SAVE = re.compile(r'<form class="save-form" action="([^"]+)"[^>]*>(.*?)</form>', re.S)
_HIDDEN = re.compile(r'<input type="hidden" name="(\w+)" value="([^"]*)">')


async def request(
    http: aiohttp.ClientSession,
    proxy: RunningProxy,
    method: str,
    url: str,
    login: Login | None,
    headers: dict[str, str] | None = None,
    **kwargs: Any,
) -> tuple[int, dict[str, str], str]:
    """One request through the proxy (with `login` as its Proxy-Authorization): status, headers, text."""
    async with http.request(
        method,
        url,
        proxy=proxy.url,
        headers={
            "Accept": HTML_ACCEPT,
            **({"Proxy-Authorization": basic(login)} if login else {}),  # plain HTTP: on the request
            **(headers or {}),
        },
        allow_redirects=False,
        **kwargs,
    ) as response:
        return response.status, dict(response.headers), await response.text()


def save_form(page: str) -> tuple[str, dict[str, str]]:
    found = _SAVE.search(page)
    assert found is not None, "no Save form"
    return html.unescape(found[1]), {name: html.unescape(value) for name, value in _HIDDEN.findall(found[2])}


async def titles(http: aiohttp.ClientSession, proxy: RunningProxy, login: Login | None) -> list[str]:
    status, _, body = await request(http, proxy, "GET", f"{SETUP}/api/list?state=all", login)
    assert status == 200, body
    return [entry["title"] for entry in json.loads(body)["entries"]]


async def test_two_proxy_users_save_from_reader_views_into_their_own_lists(
    tmp_path: Path, upstream: Upstream
) -> None:
    logins = tmp_path / "logins"
    logins.write_text(f"{':'.join(ALICE)}\n{':'.join(BOB)}\n")
    async with (
        setup_proxy(auth_file=logins, reading_list=f"sqlite:{tmp_path / 'list.sqlite3'}") as proxy,
        aiohttp.ClientSession() as http,
    ):
        # news.test is a name only the proxy resolves: the reader server could not fetch these
        # pages; a Save keeps the extraction the reader view showed
        article = site(upstream, "/article")
        other = site(upstream, "/cached/proxy-bobs")
        status, _, _ = await request(http, proxy, "GET", article, None)
        assert status == 407
        status, headers, page = await request(http, proxy, "GET", article, ALICE)
        assert status == 200, (status, page[:300])
        assert headers["X-Readerproxy"] == "reader-view"
        action, fields = save_form(page)
        assert action == f"{SETUP}/list/save" and fields["url"] == article and fields["token"]

        fetched = upstream.count("/article")
        status, headers, body = await request(http, proxy, "POST", action, ALICE, data=fields)
        assert status == 303, body
        assert re.fullmatch(rf"{SETUP}/list/[A-Za-z0-9_-]{{12}}\?saved=1", headers["Location"])
        assert upstream.count("/article") == fetched  # nothing fetched again
        status, _, saved = await request(http, proxy, "GET", headers["Location"], ALICE)
        assert status == 200 and ARTICLE_TITLE in saved and "Saved to your reading list" in saved

        _, _, bobs_page = await request(http, proxy, "GET", other, BOB)
        bob_action, bob_fields = save_form(bobs_page)
        status, _, _ = await request(http, proxy, "POST", bob_action, BOB, data=bob_fields)
        assert status == 303

        assert await titles(http, proxy, ALICE) == [ARTICLE_TITLE]
        assert await titles(http, proxy, BOB) == ["Cached proxy-bobs"]
        _, _, alices_list = await request(http, proxy, "GET", f"{SETUP}/list", ALICE)
        assert ARTICLE_TITLE in alices_list and "Cached proxy-bobs" not in alices_list
        # through the reader routes too, with the same logins
        async with http.get(proxy.server.url("/api/list"), headers={"Authorization": basic(BOB)}) as direct:
            assert [entry["title"] for entry in (await direct.json())["entries"]] == ["Cached proxy-bobs"]

        # a token is this client's and this site's: Bob cannot use Alice's, nor Alice hers for
        # another site's page
        status, _, _ = await request(http, proxy, "POST", action, BOB, data=fields)
        assert status == 403
        elsewhere = {**fields, "url": upstream.url("/article")}  # another host than the view's
        status, _, _ = await request(http, proxy, "POST", action, ALICE, data=elsewhere)
        assert status == 403
        assert await titles(http, proxy, BOB) == ["Cached proxy-bobs"]


async def test_the_lists_forms_work_through_the_proxy_and_refuse_other_sites(
    tmp_path: Path, upstream: Upstream
) -> None:
    async with (
        setup_proxy(reading_list=f"sqlite:{tmp_path / 'list.sqlite3'}") as proxy,
        aiohttp.ClientSession() as http,
    ):
        _, _, setup_page = await request(http, proxy, "GET", f"{SETUP}/", None)
        assert f"{SETUP}/list/add?url=" in html.unescape(setup_page)  # the Save bookmarklet
        _, _, page = await request(http, proxy, "GET", upstream.url("/article"), None)
        action, fields = save_form(page)
        status, headers, _ = await request(http, proxy, "POST", action, None, data=fields)
        assert status == 303
        entry_id = re.findall(r"/list/([A-Za-z0-9_-]{12})\?saved=1", headers["Location"])[0]
        _, list_headers, listing = await request(http, proxy, "GET", f"{SETUP}/list", None)
        assert f'action="/list/{entry_id}/state"' in listing
        assert "rp_same=1" in list_headers.get("Set-Cookie", "")
        # another site's page posting to readerproxy: refused by where it came from (and without
        # the SameSite=Strict cookie, which a browser keeps from other sites' requests)
        async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as elsewhere:
            for hostile in ({"Origin": "http://evil.test"}, {"Origin": "null"}):
                status, _, _ = await request(
                    elsewhere,
                    proxy,
                    "POST",
                    f"{SETUP}/list/{entry_id}/delete",
                    None,
                    data={},
                    headers=hostile,
                )
                assert status == 403
        assert await titles(http, proxy, None) == [ARTICLE_TITLE]
        # the list's own form (its page's origin is readerproxy; the browser sends the cookie)
        own = {"Origin": "null", "Cookie": "rp_same=1"}
        status, headers, _ = await request(
            http,
            proxy,
            "POST",
            f"{SETUP}/list/{entry_id}/state",
            None,
            data={"state": "archived", "back": "/list"},
            headers=own,
        )
        assert status == 303 and headers["Location"] == "/list"
        status, _, body = await request(
            http,
            proxy,
            "POST",
            f"{SETUP}/api/list/{entry_id}/progress",
            None,
            json={"progress": 0.5},
            headers={"Origin": SETUP},
        )
        assert status == 200 and '"progress": 0.5' in body and '"state": "archived"' in body
