"""`readerproxy serve`: the reader server and proxy mode assembled in one place, from one `Settings`.

The reader server (`web/`) knows nothing of proxy mode, and proxy mode (`proxy/`) runs around the
reader server's `Reader`; this module, above both, puts them together:

- `Settings`, `SERVE_OPTIONS` and `load_settings`: the one settings object of `readerproxy serve`,
  the reader server's options (`web/settings.py`) and proxy mode's (`proxy/settings.py`) together,
  with its command line, environment variables and TOML config file.
- `create_app(settings)`: the reader server's application (`web/server.create_app`) with proxy
  mode's listener and routes when `--proxy-port` (or `--lan`) asks for them
  (`proxy/routes.install_proxy_mode`).
- `run(settings)`: serve until SIGINT or SIGTERM, in one process or in `--workers N` processes on
  one port, printing the addresses to open (and with `--lan`, the login and the setup page's QR
  code); `readerproxy serve` (cli.py) calls it.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import multiprocessing
import os
import signal
import time
from pathlib import Path
from typing import Any

from aiohttp import web

from . import __version__
from .proxy import lan
from .proxy.addresses import proxy_lines
from .proxy.lan import listen_hosts, startup_lines
from .proxy.routes import install_proxy_mode, share_setup
from .proxy.settings import SERVE_OPTIONS, Settings, lan_settings, load_settings
from .web import server
from .web.requestlog import configure_logging
from .web.server import harden_protocol, return_freed_memory, shut_down
from .web.settings import SettingsError

__all__ = ["SERVE_OPTIONS", "Settings", "SettingsError", "create_app", "load_settings", "run"]

log = logging.getLogger("readerproxy.app")


def create_app(settings: Settings) -> web.Application:
    """The reader server's application, with proxy mode's listener and routes; resources open on
    startup and close on cleanup."""
    app = server.create_app(settings)
    install_proxy_mode(app, settings)
    return app


def run(settings: Settings) -> None:
    """Serve until SIGINT or SIGTERM; print the address to open once listening."""
    configure_logging(settings)
    settings, login = _lan_login(settings)
    if settings.workers > 1:
        _run_workers(settings, login)
        return
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve_until_stopped(settings, login=login))


def _lan_login(settings: Settings) -> tuple[Settings, lan.Login | None]:
    """`--lan`: its login file created when missing (`proxy/lan.py`), and how the start-up lines
    speak of the login (`lan.Login`); None without `--lan`. A `--lan` server never starts without
    a login, however its settings were made (`lan_settings` is applied again: it is idempotent)."""
    if not settings.lan:
        return settings, None
    settings = lan_settings(settings)
    created = None
    if not settings.auth and settings.auth_file is not None:
        credentials, new = lan.ensure_login(Path(settings.auth_file).expanduser())
        created = credentials if new else None
    if not (settings.auth or settings.auth_file):  # cannot happen after lan_settings: never open
        raise SystemExit("readerproxy serve --lan: no login")
    return settings, lan.login_note(settings, created)


def _run_workers(settings: Settings, login: lan.Login | None = None) -> None:
    """`--workers N`: N server processes on one port (SO_REUSEPORT: the kernel spreads connections),
    as aiohttp deployments do, sharing the persistent cache (and its cross-process single flight,
    see pages.PageStore). This process supervises them: SIGINT/SIGTERM stop them all."""
    if settings.port == 0:
        raise SystemExit("readerproxy serve: --workers needs a fixed --port")
    if settings.cache == "memory":
        log.warning("--workers with a memory cache: each worker keeps its own cache")
    context = multiprocessing.get_context("spawn")
    processes = [
        context.Process(target=_worker, args=(settings, index, login), name=f"readerproxy-worker-{index}")
        for index in range(settings.workers)
    ]
    stopping = False

    def stop(signum: int, frame: Any) -> None:
        nonlocal stopping
        stopping = True

    previous = {signum: signal.signal(signum, stop) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        for process in processes:
            process.start()
        while not stopping and all(process.is_alive() for process in processes):
            time.sleep(0.2)
    finally:
        for process in processes:
            if process.is_alive() and process.pid is not None:
                os.kill(process.pid, signal.SIGTERM)
        for process in processes:  # each lets its requests finish (`Drain`), then stops
            process.join(timeout=settings.shutdown_timeout + 5.0)
            if process.is_alive():
                process.kill()
                process.join()
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _worker(settings: Settings, index: int, login: lan.Login | None = None) -> None:
    """One of `--workers` server processes (started by spawn: a fresh interpreter)."""
    configure_logging(settings, prefix=f"worker-{index} ")
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the supervisor stops us with SIGTERM
    asyncio.run(_serve_until_stopped(settings, reuse_port=True, announce=index == 0, login=login))


async def _serve_until_stopped(
    settings: Settings, *, reuse_port: bool = False, announce: bool = True, login: lan.Login | None = None
) -> None:
    """Serve `create_app(settings)` on every address of `listen_hosts` until SIGINT or SIGTERM, then
    stop gracefully (`web/server.shut_down`); `announce`: print the addresses to open."""
    app = create_app(settings)
    # keepalive_timeout also bounds the wait for a new connection's first request line and headers;
    # the runner's own shutdown wait is short: `Drain` has let the requests in flight finish by then
    runner = web.AppRunner(
        app,
        access_log=None,
        handle_signals=False,
        keepalive_timeout=settings.header_timeout,
        shutdown_timeout=1.0,
    )
    await runner.setup()
    harden_protocol(runner)
    hosts = listen_hosts(settings)  # --lan: loopback and the LAN addresses
    for each in hosts:
        site = web.TCPSite(runner, each, settings.port, reuse_port=reuse_port or None)
        await site.start()
    if runner.addresses:  # the landing page's QR code, now that the port is known
        share_setup(app, runner.addresses[0][1])
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    for address in runner.addresses if announce else ():
        host, port = address[0], address[1]
        shown = f"[{host}]" if ":" in host else host
        print(
            f"readerproxy {__version__}: open http://{shown}:{port}/ in a browser "
            f"(cache {settings.cache}{', private addresses allowed' if settings.allow_private else ''}; "
            f"{f'{settings.workers} workers; ' if settings.workers > 1 else ''}Ctrl+C stops)",
            flush=True,
        )
        if settings.proxy_port is not None and not settings.lan:  # real addresses, never a placeholder
            print("\n".join(proxy_lines(host, settings.proxy_port, port)), flush=True)
    if announce and settings.lan and runner.addresses:  # once, after the lines of every address
        lan_login = login or _lan_login(settings)[1]
        assert lan_login is not None  # --lan always has a login
        found = None if settings.host in ("0.0.0.0", "::", "") else hosts[1:]  # None: look them up
        lines = startup_lines(settings, runner.addresses[0][1], lan_login, found)
        print("\n".join(lines), flush=True)
    # Everything imported and built so far lives for the whole process: keep it out of the garbage
    # collector's scans (shorter pauses, a steadier p99 under load).
    gc.collect()
    gc.freeze()
    return_freed_memory()
    try:
        await stop.wait()
    finally:
        await shut_down(runner, app, settings.shutdown_timeout)
