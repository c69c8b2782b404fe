"""Extraction in a small pool of worker processes that can be killed and replaced.

`WorkerPool.run(job)` sends one page (bytes or text, URL, content type, extractor name, parameters,
render options) to an idle worker process and returns the article's JSON-ready dict. Every job has
a deadline: a worker still busy when it passes is killed (SIGKILL) and a fresh one started, and the
caller gets `ExtractionTimeout` (503, kind "extraction_timeout"). A caller that gives up (cancelled)
also has its worker killed, so the work stops with the request, or its job leaves the queue if no
worker had taken it yet; both are counted as "cancelled" (the `Reader` cancels the job of a client
that has left: `reader.py`). At most `queue_limit` callers wait for a worker; one more gets
`Overloaded` (503 with Retry-After) at once.

Fairness: one client (the address the server saw, read from the `CLIENT` context variable that the
server sets per request) may hold at most `per_client` workers at once; its further jobs wait for
one of its own to finish without taking a worker, so a client sending hostile pages cannot occupy
the whole pool, and other clients' reads keep being served by the rest. A client may also hold at
most half the queue (`per_client_queue`); past that it gets `Overloaded` at once. The cap is not
work-conserving on purpose: a job cannot be preempted, so a worker lent to a hostile client while
the pool is idle would be gone for the full deadline when others arrive (fair queueing in the sense
of Demers, Keshav & Shenker 1989, with whole jobs as the unit).

Why processes and not threads or cooperative checks:

- a Python thread cannot be stopped from outside: a thread running a hostile page keeps its core
  until it finishes on its own (that was 31 s for 100,000 nested `<div>`s, minutes for more);
- cooperative deadline checks in the loops cannot interrupt C and Rust code, and that is where the
  time goes on hostile input (lxml's parser, nh3's sanitizer, which is quadratic in nesting depth,
  numpy), besides having to be threaded through every loop of every algorithm;
- a process can be killed at any instant, and the memory it grew to on a big page goes back to the
  system with it: a worker whose peak resident size passes `max_rss_bytes` is retired after its job.

Workers are started by a `forkserver` that has already imported the pipeline, so a replacement is
ready in milliseconds and no worker inherits the server's sockets, threads or event loop. On Linux a
worker also dies with its parent (PR_SET_PDEATHSIG), so no extraction outlives the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import gc
import logging
import multiprocessing
import os
import resource
import signal
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextvars import ContextVar
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any

from ..engine.parse.decoding import DecompressionError, DecompressionTooLarge
from ..engine.parse.layout import LayoutSnapshot
from ..errors import ReaderproxyError
from .limits import KeyedSemaphores

if TYPE_CHECKING:
    from ..engine.pipeline import Processed

log = logging.getLogger(__name__)

#: Seconds a killed or retired worker is given to exit before it is left to the forkserver.
JOIN_SECONDS = 2.0

#: The client on whose behalf the current task extracts (the server sets it per request).
CLIENT: ContextVar[str] = ContextVar("readerproxy_client", default="")


class ExtractionTimeout(ReaderproxyError):
    """An extraction that passed its deadline; its worker was killed."""

    kind = "extraction_timeout"
    status = 503
    retry_after = 10  # seconds: the next try gets a fresh worker (another page meanwhile)


class Overloaded(ReaderproxyError):
    """Too many extractions waiting already; try again after `retry_after` seconds."""

    kind = "overloaded"
    status = 503

    def __init__(self, message: str, retry_after: int = 1) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class ExtractionFailed(ReaderproxyError):
    """The worker died without an answer (crashed, or killed by the system for its memory)."""

    kind = "extraction_failed"
    # 503 with Retry-After, not 500: the page (or the machine's memory) stopped a worker, the server
    # itself is fine and a fresh worker is ready.
    status = 503
    retry_after = 10


@dataclass(frozen=True, slots=True)
class Job:
    """One extraction: everything the worker needs, all of it picklable."""

    body: bytes | str
    url: str | None
    content_type: str | None
    extractor: str  # the extractor's registered name
    params: object  # the extractor's (frozen dataclass) parameters
    images: bool = True
    reader_links: bool = False
    layout: LayoutSnapshot | None = None  # the browser's snapshot of `body` (rendered pages only)
    blocks: bool = False  # add the blocks and signals of the same extraction (`blocks=1` of the API)


@dataclass(frozen=True, slots=True)
class Call:
    """Any other bounded work: `function(*args)` in a worker, under the same deadline and kill.

    The function is pickled by reference (a module-level function) and its arguments and result by
    value; the overlay and compare views use this to build their pages in the pool.
    """

    function: Callable[..., Any]
    args: tuple[Any, ...] = ()


def perform(job: Job | Call) -> tuple[Any, object]:
    """What a worker runs for one job: the result, and what it was made from (the Document and its
    tree, freed by the caller once the result is sent: `worker_main`)."""
    if isinstance(job, Call):
        return job.function(*job.args), None
    return _run_job(job)


def run_job(job: Job) -> dict[str, Any]:
    """The CPU part of a read: page to the article's JSON view (what a worker runs).

    With `job.blocks`, the blocks and signals of the very same extraction are added, so `blocks=1`
    costs one pipeline run, not a read and then an inspection.
    """
    return _run_job(job)[0]


def _run_job(job: Job) -> tuple[dict[str, Any], Processed]:
    """`run_job`'s result and the pipeline's `Processed` it was made from."""
    from ..engine.extraction import get_extractor
    from ..engine.pipeline import process_page
    from .templating import link_rewriter

    extractor = get_extractor(job.extractor)
    url = job.url
    rewrite = link_rewriter(url, extractor.name, lite=not job.images) if job.reader_links and url else None
    done = process_page(
        job.body,
        url=url,
        content_type=job.content_type,
        algorithm=extractor,
        params=job.params,
        rewrite_link=rewrite,
        images=job.images,
        layout=job.layout,
    )
    data = done.article.to_dict()
    data["final_url"] = url
    if job.blocks:
        from .overlay import blocks_json

        data.update(blocks_json(done.doc, done.extraction))
    return data, done


def _die_with_parent() -> None:
    """Ask Linux to SIGKILL this process when its parent dies (best effort elsewhere)."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _peak_rss() -> int:
    """This process's peak resident size in bytes."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def worker_main(conn: Connection) -> None:
    """A worker's loop: receive a Job, send back ("ok", data, peak_rss) or ("error", ...); None stops."""
    _die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl+C reaches the whole group: the server decides
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    frozen = False
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return
        if job is None:
            return
        reply, made_from = _answer(job)
        try:
            conn.send(reply)
        except (OSError, ValueError):
            return
        # For speed: the page's Document (its Lexbor tree, element nodes and arrays) and the reply
        # are freed once the reply is on its way, while the server renders it (0.2-0.3 ms on a
        # 197 KB page), not before it is sent.
        del job, reply, made_from
        if not frozen:
            _freeze_what_lasts()
            frozen = True


def _answer(job: Job | Call) -> tuple[tuple[Any, ...], object]:
    """The reply to send for a job: ("ok", result, peak_rss) or ("error", kind, status, message,
    peak_rss) or ("crash", description, peak_rss); and what the result was made from (`perform`)."""
    try:
        result, made_from = perform(job)
        return ("ok", result, _peak_rss()), made_from
    except ReaderproxyError as exc:
        return ("error", exc.kind, exc.status, exc.message, _peak_rss()), None
    except MemoryError:
        return ("error", "too_large", 413, "the page needs too much memory to extract", _peak_rss()), None
    except DecompressionTooLarge as exc:  # a gzip body past its cap: the page's fault, not ours
        return ("error", "too_large", 413, f"the page is too large: {exc}", _peak_rss()), None
    except DecompressionError as exc:  # a corrupt gzip body (posted: fetched pages are unwrapped)
        return ("error", "bad_request", 400, f"the page is not valid gzip: {exc}", _peak_rss()), None
    except Exception as exc:
        return ("crash", f"{type(exc).__name__}: {exc}", _peak_rss()), None


def _freeze_what_lasts() -> None:
    """After the first job (sent back first, so no caller waits for this): collect, then move
    everything left to the collector's permanent generation.

    For speed: what is left is what every job reuses (the modules, the block model, compiled
    patterns, memos), about 60,000 objects, and a full collection scanned them all, some 30 ms on
    every fiftieth job or so, most of it on whichever extraction met it. The server's own process
    does the same once it has started.
    """
    gc.collect()
    gc.freeze()


_context: Any = None


def _mp_context() -> Any:
    """The forkserver context, preloaded with the pipeline (spawn where fork is unavailable)."""
    global _context
    if _context is None:
        try:
            ctx: Any = multiprocessing.get_context("forkserver")
            ctx.set_forkserver_preload(
                ["readerproxy.web.workers", "readerproxy.engine.pipeline", "readerproxy.web.templating"]
            )
        except ValueError:  # pragma: no cover - no forkserver on this platform
            ctx = multiprocessing.get_context("spawn")
        _context = ctx
    return _context


class Worker:
    """One worker process and the parent's end of its pipe."""

    def __init__(self) -> None:
        ctx = _mp_context()
        self.conn, child = ctx.Pipe(duplex=True)
        self.process = ctx.Process(target=worker_main, args=(child,), daemon=True, name="readerproxy-extract")
        self.process.start()
        child.close()
        self.jobs = 0

    def call(self, job: Job | Call) -> tuple[Any, ...]:
        """Send a job and wait for the reply (in a helper thread); EOFError if the worker died."""
        self.conn.send(job)
        reply: tuple[Any, ...] = self.conn.recv()
        self.jobs += 1
        return reply

    def kill(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.process.kill()
        self._reap()

    def retire(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.conn.send(None)
        self._reap()

    def _reap(self) -> None:
        self.process.join(JOIN_SECONDS)
        if self.process.is_alive():  # pragma: no cover - SIGKILL does not fail
            with contextlib.suppress(OSError, ValueError):
                self.process.kill()
            self.process.join(JOIN_SECONDS)
        with contextlib.suppress(OSError):
            self.conn.close()
        with contextlib.suppress(ValueError):
            self.process.close()


@dataclass
class PoolStats:
    """Counters the metrics read: jobs by outcome, workers killed and retired."""

    completed: int = 0
    timed_out: int = 0
    cancelled: int = 0  # the caller gave up (its client left): out of the queue, or its worker killed
    crashed: int = 0
    rejected: int = 0
    retired: int = 0
    client_limited: int = 0  # refused because the client already had its share in progress


class WorkerPool:
    """`size` worker processes, a deadline per job and at most `queue_limit` callers waiting."""

    def __init__(
        self,
        size: int = 2,
        *,
        deadline: float = 10.0,
        queue_limit: int = 32,
        max_rss_bytes: int = 768 * 1024 * 1024,
        on_event: Callable[[str], None] | None = None,
        per_client: int = 0,
    ) -> None:
        self.size = max(1, size)
        self.deadline = deadline
        self.queue_limit = max(0, queue_limit)
        # workers one client may hold at once (0: half the pool, at least one)
        self.per_client = max(1, per_client if per_client > 0 else self.size // 2)
        self.per_client_queue = max(1, self.queue_limit // 2)
        self._clients = KeyedSemaphores(self.per_client)  # client -> its workers (users: its jobs)
        self.max_rss_bytes = max_rss_bytes
        self.on_event = on_event
        self.stats = PoolStats()
        self.waiting = 0
        self.busy = 0
        self.last_peak = 0  # peak resident bytes of the worker that answered last
        self._idle: asyncio.Queue[Worker] | None = None
        self._workers: set[Worker] = set()
        # threads that wait on the pipes (and start/reap processes): never doing the work itself
        self._threads = ThreadPoolExecutor(self.size * 2 + 2, thread_name_prefix="extract-wait")
        self._closed = False
        self._tasks: set[asyncio.Future[None]] = set()

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        # Last in, first out: the worker that answered last takes the next job while its caches and
        # heap are warm, and the others stay small. For speed: docs/experiments.md ("Reader server").
        self._idle = asyncio.LifoQueue()
        workers = await asyncio.gather(
            *(loop.run_in_executor(self._threads, Worker) for _ in range(self.size))
        )
        for worker in workers:
            self._workers.add(worker)
            self._idle.put_nowait(worker)

    def _event(self, name: str) -> None:
        if self.on_event is not None:
            self.on_event(name)

    async def run(self, job: Job | Call) -> Any:
        """The job's result from a worker, within the deadline (ExtractionTimeout) or Overloaded:
        the article's JSON view for a `Job`, the function's value for a `Call`."""
        if self._idle is None or self._closed:
            raise RuntimeError("WorkerPool used before start() or after close()")
        if self._idle.empty() and self.waiting >= self.queue_limit:
            self.stats.rejected += 1
            self._event("rejected")
            raise Overloaded(
                "too many pages are being extracted; try again in a moment",
                retry_after=max(1, round(self.deadline / 2)),
            )
        client = CLIENT.get()
        jobs = self._clients.users(client)
        if jobs >= self.per_client + self.per_client_queue:
            self.stats.client_limited += 1
            self._event("client_limited")
            raise Overloaded(
                f"this address already has {jobs} pages being extracted; try again when they are done",
                retry_after=max(1, round(self.deadline / 2)),
            )
        share = self._clients.join(client)
        began = time.monotonic()
        self.waiting += 1
        holding = False
        try:
            try:
                async with asyncio.timeout(self.deadline):
                    await share.acquire()  # one of this client's own workers first,
                    holding = True
                    worker = await self._idle.get()  # then any idle worker
            except TimeoutError:
                self.stats.rejected += 1
                self._event("rejected")
                raise Overloaded(
                    "too many pages are being extracted; try again in a moment",
                    retry_after=max(1, round(self.deadline / 2)),
                ) from None
            except asyncio.CancelledError:  # the caller gave up while its job waited: out of the queue
                self.stats.cancelled += 1
                self._event("cancelled")
                raise
            finally:
                self.waiting -= 1
            self.busy += 1
            try:
                return await self._call(worker, job, began)
            finally:
                self.busy -= 1
        finally:
            if holding:
                share.release()
            self._clients.leave(client)

    def clients(self) -> int:
        """Clients with an extraction running or waiting."""
        return len(self._clients)

    async def _call(self, worker: Worker, job: Job | Call, began: float) -> Any:
        loop = asyncio.get_running_loop()
        call = loop.run_in_executor(self._threads, worker.call, job)
        try:
            async with asyncio.timeout(self.deadline):
                reply = await asyncio.shield(call)
        except TimeoutError:
            self.stats.timed_out += 1
            self.last_peak = 0  # unknown: the worker was killed
            self._event("timed_out")
            await self._replace(worker, kill=True, call=call)
            raise ExtractionTimeout(
                f"extracting this page took longer than {self.deadline:g} s and was stopped"
            ) from None
        except asyncio.CancelledError:
            self.stats.cancelled += 1
            self._event("cancelled")
            # the caller is gone: stop its work (kill outside this cancelled task)
            task = asyncio.ensure_future(self._replace(worker, kill=True, call=call))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
            raise
        except (EOFError, OSError) as exc:
            if self._closed:
                raise Overloaded("the server is shutting down", retry_after=5) from exc
            self.stats.crashed += 1
            self._event("crashed")
            await self._replace(worker, kill=True, call=call)
            raise ExtractionFailed("the extraction worker stopped without an answer") from exc
        status = reply[0]
        peak = self.last_peak = reply[-1]
        if peak > self.max_rss_bytes:
            self.stats.retired += 1
            self._event("retired")
            await self._replace(worker, kill=False, call=None)
        else:
            self._give_back(worker)
        if status == "ok":
            self.stats.completed += 1
            return reply[1]
        if status == "error":
            _, kind, code, message, _ = reply
            raise ReaderproxyError(message, status=code, kind=kind)
        self.stats.crashed += 1
        log.error("extraction failed in a worker: %s", reply[1])
        raise ExtractionFailed("the page could not be extracted")

    def _give_back(self, worker: Worker) -> None:
        if self._closed or self._idle is None:
            self._threads.submit(worker.kill)
            return
        self._idle.put_nowait(worker)

    async def _replace(self, worker: Worker, *, kill: bool, call: asyncio.Future[Any] | None) -> None:
        """Stop a worker (kill, or ask to exit) and put a fresh one in its place."""
        loop = asyncio.get_running_loop()
        self._workers.discard(worker)
        await loop.run_in_executor(self._threads, worker.kill if kill else worker.retire)
        if call is not None:
            with contextlib.suppress(BaseException):
                await call  # the waiting thread returns (EOFError) once the process is gone
        if self._closed:
            return
        try:
            fresh = await loop.run_in_executor(self._threads, Worker)
        except Exception:
            log.exception("could not start a replacement extraction worker")
            return
        if self._closed:
            await loop.run_in_executor(self._threads, fresh.kill)
            return
        self._workers.add(fresh)
        self._give_back(fresh)

    async def close(self) -> None:
        """Kill every worker now (shutdown does not wait for extractions); callers get 503. Idempotent."""
        if self._closed:
            return
        self._closed = True
        workers, self._workers = list(self._workers), set()
        for worker in workers:
            with contextlib.suppress(OSError, ValueError):
                worker.process.kill()
        loop = asyncio.get_running_loop()
        await asyncio.gather(
            *(loop.run_in_executor(self._threads, worker._reap) for worker in workers), return_exceptions=True
        )
        self._threads.shutdown(wait=False, cancel_futures=True)

    def pids(self) -> list[int]:
        return [w.process.pid for w in self._workers if w.process.pid is not None]


def default_size() -> int:
    """Workers by default: the cores, at most two (the event loop needs a core too)."""
    return max(1, min(2, (os.cpu_count() or 1)))
