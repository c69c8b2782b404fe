"""The reading list's routes: save, list, read, change, export (the store is `readinglist.py`).

| route | what it does |
| --- | --- |
| `POST /api/list` | save `url` (JSON `{"url", "tags"}` or a form) : 201 and the entry (200 when saved already) |
| `GET /api/list?state=&tag=&q=` | the reader's entries, newest first, filtered and searched |
| `GET /api/list/{id}`, `POST /api/list/{id}`, `DELETE /api/list/{id}` | one entry: read, change (`state`, `tags`), delete |
| `POST /api/list/{id}/progress` | how far it was read (`progress`, 0–1): `static/reader.js` sends it |
| `GET /list` | the list page (`templates/list.html`): filters, search, a form per action |
| `POST /list/save`, `POST /list/{id}/state`, `POST /list/{id}/delete` | the same without JavaScript: a form, then a redirect (303) |
| `GET /list/add?url=…` | a page with one Save button for that page (the Save bookmarklet's target) |
| `POST /list/import`, `GET /list/import` | an export of Pocket, Instapaper or Wallabag saved in the background; its progress (`list_import.py`; JSON under `/api/list/import`) |
| `GET /list/{id}` | the saved article in the reader view, from the stored extraction (nothing is fetched) |
| `GET /list/{id}.epub` / `.md` / `.html`, `GET /list/export.epub` | exports (`epub.py`) |

Saving reads the page the way `/read` does (`Reader.read`, with the reader's preferences), so a
page `/read` has just shown is in the page and result caches and costs no fetch. Every entry is the
requesting reader's (`auth.reader_key`); another reader's id is answered 404 like an unknown one.

Every POST must come from this server's own pages (`_same_site`). `Sec-Fetch-Site` decides when
the browser sends it (same-origin or none); else an `Origin` naming another origin is refused 403.
Our pages send no referrer, so a browser that sends no `Sec-Fetch-Site` (on a plain-HTTP address
other than loopback) writes `Origin: null`, which another site's page can make too: such a POST is
taken when it carries `rp_same`, a SameSite=Strict cookie the list's pages set (a browser sends it
with requests of our own pages only); without it, Save answers a page asking to confirm (which
sets the cookie), and the other forms and the API 403. A request with neither header is no
browser's (a script, curl): no page can make one. The JSON routes take only JSON or form bodies,
of at most `MAX_BODY` bytes.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import time
from collections.abc import AsyncIterator, Mapping
from typing import Any
from urllib.parse import urlencode, urlsplit

from aiohttp import web
from markupsafe import Markup, escape

from ..engine.article import markdown_document
from ..errors import ReaderproxyError, RequestError
from .appkeys import READER, RENDERER, SETTINGS
from .auth import ARTICLE_HEADER, SAME_SITE_COOKIE, article_signature, reader_key
from .browser import CONNECTED
from .datadir import data_dir
from .download import attachment
from .epub import PICTURE_TYPES, Picture, article_xhtml_page, epub_book, image_sources
from .images import IMAGES, snap_width
from .list_import import MAX_FILE_BYTES, MAX_ITEMS, ImportFormatError, ImportItem, ImportJob, new_job
from .public import public_of
from .reader import ReadRequest, target_url
from .readinglist import (
    ID_PATTERN,
    STATE_FILTERS,
    STATES,
    Entry,
    Query,
    ReadingList,
    normal_tags,
    open_reading_list,
    reading_list_spec,
    valid_id,
)
from .templating import display_date, link_target, preferences

READING_LIST = web.AppKey("reading_list", ReadingList)
#: Each reader's import (the latest one), with the task that runs it (`list_import.py`).
IMPORTS = web.AppKey("imports", dict[str, tuple[ImportJob, "asyncio.Task[None]"]])
#: The largest body a list route reads (a URL, tags, a state, a progress).
MAX_BODY = 64 * 1024
#: The reader view's Content-Security-Policy (the server's) with `connect-src 'self'`, for a saved
#: article: `static/reader.js` sends its reading position to `/api/list/{id}/progress`.
SAVED_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
#: The list pages' policy: the saved article's, with the web app's manifest and service worker
#: (`static/manifest.webmanifest`, `static/sw.js`) and `static/list.js`, which registers it.
LIST_CSP = SAVED_CSP + "; manifest-src 'self'; worker-src 'self'"
#: Images a book holds at most (per article, and in all), and the width they are made at (through
#: the `/image` service and its cache: what the reader view showed).
BOOK_IMAGES_PER_ARTICLE = 30
BOOK_IMAGES = 300
BOOK_IMAGE_WIDTH = 750
#: The most entries `/list/export.epub` puts in one book.
EXPORT_LIMIT = 500


def install_reading_list(app: web.Application) -> None:
    """The reading list's routes, and its store opened on first use and closed with the app."""
    app.cleanup_ctx.append(_store)
    router = app.router
    router.add_post("/api/list", api_save, name="api_list_save")
    router.add_get("/api/list", api_entries, name="api_list")
    router.add_get(f"/api/list/{{id:{ID_PATTERN}}}", api_entry, name="api_list_entry")
    router.add_post(f"/api/list/{{id:{ID_PATTERN}}}", api_change, name="api_list_change")
    router.add_delete(f"/api/list/{{id:{ID_PATTERN}}}", api_delete, name="api_list_delete")
    router.add_post(f"/api/list/{{id:{ID_PATTERN}}}/progress", api_progress, name="api_list_progress")
    router.add_get("/list", list_page, name="list")
    router.add_get("/list/export.epub", export_all, name="list_export")
    router.add_post("/list/save", form_save, name="list_save")
    router.add_get("/list/add", add_page, name="list_add")
    router.add_get("/sw.js", service_worker, name="service_worker")
    router.add_post("/list/import", form_import, name="list_import_post")
    router.add_get("/list/import", import_page, name="list_import")
    router.add_post("/api/list/import", api_import, name="api_list_import_post")
    router.add_get("/api/list/import", api_import_status, name="api_list_import")
    router.add_get(f"/list/{{id:{ID_PATTERN}}}", read_entry, name="list_entry")
    router.add_get(f"/list/{{id:{ID_PATTERN}}}.{{fmt:epub|md|html}}", export_entry, name="list_entry_export")
    router.add_post(f"/list/{{id:{ID_PATTERN}}}/state", form_state, name="list_state")
    router.add_post(f"/list/{{id:{ID_PATTERN}}}/delete", form_delete, name="list_delete")


async def _store(app: web.Application) -> AsyncIterator[None]:
    settings = app[SETTINGS]
    app[READING_LIST] = open_reading_list(
        reading_list_spec(settings.reading_list, settings.cache, data_dir())
    )
    app[IMPORTS] = {}
    try:
        yield
    finally:
        running = [task for _, task in app[IMPORTS].values() if not task.done()]
        for task in running:
            task.cancel()
        if running:
            await asyncio.wait(running)
        await app[READING_LIST].close()


# ---- helpers -----------------------------------------------------------------------------------


def _same_site(request: web.Request) -> bool | None:
    """Whether a POST came from this server's own pages: True, False, or None when the request
    cannot tell (see the module's docstring)."""
    site = request.headers.get("Sec-Fetch-Site")
    if site is not None:
        return site in ("same-origin", "none")
    origin = request.headers.get("Origin")
    if origin is not None and origin != "null":
        allowed = {request.host.lower()}
        if (public := public_of(request.app[SETTINGS])) is not None:
            allowed.add(urlsplit(public.base).netloc.lower())
        return urlsplit(origin).netloc.lower() in allowed
    if request.cookies.get(SAME_SITE_COOKIE) == "1":  # SameSite=Strict: our own pages' requests only
        return True
    if origin is None:
        return True  # no browser: a script or a command line, which no other page can drive
    return None  # a browser that hides the origin (our pages' no-referrer) on a plain-HTTP address


class Unconfirmed(Exception):
    """A form POST whose origin cannot be told: answered with a page asking to confirm it."""


def _check_origin(request: web.Request, *, form: bool = False) -> None:
    """403 for a POST another site's page made; `Unconfirmed` (a form) or 403 (the API) when the
    request cannot tell where it came from."""
    same = _same_site(request)
    if same is None and form:
        raise Unconfirmed
    if not same:
        raise web.HTTPForbidden(reason="this change is accepted from readerproxy's own pages only")


def same_site_cookie(response: web.StreamResponse, request: web.Request) -> None:
    """The cookie that vouches for a later form POST where the browser hides its origin."""
    response.set_cookie(
        SAME_SITE_COOKIE,
        "1",
        max_age=365 * 24 * 3600,
        path=_prefix(request) or "/",
        httponly=True,
        samesite="Strict",
    )


async def _fields(request: web.Request, *, form: bool = False) -> dict[str, Any]:
    """A POST's fields: a JSON object, or a form (urlencoded or multipart); 400 otherwise."""
    _check_origin(request, form=form)
    if request.content_length is not None and request.content_length > MAX_BODY:
        raise RequestError(f"the body is over {MAX_BODY} bytes")
    if request.content_type == "application/json":
        raw = await request.content.read(MAX_BODY + 1)
        if len(raw) > MAX_BODY:
            raise RequestError(f"the body is over {MAX_BODY} bytes")
        try:
            payload = json.loads(raw.decode(request.charset or "utf-8") or "{}")
        except (ValueError, UnicodeDecodeError):
            raise RequestError("the JSON body is not valid JSON") from None
        if not isinstance(payload, dict):
            raise RequestError("the JSON body must be an object")
        return payload
    if request.content_type in ("application/x-www-form-urlencoded", "multipart/form-data", ""):
        posted = await request.post()
        return {key: value for key, value in posted.items() if isinstance(value, str)}
    raise RequestError("send JSON or a form")


def _prefix(request: web.Request) -> str:
    public = public_of(request.app[SETTINGS])
    return public.prefix if public else ""


def _entry_json(entry: Entry, request: web.Request) -> dict[str, Any]:
    prefix = _prefix(request)
    data = entry.summary()
    data["links"] = {
        "read": f"{prefix}/list/{entry.id}",
        "epub": f"{prefix}/list/{entry.id}.epub",
        "markdown": f"{prefix}/list/{entry.id}.md",
        "html": f"{prefix}/list/{entry.id}.html",
    }
    return data


def _json(data: Any, status: int = 200) -> web.Response:
    return web.json_response(data, status=status, dumps=lambda value: json.dumps(value, ensure_ascii=False))


def _query(params: Mapping[str, str]) -> Query:
    state = params.get("state") or "active"
    if state not in STATE_FILTERS:
        raise RequestError(f"state must be one of {', '.join(STATE_FILTERS)}")
    tags = normal_tags(params.get("tag") or "")
    try:
        limit = int(params.get("limit") or 200)
        offset = int(params.get("offset") or 0)
    except ValueError:
        raise RequestError("limit and offset must be whole numbers") from None
    return Query(
        state=state,
        tag=tags[0] if tags else None,
        search=(params.get("q") or "")[:200],
        limit=limit,
        offset=offset,
    )


async def _entry(request: web.Request, *, article: bool = True) -> Entry:
    """The reader's entry named in the path (404 when unknown or another reader's)."""
    entry_id = request.match_info["id"]
    entry = await request.app[READING_LIST].get(reader_key(request), entry_id) if valid_id(entry_id) else None
    if entry is None:
        raise web.HTTPNotFound(reason="no such entry in your reading list")
    return entry


async def save_url(request: web.Request, raw_url: Any, raw_tags: Any) -> tuple[Entry, bool]:
    """Read `raw_url` as `/read` would for this reader (through the caches) and keep it."""
    if not isinstance(raw_url, str) or not raw_url.strip():
        raise RequestError('give the page\'s address as "url"', kind="bad_url")
    if raw_tags is not None and not isinstance(raw_tags, str | list):
        raise RequestError('"tags" must be a string or a list of strings')
    prefs, _ = preferences({}, request.cookies)
    return await save_for(
        request.app, reader_key(request), raw_url, normal_tags(raw_tags), prefs.reader_links
    )


async def save_for(
    app: web.Application, owner: str, raw_url: str, tags: tuple[str, ...], reader_links: bool = True
) -> tuple[Entry, bool]:
    """Read a page as `/read` does (`Reader.read`: the page and result caches first) and keep it
    in `owner`'s list."""
    url = target_url(raw_url)
    result = await app[READER].read(
        ReadRequest(url=url, algorithm=app[SETTINGS].default_algorithm, reader_links=reader_links)
    )
    return await app[READING_LIST].save(owner, Entry.from_article(url, result.data, tags))


def _progress(value: Any) -> float:
    try:
        progress = float(value)
    except (TypeError, ValueError):
        raise RequestError('"progress" must be a number from 0 to 1') from None
    if not 0.0 <= progress <= 1.0:
        raise RequestError('"progress" must be a number from 0 to 1')
    return progress


def _state(value: Any) -> str:
    if value not in STATES:
        raise RequestError(f'"state" must be one of {", ".join(STATES)}')
    return str(value)


# ---- the JSON API ------------------------------------------------------------------------------


async def api_save(request: web.Request) -> web.Response:
    """POST /api/list: save a page; 201 and the entry (200 when the reader had it already)."""
    if (signature := request.headers.get(ARTICLE_HEADER)) is not None:
        return await _save_signed(request, signature)
    fields = await _fields(request)
    entry, new = await save_url(request, fields.get("url"), fields.get("tags"))
    return _json(_entry_json(entry, request), 201 if new else 200)


async def _save_signed(request: web.Request, signature: str) -> web.Response:
    """A save from proxy mode's gateway with the extraction its reader view showed (`url`,
    `tags`, `article`), signed (`auth.article_signature`): kept as shown, nothing fetched."""
    limit = request.app[SETTINGS].fetch.max_bytes
    raw = await request.content.read(limit + 1)
    if len(raw) > limit:
        raise RequestError(f"the body is over {limit} bytes")
    if not hmac.compare_digest(signature.encode("ascii", "replace"), article_signature(raw).encode()):
        raise web.HTTPForbidden(reason="the article's signature does not hold")
    try:
        payload = json.loads(raw)
    except ValueError:
        raise RequestError("the JSON body is not valid JSON") from None
    article, url = payload.get("article"), payload.get("url")
    if not isinstance(article, dict) or not isinstance(url, str):
        raise RequestError('a signed save needs "url" and "article"')
    tags = payload.get("tags")
    entry = Entry.from_article(
        target_url(url), article, normal_tags(tags if isinstance(tags, str | list) else "")
    )
    saved, new = await request.app[READING_LIST].save(reader_key(request), entry)
    return _json(_entry_json(saved, request), 201 if new else 200)


async def api_entries(request: web.Request) -> web.Response:
    """GET /api/list: the reader's entries (`state`, `tag`, `q`, `limit`, `offset`)."""
    query = _query(request.query)
    entries = await request.app[READING_LIST].entries(reader_key(request), query)
    return _json({"entries": [_entry_json(entry, request) for entry in entries], "count": len(entries)})


async def api_entry(request: web.Request) -> web.Response:
    """GET /api/list/{id}: one entry with its article's HTML and text."""
    entry = await _entry(request)
    data = _entry_json(entry, request)
    data["html"] = entry.article.get("html") or ""
    data["text"] = entry.text
    return _json(data)


async def api_change(request: web.Request) -> web.Response:
    """POST /api/list/{id}: change `state` and/or `tags` (and `progress`)."""
    fields = await _fields(request)
    state = _state(fields["state"]) if "state" in fields else None
    progress = _progress(fields["progress"]) if "progress" in fields else None
    tags = normal_tags(fields["tags"]) if isinstance(fields.get("tags"), str | list) else None
    entry = await request.app[READING_LIST].update(
        reader_key(request), request.match_info["id"], state=state, progress=progress, tags=tags
    )
    if entry is None:
        raise web.HTTPNotFound(reason="no such entry in your reading list")
    return _json(_entry_json(entry, request))


async def api_delete(request: web.Request) -> web.Response:
    _check_origin(request)
    if not await request.app[READING_LIST].delete(reader_key(request), request.match_info["id"]):
        raise web.HTTPNotFound(reason="no such entry in your reading list")
    return _json({"deleted": request.match_info["id"]})


async def api_progress(request: web.Request) -> web.Response:
    """POST /api/list/{id}/progress: `{"progress": 0.42}` (or a form); an entry read to its end
    (0.98 and more) is marked read."""
    fields = await _fields(request)
    progress = _progress(fields.get("progress"))
    entry = await request.app[READING_LIST].update(
        reader_key(request),
        request.match_info["id"],
        progress=progress,
        state="read" if progress >= 0.98 else None,
    )
    if entry is None:
        raise web.HTTPNotFound(reason="no such entry in your reading list")
    return _json(_entry_json(entry, request))


# ---- pages and forms ---------------------------------------------------------------------------


def _back(request: web.Request, fields: Mapping[str, Any]) -> str:
    """Where a form's redirect goes: its `back` when that is a path of the list, else the list."""
    back = fields.get("back")
    prefix = _prefix(request)
    if isinstance(back, str) and back.startswith("/list") and "//" not in back and "\\" not in back:
        return prefix + back
    return prefix + "/list"


async def form_save(request: web.Request) -> web.Response:
    """POST /list/save (the reader view's Save button): save, then show the saved copy. When the
    browser hides where the POST came from and no cookie vouches for it, a page asks to confirm."""
    try:
        fields = await _fields(request, form=True)
    except Unconfirmed:
        posted = await request.post()
        url, tags = posted.get("url"), posted.get("tags")
        return _confirm_page(
            request,
            url if isinstance(url, str) else "",
            tags if isinstance(tags, str) else "",
            hidden_origin=True,
        )
    entry, _ = await save_url(request, fields.get("url"), fields.get("tags"))
    raise web.HTTPSeeOther(f"{_prefix(request)}/list/{entry.id}?saved=1")


def _confirm_page(request: web.Request, url: str, tags: str, *, hidden_origin: bool) -> web.Response:
    """A page asking to save `url` (its Save is a form POST to `/list/save`), with the cookie that
    lets that POST through (`SAME_SITE_COOKIE`)."""
    renderer = request.app[RENDERER]
    page = renderer.env.get_template("list_confirm.html").render(
        prefs=preferences(request.query, request.cookies)[0], url=url, tags=tags, hidden_origin=hidden_origin
    )
    response = web.Response(text=renderer.rooted(page), content_type="text/html", charset="utf-8")
    response.headers["Cache-Control"] = "no-store"
    same_site_cookie(response, request)
    return response


async def add_page(request: web.Request) -> web.Response:
    """GET /list/add?url=… (the Save bookmarklet): a page with one Save button for that page; a
    GET changes nothing, so a link from anywhere can only ask."""
    url = request.query.get("url", "").strip()
    if not url:
        raise RequestError("Give the page's address as ?url=…", kind="bad_url")
    return _confirm_page(request, target_url(url), request.query.get("tags", ""), hidden_origin=False)


async def form_state(request: web.Request) -> web.Response:
    """POST /list/{id}/state: mark read or unread, archive or bring back; back to the list."""
    fields = await _fields(request)
    entry = await request.app[READING_LIST].update(
        reader_key(request), request.match_info["id"], state=_state(fields.get("state"))
    )
    if entry is None:
        raise web.HTTPNotFound(reason="no such entry in your reading list")
    raise web.HTTPSeeOther(_back(request, fields))


async def form_delete(request: web.Request) -> web.Response:
    fields = await _fields(request)
    if not await request.app[READING_LIST].delete(reader_key(request), request.match_info["id"]):
        raise web.HTTPNotFound(reason="no such entry in your reading list")
    raise web.HTTPSeeOther(_back(request, fields))


#: The filters of the list page: (label, state); "Saved" is everything not archived (the default).
FILTERS = (("Saved", "active"), ("Unread", "unread"), ("Read", "read"), ("Archived", "archived"))


async def list_page(request: web.Request) -> web.Response:
    """GET /list: the reader's list (newest first), filtered and searched, every action a form."""
    query = _query(request.query)
    store = request.app[READING_LIST]
    owner = reader_key(request)
    entries = await store.entries(owner, query)
    prefs, _ = preferences(request.query, request.cookies)
    renderer = request.app[RENDERER]
    here = "/list" + ("?" + request.query_string if request.query_string else "")

    def link(**changes: str | None) -> str:
        values = {
            "state": query.state if query.state != "active" else None,
            "tag": query.tag,
            "q": query.search,
        }
        values.update(changes)
        kept = {key: value for key, value in values.items() if value}
        return "/list" + ("?" + urlencode(kept) if kept else "")

    rows = []
    for entry in entries:
        picture = None
        if entry.image and link_target(entry.image) and not prefs.lite:
            picture = f'<img src="{escape(entry.image)}" alt="" width="96" height="96" loading="lazy">'
            if renderer.rewrite_images is not None:
                picture = renderer.rewrite_images(picture)
        rows.append(
            {
                "entry": entry,
                "picture": Markup(picture) if picture else None,
                "percent": round(entry.progress * 100),
                "saved": display_date(time.strftime("%Y-%m-%d", time.localtime(entry.saved_at))),
            }
        )
    page = renderer.env.get_template("list.html").render(
        prefs=prefs,
        rows=rows,
        query=query,
        filters=[
            (label, link(state=state if state != "active" else None), query.state == state)
            for label, state in FILTERS
        ],
        clear_tag=link(tag=None),
        clear_search=link(q=None),
        here=here,
        tag_link=lambda tag: link(tag=tag),
        export="/list/export.epub",
    )
    response = web.Response(text=renderer.rooted(page), content_type="text/html", charset="utf-8")
    response.headers["Cache-Control"] = "no-store"
    response.headers["Content-Security-Policy"] = LIST_CSP
    same_site_cookie(response, request)
    return response


async def service_worker(request: web.Request) -> web.Response:
    """GET /sw.js: the reading list's service worker (`static/sw.js`), at the root so that its
    scope is the whole server (its own path prefix behind `--public-url`); looked at again by the
    browser on every visit (no-cache)."""
    asset = request.app[RENDERER].static.get("sw.js")
    if asset is None:
        raise web.HTTPNotFound(reason="no service worker")
    return web.Response(
        body=asset.body,
        headers={
            "Content-Type": "text/javascript; charset=utf-8",
            "Cache-Control": "no-cache",
            # a worker runs under its own script's policy: it fetches the list's pages and assets
            "Content-Security-Policy": "default-src 'none'; connect-src 'self'",
        },
    )


async def read_entry(request: web.Request) -> web.Response:
    """GET /list/{id}: the saved article in the reader view, from the stored extraction, with the
    reading position to restore (`data-progress`) and where `reader.js` sends it."""
    entry = await _entry(request)
    prefs, _ = preferences(request.query, request.cookies)
    article = dict(entry.article)
    article.setdefault("url", entry.url)
    renderer = request.app[RENDERER]
    algorithm = str(article.get("algorithm") or request.app[SETTINGS].default_algorithm)
    page = renderer.reader_page(article, prefs, algorithm)
    prefix = _prefix(request)
    marks = (
        f' data-entry="{entry.id}" data-progress="{entry.progress:.4f}"'
        f' data-progress-at="{prefix}/api/list/{entry.id}/progress"'
    )
    page = page.replace('<article class="reader"', '<article class="reader"' + marks, 1)
    # in the toolbar, the way to the list in place of Save; a note that it was saved; Archive by
    # the article's end, where a reader who finished it is
    start = page.find('<form class="save-form"')
    end = page.find("</form>", start)
    if start >= 0 and end > start:
        link = (
            f'<a class="tool list-link" href="{prefix}/list" lang="en" title="Your reading list">'
            '<svg class="icon" viewBox="0 0 24 24" aria-hidden="true" focusable="false">'
            '<path d="M4 6h2v2H4zm4 0h12v2H8zm-4 5h2v2H4zm4 0h12v2H8zm-4 5h2v2H4zm4 0h12v2H8z"/></svg>'
            '<span class="tool-text">List</span></a>'
        )
        page = page[:start] + link + page[end + len("</form>") :]
    if request.query.get("saved") == "1":
        note = (
            '<p class="saved-note" role="status" lang="en">Saved to your reading list. '
            f'<a href="{prefix}/list">Open the list</a></p>'
        )
        page = page.replace("<main>", "<main>\n" + note, 1)
    page = page.replace(
        '<footer class="article-foot" lang="en">',
        '<footer class="article-foot" lang="en">' + _archive_form(entry, prefix),
        1,
    )
    response = web.Response(text=page, content_type="text/html", charset="utf-8")
    response.headers["Cache-Control"] = "no-store"
    response.headers["Content-Security-Policy"] = SAVED_CSP
    same_site_cookie(response, request)
    return response


def _archive_form(entry: Entry, prefix: str) -> str:
    """Archive (or Unarchive) for a saved article, back to it afterwards."""
    state = "unread" if entry.state == "archived" else "archived"
    label = "Unarchive" if entry.state == "archived" else "Archive"
    return (
        f'<form class="archive-form" action="{prefix}/list/{entry.id}/state" method="post">'
        f'<input type="hidden" name="state" value="{state}">'
        f'<input type="hidden" name="back" value="/list/{entry.id}">'
        f'<button class="tool" type="submit">{label}</button></form>'
    )


# ---- imports -----------------------------------------------------------------------------------


async def _start_import(request: web.Request) -> ImportJob:
    """An import of the posted export file (a form's `file`, or the body itself) for this reader,
    started in the background; 409 while the reader's last one still runs."""
    _check_origin(request)
    owner = reader_key(request)
    current = request.app[IMPORTS].get(owner)
    if current is not None and current[0].running:
        raise web.HTTPConflict(reason="an import of yours is running: wait for it to end")
    if request.content_type == "multipart/form-data":
        form = await request.post()
        upload = form.get("file")
        if not isinstance(upload, web.FileField):
            raise RequestError('choose the export file ("file")')
        data = upload.file.read(MAX_FILE_BYTES + 1)
    else:
        data = await request.content.read(MAX_FILE_BYTES + 1)
    try:
        job = new_job(data)
    except ImportFormatError as exc:
        raise RequestError(str(exc)) from None
    app = request.app

    async def save(item: ImportItem) -> None:
        entry, _ = await save_for(app, owner, item.url, item.tags)
        if item.archived:
            await app[READING_LIST].update(owner, entry.id, state="archived")

    async def run() -> None:
        CONNECTED.set(None)  # no client to wait for: the job outlives the request that began it
        await job.run(save)

    app[IMPORTS][owner] = (job, asyncio.create_task(run()))
    return job


async def api_import(request: web.Request) -> web.Response:
    """POST /api/list/import: start an import; 202 and its status."""
    job = await _start_import(request)
    return _json(job.status(), 202)


async def api_import_status(request: web.Request) -> web.Response:
    """GET /api/list/import: the status of this reader's last import (404: none)."""
    current = request.app[IMPORTS].get(reader_key(request))
    if current is None:
        raise web.HTTPNotFound(reason="no import of yours yet")
    return _json(current[0].status())


async def form_import(request: web.Request) -> web.Response:
    """POST /list/import (the list page's form): start, then show the progress."""
    await _start_import(request)
    raise web.HTTPSeeOther(f"{_prefix(request)}/list/import")


async def import_page(request: web.Request) -> web.Response:
    """GET /list/import: the form, and the progress of this reader's last import (the page
    reloads itself every 2 s while it runs: no script)."""
    current = request.app[IMPORTS].get(reader_key(request))
    renderer = request.app[RENDERER]
    page = renderer.env.get_template("list_import.html").render(
        prefs=preferences(request.query, request.cookies)[0],
        job=current[0].status() if current else None,
        max_items=MAX_ITEMS,
    )
    response = web.Response(text=renderer.rooted(page), content_type="text/html", charset="utf-8")
    response.headers["Cache-Control"] = "no-store"
    same_site_cookie(response, request)
    return response


# ---- exports -----------------------------------------------------------------------------------


def _filename(entry: Entry, suffix: str) -> str:
    stem = "".join(ch if ch.isalnum() else "-" for ch in entry.title.lower())[:60].strip("-")
    return f"{stem or entry.id}.{suffix}"


async def _pictures(request: web.Request, entries: list[Entry]) -> dict[str, Picture]:
    """The entries' images for a book, as JPEG (PNG for a transparent one) at `BOOK_IMAGE_WIDTH`,
    made by the image service (`images.py`: the same fetch guard, caps and cache as `/image`),
    four at a time; an image that cannot be had is left out. None with `--images direct`."""
    service = request.app.get(IMAGES)
    if service is None:
        return {}
    urls: list[str] = []
    for entry in entries:
        urls += image_sources(str(entry.article.get("html") or ""), entry.url)[:BOOK_IMAGES_PER_ARTICLE]
    wanted = list(dict.fromkeys(urls))[:BOOK_IMAGES]
    pictures: dict[str, Picture] = {}
    slots = asyncio.Semaphore(4)
    width = snap_width(BOOK_IMAGE_WIDTH)

    async def one(index: int, url: str) -> None:
        async with slots:
            try:
                made = await service.variant(request, url, width, "jpeg", False)
            except (ReaderproxyError, web.HTTPException, OSError):
                return
        media = made.content_type.split(";")[0].strip().lower()
        if (suffix := PICTURE_TYPES.get(media)) is not None:
            pictures[url] = Picture(f"image-{index + 1}.{suffix}", media, made.body)

    await asyncio.gather(*(one(index, url) for index, url in enumerate(wanted)))
    return pictures


async def export_entry(request: web.Request) -> web.Response:
    """GET /list/{id}.epub|md|html: the saved article as a file."""
    entry = await _entry(request)
    fmt = request.match_info["fmt"]
    html = str(entry.article.get("html") or "")
    if fmt == "md":
        body = markdown_document(entry.title, html, entry.url).encode("utf-8")
        content_type = "text/markdown; charset=utf-8"
    elif fmt == "html":
        body = article_xhtml_page(entry, html_document=True).encode("utf-8")
        content_type = "text/html; charset=utf-8"
    else:
        body = epub_book([entry], title=entry.title, pictures=await _pictures(request, [entry]))
        content_type = "application/epub+zip"
    return attachment(body, content_type, _filename(entry, fmt))


async def export_all(request: web.Request) -> web.Response:
    """GET /list/export.epub: every entry not archived (`?state=all` for all) as one book, a
    chapter each, oldest first."""
    query = _query({**request.query, "limit": str(EXPORT_LIMIT)})
    store = request.app[READING_LIST]
    owner = reader_key(request)
    entries = []
    for listed in reversed(await store.entries(owner, query)):
        full = await store.get(owner, listed.id)
        if full is not None:  # deleted meanwhile
            entries.append(full)
    body = epub_book(entries, title="Reading list", pictures=await _pictures(request, entries))
    return attachment(body, "application/epub+zip", "reading-list.epub")
