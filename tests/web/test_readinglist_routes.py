"""The reading list through the reader server (`readerproxy/web/list_routes.py`), over real loopback
HTTP with the upstream test site: save (JSON, form, the reader view's button), list with filters
and search, archive, delete, progress, the saved copy read without a fetch, the exports, bad input,
and two readers of one `--auth-file` (and two client addresses without one) kept apart. One test
restarts the server on the same SQLite file and on the same Redis.
"""

from __future__ import annotations

import base64
import io
import json
import re
import zipfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from support.reader_server import RunningServer, serve, serve_app, test_settings
from support.upstream import ARTICLE_TITLE, Upstream

from readerproxy.web.limits import CLIENT_HEADER, signed_client

ALICE = ("alice", "alice-password-1")
BOB = ("bob", "bob-password-22")


def basic(login: tuple[str, str]) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(":".join(login).encode()).decode()}


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[RunningServer]:
    async with serve(test_settings(reading_list=f"sqlite:{tmp_path / 'list.sqlite3'}")) as running:
        yield running


async def save(http: aiohttp.ClientSession, server: RunningServer, url: str, **extra: Any) -> dict[str, Any]:
    async with http.post(server.url("/api/list"), json={"url": url, **extra}) as response:
        assert response.status in (200, 201), await response.text()
        data: dict[str, Any] = await response.json()
        return data


async def listed(http: aiohttp.ClientSession, server: RunningServer, **query: str) -> list[str]:
    async with http.get(server.url("/api/list", **query)) as response:
        assert response.status == 200
        return [entry["title"] for entry in (await response.json())["entries"]]


async def test_save_list_read_and_export(
    server: RunningServer, upstream: Upstream, http: aiohttp.ClientSession
) -> None:
    async with http.post(
        server.url("/api/list"), json={"url": upstream.url("/article"), "tags": "Later, web"}
    ) as r:
        assert r.status == 201
        entry = await r.json()
    assert entry["title"] == ARTICLE_TITLE and entry["tags"] == ["later", "web"]
    assert entry["state"] == "unread" and entry["progress"] == 0.0 and entry["word_count"] > 50
    assert entry["reading_minutes"] >= 1 and entry["view"] == "article" and entry["site"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", entry["saved_at"])
    async with http.post(server.url("/api/list"), data={"url": upstream.url("/article")}) as again:
        assert again.status == 200  # a form works too; saved already: the same entry
        assert (await again.json())["id"] == entry["id"]
    assert await listed(http, server) == [ARTICLE_TITLE]

    fetched = upstream.count("/article")
    async with http.get(server.url(f"/list/{entry['id']}")) as page:
        body = await page.text()
        assert page.status == 200 and ARTICLE_TITLE in body and "Reader mode proxies" in body
        assert f'data-entry="{entry["id"]}"' in body and 'data-progress="0.0000"' in body
        assert "connect-src 'self'" in page.headers["Content-Security-Policy"]
        assert f'action="/list/{entry["id"]}/state"' in body  # Archive at the end
        assert 'class="save-form"' not in body and 'class="tool list-link" href="/list"' in body
    assert upstream.count("/article") == fetched  # read from the list, not fetched

    async with http.get(server.url(f"/api/list/{entry['id']}")) as one:
        full = await one.json()
        assert "Reader mode proxies" in full["text"] and full["html"].startswith("<")

    async with http.get(server.url(f"/list/{entry['id']}.md")) as md:
        text = await md.text()
        assert md.status == 200 and text.startswith(f"# {ARTICLE_TITLE}") and "Reader mode proxies" in text
        assert md.headers["Content-Disposition"].startswith("attachment;")
    async with http.get(server.url(f"/list/{entry['id']}.html")) as page_file:
        text = await page_file.text()
        assert text.startswith("<!DOCTYPE html>") and f"<h1>{ARTICLE_TITLE}</h1>" in text
    for path in (f"/list/{entry['id']}.epub", "/list/export.epub"):
        async with http.get(server.url(path)) as book:
            assert book.status == 200 and book.headers["Content-Type"] == "application/epub+zip"
            with zipfile.ZipFile(io.BytesIO(await book.read())) as archive:
                assert archive.namelist()[0] == "mimetype"
                chapter = archive.read("EPUB/article-1.xhtml").decode()
                assert ARTICLE_TITLE in chapter and "Reader mode proxies" in chapter


async def test_saving_a_page_just_read_costs_no_fetch(
    server: RunningServer, upstream: Upstream, http: aiohttp.ClientSession
) -> None:
    path = "/cached/reading-list-no-refetch"
    async with http.get(server.read_url(upstream.url(path))) as read:
        assert read.status == 200
    assert upstream.count(path) == 1
    entry = await save(http, server, upstream.url(path))
    assert entry["title"] == "Cached reading-list-no-refetch"
    assert upstream.count(path) == 1


async def test_the_reader_views_save_button_saves_without_javascript(
    server: RunningServer, upstream: Upstream, http: aiohttp.ClientSession
) -> None:
    async with http.get(server.read_url(upstream.url("/article"))) as read:
        page = await read.text()
    form = re.search(r'<form class="save-form" action="([^"]+)" method="post"[^>]*>(.*?)</form>', page, re.S)
    assert form is not None and form[1] == "/list/save"
    fields = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)">', form[2]))
    assert fields["url"] == upstream.url("/article")
    origin = {"Origin": server.base, "Sec-Fetch-Site": "same-origin"}
    async with http.post(
        server.url("/list/save"), data=fields, headers=origin, allow_redirects=False
    ) as saved:
        assert saved.status == 303
        location = saved.headers["Location"]
    assert re.fullmatch(r"/list/[A-Za-z0-9_-]{12}\?saved=1", location)
    async with http.get(server.url(location)) as shown:
        assert 'class="saved-note"' in await shown.text()
    # another site's page cannot make the reader save (or change) anything
    for headers in (
        {"Origin": "http://evil.example"},
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "cross-site", "Cookie": "rp_same=1"},
    ):
        async with http.post(
            server.url("/list/save"), data=fields, headers=headers, allow_redirects=False
        ) as bad:
            assert bad.status == 403
        async with http.post(server.url("/api/list"), json=fields, headers=headers) as bad_api:
            assert bad_api.status == 403
            assert (await bad_api.json())["error"]["status"] == 403


async def test_a_save_whose_origin_is_hidden_is_confirmed_once(
    server: RunningServer, upstream: Upstream, tmp_path: Path
) -> None:
    """Our pages send no referrer, so on a plain-HTTP address Chromium and Firefox post `Origin:
    null` and no `Sec-Fetch-Site`, as another site's page could: Save then asks to confirm (and
    sets the SameSite=Strict cookie); the API refuses it. With the cookie, Save goes through."""
    jar = aiohttp.CookieJar(unsafe=True)
    async with aiohttp.ClientSession(cookie_jar=jar) as http:
        hidden = {"Origin": "null"}
        fields = {"url": upstream.url("/article"), "tags": "later"}
        async with http.post(server.url("/api/list"), json=fields, headers=hidden) as api:
            assert api.status == 403
        async with http.post(
            server.url("/list/save"), data=fields, headers=hidden, allow_redirects=False
        ) as ask:
            page = await ask.text()
            assert ask.status == 200 and "Save to your reading list?" in page
            assert f'value="{upstream.url("/article")}"' in page and 'action="/list/save"' in page
            cookie = ask.cookies["rp_same"]
            assert cookie["samesite"] == "Strict" and cookie["httponly"]
        async with http.get(server.url("/api/list")) as listed_now:
            assert (await listed_now.json())["entries"] == []  # nothing saved yet
        async with http.post(
            server.url("/list/save"), data=fields, headers=hidden, allow_redirects=False
        ) as ok:
            assert ok.status == 303  # the cookie vouches for it now
        async with http.get(server.url("/api/list")) as listed_now:
            assert [entry["tags"] for entry in (await listed_now.json())["entries"]] == [["later"]]


async def test_filters_search_archive_delete_and_progress(
    server: RunningServer, upstream: Upstream, http: aiohttp.ClientSession
) -> None:
    first = await save(http, server, upstream.url("/cached/list-filter-one"), tags=["alpha"])
    second = await save(http, server, upstream.url("/expires/list-filter-two"), tags="beta")
    third = await save(http, server, upstream.url("/article"))
    assert await listed(http, server) == [ARTICLE_TITLE, "Expires list-filter-two", "Cached list-filter-one"]
    assert await listed(http, server, tag="alpha") == ["Cached list-filter-one"]
    assert await listed(http, server, q="expires date") == ["Expires list-filter-two"]  # the saved text
    assert await listed(http, server, q="minute") == ["Cached list-filter-one"]

    async with http.post(server.url(f"/api/list/{second['id']}"), json={"state": "archived"}) as changed:
        assert (await changed.json())["state"] == "archived"
    assert await listed(http, server) == [ARTICLE_TITLE, "Cached list-filter-one"]
    assert await listed(http, server, state="archived") == ["Expires list-filter-two"]

    # the list page's forms: mark read, then delete, each back to where it was
    back = "/list?state=all"
    async with http.post(
        server.url(f"/list/{first['id']}/state"), data={"state": "read", "back": back}, allow_redirects=False
    ) as marked:
        assert marked.status == 303 and marked.headers["Location"] == back
    assert await listed(http, server, state="read") == ["Cached list-filter-one"]
    async with http.post(
        server.url(f"/list/{third['id']}/delete"),
        data={"back": "https://evil.example/"},
        allow_redirects=False,
    ) as deleted:
        assert deleted.status == 303 and deleted.headers["Location"] == "/list"  # never off the list
    assert await listed(http, server, state="all") == ["Expires list-filter-two", "Cached list-filter-one"]

    async with http.post(
        server.url(f"/api/list/{second['id']}/progress"), json={"progress": 0.37}
    ) as progress:
        assert progress.status == 200 and (await progress.json())["progress"] == 0.37
    async with http.get(server.url(f"/list/{second['id']}")) as page:
        assert 'data-progress="0.3700"' in await page.text()
    async with http.post(server.url(f"/api/list/{second['id']}/progress"), data={"progress": "1"}) as done:
        assert (await done.json())["state"] == "read"  # read to the end

    async with http.get(server.url("/list", q="expires")) as page:
        html = await page.text()
        assert (
            page.status == 200 and "Expires list-filter-two" in html and "Cached list-filter-one" not in html
        )
        assert 'value="expires"' in html and "1 saved article match" in html
    async with http.delete(server.url(f"/api/list/{second['id']}")) as gone:
        assert gone.status == 200
    async with http.get(server.url(f"/list/{second['id']}")) as missing:
        assert missing.status == 404


@pytest.mark.parametrize(
    ("method", "path", "body", "status"),
    [
        ("POST", "/api/list", {}, 400),
        ("POST", "/api/list", {"url": ""}, 400),
        ("POST", "/api/list", {"url": "not a url at all"}, 400),
        ("POST", "/api/list", {"url": "ftp://files.example/x"}, 400),
        ("POST", "/api/list", {"url": 42}, 400),
        ("POST", "/api/list", {"url": "https://a.example/", "tags": {"a": 1}}, 400),
        ("POST", "/api/list", "[1, 2]", 400),
        ("POST", "/api/list", "{not json", 400),
        ("GET", "/api/list?state=gone", None, 400),
        ("GET", "/api/list?limit=many", None, 400),
        ("GET", "/api/list/AAAAAAAAAAAA", None, 404),
        ("POST", "/api/list/AAAAAAAAAAAA", {"state": "read"}, 404),
        ("POST", "/api/list/AAAAAAAAAAAA/progress", {"progress": 0.5}, 404),
        ("DELETE", "/api/list/AAAAAAAAAAAA", None, 404),
    ],
)
async def test_bad_input_is_a_json_error(
    server: RunningServer, http: aiohttp.ClientSession, method: str, path: str, body: Any, status: int
) -> None:
    kwargs: dict[str, Any] = {}
    if isinstance(body, dict):
        kwargs["json"] = body
    elif isinstance(body, str):
        kwargs["data"] = body
        kwargs["headers"] = {"Content-Type": "application/json"}
    async with http.request(method, server.url(path), **kwargs) as response:
        assert response.status == status
        error = (await response.json())["error"]
        assert error["status"] == status and error["message"]


async def test_bad_progress_and_state_are_400(
    server: RunningServer, upstream: Upstream, http: aiohttp.ClientSession
) -> None:
    entry = await save(http, server, upstream.url("/article"))
    for body in ({"progress": 1.5}, {"progress": "half"}, {}):
        async with http.post(server.url(f"/api/list/{entry['id']}/progress"), json=body) as response:
            assert response.status == 400
    async with http.post(server.url(f"/api/list/{entry['id']}"), json={"state": "gone"}) as response:
        assert response.status == 400
    async with http.get(server.url("/list/AAAAAAAAAAAA.epub")) as response:
        assert response.status == 404


async def test_two_users_of_one_auth_file_keep_their_lists_apart(
    tmp_path: Path, upstream: Upstream, http: aiohttp.ClientSession
) -> None:
    logins = tmp_path / "logins"
    logins.write_text(f"{':'.join(ALICE)}\n{':'.join(BOB)}\n")
    settings = test_settings(reading_list=f"sqlite:{tmp_path / 'list.sqlite3'}", auth_file=logins)
    async with serve(settings) as running:
        async with http.get(running.url("/api/list")) as anonymous:
            assert anonymous.status == 401
        async with http.post(
            running.url("/api/list"), json={"url": upstream.url("/article")}, headers=basic(ALICE)
        ) as saved:
            assert saved.status == 201
            alices = (await saved.json())["id"]
        async with http.post(
            running.url("/api/list"), json={"url": upstream.url("/cached/bobs-own")}, headers=basic(BOB)
        ) as saved:
            assert saved.status == 201
            bobs = (await saved.json())["id"]

        async def titles(login: tuple[str, str]) -> list[str]:
            async with http.get(running.url("/api/list", state="all"), headers=basic(login)) as response:
                return [entry["title"] for entry in (await response.json())["entries"]]

        assert await titles(ALICE) == [ARTICLE_TITLE]
        assert await titles(BOB) == ["Cached bobs-own"]
        for path in (f"/list/{alices}", f"/api/list/{alices}", f"/list/{alices}.epub"):
            async with http.get(running.url(path), headers=basic(BOB)) as other:
                assert other.status == 404  # another reader's entry is no entry
        async with http.post(
            running.url(f"/api/list/{alices}/progress"), json={"progress": 0.5}, headers=basic(BOB)
        ) as other:
            assert other.status == 404
        async with http.delete(running.url(f"/api/list/{bobs}"), headers=basic(ALICE)) as other:
            assert other.status == 404
        async with http.get(running.url("/list"), headers=basic(BOB)) as page:
            html = await page.text()
            assert "Cached bobs-own" in html and ARTICLE_TITLE not in html


async def test_without_a_login_each_client_address_has_its_own_list(
    server: RunningServer, upstream: Upstream, http: aiohttp.ClientSession
) -> None:
    """Proxy mode's gateway names its client in a signed header (`limits.client_key`): two proxy
    clients, two lists; a header with a bad signature is ignored (the address seen counts)."""
    phone = {CLIENT_HEADER: signed_client("192.0.2.10")}
    laptop = {CLIENT_HEADER: signed_client("192.0.2.20")}
    async with http.post(server.url("/api/list"), json={"url": upstream.url("/article")}, headers=phone) as r:
        assert r.status == 201
    async with http.get(server.url("/api/list"), headers=phone) as mine:
        assert len((await mine.json())["entries"]) == 1
    for headers in (laptop, {}, {CLIENT_HEADER: "192.0.2.10 forged-signature"}):
        async with http.get(server.url("/api/list"), headers=headers) as other:
            assert (await other.json())["entries"] == []


@pytest.mark.parametrize("backend", ["sqlite", "redis"])
async def test_the_list_survives_a_server_restart(
    backend: str,
    tmp_path: Path,
    upstream: Upstream,
    http: aiohttp.ClientSession,
    request: pytest.FixtureRequest,
) -> None:
    if backend == "redis":
        redis_url = request.getfixturevalue("redis_url")
        settings = test_settings(cache=redis_url)  # the list lives in the cache's Redis
    else:
        settings = test_settings(cache=f"sqlite:{tmp_path / 'cache.sqlite3'}")  # the list beside it
    async with serve(settings) as running:
        entry = await save(http, running, upstream.url("/article"), tags="kept")
        async with http.post(running.url(f"/api/list/{entry['id']}/progress"), json={"progress": 0.25}):
            pass
    if backend == "sqlite":
        assert (tmp_path / "readinglist.sqlite3").is_file()
    async with serve(settings) as restarted:
        async with http.get(restarted.url("/api/list")) as response:
            (kept,) = (await response.json())["entries"]
        assert (kept["id"], kept["tags"], kept["progress"]) == (entry["id"], ["kept"], 0.25)
        async with http.get(restarted.url(f"/list/{entry['id']}")) as page:
            assert ARTICLE_TITLE in await page.text()


async def test_the_save_bookmarklets_page_asks_before_saving(
    server: RunningServer, upstream: Upstream, http: aiohttp.ClientSession
) -> None:
    """`/list/add?url=…` (the bookmarklet's target) is a GET: it saves nothing, it shows one Save
    button, and its form then saves with the cookie it set."""
    async with http.get(server.url("/list/add", url=upstream.url("/article"))) as page:
        body = await page.text()
        assert page.status == 200 and "Save this page?" in body and "did not say" not in body
        assert f'<input type="hidden" name="url" value="{upstream.url("/article")}">' in body
    async with http.get(server.url("/api/list")) as listed_now:
        assert (await listed_now.json())["entries"] == []
    form = {"url": upstream.url("/article")}
    async with http.post(server.url("/list/save"), data=form, headers={"Origin": "null"}) as saved:
        assert saved.status == 200 and ARTICLE_TITLE in await saved.text()  # the saved copy
    async with http.get(server.url("/list/add")) as missing:
        assert missing.status == 400 and "text/html" in missing.headers["Content-Type"]


#: Readability's test pages with what a book checker trips on: tables, lists, figures, maths,
#: embedded media, inline SVG, data: images, scripts in comments, invalid attributes, other scripts.
EPUB_PAGES = (
    "keep-tabular-data",
    "links-in-tables",
    "mathjax",
    "ol",
    "google-sre-book-1",
    "ietf-1",
    "lwn-1",
    "hukumusume",
    "heise",
    "embedded-videos",
    "data-url-image",
    "cnet-svg-classes",
    "comment-inside-script-parsing",
    "invalid-attributes",
    "wikipedia",
    "nytimes-1",
)


async def test_the_whole_list_downloads_as_a_valid_epub(
    server: RunningServer, upstream: Upstream, http: aiohttp.ClientSession, tmp_path: Path
) -> None:
    """Real articles saved through the server, the list downloaded as one book, checked by the
    W3C's EPUBCheck: no fatal error, no error, no warning."""
    from test_readinglist import _epubcheck

    upstream.require_datasets()
    for name in EPUB_PAGES:
        await save(http, server, upstream.url(f"/rd/{name}"))
    async with http.get(server.url("/list/export.epub")) as book:
        assert book.status == 200
        path = tmp_path / "reading-list.epub"
        path.write_bytes(await book.read())
    report = _epubcheck(path)
    problems = [
        (message["severity"], message["ID"], message["message"], message.get("locations", [])[:1])
        for message in report["messages"]
        if message["severity"] in ("FATAL", "ERROR", "WARNING")
    ]
    assert problems == []
    with zipfile.ZipFile(path) as archive:
        chapters = [name for name in archive.namelist() if name.startswith("EPUB/article-")]
    assert len(chapters) == len(EPUB_PAGES)


async def test_a_book_holds_the_articles_images(
    server: RunningServer, http: aiohttp.ClientSession, tmp_path: Path
) -> None:
    """The images of a saved article go into its book as files of their own (made by the image
    service, as the reader view showed them); one that is not an image is left out, and the
    book is still valid."""
    from PIL import Image
    from test_readinglist import _epubcheck

    from readerproxy.web.list_routes import READING_LIST
    from readerproxy.web.readinglist import Entry

    photo = io.BytesIO()
    Image.new("RGB", (64, 48), (200, 120, 40)).save(photo, "JPEG")

    async def jpeg(_: web.Request) -> web.Response:
        return web.Response(body=photo.getvalue(), content_type="image/jpeg")

    async def pdf(_: web.Request) -> web.Response:
        return web.Response(body=b"%PDF-1.4\n", content_type="application/pdf")

    site = web.Application()
    site.router.add_get("/photo.jpg", jpeg)
    site.router.add_get("/doc.pdf", pdf)
    async with serve_app(site) as images:
        html = (
            f'<p>Text before the picture.</p><figure><img src="{images}/photo.jpg" alt="A square"><figcaption>'
            f'A square</figcaption></figure><p>Then <img src="{images}/doc.pdf" alt="a PDF"> some more.</p>'
        )
        article = {"title": "Pictures", "html": html, "text": "Text before the picture. Then some more."}
        assert server.app is not None
        saved, _ = await server.app[READING_LIST].save(
            "addr:127.0.0.1", Entry.from_article("http://pictures.example/story", article)
        )
        async with http.get(server.url(f"/list/{saved.id}.epub")) as book:
            path = tmp_path / "pictures.epub"
            path.write_bytes(await book.read())
    with zipfile.ZipFile(path) as archive:
        names = [name for name in archive.namelist() if name.startswith("EPUB/images/")]
        chapter = archive.read("EPUB/article-1.xhtml").decode()
        package = archive.read("EPUB/package.opf").decode()
        assert names == ["EPUB/images/image-1.jpg"]
        assert archive.read(names[0]).startswith(b"\xff\xd8")  # a JPEG
    assert '<img src="images/image-1.jpg" alt="A square"/>' in chapter and "a PDF" not in chapter
    assert 'href="images/image-1.jpg" media-type="image/jpeg"' in package
    report = _epubcheck(path)
    assert [m for m in report["messages"] if m["severity"] in ("FATAL", "ERROR", "WARNING")] == []


async def test_a_signed_save_keeps_the_article_given_and_an_unsigned_one_is_refused(
    server: RunningServer, http: aiohttp.ClientSession
) -> None:
    """Proxy mode's gateway saves the extraction its reader view showed, signed with the data
    directory's secret; nothing is fetched (the address does not even resolve). A body whose
    signature does not hold is refused."""
    from readerproxy.web.auth import ARTICLE_HEADER, article_signature

    article = {"title": "As Shown", "html": "<p>Kept as the view showed it.</p>", "text": "Kept as shown."}
    body = json.dumps(
        {"url": "http://unresolvable.invalid/story", "tags": "proxy", "article": article}
    ).encode()
    headers = {"Content-Type": "application/json", ARTICLE_HEADER: article_signature(body)}
    async with http.post(server.url("/api/list"), data=body, headers=headers) as saved:
        assert saved.status == 201
        entry = await saved.json()
    assert (entry["title"], entry["tags"]) == ("As Shown", ["proxy"])
    forged = {**headers, ARTICLE_HEADER: article_signature(body + b" ")}
    async with http.post(server.url("/api/list"), data=body, headers=forged) as refused:
        assert refused.status == 403
    tampered = body.replace(b"As Shown", b"Tampered")
    async with http.post(server.url("/api/list"), data=tampered, headers=headers) as refused:
        assert refused.status == 403
