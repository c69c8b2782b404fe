"""Free TCP ports on 127.0.0.1 for the servers the tests start, safe across pytest-xdist workers."""

from __future__ import annotations

import itertools
import os
import socket

__all__ = ["free_port"]

#: Ports handed out by `free_port`: a block per pytest-xdist worker (gw0, gw1, ...), below the
#: kernel's ephemeral range (/proc/sys/net/ipv4/ip_local_port_range, 32768-60999 by default).
PORT_BLOCK = 1500
PORT_BASE = 10000
_WORKER = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0)
_NEXT_PORT = itertools.count()


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago and stays free until its user binds it.

    A port the kernel gives for port 0 can be given again, to another process's bind(0), in the
    moment before the test's server binds it, and servers that bind with SO_REUSEPORT (HAProxy,
    `readerproxy serve --workers`) then share it without an error: in two xdist workers a HAProxy
    front once closed a request without an answer, as a port shared that way does. So the port comes from this
    worker's own block outside the ephemeral range, which no bind(0) and no other worker's
    `free_port` hands out, in turn (a port is not handed out again before the block has gone
    round), and is checked to be free."""
    block = PORT_BASE + (_WORKER % 15) * PORT_BLOCK  # 15 blocks fit below 32768
    for _ in range(PORT_BLOCK):
        port = block + next(_NEXT_PORT) % PORT_BLOCK
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    with socket.socket() as sock:  # the whole block is taken: the kernel's choice
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
