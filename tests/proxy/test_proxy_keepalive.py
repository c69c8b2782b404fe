"""Upstream connections are kept alive and reused per host, as browsers do:
requests one after another through the proxy, streamed or buffered for the reader addon, reach
the site over one connection per host name, not one each. Counted on the site by the client
port of each request (no timing)."""

from __future__ import annotations

import aiohttp
from aiohttp import web
from support.reader_server import serve_app
from support.upstream import PLAIN_HTML
from test_proxy import HTML_ACCEPT, running_proxy


async def test_upstream_connections_are_reused_per_host() -> None:
    peers: dict[str, set[int]] = {}

    async def page(request: web.Request) -> web.Response:
        peer = request.transport.get_extra_info("peername") if request.transport else None
        peers.setdefault(request.host.partition(":")[0], set()).add(peer[1] if peer else -1)
        return web.Response(text=PLAIN_HTML * 300, content_type="text/html")  # about 100 KB

    app = web.Application()
    app.router.add_get("/page", page)
    async with serve_app(app) as base, running_proxy() as proxy, aiohttp.ClientSession() as http:
        port = base.rsplit(":", 1)[1]
        for host in ("news.test", "secure.test"):
            for accept in ("*/*", HTML_ACCEPT):  # streamed as it comes; buffered, judged, passed
                for _ in range(10):
                    async with http.get(
                        f"http://{host}:{port}/page", proxy=proxy.url, headers={"Accept": accept}
                    ) as answer:
                        assert answer.status == 200 and len(await answer.read()) > 90_000
    assert {host: len(ports) for host, ports in peers.items()} == {"news.test": 1, "secure.test": 1}
    assert peers["news.test"] != peers["secure.test"]  # per host, as a browser keeps them
