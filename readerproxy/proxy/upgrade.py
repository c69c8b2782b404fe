"""WebSockets (ws, and wss inside an intercepted tunnel) through the proxy: the `Upgrade` handshake
forwarded to the site, and on its `101 Switching Protocols` the bytes piped both ways.

The upstream client library of the core (aiohttp) cannot hand over a connection after a 101, so an
upgrade request gets a connection of its own: opened by the core to the address its SSRF guard
allowed (`ProxyServer._upgrade`), TLS with the same verification as every upstream request when the
request came through an intercepted tunnel, and the handshake framed by h11 on both sides (the
browser's `ClientConnection`, and a `SiteConnection` as client to the site, both in `http1.py`). The frames themselves
are not read: after the 101 the proxy is a tunnel, as it is for a plain CONNECT.

A site that refuses the upgrade (any answer but 101) has its answer passed to the browser, with the
connection closed after it.
"""

from __future__ import annotations

import asyncio

from .flow import Request, end_to_end, header, header_values, with_via
from .http1 import ClientConnection, SiteConnection, UpgradeFailed, sendable

__all__ = ["UpgradeFailed", "handshake_headers", "is_websocket", "pipe", "relay"]

CHUNK = 64 * 1024
#: Largest body of a refused upgrade passed on to the browser (an error page, normally tiny).
REFUSAL_BODY = 1024 * 1024


def is_websocket(request: Request) -> bool:
    """A WebSocket opening handshake (RFC 6455 §4.1): GET, `Connection: upgrade`, `Upgrade: websocket`."""
    return (
        request.method == "GET"
        and "upgrade" in header_values(request.headers, "connection")
        and "websocket" in header_values(request.headers, "upgrade")
    )


def handshake_headers(request: Request) -> list[tuple[str, str]]:
    """The headers sent to the site: Host, the end-to-end ones (Sec-WebSocket-*, Origin, Cookie…),
    `Connection: Upgrade` and the browser's `Upgrade`, and Via."""
    default = 443 if request.scheme == "https" else 80
    host = f"[{request.host}]" if ":" in request.host else request.host
    authority = host if request.port == default else f"{host}:{request.port}"
    rest = [(k, v) for k, v in end_to_end(request.headers) if k.lower() != "host"]
    upgrade = header(request.headers, "upgrade") or "websocket"
    return with_via([("Host", authority), *rest, ("Connection", "Upgrade"), ("Upgrade", upgrade)])


async def relay(
    conn: ClientConnection,
    request: Request,
    up_reader: asyncio.StreamReader,
    up_writer: asyncio.StreamWriter,
    timeout: float,
) -> int:
    """The handshake with the site over an open connection, then (on 101) the pipe both ways until
    either side closes. Returns the site's status; UpgradeFailed when it did not answer in HTTP
    within `timeout` seconds (the browser has not been answered yet)."""
    site = SiteConnection()
    up_writer.write(site.request(request.path, sendable(handshake_headers(request))))
    await up_writer.drain()
    answer = await site.answer(up_reader, timeout)
    async for _ in conn.body(0):  # the handshake has no body; this moves h11 to "might switch"
        pass
    reason = answer.reason.decode("latin-1")
    if answer.status == 101:  # from here on, bytes
        data = conn.switching_protocols_head(
            sendable(with_via(answer.headers)), answer.reason or b"Switching Protocols"
        )
        conn.writer.write(data)
        await conn.writer.drain()
        if early := site.trailing_data:  # frames the site sent right after its 101
            conn.writer.write(early)
        if early := conn.trailing_data:
            up_writer.write(early)
        await asyncio.gather(pipe(conn.reader, up_writer), pipe(up_reader, conn.writer))
        return 101
    body = await site.body(up_reader, timeout, REFUSAL_BODY)
    framed = [(k, v) for k, v in end_to_end(answer.headers) if k.lower() != "content-length"]
    framed = [*with_via(framed), ("Content-Length", str(len(body))), ("Connection", "close")]
    await conn.send_response(answer.status, reason, framed, body)
    return answer.status


async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    """Copy one direction with back-pressure until EOF, then half-close the other side."""
    try:
        while data := await source.read(CHUNK):
            sink.write(data)
            await sink.drain()
        if sink.can_write_eof():
            sink.write_eof()
        else:  # TLS cannot half-close: the end of one direction ends the connection
            sink.close()
    except (ConnectionError, OSError):
        sink.close()
