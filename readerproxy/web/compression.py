"""Response compression by `Accept-Encoding`: brotli or gzip, chosen once per response body.

Reader pages, JSON, Markdown, text and static files are sent compressed when the client accepts
it (a 25 KB reader page is about 3 KB in gzip, the largest saving for a phone on a slow link).
`Encoded` keeps a body with its compressed variants, made on first use and kept with it, so a
cached reader page or a static file is compressed once and a hit costs no compression.
"""

from __future__ import annotations

import functools
import gzip
from dataclasses import dataclass, field

import brotli

#: Bodies smaller than this are sent as they are (the headers would outweigh the saving).
MIN_SIZE = 512
#: Brotli quality 5 and gzip level 6 for bodies that are kept and sent many times (cached reader
#: pages, static files): near the best ratio for text at a few ms per 100 KB, measured on reader pages
#: (higher brotli qualities cost 5-20x the time for 2-4 % smaller bodies).
BROTLI_QUALITY = 5
GZIP_LEVEL = 6
#: Brotli quality 1 and gzip level 1 for a body sent once, or before its kept variant is made: the
#: client waits for this one, so the choice is made for speed. On the 39.9 KB reader page of
#: `benchmarks/server_load.py` (fastest of 300): brotli 0.13 ms and 12,497 bytes (quality 3: 0.32 ms,
#: 11,616; quality 5: 0.81 ms, 10,495); gzip 0.30 ms and 12,705 bytes (level 4: 0.54 ms, 11,514;
#: level 6: 1.00 ms, 11,164). About 8 % more bytes, once, for 0.2 ms less on every miss.
BROTLI_QUICK_QUALITY = 1
GZIP_QUICK_LEVEL = 1
CODINGS = ("br", "gzip")


@functools.lru_cache(maxsize=256)
def negotiate(accept_encoding: str | None) -> str | None:
    """The coding to use for an Accept-Encoding header: "br", "gzip" or None (identity).

    Codings with q=0 are refused; between acceptable ones brotli wins (smaller), as browsers expect.
    Memoised for speed: a browser sends the same header on every request, and parsing it was a
    measurable part of a cached /read (a bounded cache, so odd headers only evict each other).
    """
    if not accept_encoding:
        return None
    accepted: dict[str, float] = {}
    for part in accept_encoding.lower().split(","):
        name, _, params = part.strip().partition(";")
        quality = 1.0
        params = params.strip()
        if params.startswith("q="):
            try:
                quality = float(params[2:])
            except ValueError:
                quality = 0.0
        accepted[name.strip()] = quality
    wildcard = accepted.get("*", 0.0)
    for coding in CODINGS:
        if accepted.get(coding, wildcard) > 0:
            return coding
    return None


def compress(body: bytes, coding: str, *, quick: bool = False) -> bytes:
    """`body` in `coding`, at the quality for kept bodies or, with `quick`, for bodies sent once."""
    if coding == "br":
        return bytes(brotli.compress(body, quality=BROTLI_QUICK_QUALITY if quick else BROTLI_QUALITY))
    if coding == "gzip":
        return gzip.compress(body, compresslevel=GZIP_QUICK_LEVEL if quick else GZIP_LEVEL, mtime=0)
    raise ValueError(f"unknown coding {coding!r}")


@dataclass(slots=True)
class Encoded:
    """A response body and its compressed variants, each made once on first request."""

    body: bytes
    variants: dict[str, bytes] = field(default_factory=dict)

    def for_coding(self, coding: str | None, *, quick: bool = False) -> tuple[bytes, str | None]:
        """The bytes to send and their Content-Encoding (None: identity) for a negotiated coding.

        A variant not made yet is made at the full quality and kept; with `quick`, it is compressed
        quickly and not kept (the caller makes the kept one later, when no client is waiting). A
        kept variant is always the one sent."""
        if coding is None or len(self.body) < MIN_SIZE:
            return self.body, None
        variant = self.variants.get(coding)
        if variant is None:
            if quick:
                return compress(self.body, coding, quick=True), coding
            variant = self.variants[coding] = compress(self.body, coding)
        return variant, coding

    @property
    def size(self) -> int:
        """Bytes held, the variants included (what a cache of Encoded bodies is charged)."""
        return len(self.body) + sum(len(v) for v in self.variants.values())
