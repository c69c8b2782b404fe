"""The reading list: articles a reader saved, kept with their extraction, per reader.

An `Entry` keeps what the reader view needs to show the article again without fetching it (the
extraction result as `/read` has it: the article's HTML, title, site, byline, dates, lead image,
word count and reading time, the view and its items, posts or facts), and the reader's own state:
when it was saved, tags, how far it was read (0–1) and whether it is unread, read or archived.

Entries belong to an owner (`auth.reader_key`: `user:NAME` with a login, `addr:ADDRESS`
without): every method takes the owner, and an entry of another owner is never found, listed,
changed or deleted (an unknown id and another reader's id look the same: None / False).

Two stores, one interface (`ReadingList`):

- `SQLiteReadingList` (the embedded default, `readinglist.sqlite3` beside the cache in the data
  directory): one table, and an FTS5 index over each entry's title, site, text and tags, searched
  with `MATCH` (every word of the query, each as a prefix). Blocking calls run on a thread of its own.
- `RedisReadingList` (when the cache is Redis, the same server: `reading_list_spec`): an entry is a
  hash, a reader's entries a sorted set by the time saved, a hash maps each URL to its entry. Its
  keys never expire; give Redis a `maxmemory-policy` that keeps keys without a TTL (`volatile-lru`,
  or `noeviction`), or a database of its own (`--reading-list redis://HOST:PORT/1`). Search on
  Redis is a documented fallback, not an index: the reader's entries are scanned (their stored
  title, site, text and tags) for every word of the query, case-folded, as a substring. A reader's
  list is a few hundred entries, so a scan costs little; Redis's search module is not assumed.

`reading_list_spec` says where the list lives; `open_reading_list` opens it lazily (the SQLite
file is created on the first use, never at start-up).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import re
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol, TypeVar

from .cache import parse_cache_spec, use_wal
from .templating import display_host

T = TypeVar("T")

#: An entry's state, in the order the list's filters name them.
STATES = ("unread", "read", "archived")
#: Filters of `ReadingList.entries` by state: "active" is everything not archived (the list's
#: default), "all" everything.
STATE_FILTERS = ("active", "all", *STATES)
#: Tags: at most this many per entry, each at most `MAX_TAG` characters of letters, digits, - and _.
MAX_TAGS = 20
MAX_TAG = 40
_TAG = re.compile(r"[^\w\-]+", re.UNICODE)
#: An entry's id: 12 URL-safe characters (`secrets.token_urlsafe(9)`).
ID_PATTERN = r"[A-Za-z0-9_-]{12}"
_ID = re.compile(ID_PATTERN)
#: Keys of the extraction result that are about one request, not the article: not kept.
TRANSIENT_KEYS = ("cache", "timings_ms", "blocks", "signals", "rendered")
#: The most entries one listing answers.
MAX_LIMIT = 500


def normal_tags(raw: str | Iterable[str] | None) -> tuple[str, ...]:
    """Tags from a comma- or space-separated string (or a list of them): lower case, letters,
    digits, - and _, each once, in the order given, at most `MAX_TAGS`."""
    if raw is None:
        return ()
    # a list's items are tags each (spaces inside one become "-"); a string is split
    items = (
        re.split(r"[,\s]+", raw)
        if isinstance(raw, str)
        else [re.sub(r"\s+", "-", str(i).strip()) for i in raw]
    )
    tags: list[str] = []
    for item in items:
        tag = _TAG.sub("", item.strip().lower())[:MAX_TAG]
        if tag and tag not in tags:
            tags.append(tag)
    return tuple(tags[:MAX_TAGS])


def valid_id(value: str) -> bool:
    return bool(_ID.fullmatch(value))


@dataclass(frozen=True, slots=True)
class Entry:
    """One saved article: its extraction (`article`) and the reader's state of it."""

    id: str
    url: str
    title: str
    site: str
    byline: str | None
    published: str | None
    image: str | None
    word_count: int
    reading_minutes: int
    view: str
    saved_at: float
    tags: tuple[str, ...] = ()
    progress: float = 0.0
    state: str = "unread"
    text: str = ""
    article: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_article(cls, url: str, article: Mapping[str, Any], tags: Iterable[str] = ()) -> Entry:
        """A new entry for an extraction result (the dict `Reader.read` answers)."""
        kept = {key: value for key, value in article.items() if key not in TRANSIENT_KEYS}
        return cls(
            id=secrets.token_urlsafe(9),
            url=url,
            title=str(article.get("title") or "").strip() or display_host(url) or url,
            site=str(article.get("site_name") or "").strip() or display_host(article.get("final_url") or url),
            byline=article.get("author") or article.get("byline"),
            published=article.get("published") or article.get("date"),
            image=article.get("image") if isinstance(article.get("image"), str) else None,
            word_count=int(article.get("word_count") or 0),
            reading_minutes=int(article.get("reading_minutes") or 0),
            view=str(article.get("view") or "article"),
            saved_at=time.time(),
            tags=normal_tags(tags),
            text=str(article.get("text") or ""),
            article=kept,
        )

    def summary(self) -> dict[str, Any]:
        """The entry as the JSON API lists it (without the article's text and HTML)."""
        return {
            "id": self.id,
            "url": self.url,
            "title": self.title,
            "site": self.site,
            "byline": self.byline,
            "published": self.published,
            "image": self.image,
            "word_count": self.word_count,
            "reading_minutes": self.reading_minutes,
            "view": self.view,
            "saved_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.saved_at)),
            "tags": list(self.tags),
            "progress": self.progress,
            "state": self.state,
        }

    def meta_json(self) -> str:
        """Everything but the article and text, as stored (`_from_meta` reads it back)."""
        values = {
            "id": self.id,
            "url": self.url,
            "title": self.title,
            "site": self.site,
            "byline": self.byline,
            "published": self.published,
            "image": self.image,
            "word_count": self.word_count,
            "reading_minutes": self.reading_minutes,
            "view": self.view,
            "saved_at": self.saved_at,
            "tags": list(self.tags),
            "progress": self.progress,
            "state": self.state,
        }
        return json.dumps(values, ensure_ascii=False)


def _from_meta(raw: str | bytes, text: str = "", article: Mapping[str, Any] | None = None) -> Entry:
    values = json.loads(raw)
    return Entry(
        id=values["id"],
        url=values["url"],
        title=values["title"],
        site=values["site"],
        byline=values.get("byline"),
        published=values.get("published"),
        image=values.get("image"),
        word_count=int(values.get("word_count") or 0),
        reading_minutes=int(values.get("reading_minutes") or 0),
        view=values.get("view") or "article",
        saved_at=float(values["saved_at"]),
        tags=tuple(values.get("tags") or ()),
        progress=float(values.get("progress") or 0.0),
        state=values.get("state") or "unread",
        text=text,
        article=article or {},
    )


@dataclass(frozen=True, slots=True)
class Query:
    """What a listing asks for: a state filter (`STATE_FILTERS`), a tag, search words."""

    state: str = "active"
    tag: str | None = None
    search: str = ""
    limit: int = 200
    offset: int = 0

    def takes(self, entry: Entry) -> bool:
        """Whether an entry passes the state and tag filters (not the search)."""
        if self.state == "active" and entry.state == "archived":
            return False
        if self.state in STATES and entry.state != self.state:
            return False
        return self.tag is None or self.tag in entry.tags


def search_words(search: str) -> list[str]:
    """The words of a search, case-folded (letters and digits; punctuation separates them)."""
    return [word for word in re.split(r"[^\w]+", search.casefold()) if word][:16]


class ReadingList(Protocol):
    """A store of reading lists (see the module's docstring); each method for one owner."""

    async def save(self, owner: str, entry: Entry) -> tuple[Entry, bool]:
        """Keep an entry; when the owner has the URL already, its article is replaced, its tags
        merged and its id, date, progress and state kept. The entry kept, and whether it is new."""
        ...

    async def get(self, owner: str, entry_id: str) -> Entry | None:
        """One entry with its article and text, or None."""
        ...

    async def entries(self, owner: str, query: Query) -> list[Entry]:
        """The owner's entries that pass `query`, newest first, without their article."""
        ...

    async def update(
        self,
        owner: str,
        entry_id: str,
        *,
        state: str | None = None,
        progress: float | None = None,
        tags: tuple[str, ...] | None = None,
    ) -> Entry | None:
        """Change an entry's state, progress or tags; the entry (without its article), or None."""
        ...

    async def delete(self, owner: str, entry_id: str) -> bool: ...

    async def close(self) -> None: ...


def _merged(existing: Entry, new: Entry) -> Entry:
    return replace(
        new,
        id=existing.id,
        saved_at=existing.saved_at,
        progress=existing.progress,
        state=existing.state,
        tags=normal_tags([*existing.tags, *new.tags]),
    )


def _changed(entry: Entry, state: str | None, progress: float | None, tags: tuple[str, ...] | None) -> Entry:
    if state is not None and state not in STATES:
        raise ValueError(f"state must be one of {', '.join(STATES)}")
    if progress is not None:
        progress = min(max(float(progress), 0.0), 1.0)
    return replace(
        entry,
        state=entry.state if state is None else state,
        progress=entry.progress if progress is None else progress,
        tags=entry.tags if tags is None else normal_tags(tags),
    )


# ---- SQLite ------------------------------------------------------------------------------------


class SQLiteReadingList:
    """The reading lists in one SQLite file (WAL), searched through FTS5; one thread of its own
    runs every statement. The file and its tables are made on the first call."""

    BUSY_TIMEOUT_MS = 2000

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).expanduser()
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="readinglist")

    def _open(self) -> sqlite3.Connection:
        if self._conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(
                self.path, timeout=self.BUSY_TIMEOUT_MS / 1000, check_same_thread=False, isolation_level=None
            )
            try:
                use_wal(conn, self.BUSY_TIMEOUT_MS / 1000)
                conn.execute("PRAGMA synchronous = NORMAL")
                conn.executescript(
                    """
                    CREATE TABLE IF NOT EXISTS entries (
                        n INTEGER PRIMARY KEY,
                        id TEXT NOT NULL UNIQUE,
                        owner TEXT NOT NULL,
                        url TEXT NOT NULL,
                        saved_at REAL NOT NULL,
                        state TEXT NOT NULL,
                        tags TEXT NOT NULL,
                        meta TEXT NOT NULL,
                        text TEXT NOT NULL,
                        article TEXT NOT NULL,
                        UNIQUE (owner, url)
                    );
                    CREATE INDEX IF NOT EXISTS entries_by_owner ON entries (owner, saved_at);
                    CREATE VIRTUAL TABLE IF NOT EXISTS entries_fts
                        USING fts5(title, site, text, tags, tokenize = 'unicode61 remove_diacritics 2');
                    """
                )
            except BaseException:
                conn.close()
                raise
            self._conn = conn
        return self._conn

    def _run(self, operation: Callable[[sqlite3.Connection], T]) -> T:
        with self._lock:
            try:
                return operation(self._open())
            except sqlite3.Error:
                conn, self._conn = self._conn, None
                if conn is not None:
                    with contextlib.suppress(sqlite3.Error):
                        conn.close()
                raise

    async def _call(self, operation: Callable[[sqlite3.Connection], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._thread, self._run, operation)

    @staticmethod
    def _index(conn: sqlite3.Connection, n: int, entry: Entry) -> None:
        conn.execute("DELETE FROM entries_fts WHERE rowid = ?", (n,))
        conn.execute(
            "INSERT INTO entries_fts (rowid, title, site, text, tags) VALUES (?, ?, ?, ?, ?)",
            (n, entry.title, entry.site, entry.text, " ".join(entry.tags)),
        )

    @staticmethod
    def _write(conn: sqlite3.Connection, entry: Entry, owner: str, *, article: bool) -> int:
        values = (entry.saved_at, entry.state, " ".join(entry.tags), entry.meta_json())
        if article:
            conn.execute(
                "INSERT INTO entries (id, owner, url, saved_at, state, tags, meta, text, article) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET saved_at = excluded.saved_at, "
                "state = excluded.state, tags = excluded.tags, meta = excluded.meta, text = excluded.text, "
                "article = excluded.article",
                (
                    entry.id,
                    owner,
                    entry.url,
                    *values,
                    entry.text,
                    json.dumps(entry.article, ensure_ascii=False),
                ),
            )
        else:
            conn.execute(
                "UPDATE entries SET saved_at = ?, state = ?, tags = ?, meta = ? WHERE id = ? AND owner = ?",
                (*values, entry.id, owner),
            )
        row = conn.execute("SELECT n FROM entries WHERE id = ?", (entry.id,)).fetchone()
        return int(row[0])

    async def save(self, owner: str, entry: Entry) -> tuple[Entry, bool]:
        def op(conn: sqlite3.Connection) -> tuple[Entry, bool]:
            conn.execute("BEGIN IMMEDIATE")
            try:
                row = conn.execute(
                    "SELECT meta FROM entries WHERE owner = ? AND url = ?", (owner, entry.url)
                ).fetchone()
                kept = entry if row is None else _merged(_from_meta(row[0]), entry)
                n = self._write(conn, kept, owner, article=True)
                self._index(conn, n, kept)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            return kept, row is None

        return await self._call(op)

    async def get(self, owner: str, entry_id: str) -> Entry | None:
        def op(conn: sqlite3.Connection) -> Entry | None:
            row = conn.execute(
                "SELECT meta, text, article FROM entries WHERE id = ? AND owner = ?", (entry_id, owner)
            ).fetchone()
            return None if row is None else _from_meta(row[0], row[1], json.loads(row[2]))

        return await self._call(op)

    async def entries(self, owner: str, query: Query) -> list[Entry]:
        conditions = ["e.owner = ?"]
        args: list[Any] = [owner]
        if query.state == "active":
            conditions.append("e.state != 'archived'")
        elif query.state in STATES:
            conditions.append("e.state = ?")
            args.append(query.state)
        if query.tag:
            conditions.append("(' ' || e.tags || ' ') LIKE ?")
            args.append(f"% {query.tag} %")
        words = search_words(query.search)
        join = ""
        if words:
            join = "JOIN entries_fts f ON f.rowid = e.n"
            conditions.append("entries_fts MATCH ?")
            args.append(" ".join('"' + word.replace('"', '""') + '"*' for word in words))
        sql = (
            f"SELECT e.meta FROM entries e {join} WHERE {' AND '.join(conditions)} "
            "ORDER BY e.saved_at DESC, e.n DESC LIMIT ? OFFSET ?"
        )
        args += [min(max(query.limit, 1), MAX_LIMIT), max(query.offset, 0)]

        def op(conn: sqlite3.Connection) -> list[Entry]:
            return [_from_meta(row[0]) for row in conn.execute(sql, args).fetchall()]

        return await self._call(op)

    async def update(
        self,
        owner: str,
        entry_id: str,
        *,
        state: str | None = None,
        progress: float | None = None,
        tags: tuple[str, ...] | None = None,
    ) -> Entry | None:
        def op(conn: sqlite3.Connection) -> Entry | None:
            conn.execute("BEGIN IMMEDIATE")
            try:
                row = conn.execute(
                    "SELECT meta, text FROM entries WHERE id = ? AND owner = ?", (entry_id, owner)
                ).fetchone()
                if row is None:
                    conn.execute("ROLLBACK")
                    return None
                entry = _changed(_from_meta(row[0], row[1]), state, progress, tags)
                n = self._write(conn, entry, owner, article=False)
                if tags is not None:
                    self._index(conn, n, entry)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            return replace(entry, text="")

        return await self._call(op)

    async def delete(self, owner: str, entry_id: str) -> bool:
        def op(conn: sqlite3.Connection) -> bool:
            row = conn.execute(
                "SELECT n FROM entries WHERE id = ? AND owner = ?", (entry_id, owner)
            ).fetchone()
            if row is None:
                return False
            conn.execute("DELETE FROM entries WHERE n = ?", (row[0],))
            conn.execute("DELETE FROM entries_fts WHERE rowid = ?", (row[0],))
            return True

        return await self._call(op)

    async def close(self) -> None:
        def op() -> None:
            with self._lock:
                if self._conn is not None:
                    self._conn.close()
                    self._conn = None

        await asyncio.get_running_loop().run_in_executor(self._thread, op)
        self._thread.shutdown(wait=True)


# ---- Redis -------------------------------------------------------------------------------------


class RedisReadingList:
    """The reading lists in Redis (see the module's docstring for the keys, and for search, which
    scans the reader's entries rather than using an index)."""

    PREFIX = "readerproxy:list:"

    def __init__(self, url: str, timeout: float = 2.0) -> None:
        from redis.asyncio import Redis

        self.url = url
        self._redis: Any = Redis.from_url(
            url, socket_connect_timeout=timeout, socket_timeout=timeout, health_check_interval=0
        )

    def _keys(self, owner: str) -> tuple[str, str, str]:
        """The owner's key prefix, sorted set of entry ids, and URL → id hash."""
        digest = hashlib.sha256(owner.encode("utf-8", "surrogateescape")).hexdigest()[:32]
        base = f"{self.PREFIX}{digest}:"
        return base, base + "entries", base + "urls"

    async def _meta(self, owner: str, entry_id: str) -> Entry | None:
        base, _, _ = self._keys(owner)
        raw = await self._redis.hget(base + "e:" + entry_id, "meta")
        return None if raw is None else _from_meta(raw)

    async def _put(self, owner: str, entry: Entry, *, article: bool) -> None:
        base, ids, urls = self._keys(owner)
        fields: dict[str, Any] = {"meta": entry.meta_json()}
        if article:
            fields["text"] = entry.text
            fields["article"] = json.dumps(entry.article, ensure_ascii=False)
            fields["search"] = " ".join(
                (entry.title, entry.site, " ".join(entry.tags), entry.text)
            ).casefold()
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.hset(base + "e:" + entry.id, mapping=fields)
            pipe.zadd(ids, {entry.id: entry.saved_at})
            pipe.hset(urls, entry.url, entry.id)
            await pipe.execute()

    async def save(self, owner: str, entry: Entry) -> tuple[Entry, bool]:
        _, _, urls = self._keys(owner)
        known = await self._redis.hget(urls, entry.url)
        existing = await self._meta(owner, known.decode()) if known is not None else None
        kept = entry if existing is None else _merged(existing, entry)
        await self._put(owner, kept, article=True)
        return kept, existing is None

    async def get(self, owner: str, entry_id: str) -> Entry | None:
        base, _, _ = self._keys(owner)
        meta, text, article = await self._redis.hmget(base + "e:" + entry_id, ["meta", "text", "article"])
        if meta is None:
            return None
        return _from_meta(meta, (text or b"").decode("utf-8"), json.loads(article or b"{}"))

    async def entries(self, owner: str, query: Query) -> list[Entry]:
        base, ids, _ = self._keys(owner)
        words = search_words(query.search)
        found: list[Entry] = []
        skipped = 0
        limit = min(max(query.limit, 1), MAX_LIMIT)
        for raw_id in await self._redis.zrevrange(ids, 0, -1):
            key = base + "e:" + raw_id.decode()
            if words:
                meta, haystack = await self._redis.hmget(key, ["meta", "search"])
                text = (haystack or b"").decode("utf-8")
                if not all(word in text for word in words):
                    continue
            else:
                meta = await self._redis.hget(key, "meta")
            if meta is None:
                continue
            entry = _from_meta(meta)
            if not query.takes(entry):
                continue
            if skipped < query.offset:
                skipped += 1
                continue
            found.append(entry)
            if len(found) >= limit:
                break
        return found

    async def update(
        self,
        owner: str,
        entry_id: str,
        *,
        state: str | None = None,
        progress: float | None = None,
        tags: tuple[str, ...] | None = None,
    ) -> Entry | None:
        entry = await self._meta(owner, entry_id)
        if entry is None:
            return None
        entry = _changed(entry, state, progress, tags)
        await self._put(owner, entry, article=False)
        if tags is not None:  # the searched text names the tags
            base, _, _ = self._keys(owner)
            key = base + "e:" + entry_id
            text = (await self._redis.hget(key, "text") or b"").decode("utf-8")
            searched = " ".join((entry.title, entry.site, " ".join(entry.tags), text)).casefold()
            await self._redis.hset(key, "search", searched)
        return entry

    async def delete(self, owner: str, entry_id: str) -> bool:
        entry = await self._meta(owner, entry_id)
        if entry is None:
            return False
        base, ids, urls = self._keys(owner)
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.delete(base + "e:" + entry_id)
            pipe.zrem(ids, entry_id)
            pipe.hdel(urls, entry.url)
            await pipe.execute()
        return True

    async def close(self) -> None:
        await self._redis.aclose()


# ---- where it lives ----------------------------------------------------------------------------

#: The SQLite file's name, beside the cache's file or in the data directory.
SQLITE_NAME = "readinglist.sqlite3"


def reading_list_spec(reading_list: str, cache: str, data: Path) -> str:
    """Where the reading lists live: `reading_list` when given (sqlite:PATH or a Redis URL); else
    the cache's Redis when the cache is Redis, `readinglist.sqlite3` beside a SQLite cache's file,
    or in the data directory `data`."""
    if reading_list:
        return reading_list
    parsed = parse_cache_spec(cache)
    if parsed.kind == "redis":
        return parsed.target
    if parsed.kind == "sqlite":
        return f"sqlite:{Path(parsed.target).expanduser().parent / SQLITE_NAME}"
    return f"sqlite:{data / SQLITE_NAME}"


def open_reading_list(spec: str) -> ReadingList:
    """The store a spec names (`reading_list_spec`); nothing is opened until its first use."""
    parsed = parse_cache_spec(spec)
    if parsed.kind == "redis":
        return RedisReadingList(parsed.target)
    if parsed.kind == "sqlite":
        return SQLiteReadingList(parsed.target)
    raise ValueError(f"a reading list cannot be kept in {spec!r}")
