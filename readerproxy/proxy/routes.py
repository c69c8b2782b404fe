"""Proxy mode on the reader server: what `--proxy-port` adds to the reader server's application.

`install_proxy_mode(app, settings)` (called by `readerproxy/app.py`, which composes the two):

- the proxy's listener (`server.proxy_listener`) runs in the application's cleanup context, for
  as long as the reader server runs, sharing its `Reader`, `Renderer` and metrics;
- `/proxy.pac` (`pac.py`; 404 while proxy mode is off), and with proxy mode `/setup` and the CA
  certificate's downloads, the setup page of a device not yet on the proxy (`setup.SetupAddon`
  answers them), all open without the login (`auth.leave_open`);
- the landing page's pointer to http://readerproxy/ and its QR code of the setup page (`share_setup`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from aiohttp import web
from markupsafe import Markup

from ..web.appkeys import METRICS, READER, RENDERER
from ..web.auth import leave_open
from ..web.download import attachment
from ..web.public import public_of, rooted
from .lan import qr_svg, share_url
from .pac import PAC_TYPE, pac_file
from .server import ProxyServer, proxy_listener
from .settings import Settings
from .setup import SetupAddon

#: Proxy mode's settings (the reader server's `appkeys.SETTINGS`, with proxy mode's fields).
PROXY_SETTINGS = web.AppKey("proxy_settings", Settings)
#: The proxy listener of proxy mode, once running (its setup addon answers /setup here too): a list,
#: filled in by the cleanup context, as an application's state is set before it starts.
PROXY = web.AppKey("proxy", list[ProxyServer])
#: The CA certificate's downloads, served on the reader server too for the setup page (`/setup`).
SETUP_DOWNLOADS = ("/ca.pem", "/ca.crt", "/ca.cer", "/readerproxy.mobileconfig")


def install_proxy_mode(app: web.Application, settings: Settings) -> None:
    """Proxy mode's listener and routes on the reader server's `app` (the module's docstring)."""
    app[PROXY_SETTINGS] = settings
    if settings.proxy_port is not None:  # proxy mode: its own listener (proxy/server.py says why)
        app[PROXY] = []
        app.cleanup_ctx.append(_proxy_resources)
        # the landing page points proxy clients at http://readerproxy/ (proxy/setup.py)
        app[RENDERER].env.globals["proxy_mode"] = {
            "port": settings.proxy_port,
            "intercepting": settings.intercept_https,
        }
        share_setup(app, settings.port)
    # browsers fetch the PAC file without a login, and a device being set up has none yet
    leave_open(app, "/proxy.pac", "/setup", *SETUP_DOWNLOADS)
    app.router.add_get("/proxy.pac", proxy_pac, name="proxy_pac")
    if settings.proxy_port is not None:  # a device not yet on the proxy is set up here (lan.py)
        app.router.add_get("/setup", setup_page, name="setup")
        for path in SETUP_DOWNLOADS:
            app.router.add_get(path, setup_download)


async def _proxy_resources(app: web.Application) -> AsyncIterator[None]:
    renderer = app[RENDERER].unrooted()  # the proxy's pages are never under --public-url's prefix
    async with proxy_listener(app[PROXY_SETTINGS], app[READER], renderer, app[METRICS]) as proxy:
        app[PROXY].append(proxy)
        try:
            yield
        finally:
            app[PROXY].remove(proxy)


def share_setup(app: web.Application, reader_port: int) -> None:
    """The landing page's QR code of the setup page (`lan.py`), for the reader server on
    `reader_port`: none when the port is not known yet (0) or no other device reaches this server.
    The proxy's own setup page makes the same code from the same settings."""
    mode = app[RENDERER].env.globals.get("proxy_mode")
    if not isinstance(mode, dict):
        return
    url = share_url(app[PROXY_SETTINGS], reader_port) if reader_port else None
    mode["setup_url"] = url
    mode["setup_qr"] = Markup(qr_svg(url)) if url else None


def _setup_addon(request: web.Request) -> SetupAddon:
    for proxy in request.app.get(PROXY, [])[:1]:
        for addon in proxy.addons:
            if isinstance(addon, SetupAddon):
                return addon
    raise web.HTTPNotFound(reason="the proxy is not running")


async def setup_page(request: web.Request) -> web.Response:
    """GET /setup: the proxy's setup page for a device that does not use the proxy yet (the QR
    code of `--lan` opens it): how to set the proxy and the certificate. Open without the login,
    like the PAC file: it holds the proxy's address, which the device has, and the CA certificate,
    which is public; preferences and site rules wait for http://readerproxy/ through the proxy."""
    addon = _setup_addon(request)
    settings = request.app[PROXY_SETTINGS]
    local = request.transport.get_extra_info("sockname") if request.transport else None
    host = str(local[0]).removeprefix("::ffff:") if local else settings.host
    if (public := public_of(settings)) is not None:
        host = public.host
    response = addon.direct_page(host, request.headers.get("User-Agent"))
    body = response.body
    if public is not None and body is not None:
        body = rooted(body.decode("utf-8"), public.prefix).encode()
    return web.Response(status=response.status, body=body, headers=dict(response.headers))


async def setup_download(request: web.Request) -> web.Response:
    """The CA certificate in a device's format, for the setup page on the reader server."""
    addon = _setup_addon(request)
    if request.path not in addon.downloads:
        raise web.HTTPNotFound(reason="HTTPS interception is off (--intercept-https): no CA")
    body, content_type, name = addon.downloads[request.path]
    return attachment(body, content_type, name)


async def proxy_pac(request: web.Request) -> web.Response:
    """GET /proxy.pac: a PAC file pointing at this server's proxy listener (404 without --proxy-port)."""
    settings = request.app[PROXY_SETTINGS]
    if settings.proxy_port is None:
        raise web.HTTPNotFound(reason="proxy mode is off (--proxy-port)")
    return web.Response(
        text=pac_file(
            public.host if (public := public_of(settings)) else request.headers.get("Host"),
            settings.proxy_port,
            settings.host,
        ),
        content_type=PAC_TYPE,
    )
