"""`--log-format json` and the instance's name: logs that several instances can share.

Behind a load balancer the lines of many instances end up in one place (journald, a container
log collector); each must say which instance wrote it and which request it belongs to.

- `configure_logging(settings)`: the root logger's format, text as before or one JSON object a
  line (time, level, logger, message, instance, and the fields a line carries).
- `request_log_middleware`: with JSON logs, one line per request of the reader server (method,
  path without its query, which names the pages people read; status; milliseconds; the real client
  after `forwarded.py`; the request id), and the id in the answer's `X-Request-ID`. The id is the
  reverse proxy's `X-Request-ID` when a trusted peer sent one (`--trusted-proxies`) in a plain
  form (up to 128 of `A-Za-z0-9._:@/+=-`), else made here: a client cannot write into the logs.
- `instance_name(settings)`: `--instance`, else host name:port; `/metrics` labels its samples with
  it when there are several instances (`metrics_instance`: `--instance` or a Redis cache).
"""

from __future__ import annotations

import json
import logging
import re
import socket
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from aiohttp import web

from .cache import parse_cache_spec
from .forwarded import TRUSTED

if TYPE_CHECKING:
    from .settings import Settings

REQUEST_ID = "X-Request-ID"
_PLAIN_ID = re.compile(r"^[A-Za-z0-9._:@/+=-]{1,128}$")
#: The logger of the per-request lines.
request_log = logging.getLogger("readerproxy.request")
INSTANCE = web.AppKey("instance", str)
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
#: Attributes every LogRecord has: what is left over was passed as `extra` and goes in the line.
_STANDARD = set(logging.LogRecord("", 0, "", 0, "", (), None).__dict__) | {"message", "asctime"}


def instance_name(settings: Settings) -> str:
    """`--instance`, else this machine's name and the reader port (unique behind one balancer)."""
    return settings.instance or f"{socket.gethostname()}:{settings.port}"


def metrics_instance(settings: Settings) -> str:
    """The `instance` label of /metrics: `instance_name` when this is one of several instances
    (`--instance` given, or the cache shared in Redis), else none (one instance's samples as before)."""
    several = bool(settings.instance) or parse_cache_spec(settings.cache).kind == "redis"
    return instance_name(settings) if several else ""


class JsonFormatter(logging.Formatter):
    """One JSON object per line; a traceback, when there is one, as the `exc` field."""

    def __init__(self, instance: str) -> None:
        super().__init__()
        self.instance = instance

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "instance": self.instance,
        }
        line.update({k: v for k, v in record.__dict__.items() if k not in _STANDARD})
        if record.exc_info:
            line["exc"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False, default=str)


def configure_logging(settings: Settings, prefix: str = "") -> None:
    """The root logger's handler: text (`prefix` before the logger's name, e.g. `worker-1 `) or
    JSON lines; aiohttp's own access log stays off (the JSON request line replaces it)."""
    if settings.log_format == "json":
        handler = logging.StreamHandler()
        handler.setFormatter(JsonFormatter(instance_name(settings)))
        logging.basicConfig(level=logging.INFO, handlers=[handler], force=True)
    else:
        logging.basicConfig(
            level=logging.INFO, format=f"%(asctime)s %(levelname)s {prefix}%(name)s: %(message)s"
        )
    logging.getLogger("aiohttp.access").setLevel(logging.WARNING)


def request_id(request: web.Request) -> str:
    """The reverse proxy's id (trusted peers only, plain form), else a new one."""
    given = request.headers.get(REQUEST_ID, "")
    trusted = request.app.get(TRUSTED)
    transport = request.transport
    peer = transport.get_extra_info("peername") if transport is not None else None
    if given and trusted and peer and trusted.trusts(str(peer[0])) and _PLAIN_ID.match(given):
        return given
    return uuid.uuid4().hex


@web.middleware
async def request_log_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """One JSON line per request (see the module), whatever the answer (an exception's status too)."""
    began = time.perf_counter()
    rid = request_id(request)
    status = 500
    try:
        response = await handler(request)
        status = response.status
        response.headers[REQUEST_ID] = rid
        return response
    except web.HTTPException as exc:
        status = exc.status
        exc.headers[REQUEST_ID] = rid
        raise
    finally:
        request_log.info(
            "%s %s %d",
            request.method,
            request.path,
            status,
            extra={
                "request_id": rid,
                "client": request.remote,
                "method": request.method,
                "path": request.path,
                "status": status,
                "ms": round((time.perf_counter() - began) * 1000, 1),
            },
        )
