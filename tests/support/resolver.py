"""A stand-in for DNS in tests: every name resolves to the given addresses, in order (no network)."""

from __future__ import annotations

import socket

from aiohttp.abc import ResolveResult


class StaticResolver:
    """Answers every name with `addresses` (say a public and a private one, DNS-rebinding style),
    each with its own address family."""

    def __init__(self, addresses: list[str]) -> None:
        self.addresses = addresses

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        return [
            ResolveResult(
                hostname=host,
                host=address,
                port=port,
                family=socket.AF_INET6 if ":" in address else socket.AF_INET,
                proto=0,
                flags=0,
            )
            for address in self.addresses
        ]

    async def close(self) -> None:
        pass
