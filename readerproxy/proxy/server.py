"""The proxy core: an HTTP/1.1 forward proxy on its own listener (`--proxy-port`).

Why a separate listener rather than the reader server's port: a forward proxy speaks a different
HTTP than a web application (absolute-form targets, CONNECT tunnels that take over the socket,
TLS started in the middle of a connection when intercepting, bodies streamed both ways with
back-pressure and no size cap). aiohttp's web server is built for the second; keeping the proxy on
its own small asyncio server keeps each side simple, lets the reader server keep its request size
limits and middlewares, and means a proxy client can never reach the reader's routes by accident
(and the reverse).

Read top to bottom: `ProxyServer.start` listens; `_connection` reads requests from one browser
connection (keep-alive) and makes a `Flow` per request; `_handle` runs the addons' hooks around the
three ways a flow can go — answered by an addon, `_tunnel` (CONNECT, a plain TCP tunnel or an
intercepted TLS connection served by `_connection` again), or `_forward` (the request sent upstream
through the SSRF-guarded client, the answer streamed back or, for article navigations, buffered for
the reader addon).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import ssl
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult

from ..fetch import (
    AddressRefused,
    FetchError,
    FetchSettings,
    GuardedResolver,
    check_host,
    guarded_socket,
    is_public_address,
    is_refusal,
    literal_address,
    refused,
)
from ..render import Preferences
from ..workers import CLIENT
from .addons import (
    SECURITY_HEADERS,
    Addon,
    AuthAddon,
    MetricsAddon,
    ReaderAddon,
    RulesAddon,
    configured_credentials,
    host_list,
    reader_base,
    same_origin_links,
    simple_response,
)
from .flow import (
    MAX_HEAD,
    MAX_HEADERS,
    MAX_REQUEST_LINE,
    BadRequest,
    Flow,
    Outcome,
    Request,
    Response,
    end_to_end,
    header,
    parse_request_head,
    response_head,
    with_via,
)

if TYPE_CHECKING:
    from ..metrics import Metrics
    from ..reader import Reader
    from ..render import Renderer
    from ..settings import Settings
    from .tls import CertificateAuthority

log = logging.getLogger("readerproxy.proxy")

CHUNK = 64 * 1024
IDLE_TIMEOUT = 75.0  # a kept-alive browser connection with no new request
HEAD_TIMEOUT = 30.0  # the rest of a request head once it started
NO_BODY_STATUSES = frozenset({204, 304})


def parse_resolve(value: str) -> dict[str, str]:
    """`--resolve HOST:IP[,HOST:IP…]` (curl's HOST:PORT:IP also accepted, the port ignored)."""
    mapping: dict[str, str] = {}
    for item in (part.strip() for part in value.split(",")):
        if not item:
            continue
        host, _, address = item.partition(":")
        if ":" in address and address.split(":", 1)[0].isdigit():
            address = address.split(":", 1)[1]
        address = address.strip("[]")
        if not host or literal_address(address) is None:
            raise ValueError(f"--resolve takes HOST:IP, got {item!r}")
        mapping[host.lower()] = address
    return mapping


class ProxyResolver(AbstractResolver):
    """`--resolve` names first, then DNS; both through the SSRF guard (`GuardedResolver`'s rule)."""

    def __init__(self, mapping: dict[str, str], allow_private: bool) -> None:
        self.mapping = mapping
        self.allow_private = allow_private
        self.dns = GuardedResolver(allow_private)

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        address = self.mapping.get(host.lower())
        if address is None:
            return await self.dns.resolve(host, port, family)
        if not self.allow_private and not is_public_address(address):
            raise AddressRefused(host, [address])
        af = socket.AF_INET6 if ":" in address else socket.AF_INET
        return [
            ResolveResult(
                hostname=host, host=address, port=port, family=af, proto=0, flags=socket.AI_NUMERICHOST
            )
        ]

    async def close(self) -> None:
        await self.dns.close()


class ProxyServer:
    """The proxy listener, its upstream client and its addons."""

    def __init__(
        self,
        settings: Settings,
        reader: Reader,
        renderer: Renderer,
        metrics: Metrics,
        ca: CertificateAuthority | None = None,
    ) -> None:
        self.settings = settings
        self.fetch: FetchSettings = settings.fetch
        self.renderer = renderer
        self.ca = ca
        self.resolver = ProxyResolver(parse_resolve(settings.resolve), settings.fetch.allow_private)
        self.addons: list[Addon] = [
            AuthAddon(configured_credentials(settings)),
            RulesAddon(host_list(settings.reader_hosts), host_list(settings.direct_hosts)),
            ReaderAddon(reader, renderer, settings, reader_base(settings)),
            MetricsAddon(metrics),
        ]
        self.server: asyncio.Server | None = None
        self.session: aiohttp.ClientSession | None = None
        self._connections: set[asyncio.Task[None]] = set()

    # ---- lifecycle --------------------------------------------------------------------------
    async def start(self, host: str, port: int, *, reuse_port: bool = False) -> None:
        upstream_tls = (
            ssl.create_default_context(cafile=str(self.settings.upstream_ca))
            if self.settings.upstream_ca
            else ssl.create_default_context()
        )
        if self.settings.upstream_ca:
            upstream_tls.load_default_certs()
        connector = aiohttp.TCPConnector(
            resolver=self.resolver,
            socket_factory=None if self.fetch.allow_private else guarded_socket,
            ssl=upstream_tls,
            limit=256,
            limit_per_host=16,
            ttl_dns_cache=60,
        )
        self.session = aiohttp.ClientSession(
            connector=connector,
            auto_decompress=False,
            trust_env=False,
            cookie_jar=aiohttp.DummyCookieJar(),
            timeout=aiohttp.ClientTimeout(
                total=None, connect=self.fetch.connect_timeout, sock_read=max(self.fetch.read_timeout, 60.0)
            ),
            skip_auto_headers=("User-Agent", "Accept", "Accept-Encoding", "Content-Type"),
        )
        self.server = await asyncio.start_server(
            self._accept, host, port, limit=MAX_HEAD, reuse_port=reuse_port or None
        )

    @property
    def port(self) -> int:
        assert self.server is not None
        return int(self.server.sockets[0].getsockname()[1])

    async def close(self) -> None:
        if self.server is not None:
            self.server.close()
        for task in list(self._connections):
            task.cancel()
        await asyncio.gather(*self._connections, return_exceptions=True)
        if self.session is not None:
            await self.session.close()
        await self.resolver.close()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        peer = writer.get_extra_info("peername") or ("?", 0)
        CLIENT.set(str(peer[0]))  # extraction workers are shared out by client address
        try:
            await self._connection(reader, writer, f"{peer[0]}:{peer[1]}")
        except (ConnectionError, asyncio.IncompleteReadError, ssl.SSLError):
            pass
        except asyncio.CancelledError:  # the proxy is closing
            pass
        finally:
            self._connections.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    # ---- one browser connection -------------------------------------------------------------
    async def _connection(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        client: str,
        tunnel: tuple[str, int] | None = None,
    ) -> None:
        """Requests one after another while the connection is kept alive; `tunnel` is the (host,
        port) of an intercepted CONNECT, whose requests come in origin form over TLS."""
        while True:
            try:
                head = await self._read_head(reader)
            except BadRequest as exc:
                await self._write_simple(
                    writer, simple_response(exc.status, "Bad Request", exc.message + "\n")
                )
                self._count(Outcome.REFUSED)
                return
            if head is None:
                return
            try:
                request = parse_request_head(
                    head,
                    default_scheme="https",
                    default_host=tunnel[0] if tunnel else None,
                    default_port=tunnel[1] if tunnel else None,
                )
            except BadRequest as exc:
                await self._write_simple(
                    writer, simple_response(exc.status, "Bad Request", exc.message + "\n")
                )
                self._count(Outcome.REFUSED)
                return
            flow = Flow(client, request)
            if tunnel:
                flow.notes["in_tunnel"] = True
            if not await self._handle(flow, reader, writer):
                return

    async def _read_head(self, reader: asyncio.StreamReader) -> bytes | None:
        """The request head up to the empty line (line by line, within MAX_REQUEST_LINE and MAX_HEAD);
        None at a clean end of the connection or after IDLE_TIMEOUT without a request."""
        try:
            first = await asyncio.wait_for(reader.readuntil(b"\r\n"), IDLE_TIMEOUT)
            while first == b"\r\n":  # stray CRLFs between requests (RFC 9112 §2.2)
                first = await asyncio.wait_for(reader.readuntil(b"\r\n"), IDLE_TIMEOUT)
        except asyncio.IncompleteReadError as exc:
            if exc.partial.strip():
                raise BadRequest(400, "incomplete request line") from None
            return None
        except (asyncio.LimitOverrunError, ValueError):
            raise BadRequest(414, "request line too long") from None
        except TimeoutError:
            return None
        if len(first) > MAX_REQUEST_LINE:
            raise BadRequest(414, "request line too long")
        lines = [first[:-2]]
        size = len(first)
        try:
            async with asyncio.timeout(HEAD_TIMEOUT):
                while (line := await reader.readuntil(b"\r\n")) != b"\r\n":
                    size += len(line)
                    if size > MAX_HEAD or len(lines) > MAX_HEADERS:
                        raise BadRequest(431, "request header fields too large")
                    lines.append(line[:-2])
        except (asyncio.LimitOverrunError, ValueError):
            raise BadRequest(431, "request header fields too large") from None
        except (asyncio.IncompleteReadError, TimeoutError):
            raise BadRequest(400, "incomplete request head") from None
        return b"\r\n".join(lines)

    # ---- one flow ---------------------------------------------------------------------------
    async def _handle(self, flow: Flow, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Run the flow through the addons and the network; True to keep the connection."""
        request = flow.request
        try:
            for addon in self.addons:
                await addon.request(flow)
                if flow.response is not None:
                    break
            if flow.response is not None:  # answered by an addon (407, an asset)
                keep = request.keep_alive and not _has_body(request)
                await self._write_simple(writer, flow.response, keep_alive=keep)
                return keep
            if request.method == "CONNECT":
                await self._tunnel(flow, reader, writer)
                return False
            return await self._forward(flow, reader, writer)
        finally:
            if flow.outcome is not None or request.method != "CONNECT":
                for addon in self.addons:
                    await addon.done(flow)

    async def _tunnel(self, flow: Flow, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """CONNECT: an intercepted TLS connection with `--intercept-https`, else a plain TCP tunnel."""
        request = flow.request
        try:
            address = await self._guarded_address(request.host, request.port)
        except (AddressRefused, OSError, FetchError) as exc:
            refused_ = isinstance(exc, AddressRefused | FetchError) or is_refusal(exc)
            flow.outcome = Outcome.REFUSED if refused_ else Outcome.ERROR
            status, reason = (403, "Forbidden") if refused_ else (502, "Bad Gateway")
            await self._write_simple(writer, simple_response(status, reason, f"{exc}\n"))
            return
        if self.ca is not None:
            writer.write(b"HTTP/1.1 200 Connection established\r\nVia: 1.1 readerproxy\r\n\r\n")
            await writer.drain()
            await writer.start_tls(self.ca.context_for(request.host))
            flow.outcome = None  # the requests inside are counted one by one
            await self._connection(reader, writer, flow.client, tunnel=(request.host, request.port))
            return
        try:
            up_reader, up_writer = await asyncio.wait_for(
                asyncio.open_connection(address, request.port), self.fetch.connect_timeout
            )
        except (OSError, TimeoutError) as exc:
            flow.outcome = Outcome.ERROR
            await self._write_simple(writer, simple_response(502, "Bad Gateway", f"cannot connect: {exc}\n"))
            return
        flow.outcome = Outcome.TUNNELLED
        writer.write(b"HTTP/1.1 200 Connection established\r\nVia: 1.1 readerproxy\r\n\r\n")
        await writer.drain()
        try:
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        finally:
            up_writer.close()

    async def _guarded_address(self, host: str, port: int) -> str:
        """The address a tunnel connects to: the same SSRF rule as /read (literal, mapped or DNS)."""
        literal = literal_address(host)
        if literal is not None:
            check_host(f"http://{host if ':' not in host else f'[{host}]'}:{port}/", self.fetch)
            return literal
        results = await self.resolver.resolve(host, port, socket.AF_UNSPEC)
        return str(results[0]["host"])

    async def _forward(self, flow: Flow, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Send the request upstream and the answer back; True to keep the browser connection."""
        assert self.session is not None
        request = flow.request
        url = request.url
        try:
            check_host(url, self.fetch)
        except Exception as exc:
            flow.outcome = Outcome.REFUSED
            return await self._error_page(flow, writer, 403, "That address is not allowed", str(exc), url)
        if "100-continue" in (header(request.headers, "expect") or "").lower() and _has_body(request):
            writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            await writer.drain()
        headers = [
            (k, v) for k, v in with_via(end_to_end(request.headers)) if k.lower() not in ("host", "expect")
        ]
        body = _request_body(request, reader) if _has_body(request) else None
        try:
            async with self.session.request(
                request.method,
                url,
                headers=headers,
                data=body,
                allow_redirects=False,
                compress=None,
                skip_auto_headers=("User-Agent", "Accept", "Accept-Encoding"),
            ) as up:
                flow.response = Response(
                    up.status,
                    up.reason or "",
                    [(k.decode("latin-1"), v.decode("latin-1")) for k, v in up.raw_headers],
                )
                for addon in self.addons:
                    await addon.response_headers(flow)
                return await self._answer(flow, up, writer)
        except aiohttp.ClientConnectorCertificateError as exc:
            flow.outcome = Outcome.ERROR
            return await self._error_page(
                flow,
                writer,
                502,
                "The site's certificate is not valid",
                f"The certificate of {request.host} could not be verified "
                f"({exc.certificate_error}); the connection was not made",
                url,
            )
        except aiohttp.ClientConnectorError as exc:
            if is_refusal(exc.os_error):
                flow.outcome = Outcome.REFUSED
                error = refused(str(exc.os_error), url)
                return await self._error_page(
                    flow, writer, 403, "That address is not allowed", error.message, url
                )
            flow.outcome = Outcome.ERROR
            return await self._error_page(
                flow,
                writer,
                502,
                "The site could not be reached",
                f"could not connect to {request.host}",
                url,
            )
        except _Sent:
            return False
        except (TimeoutError, aiohttp.ClientError) as exc:
            flow.outcome = Outcome.ERROR
            return await self._error_page(
                flow,
                writer,
                504 if isinstance(exc, TimeoutError) else 502,
                "The site did not answer properly",
                f"{type(exc).__name__}",
                url,
            )

    async def _answer(self, flow: Flow, up: aiohttp.ClientResponse, writer: asyncio.StreamWriter) -> bool:
        """The upstream answer to the browser: streamed, or buffered for the reader addon."""
        request, response = flow.request, flow.response
        assert response is not None
        buffered: list[bytes] = []
        if flow.wants_body:
            size = 0
            async for chunk in up.content.iter_chunked(CHUNK):
                buffered.append(chunk)
                size += len(chunk)
                if size > self.fetch.max_bytes:
                    break  # too large to read: stream it through as it is
            else:
                body = b"".join(buffered)
                for addon in self.addons:
                    await addon.response(flow, body)
                if flow.response is not None and flow.response is not response:  # replaced: the reader view
                    await self._write_simple(writer, flow.response, keep_alive=request.keep_alive)
                    return request.keep_alive
                flow.outcome = Outcome.PASSED
                response.body = body
                await self._write_simple(writer, response, keep_alive=request.keep_alive, passthrough=True)
                return request.keep_alive
        flow.outcome = Outcome.PASSED
        headers = with_via(end_to_end(response.headers))
        no_body = request.method == "HEAD" or response.status in NO_BODY_STATUSES or response.status < 200
        length = header(response.headers, "content-length")
        framing = (
            "none"
            if no_body
            else "length"
            if length is not None and not _chunked(response)
            else "chunked"
            if request.version == "HTTP/1.1"
            else "close"
        )
        if framing == "chunked":
            headers.append(("Transfer-Encoding", "chunked"))
        keep = request.keep_alive and framing != "close"
        headers.append(("Connection", "keep-alive" if keep else "close"))
        try:
            writer.write(response_head(response.status, response.reason, headers))
            if framing != "none":
                for chunk in buffered:
                    await _write_chunk(writer, chunk, framing == "chunked")
                async for chunk in up.content.iter_chunked(CHUNK):
                    await _write_chunk(writer, chunk, framing == "chunked")
                if framing == "chunked":
                    writer.write(b"0\r\n\r\n")
            await writer.drain()
        except (aiohttp.ClientError, TimeoutError) as exc:  # upstream broke off mid-body: so do we
            flow.error = f"upstream body: {type(exc).__name__}"
            raise _Sent from exc
        return keep

    # ---- writing answers --------------------------------------------------------------------
    async def _write_simple(
        self,
        writer: asyncio.StreamWriter,
        response: Response,
        *,
        keep_alive: bool = False,
        passthrough: bool = False,
    ) -> None:
        """A response whose body is known: Content-Length framing, Via, hop-by-hop headers dropped."""
        body = response.body or b""
        headers = [(k, v) for k, v in end_to_end(response.headers) if k.lower() != "content-length"]
        if passthrough or response.status not in NO_BODY_STATUSES:
            headers.append(("Content-Length", str(len(body))))
        headers = with_via(headers)
        headers.append(("Connection", "keep-alive" if keep_alive else "close"))
        writer.write(response_head(response.status, response.reason, headers) + body)
        await writer.drain()

    async def _error_page(
        self, flow: Flow, writer: asyncio.StreamWriter, status: int, title: str, message: str, url: str
    ) -> bool:
        """An HTML error page from the reader's templates, for a request that got no upstream answer."""
        flow.error = message
        message = message[0].upper() + message[1:] if message else message
        page = self.renderer.error_page(status, title, message.rstrip(".") + ".", Preferences(), url)
        flow.response = Response(
            status,
            "Error",
            [("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-store"), *SECURITY_HEADERS],
            same_origin_links(page).encode("utf-8"),
        )
        keep = flow.request.keep_alive and not _has_body(flow.request)
        await self._write_simple(writer, flow.response, keep_alive=keep)
        return keep

    def _count(self, outcome: Outcome) -> None:
        for addon in self.addons:
            if isinstance(addon, MetricsAddon):
                addon.metrics.proxy_request(str(outcome))


class _Sent(Exception):
    """The answer was partly sent when upstream failed: the connection can only be closed."""


def _has_body(request: Request) -> bool:
    return request.chunked or bool(request.content_length)


def _chunked(response: Response) -> bool:
    return any(k.lower() == "transfer-encoding" for k, _ in response.headers)


async def _write_chunk(writer: asyncio.StreamWriter, chunk: bytes, chunked: bool) -> None:
    if not chunk:
        return
    if chunked:
        writer.write(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
    else:
        writer.write(chunk)
    await writer.drain()  # back-pressure: never more than a chunk or two in memory


async def _request_body(request: Request, reader: asyncio.StreamReader) -> AsyncIterator[bytes]:
    """The browser's request body, streamed (Content-Length or chunked), never held whole."""
    if request.chunked:
        while True:
            line = await reader.readuntil(b"\r\n")
            size = int(line.split(b";", 1)[0].strip() or b"0", 16)
            if size == 0:
                while await reader.readuntil(b"\r\n") != b"\r\n":  # trailers, dropped
                    pass
                return
            async for data in _body_bytes(reader, size):
                yield data
            await reader.readexactly(2)
    else:
        async for data in _body_bytes(reader, request.content_length or 0):
            yield data


async def _body_bytes(reader: asyncio.StreamReader, size: int) -> AsyncIterator[bytes]:
    """The next `size` bytes of the request body, in pieces of at most CHUNK."""
    remaining = size
    while remaining:
        data = await reader.read(min(CHUNK, remaining))
        if not data:
            raise ConnectionError("request body ended early")
        remaining -= len(data)
        yield data


async def _pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    """Copy one direction of a tunnel with back-pressure until EOF."""
    try:
        while data := await source.read(CHUNK):
            sink.write(data)
            await sink.drain()
        if sink.can_write_eof():
            sink.write_eof()
    except (ConnectionError, OSError):
        sink.close()


def load_ca(settings: Settings) -> CertificateAuthority | None:
    """The local CA when `--intercept-https` is on (created on first use in the data directory)."""
    if not settings.intercept_https:
        return None
    from ..settings import data_dir
    from .tls import CertificateAuthority, ca_directory

    return CertificateAuthority.load_or_create(ca_directory(data_dir()))


def ca_path_hint() -> Path:
    from ..settings import data_dir
    from .tls import CA_CERT_NAME, ca_directory

    return ca_directory(data_dir()) / CA_CERT_NAME
