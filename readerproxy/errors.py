"""The errors readerproxy raises to its callers, catchable by kind.

Every error a request can meet is a `ReaderproxyError` with a `kind` (a stable string), the HTTP
`status` the server answers with, and a `message` for a person:

- `RequestError` (400): the request itself is wrong — bad algorithm, parameter, format or body.
- `fetch.FetchError`: the page could not be fetched — bad URL (400), refused address (403), too
  large (413), not HTML (415), upstream failure (502), timeout (504).

The server turns them into an HTML page or a JSON error; the library raises `ValueError` for bad
algorithm names and parameters, which `RequestError` wraps at the request layer.
"""

from __future__ import annotations


class ReaderproxyError(Exception):
    """Base of every error a read can end in: `kind`, HTTP `status`, `message`."""

    kind = "internal"
    status = 500

    def __init__(self, message: str, *, status: int | None = None, kind: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status
        if kind is not None:
            self.kind = kind


class RequestError(ReaderproxyError):
    """A request refused before anything is fetched (bad algorithm, parameters, format, body)."""

    kind = "bad_request"
    status = 400
