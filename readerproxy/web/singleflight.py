"""Single flight: concurrent calls for one key share one in-flight call."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

T = TypeVar("T")


class SingleFlight:
    """At most one in-flight call per key; concurrent callers await the same result (or exception)."""

    def __init__(self) -> None:
        self._flights: dict[str, asyncio.Future[Any]] = {}

    def __len__(self) -> int:
        return len(self._flights)

    async def run(self, key: str, factory: Callable[[], Awaitable[T]]) -> T:
        flight = self._flights.get(key)
        if flight is None:
            flight = asyncio.ensure_future(factory())
            self._flights[key] = flight
            flight.add_done_callback(lambda done: self._landed(key, done))
        # shield: one caller giving up (cancelled) must not cancel the call the others wait for
        result: T = await asyncio.shield(flight)
        return result

    def _landed(self, key: str, flight: asyncio.Future[Any]) -> None:
        if self._flights.get(key) is flight:
            del self._flights[key]
        if not flight.cancelled():
            flight.exception()  # mark retrieved: callers that gave up must not cause "never retrieved"
