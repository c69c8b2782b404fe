"""`--log-format json` on the proxy port: one line per flow, as the reader port writes per request.

`RequestLogAddon` notes when a flow began (it runs first) and, when the flow is done, writes one
line to the same logger and in the same shape as the reader server's `web.requestlog` lines:
`request_id` (new for each flow), `client` (the real client: after the PROXY protocol from a
trusted peer), `method`, `status` (0 when the browser got no answer), `ms`, plus what only the
proxy knows: `port: "proxy"`, the `scheme` and `host` the browser asked for, and the flow's
`outcome` (reader view, passed through, tunnel, blocked, error …). The path and query are left
out: they name the pages people read, which a log shared by several instances should not keep
(the reader port leaves the query out for the same reason, and its paths are readerproxy's own).
With text logs the addon writes nothing: the text format had no per-request line before.
"""

from __future__ import annotations

import time
import uuid

from ..web.requestlog import request_log
from .addons import Addon
from .flow import Flow

#: The note holding the flow's start (`time.perf_counter()`) and its id.
BEGAN_NOTE = "log_began"
ID_NOTE = "request_id"


class RequestLogAddon(Addon):
    """One JSON line per finished flow (see the module); first in the addon list."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    async def request(self, flow: Flow) -> None:
        if self.enabled:
            flow.notes[BEGAN_NOTE] = time.perf_counter()
            flow.notes[ID_NOTE] = uuid.uuid4().hex

    async def done(self, flow: Flow) -> None:
        if not self.enabled:
            return
        began = flow.notes.get(BEGAN_NOTE)
        ms = round((time.perf_counter() - began) * 1000, 1) if isinstance(began, float) else None
        status = flow.response.status if flow.response is not None else 0
        request = flow.request
        request_log.info(
            "%s %s://%s %d",
            request.method,
            request.scheme,
            request.host,
            status,
            extra={
                "request_id": flow.notes.get(ID_NOTE) or uuid.uuid4().hex,
                "port": "proxy",
                "client": flow.client.rpartition(":")[0].strip("[]") or flow.client,
                "method": request.method,
                "scheme": request.scheme,
                "host": request.host,
                "status": status,
                "outcome": str(flow.outcome) if flow.outcome is not None else None,
                "ms": ms,
            },
        )
