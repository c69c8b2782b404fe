"""Sites of dataset pages, and folds that keep every site on one side of a split.

A page's site is its host without `www.`-like prefixes, cut to the name before the public suffix
(`www.nytimes.com` and `nytimes.co.uk` → `nytimes`); a Readability test page's site is its
directory name without the `-N` suffix (`nytimes-3` → `nytimes`). The same key is used across the
three datasets, so a site present in two of them still lands in one fold. A site's fold is a hash of
its key (CRC-32, stable across runs and machines), so the folds do not depend on the order or the
subset of pages.
"""

from __future__ import annotations

import re
import zlib
from urllib.parse import urlsplit

#: Labels dropped from the end of a host: generic and country suffixes (a short list, not the PSL).
_SUFFIXES = frozenset(
    "com org net edu gov mil int io co ac uk de fr es it nl be ch at se no dk fi pl cz ru ua jp cn kr in "
    "au nz ca us br mx ar tw hk sg my id th vn tr gr pt ie il za info biz me tv dev app news blog ai gg".split()
)
_PREFIXES = frozenset("www www2 m mobile amp en edition".split())
_NUMBERED = re.compile(r"-\d+$")


def site_of_host(host: str) -> str:
    """The site key of a host name."""
    labels = [label for label in host.lower().strip(".").split(".") if label]
    while len(labels) > 1 and labels[0] in _PREFIXES:
        labels = labels[1:]
    while len(labels) > 1 and labels[-1] in _SUFFIXES:
        labels = labels[:-1]
    return labels[-1] if labels else host.lower()


def site_of_page(layout: str, page_id: str, url: str | None) -> str:
    """The site key of a dataset page: its URL's host, or (Readability layout) its directory name."""
    if layout == "readability" or not url:
        return _NUMBERED.sub("", page_id.lower())
    host = urlsplit(url).hostname or ""
    return site_of_host(host) if host else page_id.lower()


def fold_of_site(site: str, folds: int) -> int:
    """The fold (0 .. folds-1) of a site key."""
    return zlib.crc32(site.encode("utf-8")) % folds
