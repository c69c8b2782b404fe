"""Single flight: concurrent calls for one key share one in-flight call.

With `presence` (a context variable holding "is my client still there?", as `browser.CONNECTED`),
the shared call runs with that variable set to "is any of its callers still there?": work inside it
that stops when its client leaves (an extraction, `reader.py`) stops only when every caller has left,
and another client waiting on the same page still gets its answer. A caller without a presence check
(None: the library, a test) counts as always there. A flight found with nobody left is taken out of
the table at once, so a caller arriving then starts a new call rather than sharing one being stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

T = TypeVar("T")

#: A caller's presence check: whether its client is still there (None: unknown, taken as there).
Presence = Callable[[], bool] | None


class _Flight:
    """One shared call and the presence checks of the callers awaiting it."""

    __slots__ = ("callers", "future")

    def __init__(self) -> None:
        self.future: asyncio.Future[Any] | None = None
        self.callers: list[Presence] = []


class SingleFlight:
    """At most one in-flight call per key; concurrent callers await the same result (or exception)."""

    def __init__(self, presence: contextvars.ContextVar[Presence] | None = None) -> None:
        self._presence = presence
        self._flights: dict[str, _Flight] = {}

    def __len__(self) -> int:
        return len(self._flights)

    def callers(self) -> int:
        """Callers awaiting a flight and not yet found gone (by a flight's presence check)."""
        return sum(len(flight.callers) for flight in self._flights.values())

    async def run(self, key: str, factory: Callable[[], Awaitable[T]]) -> T:
        flight = self._flights.get(key)
        if flight is None:
            flight = self._flights[key] = _Flight()
            context = contextvars.copy_context()
            if self._presence is not None:
                context.run(self._presence.set, lambda: self._present(key, flight))
            future = flight.future = context.run(lambda: asyncio.ensure_future(factory()))
            future.add_done_callback(lambda done: self._landed(key, flight, done))
        assert flight.future is not None
        caller = self._presence.get() if self._presence is not None else None
        flight.callers.append(caller)
        try:
            # shield: one caller giving up (cancelled) must not cancel the call the others wait for
            result: T = await asyncio.shield(flight.future)
            return result
        finally:
            with contextlib.suppress(ValueError):  # found gone already (`_present`)
                flight.callers.remove(caller)

    def _present(self, key: str, flight: _Flight) -> bool:
        """The flight's presence check: whether any caller is still there (those gone are let go)."""
        flight.callers = [caller for caller in flight.callers if caller is None or caller()]
        if flight.callers:
            return True
        if self._flights.get(key) is flight:  # being stopped: a caller arriving now starts afresh
            del self._flights[key]
        return False

    def _landed(self, key: str, flight: _Flight, done: asyncio.Future[Any]) -> None:
        if self._flights.get(key) is flight:
            del self._flights[key]
        if not done.cancelled():
            done.exception()  # mark retrieved: callers that gave up must not cause "never retrieved"
