"""Issue 47, item 5: two `readerproxy serve` instances behind a real HAProxy (Debian's), with one
real Redis, all on loopback and started here.

HAProxy runs deploy/haproxy.cfg's lines for what matters here (forwarding headers dropped then set,
a request id, `send-proxy-v2` on the proxy port) without TLS, and strips the path prefix of
`--public-url https://example.org/reader/`. Both instances run with `--trusted-proxies 127.0.0.1`
(HAProxy's address), the Redis cache, `--log-format json` and a 4-request burst. Clients are told
apart by their source address: 127.0.0.2, .3, … are this machine too, and HAProxy names each in
X-Forwarded-For or its PROXY header; the instances count each apart, and one client spread over
both instances as one."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import pytest
from support.fronts import running, tool
from support.reader_server import free_port, start_server_process, stop_process
from support.redis_server import RedisServer
from support.upstream import Upstream

pytestmark = pytest.mark.redis  # and HAProxy: `./dev test --quick` leaves it out

PUBLIC = "https://example.org/reader/"
BURST = 4
HAPROXY = """
global
    log stderr local0
    maxconn 256

defaults
    log global
    mode http
    timeout connect 5s
    timeout client 30s
    timeout server 30s

frontend reader
    bind 127.0.0.1:{front}
    http-request del-header Forwarded
    http-request del-header X-Forwarded-For
    http-request del-header X-Forwarded-Proto
    http-request del-header X-Forwarded-Host
    option forwardfor
    http-request set-header X-Forwarded-Proto https
    http-request set-header X-Forwarded-Host %[req.hdr(host)]
    unique-id-format %{{+X}}o\\ %ci:%cp_%fi:%fp_%Ts_%rt:%pid
    unique-id-header X-Request-ID
    # --public-url https://example.org/reader/: the prefix is HAProxy's, the routes readerproxy's
    http-request replace-path /reader(/.*) \\1
    default_backend readerproxy

backend readerproxy
    balance roundrobin
    server rp1 127.0.0.1:{reader1}
    server rp2 127.0.0.1:{reader2}

frontend proxy_port
    mode tcp
    bind 127.0.0.1:{proxy_front}
    timeout client 1h
    default_backend readerproxy_proxy

backend readerproxy_proxy
    mode tcp
    timeout server 1h
    balance roundrobin
    default-server send-proxy-v2
    server rp1 127.0.0.1:{proxy1}
    server rp2 127.0.0.1:{proxy2}
"""


@dataclass
class Deployment:
    front: int  # HAProxy's reader frontend
    proxy_front: int  # HAProxy's proxy-port frontend
    readers: tuple[str, str]  # each instance's own base URL (for direct requests)
    logs: tuple[Path, Path]  # each instance's stderr: its JSON lines

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.front}{path}"


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    haproxy = tool("haproxy", "haproxy")
    executable = shutil.which("redis-server")
    if executable is None:
        pytest.skip("redis-server is not installed (./dev test installs Debian's redis-server)")
    directory = tmp_path_factory.mktemp("instances")
    redis = RedisServer(executable, directory)
    redis.start()
    processes: list[subprocess.Popen[bytes]] = []
    try:
        ports = {
            name: free_port() for name in ("front", "proxy_front", "reader1", "reader2", "proxy1", "proxy2")
        }
        logs = (directory / "rp1.log", directory / "rp2.log")
        bases = []
        for index in (1, 2):
            with logs[index - 1].open("wb") as log:
                process, base = start_server_process(
                    *("--cache", redis.url, "--allow-private", "--trusted-proxies", "127.0.0.1"),
                    *("--public-url", PUBLIC, "--proxy-port", str(ports[f"proxy{index}"])),
                    *("--rate-limit", "0.05", "--rate-burst", str(BURST), "--log-format", "json"),
                    *("--instance", f"rp{index}"),
                    port=ports[f"reader{index}"],
                    stderr=log.fileno(),
                )
            processes.append(process)
            bases.append(base)
        config = directory / "haproxy.cfg"
        config.write_text(HAPROXY.format(**ports))
        listening = {ports["front"]: ports["front"], ports["proxy_front"]: ports["proxy_front"]}
        with running([haproxy, "-db", "-f", str(config)], listening):
            yield Deployment(ports["front"], ports["proxy_front"], (bases[0], bases[1]), logs)
    finally:
        for process in processes:
            stop_process(process)
        redis.stop()


def client(source: str) -> aiohttp.ClientSession:
    """A client connecting from `source` (a loopback address of its own), keeping no cookie: who
    it is comes from its address alone."""
    connector = aiohttp.TCPConnector(local_addr=(source, 0), force_close=True)
    return aiohttp.ClientSession(connector=connector, cookie_jar=aiohttp.DummyCookieJar())


async def statuses(session: aiohttp.ClientSession, url: str, count: int, **headers: str) -> list[int]:
    found = []
    for _ in range(count):
        async with session.get(url, headers=headers) as response:
            found.append(response.status)
    return found


async def test_clients_through_haproxy_have_buckets_of_their_own(deployment: Deployment) -> None:
    """HAProxy spreads each client over both instances (round robin): its burst holds once in all,
    through Redis; another address has its own; what a client writes in X-Forwarded-For (dropped by
    HAProxy, or straight to an instance that does not trust it) buys no fresh bucket."""
    read = deployment.url("/reader/api/algorithms")
    async with client("127.0.0.2") as one, client("127.0.0.3") as two:
        assert await statuses(one, read, BURST + 1) == [200] * BURST + [429]
        assert await statuses(two, read, BURST) == [200] * BURST
    async with client("127.0.0.4") as forger:
        forged = [
            (await statuses(forger, read, 1, **{"X-Forwarded-For": f"198.51.100.{i}"}))[0]
            for i in range(BURST + 1)
        ]
        assert forged == [200] * BURST + [429]
    async with client("127.0.0.5") as direct:
        direct_url = deployment.readers[0] + "/api/algorithms"
        forged = [
            (await statuses(direct, direct_url, 1, **{"X-Forwarded-For": f"198.51.100.{i}"}))[0]
            for i in range(BURST + 1)
        ]
        assert forged == [200] * BURST + [429]


async def test_the_request_id_and_the_client_reach_the_json_log(deployment: Deployment) -> None:
    async with client("127.0.0.6") as session, session.get(deployment.url("/reader/healthz")) as response:
        assert response.status == 200
        request_id = response.headers["X-Request-ID"]
    assert "_" in request_id  # HAProxy's unique-id-format, not one readerproxy made
    await asyncio.sleep(0.2)
    lines = [
        json.loads(line)
        for path in deployment.logs
        for line in path.read_text().splitlines()
        if line.startswith("{") and request_id in line
    ]
    assert len(lines) == 1, lines
    assert lines[0]["client"] == "127.0.0.6" and lines[0]["path"] == "/healthz"
    assert lines[0]["instance"] in ("rp1", "rp2") and lines[0]["status"] == 200


async def test_a_page_read_on_one_instance_is_a_hit_on_the_other(
    deployment: Deployment, upstream: Upstream
) -> None:
    target = upstream.url(f"/cached/instances-{uuid.uuid4().hex}")
    async with client("127.0.0.7") as session:
        headers = []
        for base in deployment.readers:
            async with session.get(f"{base}/read", params={"url": target, "format": "json"}) as response:
                assert response.status == 200
                headers.append(response.headers["X-Cache"])
    assert headers == ["miss", "hit"]
    assert upstream.count(target.split(str(upstream.port), 1)[1]) == 1


async def test_concurrent_misses_on_both_instances_fetch_once(
    deployment: Deployment, upstream: Upstream
) -> None:
    path = f"/counter/instances-{uuid.uuid4().hex}"
    target = upstream.url(path) + "?delay=1"
    async with client("127.0.0.8") as session:

        async def read(base: str) -> int:
            async with session.get(f"{base}/read", params={"url": target, "format": "json"}) as response:
                await response.read()
                return response.status

        found = await asyncio.gather(*(read(base) for base in deployment.readers))
    assert found[0] == found[1]
    assert upstream.count(path) == 1


async def test_the_proxy_port_sees_each_client_through_the_proxy_protocol(
    deployment: Deployment, upstream: Upstream
) -> None:
    """Through HAProxy's proxy port (send-proxy-v2, round robin over both instances), a preference
    chosen by one phone is its own: kept under its address in Redis, it follows it to the other
    instance and not to another phone."""
    proxy = f"http://127.0.0.1:{deployment.proxy_front}"
    article = "http://readerproxy/read?url=" + upstream.url("/article")
    async with client("127.0.0.9") as dark, client("127.0.0.10") as plain:
        async with dark.get("http://readerproxy/prefs?theme=dark", proxy=proxy, allow_redirects=False) as r:
            assert r.status in (302, 303), await r.text()
        for _ in range(2):  # one read on each instance
            async with dark.get(article, proxy=proxy) as r:
                assert r.status == 200 and 'data-theme="dark"' in await r.text()
        async with plain.get(article, proxy=proxy) as r:
            assert r.status == 200 and 'data-theme="auto"' in await r.text()


async def test_the_proxy_port_writes_one_json_line_per_flow(
    deployment: Deployment, upstream: Upstream
) -> None:
    """The proxy port logs as the reader port does (`proxy/requestlog.py`): one JSON line per flow,
    with the real client (from HAProxy's PROXY header), the instance, the host, the status and the
    outcome, and no path: a path names the page its reader read."""
    proxy = f"http://127.0.0.1:{deployment.proxy_front}"
    secret = f"/cached/private-{uuid.uuid4().hex}"
    async with client("127.0.0.11") as session, session.get(upstream.url(secret), proxy=proxy) as response:
        assert response.status == 200
        await response.read()
    await asyncio.sleep(0.2)
    lines = [
        json.loads(line)
        for path in deployment.logs
        for line in path.read_text().splitlines()
        if line.startswith("{") and '"port": "proxy"' in line and '"127.0.0.11"' in line
    ]
    assert len(lines) == 1, lines
    line = lines[0]
    assert line["client"] == "127.0.0.11" and line["host"] == "127.0.0.1" and line["method"] == "GET"
    assert line["status"] == 200 and line["instance"] in ("rp1", "rp2") and line["outcome"]
    assert len(line["request_id"]) == 32 and isinstance(line["ms"], float)
    assert all(secret not in text for path in deployment.logs for text in [path.read_text()])


ROOT_RELATIVE = re.compile(r'\s(?:href|src)="(/[^"]*)"')


async def test_links_under_the_public_prefix_work_through_haproxy(
    deployment: Deployment, upstream: Upstream
) -> None:
    """Every root-relative link of the landing page and of a reader page starts with /reader/ and
    answers through HAProxy (which strips it); the bookmarklet and the PAC file name the public
    address."""
    async with client("127.0.0.11") as session:
        async with session.get(deployment.url("/reader/"), headers={"Host": "example.org"}) as response:
            index = await response.text()
        assert "https://example.org/reader/read?url=" in index
        async with session.get(
            deployment.url("/reader/read"),
            params={"url": upstream.url("/article")},
            headers={"Host": "example.org"},
        ) as response:
            assert response.status == 200
            page = await response.text()
            assert "Path=/reader" in response.headers.get("Set-Cookie", "Path=/reader")
        links = sorted(set(ROOT_RELATIVE.findall(index) + ROOT_RELATIVE.findall(page)))
        assert links and all(link.startswith("/reader/") for link in links), links
        followed = [link.replace("&amp;", "&") for link in links if not link.startswith("/reader/read?")]
        assert any(link.startswith("/reader/static/") for link in followed)
        for link in followed[:20]:
            async with session.get(deployment.url(link)) as response:
                assert response.status == 200, link
        async with session.get(deployment.url("/reader/proxy.pac")) as response:
            assert "PROXY example.org:" in await response.text()
