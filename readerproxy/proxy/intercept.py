"""Which CONNECT tunnels `--intercept-https` decrypts, and which it leaves as plain tunnels.

After mitmproxy's `--allow-hosts` / `--ignore-hosts`: `intercept_hosts` (`--intercept-hosts`) limits
interception to the hosts it matches, `ignore_hosts` (`--ignore-hosts`) excludes the hosts it matches,
and a host in `direct_hosts` (never the reader view) is never decrypted either: each of those goes
through an opaque TCP tunnel, so the browser sees the site's own certificate.

A pattern is matched against the CONNECT target's host and `host:port`, case-insensitively:

- a **glob** when it is made of letters, digits, `.`, `-`, `_`, `:` and the wildcards `*` and `?`
  only: `bank.example` matches that host and its subdomains (as `direct_hosts` does),
  `*.bank.example` the subdomains only, `bank.example:8443` that port only;
- otherwise a **regular expression**, searched (as mitmproxy does) in `host:port`:
  `^(.+\\.)?bank\\.example:443$`, `\\.gov(\\.[a-z]+)?:`.

On the command line and in environment variables, several patterns are separated by commas or
spaces; a regex that needs a comma goes in the config file's list (`ignore_hosts = ["…"]`).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

_GLOB = re.compile(r"^[A-Za-z0-9.\-_:*?]+$")


def split_patterns(value: object) -> tuple[str, ...]:
    """Patterns from a config value: a list as it is, a string split on commas and whitespace."""
    if isinstance(value, str):
        items: Iterable[object] = re.split(r"[,\s]+", value)
    elif isinstance(value, list | tuple):
        items = value
    else:
        items = ()
    return tuple(str(item).strip() for item in items if str(item).strip())


@dataclass(frozen=True)
class HostPattern:
    """One pattern of `--intercept-hosts` / `--ignore-hosts` (a glob or a regex, see the module)."""

    text: str
    regex: re.Pattern[str] | None  # None: a glob

    @classmethod
    def parse(cls, text: str) -> HostPattern:
        """The pattern; ValueError for a regex that does not compile."""
        if _GLOB.match(text):
            return cls(text.lower().lstrip("."), None)
        try:
            return cls(text, re.compile(text, re.IGNORECASE))
        except re.error as exc:
            raise ValueError(f"host pattern {text!r} is neither a glob nor a valid regex: {exc}") from None

    def matches(self, host: str, port: int) -> bool:
        host = host.lower().rstrip(".")
        address = f"{host}:{port}"
        if self.regex is not None:
            return self.regex.search(address) is not None
        glob = self.text
        if "*" in glob or "?" in glob:
            return fnmatch.fnmatchcase(host, glob) or fnmatch.fnmatchcase(address, glob)
        if ":" in glob:
            name, _, glob_port = glob.rpartition(":")
            return glob_port == str(port) and (host == name or host.endswith("." + name))
        return host == glob or host.endswith("." + glob)


def parse_patterns(value: object) -> tuple[HostPattern, ...]:
    return tuple(HostPattern.parse(text) for text in split_patterns(value))


@dataclass(frozen=True)
class InterceptPolicy:
    """Whether a CONNECT to host:port is decrypted (`intercepts`) or tunnelled as it is."""

    only: tuple[HostPattern, ...] = ()  # empty: every host not excluded
    ignore: tuple[HostPattern, ...] = ()
    direct: tuple[str, ...] = ()  # `direct_hosts`: names matching themselves and their subdomains

    @classmethod
    def from_settings(
        cls, intercept_hosts: object, ignore_hosts: object, direct_hosts: Sequence[str]
    ) -> InterceptPolicy:
        """The policy from the settings' values; ValueError for a pattern that does not compile."""
        return cls(parse_patterns(intercept_hosts), parse_patterns(ignore_hosts), tuple(direct_hosts))

    def intercepts(self, host: str, port: int) -> bool:
        name = host.lower().rstrip(".")
        if any(name == d or name.endswith("." + d) for d in self.direct):
            return False
        if any(pattern.matches(host, port) for pattern in self.ignore):
            return False
        return not self.only or any(pattern.matches(host, port) for pattern in self.only)
