"""The byline and the author's name alone: from JSON-LD `author` (object, list or Text), a thread's
starter, `<meta>`, link previews' "Written by", author markup and the bylines shown around the
headline; a person before an organisation, never a reviewer's or a commenter's name
(Readability.js `_checkByline`, then `author_names`).
"""

from __future__ import annotations

import functools
import html as html_lib
import itertools
import re
import string
from collections.abc import Callable
from typing import Any

from ..kind.readability_rules import UNLIKELY_ROLES, unlikely_by_class_id
from ..parse.document import Document, indices_of
from ..parse.text import join_runs, runs_hit, squash
from ..schema import ld_people, page_objects
from ..views.thread import MIN_POSTS, Post, detect_engine, read_thread
from .dates import headline_texts, meta_contents, parse_day
from .tags import clean_value

#: Class or id words (and `rel`/`itemprop` values) that hint at a byline.
BYLINE_HINT = re.compile(r"byline|author|dateline|writtenby|p-author", re.I)


# --- Byline from the page -------------------------------------------------------------------------


#: The words whose presence in a class or id (in any ASCII case) marks a byline candidate.
_BYLINE_WORDS = ("byline", "author", "dateline", "writtenby")
_BYLINE_SELECTOR = ", ".join(
    ['[rel="author"]', '[itemprop*="author"]']
    + [f'[{attr}*="{hint}" i]' for attr in ("class", "id") for hint in _BYLINE_WORDS]
)
#: The part of `_BYLINE_SELECTOR` that reads attributes the Document does not keep.
_BYLINE_MARKUP = '[rel="author"], [itemprop*="author"]'
#: ASCII upper case to lower case only, as CSS's `i` flag compares (`str.lower` maps more).
_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


def _holding(values: list[str], words: tuple[str, ...]) -> set[str]:
    """The `values` (class or id values, none empty) that hold one of `words` (lower-case) in any
    ASCII case, as CSS's `[class*=WORD i]` tests. For speed, the values are joined, lower-cased
    once (`text.join_runs`) and searched with `str.find`: about 3.5x faster than a memoised
    lower-casing and word loop per value, which it replaced (wcxb-dev pages, 211 distinct values
    at the median)."""
    lowered = join_runs(values).translate(_ASCII_LOWER)
    hits: list[int] = []
    for word in words:
        at = lowered.find(word)
        while at >= 0:
            hits.append(at)
            at = lowered.find(word, at + 1)
    return {values[position] for position in runs_hit(values, hits)} if hits else set()


def _classed(doc: Document, words: tuple[str, ...], ident: bool = False) -> list[int]:
    """The elements (indices, in document order) whose class, or id when `ident`, holds one of
    `words` in any ASCII case: what `[class*=WORD i]` (and `[id*=WORD i]`) selectors find. For speed
    (Lexbor tests each such selector on every element: 100 us for the byline's eight at the median
    page), from the values the parse read (`Document.classes`, `.ident`), each distinct one tested
    once."""
    columns = (doc.classes, doc.ident) if ident else (doc.classes,)
    named = _holding([value for value in set(columns[0]).union(*columns[1:]) if value], words)
    if not named:
        return []
    if not ident:
        return [i for i, value in enumerate(doc.classes) if value in named]
    return [i for i, c, d in zip(itertools.count(), doc.classes, doc.ident) if c in named or d in named]


def _with_marked(doc: Document, found: list[int], marked: list[Any], selector: str) -> list[Any]:
    """The elements `found` (indices, in order) and the nodes `marked` (a query's, in document
    order), in document order, each once: what `doc.tree.css(selector)` finds, when `found` and
    `marked` are its parts (without the repeats of an element matching two of its selectors)."""
    if not marked:
        return [doc.elements[i] for i in found]
    if not found:
        return list({node.mem_id: node for node in marked}.values())
    position = {node.mem_id: i for i, node in enumerate(doc.elements)}
    if any(node.mem_id not in position for node in marked):
        # an element added to the tree after the parse: the query's own answer
        return list({node.mem_id: node for node in doc.tree.css(selector)}.values())
    return [doc.elements[i] for i in sorted({*found, *(position[node.mem_id] for node in marked)})]


def _byline_candidates(doc: Document) -> list[Any]:
    """The elements `doc.tree.css(_BYLINE_SELECTOR)` finds, in document order, each once: its
    class and id parts by `_classed`, only `rel` and `itemprop` left to Lexbor. On 1,604 pages
    (ScrapingHub, Readability, wcxb-dev), the same elements as the query."""
    found = _classed(doc, _BYLINE_WORDS, ident=True)
    return _with_marked(doc, found, doc.tree.css(_BYLINE_MARKUP), _BYLINE_SELECTOR)


def _dropped(node: Any) -> bool:
    """Whether Readability.js drops this element as an unlikely candidate (its class, id or role)."""
    if node.tag in ("body", "a", "html"):
        return False
    attrs = node.attributes
    if attrs.get("role") in UNLIKELY_ROLES:
        return True
    match = f"{attrs.get('class') or ''} {attrs.get('id') or ''}"
    if not unlikely_by_class_id(match):
        return False
    above = node.parent
    while above is not None:
        if above.tag in ("table", "code"):
            return False
        above = above.parent
    return True


def page_byline(doc: Document) -> str | None:
    """Readability.js's _checkByline: the first element marked as a byline (rel=author, itemprop
    author, class or id byline/author/dateline/writtenby) with 1-99 characters of text, read from
    its itemprop=name part if it has one, outside what Readability drops as unlikely first."""
    found = page_byline_element(doc)
    return found[1] if found else None


def page_byline_element(doc: Document) -> tuple[Any, str | None] | None:
    """`page_byline`'s element and its text."""
    for node in _byline_candidates(doc):
        attrs = node.attributes
        match = f"{attrs.get('class') or ''} {attrs.get('id') or ''}"
        if not (
            attrs.get("rel") == "author"
            or "author" in (attrs.get("itemprop") or "")
            or BYLINE_HINT.search(match)
        ):
            continue
        text = squash(node.text() or "")
        if not 0 < len(text) < 100:
            continue
        above = node.parent
        while above is not None and not _dropped(above):
            above = above.parent
        if above is not None:
            continue
        name = node.css_first('[itemprop*="name"]')
        if name is not None:
            return node, squash(name.text() or "") or None
        return node, text
    return None


# --- The author's name alone -----------------------------------------------------------------------

#: Words that open a byline before the name, in several languages ("By", "Written by", "Von", "Par").
_BYLINE_LEAD = re.compile(
    r"^(?i:(?:written|posted|published|reviewed|edited|authored|story|words|text|photos?|recipe|guide|"
    r"review|article|interview)\s+)?"
    r"(?i:by|von|par|por|di|door|av|af|przez|автор)(?:\b|(?=[A-Z]))\s*:?\s*"
    r"|^(?i:author|autor|auteur|autore|read more about|more from|about)(?:\b|(?=[A-Z]))\s*:?\s*",
)
#: A byline that opens with its date ("Sep 16 Written By Ana", "Dec. 19, 2025 · Ana"): the date
#: and its separator go.
_DATE_FIRST = re.compile(
    r"^(?i:(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}(?:st|nd|rd|th)?"
    r"(?:,?\s+\d{4})?|\d{1,2}\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?(?:\s+\d{4})?"
    r"|\d{4}-\d{2}-\d{2})\s*(?:[|·•–—-]\s*)?"
    r"(?=(?i:written|posted|by)\b|\S)"
)
#: What a name is followed by and is not part of it ("Niko Matsakis on behalf of the team").
_NAME_TAIL = re.compile(r"\s+on behalf of\b.*$", re.I)
#: Where a byline's name ends: a separator, a date, "Published"/"Updated"/"on <date>", a role line.
_BYLINE_END = re.compile(
    r"\s+[|·•–—]\s*|\s*-\s*(?=\w+\.?\s+\d)|\s+-\s+|\s*[|·•]|\s+(?:on|am|le|el)\s+\w+\.?\s+\d"
    r"|\s+(?:on|am|le|el)\s+\d{1,4}[./-]"
    r"|\s+\d{1,2}(?:st|nd|rd|th)?\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{4}"
    r"|\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{1,2}(?:st|nd|rd|th)?,?\s+\d{4}"
    r"|\s+(?:published|updated|last updated|posted|reviewed|fact checked|read time|min read)\b"
    r"|\s*\d{1,4}[./-]\d{1,2}[./-]\d{1,4}",
    re.I,
)
#: A job title written after the name ("Emma Ryan Writer", "Liz Kenny Former McKinsey Consultant"):
#: cut when at least two words of name stand before it.
_ROLE = re.compile(
    r"(?:(?<=\S)\s+|(?<=[a-z])(?=[A-Z]))(?i:(?:(?:senior|staff|contributing|former|lead|chief|managing|deputy|freelance|tech|ai|"
    r"guest|content|associate|executive|head|digital|news)\s+)*"
    r"(?:writer|editor|reporter|contributor|journalist|founder|co-founder|ceo|cto|director|manager|"
    r"consultant|expert|specialist|correspondent|columnist|strategist|analyst|winemaker)|former)\b.*$",
)
#: A date label glued to the name by the markup ("Cazzy MagennisLast updated").
_GLUED_LABEL = re.compile(
    r"(?<=[a-z])(?:Last|Updated|Published|Posted|Reviewed)\b.*$|\s+(?i:sponsored|advertorial)$"
    r"|(?<=[a-z])(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)\b.*$"
)
_MONTH_TAIL = re.compile(
    r"\s+(?:january|february|march|april|may|june|july|august|september|october|november|december|"
    r"jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)\.?$",
    re.I,
)
#: Texts that stand where a name should be and are not one.
_NOT_A_NAME = re.compile(
    r"^(?:by|author|authors|the author|about the author|about|admin|administrator|staff|guest|"
    r"anonymous|unknown|posted|written|published|updated|last updated|share|follow|sign in|log in|"
    r"sign up|subscribe|join us|contact us|\d+\s*mins?\s+read)$",
    re.I,
)


#: A list of credits by role ("content: MarketingSherpa, design: Scott McDaniel"), not a byline.
_CREDITS = re.compile(r"\w:\s.*,\s*\w+:\s")


def person_names(raw: str | None, site: str | None = None) -> str | None:
    """The name(s) in a byline: without "By"/"Written by", and cut where a date, a separator or a
    "Published …" line begins; never a URL, a date, a placeholder ("Author"), or the site's own
    name standing in for a person."""
    if not raw:
        return None
    text = squash(html_lib.unescape(raw))
    if "://" in text or text.startswith("www.") or "@" in text or _CREDITS.search(text):
        return None
    text = _DATE_FIRST.sub("", text)
    for _ in range(2):
        text = _BYLINE_LEAD.sub("", text).strip(" :,-–—|")
    end = _BYLINE_END.search(text)
    if end:
        text = text[: end.start()]
    text = _NAME_TAIL.sub("", text)
    text = _GLUED_LABEL.sub("", text).strip(" :,-–—|·\"'“”")
    if len(text.split()) > 2:
        text = _MONTH_TAIL.sub("", text)
    role = _ROLE.search(text)
    if role and len(text[: role.start()].split()) >= 2:
        text = text[: role.start()].rstrip(" ,")
        # "Brett Cruz , Privacy and Digital Security Expert": the role's field went with it
        text = text.split(" , ", 1)[0]
    text = _without_avatar_initials(text)
    text = _repeated_name(text)
    if site and text.casefold().endswith(" " + site.casefold()):
        text = text[: -len(site)].rstrip(" ,|-")  # "Brian Truitt USA TODAY": the site after the name
    if re.fullmatch(r"[a-z]{2,}(?:\.[a-z]{2,}){2,}", text):
        return None  # a template's placeholder left unfilled ("page.head.extra.author")
    text = re.sub(r"(?<=\b[A-Z]{2})\.$|(?<=\b[A-Z]{3})\.$|(?<=\b[A-Z]{4})\.$", "", text)
    if (
        not text
        or _NOT_A_NAME.match(text)
        or _MONTH_TAIL.fullmatch(" " + text)
        or len(text) > 80
        or len(text.split()) > 10
    ):
        return None
    if sum(ch.isdigit() for ch in text) > 2 and not _HANDLE.fullmatch(text):
        return None  # a date or a count, not a name (a user name such as "user3080392" is one)
    return text


#: A publishing tool's login name standing where the author's name should be: one lower-case word
#: with a dot or an underscore ("andrew.keaveney", "john_doe"). A thread's starter is named so on
#: purpose and is not one. (Capitals glued to a word, "KatieS", are as often a forum's chosen
#: name, "AtlanG": not taken for a login.)
_LOGIN = re.compile(r"[a-z][a-z0-9]*[._][a-z0-9._]+")
#: A user name as forums show it: one word of letters, digits and . _ - ("beijingwalker").
_USER_NAME = re.compile(r"[^\W_][\w.-]{1,39}")
#: A user name: one word of letters (and . _ -) ending in digits ("user3080392", "ggailey777",
#: "Ejp55230"), as forums and documentation sites name their authors; digits inside the letters
#: ("mdelatorreq6vkpg2ma0ci") make a generated id, not a name.
_HANDLE = re.compile(r"[^\W\d_][^\W\d]*(?:[._-][^\W\d]+)*[._-]?\d{1,8}")


def _repeated_name(text: str) -> str:
    """A name said twice in a row by the markup, then what follows ("Ellen O'Brien Ellen O'Brien
    Ellen is an editor"): the name once."""
    words = text.split()
    for size in range(1, min(4, len(words) // 2) + 1):
        if words[:size] == words[size : 2 * size]:
            return " ".join(words[:size])
    return text


def _without_avatar_initials(text: str) -> str:
    """A name without the initials of its avatar read before it ("CM Craig McCarthy")."""
    words = text.split()
    if len(words) >= 3 and words[0].isupper() and words[0] == "".join(w[0] for w in words[1:]).upper():
        return " ".join(words[1:])
    return text


def _is_site(name: str, site: str | None, host: str) -> bool:
    """Whether a name is the site's own (its og:site_name or its host's name), not a person's."""
    letters = re.sub(r"\W+", "", name.casefold())
    if not letters:
        return False
    if site and letters == re.sub(r"\W+", "", site.casefold()):
        return True
    labels = [label for label in host.split(".") if len(label) > 3 and label not in ("www", "blog")]
    return any(letters == label or (len(letters) > 5 and letters in label) for label in labels)


#: Classes naming an element the author's name, and the rest of `_element_author`'s query.
_AUTHOR_NAME_CLASSES = ("author-name", "author__name", "authorname", "byline__name", "byline-name")
_AUTHOR_MARKUP = '[itemprop~="author"] [itemprop~="name"], [rel~="author"], [itemprop~="author"]'
_AUTHOR_SELECTOR = ", ".join([_AUTHOR_MARKUP, *(f'[class*="{word}" i]' for word in _AUTHOR_NAME_CLASSES)])


def _element_author(doc: Document) -> str | None:
    """A name marked up as the author: `rel=author`, `itemprop=author` (its `name` part), or an
    element classed as the author's name, read with spaces between its parts."""
    found = _classed(doc, _AUTHOR_NAME_CLASSES)
    for node in _with_marked(doc, found, doc.tree.css(_AUTHOR_MARKUP), _AUTHOR_SELECTOR):
        text = node.attributes.get("content") or node.text(separator=" ") or ""
        name = squash(text)
        if 0 < len(name) < 100 and not _in_testimonial(node):
            return name
    return None


def ld_referenced(doc: Document, value: Any) -> Any:
    """A JSON-LD value with its references resolved: an object that is only an `@id` (`{"@id":
    "https://site/#/schema/person/53"}`, as Yoast writes an article's author) is replaced by the
    object of the page's JSON-LD with that `@id`; a list item by item. Other values are as given."""
    if isinstance(value, dict) and "name" not in value and isinstance(value.get("@id"), str):
        return next(
            (item for item in page_objects(doc) if item.get("@id") == value["@id"] and item is not value),
            value,
        )
    if isinstance(value, list) and any(isinstance(v, dict) and "name" not in v for v in value):
        return [ld_referenced(doc, v) for v in value]
    return value


#: The <meta> names of a scholarly page's authors, one tag each (Google Scholar's tags).
CITATION_AUTHOR_KEYS = ("citation_author", "citation_authors")


def citation_authors(doc: Document, contents: dict[str, str]) -> str | None:
    """Every author a scholarly page names in its `citation_author` tags, in order, "Roy, Aniruddha"
    read as "Aniruddha Roy", joined by ", " (None where the page has no such tag)."""
    if not any(key in contents for key in CITATION_AUTHOR_KEYS):  # for speed: most pages
        return None
    names: list[str] = []
    for attrs in doc.meta:
        if (attrs.get("name") or "").strip().lower() in CITATION_AUTHOR_KEYS and (
            name := clean_value(attrs.get("content"))
        ):
            last, comma, first = name.partition(",")
            if comma and "," not in first and first.strip():
                name = f"{first.strip()} {last.strip()}"
            if name not in names:
                names.append(name)
    return ", ".join(names) or None


def labelled_author(doc: Document) -> str | None:
    """The name a page gives link previews beside a "Written by" label (`twitter:label1` and
    `twitter:data1`, as Yoast and other publishing tools write them)."""
    labels: dict[str, str] = {}
    data: dict[str, str] = {}
    for attrs in doc.meta:
        key = (attrs.get("name") or attrs.get("property") or "").lower()
        content = attrs.get("content") or ""
        if key.startswith("twitter:label"):
            labels[key.removeprefix("twitter:label")] = content
        elif key.startswith("twitter:data"):
            data[key.removeprefix("twitter:data")] = content
    for number, label in labels.items():
        if re.match(r"^\s*(?:written by|author|by)\s*$", label, re.I) and data.get(number):
            return data[number]
    return None


#: A line of the page that opens a byline: "By", "Written by", "Author:" (then the name, on the
#: same line or as the next text).
_SHOWN_LEAD = re.compile(
    r"^(?:(?:written|posted|authored|reported|words|article)\s+by|by|von|par|por|door|author|autor|auteur"
    r"|(?P<thread>thread starter|started by|asked by))"
    r"\b\s*:?\s*(?P<rest>.*)$",
    re.I,
)
#: Lower-case words a person's name may hold ("Marna van der Merwe").
_PARTICLES = frozenset("van der den de da di du del della la le von bin al ibn y e and & und et the".split())
#: Characters of page text read around the headline for a byline.
BYLINE_WINDOW = 1200


def looks_like_name(text: str | None, least_words: int = 1) -> bool:
    """Whether a text shown on the page reads as a person's name: one (`least_words`) to five
    words, each capitalised (or a particle), none shouted ("DEFAULT"), no digits, not cut off."""
    if not text or text.endswith(("...", "…")):
        return False
    words = text.replace(",", " ").split()
    return (
        least_words <= len(words) <= 5
        and not any(ch.isdigit() for ch in text)
        and all(w[0].isupper() or w.lower() in _PARTICLES for w in words)
        and not (len(words) == 1 and len(text) > 3 and text.isupper())
    )


def _name_after_lead(runs: list[str], site: str | None) -> str | None:
    """The first name written after a byline's lead in these text runs: on the lead's own run
    ("By Ana Writer") or as the next run ("Written by", "Ana Writer")."""
    for index, run in enumerate(runs):
        found = _SHOWN_LEAD.match(run)
        if not found:
            continue
        rest = found.group("rest") or next(
            (later for later in runs[index + 1 : index + 3] if later.strip(",:|·")), ""
        )
        name = person_names(rest, site)
        # a bare "By" opens other phrases too ("Shop by Category"): a name of two words at least
        bare = " " not in run[: found.start("rest")].strip()
        if name and looks_like_name(name, least_words=2 if bare else 1):
            return name
        # a thread's starter is named by the user name they chose ("beijingwalker")
        if name and found.group("thread") and (" " not in name and _USER_NAME.fullmatch(name)):
            return name
    return None


def shown_byline(doc: Document, site: str | None = None) -> str | None:
    """The name in a byline the page shows around its headline ("By Ana Writer · March 3", or
    "Written by" and the name as the next text), else after a "Written by" anywhere in the body
    (an author box at the article's end), else a name set beside the story's date just under the
    headline (`name_by_date`), where no markup names the author."""
    after: list[str] = []
    for texts in (headline_texts(doc, after=False, window=300), headline_texts(doc, window=BYLINE_WINDOW)):
        runs = [run for run in (squash(text) for text in texts or ()) if run]
        name = _name_after_lead(runs, site)
        if name:
            return name
        after = runs
    return written_by(doc, site) or name_by_date(after[1:], site, doc)


#: Text runs under the headline read for a name set beside the date.
DATELINE_RUNS = 8
#: What stands between a byline's name and its date ("Ana Writer · March 3, 2025").
_DATELINE_SEPARATORS = frozenset("• · | – — - / ,".split())
#: What stands between a breadcrumb's steps ("Nutrition > Meal Plans").
_BREADCRUMB_SEPARATORS = frozenset("> » › / \\".split())


#: Two or three capitalised words of letters (an initial, an apostrophe or a hyphen allowed):
#: "Elliot Raba", "Lisa D. Ellis", "Ana de Souza"; not "Nutrition & Recipes", "Link Copied!".
_PLAIN_NAME = re.compile(
    r"[^\W\d_][^\W\d_'’.-]*(?:[-'’][^\W\d_]+)*\.?(?:\s[^\W\d_](?:[^\W\d_'’-]*[^\W\d_A-Z])?\.?){1,2}"
)


def name_by_date(runs: list[str], site: str | None = None, doc: Document | None = None) -> str | None:
    """A byline without a lead: among the first `DATELINE_RUNS` text runs under the headline, a
    run that is a person's name of two or three words, next to a run that is a date (separators
    between them aside): "Elliot Raba" then "23.07.2025"; "Dec 26, 2025", "•", "Mahua Das". With
    `doc`, the page must also picture the person: an image whose alternative text opens with the
    name (the byline's avatar, "Elliot Raba Image"); a tag, a blog's or a shop's name set beside
    the date is seldom pictured so."""
    # a breadcrumb's last step ("Nutrition", ">", "Meal Plans") is no byline
    crumbs = {index + 1 for index, run in enumerate(runs) if run in _BREADCRUMB_SEPARATORS}
    runs = [run for index, run in enumerate(runs[:DATELINE_RUNS]) if index not in crumbs]
    runs = [run for run in runs if run not in _DATELINE_SEPARATORS]
    for index, run in enumerate(runs):
        words = run.split()
        if not 2 <= len(words) <= 3 or len(run) > 40 or not _PLAIN_NAME.fullmatch(run):
            continue
        if any(len(word) > 1 and word.isupper() for word in words):  # "HR Strategy": a label
            continue
        beside = runs[index - 1 : index] + runs[index + 1 : index + 2]
        if (
            looks_like_name(run, least_words=2)
            and any(len(other) < 40 and parse_day(other) for other in beside)
            and person_names(run, site) == run
            and (doc is None or _pictured(doc, run))
        ):
            return run
    return None


def _pictured(doc: Document, name: str) -> bool:
    """Whether an image of the page has an alternative text that opens with `name`."""
    wanted = name.casefold()
    for element in indices_of(doc.tag, "img"):
        alt = doc.elements[element].attributes.get("alt")
        if alt and squash(alt).casefold().startswith(wanted):
            return True
    return False


#: "Written by" lines read at most in the whole body (for speed on pages full of them).
WRITTEN_BY_READ = 3


def written_by(doc: Document, site: str | None = None) -> str | None:
    """The name after the first "Written by" (or "Article by") in the body's text."""
    texts = doc.tokens.text[doc.body_span]  # "" for tags
    # for speed: one search over the joined, lower-cased text finds the few places to read
    joined = "\x00".join(texts).lower()
    read = 0
    for lead in ("written by", "article by"):
        at = joined.find(lead)
        while at >= 0 and read < WRITTEN_BY_READ:
            read += 1
            start = joined.rfind("\x00", 0, at) + 1
            index = joined.count("\x00", 0, start)
            # the run from the lead on ("This post was written by Ana" -> "written by Ana"), then the next
            lead_run = texts[index][at - start :]
            # the next text runs, past the tags and whitespace between them (at most 60 tokens)
            following = (squash(text) for text in texts[index + 1 : index + 60])
            runs = list(itertools.islice((run for run in (squash(lead_run), *following) if run), 4))
            name = _name_after_lead(runs, site) if runs and _SHOWN_LEAD.match(runs[0]) else None
            if name:
                return name
            at = joined.find(lead, at + len(lead))
    return None


#: Elements classed as the author's read at most (for speed on pages listing many authors).
CLASSED_AUTHORS_READ = 12


def classed_author(doc: Document, site: str | None, host: str) -> str | None:
    """The first short element whose class names it the author's ("text__author",
    "video-post_author-name") and whose text reads as a person's name of two words or more,
    never the site's own name."""
    for node in [doc.elements[i] for i in _classed(doc, ("author",))[:CLASSED_AUTHORS_READ]]:
        text = squash(node.text(separator=" ") or "")
        if not 0 < len(text) < 60 or _in_testimonial(node):
            continue
        name = person_names(text, site)
        if name and looks_like_name(name, least_words=2) and not _is_site(name, site, host):
            return name
    return None


#: Class or id words of the containers whose authors are not the page's: reviews, testimonials,
#: comments and quotes.
_OTHERS_WORDS = re.compile(
    r"review|testimonial|comment|quote|rating|customer|feedback|related|recommend", re.I
)


def _in_testimonial(node: Any, levels: int = 10) -> bool:
    """Whether an element sits inside a review, testimonial, comment or quote (its author is a
    customer's or a commenter's, not the page's)."""
    while node is not None and levels > 0:
        attrs = node.attributes
        words = f"{attrs.get('class') or ''} {attrs.get('id') or ''}"
        if words.strip() and _OTHERS_WORDS.search(words):
            return True
        node = node.parent
        levels -= 1
    return False


_OWN_BLOG = re.compile(r"^(?P<name>.+?)['’]s\s+(?:blog|weblog|notes|site|website|journal|homepage)$", re.I)


_PROFILE_HANDLE = re.compile(r"^https?://[^/]+/(?:~|@)(?P<handle>[\w.-]{2,40})/?$")


def profile_handle(address: str | None) -> str | None:
    """The user name in the address of an author's profile given as `article:author`
    ("https://NAME.example/~user", "https://NAME.example/@user"): the site names its author by it."""
    found = _PROFILE_HANDLE.match(address.strip()) if address else None
    return found.group("handle") if found else None


def site_owner(doc: Document, site: str | None) -> str | None:
    """The person a personal site belongs to, as its <title> or site name says: "Colin Watson's
    blog". (A name merely matching the host is no sign: a company's two-word name spelled as its
    host is as common as a person's: measured on wcxb-dev, taking a two-word site name its address
    spells named 4 more authors and gave a company's name on 70 pages without one.)"""
    phrases = [part.strip() for part in re.split(r"\s[|\-–—·•:»/]\s|[()]", doc.title or "")]
    for phrase in [site or "", *phrases]:
        own = _OWN_BLOG.match(phrase)
        if own and looks_like_name(own.group("name"), least_words=2):
            return own.group("name")
    return None


def thread_starter(doc: Document) -> Post | None:
    """The first post of a discussion thread in a known forum engine's markup (the page's author
    and date are its starter's), or None."""
    if detect_engine(doc) is None:  # most pages: its plain substring test alone (`thread.has_markers`)
        return None
    posts = read_thread(doc, images=False)[1]
    return posts[0] if len(posts) >= MIN_POSTS else None


def author_names(
    doc: Document,
    ld: dict[str, Any],
    meta: dict[str, str],
    site: str | None,
    byline: str | None,
    starter: Callable[[], Post | None] | None = None,
    byline_element: Callable[[], tuple[Any, str | None] | None] | None = None,
    contents: dict[str, str] | None = None,
) -> str | None:
    """The author, most trusted source first: the article's JSON-LD `author`, any JSON-LD object's
    `author` or a QAPage question's asker (a reference by `@id` read from the object it names),
    a scholarly page's `citation_author` tags, `<meta>` author keys (and `article:author` given as
    a name, not a profile's address), a thread's starter (`starter`, read only when asked), the
    "Written by" of link previews, author markup in the page, the byline already read
    (`byline`), Readability's byline element, an element classed as the author's, a byline
    shown around the headline, a "Written by" in the body or a pictured name beside the date
    (`shown_byline`), the user in an `article:author` profile address, and a personal blog's
    owner; each cleaned by `person_names`, and never from inside a review, testimonial or
    comment. A person wins over an organisation or the site's own name standing in for one
    (kept as the site writes it), which is the answer only when no source names a person; a
    publishing tool's login ("andrew.keaveney") is the answer only when no later source names
    one either. The sources are read one at a time, for speed: most pages stop at the first.
    `contents` is `dates.meta_contents(doc)`, when the caller has it already."""
    host = (doc.url or "").split("//", 1)[-1].split("/", 1)[0].casefold()

    def any_ld_author() -> tuple[str | None, bool]:
        fallback: tuple[str | None, bool] = (None, False)
        for item in page_objects(doc):
            value = item.get("author")
            entity = item.get("mainEntity")
            if value is None and isinstance(entity, dict):
                value = entity.get("author")  # a QAPage's question: its asker
            found = ld_people(ld_referenced(doc, value))
            if found[0] and not found[1]:
                return found
            fallback = fallback if fallback[0] else found
        return fallback

    article_author = ld_people(ld_referenced(doc, ld.get("author")))
    named_meta = contents if contents is not None else meta_contents(doc)
    element = byline_element or functools.partial(page_byline_element, doc)

    def from_starter() -> tuple[str | None, bool]:
        post = starter() if starter else None
        return (post.author if post else None), False

    def readability_byline() -> tuple[str | None, bool]:
        """The byline Readability.js shows, unless a testimonial's or an organisation's."""
        if byline and byline == article_author[0]:
            return article_author
        found = element()
        if found and found[1] == byline and _in_testimonial(found[0]):
            return None, False
        return byline, False

    def page_person() -> tuple[str | None, bool]:
        """Readability.js's byline element read from the page, when its text reads as a name."""
        found = element()
        if not found or _in_testimonial(found[0]):
            return None, False
        name = person_names(found[1], site)
        return (name if looks_like_name(name) else None), False

    candidates: tuple[Callable[[], tuple[str | None, bool]], ...] = (
        lambda: article_author,
        any_ld_author,
        lambda: (citation_authors(doc, named_meta), False),
        lambda: (meta.get("author"), False),
        lambda: (meta.get("dc:creator"), False),
        lambda: (meta.get("dcterm:creator"), False),
        lambda: (meta.get("parsely-author"), False),
        lambda: (named_meta.get("article:author"), False),
        from_starter,
        lambda: (labelled_author(doc), False),
        lambda: (_element_author(doc), False),
        readability_byline,
        page_person,
        lambda: (classed_author(doc, site, host), False),
        lambda: (shown_byline(doc, site), False),
        lambda: (profile_handle(named_meta.get("article:author")), False),
        lambda: (site_owner(doc, site), False),
    )
    stand_in: str | None = None
    login: str | None = None  # a publishing tool's login name: a person's name shown later wins
    for candidate in candidates:
        raw, organisation = candidate()
        name = person_names(raw, site)
        if not name:
            continue
        if organisation or _is_site(name, site, host):
            # the site's own name as it writes it ("Luxury Travel Expert"), not cut as a person's
            whole = squash(raw or "")
            stand_in = stand_in or (whole if whole != name and _is_site(whole, site, host) else name)
            continue
        if candidate is not from_starter and _LOGIN.fullmatch(name):
            login = login or name
            continue
        return name
    return login or stand_in
