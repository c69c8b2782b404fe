"""WebSockets (ws, and wss inside an intercepted tunnel) through the proxy: the `Upgrade` handshake
forwarded to the site, and on its `101 Switching Protocols` the bytes piped both ways.

The upstream client library of the core (aiohttp) cannot hand over a connection after a 101, so an
upgrade request gets a connection of its own: opened by the core to the address its SSRF guard
allowed (`ProxyServer._upgrade`), TLS with the same verification as every upstream request when the
request came through an intercepted tunnel, and the handshake framed by h11 on both sides (the
browser's `ClientConnection`, and an `h11.Connection` as client to the site). The frames themselves
are not read: after the 101 the proxy is a tunnel, as it is for a plain CONNECT.

A site that refuses the upgrade (any answer but 101) has its answer passed to the browser, with the
connection closed after it.
"""

from __future__ import annotations

import asyncio
import contextlib

import h11

from .flow import MAX_HEAD, Request, end_to_end, header, header_values, with_via
from .http1 import ClientConnection, sendable

CHUNK = 64 * 1024
#: Largest body of a refused upgrade passed on to the browser (an error page, normally tiny).
REFUSAL_BODY = 1024 * 1024


class UpgradeFailed(Exception):
    """The site's answer to the handshake was not HTTP (or came too late); nothing was sent yet."""


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
    site = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_HEAD)
    up_writer.write(
        site.send(
            h11.Request(method="GET", target=request.path, headers=sendable(handshake_headers(request)))
        )
        or b""
    )
    up_writer.write(site.send(h11.EndOfMessage()) or b"")
    await up_writer.drain()
    answer = await _answer_head(site, up_reader, timeout)
    async for _ in conn.body(0):  # the handshake has no body; this moves h11 to "might switch"
        pass
    headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in answer.headers.raw_items()]
    reason = answer.reason.decode("latin-1")
    if isinstance(answer, h11.InformationalResponse):  # 101: from here on, bytes
        data = conn.h11.send(
            h11.InformationalResponse(
                status_code=101,
                headers=sendable(with_via(headers)),
                reason=answer.reason or b"Switching Protocols",
            )
        )
        conn.writer.write(data or b"")
        await conn.writer.drain()
        if early := bytes(site.trailing_data[0]):  # frames the site sent right after its 101
            conn.writer.write(early)
        if early := bytes(conn.h11.trailing_data[0]):
            up_writer.write(early)
        await asyncio.gather(pipe(conn.reader, up_writer), pipe(up_reader, conn.writer))
        return 101
    body = await _refusal_body(site, up_reader, timeout)
    framed = [(k, v) for k, v in end_to_end(headers) if k.lower() != "content-length"]
    framed = [*with_via(framed), ("Content-Length", str(len(body))), ("Connection", "close")]
    await conn.send_response(answer.status_code, reason, framed, body)
    return answer.status_code


async def _answer_head(
    site: h11.Connection, reader: asyncio.StreamReader, timeout: float
) -> h11.Response | h11.InformationalResponse:
    """The site's answer head: a 101, or a final answer (other interim answers are skipped)."""
    try:
        async with asyncio.timeout(timeout):
            while True:
                event = site.next_event()
                if event is h11.NEED_DATA:
                    site.receive_data(await reader.read(CHUNK))
                    continue
                if isinstance(event, h11.InformationalResponse) and event.status_code == 101:
                    return event
                if isinstance(event, h11.Response):
                    return event
                if isinstance(event, h11.ConnectionClosed):
                    raise UpgradeFailed("the site closed the connection")
    except h11.RemoteProtocolError as exc:
        raise UpgradeFailed(f"the site's answer is not HTTP: {exc}") from None
    except TimeoutError:
        raise UpgradeFailed("the site did not answer the upgrade in time") from None


async def _refusal_body(site: h11.Connection, reader: asyncio.StreamReader, timeout: float) -> bytes:
    """The body of a refused upgrade, at most REFUSAL_BODY bytes (the rest is dropped)."""
    parts: list[bytes] = []
    size = 0
    with contextlib.suppress(h11.RemoteProtocolError, TimeoutError, ConnectionError):
        async with asyncio.timeout(timeout):
            while size < REFUSAL_BODY:
                event = site.next_event()
                if event is h11.NEED_DATA:
                    site.receive_data(await reader.read(CHUNK))
                elif isinstance(event, h11.Data):
                    parts.append(bytes(event.data))
                    size += len(event.data)
                else:
                    break
    return b"".join(parts)[:REFUSAL_BODY]


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
