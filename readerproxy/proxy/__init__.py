"""Proxy mode: set readerproxy as a browser's or phone's HTTP proxy and just browse.

- `flow.py`: the HTTP flow as data (request, response, outcome), host-name rules, hop-by-hop headers.
- `http1.py`: HTTP/1.1 on a browser connection, parsed and framed by h11, with limits on heads
  and request bodies.
- `sites.py`: the proxy's own keep-alive connections to sites for a plain GET or HEAD passed
  through (aiohttp's client for everything else).
- `server.py`: the proxy core on its own listener (`--proxy-port`; why a separate listener is said
  there): absolute-form requests, CONNECT tunnels, the SSRF-guarded upstream client.
- `addons.py`: access control, per-host rules and the way back, the reader view, metrics.
- `tls.py`: the local CA of `--intercept-https`.
- `pac.py`: the PAC file of `/proxy.pac`.
- `settings.py`: proxy mode's options, composed with the reader server's into the one `Settings`.
- `routes.py`: what proxy mode adds to the reader server's application: the listener
  (`server.proxy_listener`, for as long as the reader server runs), `/proxy.pac` and `/setup`.

`readerproxy/app.py` composes the reader server and proxy mode; nothing is imported here, so
importing one module of proxy mode (its settings, for `readerproxy serve --help`) imports no other.
"""
