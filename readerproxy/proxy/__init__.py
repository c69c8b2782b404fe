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
    from ..web.metrics import Metrics
    from ..web.reader import Reader
    from ..web.settings import Settings
    from ..web.templating import Renderer

__all__ = ["ProxyServer", "pac_file", "pac_text", "proxy_listener"]

log = logging.getLogger("readerproxy.proxy")


@contextlib.asynccontextmanager
async def proxy_listener(
    settings: Settings, reader: Reader, renderer: Renderer, metrics: Metrics
) -> AsyncIterator[ProxyServer]:
    """The proxy listening on settings.host:settings.proxy_port until the block ends."""
    assert settings.proxy_port is not None
    from .lan import listen_hosts

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


def pac_file(host_header: str | None, port: int, fallback: str) -> str:
    """The PAC file of the reader server's `/proxy.pac` (see `pac_text`).

    The proxy's host is the one the browser used to fetch the PAC file (its `Host` header, without
    the port) when that is a valid host name or IP literal, else `fallback` (the configured
    `--host`): nothing else from the request reaches the JavaScript.
    """
    return pac_text(pac_host(host_header) or fallback, port)


def pac_text(host: str, port: int) -> str:
    """A proxy auto-config file: `DIRECT` for loopback, private and link-local addresses and plain
    host names (but never for readerproxy's own setup names, which only the proxy answers), else
    `PROXY host:port; DIRECT` (straight to the site when the proxy is down).

    Only IP literals are tested against networks (`isInNet` on a name would resolve it, slowly);
    `host` is written as a JSON literal, `<` escaped.
    """
    from .setup import SETUP_HOSTS

    shown = f"[{host}]" if ":" in host and not host.startswith("[") else host
    proxy = json.dumps(f"PROXY {shown}:{port}; DIRECT").replace("<", "\\u003c")
    setup = " || ".join(f"host == {json.dumps(name)}" for name in SETUP_HOSTS)
    return f"""function FindProxyForURL(url, host) {{
  host = host.toLowerCase();
  if ({setup}) return {proxy};
  if ((isPlainHostName(host) && host.indexOf(":") == -1) || host == "localhost" || dnsDomainIs(host, ".localhost"))
    return "DIRECT";
  if (/^\\d+\\.\\d+\\.\\d+\\.\\d+$/.test(host)) {{
    if (isInNet(host, "127.0.0.0", "255.0.0.0") || isInNet(host, "10.0.0.0", "255.0.0.0") ||
        isInNet(host, "172.16.0.0", "255.240.0.0") || isInNet(host, "192.168.0.0", "255.255.0.0") ||
        isInNet(host, "169.254.0.0", "255.255.0.0") || isInNet(host, "0.0.0.0", "255.0.0.0"))
      return "DIRECT";
  }}
  var v6 = host.replace(/^\\[|\\]$/g, "");
  if (v6.indexOf(":") >= 0 && (v6 == "::1" || /^f[cd][0-9a-f]{{2}}:/.test(v6) || /^fe[89ab][0-9a-f]:/.test(v6)))
    return "DIRECT";
  return {proxy};
}}
"""


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
