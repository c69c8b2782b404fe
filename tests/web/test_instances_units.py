"""Several instances, in process: rate limits shared through Redis (`limits.RateLimiter.acquire`,
`cache.RedisBackend.take_token`), the instance label of /metrics (`metrics.with_label`) and the
JSON request log (`requestlog.py`). Two `readerproxy serve` processes behind a real HAProxy:
tests/web/test_instances.py."""

from __future__ import annotations

import json
import logging

import aiohttp
import pytest
from support.reader_server import serve, test_settings
from support.redis_server import RedisServer

from readerproxy.app import load_settings
from readerproxy.web.limits import RateLimited, RateLimiter
from readerproxy.web.metrics import with_label
from readerproxy.web.settings import SettingsError


def test_every_sample_gets_the_instance_label() -> None:
    text = b'# HELP a x\n# TYPE a counter\na_total 1.0\nb{route="/x y"} 2.0\nc{} 3.0\n'
    labelled = with_label(text, "instance", 'rp1:8080 "q"')
    assert labelled.splitlines() == [
        b"# HELP a x",
        b"# TYPE a counter",
        b'a_total{instance="rp1:8080 \\"q\\""} 1.0',
        b'b{instance="rp1:8080 \\"q\\"",route="/x y"} 2.0',
        b'c{instance="rp1:8080 \\"q\\""} 3.0',
    ]


def test_log_format_is_checked() -> None:
    with pytest.raises(SettingsError, match="log_format"):
        load_settings({"log_format": "xml"}, env={})


@pytest.mark.redis
async def test_rate_limits_are_one_bucket_across_instances(redis_server: RedisServer) -> None:
    """Two instances on one Redis: a client spread over both gets its burst once, not twice;
    another client has its own; the /metrics of each names it."""
    settings = test_settings(cache=redis_server.url, rate_limit=0.5, rate_burst=3)
    one, two = settings.with_overrides(instance="one"), settings.with_overrides(instance="two")
    async with serve(one) as a, serve(two) as b, aiohttp.ClientSession() as http:
        found = []
        for server in (a, b, a, b, a):
            async with http.get(server.url("/api/algorithms")) as response:
                found.append(response.status)
                if response.status == 429:
                    assert int(response.headers["Retry-After"]) >= 1
        assert found == [200, 200, 200, 429, 429]
        async with http.get(b.url("/metrics")) as response:
            metrics = await response.text()
        assert 'readerproxy_rate_limited_total{instance="two"} 1.0' in metrics


async def test_redis_gone_falls_back_to_the_instance_buckets() -> None:
    class Gone:
        async def take_token(self, key: str, rate: float, burst: int) -> float:
            raise ConnectionError("redis is down")

    limiter = RateLimiter(0.5, 2)
    await limiter.acquire("a", Gone())
    await limiter.acquire("a", Gone())
    with pytest.raises(RateLimited):
        await limiter.acquire("a", Gone())


async def test_json_log_one_line_per_request(caplog: pytest.LogCaptureFixture) -> None:
    """One line per request with the client and a request id: the reverse proxy's from a trusted
    peer, a new one otherwise (a client cannot write its own into the logs)."""
    from readerproxy.web.requestlog import JsonFormatter

    async def run(trusted: str) -> list[logging.LogRecord]:
        caplog.clear()
        settings = test_settings(log_format="json", trusted_proxies=trusted, instance="rp1")
        async with serve(settings) as server, aiohttp.ClientSession() as http:
            headers = {"X-Request-ID": "lb-42", "X-Forwarded-For": "198.51.100.4"}
            async with http.get(server.url("/healthz"), headers=headers) as response:
                assert response.status == 200
                echoed = response.headers["X-Request-ID"]
        records = [r for r in caplog.records if r.name == "readerproxy.request"]
        assert len(records) == 1 and records[0].__dict__["request_id"] == echoed
        return records

    with caplog.at_level(logging.INFO, logger="readerproxy.request"):
        (trusted,) = await run("127.0.0.1")
        assert trusted.__dict__["request_id"] == "lb-42" and trusted.__dict__["client"] == "198.51.100.4"
        (direct,) = await run("")
        assert direct.__dict__["request_id"] != "lb-42" and direct.__dict__["client"] == "127.0.0.1"
    line = json.loads(JsonFormatter("rp1").format(trusted))
    assert line["instance"] == "rp1" and line["request_id"] == "lb-42" and line["status"] == 200
    assert line["path"] == "/healthz" and line["message"] == "GET /healthz 200"
