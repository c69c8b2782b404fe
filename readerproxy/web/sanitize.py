"""What the overlay lets through of a page, in one place for review: the page's HTML, its URLs,
its CSS, and the Content-Security-Policy that holds the rest.

- HTML: `PAGE_TAGS` and `PAGE_ATTRIBUTES`, nh3's allowlist for the marked page body (`clean_page`:
  no script, event handler, frame, object or form; URLs of `SAFE_SCHEMES` and `data:` only). The
  reader view's own allowlist is the engine's (`engine.output`'s nh3 `Cleaner`): the article
  HTML is sanitised there, where the library's callers get it too.
- URLs: `safe_url`, `safe_image_url`, `fragment_url`, `safe_srcset` make every URL absolute under
  the engine's policy (`engine.urls`: http(s), mailto, tel, and `data:image/` for images).
- Sites: `page_site` (from `engine.urls`) is the registrable domain by the Public Suffix List
  (`www.bbc.co.uk` is `bbc.co.uk`, never `co.uk`); `same_site` compares against it.
- CSS: `safe_css` and `page_styles` keep a page's stylesheets but no `url()`, `@import` or font
  from another site, whatever CSS escapes spell them.
- CSP: `overlay_csp`, `frame_csp` and `FILE_CSP`: no script at all; styles and fonts from the
  page's site only; images from anywhere, as in the reader view.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

import nh3
from selectolax.lexbor import LexborHTMLParser

from ..engine.parse.document import Document
from ..engine.urls import SAFE_SCHEMES, page_site, parse_srcset, same_site, subdomains_share_the_site
from ..engine.urls import safe_url as policy_url

#: Tags allowed in the overlay's page body (everything else is unwrapped by nh3, text kept).
PAGE_TAGS = frozenset(
    "a abbr address article aside b bdi bdo big blockquote br button caption center cite code col colgroup "
    "data dd del details dfn div dl dt em fieldset figcaption figure font footer h1 h2 h3 h4 h5 h6 header "
    "hgroup hr i img input ins kbd label legend li main mark menu meter nav ol optgroup option output p "
    "picture pre progress q rp rt ruby s samp section select small source span strike strong sub summary "
    "sup table tbody td textarea tfoot th thead time tr tt u ul var wbr".split()
)
PAGE_ATTRIBUTES = {
    "*": {
        "class",
        "id",
        "style",
        "title",
        "lang",
        "dir",
        "role",
        "width",
        "height",
        "align",
        "valign",
        "bgcolor",
        "color",
        "border",
        "cellpadding",
        "cellspacing",
        "face",
        "size",
    },
    "a": {"href", "name"},
    "img": {"src", "srcset", "sizes", "alt", "loading", "decoding"},
    "source": {"srcset", "media", "type", "sizes"},
    "td": {"colspan", "rowspan", "headers", "nowrap"},
    "th": {"colspan", "rowspan", "scope", "abbr", "nowrap"},
    "col": {"span"},
    "colgroup": {"span"},
    "ol": {"start", "reversed", "type"},
    "ul": {"type"},
    "li": {"value"},
    "span": {"tabindex"},
    "time": {"datetime"},
    "blockquote": {"cite"},
    "q": {"cite"},
    "details": {"open"},
    "input": {"type", "value", "placeholder", "checked", "disabled", "name", "size"},
    "button": {"type", "disabled"},
    "option": {"value", "selected"},
    "select": {"multiple"},
    "textarea": {"rows", "cols", "placeholder"},
    "progress": {"value", "max"},
    "meter": {"value", "min", "max"},
    "data": {"value"},
}
URL_ATTRIBUTES = frozenset({"href", "src", "srcset", "cite", "background", "poster"})
_CSS_URL = re.compile(r"""url\(\s*(['"]?)([^'")]*)\1\s*\)""", re.I)
_CSS_IMPORT = re.compile(r"""@import\s+(['"])([^'"]*)\1""", re.I)
#: A CSS escape of a character that can spell a function name, scheme or URL (CSS Syntax 3, 4.3.7).
_CSS_ESCAPE = re.compile(r"\\(?:([0-9a-fA-F]{1,6})[ \t\n\r\f]?|([A-Za-z0-9:/.@()-]))")
#: A quoted string holding an absolute or scheme-relative URL (image-set(), @font-face src, …).
_CSS_STRING_URL = re.compile(r"""(['"])\s*((?:[A-Za-z][A-Za-z0-9+.-]*:)?//[^'"]*)\1""")
_CSS_SPELLING = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:/.@()-")


def base_url(doc: Document) -> str | None:
    """The page's base for relative URLs: its <base> when that is http(s), else its own address."""
    base = doc.base_url
    if base and urlsplit(base).scheme.lower() in ("http", "https"):
        return base
    return doc.url


def safe_url(value: str, base: str | None) -> str | None:
    """`value` made absolute on `base` under the engine's URL policy (`urls.safe_url`; a URL that
    stays relative is refused); a same-page link ("#x") is kept as it is."""
    value = value.strip()
    if not value or value.startswith("#"):
        return value or None
    try:
        absolute = urljoin(base, value) if base else value
    except ValueError:
        return None
    return policy_url(absolute, relative=False)


def safe_image_url(value: str, base: str | None) -> str | None:
    if value.strip().lower().startswith("data:image/"):
        return value.strip()
    return safe_url(value, base)


def fragment_url(fragment: str, base: str | None) -> str | None:
    """A same-page link (`#x`) made absolute on the page's own address (None without one)."""
    try:
        absolute = urljoin(base, fragment) if base else ""
        scheme = urlsplit(absolute).scheme.lower()
    except ValueError:
        return None
    return absolute if scheme in ("http", "https") else None


def safe_srcset(value: str, base: str | None) -> str | None:
    items = []
    for candidate, descriptors in parse_srcset(value):  # the one srcset parser (engine.output)
        url = safe_image_url(candidate, base)
        if url:
            items.append(f"{url} {descriptors}".strip())
    return ", ".join(items) or None


# --------------------------------------------------------------------------------------------
# The page's own stylesheets.


def _unescape_css(css: str) -> str:
    """CSS escapes of letters, digits and URL punctuation written out, so `\\75rl(` is seen as `url(`;
    other escapes (quotes, typographic characters in `content`) stay as they are."""

    def plain(match: re.Match[str]) -> str:
        char = chr(int(match[1], 16)) if match[1] and int(match[1], 16) < 0x110000 else match[2]
        return char if char and char in _CSS_SPELLING else match[0]

    return _CSS_ESCAPE.sub(plain, css)


@dataclass(frozen=True, slots=True)
class Stylesheet:
    href: str | None = None  # a linked stylesheet, absolute
    css: str | None = None  # an inline <style> body, made safe to inline
    media: str | None = None


def safe_css(css: str, base: str | None, site: str | None = None) -> str:
    """A style element's body (or style attribute) that cannot close its element and loads nothing
    from another site: relative URLs made absolute, `url()` and `@import` of other sites emptied,
    quoted absolute URLs of other sites (`image-set()`, `src:`) blanked, escapes read first."""

    def allowed(url: str | None) -> bool:
        return (
            bool(url)
            and '"' not in (url or "")
            and ((url or "").startswith("data:") or same_site(url or "", site))
        )

    def absolute(match: re.Match[str]) -> str:
        url = safe_image_url(match[2], base) if match[2] else None
        return f'url("{url}")' if allowed(url) else "url()"

    def imported(match: re.Match[str]) -> str:
        url = safe_url(match[2], base)
        return f'@import "{url}"' if allowed(url) else "@import url()"

    def quoted(match: re.Match[str]) -> str:
        url = safe_url(match[2], base)
        return match[0] if allowed(url) else '""'

    css = _unescape_css(css)
    css = _CSS_URL.sub(absolute, css)
    css = _CSS_IMPORT.sub(imported, css)
    css = _CSS_STRING_URL.sub(quoted, css)
    return css.replace("<", "\\3C ")


def page_styles(text: str, base: str | None, site: str | None = None) -> list[Stylesheet]:
    """The page's stylesheets in document order: linked (http/https, on the page's `site`) and
    inline (made safe, loading nothing from other sites)."""
    tree = LexborHTMLParser(text)
    out: list[Stylesheet] = []
    for node in tree.css('link[rel~="stylesheet" i][href], style'):
        if node.tag == "style":
            media = node.attributes.get("media")
            out.append(Stylesheet(css=safe_css(node.text(), base, site), media=media))
        else:
            href = safe_url(node.attributes.get("href") or "", base)
            if href and urlsplit(href).scheme in ("http", "https") and same_site(href, site):
                out.append(Stylesheet(href=href, media=node.attributes.get("media")))
    return out[:50]


#: The CSP of an overlay page: no script at all. The page's frame (`srcdoc`) inherits this policy, so
#: it also allows what the page needs there: its styles, fonts and images.
OVERLAY_CSP = (
    "default-src 'none'; script-src 'none'; style-src 'self' 'unsafe-inline' http: https:; "
    "img-src http: https: data:; font-src http: https: data:; form-action 'self'; base-uri 'none'; "
    "frame-ancestors 'none'; frame-src 'none'; object-src 'none'"
)
#: The frame's own policy (a <meta> in its srcdoc, enforced on top of the inherited one): nothing of
#: readerproxy's ('self' is not there), no script, no form, no frame, no base.
FRAME_CSP = (
    "default-src 'none'; script-src 'none'; style-src 'unsafe-inline' http: https:; "
    "img-src http: https: data:; font-src http: https: data:; form-action 'none'; base-uri 'none'; "
    "frame-src 'none'; object-src 'none'"
)


def _site_sources(url: str | None) -> str:
    """CSP sources of a page's site (its host and subdomains, any port), or "" without one."""
    site = page_site(url)
    if site is None or not re.fullmatch(r"[a-z0-9.-]+", site):
        return ""
    sources = f" http://{site}:* https://{site}:*"
    if subdomains_share_the_site(site):
        sources += f" http://*.{site}:* https://*.{site}:*"
    return sources


def _for_site(policy: str, url: str | None) -> str:
    sources = _site_sources(url)
    return policy.replace("'unsafe-inline' http: https:;", f"'unsafe-inline'{sources};").replace(
        "font-src http: https: data:", f"font-src{sources} data:"
    )


def overlay_csp(url: str | None) -> str:
    """The overlay CSP for a page: no script; stylesheets and fonts only from the page's site (so a
    stylesheet kept from the page cannot `@import` or load fonts from elsewhere); images from
    anywhere, as in the reader view."""
    return _for_site(OVERLAY_CSP, url)


def frame_csp(url: str | None) -> str:
    """The frame's own CSP for a page: the page's inline styles, stylesheets and fonts from its
    site, images from anywhere; nothing else."""
    return _for_site(FRAME_CSP, url)


#: The CSP of an overlay written to a file (a <meta>, where frame-ancestors has no effect): no
#: script, no form.
FILE_CSP = OVERLAY_CSP.replace("form-action 'self'", "form-action 'none'").replace(
    "frame-ancestors 'none'; ", ""
)


def clean_page(fragment: str) -> str:
    """The marked page body through nh3 with the overlay's allowlist (see the module)."""
    return nh3.clean(
        fragment,
        tags=set(PAGE_TAGS),
        clean_content_tags={"script", "style"},
        attributes={key: set(values) for key, values in PAGE_ATTRIBUTES.items()},
        generic_attribute_prefixes={"data-rpo-", "aria-"},
        url_schemes=set(SAFE_SCHEMES) | {"data"},
        link_rel="noopener noreferrer",
        set_tag_attribute_values={"a": {"target": "_top"}},  # refused by the sandbox: a tap stays
        strip_comments=True,
    )
