"""The article's title: `<title>` cut at its site-name separator, the JSON-LD headline, the lone
`<h1>`, and a heading that names the topic when the title is only the site's name (Readability.js
`_getArticleTitle`, then the modern web's cases).
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from ..parse.document import Document, indices_of
from ..parse.text import squash
from .tags import clean_value

# --- Title ----------------------------------------------------------------------------------------

_SEPARATORS = r"|\-–—\\/>»"
_SEPARATOR = re.compile(rf"\s[{_SEPARATORS}]\s")
_HIERARCHICAL = re.compile(r"\s[\\/>»]\s")
#: The title's first part, up to its first separator. Readability.js cuts at the first separator
#: character even inside a word ("Pour-over drippers | Bean & Burr" became "over drippers | …");
#: here the separator must stand between spaces, as `_SEPARATOR` already requires for the last cut.
_FIRST_PART = re.compile(rf"^.*?\s[{_SEPARATORS}]\s")


def _word_count(text: str) -> int:
    return len(re.split(r"\s+", text))


def clean_title(raw: str, doc: Document) -> str:
    """Readability.js's _getArticleTitle: cut the site name at a separator, or use the lone <h1>."""
    original = raw.strip()
    title = original
    hierarchical = False
    separators = list(_SEPARATOR.finditer(original))
    if separators:
        hierarchical = bool(_HIERARCHICAL.search(original))
        title = original[: separators[-1].start()]
        if _word_count(title) < 3:
            title = _FIRST_PART.sub("", original, count=1)
    elif ": " in title:
        headings = {h.text().strip() for h in doc.tree.css("h1, h2")}
        if title not in headings:
            title = original[original.rfind(":") + 1 :]
            if _word_count(title) < 3:
                title = original[original.find(":") + 1 :]
            elif _word_count(original[: original.find(":")]) > 5:
                title = original
    elif len(title) > 150 or len(title) < 15:
        h1s = doc.tree.css("h1")
        if len(h1s) == 1:
            title = clean_value(h1s[0].text()) or title
    title = squash(title)
    words = _word_count(title)
    if words <= 4 and (not hierarchical or words != _word_count(_SEPARATOR.sub("", original)) - 1):
        title = original
    return title


def _similarity(a: str, b: str) -> float:
    """Readability.js's _textSimilarity: 1 - share of b's (joined) words not found in a."""
    tokens_a = [t for t in re.split(r"\W+", a.lower()) if t]
    tokens_b = [t for t in re.split(r"\W+", b.lower()) if t]
    if not tokens_a or not tokens_b:
        return 0.0
    known = set(tokens_a)
    unique_b = [t for t in tokens_b if t not in known]
    return 1 - len(" ".join(unique_b)) / len(" ".join(tokens_b))


def ld_title(ld: dict[str, Any], doc: Document) -> str | None:
    """JSON-LD name or headline; when both exist and differ, the headline if only it matches <title>."""
    name, headline = ld.get("name"), ld.get("headline")
    if isinstance(name, str) and isinstance(headline, str) and name != headline:
        title = clean_title(doc.title, doc)
        if _similarity(headline, title) > 0.75 and not _similarity(name, title) > 0.75:
            return clean_value(headline)
        return clean_value(name)
    if isinstance(name, str):
        return clean_value(name)
    return clean_value(headline) if isinstance(headline, str) else None


_SITE_SEPARATOR = re.compile(r"\s+[|\-–—·•:»/]\s+|\s*[|·•»]\s*")


def _site_words(doc: Document, site_name: str | None) -> set[str]:
    """Lower-case word sets that name the site: its og:site_name and its host's labels."""
    words: set[str] = set()
    if site_name:
        words.add(re.sub(r"\W+", "", site_name.casefold()))
    host = (doc.url or "").split("//", 1)[-1].split("/", 1)[0].split(":", 1)[0].casefold()
    for label in host.split("."):
        if label not in ("www", "com", "org", "net", "co", "uk", "io", "de", "blog", "en"):
            words.add(label)
    return {w for w in words if len(w) > 2}


def without_site_name(title: str, doc: Document, site_name: str | None) -> str:
    """The title without the site's name at either end, whatever separates them ("X | GraphQL",
    "AWS CloudFormation - X", "X — Greenhouse Studio"): a part is the site's when its letters hold
    the site's name or a label of the page's host (or the reverse)."""
    parts = _SITE_SEPARATOR.split(title)
    if len(parts) < 2:
        return title
    site = _site_words(doc, site_name)

    def is_site(part: str) -> bool:
        letters = re.sub(r"\W+", "", part.casefold())
        return bool(letters) and any(w in letters or letters in w for w in site)

    separators = [m.group(0) for m in _SITE_SEPARATOR.finditer(title)]
    while len(parts) > 1 and is_site(parts[-1]):
        parts.pop()
        separators.pop()
    while len(parts) > 1 and is_site(parts[0]):
        parts.pop(0)
        separators.pop(0)
    kept = parts[0]
    for separator, part in zip(separators, parts[1:], strict=False):
        kept += separator + part
    return kept.strip() or title


def headline(title: str, doc: Document) -> str:
    """The page's own headline when it has one that says the same as the title: the first <h1>
    sharing most of its words with the title (the title is then the headline plus the site's
    name, or a shortened form of it)."""
    for node in doc.tree.css("h1")[:3]:
        text = squash(node.text(separator=" ") or "")
        if not 2 <= len(text) <= 200:
            continue
        if _similarity(title, text) >= 0.6 or _similarity(text, title) >= 0.6:
            return text
    return title


def _letters(text: str) -> str:
    """A name compared by its letters and digits alone, without case ("Vue.js" = "vuejs")."""
    return re.sub(r"\W+", "", text.casefold())


#: The marks of a heading's permalink, which documentation generators write into the heading.
_PERMALINK_MARKS = " ¶#§🔗⚓\u200b"


def _lone_heading(doc: Document) -> str | None:
    """The text of the page's one `<h1>` with text (2 to 200 characters, without a permalink's
    mark), or None when it has none or several."""
    found = None
    for index in indices_of(doc.tag, "h1"):
        text = squash(doc.element_text(index)).strip(_PERMALINK_MARKS)
        if not text:
            continue
        if found is not None:
            return None
        found = text
    return found if found is not None and 2 <= len(found) <= 200 else None


def heading_over_site_name(title: str, doc: Document, site_names: list[str | None]) -> str:
    """The page's one `<h1>` instead of a title that is only the site's name: documentation
    pages give every page the site's og:title ("Vue Router", "Vue.js") while the `<h1>` names the
    topic ("Getting Started").

    A title is the site's name when its letters are those of one of `site_names` (og:site_name,
    the JSON-LD publisher, the application-name), of a label of the page's host, or of the last
    part of the `<title>` split at its separators (where sites put their name) while the parts
    before it say what the `<h1>` says ("Getting Started | Vue Router"). The `<h1>` must be the
    page's only one and name something else (a logo's `<h1>` holding the site's name changes
    nothing), and the page not the site's home page, which its name rightly titles (measured on
    wcxb-dev: the first part of the `<title>` taken for the brand too, or home pages,
    took more right titles than they gave)."""
    key = _letters(title)
    path = urlsplit(doc.url or "").path if doc.url else ""
    if not key or path.strip("/") == "":  # a site's home page is rightly titled by its name
        return title
    heading = _lone_heading(doc)
    if heading is None or _letters(heading) == key:
        return title
    names = {_letters(name) for name in site_names if name}
    host = (doc.url or "").split("//", 1)[-1].split("/", 1)[0].split(":", 1)[0].casefold()
    names.update(label for label in host.split(".") if len(label) > 2)
    if key not in names:
        parts = [part.strip() for part in _SITE_SEPARATOR.split(doc.title or "") if part.strip()]
        rest = " ".join(parts[:-1])
        if (
            len(parts) < 2
            or _letters(parts[-1]) != key
            or (_similarity(rest, heading) < 0.6 and _similarity(heading, rest) < 0.6)
        ):
            return title
    return heading
