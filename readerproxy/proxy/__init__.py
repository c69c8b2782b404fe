"""Proxy mode: set readerproxy as a browser's or phone's HTTP proxy and just browse.

- `flow.py`: the HTTP flow as data (request, response, outcome), host-name rules, hop-by-hop headers.
- `http1.py`: HTTP/1.1 on a browser connection, parsed and framed by h11, with limits on heads
  and request bodies.
- `server.py`: the proxy core on its own listener (`--proxy-port`; why a separate listener is said
  there): absolute-form requests, CONNECT tunnels, the SSRF-guarded upstream client.
- `addons.py`: access control, per-host rules and the way back, the reader view, metrics.
- `tls.py`: the local CA of `--intercept-https`.

`proxy_listener(settings, reader, renderer, metrics)` runs the proxy for as long as the reader
server runs (the server enters it from its cleanup context).
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from .flow import valid_host
from .server import ProxyServer, load_ca

if TYPE_CHECKING:
    from ..metrics import Metrics
    from ..reader import Reader
    from ..render import Renderer
    from ..settings import Settings

__all__ = ["ProxyServer", "pac_file", "proxy_listener"]

log = logging.getLogger("readerproxy.proxy")


@contextlib.asynccontextmanager
async def proxy_listener(
    settings: Settings, reader: Reader, renderer: Renderer, metrics: Metrics
) -> AsyncIterator[ProxyServer]:
    """The proxy listening on settings.host:settings.proxy_port until the block ends."""
    assert settings.proxy_port is not None
    proxy = ProxyServer(settings, reader, renderer, metrics, ca=load_ca(settings))
    # with --workers N every server process runs a proxy listener on the one port (SO_REUSEPORT)
    await proxy.start(settings.host, settings.proxy_port, reuse_port=getattr(settings, "workers", 1) > 1)
    log.info(
        "proxy listening on %s:%d%s",
        settings.host,
        proxy.port,
        " (intercepting HTTPS)" if proxy.ca is not None else "",
    )
    try:
        yield proxy
    finally:
        await proxy.close()


def pac_file(host_header: str | None, port: int, fallback: str) -> str:
    """A proxy auto-config file sending every http and https request through this proxy.

    The proxy's host is the one the browser used to fetch the PAC file (its `Host` header, without
    the port) when that is a valid host name or IP literal, else `fallback` (the configured
    `--host`): nothing else from the request reaches the JavaScript, and the string is written as
    a JSON literal besides.
    """
    host = pac_host(host_header) or fallback
    host = f"[{host}]" if ":" in host and not host.startswith("[") else host
    proxy = json.dumps(f"PROXY {host}:{port}").replace("<", "\\u003c")
    return f"function FindProxyForURL(url, host) {{\n  return {proxy};\n}}\n"


def pac_host(host_header: str | None) -> str | None:
    """The host of a `Host` header value (`host[:port]`, IPv6 in brackets) when it is a valid host
    name or IP literal, else None."""
    if not host_header:
        return None
    value = host_header.strip()
    if value.startswith("["):
        literal, sep, rest = value[1:].partition("]")
        if not sep or (rest and not (rest.startswith(":") and rest[1:].isdigit())):
            return None
        return literal if ":" in literal and valid_host(literal) else None
    name, sep, port = value.partition(":")
    if sep and not (port.isascii() and port.isdigit()):
        return None
    return name if valid_host(name) else None
