"""Ad and tracker hosts refused by the proxy (`--block-hosts`, `--block-lists`).

A request through the proxy for a blocked host gets at once a 403 with a one-line reason (as a small
page when it is a navigation, which a person reads), counted on `/metrics` as outcome `blocked`.
Pages themselves are not changed: their requests for blocked hosts simply fail, as with a DNS
blocklist (Pi-hole) or uBlock Origin's host rules.

A CONNECT to a blocked host that the proxy would intercept (`--intercept-https`, the host not
spared) is accepted, with no connection to the site, and the requests inside the TLS connection
get the same 403: a browser shows no answer to a CONNECT but its own error
("This site can't be reached", ERR_TUNNEL_CONNECTION_FAILED), so a person would not learn why.
A CONNECT the proxy would not intercept gets the 403 itself, and no tunnel is opened.

- `block_hosts`: patterns as `--ignore-hosts` takes them (`intercept.HostPattern`): a name matches
  itself and its subdomains (`doubleclick.net`), a glob (`ads.*.example`), else a regex searched in
  `host:port`.
- `block_lists`: files of host names, in the formats host lists come in: a hosts file
  (`0.0.0.0 ads.example` or `127.0.0.1 ads.example`, as StevenBlack's and Peter Lowe's lists), a
  plain domain list (one name a line), or Adblock Plus / uBlock host rules (`||ads.example^`, with
  no options or only `$important`, `$all`, `$document`, `$third-party`/`$3p`), as in EasyList's and
  uBlock's host lists. Comments (`#`, `!`), headers (`[Adblock Plus 2.0]`), exceptions (`@@…`),
  rules with paths or other options, and local names (`localhost`, `0.0.0.0`) are skipped: a host
  list blocks hosts, nothing else. Each name blocks itself and its subdomains.

Lookups are one set probe per label of the host (`ads.cdn.example` tries `ads.cdn.example`,
`cdn.example`, `example`), so lists of hundreds of thousands of names cost nothing per request.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from html import escape as html_escape
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from .addons import SETUP_HOSTS, Addon, is_navigation, simple_response
from .flow import Flow, Outcome, valid_host
from .intercept import HostPattern, split_patterns

if TYPE_CHECKING:
    from .settings import Settings

log = logging.getLogger("readerproxy.proxy")

#: Names of this machine that hosts files map and that are never blocked.
LOCAL_NAMES = frozenset(
    {
        "localhost",
        "localhost.localdomain",
        "local",
        "broadcasthost",
        "ip6-localhost",
        "ip6-loopback",
        "0.0.0.0",
        "127.0.0.1",
        "::1",
    }
)
#: Adblock rule options that still mean "block this host".
HOST_RULE_OPTIONS = frozenset({"important", "all", "document", "doc", "third-party", "3p"})
_ADBLOCK_HOST = re.compile(r"^\|\|([a-z0-9.\-_*]+)\^(?:\$([a-z0-9,\-]+))?$")
_HOSTS_ADDRESS = re.compile(r"^(?:0\.0\.0\.0|127\.0\.0\.1|::1?|0)$")
#: The longest line read from a list file (bytes): a hosts line with a few names is under 300.
MAX_LINE = 4096
#: The longest host name (RFC 1035), checked before the name is IDNA-encoded.
MAX_NAME = 253
#: The characters a host name of a list may have before IDNA has a look: letters and digits of any
#: script, '-', '_' and '.'; never a control, punctuation or U+FFFD (a byte that was not UTF-8).
_NAME_CHARS = re.compile(r"[\w.-]+")


@dataclass(frozen=True)
class ParsedList:
    """The host names one list file gives, and how many of its lines were rules it could not use."""

    hosts: frozenset[str]
    skipped: int


def parse_host_list(lines: Iterable[str]) -> ParsedList:
    """Host names from the lines of a hosts file, a domain list or Adblock host rules (see the
    module); lines that are none of these, or not host names, are counted as skipped.

    For speed and memory on a hostile or broken file: a line longer than `MAX_LINE` is skipped
    unread, and a name is checked for its length (`MAX_NAME`) and its characters (`_NAME_CHARS`:
    no control, punctuation or replacement character) before `valid_host` encodes it with IDNA,
    which is pure Python and slow: one 50 MB non-ASCII line took 112 s and 2.58 GB, 50 MB of
    random bytes 61 s. No real host name fails those checks and passes IDNA (a name whose Unicode
    form is past 253 characters is past it in ASCII too, unless nameprep deletes characters)."""
    hosts: set[str] = set()
    skipped = 0
    for raw in lines:
        if len(raw) > MAX_LINE:
            skipped += 1
            continue
        line = raw.strip()
        if not line or line[0] in "#!" or line.startswith("["):
            continue
        names: list[str]
        if line.startswith("||"):
            match = _ADBLOCK_HOST.match(line.lower())
            options = set((match.group(2) or "").split(",")) - {""} if match else set()
            if match is None or "*" in match.group(1) or not options <= HOST_RULE_OPTIONS:
                skipped += 1
                continue
            names = [match.group(1)]
        else:
            fields = line.split("#", 1)[0].split()
            if not fields:
                continue
            if len(fields) > 1 and _HOSTS_ADDRESS.match(fields[0]):
                names = fields[1:]  # a hosts file line: the address, then one or more names
            elif len(fields) == 1:
                names = fields  # a domain list line
            else:
                skipped += 1
                continue
        for name in names:
            host = name.lower().rstrip(".")
            if host in LOCAL_NAMES:
                continue
            if (
                len(host) <= MAX_NAME
                and "." in host
                and _NAME_CHARS.fullmatch(host)
                and valid_host(host, allow_underscore=True)
            ):
                hosts.add(host)
            else:
                skipped += 1
    return ParsedList(frozenset(hosts), skipped)


def read_host_list(path: Path) -> ParsedList:
    """A list file parsed (`parse_host_list`); ValueError naming the file when it cannot be read.

    Read a line at a time, at most `MAX_LINE` bytes of each kept (`_lines`), so a file of one
    endless line costs no more memory than a line of a real list."""
    try:
        with path.expanduser().open("rb") as file:
            return parse_host_list(_lines(file))
    except OSError as exc:
        raise ValueError(f"cannot read block list {path}: {exc.strerror or exc}") from None


def _lines(file: BinaryIO) -> Iterator[str]:
    """The file's lines (split at LF, CR LF or CR), decoded as UTF-8 with errors replaced; a line
    longer than `MAX_LINE` bytes is given as a marker `parse_host_list` skips, its rest read past
    in bounded pieces."""
    too_long = "\0" * (MAX_LINE + 1)
    while True:
        chunk = file.readline(MAX_LINE + 1)
        if not chunk:
            return
        if len(chunk) > MAX_LINE and not chunk.endswith(b"\n"):
            while (rest := file.readline(MAX_LINE + 1)) and not rest.endswith(b"\n"):
                pass
            yield too_long
            continue
        for part in chunk.split(b"\r"):
            yield part.decode("utf-8", errors="replace")


@dataclass(frozen=True)
class Blocklist:
    """Blocked host names (each with its subdomains) and patterns; `reason` says why a host is."""

    names: frozenset[str] = frozenset()
    patterns: tuple[HostPattern, ...] = ()
    sources: tuple[str, ...] = field(default=())  # what it was made from, for the start-up log

    @classmethod
    def from_settings(cls, block_hosts: object, block_lists: object) -> Blocklist:
        """From `block_hosts` (patterns) and `block_lists` (files); ValueError for a file that
        cannot be read or a pattern that does not compile."""
        names: set[str] = set()
        patterns: list[HostPattern] = []
        for text in split_patterns(block_hosts):
            pattern = HostPattern.parse(text)
            if pattern.regex is None and not any(c in pattern.text for c in "*?:"):
                names.add(pattern.text.rstrip("."))  # a plain name: the fast set lookup
            else:
                patterns.append(pattern)
        sources = []
        for item in split_patterns(block_lists):
            parsed = read_host_list(Path(item))
            names |= parsed.hosts
            sources.append(f"{item}: {len(parsed.hosts)} hosts, {parsed.skipped} rules skipped")
        return cls(frozenset(names), tuple(patterns), tuple(sources))

    def __bool__(self) -> bool:
        return bool(self.names or self.patterns)

    def reason(self, host: str, port: int) -> str | None:
        """Why `host` is blocked (the list entry or pattern that matches), or None."""
        name = host.lower().rstrip(".")
        if name in SETUP_HOSTS:
            return None
        labels = name.split(".")
        for i in range(len(labels)):
            suffix = ".".join(labels[i:])
            if suffix in self.names:
                return suffix
        for pattern in self.patterns:
            if pattern.matches(name, port):
                return pattern.text
        return None


#: The note of a CONNECT to a blocked host that is intercepted to say so (`BlocklistAddon`): the
#: rule that blocks it. The core then opens no connection to the site.
BLOCKED_TUNNEL = "blocked_tunnel"


class BlocklistAddon(Addon):
    """403 at once, with a one-line reason, for a request (or CONNECT) to a blocked host; a CONNECT
    the proxy intercepts is let in so that the 403 can be read inside it (module docstring)."""

    def __init__(self, blocklist: Blocklist, intercepts: Callable[[str, int], bool] | None = None) -> None:
        self.blocklist = blocklist
        self.intercepts = intercepts  # whether a CONNECT to host:port is intercepted; None: never

    @classmethod
    def from_settings(
        cls, settings: Settings, intercepts: Callable[[str, int], bool] | None = None
    ) -> BlocklistAddon:
        blocklist = Blocklist.from_settings(settings.block_hosts, settings.block_lists)
        for source in blocklist.sources:
            log.info("block list %s", source)
        return cls(blocklist, intercepts)

    async def request(self, flow: Flow) -> None:
        if not self.blocklist:
            return
        request = flow.request
        rule = self.blocklist.reason(request.host, request.port)
        if rule is None:
            return
        if (
            request.method == "CONNECT"
            and self.intercepts is not None
            and self.intercepts(request.host, request.port)
        ):
            flow.notes[BLOCKED_TUNNEL] = rule  # answered inside the TLS connection, request by request
            return
        reason = f"Blocked by readerproxy: {request.host} is on the block list ({rule})."
        if is_navigation(flow):  # a person reads it: a page that fits a phone's screen
            flow.response = simple_response(
                403, "Forbidden", blocked_page(reason), BLOCKED_PAGE_HEADERS, "text/html; charset=utf-8"
            )
        else:
            flow.response = simple_response(403, "Forbidden", reason + "\n", [("Cache-Control", "no-store")])
        flow.outcome = Outcome.BLOCKED


BLOCKED_PAGE_HEADERS = [
    ("Cache-Control", "no-store"),
    ("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'"),
    ("X-Content-Type-Options", "nosniff"),
]


def blocked_page(reason: str) -> str:
    """The one-line refusal as a small page, readable at 375 px (no script, nothing loaded)."""
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1"><title>Blocked</title>'
        "<style>body{font:1.1rem/1.5 system-ui,sans-serif;margin:2rem 1rem;color:#222;"
        "overflow-wrap:anywhere}</style></head>"
        f"<body><p>{html_escape(reason)}</p></body></html>\n"
    )
