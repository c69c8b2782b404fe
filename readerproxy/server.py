"""The reader server (aiohttp): /read, /api/extract, /healthz, /metrics. Work in progress."""

from __future__ import annotations

import argparse


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `readerproxy serve` (each also settable by environment variable or config file)."""
    parser.add_argument("--host", default=None, help="bind address (default 127.0.0.1; READERPROXY_HOST)")
    parser.add_argument("--port", type=int, default=None, help="port (default 8080; READERPROXY_PORT)")
    parser.add_argument("--cache", default=None,
                        help="memory | sqlite:PATH | redis://HOST:PORT/DB (READERPROXY_CACHE)")
    parser.add_argument("--allow-private", action="store_true", default=None,
                        help="allow fetching loopback/private addresses (READERPROXY_ALLOW_PRIVATE)")
    parser.add_argument("--config", default=None, help="TOML config file (READERPROXY_CONFIG)")


def run_from_args(args: argparse.Namespace) -> int:
    """Entry point of `readerproxy serve`."""
    raise SystemExit("readerproxy serve: not implemented yet")
