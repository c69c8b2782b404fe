"""Files handed over to be saved: one response shape for every download (a reading-list entry or
the whole list as a book, `list_routes.py`; the proxy's CA certificate, `proxy/routes.py` and the
proxy's setup page, `proxy/setup.py`).

Every download is `Content-Disposition: attachment` with the file's name, `Cache-Control: no-store`
(a CA certificate or a private list is never kept by a shared cache) and `nosniff`. A name that is
not plain ASCII (a title in German or Greek) is sent twice, as RFC 6266 §4.3 advises: an ASCII
`filename` for old clients and the exact name as RFC 8187's `filename*=UTF-8''…`.
"""

from __future__ import annotations

import unicodedata
from urllib.parse import quote

from aiohttp import web


def _ascii(text: str) -> str:
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in plain).strip("-_")


def _ascii_name(name: str) -> str:
    """The name in ASCII: accents dropped ("Über uns.md" -> "Uber-uns.md"), anything else that a
    quoted header value cannot hold (quotes, backslashes, controls, spaces, other scripts) as "-";
    "download" with the same suffix when nothing of the stem is left ("Ωραία.epub")."""
    stem, dot, suffix = name.rpartition(".")
    if not dot:
        stem, suffix = name, ""
    return (_ascii(stem) or "download") + (f".{_ascii(suffix)}" if _ascii(suffix) else "")


def content_disposition(name: str) -> str:
    """`attachment; filename="…"`, with `filename*=UTF-8''…` when the name is not plain ASCII."""
    fallback = _ascii_name(name)
    if fallback == name:
        return f'attachment; filename="{name}"'
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(name, safe='')}"


def attachment_headers(content_type: str, name: str) -> list[tuple[str, str]]:
    """The headers of a download (for the proxy's own responses, which are header lists)."""
    return [
        ("Content-Type", content_type),
        ("Content-Disposition", content_disposition(name)),
        ("Cache-Control", "no-store"),
        ("X-Content-Type-Options", "nosniff"),
    ]


def attachment(body: bytes, content_type: str, name: str) -> web.Response:
    """A download as an aiohttp response."""
    return web.Response(body=body, headers=dict(attachment_headers(content_type, name)))
