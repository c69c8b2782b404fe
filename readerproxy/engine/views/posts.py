"""Posts found by structure: the thread reader for forum engines no table names.

`thread.ENGINES` reads the engines it knows by their CSS classes; a thread on any other engine
(Vanilla, bbPress, Flarum, Lemmy, Lobsters, Hacker News, a question-and-answer clone, a blog's
comment section, a theme that renamed everything) would lose its replies. This module finds the posts the way a person does, by what a
post *is*: a repeated container whose members each hold an author, a time and a body of prose.

1. **Anchors.** Times: `<time>` and elements with a `datetime` attribute, and short texts that read
   as a date or a time ago (`DATE_TEXT`: digits with a month or a unit, "yesterday", "just now").
   Authors: links to a profile (`PROFILE_URL`: `/u/name`, `/user/…`, `/members/…`, `/@name`,
   `?u=123`, `profile.php`, `user?id=`), and short texts in an element whose class, `itemprop` or
   `rel` says author or user name (`AUTHOR_HINT`). Anchors inside quotes do not count. A name read
   from an avatar's `alt` ("ana avatar") gives way to the name written beside it, a class-named
   label of the time ("Posted on") to the profile link in its row.
2. **Groups.** Every ancestor of a time anchor is a candidate post. Candidates are grouped by
   shape: the tag with the pattern of a numbered `id` (`post-#`, `Comment_#`), the tag with its
   class names less numbered and state names ("odd", "alt", "first"), and the tag with its first
   such class name, so a post whose theme adds a class (the starter's "by-author") stays in its
   group; an `<article>`, `<li>` or `<section>` with neither, by its tag alone.
3. **The thread.** Each group's members are read as posts: a member's own part is its subtree less
   the members nested in it (a reply tree); it counts when it holds a time or an author and at
   least one word of its own beside them. The group with the most members holding both an author
   and a time wins, ties to the tighter group; its members' prose must be prose (median own words
   ≥ `MIN_MEDIAN_WORDS`, at most `MAX_LINK_SHARE` of them in links: a list of topics, each a
   linked title with its author and date, is no thread). Where no post shows a time (the
   script-less copy of an app's thread), at least `MIN_UNDATED_POSTS` posts with an author make a
   thread; such a group competes only where no group has times. A name the page marks up in no
   way of its own is read from the byline before the time (`_byline_name`). A date of one shape
   and text in two posts by one author is the author's (the day they joined), not a post's time
   (`_authors_dates`). Comments under the posts (a question's and its answers') are a group whose
   members lie inside the posts with authors, times and sentences of their own (`_with_comments`).
4. **The opening post.** Engines often write the first post in other markup than the replies
   (Vanilla's `Discussion` and `Comment`s, a blog post and its comments): before the first member,
   in the posts' main landmark, the time anchors' highest ancestors that hold no member are read
   the same way, and the one with the most sentences wins. A first post that is a header alone (a
   title, a byline, a score) takes the block of prose after it as its body (a story's text).
5. **Parts of a post.** The byline row (the innermost element holding the author and the time,
   short texts only: a score, a badge, controls beside the name) or else the author's and the
   time's headers are not the body, nor a linked or headed title before them; the body is the
   deepest element holding most of the post's words and neither header, keeping a quote before it
   and the paragraphs beside it. Controls are found by repetition: a short text ("Reply",
   "Quote", "Like", "Report", in any language) inside at least half of the posts, or a number in
   elements of one shape so found (votes, reactions), is the template's, not a post's, and is
   dropped; so is an excerpt of another post ("Answered by …", ending in an ellipsis).

Pure: reads the parsed `Document`, no network. Returns element indices (`StructuralPost`);
`thread.py` writes the posts out with its allowlist, as it does for a table engine's.
"""

from __future__ import annotations

import functools
import re
from bisect import bisect_left
from collections import Counter, defaultdict
from dataclasses import dataclass, field, replace
from statistics import median
from typing import TYPE_CHECKING

import numpy as np

from ..._speedups import native
from ..kind.readability_rules import literal_trie
from ..parse.document import TEXT, Document, indices_of, token_word_counts

if TYPE_CHECKING:
    from selectolax.lexbor import LexborNode

#: Fewer posts than this with an author and a time, and the page holds no thread found by structure.
MIN_POSTS = 2
#: A group's members hold at least this many words of their own at the median (a header of an
#: author and a date is no post).
MIN_MEDIAN_WORDS = 5
#: At most this share of a group's own words (median over members) in links: a topic list's rows
#: are linked titles.
MAX_LINK_SHARE = 0.5
#: A link of at least this many words, and this share of a card's words, is a teaser's headline.
HEADLINE_WORDS = 3
HEADLINE_SHARE = 0.2
#: Fewer posts than this, and a group whose posts show no time is no thread.
MIN_UNDATED_POSTS = 3
#: A group competes when it has at least this share of the most whole posts any group has.
GROUP_SHARE = 0.5
#: An opening post may hold more of its words in links than a reply (a release announcement is a
#: list of linked changes); past this share it is a menu or a list of topics.
OPENING_LINK_SHARE = 0.75
#: Longest text of an author or a date anchor (characters).
MAX_ANCHOR_CHARS = 60
#: Most words of an author's name.
MAX_NAME_WORDS = 5
#: Most words of a header row before a post that holds its time.
HEADER_WORDS = 12
#: A header (an anchor's highest ancestor inside a post) holds at most this share of the post's words.
HEAD_SHARE = 0.25
#: The body is the deepest element holding at least this share of the post's words.
BODY_SHARE = 0.7
#: Most words of a byline row: the author, the time and what sits beside them (a score, a badge,
#: controls).
BYLINE_WORDS = 24
#: A short text inside at least this share of the posts (and two of them) is a control of the template.
CONTROL_SHARE = 0.5
#: Longest text of a control (words).
CONTROL_WORDS = 4


#: A profile page's URL: a path segment naming users or members followed by a name or number, a
#: `/@name` path, or a query naming a user (the word lists as prefix trees, `literal_trie`).
PROFILE_URL = re.compile(
    r"(?:/(?:"
    + literal_trie(
        "u user users member members profile profiles people author authors account accounts usercp "
        "benutzer utilisateur usuario ~".split()
    )
    + r")/[^/?#]+"
    r"|/@[\w.-]+/?(?:$|[?#])|[?&](?:"
    + literal_trie("u uid user userid user_id member memberid showuser".split())
    + r")=[^&#]+"
    r"|/user\?id=[^&#]+|/~[\w.-]+/?(?:$|[?#])"
    r"|(?:" + literal_trie("member profile memberlist user".split()) + r")\.php)",
    re.I,
)
#: `PROFILE_URL` without `re.I`, for an ASCII address in lower case (`profile_url`).
_PROFILE_URL_LOWER = re.compile(PROFILE_URL.pattern)
#: Class names, `itemprop` or `rel` values of an element holding an author's name.
AUTHOR_HINT = re.compile(
    r"(?:^|[\s_-])(?:author|username|user-?name|poster|postauthor|nick(?:name)?|member-?name|"
    r"display-?name|screen-?name|hnuser|commenter|comment-author|fn)(?:$|[\s_-])"
    r"|[a-z](?:user-?name|author-?name)(?:$|[\s_-])",  # a prefixed name: "PostUser-name", "postAuthorName"
    re.I,
)
#: Parts one of which every match of `AUTHOR_HINT` holds, in lower case (`author_hinted`): change
#: them with the pattern's words.
_AUTHOR_HINT_PARTS = ("author", "user", "poster", "nick", "member", "name", "commenter", "fn")
#: Month names and their short forms, in English, French, German and Spanish.
_MONTH_WORDS = (
    "jan feb mar apr may jun jul aug sep sept oct nov dec january february march april june july "
    "august september october november december janv févr mars avr mai juin juil août déc "
    "januar februar märz juni juli oktober dezember ene abr ago dic enero febrero marzo mayo junio "
    "julio agosto septiembre octubre noviembre diciembre"
).split()
#: Units of a time ago ("3 hours ago", "vor 2 Tagen"), in the same languages and Italian.
_UNIT_WORDS = (
    "s sec secs second seconds m min mins minute minutes h hr hrs hour hours d day days w wk week "
    "weeks mo month months y yr yrs year years sekunde sekunden minute minuten stunde stunden "
    "tage tagen woche wochen monate monaten jahre jahren segundo segundos minuto minutos "
    "hora horas día días semana semanas meses mes año años seconde secondes heure heures jour jours "
    "semaine semaines mois an ans minuti ore giorni settimane mesi anni"
).split()
# As prefix trees (`literal_trie`), for speed: `DATE_TEXT` took 5.4 us a text holding a digit with
# flat lists of months and units, 2.2 us with trees (the same answer on 121,893 short texts of
# older-dev).
_MONTHS = literal_trie(_MONTH_WORDS)
_UNITS = literal_trie(_UNIT_WORDS)
#: The words that read as a day with no digit; every other way `DATE_TEXT` reads a date holds one.
_DATE_WORDS = (
    "yesterday",
    "today",
    "just now",
    "gestern",
    "heute",
    "hier",
    "aujourd'hui",
    "ayer",
    "hoy",
    "ieri",
    "oggi",
)
#: A short text that reads as a date or a time ago.
DATE_TEXT = re.compile(
    r"\b(?:\d{1,2}(?:st|nd|rd|th)?\.?\s+(?:" + _MONTHS + r")\b|(?:" + _MONTHS + r")\.?\s+\d{1,2}\b"
    r"|\d{4}-\d{2}-\d{2}|\d{1,2}[./-]\d{1,2}[./-]\d{2,4}|\d{1,2}:\d{2}\s*(?:[ap]\.?m\.?)?"
    r"|\d+\s*(?:" + _UNITS + r")\.?\s+(?:ago|back)|(?:vor|hace|il y a|há)\s+\d+"
    r"|" + "|".join(_DATE_WORDS) + r")\b"
    r"|^\s*\d+\s*(?:[smhdwy]|mo|yr)\s*$"
    r"|^\s*(?:" + _MONTHS + r")\.?\s+'?\d{2}\s*$",
    re.I,
)
_TIME_ATTRIBUTES = ("datetime", "data-time", "data-timestamp", "data-datetime", "data-date")
_TIME_NAMES = frozenset(_TIME_ATTRIBUTES)
#: The elements whose attributes `_Page._attribute_anchors` reads: those carrying one of them.
_ANCHOR_ATTRIBUTES = ", ".join(
    [*(f"[{name}]" for name in _TIME_ATTRIBUTES), "[title]", "a[href]", "[itemprop]", "[rel]"]
)
#: The same attributes by name, for the C kernel (`_native.attributed_elements`).
_ANCHOR_NAMES = (*_TIME_ATTRIBUTES, "title", "href", "itemprop", "rel")
_ISO_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
#: Tags whose `itemprop` or `rel` is read for an author's name.
_NAME_TAGS = frozenset({"span", "a", "div", "strong", "b", "p", "cite"})
_TIME_TAGS = frozenset({"time", "relative-time", "faceplate-timeago", "local-time"})
_QUOTE_TAGS = frozenset({"blockquote", "q"})
_QUOTE_CLASS = re.compile(r"(?:^|[\s_-])(?:quote|bbcodequote|quotebox|bbcode_quote)(?:$|[\s_-])", re.I)
#: Class names that say an element's state or place, not its kind (left out of a group's shape).
_STATE_CLASSES = frozenset(
    {"odd", "even", "alt", "first", "last", "active", "selected", "new", "unread", "read", "open",
     "closed", "highlighted", "highlight", "mine", "own", "op", "is-op", "by-author", "bypostauthor",
     "hidden", "visible", "collapsed", "expanded", "hentry", "clearfix", "row", "col"}
)  # fmt: skip
_DIGITS = re.compile(r"\d+")
_ANY_DIGIT = re.compile(r"\d")
_ALNUM = re.compile(r"\W+")
#: A count: a number, signed or abbreviated ("12", "+3", "1.2k").
_COUNT = re.compile(r"^[+\-−]?\d[\d.,]*\s*[km]?$", re.I)
#: Tags grouped by name alone when they have neither classes nor a numbered id.
_BARE_SHAPES = frozenset({"article", "li", "section"})
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
#: A post never lies in these (a thread is often one `<form>`, for moderation: that is no control).
_OUTSIDE = frozenset({"nav", "header", "footer", "aside"})
#: A header or footer is the page's unless it lies in one of `_SECTIONS`.
_SCOPED = frozenset({"header", "footer"})
_SECTIONS = frozenset({"article", "section"})


def reads_as_date(text: str) -> bool:
    """`DATE_TEXT.search(text)`, found false at once for an ASCII text with no digit and none of
    `_DATE_WORDS` (for speed: most short texts of a page hold neither, and the search takes 2-6 us
    a text; with flat word lists it took 2.2 ms on the 351 short texts of `server_load.py`'s page).
    A non-ASCII text is always searched (`re.I` folds "ſ" to "s")."""
    if text.isascii() and _ANY_DIGIT.search(text) is None:
        lowered = text.lower()
        if not any(word in lowered for word in _DATE_WORDS):
            return False
    return DATE_TEXT.search(text) is not None


def profile_url(href: str) -> bool:
    """`PROFILE_URL.search(href)`: for an ASCII address, the pattern without `re.I` on its lower
    case (for speed: 2.5 -> 1.4 us a link on `server_load.py`'s page; the same answer, as the
    pattern's letters are all lower case and none of its classes tells case apart). A non-ASCII
    address is searched as it is: `re.I` folds "ſ" to "s" and the Kelvin sign to "k"."""
    if href.isascii():
        return _PROFILE_URL_LOWER.search(href.lower()) is not None
    return PROFILE_URL.search(href) is not None


def author_hinted(value: str) -> bool:
    """`AUTHOR_HINT.search(value)`, found false at once for an ASCII value holding none of
    `_AUTHOR_HINT_PARTS` (for speed: the search took 4.8 us on a 67-character class list). A
    non-ASCII value is always searched: `re.I` matches "ſ" to "s" and the Kelvin sign to "k"."""
    if value.isascii():
        lowered = value.lower()
        if not any(part in lowered for part in _AUTHOR_HINT_PARTS):
            return False
    return AUTHOR_HINT.search(value) is not None


@dataclass(frozen=True, slots=True)
class StructuralPost:
    """Where one post lies, as indices into `doc.elements`: the post, its body, the author's and
    the date's elements (-1 where the post has none), the author's name, and what the body holds that is not the post
    (`dropped`: the headers inside it, the template's controls)."""

    post: int
    body: int
    author: int
    date: int
    dropped: tuple[int, ...]
    #: the author's name as the page shows it ("" without an author)
    name: str = ""


@dataclass(frozen=True, slots=True)
class StructuralThread:
    """The posts of a thread found by structure, in page order, and the group's shape."""

    shape: str
    posts: tuple[StructuralPost, ...]

    @property
    def members(self) -> tuple[int, ...]:
        return tuple(post.post for post in self.posts)


class _Page:
    """What the search reads of a Document: words per element, anchors, containment."""

    def __init__(self, doc: Document, after: int = -1) -> None:
        self.doc = doc
        self._texts: dict[int, str] = {}
        t = doc.tokens
        #: only what starts after this token is read (the comments under an article: for speed,
        #: the article's own elements are not read again)
        self.after = after
        self.first = int(np.searchsorted(doc.start, after, side="right"))
        count = np.zeros(len(t), dtype=np.int64)
        text = np.flatnonzero((t.kind == TEXT) & (t.chars > 0))
        text = text[text > after]
        count[text] = token_word_counts(t.text, text)
        # Per element, as lists: the search reads them one element at a time (for speed: a list
        # item is a Python int, a numpy array's is a scalar object to convert).
        self.words: list[int] = doc.sum_within(count).tolist()
        self.link_words: list[int] = doc.sum_within(np.where(t.in_anchor, count, 0)).tolist()
        self.end: list[int] = doc.subtree_end.tolist()
        self.parent: list[int] = doc.parent.tolist()
        self.quoted: list[bool] = self._quoted().tolist()
        machine, profiles, hinted = self._attribute_anchors()
        self.dates = self._date_anchors(machine)
        #: the dates a machine can read (`<time>`, `datetime`): a post's own time before a join date
        self.times = [d for d in self.dates if doc.tag[d] in _TIME_TAGS or d in machine]
        self.authors = self._author_anchors(profiles, hinted)
        #: authors named by more than an initial (an avatar's letter links to the profile too)
        self.names = sorted(a for a, name in self.authors.items() if len(name) >= 2)
        #: the names read from an image's `alt` (an avatar linked to the profile: "ana avatar")
        self.pictured = {a for a in self.names if not self.text(a)}
        #: the names that link to a profile (stronger evidence than a class saying "author")
        self.linked = set(profiles) & set(self.names)

    def text(self, element: int) -> str:
        """`doc.element_text`, read once per element (the readings of several groups and shapes
        ask for the same authors, dates and bodies)."""
        text = self._texts.get(element)
        if text is None:
            text = self._texts[element] = self.doc.element_text(element)
        return text

    def inside(self, outer: int, inner: int) -> bool:
        return outer <= inner < int(self.end[outer])

    def _quoted(self) -> np.ndarray:
        """Per element, whether it lies inside a quote (or is one)."""
        doc = self.doc
        # For speed, each distinct class value searched once (a page repeats its classes), and an
        # ASCII value without "quote" not at all (every word of the pattern holds it).
        quote_class = {
            c: (not c.isascii() or "quote" in c.lower()) and _QUOTE_CLASS.search(c) is not None
            for c in set(doc.classes)
            if c
        }
        quotes = [
            i
            for i, (tag, c) in enumerate(zip(doc.tag, doc.classes, strict=True))
            if tag in _QUOTE_TAGS or (c and quote_class[c])
        ]
        mask = np.zeros(len(doc.tag), dtype=bool)
        for q in quotes:
            mask[q : int(self.end[q])] = True
        return mask

    def outside(self, element: int, sections: bool = False) -> bool:
        """Whether an element lies in a menu, header, footer or sidebar (`_OUTSIDE`); with
        `sections`, the page's header or footer only, not an `<article>`'s or a `<section>`'s own
        (an article's byline: a post is never in one, an opening post's time may be)."""
        tags, parent = self.doc.tag, self.parent
        e = element
        scoped = False  # inside a header or footer whose section is not yet known
        while e >= 0:
            tag = tags[e]
            if tag in _SCOPED:
                if not sections:
                    return True
                scoped = True
            elif tag in _SECTIONS:
                scoped = False
            elif tag in _OUTSIDE:
                return True
            e = int(parent[e])
        return scoped

    def _attribute_anchors(self) -> tuple[set[int], list[int], list[int]]:
        """What the elements' attributes say, in one read of each element's attributes: the
        elements holding a machine time (`_TIME_ATTRIBUTES`, an ISO day in `title`), the links to a
        profile (`PROFILE_URL`) and the elements whose class, `itemprop` or `rel` names an author."""
        doc = self.doc
        tags, classes = doc.tag, doc.classes
        machine: set[int] = set()
        profiles: list[int] = []
        hinted: list[int] = []
        # For speed, only the elements that carry one of the attributes read here (`_attributed`)
        # have their attributes read; the others can only be hinted by their class, read from the
        # parse, and each distinct class value is searched once: on `server_load.py`'s page (726
        # elements after the article) 2.6 -> 1.0 ms.
        first = self.first
        hint = {c: author_hinted(c) for c in set(classes[first:]) if c}
        attributed = _attributed(doc, first)
        for element in range(first, len(doc.elements)):
            attrs = attributed.get(element)
            if attrs is None:
                if (c := classes[element]) and hint[c]:
                    hinted.append(element)
                continue
            if not _TIME_NAMES.isdisjoint(attrs) or _ISO_DAY.match(attrs.get("title") or ""):
                machine.add(element)
            tag = tags[element]
            if tag == "a" and profile_url(attrs.get("href") or ""):
                profiles.append(element)
            elif ((c := classes[element]) and hint[c]) or (
                tag in _NAME_TAGS
                and any(
                    (value := attrs.get(key)) and AUTHOR_HINT.search(value) for key in ("itemprop", "rel")
                )
            ):
                hinted.append(element)
        return machine, profiles, hinted

    def _date_anchors(self, machine: set[int]) -> list[int]:
        """Times: `<time>`-like elements, elements with a machine time (a time a script writes out:
        its value in an attribute, the text empty or late) and short texts that read as a date."""
        doc, t = self.doc, self.doc.tokens
        found = set(machine)
        for tag in _TIME_TAGS:
            found.update(e for e in indices_of(doc.tag, tag) if e >= self.first)
        short = np.flatnonzero((t.kind == TEXT) & (t.chars > 0) & (t.chars <= MAX_ANCHOR_CHARS))
        short = short[short > self.after]
        elements = t.element[short]
        # a short text in a short element (vectorised: most texts of a page fail it)
        near = elements >= 0
        near[near] = doc.subtree_chars[elements[near]] <= MAX_ANCHOR_CHARS * 2
        texts = t.text
        found.update(
            element
            for i, element in zip(short[near].tolist(), elements[near].tolist(), strict=True)
            if reads_as_date(texts[i])
        )
        return sorted(e for e in found if not self.quoted[e])

    def _author_anchors(self, profiles: list[int], hinted: list[int]) -> dict[int, str]:
        """Authors and their names: profile links and author-named elements that read as a name,
        the innermost of nested ones ("by <a>Ana</a>"), none inside a quote."""
        found: dict[int, str] = {}
        for element in (*profiles, *hinted):
            if element not in found and (name := name_of(self.doc, element)):
                found[element] = name
        anchors = sorted(found)
        keep: dict[int, str] = {}
        for position, element in enumerate(anchors):
            following = anchors[position + 1] if position + 1 < len(anchors) else None
            if following is not None and self.inside(element, following):
                continue
            if not self.quoted[element]:
                keep[element] = found[element]
        return keep


def _attributed(doc: Document, first: int) -> dict[int, dict[str, str | None]]:
    """The elements from index `first` on that `_ANCHOR_ATTRIBUTES` matches, by index, each with its
    attributes (at least those of `_ANCHOR_NAMES` it has). Chosen for speed: the C kernel
    (`_native.attributed_elements`: `find_thread` on `server_load.py`'s page 4.07 -> 3.41 ms, the
    query and its node-to-index dict 0.68 ms of it, the kernel 0.06-0.19) gives also an
    element other than a link with an `href`, and not one matched by a namespaced attribute alone
    (`xlink:href`, whose dict holds the name with its prefix); `_attribute_anchors` reads neither
    but for its class, as it reads an element without those attributes."""
    root = doc.tree.root
    if native is not None and root is not None and _attributed_agrees():
        read = native.attributed_elements(root, len(doc.elements), first, _ANCHOR_NAMES)
        if read is not None:
            return read
    index = {node.mem_id: i for i, node in enumerate(doc.elements[first:], first)}
    return {
        i: node.attributes
        for node in doc.tree.css(_ANCHOR_ATTRIBUTES)
        if (i := index.get(node.mem_id)) is not None
    }


#: The page `_attributed_agrees` reads both ways: each name of `_ANCHOR_NAMES`, valueless and empty
#: values, SVG with namespaced attributes, a non-ASCII value, and elements before `first`.
_ATTRIBUTED_CHECK_PAGE = (
    "<!DOCTYPE html><html><head><title>t</title></head><body><a href=/u/1 title=x>a</a><p rel>b</p>"
    "<time datetime='2020-01-02'>c</time><span data-time=1 data-timestamp data-datetime='' data-date=d>e</span>"
    "<svg><use xlink:href='#i'></use><a xlink:title=t href=y>f</a></svg><b itemprop=author>Gé</b>"
    "<i class=by>h</i></body></html>"
)


def attributed_reference(
    elements: list[LexborNode], first: int, names: tuple[str, ...]
) -> dict[int, dict[str, str | None]]:
    """What `_native.attributed_elements` gives, read from `node.attributes` of every element."""
    found: dict[int, dict[str, str | None]] = {}
    for index, node in enumerate(elements[first:], first):
        attributes = {key: value for key, value in node.attributes.items() if key in names}
        if attributes:
            found[index] = attributes
    return found


@functools.cache
def _attributed_agrees() -> bool:
    """Whether `_native.attributed_elements` reads `_ATTRIBUTED_CHECK_PAGE` as `node.attributes` does,
    asked once per process (a selectolax whose tree reads otherwise keeps the query)."""
    from selectolax.lexbor import LexborHTMLParser

    from ..parse import scan  # noqa: F401  (its import sets Lexbor's functions up)

    assert native is not None
    tree = LexborHTMLParser(_ATTRIBUTED_CHECK_PAGE)
    elements = tree.css("*")
    try:
        read = [
            native.attributed_elements(tree.root, len(elements), first, _ANCHOR_NAMES) for first in (0, 5)
        ]
    except Exception:  # any failure keeps the query, never reaches a caller
        return False
    return read == [attributed_reference(elements, first, _ANCHOR_NAMES) for first in (0, 5)]


def name_of(doc: Document, element: int) -> str:
    """An element's text when it reads as a name: 1 to `MAX_NAME_WORDS` words, no date."""
    if doc.subtree_chars[element] > MAX_ANCHOR_CHARS:
        return ""
    text = doc.element_text(element)
    if not text:
        node = doc.elements[element]
        image = node.css_first("img[alt]")
        text = " ".join((image.attributes.get("alt") or "").split()) if image is not None else ""
    words = text.split()
    if not 0 < len(words) <= MAX_NAME_WORDS or len(text) > MAX_ANCHOR_CHARS:
        return ""
    if reads_as_date(text) or not any(ch.isalnum() for ch in text):
        return ""
    return text.lstrip("@").strip()


def _shapes(doc: Document, element: int) -> list[str]:
    """The shapes an element is grouped by (see the module's docstring, step 2)."""
    tag = doc.tag[element]
    shapes: list[str] = []
    ident = doc.ident[element]
    if ident and _DIGITS.search(ident):
        shapes.append(f"{tag}#{_DIGITS.sub('#', ident)}")
    classes = [
        c
        for c in (doc.classes[element] or "").split()
        if not _DIGITS.search(c) and c.lower() not in _STATE_CLASSES
    ]
    if classes:
        shapes.append(f"{tag}.{'.'.join(sorted(set(classes)))}")
        shapes.append(f"{tag}.{classes[0]}")
    elif not shapes and tag in _BARE_SHAPES:
        shapes.append(tag)  # a plain <article> per post, as a script-less copy of an app writes
    return shapes


#: What `_parts` reads of one post: the member, the members nested in it, its author, its date
#: (-1: none) and its own words.
_PostAnchors = tuple[int, list[int], int, int, int]


@dataclass(slots=True)
class _Reading:
    """One group read as posts: its shape, members, how many are whole posts (author and time, less
    the members without either), the words of their own, whether any shows a time, and each
    post's author and date (`anchors`, -1: none). The posts' parts (`posts`) are read on first use:
    for speed, as most groups that qualify are not the thread (on `server_load.py`'s page, 31 of
    the 41 posts read belonged to the five groups that lost)."""

    shape: str
    members: list[int]
    complete: int
    words: int
    found: list[_PostAnchors]
    dated: bool = True
    _posts: list[StructuralPost] | None = field(default=None, init=False, repr=False)

    def anchors(self) -> list[tuple[int, int]]:
        """Each post's author and date, in page order (-1: none)."""
        return [(author, date) for _, _, author, date, _ in self.found]

    def posts(self, page: _Page) -> list[StructuralPost]:
        """Each post's parts (`_parts`), read once per reading (a new list each call)."""
        if self._posts is None:
            self._posts = [_parts(page, *post) for post in self.found]
        return list(self._posts)


def find_thread(doc: Document, after: int = -1) -> StructuralThread | None:
    """The thread's posts found by structure (None: fewer than `MIN_POSTS` posts with an author
    and a time). With `after` (a token index), the comments under an article: only among the
    elements starting after it, with no opening post, and a group whose members mostly lead with a
    headline is a list of teasers ("more from": a headline, a byline and a summary), not comments."""
    page = _Page(doc, after)
    if len(page.dates) < MIN_POSTS and len(page.authors) < MIN_UNDATED_POSTS:
        return None
    groups: dict[str, set[int]] = defaultdict(set)
    read: dict[tuple[int, ...], _Reading | None] = {}  # `_read_once`'s readings by their members
    body_start = max(doc.tag.index("body") if "body" in doc.tag else 0, page.first - 1)
    # Posts are sought among the ancestors of times and of authors: a post whose time sits in a
    # header row before it (bbPress) is an ancestor of its author only.
    climbed: set[int] = set()  # an ancestor met again has had its own ancestors grouped already
    for date in sorted({*page.dates, *page.names}):
        e = page.parent[date]
        while e > body_start and e not in climbed:
            climbed.add(e)
            for shape in _shapes(doc, e):
                groups[shape].add(e)
            e = page.parent[e]
    readings = [
        reading
        for shape, members in groups.items()
        if len(members) >= MIN_POSTS
        and (reading := _read_once(page, shape, sorted(members), read)) is not None
        and not (after >= 0 and _headlined(page, reading))
    ]
    if any(reading.dated for reading in readings):
        readings = [reading for reading in readings if reading.dated]
    if not readings:
        return None
    # Of the groups with at least `GROUP_SHARE` as many whole posts as the most, the one whose
    # posts hold the most words: answers over the comments under them, a post's wrapper over the
    # author box inside it; a section of several posts has too few members to compete (and a
    # group of two competes only when no group has more: page rows often come in twos).
    most = max(reading.complete for reading in readings)
    posts_group = max(readings, key=lambda reading: (reading.complete, -reading.words))
    readings = [r for r in readings if r is posts_group or not _wraps(page, r, posts_group)]
    best = max(
        (
            reading
            for reading in readings
            if reading.complete == most or reading.complete >= max(GROUP_SHARE * most, MIN_POSTS + 1)
        ),
        key=lambda reading: (reading.words, reading.complete),
    )
    best, comments = _with_comments(page, best, readings)
    posts = _story_text(page, best.posts(page)) if after < 0 else best.posts(page)
    # Under an article, the article is the opening post.
    opening = _opening_post(page, best) if after < 0 else None
    if opening is not None:
        posts = [opening, *posts]
    posts = _drop_excerpts(page, posts)
    # The controls of the posts and those of the comments under them, each by their own count.
    kinds = [post.post in comments for post in posts]
    clean = {
        kind: iter(
            _drop_controls(
                page, [p for p, k in zip(posts, kinds, strict=True) if k == kind], {p.post for p in posts}
            )
        )
        for kind in (False, True)
    }
    return StructuralThread(best.shape, tuple(next(clean[kind]) for kind in kinds))


def _drop_excerpts(page: _Page, posts: list[StructuralPost]) -> list[StructuralPost]:
    """Posts less the excerpts of other posts in them: a block of at least `2 * MIN_MEDIAN_WORDS`
    words, in no quote, ending in an ellipsis, whose text is found in another post ("Answered
    by …", a pinned reply's summary), with the short texts around it (its box: the excerpt's
    highest ancestor in the body holding at most `HEADER_WORDS` words more: its author, its time,
    "View full answer")."""
    if len(posts) < MIN_POSTS:
        return posts
    members = {post.post for post in posts}
    texts: list[str] = []  # the posts' bodies, read at the first block that ends in an ellipsis
    out: list[StructuralPost] = []
    for index, post in enumerate(posts):
        boxes: list[int] = []
        end = int(page.end[post.body])
        element = post.body + 1
        while element < end:
            if element in members or page.quoted[element]:
                element = int(page.end[element])
                continue
            words = int(page.words[element])
            if words < 2 * MIN_MEDIAN_WORDS:
                element = int(page.end[element])
                continue
            raw = page.text(element)
            if not raw.endswith(("…", "...")):
                element += 1
                continue
            texts = texts or [_ALNUM.sub(" ", page.text(post.body)).strip() for post in posts]
            text = _ALNUM.sub(" ", raw).strip()
            if any(
                text in other
                for at, other in enumerate(texts)
                if at != index and not page.inside(posts[at].body, post.post)
            ):
                box = element
                e = int(page.parent[element])
                while e > post.body and page.words[e] - words <= HEADER_WORDS:
                    box = e
                    e = int(page.parent[e])
                boxes.append(box)
                element = int(page.end[box])
                continue
            element += 1
        out.append(replace(post, dropped=tuple(sorted({*post.dropped, *boxes}))) if boxes else post)
    return out


def _with_comments(page: _Page, best: _Reading, readings: list[_Reading]) -> tuple[_Reading, set[int]]:
    """The posts with the comments under them (a question's and its answers' comments): of the
    groups whose members each lie inside a post and hold neither a post nor a post's own author
    or time (a post's byline box is no comment), whose members' authors are marked up as such
    (a profile link, an author's class: not a name read off a byline) and whose members hold
    sentences (`_sentence_words`, at the median at least `MIN_MEDIAN_WORDS`: an author's box of
    short fields is no comment), the one with the most whole posts (ties: the outermost) joins
    the posts, each comment after the post it lies in, and leaves its text. Returns the posts
    and the comments' members."""
    members = best.members
    anchors = sorted(x for pair in best.anchors() for x in pair if x >= 0)
    found: list[_Reading] = []
    for reading in readings:
        if reading is best or reading.complete < MIN_POSTS:
            continue
        if all(
            any(m < x < int(page.end[m]) for m in members)
            and not _holds(members, x, int(page.end[x]))
            and not _holds(anchors, x, int(page.end[x]))
            for x in reading.members
        ) and all(author in page.authors for author, _ in reading.anchors()):
            # a post's own part (its message cell, one in each post) holds most of its words
            shares = [
                int(page.words[x])
                / max(1, next(int(page.words[m]) for m in members if m < x < int(page.end[m])))
                for x in reading.members
            ]
            if float(median(shares)) >= 0.5:
                continue
            sentences = [_sentence_words(page, x) for x in reading.members]
            if float(median(sentences)) >= MIN_MEDIAN_WORDS:
                found.append(reading)
    if not found:
        return best, set()
    comments = max(found, key=lambda reading: (reading.complete, -reading.members[0]))
    merged = _read_group(page, best.shape, sorted({*members, *comments.members}))
    return (best, set()) if merged is None else (merged, set(comments.members))


def _wraps(page: _Page, reading: _Reading, posts: _Reading) -> bool:
    """Whether a group's members are wrappers of the posts of another (the reply lists of a
    comment tree, each holding several posts and nothing of its own): at least half of them hold
    two or more posts of `posts`, and at the median they hold fewer than `MIN_MEDIAN_WORDS` words
    outside those posts. An answer holding the comments under it has prose of its own."""
    inner = posts.members
    outside: list[int] = []
    holding = 0
    for member in reading.members:
        end = int(page.end[member])
        held = [m for m in inner if member < m < end]
        holding += len(held) >= MIN_POSTS  # a post's own wrapper holds one
        tops = [m for m in held if not any(o < m < int(page.end[o]) for o in held)]
        outside.append(int(page.words[member]) - sum(int(page.words[m]) for m in tops))
    return holding * 2 >= len(reading.members) and float(median(outside)) < MIN_MEDIAN_WORDS


def _headlined(page: _Page, reading: _Reading) -> bool:
    """Whether at least half of a group's members hold a headline: a heading, or a link of at
    least `HEADLINE_WORDS` words (not an author's, nor a permalink on a time) holding at least
    `HEADLINE_SHARE` of the member's words. Teaser cards lead with one; comments do not. Forum engines title every post
    ("Re: ...", phpBB), so this is asked of comments only."""
    doc = page.doc
    tags = doc.tag
    links = indices_of(tags, "a")
    headings = sorted(e for tag in _HEADINGS for e in indices_of(tags, tag))

    def headed(member: int) -> bool:
        end = page.end[member]
        if _holds(headings, member, end):
            return True
        least = max(HEADLINE_WORDS, HEADLINE_SHARE * int(page.words[member]))
        return any(
            page.words[a] >= least and a not in page.authors and not _holds(page.dates, a, int(page.end[a]))
            for a in links[bisect_left(links, member) :]
            if a < end
        )

    return sum(headed(member) for member in reading.members) * 2 >= len(reading.members)


def _holds(anchors: list[int], first: int, end: int) -> bool:
    """Whether one of the sorted element indices `anchors` lies in [first, end)."""
    at = bisect_left(anchors, first)
    return at < len(anchors) and anchors[at] < end


def _own(page: _Page, member: int, members: list[int]) -> tuple[list[int], int, int]:
    """The members nested in `member` (outermost only), and its own words and link words."""
    nested: list[int] = []
    stop = -1
    for other in members:
        if other > member and page.inside(member, other) and other >= stop:
            nested.append(other)
            stop = int(page.end[other])
    words = int(page.words[member]) - sum(int(page.words[n]) for n in nested)
    links = int(page.link_words[member]) - sum(int(page.link_words[n]) for n in nested)
    return nested, words, links


def _first_own(page: _Page, anchors: list[int], member: int, nested: list[int]) -> int:
    """The first anchor inside `member` and outside its nested members (-1: none)."""
    end = page.end[member]
    for anchor in anchors[bisect_left(anchors, member) :]:
        if anchor >= end:
            break
        if anchor != member and not any(page.inside(n, anchor) for n in nested):
            return int(anchor)
    return -1


def _anchors(page: _Page, member: int, nested: list[int]) -> tuple[int, int]:
    """A post's author (its first name) and time (its first machine time, else its first date,
    else the time in a header row before it), -1 for either it has not."""
    author = _first_own(page, page.names, member, nested)
    date = _first_own(page, page.times, member, nested)
    if date < 0:
        date = _first_own(page, page.dates, member, nested)
    if date < 0:
        date = _header_date(page, member)
    if author in page.pictured:
        author = _written_name(page, member, nested, author, date)
    if author >= 0 and date >= 0 and author not in page.linked and _labels(page, author, date):
        author = _linked_name(page, member, nested, author)
    if author < 0 and date >= 0:
        author = _byline_name(page, member, date)
    return author, date


def _written_name(page: _Page, member: int, nested: list[int], pictured: int, date: int) -> int:
    """For an author read from an avatar's `alt` ("ana avatar", "User avatar"), the name written
    as text: the next own name linking where the avatar links, or written before the post's
    time (the byline); else the avatar's."""
    doc = page.doc
    href = doc.elements[pictured].attributes.get("href")
    end = int(page.end[member])
    for anchor in page.names[bisect_left(page.names, pictured + 1) :]:
        if anchor >= end:
            break
        if anchor in page.pictured or any(page.inside(n, anchor) for n in nested):
            continue
        if (href and doc.elements[anchor].attributes.get("href") == href) or 0 <= anchor < date:
            return anchor
    return pictured


def _labels(page: _Page, element: int, date: int) -> bool:
    """Whether an element's text is the label of a time: the next text after it is the time's
    ("Posted on" before "March 2, 2024")."""
    doc, t = page.doc, page.doc.tokens
    for i in range(int(doc.end[element]) + 1, len(t)):
        if t.kind[i] == TEXT and t.chars[i] > 0:
            return page.inside(date, int(t.element[i]))
    return False


def _linked_name(page: _Page, member: int, nested: list[int], hinted: int) -> int:
    """For an author read from a class alone that labels the time ("meta-prep-author": "Posted
    on", `_labels`), the next own
    name linking to a profile in the same row (their innermost common element holding at most
    `BYLINE_WORDS` words); else the hinted one."""
    end = int(page.end[member])
    for anchor in page.names[bisect_left(page.names, hinted + 1) :]:
        if anchor >= end:
            break
        if (
            anchor not in page.linked
            or not any(ch.isalpha() for ch in page.authors[anchor])  # a count links to a profile too
            or any(page.inside(n, anchor) for n in nested)
        ):
            continue
        row = hinted
        while row > member and not page.inside(row, anchor):
            row = int(page.parent[row])
        return anchor if row > member and page.words[row] <= BYLINE_WORDS else hinted
    return hinted


def _byline_name(page: _Page, member: int, date: int) -> int:
    """The name written before a post's time in its byline (the time's header: its highest
    ancestor inside the post of at most `HEADER_WORDS` words), when the page marks the name up in
    no way of its own ("<div>Mod Sharon</div><div>28/11/2025 at 7:07 pm</div>", classes hashed by
    a CSS-in-JS library): the first text of the header before the time that reads as a name, with
    a letter in it ("#12" is a post number; a member's title, "Member", follows the name in an
    author's box). -1: none."""
    doc, t = page.doc, page.doc.tokens
    head = date
    e = int(page.parent[date])
    while e > member and page.words[e] <= HEADER_WORDS:
        head = e
        e = int(page.parent[e])
    for i in range(int(doc.start[head]), int(doc.start[date])):
        if t.kind[i] != TEXT or t.chars[i] == 0:
            continue
        element = int(t.element[i])
        name = name_of(doc, element)
        if name and any(ch.isalpha() for ch in name) and not page.quoted[element]:
            return element
    return -1


def _read_group(page: _Page, shape: str, members: list[int]) -> _Reading | None:
    # a member inside a menu, header, footer or sidebar is no post
    members = [m for m in members if not page.outside(m) and not page.quoted[m]]
    if len(members) < MIN_POSTS:
        return None
    found: list[_PostAnchors] = []
    own_words: list[int] = []
    link_shares: list[float] = []
    complete = 0
    authored = 0
    dated = False
    total = 0
    anchored = []
    for member in members:
        nested, words, links = _own(page, member, members)
        anchored.append((member, nested, words, links, *_anchors(page, member, nested)))
    for member, nested, words, links, author, date in _authors_dates(page, anchored):
        head_words = sum(int(page.words[x]) for x in (author, date) if x >= 0)
        prose = words - head_words
        if prose < 1 or (author < 0 and date < 0):
            continue
        own_words.append(prose)
        link_shares.append(max(0, links - (int(page.words[author]) if author >= 0 else 0)) / max(prose, 1))
        complete += author >= 0 and date >= 0
        authored += author >= 0
        dated = dated or date >= 0
        total += prose
        found.append((member, nested, author, date, words))
    if not dated:
        # A thread whose posts show no time (a script-less copy of an app's thread): the posts
        # with an author are whole, and such a group competes only where no group has times.
        if authored < MIN_UNDATED_POSTS:
            return None
        complete = authored
    if complete < MIN_POSTS:
        return None
    # Members without an author or a time count against their group: a post's cells (its author
    # box and its message, siblings of one shape) are no posts of their own.
    complete -= len(found) - complete
    if float(median(own_words)) < MIN_MEDIAN_WORDS or float(median(link_shares)) > MAX_LINK_SHARE:
        return None
    return _Reading(shape, [post[0] for post in found], complete, total, found, dated)


def _read_once(
    page: _Page, shape: str, members: list[int], read: dict[tuple[int, ...], _Reading | None]
) -> _Reading | None:
    """`_read_group`, read once per set of members: shapes that name the same elements (a comment's
    `li#comment-#` and `li.comment`) read alike but for the shape (for speed: four such groups took
    2 ms of the 7.7 ms on `server_load.py`'s page). Each reading has its own list of members and
    reads its posts' parts itself; the anchors it reads them from (`found`) are shared, and never
    changed."""
    key = tuple(members)
    if key not in read:
        read[key] = _read_group(page, shape, members)
    reading = read[key]
    if reading is None:
        return None
    return replace(reading, shape=shape, members=list(reading.members))


_Anchored = tuple[int, list[int], int, int, int, int]


def _date_shape(page: _Page, date: int) -> str:
    """A date's element and its parent, by tag and class names less digits."""
    doc = page.doc
    parent = int(page.parent[date])
    return " ".join(
        f"{doc.tag[e]}.{_DIGITS.sub('#', doc.classes[e] or '')}" if e >= 0 else "" for e in (date, parent)
    )


def _authors_dates(page: _Page, anchored: list[_Anchored]) -> list[_Anchored]:
    """The posts' times less the authors' dates: a date of one shape (`_date_shape`) and one text
    in two posts by one author is the author's (the day they joined), not a post's time; in
    every post, a date of that shape gives way to the post's first date of another shape (or the
    time in a header row before it, `_header_date`). Entries: member, nested members, own words,
    own link words, author, date."""
    doc = page.doc
    seen: set[tuple[str, str, str]] = set()
    fields: set[str] = set()
    for _, _, _, _, author, date in anchored:
        if author < 0 or date < 0:
            continue
        attrs = doc.elements[date].attributes
        shown = " ".join([page.text(date), *(attrs.get(k) or "" for k in (*_TIME_ATTRIBUTES, "title"))])
        key = (_date_shape(page, date), page.authors.get(author) or name_of(doc, author), shown)
        if key in seen:
            fields.add(key[0])
        seen.add(key)
    if not fields:
        return anchored
    out: list[_Anchored] = []
    for member, nested, words, links, author, date in anchored:
        if date >= 0 and _date_shape(page, date) in fields:
            end = int(page.end[member])
            own = [
                d
                for d in (*page.times, *page.dates)
                if member < d < end
                and not any(page.inside(n, d) for n in nested)
                and _date_shape(page, d) not in fields
            ]
            other = own[0] if own else _header_date(page, member)
            if other >= 0:
                date = other
        out.append((member, nested, words, links, author, date))
    return out


def _header_date(page: _Page, member: int) -> int:
    """The time in a header row just before the post (its previous sibling, holding a time, no
    author and at most `HEADER_WORDS` words), or -1."""
    parent = int(page.parent[member])
    if parent < 0:
        return -1
    previous = -1
    for child in _children(page, parent):
        if child == member:
            break
        previous = child
    if previous < 0 or page.words[previous] > HEADER_WORDS:
        return -1
    end = int(page.end[previous])
    if any(previous <= a < end for a in page.names):
        return -1
    return next((d for d in page.dates if previous <= d < end), -1)


def _head(page: _Page, anchor: int, other: int, top: int, words: int) -> int:
    """The anchor's header: its highest ancestor below the post `top` that holds neither the other
    anchor (a post's author box and its date line are apart in many engines, together in others)
    nor more than `HEAD_SHARE` of the post's words (beside the anchor's, punctuation around it:
    "(3 hours ago)")."""
    head = anchor
    e = int(page.parent[anchor])
    limit = max(HEAD_SHARE * words, page.words[anchor])
    own = _ALNUM.sub("", page.text(anchor))
    while (
        e > top
        and e >= 0
        and (page.words[e] <= limit or _ALNUM.sub("", page.text(e)) == own)
        and not (other >= 0 and page.inside(e, other))
    ):
        head = e
        e = int(page.parent[e])
    return head


def _byline(page: _Page, member: int, nested: list[int], author: int, date: int, words: int) -> int:
    """The post's byline row: the innermost element holding its author and its time, when it is
    short (at most `BYLINE_WORDS` words, less than half of the post's) and made of short texts
    (none of more than `CONTROL_WORDS` words outside the author and the time): a score, a badge
    ("OP") and controls beside the name are the row's, not the post's; so are its ancestors
    inside the post that are alike (an avatar, a label beside the name's line). -1: none."""
    if author < 0 or date < 0:
        return -1
    row = author
    while row > member and not page.inside(row, date):
        row = int(page.parent[row])
    if not _row_like(page, member, nested, row, author, date, words):
        return -1
    while _row_like(page, member, nested, int(page.parent[row]), author, date, words):
        row = int(page.parent[row])
    return row


def _row_like(
    page: _Page, member: int, nested: list[int], row: int, author: int, date: int, words: int
) -> bool:
    """Whether an element inside a post reads as its byline row (`_byline`)."""
    if row <= member or page.words[row] > BYLINE_WORDS or 2 * int(page.words[row]) >= words:
        return False
    if any(page.inside(row, n) for n in nested):
        return False
    doc, t = page.doc, page.doc.tokens
    for i in range(int(doc.start[row]), int(doc.end[row]) + 1):
        if t.kind[i] != TEXT or t.chars[i] == 0 or len(t.text[i].split()) <= CONTROL_WORDS:
            continue
        if not any(page.inside(x, int(t.element[i])) for x in (author, date)):
            return False
    return True


def _lead(page: _Page, member: int, nested: list[int], head: int, heads: list[int], words: int) -> list[int]:
    """What a post shows before its header, when it is a title: the elements before the header
    (the previous siblings of the header and of its ancestors inside the post, less the other
    headers: an author's box), together at most
    `BYLINE_WORDS` words, most of them in a heading or in links (a linked title, its tags, a
    score), and followed by more words than they hold (a short answer written before its
    author's card is no title). Empty: none."""
    doc = page.doc
    lead: list[int] = []
    e = head
    while e > member:
        parent = int(page.parent[e])
        lead.extend(
            c
            for c in _children(page, parent)
            if c < e
            and not any(page.inside(n, c) for n in nested)
            and not any(page.inside(c, h) or page.inside(h, c) for h in heads)
        )
        e = parent
    lead_words = sum(int(page.words[c]) for c in lead)
    if not lead_words or lead_words > BYLINE_WORDS:
        return []
    after = words - lead_words - sum(int(page.words[h]) for h in heads)
    if after < max(MIN_MEDIAN_WORDS, lead_words):
        return []
    titled = sum(
        int(page.words[h])
        for c in lead
        for h in range(c, int(page.end[c]))
        if doc.tag[h] in _HEADINGS
        and not any(page.inside(x, h) for x in range(c, h) if doc.tag[x] in _HEADINGS)
    )
    linked = sum(int(page.link_words[c]) for c in lead)
    return [c for c in lead if page.words[c]] if 2 * max(titled, linked) >= lead_words else []


def _parts(page: _Page, member: int, nested: list[int], author: int, date: int, words: int) -> StructuralPost:
    row = _byline(page, member, nested, author, date, words)
    heads = (
        [row]
        if row >= 0
        else [_head(page, x, y, member, words) for x, y in ((author, date), (date, author)) if x >= 0]
    )
    heads = [h for h in heads if h != member]
    heads += [c for h in heads for c in _lead(page, member, nested, h, heads, words)]
    head_words = sum(int(page.words[h]) for h in heads)
    body = member
    doc = page.doc
    while True:
        children = [c for c in _children(page, body) if not any(page.inside(n, c) for n in nested)]
        if not children:
            break
        own = {
            c: int(page.words[c]) - sum(int(page.words[n]) for n in nested if page.inside(c, n))
            for c in children
        }
        child = max(own, key=own.__getitem__)
        # the body holds most of what is not a header (and no other paragraph), and not the author;
        # what is left beside it counts the body's own text between its children (a reply written
        # after a quote, as bare text)
        loose = int(page.words[body]) - sum(int(page.words[c]) for c in _children(page, body))
        rest = (
            sum(own.values())
            + loose
            - own[child]
            - sum(int(page.words[h]) for h in heads if page.inside(body, h) and not page.inside(child, h))
        )
        if own[child] < BODY_SHARE * max(words - head_words, 1) or rest > max(
            4, (1 - BODY_SHARE) / 2 * words
        ):
            break
        if author >= 0 and page.inside(child, author) and row < 0:
            break  # past a byline row (dropped as the post's header), the body may hold the author
        if any(c < child and any(page.quoted[c : page.end[c]]) for c in children):
            break  # a quote before it (what it replies to) is the post's too
        if any(
            c != child
            and doc.tag[c] == doc.tag[child] == "p"
            and not any(page.inside(c, h) or page.inside(h, c) for h in heads)
            and _sentence_words(page, c, tuple(n for n in nested if page.inside(c, n)))
            for c in children
        ):
            break  # another paragraph beside it (with a sentence) is the post's too
        body = child
    dropped = tuple(h for h in heads if page.inside(body, h) and h != body)
    name = (page.authors.get(author) or name_of(page.doc, author)) if author >= 0 else ""
    return StructuralPost(member, body, author, date, dropped, name)


def _children(page: _Page, element: int) -> list[int]:
    """The element children of an element, by index (elements are in document order)."""
    ends = page.end
    end = ends[element]
    children: list[int] = []
    child = element + 1
    while child < end:
        children.append(child)
        child = ends[child]
    return children


def _opening_post(page: _Page, reading: _Reading) -> StructuralPost | None:
    """The thread's first post when its markup is not the replies' (step 4)."""
    doc = page.doc
    first = reading.members[0]
    # A sibling of the first reply, of its tag, holding an author and prose: the opening post in
    # its own classes (bbPress's "topic" beside its "reply"s).
    parent = int(page.parent[first])
    siblings = (
        [c for c in _children(page, parent) if page.first <= c < first and doc.tag[c] == doc.tag[first]]
        if parent >= 0
        else []
    )
    for sibling in reversed(siblings[-2:]):
        author, date = _anchors(page, sibling, [])
        words = int(page.words[sibling])
        if author < 0 or date < 0 or words - int(page.words[author]) < MIN_MEDIAN_WORDS:
            continue
        if int(page.link_words[sibling]) > OPENING_LINK_SHARE * words:
            continue
        return _parts(page, sibling, [], author, date, words)
    earlier = [d for d in page.dates if d < first and not page.outside(d, sections=True)]
    # Posts in the page's main landmark: so is their opening post (a sidebar beside them is none).
    main = _main_landmark(page, first)
    tops: list[int] = []
    found: list[tuple[int, StructuralPost]] = []
    for latest in reversed(earlier):
        top = latest
        e = int(page.parent[latest])
        while e >= 0 and not page.inside(e, first):
            top = e
            e = int(page.parent[e])
        if top == latest or top in tops:
            continue
        tops.append(top)
        if len(tops) > 3:
            break
        if (main >= 0 and not page.inside(main, top)) or doc.tag[top] in _SCOPED:
            continue  # a sidebar beside the posts, or the thread's own <header>
        author, date = _anchors(page, top, [])
        if author not in page.authors or date < 0:
            continue  # an opening post's author is marked up as one (not read off a byline)
        words = int(page.words[top])
        headings = sum(int(page.words[h]) for h in range(top, int(page.end[top])) if doc.tag[h] in _HEADINGS)
        prose = words - headings - int(page.words[author]) - int(page.words[date])
        if prose < MIN_MEDIAN_WORDS or int(page.link_words[top]) > OPENING_LINK_SHARE * words:
            continue
        # A thread's header restates its first post's author and time: it is no post.
        head_author, head_date = reading.anchors()[0]
        if (
            head_author >= 0
            and head_date >= 0
            and page.authors.get(author) == page.authors.get(head_author)
            and page.text(date) == page.text(head_date)
        ):
            continue
        post = _parts(page, top, [], author, date, words)
        sentences = _sentence_words(page, top)
        if sentences < MIN_MEDIAN_WORDS:
            # A header alone (a title, its byline, a score, no sentence): the body is the block
            # of prose after it, before the replies (a story's text set apart from its title and
            # byline); without one, the header is no post.
            text = _text_after(page, top, first)
            if text >= 0:
                found.append((int(page.words[text]), replace(post, body=text, dropped=())))
        elif _prose(page, post) >= MIN_MEDIAN_WORDS:
            found.append((sentences, post))
    # Of the blocks before the replies that read as a post, the one with the most sentences (an
    # article over the teaser cards between it and its comments).
    return max(found, key=lambda pair: pair[0])[1] if found else None


def _main_landmark(page: _Page, element: int) -> int:
    """The `<main>` (or `role="main"`) an element lies in, or -1."""
    doc = page.doc
    e = element
    while e >= 0:
        if doc.tag[e] == "main" or doc.role[e] == "main":
            return e
        e = int(page.parent[e])
    return -1


def _sentence_words(page: _Page, top: int, nested: tuple[int, ...] = ()) -> int:
    """The words of an element's texts of more than `CONTROL_WORDS` words outside links,
    headings and the `nested` posts, and not the page's title: its sentences, not its title, its
    byline or its controls."""
    doc, t = page.doc, page.doc.tokens
    skip = [h for h in range(top, int(page.end[top])) if doc.tag[h] in _HEADINGS] + list(nested)
    title = " ".join(_ALNUM.sub(" ", doc.title).split()).lower()
    total = 0
    for i in range(int(doc.start[top]), int(doc.end[top]) + 1):
        if t.kind[i] != TEXT or t.chars[i] == 0 or t.in_anchor[i]:
            continue
        count = len(t.text[i].split())
        element = int(t.element[i])
        if count > CONTROL_WORDS and not any(page.inside(h, element) for h in skip):
            if title and " ".join(_ALNUM.sub(" ", t.text[i]).split()).lower() in title:
                continue  # the thread's title, restated
            total += count
    return total


def _story_text(page: _Page, posts: list[StructuralPost]) -> list[StructuralPost]:
    """The first post, when it is a header alone (a title, a byline, a score: no sentence) and a
    block of prose follows it before the second post (a story's text set apart from its title
    and byline, `_text_after`), with that block as its body."""
    if len(posts) < MIN_POSTS:
        return posts
    first, second = posts[0], posts[1].post
    if page.inside(first.post, second) or _sentence_words(page, first.post) >= MIN_MEDIAN_WORDS:
        return posts
    top = first.post
    e = int(page.parent[top])
    while e >= 0 and not page.inside(e, second):
        top = e
        e = int(page.parent[e])
    text = _text_after(page, top, second)
    if text < 0:
        return posts
    return [replace(first, body=text, dropped=()), *posts[1:]]


def _prose(page: _Page, post: StructuralPost) -> int:
    """The words of a post's body less its headings, its header and its author and time."""
    doc = page.doc
    body = post.body
    end = int(page.end[body])
    words = int(page.words[body]) - sum(int(page.words[d]) for d in post.dropped if page.inside(body, d))
    words -= sum(
        int(page.words[x])
        for x in (post.author, post.date)
        if x >= 0 and page.inside(body, x) and not any(page.inside(d, x) for d in post.dropped)
    )
    return words - sum(
        int(page.words[h])
        for h in range(body, end)
        if doc.tag[h] in _HEADINGS and not any(page.inside(d, h) for d in post.dropped)
    )


def _text_after(page: _Page, top: int, first: int) -> int:
    """The first sibling after `top` holding words, before the one holding the replies' first
    member, when it is prose: at least `2 * MIN_MEDIAN_WORDS` words, no author nor time of its
    own, at most `OPENING_LINK_SHARE` of its words in links. -1: none."""
    parent = int(page.parent[top])
    if parent < 0:
        return -1
    for child in _children(page, parent):
        if child <= top or not page.words[child]:
            continue
        end = int(page.end[child])
        words = int(page.words[child])
        if (
            page.inside(child, first)
            or words < 2 * MIN_MEDIAN_WORDS
            or _holds(page.dates, child, end)
            or _holds(page.names, child, end)
            or page.link_words[child] > OPENING_LINK_SHARE * words
        ):
            return -1
        return child
    return -1


def _drop_controls(page: _Page, posts: list[StructuralPost], everyone: set[int]) -> list[StructuralPost]:
    """Posts less the template's controls: short texts found inside at least `CONTROL_SHARE` of the
    posts (step 5), and numbers in elements of one shape (tag and classes) found so in as many
    (vote and reaction counts). A post's controls are counted over all of it (less the posts in
    it and the names on the page), for a control may lie beside its body in one post and inside
    it in another; what lies inside the body is dropped."""
    if len(posts) < MIN_POSTS:
        return posts
    doc = page.doc
    names = {name.lower() for name in page.authors.values()}
    seen: list[dict[str, list[int]]] = []
    counts: Counter[str] = Counter()
    for post in posts:
        texts: dict[str, list[int]] = defaultdict(list)
        end = int(page.end[post.post])
        element = post.post + 1
        while element < end:
            if element in everyone or element in (post.author, post.date):
                element = int(page.end[element])  # a post inside this one, or its anchors
                continue
            if 0 < page.words[element] <= CONTROL_WORDS and doc.subtree_chars[element] <= 30:
                parent = int(page.parent[element])
                if not (page.words[parent] == page.words[element] and parent not in (post.body, post.post)):
                    text = page.text(element).lower()
                    if _COUNT.match(text) and doc.classes[element]:
                        classes = sorted(_DIGITS.sub("#", c) for c in (doc.classes[element] or "").split())
                        texts[f"{doc.tag[element]}.{'.'.join(classes)} #"].append(element)
                    elif text not in names:
                        texts[text].append(element)
            element += 1
        seen.append(texts)
        counts.update(texts.keys())
    least = max(MIN_POSTS, int(np.ceil(CONTROL_SHARE * len(posts))))
    controls = {text for text, count in counts.items() if count >= least}
    if not controls:
        return posts
    return [
        replace(
            post,
            dropped=tuple(
                sorted(
                    {
                        *post.dropped,
                        *(
                            e
                            for text in controls
                            for e in texts.get(text, ())
                            if post.body < e < int(page.end[post.body])
                        ),
                    }
                )
            ),
        )
        for post, texts in zip(posts, seen, strict=True)
    ]
