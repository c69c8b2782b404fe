"""Prometheus metrics of one server (prometheus-client, a registry per app so tests can run many)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)

#: Request latency buckets, seconds: a cached read is around a millisecond, a miss tens to hundreds.
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
#: Extraction time buckets, seconds: parse + extract + render of one page.
EXTRACTION_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)


@dataclass
class Metrics:
    """The server's counters and histograms, with one method per thing that happens."""

    registry: CollectorRegistry = field(default_factory=lambda: CollectorRegistry(auto_describe=True))
    #: The `instance` label on every sample (`--instance`, else host name:port): behind a load
    #: balancer a scrape reaches any instance, and the samples say which.
    instance: str = ""

    def __post_init__(self) -> None:
        r = self.registry
        self.requests = Counter(
            "readerproxy_requests", "HTTP requests by route and status.", ["route", "status"], registry=r
        )
        self.latency = Histogram(
            "readerproxy_request_seconds",
            "HTTP request latency by route.",
            ["route"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.cache_events = Counter(
            "readerproxy_cache_events",
            "Cache lookups by layer (memory, sqlite, redis; ready: a reader page sent again) and outcome.",
            ["layer", "event"],
            registry=r,
        )
        self.page_cache = Counter(
            "readerproxy_page_cache",
            "Upstream page lookups by X-Cache status (hit, miss, revalidated).",
            ["status"],
            registry=r,
        )
        self.upstream_errors = Counter(
            "readerproxy_upstream_errors", "Failed upstream fetches by kind.", ["kind"], registry=r
        )
        self.extraction = Histogram(
            "readerproxy_extraction_seconds",
            "Parse + extract + render time by algorithm.",
            ["algorithm"],
            buckets=EXTRACTION_BUCKETS,
            registry=r,
        )
        self.worker_events = Counter(
            "readerproxy_extraction_jobs",
            "Extraction jobs by outcome (timed_out, cancelled, crashed, rejected, client_limited, retired).",
            ["event"],
            registry=r,
        )
        self.rate_limited = Counter(
            "readerproxy_rate_limited", "Requests refused with 429 by the per-client rate limit.", registry=r
        )
        self.workers_busy = Gauge("readerproxy_extraction_busy", "Extraction workers busy now.", registry=r)
        self.workers_waiting = Gauge(
            "readerproxy_extraction_waiting", "Extractions waiting for a worker now.", registry=r
        )
        self.workers_clients = Gauge(
            "readerproxy_extraction_clients",
            "Client addresses with an extraction running or waiting now.",
            registry=r,
        )
        self.fetches_active = Gauge(
            "readerproxy_fetches_active", "Upstream fetches in progress now.", registry=r
        )
        self.fetches_waiting = Gauge(
            "readerproxy_fetches_waiting",
            "Upstream fetches waiting for a slot (global or per host).",
            registry=r,
        )
        self.limits = Gauge("readerproxy_limit", "Configured limits by name.", ["name"], registry=r)
        self.proxy_requests = Counter(
            "readerproxy_proxy_requests",
            "Proxied requests by outcome (reader_view, passed_through, tunnelled, refused, blocked, error).",
            ["outcome"],
            registry=r,
        )
        self._children: dict[tuple[Any, ...], Any] = {}

    def _child(self, metric: Any, *labels: str) -> Any:
        """metric.labels(*labels), resolved once: the label lookup was a tenth of a cached read."""
        key = (id(metric), *labels)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = metric.labels(*labels)
        return child

    def observe_request(self, route: str, status: int, seconds: float) -> None:
        self._child(self.requests, route, str(status)).inc()
        self._child(self.latency, route).observe(seconds)

    def cache_event(self, layer: str, event: str) -> None:
        """The LayeredCache's `on_event` callback."""
        self._child(self.cache_events, layer, event).inc()

    def ready_hit(self) -> None:
        """A reader page sent again as it was (`ready.ReadyPages`): a page-store hit, in its own layer."""
        self._child(self.page_cache, "hit").inc()
        self._child(self.cache_events, "ready", "hit").inc()

    def page_lookup(self, status: str) -> None:
        self._child(self.page_cache, status).inc()

    def upstream_error(self, kind: str) -> None:
        self.upstream_errors.labels(kind).inc()

    def observe_extraction(self, algorithm: str, seconds: float) -> None:
        self.extraction.labels(algorithm).observe(seconds)

    def worker_event(self, event: str) -> None:
        """The WorkerPool's `on_event` callback."""
        self._child(self.worker_events, event).inc()

    def watch_workers(self, pool: Any) -> None:
        """Busy and waiting extractions read from the pool at scrape time."""
        self.workers_busy.set_function(lambda: pool.busy)
        self.workers_waiting.set_function(lambda: pool.waiting)
        self.limits.labels("extract_workers").set(pool.size)
        self.limits.labels("extract_queue").set(pool.queue_limit)
        self.limits.labels("extract_per_client").set(pool.per_client)
        self.workers_clients.set_function(pool.clients)
        self.limits.labels("extract_timeout_seconds").set(pool.deadline)

    def watch_fetches(self, slots: Any) -> None:
        """Active and waiting upstream fetches read from the fetcher's slots at scrape time."""
        self.fetches_active.set_function(lambda: slots.active)
        self.fetches_waiting.set_function(lambda: slots.waiting)
        self.limits.labels("max_fetches").set(slots.max_total)
        self.limits.labels("max_fetches_per_host").set(slots.max_per_host)

    def proxy_request(self, outcome: str) -> None:
        self._child(self.proxy_requests, outcome).inc()

    def exposition(self) -> tuple[bytes, str]:
        """The Prometheus text format and its content type."""
        text = generate_latest(self.registry)
        return (with_label(text, "instance", self.instance) if self.instance else text), CONTENT_TYPE_LATEST


def with_label(exposition: bytes, name: str, value: str) -> bytes:
    """Prometheus text with `name="value"` added to every sample (the client library has no label
    for a whole registry). The value is escaped as the format asks (backslash, quote, newline)."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    label = f'{name}="{escaped}"'.encode()
    lines = []
    for line in exposition.split(b"\n"):
        if line and not line.startswith(b"#"):
            brace, space = line.find(b"{"), line.find(b" ")
            if 0 <= brace < space:
                line = (
                    line[: brace + 1]
                    + label
                    + (b"," if line[brace + 1 : brace + 2] != b"}" else b"")
                    + line[brace + 1 :]
                )
            elif space > 0:
                line = line[:space] + b"{" + label + b"}" + line[space:]
        lines.append(line)
    return b"\n".join(lines)
