"""URLs, one policy for everything readerproxy shows (reader view, Markdown, listings, threads, the
overlay): the schemes a URL may have (`SAFE_SCHEMES`, `safe_url`), the attributes lazy-loading
scripts read a picture's real source from (`LAZY_SOURCES`, `LAZY_SRCSETS`), the one srcset parser
(`parse_srcset`) and chooser (`choose_candidate`), and the site of a page by the Public Suffix List
(`page_site`, `same_site`: `www.news.NAME.co.uk` is `NAME.co.uk`, never `co.uk`).

The Public Suffix List is the snapshot `publicsuffixlist` ships (read once, nothing fetched): a host's
last two labels are not its site (`co.uk`, or a host provider's shared domain, hold other people's
sites).
"""

from __future__ import annotations

import functools
import re
from urllib.parse import urlsplit

from publicsuffixlist import PublicSuffixList

#: The schemes a link may have: http(s), mailto and tel. An image may also be a `data:image/` URL
#: (`safe_url`'s `data_images`), nothing else data:.
SAFE_SCHEMES = frozenset({"http", "https", "mailto", "tel"})
#: Attributes lazy-loading scripts copy a picture's real source from, in the order they are read.
LAZY_SOURCES = ("data-src", "data-original", "data-lazy-src", "data-url", "data-hi-res-src")
#: Attributes lazy-loading scripts copy a picture's real srcset from, in the order they are read.
LAZY_SRCSETS = ("data-srcset", "data-lazy-srcset")


def url_scheme(url: str) -> str:
    """A URL's scheme in lower case: what comes before its first ":" when no "/" comes first ("" for
    a relative URL)."""
    head, colon, _ = url.partition(":")
    return head.lower() if colon and "/" not in head else ""


def safe_url(url: str | None, *, data_images: bool = False, relative: bool = True) -> str | None:
    """`url` (already made absolute where it can be) when the policy allows it, else None: a scheme
    of `SAFE_SCHEMES`, a `data:image/` URL when `data_images`, or no scheme at all (a relative URL on
    a page without an address) when `relative`."""
    if not url:
        return None
    scheme = url_scheme(url)
    if not scheme:
        return url if relative else None
    if scheme in SAFE_SCHEMES:
        return url
    if data_images and scheme == "data" and url[:11].lower() == "data:image/":
        return url
    return None


# -- srcset ----------------------------------------------------------------------------------------

_SRCSET_URL = re.compile(r"[\s,]*([^\s,]\S*)")  # `\s` is `str.isspace`, as in the general loop below


def parse_srcset(srcset: str) -> list[tuple[str, str]]:
    """The (URL, descriptors) candidates of a srcset, split as the HTML standard does.

    Commas inside a URL belong to it (`.../c_fill,f_auto/x.jpg 320w`): a URL is a run of
    non-whitespace, trailing commas end the candidate, and the descriptors run to the next comma
    outside parentheses.
    """
    if "(" in srcset:
        return _parse_srcset_with_parentheses(srcset)
    # Without parentheses the descriptors simply run to the next comma: for speed, the same split
    # by regular expression and `str.find` rather than one Python step per character.
    candidates: list[tuple[str, str]] = []
    position = 0
    while (match := _SRCSET_URL.match(srcset, position)) is not None:
        url, position = match[1], match.end()
        if url.endswith(","):
            candidates.append((url.rstrip(","), ""))
            continue
        comma = srcset.find(",", position)
        end = len(srcset) if comma < 0 else comma
        candidates.append((url, " ".join(srcset[position:end].split())))
        position = end + 1
    return candidates


_SRCSET_GAP = re.compile(r"[\s,]*")  # `\s` is `str.isspace`, as in `_parse_srcset_by_character`
_SRCSET_WORD = re.compile(r"\S*")
_SRCSET_MARK = re.compile(r"[(),]")


def _match_end(pattern: re.Pattern[str], text: str, position: int) -> int:
    """Where `pattern`, which also matches the empty string, stops matching from `position`."""
    found = pattern.match(text, position)
    return found.end() if found is not None else position


def _parse_srcset_with_parentheses(srcset: str) -> list[tuple[str, str]]:
    """`_parse_srcset_by_character`, the same steps taken by regular expressions: from one
    parenthesis or comma of the descriptors to the next rather than one Python step per character
    (for speed: 0.5 ms for a long srcset with media conditions)."""
    candidates: list[tuple[str, str]] = []
    position, size = 0, len(srcset)
    while position < size:
        position = _match_end(_SRCSET_GAP, srcset, position)
        if position >= size:
            break
        start = position
        position = _match_end(_SRCSET_WORD, srcset, position)
        url = srcset[start:position]
        if url.endswith(","):
            candidates.append((url.rstrip(","), ""))
            continue
        depth, start = 0, position
        while (mark := _SRCSET_MARK.search(srcset, position)) is not None:
            position = mark.start()
            if mark[0] == "(":
                depth += 1
            elif mark[0] == ")":
                depth = max(depth - 1, 0)
            elif depth == 0:
                break
            position += 1
        else:
            position = size
        candidates.append((url, " ".join(srcset[start:position].split())))
        position += 1
    return candidates


def _parse_srcset_by_character(srcset: str) -> list[tuple[str, str]]:
    """`parse_srcset` in the standard's own steps, parentheses in descriptors included."""
    candidates: list[tuple[str, str]] = []
    position, size = 0, len(srcset)
    while position < size:
        while position < size and (srcset[position].isspace() or srcset[position] == ","):
            position += 1
        if position >= size:
            break
        start = position
        while position < size and not srcset[position].isspace():
            position += 1
        url = srcset[start:position]
        if url.endswith(","):
            candidates.append((url.rstrip(","), ""))
            continue
        depth, start = 0, position
        while position < size:
            char = srcset[position]
            if char == "(":
                depth += 1
            elif char == ")":
                depth = max(depth - 1, 0)
            elif char == "," and depth == 0:
                break
            position += 1
        candidates.append((url, " ".join(srcset[start:position].split())))
        position += 1
    return candidates


_WIDTH = re.compile(r"(\d+)w")


def srcset_width(descriptors: str, density_width: float | None = None) -> float:
    """The width a candidate's descriptors state (`480w`); a density (`2x`) times `density_width`
    when that is given (a guess at the width it stands for), else 0, as for no descriptor."""
    found = _WIDTH.search(descriptors)
    if found:
        return int(found[1])
    if density_width is not None:
        for descriptor in descriptors.split():
            if descriptor.endswith("x"):
                try:
                    return float(descriptor[:-1]) * density_width
                except ValueError:
                    continue
    return 0


def choose_candidate(
    candidates: list[tuple[str, str]],
    at_least: int | None = None,
    at_most: int | None = None,
    density_width: float | None = None,
) -> str | None:
    """The URL of one srcset candidate (`parse_srcset`), by the widths they state (`srcset_width`,
    `density_width` for a density): with `at_least`, the narrowest of those at least that wide;
    else (or when none is) the widest, of those at most `at_most` wide when any is. The first in the
    srcset among equals; None for no candidate."""
    widths = [
        (srcset_width(descriptors, density_width), order) for order, (_, descriptors) in enumerate(candidates)
    ]
    if not widths:
        return None
    if at_least is not None and (wide := [pair for pair in widths if pair[0] >= at_least]):
        return candidates[min(wide)[1]][0]
    fitting = [pair for pair in widths if at_most is None or pair[0] <= at_most] or widths
    return candidates[min(fitting, key=lambda pair: (-pair[0], pair[1]))[1]][0]


# -- sites -----------------------------------------------------------------------------------------


@functools.cache
def _suffixes() -> PublicSuffixList:
    """The Public Suffix List, from the snapshot the package ships (read once; nothing fetched)."""
    return PublicSuffixList()


def _is_address(host: str) -> bool:
    return ":" in host or all(label.isdigit() for label in host.split("."))


def page_site(url: str | None) -> str | None:
    """The site of a page's own address: the registrable domain of its host, by the Public Suffix
    List (`www.news.NAME.co.uk` is `NAME.co.uk`; a user's host under a provider's shared suffix
    stays itself), or the host itself when it
    is an address, a one-label name or a public suffix."""
    try:
        host = urlsplit(url or "").hostname
    except ValueError:
        return None
    host = (host or "").rstrip(".")
    if not host:
        return None
    if _is_address(host) or "." not in host:
        return host
    return _suffixes().privatesuffix(host) or host


def subdomains_share_the_site(site: str) -> bool:
    """Whether a site's subdomains are on it: yes for a registrable domain (`NAME.org`), no for
    an address, a one-label name, or a host that is itself a public suffix (`co.uk`),
    whose subdomains belong to others."""
    return "." in site and not _is_address(site) and _suffixes().privatesuffix(site) == site


def same_site(url: str, site: str | None) -> bool:
    """Whether an absolute http(s) URL is on the page's site (its host, or a subdomain of it when
    the site is a registrable domain)."""
    if site is None:
        return False
    try:
        host = (urlsplit(url).hostname or "").rstrip(".")
    except ValueError:
        return False
    return host == site or (host.endswith("." + site) and subdomains_share_the_site(site))
