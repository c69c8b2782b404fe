"""`--public-url`: the address people reach the server by, behind a reverse proxy.

Behind TLS on `https://reader.example/`, the address the server listens on (`127.0.0.1:8080`) is
no use to a browser: the bookmarklet, the PAC file, the setup page and every link must name the
public one. With a path prefix (`https://example.org/reader/`) the reverse proxy strips the prefix
before it passes a request on (nginx `location /reader/ { proxy_pass http://127.0.0.1:8080/; }`,
HAProxy `http-request replace-path /reader(/.*) \\1`), so the server's routes stay where they are,
and the pages it makes put the prefix back in front of their root-relative links (`rooted`).

The templates and the proxy's rewriting of reader views (`proxy/addons.same_origin_links`) keep
speaking root-relative links: the prefix is added to a finished page, once, by the reader server's
`Renderer` (`Renderer.root`), never by the proxy's copy of it, whose pages live on
`http://readerproxy/` and on the sites' own origins.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit


@dataclass(frozen=True)
class PublicURL:
    """`--public-url`, split: `origin` (`https://reader.example`, a port only when not the
    scheme's) and `prefix` (`""` or `/reader`, no final slash)."""

    scheme: str
    host: str  # the host name, or an IPv6 literal without brackets
    port: int | None
    prefix: str

    @property
    def origin(self) -> str:
        shown = f"[{self.host}]" if ":" in self.host else self.host
        default = 443 if self.scheme == "https" else 80
        return f"{self.scheme}://{shown}" + (f":{self.port}" if self.port and self.port != default else "")

    @property
    def base(self) -> str:
        """Origin and prefix: what a route's path is appended to (`base + "/read?url=…"`)."""
        return self.origin + self.prefix

    def url(self, path: str) -> str:
        """The public URL of a root-relative `path` of the server."""
        return self.base + path

    @property
    def cookie_path(self) -> str:
        return self.prefix or "/"


_PREFIX_CHARS = re.compile(r"^(/[A-Za-z0-9._~!$&'()*+,;=:@%-]+)*/?$")


def parse_public_url(value: str | None) -> PublicURL | None:
    """`https://reader.example/` or `https://example.org/reader/` as a `PublicURL`; None when not
    set; ValueError saying what is wrong (not http(s), no host, a query, a fragment, a login, a
    path with characters a link would have to escape)."""
    if not value or not value.strip():
        return None
    text = value.strip()
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise ValueError(f"--public-url {text!r} is not a URL ({exc})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"--public-url {text!r} must be an absolute http:// or https:// URL with a host")
    if parts.query or parts.fragment or "#" in text or "?" in text:
        raise ValueError(f"--public-url {text!r} must have no query or fragment")
    if parts.username is not None or parts.password is not None:
        raise ValueError(f"--public-url {text!r} must not carry a login")
    path = parts.path or "/"
    if not _PREFIX_CHARS.match(path) or "/./" in path + "/" or "/../" in path + "/":
        raise ValueError(f"--public-url {text!r}: its path must be a plain prefix like /reader/")
    return PublicURL(parts.scheme, parts.hostname.lower(), port, path.rstrip("/"))


#: A root-relative URL in an attribute of our own pages: `href="/…"`, not `href="//host…"`.
_ROOT_ATTRIBUTE = re.compile(r'(\s(?:href|src|action|formaction|poster)=")/(?!/)')
#: `srcset="/image?… 480w, /image?… 960w"` (images.route_images): each candidate.
_SRCSET = re.compile(r'(\ssrcset=")([^"]*)"')
_SRCSET_ITEM = re.compile(r"(^|,\s*)/(?!/)")


def rooted(page: str, prefix: str) -> str:
    """`page` with `prefix` in front of each root-relative link of its attributes (and of each
    candidate of a srcset), and `data-root` on `<html>` for static/reader.js (its cookies' path and
    its own links). Only our own pages pass through here: their article links are absolute or
    through `/read`, already rewritten by `templating.link_rewriter`."""
    if not prefix:
        return page
    page = _ROOT_ATTRIBUTE.sub(lambda m: f"{m[1]}{prefix}/", page)
    page = _SRCSET.sub(lambda m: f'{m[1]}{_SRCSET_ITEM.sub(lambda c: f"{c[1]}{prefix}/", m[2])}"', page)
    return page.replace("<html", f'<html data-root="{prefix}"', 1)


def public_of(settings: object) -> PublicURL | None:
    """`--public-url` of a `Settings` (already checked by `load_settings`; None when unset)."""
    return parse_public_url(getattr(settings, "public_url", "") or None)
