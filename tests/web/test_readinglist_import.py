"""Imports into the reading list (`readerproxy/web/list_import.py`): the export files of Pocket (CSV
and HTML), Instapaper (CSV) and Wallabag (JSON) read into items, and an import through the reader
server saving each page in the background, archived ones archived, failures counted with their
reason, its progress on `/api/list/import` and `/list/import`.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from support.reader_server import RunningServer, serve, test_settings
from support.upstream import ARTICLE_TITLE, Upstream

from readerproxy.web.list_import import ImportFormatError, ImportItem, new_job, parse_export

POCKET_CSV = b"""title,url,time_added,tags,status
First,https://a.example/one,1700000000,tech|Later,unread
Second,https://b.example/two,1700000100,,archive
Not a web page,javascript:alert(1),1700000200,,unread
"""
POCKET_HTML = b"""<!DOCTYPE html><html><head><title>Pocket Export</title></head><body>
<h1>Unread</h1><ul><li><a href="https://a.example/one" time_added="1" tags="x,y">One</a></li></ul>
<h1>Read Archive</h1><ul><li><a href="https://b.example/two" time_added="2" tags="">Two</a></li></ul>
</body></html>"""
INSTAPAPER_CSV = b"""URL,Title,Selection,Folder,Timestamp
https://a.example/one,One,,Unread,1700000000
https://b.example/two,Two,,Archive,1700000001
https://c.example/three,Three,,Recipes,1700000002
"""
WALLABAG_JSON = json.dumps(
    [
        {"url": "https://a.example/one", "title": "One", "tags": ["news"], "is_archived": 0},
        {"url": "https://b.example/two", "title": "Two", "tags": [{"label": "Long Reads"}], "is_archived": 1},
        {"title": "no url"},
    ]
).encode()


@pytest.mark.parametrize(
    ("data", "name", "items"),
    [
        (
            POCKET_CSV,
            "pocket-csv",
            [
                ImportItem("https://a.example/one", ("tech", "later")),
                ImportItem("https://b.example/two", (), archived=True),
            ],
        ),
        (
            POCKET_HTML,
            "pocket-html",
            [ImportItem("https://a.example/one", ("x", "y")), ImportItem("https://b.example/two", (), True)],
        ),
        (
            INSTAPAPER_CSV,
            "instapaper-csv",
            [
                ImportItem("https://a.example/one"),
                ImportItem("https://b.example/two", archived=True),
                ImportItem("https://c.example/three", ("recipes",)),
            ],
        ),
        (
            WALLABAG_JSON,
            "wallabag",
            [
                ImportItem("https://a.example/one", ("news",)),
                ImportItem("https://b.example/two", ("long-reads",), archived=True),
            ],
        ),
    ],
)
def test_export_files_are_read(data: bytes, name: str, items: list[ImportItem]) -> None:
    assert parse_export(data) == (name, items)
    job = new_job(data + (b"" if name != "pocket-csv" else b"Again,https://a.example/one,1,,unread\n"))
    assert [item.url for item in job.items] == [
        item.url for item in reversed(items)
    ]  # oldest first, once each


@pytest.mark.parametrize("data", [b"", b"hello,world\n1,2\n", b"{not json", b"\x00\x01binary"])
def test_other_files_are_refused_saying_which_are_read(data: bytes) -> None:
    with pytest.raises(ImportFormatError, match=r"Pocket|JSON"):
        new_job(data)


@pytest.fixture
async def server(tmp_path: Path) -> Any:
    async with serve(test_settings(reading_list=f"sqlite:{tmp_path / 'list.sqlite3'}")) as running:
        yield running


async def finished(http: aiohttp.ClientSession, server: RunningServer) -> dict[str, Any]:
    """The import's status once it has ended (polled; 30 s at most)."""
    deadline = time.monotonic() + 30
    while True:
        async with http.get(server.url("/api/list/import")) as response:
            status: dict[str, Any] = await response.json()
        if not status["running"] or time.monotonic() > deadline:
            return status
        await asyncio.sleep(0.1)


async def test_an_import_saves_every_page_in_the_background(
    server: RunningServer, upstream: Upstream, http: aiohttp.ClientSession
) -> None:
    csv = (
        "title,url,time_added,tags,status\n"
        f"A,{upstream.url('/article')},1,imported|web,unread\n"
        f"B,{upstream.url('/cached/imported-two')},2,,archive\n"
        f"C,{upstream.url('/status/500')},3,,unread\n"
    )
    async with http.get(server.url("/api/list/import")) as none_yet:
        assert none_yet.status == 404
    async with http.post(
        server.url("/api/list/import"), data=csv.encode(), headers={"Content-Type": "text/csv"}
    ) as started:
        assert started.status == 202
        assert (await started.json())["total"] == 3
    status = await finished(http, server)
    assert (status["running"], status["done"], status["saved"], status["failed"]) == (False, 3, 2, 1)
    assert status["failures"][0]["url"] == upstream.url("/status/500") and status["failures"][0]["reason"]
    async with http.get(server.url("/api/list", state="all")) as listed:
        entries = {entry["title"]: entry for entry in (await listed.json())["entries"]}
    assert (
        entries[ARTICLE_TITLE]["tags"] == ["imported", "web"] and entries[ARTICLE_TITLE]["state"] == "unread"
    )
    assert entries["Cached imported-two"]["state"] == "archived"
    assert list(entries) == [ARTICLE_TITLE, "Cached imported-two"]  # the export's order kept
    async with http.get(server.url("/list/import")) as page:
        html = await page.text()
        assert "Done: 2 of 3 saved, 1 could not be read." in html and 'http-equiv="refresh"' not in html


async def test_the_import_form_and_one_import_at_a_time(
    server: RunningServer, upstream: Upstream, http: aiohttp.ClientSession
) -> None:
    csv = f"URL,Title,Selection,Folder,Timestamp\n{upstream.url('/slow?s=60')},Slow,,Unread,1\n"
    form = aiohttp.FormData()
    form.add_field("file", csv.encode(), filename="instapaper.csv", content_type="text/csv")
    async with http.post(server.url("/list/import"), data=form, allow_redirects=False) as started:
        assert started.status == 303 and started.headers["Location"] == "/list/import"
    async with http.get(server.url("/list/import")) as page:  # the slow page is still being read
        html = await page.text()
        assert "Saving 0 of 1" in html and 'http-equiv="refresh" content="2"' in html
    async with http.post(
        server.url("/api/list/import"), data=csv.encode(), headers={"Content-Type": "text/csv"}
    ) as again:
        assert again.status == 409
    status = await finished(http, server)
    assert (status["saved"], status["failed"]) == (0, 1)  # past the fetch's timeout
    async with http.post(
        server.url("/api/list/import"), data=b"not an export", headers={"Content-Type": "text/plain"}
    ) as bad:
        assert bad.status == 400 and "Pocket" in (await bad.json())["error"]["message"]
    async with http.post(
        server.url("/api/list/import"), data=csv.encode(), headers={"Origin": "http://evil.example"}
    ) as hostile:
        assert hostile.status == 403
