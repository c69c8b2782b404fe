"""The proxy core: an HTTP/1.1 forward proxy on its own listener (`--proxy-port`).

Why a separate listener rather than the reader server's port: a forward proxy speaks a different
HTTP than a web application (absolute-form targets, CONNECT tunnels that take over the socket,
TLS started in the middle of a connection when intercepting, bodies streamed both ways with
back-pressure: responses of any size, request bodies up to the fetch size cap). aiohttp's web
server is built for the second; keeping the proxy on its own small asyncio server keeps each side
simple, lets the reader server keep its request size limits and middlewares, and means a proxy
client can never reach the reader's routes by accident (and the reverse).

Read top to bottom: `ProxyServer.start` listens; `_connection` reads requests from one browser
connection (keep-alive; the HTTP/1.1 parsing and framing are h11's, through
`http1.ClientConnection`) and makes a `Flow` per request; `_handle` runs the addons' hooks around
the three ways a flow can go — answered by an addon, `_tunnel` (CONNECT, a plain TCP tunnel or an
intercepted TLS connection served by `_connection` again), or `_forward` (the request sent upstream
through the SSRF-guarded client, the answer streamed back or, for article navigations, buffered for
the reader addon).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import errno
import functools
import logging
import resource
import socket
import ssl
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from http import HTTPStatus
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult

from ..web.auth import auth_logins, configured_credentials
from ..web.browser import CONNECTED, ClientGone
from ..web.datadir import data_dir
from ..web.fetch import (
    DECODABLE_ENCODINGS,
    REDIRECT_STATUSES,
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
from ..web.forwarded import normal_address, parse_trusted
from ..web.limits import CLIENT_HEADER
from ..web.templating import Preferences
from ..web.workers import CLIENT
from .addons import (
    EARLY_VIEW,
    SECURITY_HEADERS,
    Addon,
    AuthAddon,
    MetricsAddon,
    ReaderAddon,
    RulesAddon,
    fall_back,
    host_list,
    reader_base,
    same_origin_links,
    simple_response,
)
from .backbar import BackBarAddon
from .blocklist import BLOCKED_TUNNEL, BlocklistAddon
from .flow import (
    HOP_BY_HOP,
    MAX_HEAD,
    VIA,
    BadRequest,
    Flow,
    Headers,
    Outcome,
    Request,
    Response,
    end_to_end,
    header,
    header_values,
    offered_encodings,
    request_from_head,
    with_via,
)
from .http1 import (
    HEAD_TIMEOUT,
    BodyTooLarge,
    ClientConnection,
    LocalProtocolError,
    client_starts_tls,
)
from .intercept import InterceptPolicy
from .lan import listen_hosts
from .proxyprotocol import HEADER_TIMEOUT, ProxyProtocolError, read_header
from .requestlog import RequestLogAddon
from .setup import SETUP_TUNNEL, SetupAddon, SiteCookiesAddon, config_rules, user_of
from .sites import SitePool, SiteResponse, Unsupported
from .store import ProxyStore
from .upgrade import UpgradeFailed, is_websocket, relay

if TYPE_CHECKING:
    from ..web.metrics import Metrics
    from ..web.reader import Reader
    from ..web.templating import Renderer
    from .settings import Settings
    from .tls import CertificateAuthority

log = logging.getLogger("readerproxy.proxy")

CHUNK = 64 * 1024
_CLIENT_HEADER = CLIENT_HEADER.lower()
NO_BODY_STATUSES = frozenset({204, 304})
#: Connections one client address may hold open on the proxy port; one more is closed at once
#: (reset, nothing read). A browser opens at most 32 to its proxy (Chromium's and Firefox's pool
#: limits), tunnels included; this leaves room for a few browsers behind one address, and keeps
#: one address from holding every descriptor (1,100 idle connections did).
MAX_CONNECTIONS_PER_ADDRESS = 128
#: Connections of one address past which its idle ones are shed first when descriptors run out.
SHED_ABOVE = 32
#: Errors of `accept()` that mean the process (or the system) is out of descriptors or buffers.
OUT_OF_RESOURCES = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
#: At most one log line about running out of descriptors in this many seconds.
PRESSURE_LOG_SECONDS = 60.0
#: The address the client reached, as a PROXY protocol header named it (the pass-through's public
#: address), for the setup page and the PAC file; None: the connection's own local end.
REACHED: contextvars.ContextVar[tuple[str, int] | None] = contextvars.ContextVar("reached", default=None)
#: A site's answer: the client library's, or one read on the proxy's own connection (`sites.SitePool`).
Upstream = aiohttp.ClientResponse | SiteResponse


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
        self.policy = InterceptPolicy.from_settings(
            settings.intercept_hosts, settings.ignore_hosts, host_list(settings.direct_hosts)
        )
        #: How long an article navigation's body may take before it streams through as the original.
        self.reader_wait = max(float(settings.reader_wait), 0.0)
        self.upstream_tls: ssl.SSLContext | None = None
        credentials = configured_credentials(settings)
        #: peers whose connections begin with a PROXY protocol header naming the client
        self.trusted = parse_trusted(settings.trusted_proxies)
        self.store = ProxyStore(reader.cache)  # preferences and site rules chosen in the browser
        rules = RulesAddon(
            host_list(settings.reader_hosts),
            host_list(settings.direct_hosts),
            self.store,
            own_port=settings.port,
            own_hosts=(settings.host,),
        )
        self.addons: list[Addon] = [
            RequestLogAddon(settings.log_format == "json"),  # first: it times the whole flow
            AuthAddon(auth_logins(settings)),  # every line of --auth-file
            SetupAddon(settings, renderer, self.store, ca, config_rules(settings)),
            # ad and tracker hosts: 403 at once (inside the tunnel, when it is intercepted)
            BlocklistAddon.from_settings(settings, self.policy.intercepts if ca is not None else None),
            # before the rules: it notes the way-back marker that their request hook removes
            BackBarAddon(reader, renderer, settings, self.store, rules.is_own),
            rules,
            SiteCookiesAddon(rules.is_own),
            ReaderAddon(reader, renderer, settings, reader_base(settings), self.store, user_of(credentials)),
            MetricsAddon(metrics),
        ]
        self.server: asyncio.Server | None = None
        self.session: aiohttp.ClientSession | None = None
        #: plain-HTTP GET and HEAD without a body, on connections of the proxy's own (`sites.SitePool`)
        self.sites: SitePool | None = None
        self._connections: set[asyncio.Task[None]] = set()
        #: every open connection (a tunnel's inner one too) and its client's address
        self._clients: dict[ClientConnection, str] = {}
        self._per_address: Counter[str] = Counter()  # open connections by client address
        self.refused_connections = 0  # closed at once: their address had its share open
        self.descriptor_pressure = DescriptorPressure(self._shed_idle)

    # ---- lifecycle --------------------------------------------------------------------------
    async def start(self, host: str | Sequence[str], port: int, *, reuse_port: bool = False) -> None:
        """Listen on `host` (one address, or several: `--lan`) and open the upstream client."""
        upstream_tls = (
            ssl.create_default_context(cafile=str(self.settings.upstream_ca))
            if self.settings.upstream_ca
            else ssl.create_default_context()
        )
        if self.settings.upstream_ca:
            upstream_tls.load_default_certs()
        self.upstream_tls = upstream_tls
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
        self.sites = SitePool(
            self._site_address, self.fetch.connect_timeout, max(self.fetch.read_timeout, 60.0)
        )
        self.descriptor_pressure.install(asyncio.get_running_loop())
        self.server = await asyncio.start_server(
            self._accept, host, port, limit=MAX_HEAD, reuse_port=reuse_port or None
        )

    @property
    def port(self) -> int:
        assert self.server is not None
        return int(self.server.sockets[0].getsockname()[1])

    async def close(self) -> None:
        self.descriptor_pressure.uninstall()
        if self.server is not None:
            self.server.close()
        for task in list(self._connections):
            task.cancel()
        await asyncio.gather(*self._connections, return_exceptions=True)
        for addon in self.addons:
            await addon.close()
        if self.session is not None:
            await self.session.close()
        if self.sites is not None:
            self.sites.close()
        await self.resolver.close()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername") or ("?", 0)
        if self.trusted.trusts(str(peer[0])):  # a pass-through: the client is in its PROXY header
            named = await self._proxy_header(reader, writer, str(peer[0]))
            if named is None:
                return
            peer = named
        address = normal_address(str(peer[0]))
        if self._per_address[address] >= MAX_CONNECTIONS_PER_ADDRESS:
            self.refused_connections += 1
            writer.transport.abort()  # its descriptor back at once
            return
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        self._per_address[address] += 1
        CLIENT.set(address)  # extraction workers are shared out by client address
        conn = ClientConnection(reader, writer)
        try:
            await self._connection(conn, f"{address}:{peer[1]}")
            await conn.linger()
        except (ConnectionError, asyncio.IncompleteReadError, ssl.SSLError):
            pass
        except ClientGone:  # the browser left while its flow waited on a render: nobody to answer
            pass
        except asyncio.CancelledError:  # the proxy is closing
            pass
        except Exception:  # a bug outside any flow (a flow's own is answered in `_handle`)
            log.exception("proxy connection from %s failed", address)
        finally:
            self._connections.discard(task)
            self._per_address[address] -= 1
            if self._per_address[address] <= 0:
                del self._per_address[address]
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _proxy_header(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, peer: str
    ) -> tuple[str, int] | None:
        """The client a trusted peer's PROXY protocol header names (`proxyprotocol.py`), and the
        address it reached in `REACHED`; the peer itself for a LOCAL or UNKNOWN header (its health
        check). None, the connection answered 400 and closed, when there is no valid header in
        `HEADER_TIMEOUT` seconds: a trusted peer's bytes are never taken as the client's."""
        try:
            async with asyncio.timeout(HEADER_TIMEOUT):
                header = await read_header(reader)
        except (ProxyProtocolError, TimeoutError, asyncio.IncompleteReadError, ConnectionError) as exc:
            problem = str(exc) if isinstance(exc, ProxyProtocolError) else type(exc).__name__
            log.warning("proxy connection from trusted proxy %s without a PROXY header: %s", peer, problem)
            with contextlib.suppress(Exception):
                body = f"readerproxy: {problem} (--trusted-proxies {peer})\n".encode()
                writer.write(
                    b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\n"
                    + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
                    + body
                )
                await writer.drain()
            writer.close()
            return None
        REACHED.set(header.destination)
        if header.source is None:
            local = writer.get_extra_info("peername") or (peer, 0)
            return str(local[0]), int(local[1])
        return header.source

    def _shed_idle(self) -> int:
        """Close connections waiting for a request to begin (`ClientConnection.idle`): out of
        descriptors, those are the ones to give back, and their browsers open new ones when they
        have a request. Those of addresses holding more than a browser opens (`SHED_ABOVE`) go
        first, and alone when there are any: one address's flood does not cost every other
        browser its kept-alive connections. Returns how many were closed."""
        idle = [
            (conn, address)
            for conn, address in self._clients.items()
            if conn.idle and not conn.writer.is_closing()
        ]
        heavy = [conn for conn, address in idle if self._per_address[address] > SHED_ABOVE]
        chosen = heavy or [conn for conn, _ in idle]
        for conn in chosen:
            conn.writer.close()
        return len(chosen)

    # ---- one browser connection -------------------------------------------------------------
    async def _connection(
        self,
        conn: ClientConnection,
        client: str,
        tunnel: tuple[str, int] | None = None,
        scheme: str = "https",
    ) -> None:
        """Requests one after another while the connection is kept alive; `tunnel` is the (host,
        port) of an intercepted CONNECT, whose requests come in origin form, over TLS (`scheme`
        https) or, when the client spoke plain HTTP into the tunnel, as http.

        A render a flow starts (the reader addon's, for an algorithm that needs the browser) stops
        when this connection goes (`CONNECTED`, as the reader server sets per request)."""
        CONNECTED.set(_still_connected(conn))
        self._clients[conn] = client.rpartition(":")[0]  # the address `_per_address` counts
        try:
            await self._requests(conn, client, tunnel, scheme)
        finally:
            self._clients.pop(conn, None)

    async def _requests(
        self, conn: ClientConnection, client: str, tunnel: tuple[str, int] | None, scheme: str
    ) -> None:
        """The requests of one connection (`_connection`), one after another."""
        while True:
            try:
                head = await conn.next_request()
                if head is None:
                    return
                request = request_from_head(
                    head,
                    default_scheme=scheme,
                    default_host=tunnel[0] if tunnel else None,
                    default_port=tunnel[1] if tunnel else None,
                )
            except BadRequest as exc:
                await self._refuse(conn, exc.status, exc.message)
                self._count(Outcome.REFUSED)
                return
            flow = Flow(client, request)
            flow.read_body = functools.partial(_whole_body, conn)
            # the address the client reached: the pass-through's, when a PROXY header named it
            flow.notes["local"] = REACHED.get() or conn.writer.get_extra_info("sockname")
            if tunnel:
                flow.notes["in_tunnel"] = True
            if not await self._handle(flow, conn) or not conn.next_cycle():
                return

    async def _refuse(self, conn: ClientConnection, status: int, message: str) -> None:
        """A plain-text error answer on a connection that then closes (nothing if an answer began)."""
        if conn.response_started:
            return
        with contextlib.suppress(LocalProtocolError):
            await self._write_simple(conn, simple_response(status, HTTPStatus(status).phrase, message + "\n"))

    # ---- one flow ---------------------------------------------------------------------------
    async def _handle(self, flow: Flow, conn: ClientConnection) -> bool:
        """Run the flow through the addons and the network; True to keep the connection.

        An exception no part of the flow expected (a bug in an addon, say) is logged once and
        answered with a readable 502 page when nothing was sent yet, and the connection closes:
        never a connection closed with no answer."""
        request = flow.request
        try:
            for hook in _hooks(self.addons, "request"):
                await hook(flow)
                if flow.response is not None:
                    break
            if flow.response is not None:  # answered by an addon (407, an asset)
                keep = request.keep_alive and not _has_body(request)
                await self._write_simple(conn, flow.response, keep_alive=keep)
                return keep
            if request.method == "CONNECT":
                await self._tunnel(flow, conn)
                return False
            return await self._forward(flow, conn)
        except _GOING_AWAY:
            raise
        except Exception as exc:
            await self._failed(flow, conn, exc)
            return False
        finally:
            if flow.outcome is not None or request.method != "CONNECT":
                for hook in _hooks(self.addons, "done"):
                    try:
                        await hook(flow)
                    except Exception:
                        log.exception("proxy addon %s failed when %s ended", _addon_name(hook), request.url)

    async def _failed(self, flow: Flow, conn: ClientConnection, exc: Exception) -> None:
        """An unexpected exception in a flow: logged once, then a 502 page if no answer began."""
        log.error("proxy request %s %s failed", flow.request.method, flow.request.url, exc_info=exc)
        flow.outcome = Outcome.ERROR
        if conn.response_started:
            flow.error = f"internal: {type(exc).__name__}"
            return
        with contextlib.suppress(LocalProtocolError, ConnectionError):
            await self._error_page(
                flow,
                conn,
                502,
                "readerproxy could not handle this request",
                f"an internal error ({type(exc).__name__}) stopped it; it was logged",
                flow.request.url,
                close=True,
            )

    async def _tunnel(self, flow: Flow, conn: ClientConnection) -> None:
        """CONNECT: an intercepted TLS connection with `--intercept-https`, else a plain TCP tunnel."""
        request = flow.request
        try:
            async for _ in conn.body(0):  # a CONNECT carries no body
                pass
        except (BadRequest, BodyTooLarge):
            flow.outcome = Outcome.REFUSED
            await self._refuse(conn, 400, "a CONNECT request has no body")
            return
        # intercepted only to be answered inside (a 403, or the setup check): no site to reach
        blocked = BLOCKED_TUNNEL in flow.notes or SETUP_TUNNEL in flow.notes
        try:
            address = "" if blocked else await self._guarded_address(request.host, request.port)
        except (AddressRefused, OSError, FetchError) as exc:
            refused_ = isinstance(exc, AddressRefused | FetchError) or is_refusal(exc)
            flow.outcome = Outcome.REFUSED if refused_ else Outcome.ERROR
            status, reason = (403, "Forbidden") if refused_ else (502, "Bad Gateway")
            await self._write_simple(conn, simple_response(status, reason, f"{exc}\n"))
            return
        writer = conn.writer
        if self.ca is not None and (blocked or self.policy.intercepts(request.host, request.port)):
            if conn.trailing_data:  # TLS cannot start over bytes already read
                flow.outcome = Outcome.REFUSED
                await self._refuse(conn, 400, "data was sent before the tunnel was established")
                return
            try:
                context = self.ca.context_for(request.host)
            except ValueError as exc:
                flow.outcome = Outcome.REFUSED
                await self._refuse(conn, 400, str(exc))
                return
            writer.write(conn.accept_tunnel_head())
            await writer.drain()
            flow.outcome = None  # the requests inside are counted one by one
            try:
                secure = await client_starts_tls(writer, HEAD_TIMEOUT)
            except TimeoutError:
                return
            if secure:
                await writer.start_tls(context)
            inner = ClientConnection(conn.reader, writer)  # plain HTTP inside: ws:// from Chromium
            scheme = "https" if secure else "http"
            await self._connection(inner, flow.client, tunnel=(request.host, request.port), scheme=scheme)
            return
        try:
            up_reader, up_writer = await asyncio.wait_for(
                asyncio.open_connection(address, request.port), self.fetch.connect_timeout
            )
        except (OSError, TimeoutError) as exc:
            flow.outcome = Outcome.ERROR
            await self._write_simple(conn, simple_response(502, "Bad Gateway", f"cannot connect: {exc}\n"))
            return
        flow.outcome = Outcome.TUNNELLED
        writer.write(conn.accept_tunnel_head())
        await writer.drain()
        try:
            if early := conn.trailing_data:  # the tunnel's first bytes, read with the CONNECT head
                up_writer.write(early)
            await asyncio.gather(_pipe(conn.reader, up_writer), _pipe(up_reader, writer))
        finally:
            up_writer.close()

    async def _guarded_address(self, host: str, port: int) -> str:
        """The address a tunnel connects to: the same SSRF rule as /read (literal, mapped or DNS);
        `localhost`, `localhost.` and `*.localhost` refused before any lookup, as for GET."""
        check_host(f"http://{host if ':' not in host else f'[{host}]'}:{port}/", self.fetch)
        literal = literal_address(host)
        if literal is not None:
            return literal
        results = await self.resolver.resolve(host, port, socket.AF_UNSPEC)
        return str(results[0]["host"])

    async def _site_address(self, host: str, port: int) -> str:
        """The address `SitePool` connects to: `_guarded_address`, and the address itself checked
        as `guarded_socket` checks the client library's."""
        address = await self._guarded_address(host, port)
        if not self.fetch.allow_private and not is_public_address(address):
            raise AddressRefused(host, [address])
        return address

    async def _forward(self, flow: Flow, conn: ClientConnection) -> bool:
        """Send the request upstream and the answer back; True to keep the browser connection."""
        assert self.session is not None
        request = flow.request
        url = request.url
        try:
            check_host(url, self.fetch)
        except FetchError as exc:
            flow.outcome = Outcome.REFUSED
            if exc.status == 400:
                return await self._error_page(flow, conn, 400, "That address is not valid", exc.message, url)
            return await self._error_page(flow, conn, 403, "That address is not allowed", str(exc), url)
        limit = self.fetch.max_bytes
        if (request.content_length or 0) > limit:  # refused before a byte of it is read
            flow.outcome = Outcome.REFUSED
            return await self._error_page(
                flow,
                conn,
                413,
                "The request is too large",
                f"the request body is larger than {limit} bytes",
                url,
            )
        if is_websocket(request):
            return await self._upgrade(flow, conn)
        has_body = _has_body(request)
        if has_body and conn.expects_continue():
            await conn.send_continue()
        headers = _site_headers(request.headers)
        # only codings readerproxy decodes, so that a page it would read never comes in another one
        if (encodings := offered_encodings(request.headers, DECODABLE_ENCODINGS)) is not None:
            headers.append(("Accept-Encoding", encodings))
        if (
            self.sites is not None
            and not has_body
            and not self.settings.upgrade_https
            and SitePool.takes(request.method, request.scheme, request.host, request.path)
        ):
            try:
                site = await self.sites.fetch(
                    request.method, request.host, request.port, request.path, headers
                )
            except Unsupported:
                pass  # through the client library, below
            except (aiohttp.ClientError, TimeoutError) as exc:
                return await self._upstream_failed(flow, conn, exc, None)
            else:
                try:
                    return await self._respond(flow, site, conn)
                except _Sent:
                    return False
                except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
                    return await self._upstream_failed(flow, conn, exc, None)
                finally:
                    site.release()
        body_error: list[BaseException] = []
        body = _request_body(conn, limit, body_error) if has_body else None
        # no headers of the client library's own: the session skips User-Agent, Accept,
        # Accept-Encoding and Content-Type (`start`)
        try:
            async with self.session.request(
                request.method, url, headers=headers, data=body, allow_redirects=False, compress=None
            ) as up:
                if (secure := self._https_upgrade(request, up)) is not None:
                    up.release()
                    async with self.session.request(
                        request.method, secure, headers=headers, allow_redirects=False, compress=None
                    ) as up_secure:
                        return await self._respond(flow, up_secure, conn, upgraded=True)
                return await self._respond(flow, up, conn)
        except _Sent:
            return False
        except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
            return await self._upstream_failed(flow, conn, exc, body_error[0] if body_error else None)

    async def _respond(
        self, flow: Flow, up: Upstream, conn: ClientConnection, *, upgraded: bool = False
    ) -> bool:
        """The site's answer head to the addons, then the answer to the browser (`_answer`).
        `upgraded`: fetched over https for an http:// request (`--upgrade-https`), so an `https://`
        Location is given back as `http://`, which the client can follow (and the proxy upgrade)."""
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in up.raw_headers]
        if upgraded:
            headers = [(k, _plain_http(v) if k.lower() == "location" else v) for k, v in headers]
        flow.response = response = Response(up.status, up.reason or "", headers)
        if upgraded:
            flow.notes["upgraded_https"] = True
        for hook in _hooks(self.addons, "response_headers"):
            try:
                await hook(flow)
            except _GOING_AWAY:
                raise
            except Exception as exc:  # a bug: the answer streams through as it comes
                self._addon_failed(flow, _addon_name(hook), "response_headers", exc)
                flow.response, flow.wants_body, flow.sniff = response, False, None
                break
        return await self._answer(flow, up, conn)

    @staticmethod
    def _addon_failed(flow: Flow, addon: Addon | str, hook: str, exc: Exception) -> None:
        name = addon if isinstance(addon, str) else type(addon).__name__
        log.error("proxy addon %s failed in %s on %s", name, hook, flow.request.url, exc_info=exc)
        fall_back(flow, "internal", f"{name}.{hook}: {type(exc).__name__}")

    def _https_upgrade(self, request: Request, up: aiohttp.ClientResponse) -> str | None:
        """With `--upgrade-https`: the https:// URL to fetch instead, when the site redirects this
        http:// GET or HEAD to the https:// of the same host, path and query (as FrogFind and
        macproxy do for old clients that speak no TLS); else None."""
        if (
            not self.settings.upgrade_https
            or request.scheme != "http"
            or request.method not in ("GET", "HEAD")
            or _has_body(request)
            or up.status not in REDIRECT_STATUSES
        ):
            return None
        location = header([(k, v) for k, v in up.headers.items()], "location")
        if not location:
            return None
        try:
            target = urljoin(request.url, location)
            parts = urlsplit(target)
            check_host(target, self.fetch)
        except (ValueError, FetchError):
            return None
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        if parts.scheme != "https" or (parts.hostname or "") != request.host or path != request.path:
            return None
        return target

    async def _upgrade(self, flow: Flow, conn: ClientConnection) -> bool:
        """A WebSocket handshake (ws, or wss inside an intercepted tunnel) on a connection of its own
        to the address the SSRF guard allows; on 101, the bytes piped both ways (`upgrade.relay`).
        The browser connection ends with it."""
        request = flow.request
        secure = request.scheme == "https"
        try:
            address = await self._guarded_address(request.host, request.port)
            up_reader, up_writer = await asyncio.wait_for(
                asyncio.open_connection(
                    address,
                    request.port,
                    ssl=self.upstream_tls if secure else None,
                    server_hostname=request.host if secure else None,
                ),
                self.fetch.connect_timeout,
            )
        except (AddressRefused, FetchError) as exc:
            flow.outcome = Outcome.REFUSED
            await self._error_page(flow, conn, 403, "That address is not allowed", str(exc), request.url)
            return False
        except ssl.SSLCertVerificationError as exc:
            flow.outcome = Outcome.ERROR
            message = f"The certificate of {request.host} could not be verified ({exc.verify_message})"
            await self._error_page(
                flow, conn, 502, "The site's certificate is not valid", message, request.url
            )
            return False
        except (OSError, TimeoutError) as exc:
            flow.outcome = Outcome.REFUSED if is_refusal(exc) else Outcome.ERROR
            status, title = (
                (403, "That address is not allowed")
                if is_refusal(exc)
                else (502, "The site could not be reached")
            )
            await self._error_page(
                flow, conn, status, title, f"could not connect to {request.host}", request.url
            )
            return False
        try:
            timeout = max(self.fetch.read_timeout, 10.0)
            status = await relay(conn, request, up_reader, up_writer, timeout)
            flow.outcome = Outcome.PASSED
            flow.notes["websocket"] = status
        except UpgradeFailed as exc:
            flow.outcome = Outcome.ERROR
            await self._error_page(flow, conn, 502, "The site did not answer properly", str(exc), request.url)
        finally:
            up_writer.close()
        return False

    async def _upstream_failed(
        self, flow: Flow, conn: ClientConnection, exc: Exception, body_error: BaseException | None
    ) -> bool:
        """The answer when the exchange with the site failed before its answer began: the browser's
        own body first (413 too large, 400 malformed), then what went wrong upstream."""
        request = flow.request
        url = request.url
        if conn.response_started:
            flow.outcome = Outcome.ERROR
            flow.error = f"upstream: {type(exc).__name__}"
            return False
        if isinstance(body_error, BodyTooLarge):
            flow.outcome = Outcome.REFUSED
            return await self._error_page(flow, conn, 413, "The request is too large", str(body_error), url)
        if isinstance(body_error, BadRequest):
            flow.outcome = Outcome.REFUSED
            return await self._error_page(
                flow, conn, 400, "The request was malformed", body_error.message, url
            )
        if body_error is not None:  # the browser went away while sending its body
            flow.outcome = Outcome.ERROR
            flow.error = f"request body: {type(body_error).__name__}"
            return False
        if isinstance(exc, aiohttp.ClientConnectorCertificateError):
            flow.outcome = Outcome.ERROR
            return await self._error_page(
                flow,
                conn,
                502,
                "The site's certificate is not valid",
                f"The certificate of {request.host} could not be verified "
                f"({exc.certificate_error}); the connection was not made",
                url,
            )
        if isinstance(exc, aiohttp.ClientConnectorError):
            if is_refusal(exc.os_error):
                flow.outcome = Outcome.REFUSED
                error = refused(str(exc.os_error), url)
                return await self._error_page(
                    flow, conn, 403, "That address is not allowed", error.message, url
                )
            flow.outcome = Outcome.ERROR
            return await self._error_page(
                flow, conn, 502, "The site could not be reached", f"could not connect to {request.host}", url
            )
        if isinstance(exc, ValueError):  # an address the client library cannot use (IDNA, say)
            flow.outcome = Outcome.REFUSED
            return await self._error_page(
                flow, conn, 400, "That address is not valid", f"invalid address: {type(exc).__name__}", url
            )
        flow.outcome = Outcome.ERROR
        return await self._error_page(
            flow,
            conn,
            504 if isinstance(exc, TimeoutError) else 502,
            "The site did not answer properly",
            f"{type(exc).__name__}",
            url,
        )

    async def _answer(self, flow: Flow, up: Upstream, conn: ClientConnection) -> bool:
        """The upstream answer to the browser: streamed, or buffered for the reader addon."""
        request, response = flow.request, flow.response
        assert response is not None
        if response.status < 200:  # an interim answer the client library let through (101, 103)
            flow.outcome = Outcome.ERROR
            return await self._error_page(
                flow, conn, 502, "The site did not answer properly", f"status {response.status}", request.url
            )
        buffered: list[bytes] = []
        if flow.wants_body:
            early = flow.notes.get(EARLY_VIEW)
            if isinstance(early, Response):  # answered at the head: then the body, for the addons
                return await self._early_answer(flow, up, conn, early)
            complete = await self._collect(flow, up, buffered, self.reader_wait)
            if complete:  # else: too large, or too slow: it streams through as it is, below
                body = b"".join(buffered)
                for addon in self.addons:
                    try:
                        await addon.response(flow, body)
                    except _GOING_AWAY:
                        raise
                    except Exception as exc:  # a bug: the original goes through as it came
                        self._addon_failed(flow, addon, "response", exc)
                        flow.response = response
                        break
                if flow.response is not None and flow.response is not response:  # replaced: the reader view
                    await self._write_simple(conn, flow.response, keep_alive=request.keep_alive)
                    return request.keep_alive
                flow.outcome = Outcome.PASSED
                response.body = body
                await self._write_simple(conn, response, keep_alive=request.keep_alive, passthrough=True)
                return request.keep_alive
        flow.outcome = Outcome.PASSED
        keep_alive = request.keep_alive
        headers = _passed_headers(response.headers)
        headers.append(("Connection", "keep-alive" if keep_alive else "close"))
        no_body = request.method == "HEAD" or response.status in NO_BODY_STATUSES
        # a body the addons asked for that was late: kept as it streams (up to the size cap) and
        # handed to them once whole (`body_arrived`: the reader addon reads it for the next visit)
        late = _Kept(buffered, self.fetch.max_bytes) if flow.notes.get("streamed") == "slow" else None
        try:
            # the head is held to go out with the body bytes already here: a small answer that came
            # in whole leaves in one write; what is still to come streams after the head is sent
            await conn.start_response(response.status, response.reason, headers, flush=False)
            if not no_body:
                for chunk in buffered:  # the head goes with the first
                    await conn.send_data(chunk)
                # all of the body that is here (bounded by the client library's read buffer): a
                # page that came in one read leaves in one write, head and end included
                chunk = up.content.read_nowait(-1)
                if late is not None:
                    late.add(chunk)
                await conn.send_data(chunk, flush=False)
                if not up.content.at_eof():
                    await conn.flush()
                    async for chunk in up.content.iter_any():
                        if late is not None:
                            late.add(chunk)
                        await conn.send_data(chunk)
            await conn.end_response()
        except (aiohttp.ClientError, TimeoutError, LocalProtocolError) as exc:
            # upstream broke off mid-body, or sent other than its Content-Length: so do we
            flow.error = f"upstream body: {type(exc).__name__}"
            with contextlib.suppress(ConnectionError):
                await conn.flush()  # what was framed before the failure, as when sent piece by piece
            raise _Sent from exc
        if late is not None and late.chunks is not None:
            await self._body_arrived(flow, response, b"".join(late.chunks))
        return keep_alive

    async def _early_answer(self, flow: Flow, up: Upstream, conn: ClientConnection, answer: Response) -> bool:
        """An answer an addon chose at the head (`EARLY_VIEW`), sent at once with the connection to
        close; then the site's body read to its end (within the size cap and the fetch's total
        timeout) and handed to the addons (`body_arrived`), marked slow unless it came within
        `reader_wait`. The browser has its answer whatever happens to that read."""
        upstream = flow.response
        assert upstream is not None
        flow.response = answer
        flow.outcome = Outcome.READER
        await self._write_simple(conn, answer, keep_alive=False)
        buffered: list[bytes] = []
        try:
            complete = await self._collect(flow, up, buffered, self.reader_wait)
            if not complete and flow.notes.get("streamed") == "slow":
                rest = max(self.fetch.total_timeout, self.reader_wait)
                complete = await self._collect(flow, up, buffered, rest)
        except (aiohttp.ClientError, TimeoutError) as exc:
            flow.error = f"upstream body after the answer: {type(exc).__name__}"
            return False
        if complete:
            await self._body_arrived(flow, upstream, b"".join(buffered))
        return False

    async def _body_arrived(self, flow: Flow, upstream: Response, body: bytes) -> None:
        for addon in self.addons:
            try:
                await addon.body_arrived(flow, upstream, body)
            except _GOING_AWAY:
                raise
            except Exception as exc:
                log.error(
                    "proxy addon %s failed in body_arrived on %s",
                    type(addon).__name__,
                    flow.request.url,
                    exc_info=exc,
                )

    async def _collect(self, flow: Flow, up: Upstream, buffered: list[bytes], wait: float) -> bool:
        """Read the body the reader addon asked for into `buffered` (which may hold its start
        already); True when it came in whole.

        False, with what has arrived so far in `buffered`, when it grows past the size cap or has
        not ended within `wait` seconds (`reader_wait` from its head), or as soon as its start
        shows it is no article (`flow.sniff`): such a page is never held back, it streams through
        as the original (`flow.notes["streamed"]` says why).
        """
        size = sum(len(chunk) for chunk in buffered)
        deadline = asyncio.get_running_loop().time() + wait
        while True:
            timer = asyncio.timeout_at(deadline)
            try:
                async with timer:
                    chunk = await up.content.readany()
            except TimeoutError:
                if not timer.expired():
                    raise  # the client library's own read timeout
                flow.notes["streamed"] = "slow"
                return False
            if not chunk:
                return True
            buffered.append(chunk)
            size += len(chunk)
            if flow.sniff is not None and (reason := flow.sniff(chunk)) is not None:
                flow.notes["streamed"] = reason  # the head already shows no article
                return False
            if size > self.fetch.max_bytes:
                flow.notes["streamed"] = "large"
                return False

    # ---- writing answers --------------------------------------------------------------------
    async def _write_simple(
        self,
        conn: ClientConnection,
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
        await conn.send_response(response.status, response.reason, headers, body)

    async def _error_page(
        self,
        flow: Flow,
        conn: ClientConnection,
        status: int,
        title: str,
        message: str,
        url: str,
        *,
        close: bool = False,
    ) -> bool:
        """An HTML error page from the reader's templates, for a request that got no upstream answer
        (`close`: the connection closes after it whatever the request asked)."""
        flow.error = message
        message = message[0].upper() + message[1:] if message else message
        page = self.renderer.error_page(status, title, message.rstrip(".") + ".", Preferences(), url)
        flow.response = Response(
            status,
            HTTPStatus(status).phrase,
            [("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-store"), *SECURITY_HEADERS],
            same_origin_links(page).encode("utf-8"),
        )
        keep = flow.request.keep_alive and not _has_body(flow.request) and not close
        await self._write_simple(conn, flow.response, keep_alive=keep)
        return keep

    def _count(self, outcome: Outcome) -> None:
        for addon in self.addons:
            if isinstance(addon, MetricsAddon):
                addon.metrics.proxy_request(str(outcome))


class DescriptorPressure:
    """`accept()` out of descriptors (EMFILE and its kind), as back-pressure rather than an error.

    asyncio's listeners already stop accepting for a second on such an error, but log a traceback
    for every connection still waiting, again and again (218,783 tracebacks, 97 MB in 25 s with
    1,100 idle connections). Installed as the event loop's exception handler, this takes
    those reports of every listener of the loop (the proxy's and the reader server's): the first
    is one WARNING line, later ones are counted and summed up in at most one line a minute; and
    each closes the proxy's idle connections (`shed`), so that the pause ends with descriptors to
    accept with. Any other report goes to the handler that was there before.
    """

    def __init__(self, shed: Callable[[], int], clock: Callable[[], float] = time.monotonic) -> None:
        self.shed = shed
        self.clock = clock
        self.events = 0  # every out-of-descriptors report, for tests and the log line
        self.shed_total = 0
        self._unlogged = 0
        self._logged_at: float | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._previous: Callable[[asyncio.AbstractEventLoop, dict[str, object]], object] | None = None

    def install(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._previous = loop.get_exception_handler()
        loop.set_exception_handler(self.handle)

    def uninstall(self) -> None:
        if self._loop is not None and self._loop.get_exception_handler() == self.handle:
            self._loop.set_exception_handler(self._previous)
        self._loop = None

    def handle(self, loop: asyncio.AbstractEventLoop, context: dict[str, object]) -> None:
        exc = context.get("exception")
        message = str(context.get("message", ""))
        if (
            isinstance(exc, OSError)
            and exc.errno in OUT_OF_RESOURCES
            and message.startswith("socket.accept()")
        ):
            self.note(exc)
        elif self._previous is not None:
            self._previous(loop, context)
        else:
            loop.default_exception_handler(context)

    def note(self, exc: OSError) -> None:
        """One failed `accept()`: shed idle connections, and log once in a while."""
        self.events += 1
        self.shed_total += self.shed()
        now = self.clock()
        if self._logged_at is not None and now - self._logged_at < PRESSURE_LOG_SECONDS:
            self._unlogged += 1
            return
        soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        name = errno.errorcode.get(exc.errno or 0, str(exc.errno))
        more = f"; {self._unlogged} more since the last such line" if self._unlogged else ""
        log.warning(
            "out of file descriptors (%s, open-file limit %d): accepting paused for a moment, "
            "%d idle proxy connections closed so far%s",
            name,
            soft,
            self.shed_total,
            more,
        )
        self._logged_at = now
        self._unlogged = 0


class _Kept:
    """The chunks of a streamed body kept while they fit `limit` bytes; `chunks` None past it."""

    def __init__(self, start: list[bytes], limit: int) -> None:
        self.chunks: list[bytes] | None = list(start)
        self.size = sum(len(chunk) for chunk in start)
        self.limit = limit

    def add(self, chunk: bytes) -> None:
        if self.chunks is None or not chunk:
            return
        self.size += len(chunk)
        if self.size > self.limit:
            self.chunks = None
        else:
            self.chunks.append(chunk)


class _Sent(Exception):
    """The answer was partly sent when upstream failed: the connection can only be closed."""


#: What ends a flow with nobody to answer (the browser left, the answer already broke off): passed
#: on to the connection, never answered with a 502 page.
_GOING_AWAY = (ConnectionError, asyncio.IncompleteReadError, ssl.SSLError, ClientGone, _Sent)


def _still_connected(conn: ClientConnection) -> Callable[[], bool]:
    """Whether the browser is still on `conn`: it has not closed it (end of stream) nor has the
    connection broken (its transport closing). Bytes it sent are not read here, only noticed."""
    return lambda: not (conn.writer.is_closing() or conn.reader.at_eof())


def _plain_http(location: str) -> str:
    """An absolute `https://` Location as `http://` (anything else as it is)."""
    return "http://" + location[8:] if location[:8].lower() == "https://" else location


def _hooks(addons: Sequence[Addon], name: str) -> list[Callable[..., Awaitable[None]]]:
    """The addons' hook `name` ("request", "response_headers", "done"), bound, in the addons'
    order, leaving out those that are `Addon`'s own no-op: most addons take part in one or two of
    the hooks, and a coroutine made and awaited for nothing costs the pass-through path each time.
    Asked per flow, so that addons added or changed later (tests) are seen."""
    noop = getattr(Addon, name)
    return [
        method for addon in addons if getattr(method := getattr(addon, name), "__func__", None) is not noop
    ]


def _addon_name(hook: Callable[..., object]) -> str:
    """The class name of the addon a bound hook belongs to."""
    owner = getattr(hook, "__self__", None)
    return type(owner).__name__ if owner is not None else getattr(hook, "__qualname__", "?")


def _has_body(request: Request) -> bool:
    return request.chunked or bool(request.content_length)


#: Request fields never sent to the site: the hop-by-hop ones, Host (the client library's, from the
#: URL), Expect (the proxy answers it), Accept-Encoding (offered anew, `offered_encodings`), a
#: client's own copy of the gateway's client header (`limits.client_key`); and Via, sent anew.
_NOT_TO_SITE = HOP_BY_HOP | {"host", "expect", "accept-encoding", _CLIENT_HEADER, "via"}
_NOT_PASSED = HOP_BY_HOP | {"via"}  # of an answer streamed through: Via sent anew


def _site_headers(headers: Headers) -> Headers:
    """The browser's request fields as sent to the site, in one pass: `with_via(end_to_end(...))`
    without those of `_NOT_TO_SITE`."""
    named = header_values(headers, "connection")
    dropped = _NOT_TO_SITE.union(named) if named else _NOT_TO_SITE
    vias: list[str] = []
    kept: Headers = []
    for key, value in headers:
        lowered = key.lower()
        if lowered in dropped:
            if lowered == "via" and "via" not in named:
                vias.append(value)
            continue
        kept.append((key, value))
    kept.append(("Via", f"{', '.join(vias)}, {VIA}" if vias else VIA))
    return kept


def _passed_headers(headers: Headers) -> Headers:
    """The site's answer fields as streamed to the browser, in one pass: `with_via(end_to_end(...))`,
    and without Content-Length when the site sent Transfer-Encoding (the framing is then the
    proxy's: chunked, or the connection's end for HTTP/1.0)."""
    named = header_values(headers, "connection")
    dropped = _NOT_PASSED.union(named) if named else _NOT_PASSED
    vias: list[str] = []
    kept: Headers = []
    chunked = False
    for key, value in headers:
        lowered = key.lower()
        if lowered in dropped:
            if lowered == "transfer-encoding":
                chunked = True
            elif lowered == "via" and "via" not in named:
                vias.append(value)
            continue
        kept.append((key, value))
    if chunked:
        kept = [(key, value) for key, value in kept if key.lower() != "content-length"]
    kept.append(("Via", f"{', '.join(vias)}, {VIA}" if vias else VIA))
    return kept


async def _request_body(
    conn: ClientConnection, limit: int, error: list[BaseException]
) -> AsyncIterator[bytes]:
    """The browser's request body streamed upstream (de-framed by h11, at most `limit` bytes, never
    held whole). What stopped it is kept in `error`: the client library reports it only as a
    failed upload."""
    try:
        async for data in conn.body(limit):
            yield data
    except (BodyTooLarge, BadRequest, ConnectionError) as exc:
        error.append(exc)
        raise


async def _whole_body(conn: ClientConnection, limit: int) -> bytes:
    """A request body read whole (`Flow.read_body`): `100 Continue` first when the browser waits
    for it; BodyTooLarge past `limit` bytes, BadRequest when malformed."""
    if conn.expects_continue():
        await conn.send_continue()
    return b"".join([piece async for piece in conn.body(limit)])


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
    from .tls import CertificateAuthority, ca_directory

    return CertificateAuthority.load_or_create(ca_directory(data_dir()))


def ca_path_hint() -> Path:
    from .tls import CA_CERT_NAME, ca_directory

    return ca_directory(data_dir()) / CA_CERT_NAME


@contextlib.asynccontextmanager
async def proxy_listener(
    settings: Settings, reader: Reader, renderer: Renderer, metrics: Metrics
) -> AsyncIterator[ProxyServer]:
    """The proxy listening on settings.host:settings.proxy_port until the block ends."""
    assert settings.proxy_port is not None
    proxy = ProxyServer(settings, reader, renderer, metrics, ca=load_ca(settings))
    hosts = listen_hosts(settings)  # --lan: loopback and the LAN addresses
    # with --workers N every server process runs a proxy listener on the one port (SO_REUSEPORT)
    await proxy.start(
        hosts[0] if len(hosts) == 1 else hosts,
        settings.proxy_port,
        reuse_port=getattr(settings, "workers", 1) > 1,
    )
    log.info(
        "proxy listening on %s:%d%s",
        ", ".join(hosts),
        proxy.port,
        " (intercepting HTTPS)" if proxy.ca is not None else "",
    )
    try:
        yield proxy
    finally:
        await proxy.close()
