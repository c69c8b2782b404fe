"""Limits on what one client or one burst can make the server do.

- `RateLimiter`: a token bucket per client address (`rate` tokens a second, `burst` at most); a
  request finding its bucket empty is refused with 429 and a `Retry-After` saying when the next
  token comes. The table of buckets is bounded (`max_clients`, least recently seen dropped first),
  so a flood of addresses cannot grow it without end.
- `FetchSlots`: a global cap on concurrent upstream fetches and a per-host cap (politeness). The
  wait for a slot is timed apart from the site's own timeouts: a queue that does not move in
  `queue_timeout` seconds is a 503 "busy" saying so, never a 504 "the site took too long".

- `client_key`: who a request counts against: the address the server saw, or, for a request of
  proxy mode's gateway (`http://readerproxy/read…`, which the proxy fetches from this server over
  loopback), the proxy client it is for, named in `CLIENT_HEADER` and signed with the secret of
  the data directory (`gateway_secret`). Without it every proxy client was 127.0.0.1 here: one
  client flooding the gateway got the others 429. An unsigned or badly signed header,
  as any client could send one, is ignored.

(The cap on concurrent extractions and its bounded queue are the worker pool's: `workers.py`.)
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import hmac
import logging
import math
import os
import secrets
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, Protocol

from ..errors import ReaderproxyError
from .datadir import data_dir

log = logging.getLogger("readerproxy.web.limits")

#: The request header in which proxy mode's gateway names the proxy client a request is for:
#: "ADDRESS SIGNATURE" (`signed_client`). The proxy never forwards a client's own copy.
CLIENT_HEADER = "X-Readerproxy-Client"
#: The file in the data directory holding the secret of `CLIENT_HEADER`'s signatures and of the
#: proxy's form tokens (`proxy/setup.py`): shared by every server process of the machine.
SECRET_FILE = "proxy-secret"


def load_secret(directory: Path) -> bytes:
    """The secret kept in `directory` (32 random bytes, hex), made on first use.

    Made as a temporary file linked into place, so that server processes starting together all
    end up with the one that won; readable by its owner only. When the directory cannot be
    written, a secret for this process alone (logged): signatures then hold within it only.
    """
    path = directory / SECRET_FILE
    try:
        return bytes.fromhex(path.read_text(encoding="ascii").strip())
    except (OSError, ValueError):
        pass
    try:
        directory.mkdir(parents=True, exist_ok=True)
        temporary = directory / f".{SECRET_FILE}.{os.getpid()}.{secrets.token_hex(4)}"
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w", encoding="ascii") as file:
            file.write(secrets.token_hex(32) + "\n")
        try:
            os.link(temporary, path)  # fails if another process made it first: theirs is used
        except FileExistsError:
            pass
        finally:
            temporary.unlink(missing_ok=True)
        return bytes.fromhex(path.read_text(encoding="ascii").strip())
    except (OSError, ValueError) as exc:
        log.warning("cannot keep a secret in %s (%s): one for this process only", directory, exc)
        return secrets.token_bytes(32)


@functools.cache
def _secret_in(directory: str) -> bytes:
    return load_secret(Path(directory))


def gateway_secret() -> bytes:
    """The secret of the data directory (`load_secret`), read once per process."""
    return _secret_in(str(data_dir()))


def client_signature(secret: bytes, address: str) -> str:
    return hmac.new(secret, b"client|" + address.encode("utf-8"), hashlib.sha256).hexdigest()


def signed_client(address: str, secret: bytes | None = None) -> str:
    """`CLIENT_HEADER`'s value naming the proxy client at `address`."""
    return f"{address} {client_signature(secret or gateway_secret(), address)}"


def client_key(remote: str, named: str | None) -> str:
    """Who a request counts against (rate limit, worker, image and render shares): the proxy
    client `named` in `CLIENT_HEADER` when its signature holds, else the address seen (`remote`)."""
    if not named:
        return remote
    address, _, signature = named.strip().partition(" ")
    if address and hmac.compare_digest(
        signature.encode(), client_signature(gateway_secret(), address).encode()
    ):
        return address
    return remote


class RateLimited(ReaderproxyError):
    """A client over its rate: 429 with Retry-After."""

    kind = "rate_limited"
    status = 429

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class Busy(ReaderproxyError):
    """No fetch slot came free in time (our queue, not the site): 503 with Retry-After."""

    kind = "busy"
    status = 503

    def __init__(self, message: str, retry_after: int = 1, url: str | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.url = url


class SharedBuckets(Protocol):
    """Token buckets kept where every instance sees them (`cache.RedisBackend.take_token`)."""

    async def take_token(self, key: str, rate: float, burst: int) -> float: ...


class RateLimiter:
    """Token buckets by client key; `take(key)` spends one token or raises RateLimited.

    `acquire(key, shared)` does the same in buckets every instance shares (Redis, when it is the
    cache): a client that the load balancer spreads over instances is one client. When they cannot
    be reached it falls back to this process's buckets (logged at most once a minute): limits kept
    per instance rather than none."""

    def __init__(
        self,
        rate: float,
        burst: int,
        *,
        max_clients: int = 65536,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.rate = rate
        self.burst = max(1, burst)
        self.max_clients = max_clients
        self.clock = clock
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()  # key -> (tokens, at)
        self._shared_failed_at = -math.inf

    @property
    def enabled(self) -> bool:
        return self.rate > 0

    def __len__(self) -> int:
        return len(self._buckets)

    async def acquire(self, key: str, shared: SharedBuckets | None = None) -> None:
        """`take`, in `shared` buckets when given (see the class)."""
        if not self.enabled:
            return
        if shared is not None:
            try:
                wait = await shared.take_token(key, self.rate, self.burst)
            except Exception as exc:  # Redis down or slow: this process's buckets meanwhile
                now = self.clock()
                if now - self._shared_failed_at > 60.0:
                    self._shared_failed_at = now
                    log.warning("shared rate limits unavailable (%s): this instance's own", exc)
            else:
                if wait > 0:
                    seconds = max(1, math.ceil(wait))
                    raise RateLimited(
                        f"too many requests from this address; try again in {seconds} s", retry_after=seconds
                    )
                return
        self.take(key)

    def take(self, key: str) -> None:
        if not self.enabled:
            return
        now = self.clock()
        tokens, at = self._buckets.pop(key, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - at) * self.rate)
        if tokens < 1.0:
            self._buckets[key] = (tokens, now)
            wait = math.ceil((1.0 - tokens) / self.rate)
            raise RateLimited(f"too many requests from this address; try again in {wait} s", retry_after=wait)
        self._buckets[key] = (tokens - 1.0, now)
        while len(self._buckets) > self.max_clients:
            self._buckets.popitem(last=False)


class KeyedSemaphores:
    """A semaphore of `size` per key (a host, a client), kept while it has users: `join` before
    waiting on it, `leave` when done, and the table holds only the keys in use."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._entries: dict[str, tuple[asyncio.Semaphore, int]] = {}  # key -> (semaphore, users)

    def __len__(self) -> int:
        return len(self._entries)

    def users(self, key: str) -> int:
        entry = self._entries.get(key)
        return entry[1] if entry is not None else 0

    def join(self, key: str) -> asyncio.Semaphore:
        semaphore, users = self._entries.get(key) or (asyncio.Semaphore(self.size), 0)
        self._entries[key] = (semaphore, users + 1)
        return semaphore

    def leave(self, key: str) -> None:
        semaphore, users = self._entries[key]
        if users <= 1:
            del self._entries[key]
        else:
            self._entries[key] = (semaphore, users - 1)


class FetchSlots:
    """At most `max_total` fetches at once, at most `max_per_host` to one host; waits bounded in time."""

    def __init__(self, max_total: int = 64, max_per_host: int = 8, queue_timeout: float = 10.0) -> None:
        self.max_total = max(1, max_total)
        self.max_per_host = max(1, max_per_host)
        self.queue_timeout = queue_timeout
        self._total = asyncio.Semaphore(self.max_total)
        self._hosts = KeyedSemaphores(self.max_per_host)
        self.active = 0
        self.waiting = 0

    @contextlib.asynccontextmanager
    async def slot(self, host: str, url: str | None = None) -> AsyncIterator[None]:
        """Hold a per-host and a global slot for the body of the `async with`."""
        semaphore = self._hosts.join(host)
        acquired_host = acquired_total = False
        self.waiting += 1
        try:
            try:
                async with asyncio.timeout(self.queue_timeout):
                    await semaphore.acquire()
                    acquired_host = True
                    await self._total.acquire()
                    acquired_total = True
            except TimeoutError:
                which = "this site" if not acquired_host else "all sites"
                raise Busy(
                    f"too many reads of {which} are in progress (waited {self.queue_timeout:g} s for a "
                    "free connection; the site itself was not contacted); try again shortly",
                    retry_after=max(1, round(self.queue_timeout / 2)),
                    url=url,
                ) from None
            finally:
                self.waiting -= 1
            self.active += 1
            try:
                yield
            finally:
                self.active -= 1
        finally:
            if acquired_total:
                self._total.release()
            if acquired_host:
                semaphore.release()
            self._hosts.leave(host)


def shared_buckets(cache: Any) -> SharedBuckets | None:
    """The rate limits' shared buckets: the cache's backend when it keeps them (Redis), else None
    (memory and SQLite: each instance's own, SQLite being one machine's anyway)."""
    backend = getattr(cache, "backend", None)
    return backend if hasattr(backend, "take_token") else None
