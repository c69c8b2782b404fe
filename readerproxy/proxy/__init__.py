"""Proxy mode: set readerproxy as a browser's or phone's HTTP proxy and just browse.

- `flow.py`: the HTTP flow as data (request, response, outcome) and the HTTP/1.1 syntax the core needs.
- `server.py`: the proxy core on its own listener (`--proxy-port`; why a separate listener is said
  there): absolute-form requests, CONNECT tunnels, the SSRF-guarded upstream client.
- `addons.py`: access control, per-host rules and the way back, the reader view, metrics.
- `tls.py`: the local CA of `--intercept-https`.

`proxy_listener(settings, reader, renderer, metrics)` runs the proxy for as long as the reader
server runs (the server enters it from its cleanup context).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

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


def pac_file(host: str, port: int) -> str:
    """A proxy auto-config file sending every http and https request through this proxy."""
    host = f"[{host}]" if ":" in host and not host.startswith("[") else host
    return f'function FindProxyForURL(url, host) {{\n  return "PROXY {host}:{port}";\n}}\n'
