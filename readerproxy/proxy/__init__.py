"""Proxy mode: set readerproxy as a browser's or phone's HTTP proxy and just browse.

- `flow.py`: the HTTP flow as data (request, response, outcome), host-name rules, hop-by-hop headers.
- `http1.py`: HTTP/1.1 on a browser connection, parsed and framed by h11, with limits on heads
  and request bodies.
- `server.py`: the proxy core on its own listener (`--proxy-port`; why a separate listener is said
  there): absolute-form requests, CONNECT tunnels, the SSRF-guarded upstream client.
- `addons.py`: access control, per-host rules and the way back, the reader view, metrics.
- `tls.py`: the local CA of `--intercept-https`.
- `pac.py`: the PAC file of `/proxy.pac`.

`proxy_listener(settings, reader, renderer, metrics)` runs the proxy for as long as the reader
server runs (the server enters it from its cleanup context).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from .lan import listen_hosts
from .server import ProxyServer, load_ca

if TYPE_CHECKING:
    from ..web.metrics import Metrics
    from ..web.reader import Reader
    from ..web.settings import Settings
    from ..web.templating import Renderer

__all__ = ["ProxyServer", "proxy_listener"]

log = logging.getLogger("readerproxy.proxy")


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
