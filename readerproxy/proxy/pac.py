"""The proxy auto-config (PAC) file: `/proxy.pac` on the reader server and on http://readerproxy/.

`pac_text(host, port)` is the JavaScript a browser runs for every URL: loopback, private and
link-local addresses and plain host names go `DIRECT`, everything else (and readerproxy's own setup
names always) to the proxy. `pac_file` makes it for a request to the reader server, taking the
proxy's host from the request's `Host` header only when that is a valid host (`pac_host`).
"""

from __future__ import annotations

import json

from .addons import SETUP_HOSTS
from .flow import valid_host

#: The media type of a PAC file.
PAC_TYPE = "application/x-ns-proxy-autoconfig"


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
