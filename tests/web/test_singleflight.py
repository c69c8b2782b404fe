"""Single flight: concurrent callers of one key share one call, its result or its exception."""

from __future__ import annotations

import asyncio

from readerproxy.web.singleflight import SingleFlight

# ---- SingleFlight ------------------------------------------------------------------------------------


async def test_single_flight_shares_one_call() -> None:
    flights = SingleFlight()
    calls = 0
    release = asyncio.Event()

    async def work() -> str:
        nonlocal calls
        calls += 1
        await release.wait()
        return "done"

    waiters = [asyncio.create_task(flights.run("k", work)) for _ in range(20)]
    await asyncio.sleep(0)
    assert len(flights) == 1
    waiters[0].cancel()  # one caller giving up does not cancel the shared call
    release.set()
    results = await asyncio.gather(*waiters[1:])
    assert results == ["done"] * 19 and calls == 1 and len(flights) == 0
    assert await flights.run("k", work) == "done" and calls == 2  # a later call runs again


async def test_single_flight_shares_the_exception() -> None:
    flights = SingleFlight()

    async def fail() -> None:
        await asyncio.sleep(0)
        raise ValueError("boom")

    results = await asyncio.gather(*(flights.run("k", fail) for _ in range(5)), return_exceptions=True)
    assert all(isinstance(r, ValueError) for r in results) and len(flights) == 0


# ---- SQLite ------------------------------------------------------------------------------------------
