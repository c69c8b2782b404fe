"""Saved articles as files: EPUB 3 books (one article, or the whole list) and XHTML/HTML pages.

An EPUB is a ZIP (OCF): the `mimetype` file first and stored uncompressed, `META-INF/container.xml`
pointing at the package document (`EPUB/package.opf`: Dublin Core title, identifier, language and
`dcterms:modified`, the manifest and the spine), the navigation document (`EPUB/nav.xhtml`, a
`toc` nav), a stylesheet and one XHTML chapter per article. Written with the standard library.

The article's HTML (already sanitised by the engine) is rebuilt as well-formed XHTML (`xhtml`):
parsed by selectolax, then every element written by this module from an allowlist, with its text
and attribute values escaped for XML; scripts, styles, forms, frames, media and comments are
dropped, and so are ids and links within the page (a book checker wants each to resolve),
leaving their text. An EPUB may not load a remote image: the images the caller had made
(`pictures`, by their original address: `list_routes` has the image service make them as the
reader view showed them) are files of the book (`EPUB/images/`), any other is left out. Reader links
(`/read?url=…`) point at the original page again. Elements the allowlist does not know are
unwrapped (their content kept); an element where its parent cannot hold it (a list item outside a
list, a cell outside a row) becomes a paragraph or is unwrapped.
"""

from __future__ import annotations

import html
import io
import re
import time
import uuid
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, quote, urljoin, urlsplit

from selectolax.lexbor import LexborHTMLParser, LexborNode

if TYPE_CHECKING:
    from .readinglist import Entry

#: Elements written as they are (their allowed attributes in `ATTRIBUTES`).
BLOCKS = frozenset(
    "p h1 h2 h3 h4 h5 h6 ul ol li blockquote pre figure figcaption table caption thead tbody tfoot "
    "tr th td dl dt dd hr div section article aside header footer".split()
)
INLINE = frozenset("a em strong b i u s sub sup br code kbd samp var small mark abbr cite q del ins".split())
#: Dropped with their content.
DROPPED = frozenset(
    "script style noscript template iframe frame frameset object embed form input button select "
    "textarea option svg math canvas video audio source track map area head title "
    "link meta base dialog".split()
)
VOID = frozenset({"br", "hr"})
#: Attributes kept, by element.
ATTRIBUTES = {"a": ("href",), "th": ("colspan", "rowspan"), "td": ("colspan", "rowspan")}
#: Where an element may stand: its parent must be one of these (else `_misplaced`).
PARENTS = {
    "li": ("ul", "ol"),
    "dt": ("dl",),
    "dd": ("dl",),
    "tr": ("table", "thead", "tbody", "tfoot"),
    "td": ("tr",),
    "th": ("tr",),
    "thead": ("table",),
    "tbody": ("table",),
    "tfoot": ("table",),
    "caption": ("table",),
    "figcaption": ("figure",),
}
#: Children a container may hold directly (text outside these is dropped as whitespace).
CHILDREN = {
    "ul": ("li",),
    "ol": ("li",),
    "dl": ("dt", "dd"),
    "table": ("caption", "thead", "tbody", "tfoot", "tr"),
    "thead": ("tr",),
    "tbody": ("tr",),
    "tfoot": ("tr",),
    "tr": ("td", "th"),
}
#: Elements that hold phrasing content only: a block inside one is unwrapped.
PHRASING_ONLY = frozenset("p h1 h2 h3 h4 h5 h6 pre dt caption".split()) | INLINE
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
#: Characters a URL keeps as they are (`quote`): the reserved ones and `%` of escapes already made.
URL_SAFE = ":/?#[]@!$&'()*+,;=%~"
_LANG = re.compile(r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$")
XHTML_NS = "http://www.w3.org/1999/xhtml"
EPUB_NS = "http://www.idpf.org/2007/ops"
STYLESHEET = """body { font-family: serif; line-height: 1.5; margin: 0 5%; }
h1 { font-size: 1.5em; line-height: 1.25; }
p.meta { color: #555; font-size: 0.9em; }
blockquote { margin: 1em 1.5em; font-style: italic; }
pre { white-space: pre-wrap; font-size: 0.85em; }
table { border-collapse: collapse; }
th, td { border: 1px solid #999; padding: 0.2em 0.4em; }
"""


def text(value: str | None) -> str:
    """Text escaped for XML (and HTML), characters XML cannot hold left out."""
    return html.escape(_NOT_XML.sub("", value or ""), quote=True)


def language(value: object) -> str:
    """A BCP 47 tag for the book (`en` when the article's is missing or not one)."""
    return value if isinstance(value, str) and _LANG.match(value) else "en"


def _href(value: str, page_url: str) -> str | None:
    """A link's target in a book: absolute http(s) or mailto addresses; a reader link's original
    page; nothing for a link within the page or a relative one (it would not resolve)."""
    value = value.strip()
    if value.startswith("/read?"):
        value = dict(parse_qsl(urlsplit(value).query)).get("url", "")
    try:
        parts = urlsplit(value)
    except ValueError:
        return None
    if (parts.scheme in ("http", "https") and parts.netloc) or (parts.scheme == "mailto" and parts.path):
        return quote(value, safe=URL_SAFE)  # a space or a "<" written as a checker wants it
    return None


def _misplaced(tag: str, parent: str) -> str | None:
    """What to write for `tag` under `parent`: the tag itself, `p`, or None (unwrap)."""
    allowed = PARENTS.get(tag)
    if allowed is not None and parent not in allowed:
        return (
            "p"
            if tag in ("li", "dt", "dd", "td", "th", "figcaption", "caption") and parent not in PHRASING_ONLY
            else None
        )
    if parent in PHRASING_ONLY and tag in BLOCKS:
        return None
    if parent in CHILDREN and tag not in CHILDREN[parent]:
        return None
    if tag == "a" and parent == "a":
        return None
    return tag


@dataclass(frozen=True, slots=True)
class Picture:
    """An image in a book: its file name there (under `EPUB/images/`), media type and bytes."""

    name: str
    media_type: str
    body: bytes


#: Image types every reading system shows (EPUB 3's core media types, SVG left out: it can script).
PICTURE_TYPES = {"image/jpeg": "jpg", "image/png": "png", "image/gif": "gif", "image/webp": "webp"}


def image_sources(fragment: str, page_url: str = "") -> list[str]:
    """The absolute http(s) addresses of an article's images (`img` `src`), in order, once each."""
    found: list[str] = []
    tree = LexborHTMLParser(f"<body>{fragment}</body>")
    for node in tree.css("img"):
        url = _image_url(str(node.attributes.get("src") or ""), page_url)
        if url is not None and url not in found:
            found.append(url)
    return found


def _image_url(src: str, page_url: str) -> str | None:
    src = src.strip()
    if src.startswith("/image?"):  # a reader page's rendition: its original
        src = dict(parse_qsl(urlsplit(src).query)).get("url", "")
    url = urljoin(page_url, src) if page_url else src
    return url if urlsplit(url).scheme in ("http", "https") else None


@dataclass(frozen=True, slots=True)
class _Writing:
    page_url: str
    pictures: Mapping[str, Picture]


def xhtml(fragment: str, page_url: str = "", pictures: Mapping[str, Picture] | None = None) -> str:
    """An article's HTML as well-formed XHTML (see the module's docstring); an image whose address
    is in `pictures` points at its file in the book (`images/NAME`), any other is left out."""
    tree = LexborHTMLParser(f"<body>{fragment}</body>")
    out: list[str] = []
    if tree.body is not None:
        _write_children(tree.body, "body", out, _Writing(page_url, pictures or {}), inside_link=False)
    return "".join(out)


def _write_children(node: LexborNode, parent: str, out: list[str], ctx: _Writing, inside_link: bool) -> None:
    child = node.child
    while child is not None:
        _write(child, parent, out, ctx, inside_link)
        child = child.next


def _picture(node: LexborNode, parent: str, ctx: _Writing) -> str:
    """An `img` as the book shows it: its file in the book, with its alt text; else nothing."""
    url = _image_url(str(node.attributes.get("src") or ""), ctx.page_url)
    picture = ctx.pictures.get(url) if url is not None else None
    if picture is None or parent in CHILDREN:
        return ""
    alt = text(str(node.attributes.get("alt") or ""))
    return f'<img src="images/{picture.name}" alt="{alt}"/>'


def _write(node: LexborNode, parent: str, out: list[str], ctx: _Writing, inside_link: bool) -> None:
    tag = node.tag or ""
    if tag == "-text":
        if parent in CHILDREN:  # whitespace between rows or items
            return
        out.append(text(node.text_content))
        return
    if tag == "img":
        out.append(_picture(node, parent, ctx))
        return
    if tag.startswith("-") or tag in DROPPED:
        return
    if tag not in BLOCKS and tag not in INLINE:  # span, font, center, picture, …: the content alone
        if parent in CHILDREN:
            return
        _write_children(node, parent, out, ctx, inside_link)
        return
    shown: str | None = _misplaced(tag, parent)
    attributes = ""
    if shown == "a":
        target = _href(str(node.attributes.get("href") or ""), ctx.page_url)
        if target is None or inside_link:
            shown = None
        else:
            attributes = f' href="{text(target)}"'
    elif shown in ("td", "th"):
        for name in ATTRIBUTES[shown]:
            value = str(node.attributes.get(name) or "")
            if value.isdigit() and 0 < int(value) < 1000:
                attributes += f' {name}="{int(value)}"'
    if shown is None:
        if parent in CHILDREN:
            return
        _write_children(node, parent, out, ctx, inside_link)
        return
    if shown in VOID:
        out.append(f"<{shown}/>")
        return
    out.append(f"<{shown}{attributes}>")
    _write_children(node, shown, out, ctx, inside_link or shown == "a")
    out.append(f"</{shown}>")


def _head_lines(entry: Entry) -> str:
    """The chapter's heading: the title, then who and where from, and the original's address."""
    parts = [part for part in (entry.byline, entry.site, entry.published) if part]
    meta = f'<p class="meta">{text(" · ".join(parts))}</p>' if parts else ""
    source = _href(entry.url, entry.url)
    link = f'<p class="meta"><a href="{text(source)}">{text(source)}</a></p>' if source else ""
    return f"<h1>{text(entry.title)}</h1>{meta}{link}"


def article_xhtml_page(
    entry: Entry,
    *,
    html_document: bool = False,
    stylesheet: str | None = None,
    pictures: Mapping[str, Picture] | None = None,
) -> str:
    """One article as an XHTML chapter (for a book), or as a standalone HTML5 page
    (`html_document`, the `.html` export) with the stylesheet inline."""
    lang = language(entry.article.get("lang"))
    body = _head_lines(entry) + xhtml(str(entry.article.get("html") or ""), entry.url, pictures)
    if html_document:
        return (
            f'<!DOCTYPE html>\n<html lang="{lang}">\n<head>\n<meta charset="utf-8"/>\n'
            f"<title>{text(entry.title)}</title>\n<style>{STYLESHEET}</style>\n</head>\n"
            f"<body>\n{body}\n</body>\n</html>\n"
        )
    link = f'<link rel="stylesheet" type="text/css" href="{stylesheet}"/>' if stylesheet else ""
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE html>\n'
        f'<html xmlns="{XHTML_NS}" xmlns:epub="{EPUB_NS}" lang="{lang}" xml:lang="{lang}">\n'
        f'<head>\n<meta charset="utf-8"/>\n<title>{text(entry.title)}</title>\n{link}\n</head>\n'
        f"<body>\n{body}\n</body>\n</html>\n"
    )


CONTAINER = """<?xml version="1.0" encoding="UTF-8"?>
<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
  <rootfiles>
    <rootfile full-path="EPUB/package.opf" media-type="application/oebps-package+xml"/>
  </rootfiles>
</container>
"""


def epub_book(
    entries: Sequence[Entry],
    *,
    title: str,
    modified: float | None = None,
    pictures: Mapping[str, Picture] | None = None,
) -> bytes:
    """An EPUB 3 book of `entries` (one chapter each, in order) titled `title`, with the images
    in `pictures` (by their original address: `image_sources`) as files of its own."""
    pictures = pictures or {}
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() if modified is None else modified))
    identifier = f"urn:uuid:{uuid.uuid4()}"
    lang = language(entries[0].article.get("lang")) if entries else "en"
    chapters = [(f"article-{index + 1}.xhtml", entry) for index, entry in enumerate(entries)]
    toc = "".join(f'<li><a href="{name}">{text(entry.title)}</a></li>' for name, entry in chapters)
    if not chapters:  # a nav must list something: the book then has one empty chapter
        empty = (
            '<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE html>\n'
            f'<html xmlns="{XHTML_NS}" lang="en" xml:lang="en"><head><meta charset="utf-8"/>'
            f"<title>{text(title)}</title></head><body><h1>{text(title)}</h1><p>No articles.</p></body></html>\n"
        )
        toc = f'<li><a href="empty.xhtml">{text(title)}</a></li>'
    nav = (
        '<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE html>\n'
        f'<html xmlns="{XHTML_NS}" xmlns:epub="{EPUB_NS}" lang="{lang}" xml:lang="{lang}">\n'
        f'<head><meta charset="utf-8"/><title>{text(title)}</title></head>\n'
        f'<body><nav epub:type="toc" id="toc"><h1>{text(title)}</h1><ol>{toc}</ol></nav></body>\n</html>\n'
    )
    creators = sorted({entry.byline for entry in entries if entry.byline}) if len(entries) == 1 else []
    items = ['<item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>']
    items.append('<item id="css" href="style.css" media-type="text/css"/>')
    pages = {
        name: article_xhtml_page(entry, stylesheet="style.css", pictures=pictures) for name, entry in chapters
    }
    shown = [
        picture
        for picture in {p.name: p for p in pictures.values()}.values()
        if any(f'src="images/{picture.name}"' in page for page in pages.values())
    ]  # only the images a chapter shows
    for index, picture in enumerate(shown):
        items.append(
            f'<item id="i{index + 1}" href="images/{picture.name}" media-type="{picture.media_type}"/>'
        )
    spine = []
    names = [name for name, _ in chapters] or ["empty.xhtml"]
    for index, name in enumerate(names):
        items.append(f'<item id="c{index + 1}" href="{name}" media-type="application/xhtml+xml"/>')
        spine.append(f'<itemref idref="c{index + 1}"/>')
    sources = "".join(
        f"<dc:source>{text(entry.url)}</dc:source>" for entry in entries[:1] if len(entries) == 1
    )
    package = (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        f'<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="uid" xml:lang="{lang}">\n'
        '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/">\n'
        f'<dc:identifier id="uid">{identifier}</dc:identifier>\n'
        f"<dc:title>{text(title)}</dc:title>\n"
        f"<dc:language>{lang}</dc:language>\n"
        + "".join(f"<dc:creator>{text(name)}</dc:creator>\n" for name in creators)
        + sources
        + f'<meta property="dcterms:modified">{stamp}</meta>\n'
        "</metadata>\n"
        f"<manifest>\n{''.join(items)}\n</manifest>\n"
        f"<spine>\n{''.join(spine)}\n</spine>\n"
        "</package>\n"
    )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as book:
        book.writestr(zipfile.ZipInfo("mimetype"), "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        deflated = zipfile.ZIP_DEFLATED
        book.writestr("META-INF/container.xml", CONTAINER, compress_type=deflated)
        book.writestr("EPUB/package.opf", package, compress_type=deflated)
        book.writestr("EPUB/nav.xhtml", nav, compress_type=deflated)
        book.writestr("EPUB/style.css", STYLESHEET, compress_type=deflated)
        for name, page in pages.items():
            book.writestr(f"EPUB/{name}", page, compress_type=deflated)
        for picture in shown:  # already compressed: stored as they are
            book.writestr(f"EPUB/images/{picture.name}", picture.body, compress_type=zipfile.ZIP_STORED)
        if not chapters:
            book.writestr("EPUB/empty.xhtml", empty, compress_type=deflated)
    return buffer.getvalue()
