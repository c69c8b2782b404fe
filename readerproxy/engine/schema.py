"""JSON-LD, read once for every reader: the scripts parsed (`script_values`, `parsed_json_ld`), one
walker over the parsed values (`walk`), the `@type` reader for parsed objects (`ld_types`) and for a
script's raw text (`text_types`, and `bytes_types` for the proxy's head sniffer), the schema.org
type vocabularies the readers test against, `ld_text` (a string as the page shows it) and
`ld_people` (the one reader of a person value: an article's, a post's or a question's `author`).

The walker's options are each reader's measured choices, kept as they were when the six walkers
became one: which keys it follows (`follow`), how deep (`max_depth`: 8 for a listing's ItemList,
12 for products and recipes, 20 for the learned scorer's text, none for dates, authors and posts),
and what it yields (objects, or every member of every object for readers of properties).
"""

from __future__ import annotations

import html as html_lib
import json
import re
import weakref
from collections.abc import Collection, Iterator
from itertools import repeat
from typing import Any

from .parse.document import Document
from .parse.text import squash

# -- the scripts, parsed once per Document ---------------------------------------------------------

#: Each Document's parsed JSON-LD: per script (`script_values`), and all of them (`parsed_json_ld`),
#: kept while the Document lives.
_SCRIPT_LD: weakref.WeakKeyDictionary[Document, dict[int, list[Any]]] = weakref.WeakKeyDictionary()
_PARSED_LD: weakref.WeakKeyDictionary[Document, list[Any]] = weakref.WeakKeyDictionary()


def script_values(doc: Document, index: int) -> list[Any]:
    """The values of the page's `index`-th JSON-LD script (`doc.json_ld[index]`, `load_json_ld`),
    parsed once per Document for every reader: the readers that look at a script's text first (for
    speed: no parse of a script without the keys they need) share the parses. Read the values, do
    not change them."""
    parsed = _SCRIPT_LD.setdefault(doc, {})
    values = parsed.get(index)
    if values is None:
        values = parsed[index] = load_json_ld(doc.json_ld[index])
    return values


def parsed_json_ld(doc: Document) -> list[Any]:
    """Each `<script type="application/ld+json">` of the page parsed (`script_values`), in document
    order, for every reader (metadata, dates, facts): read the values, do not change them."""
    cached = _PARSED_LD.get(doc)
    if cached is None:
        cached = _PARSED_LD[doc] = [
            value for index in range(len(doc.json_ld)) for value in script_values(doc, index)
        ]
    return cached


#: A JSON string, or a JavaScript line comment (`//` to the end of the line): strings are matched so
#: that a "//" inside one ("https://...") is not taken for a comment. Linear in the text: the two
#: string alternatives never match the same character, and no `/* ... */` form (an unclosed one
#: would be searched for to the end of the text from every "/*").
_STRING_OR_COMMENT = re.compile(r'("(?:\\.|[^"\\])*")|//[^\n]*')
_JSON = json.JSONDecoder(strict=False)


def load_json_ld(raw: str) -> list[Any]:
    """The JSON values of one JSON-LD script, read as leniently as search engines read them: without
    a `<![CDATA[ ... ]]>` wrapper; control characters (a line break) inside strings allowed; a
    template's JavaScript comments ("// hardcoded value") dropped; several values one after the other
    (`{...},{...}`) each read. [] for a script that is still not JSON. The strict parse first, for
    speed: most scripts are valid (of the 1,604 pages of the three shared sets, 13 had a script only
    the lenient reading reads, 8 one it cannot)."""
    # for speed: the wrapper is looked for only where its marks are there at all
    if "<![CDATA[" in raw or "]]>" in raw:
        raw = raw.strip().removeprefix("<![CDATA[").removesuffix("]]>")
    try:
        return [json.loads(raw)]
    except RecursionError:
        return []
    except ValueError:
        pass
    text = _STRING_OR_COMMENT.sub(lambda found: found.group(1) or "", raw) if "/" in raw else raw
    values: list[Any] = []
    position, end = 0, len(text)
    try:
        while True:
            while position < end and (text[position].isspace() or text[position] in ",;"):
                position += 1
            if position >= end:
                return values
            value, position = _JSON.raw_decode(text, position)
            values.append(value)
    except (ValueError, RecursionError):
        return values


# -- the walker ------------------------------------------------------------------------------------


def walk(
    value: Any,
    *,
    follow: tuple[str, ...] | None = None,
    max_depth: int | None = None,
    marks: Collection[str] = (),
    members: bool = False,
) -> Iterator[tuple[str, Any]]:
    """The objects of a parsed JSON-LD value, in document order (an object before what it holds).

    - `follow`: the keys whose values are walked, in that order (a `@graph`, a page's `mainEntity`);
      None: every key, in the object's own order. List items are always walked.
    - `max_depth`: each list and each followed key is one level deeper than its holder; a value
      deeper than this is not read (None: no limit; the walk keeps its own stack, so even a page's
      deepest nesting raises no RecursionError).
    - `marks`: keys that say whose the objects under them are (`facts`: a product under
      `isRelatedTo` is another product than the page's own).
    - what it yields: (the nearest enclosing key of `marks`, "" for none; the object) for every
      object; with `members`, instead (key, value) for every member of every object read, each
      before the values inside it (the readers of a property wherever it sits)."""
    # each frame: the (key, child) pairs left to read, their depth, their mark, whether they are an
    # object's members (else a list's items, or the top value)
    stack: list[tuple[Iterator[tuple[str, Any]], int, str, bool]] = [(iter((("", value),)), 0, "", False)]
    while stack:
        children, depth, mark, of_object = stack[-1]
        step = next(children, None)
        if step is None:
            stack.pop()
            continue
        key, node = step
        if of_object:
            if members:
                yield key, node
            if key in marks:
                mark = key
        if max_depth is not None and depth > max_depth:
            continue
        if isinstance(node, dict):
            if not members:
                yield mark, node
            pairs = node.items() if follow is None else [(k, node[k]) for k in follow if k in node]
            stack.append((iter(pairs), depth + 1, mark, True))
        elif isinstance(node, list):
            stack.append((zip(repeat(""), node), depth + 1, mark, False))


def objects(
    value: Any, follow: tuple[str, ...] | None = None, max_depth: int | None = None
) -> Iterator[dict[str, Any]]:
    """Every object of a parsed JSON-LD value, in document order (`walk` without marks)."""
    for _, found in walk(value, follow=follow, max_depth=max_depth):
        yield found


#: What a page's objects are found under: its scripts' top values, list items and `@graph` members.
PAGE_FOLLOW = ("@graph",)


def page_objects(doc: Document) -> Iterator[dict[str, Any]]:
    """Every JSON-LD object of the page, `@graph` members and list items included (no depth limit;
    the scripts parsed once per Document: `parsed_json_ld`): what dates and authors search."""
    for parsed in parsed_json_ld(doc):
        yield from objects(parsed, PAGE_FOLLOW)


# -- @type -----------------------------------------------------------------------------------------


def type_values(item: dict[str, Any]) -> list[Any]:
    """An object's `@type` as a list of its values, as written (one name or a list of them)."""
    kind = item.get("@type")
    return kind if isinstance(kind, list) else [kind]


def ld_types(item: dict[str, Any]) -> list[str]:
    """The schema.org type names of a parsed JSON-LD object, in order, without a vocabulary URL
    ("Product" for "https://schema.org/Product"); values that are not strings are no names."""
    return [name.rsplit("/", 1)[-1] for name in type_values(item) if isinstance(name, str)]


def has_type(item: dict[str, Any], names: Collection[str]) -> bool:
    """Whether one of the object's type names, in lower case, is one of `names` (lower case)."""
    return any(name.lower() in names for name in ld_types(item))


#: `"@type": "X"` or `"@type": ["X", "Y"]` in a script's text, read without parsing (cheaper, and
#: broken JSON still names its types); one pattern for text and, compiled again, for bytes.
_TEXT_TYPE_PATTERN = r'"@type"\s*:\s*(?:"([^"]{1,80})"|\[([^\]]{1,400})\])'
_QUOTED_PATTERN = r'"([^"]{1,80})"'
_TEXT_TYPE = re.compile(_TEXT_TYPE_PATTERN)
_QUOTED = re.compile(_QUOTED_PATTERN)
_BYTES_TYPE = re.compile(_TEXT_TYPE_PATTERN.encode())
_BYTES_QUOTED = re.compile(_QUOTED_PATTERN.encode())


def type_name(value: str) -> str:
    """`https://schema.org/Product` or `schema:Product` -> `product`."""
    return value.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1].strip().lower()


def text_types(raw: str) -> list[str]:
    """Every type named by a `@type` in a JSON-LD script's text, as written, in order (no parse)."""
    names: list[str] = []
    for single, many in _TEXT_TYPE.findall(raw):
        if single:
            names.append(single)
        else:
            names.extend(_QUOTED.findall(many))
    return names


def bytes_types(raw: bytes) -> list[str]:
    """`text_types` of a script still in bytes (the proxy's head sniffer, before any decoding), each
    name `type_name`d; a byte outside ASCII reads as U+FFFD."""
    names: list[str] = []
    for single, many in _BYTES_TYPE.findall(raw):
        for name in [single] if single else _BYTES_QUOTED.findall(many):
            names.append(type_name(name.decode("ascii", "replace")))
    return names


# -- vocabularies ----------------------------------------------------------------------------------
# Each reader's own list, chosen where it was measured: they differ on purpose (a model was trained
# on one, a rule tuned on another), so each stays as its reader uses it.

#: Readability.js's jsonLdArticleTypes, alternation unanchored as there (a type containing one of
#: these names counts): the article object the metadata reads (`tags.json_ld_article`).
READABILITY_ARTICLE_TYPES = re.compile(
    r"^Article|AdvertiserContentArticle|NewsArticle|AnalysisNewsArticle|AskPublicNewsArticle|"
    r"BackgroundNewsArticle|OpinionNewsArticle|ReportageNewsArticle|ReviewNewsArticle|Report|"
    r"SatiricalArticle|ScholarlyArticle|MedicalScholarlyArticle|SocialMediaPosting|BlogPosting|"
    r"LiveBlogPosting|DiscussionForumPosting|TechArticle|APIReference$"
)
#: Types of an organisation rather than a person (an author that is the publisher), searched in a
#: type's name.
ORGANISATION_TYPES = re.compile(r"Organi[sz]ation|Corporation|NewsMedia|Brand|LocalBusiness|WebSite", re.I)
#: Types of a post of a thread, or a reply to one (`thread`'s JSON-LD posts).
FORUM_POST_TYPES = frozenset(
    ("discussionforumposting", "comment", "answer", "question", "socialmediaposting")
)
#: Types of a thread's opening post stated in JSON-LD when only its replies are marked up.
OPENING_POST_TYPES = frozenset(("article", "discussionforumposting", "question", "socialmediaposting"))
#: Types by page kind, as the learned block scorer's page-type features read them (its model was
#: trained on these lists).
BLOCK_KIND_TYPES: dict[str, frozenset[str]] = {
    "ld_product": frozenset(
        "product productgroup offer aggregateoffer individualproduct productmodel".split()
    ),
    "ld_article": frozenset(
        "article newsarticle blogposting report scholarlyarticle techarticle opinionnewsarticle "
        "analysisnewsarticle reportagenewsarticle reviewnewsarticle liveblogposting socialmediaposting".split()
    ),
    "ld_discussion": frozenset("discussionforumposting qapage question answer comment".split()),
    "ld_list": frozenset("itemlist collectionpage searchresultspage offercatalog".split()),
}
#: Types by the page-kind feature they count towards (`pagekind.structured_types`; its model was
#: trained on these groups).
PAGE_KIND_GROUPS: dict[str, str] = {
    name: group
    for group, names in {
        "product": "product productgroup individualproduct productmodel vehicle car somproduct",
        "offer": "offer aggregateoffer pricespecification unitpricespecification",
        "rating": "aggregaterating review rating",
        "recipe": "recipe",
        "article": "article newsarticle blogposting reportagenewsarticle analysisnewsarticle opinionnewsarticle "
        "backgroundnewsarticle reviewnewsarticle scholarlyarticle report liveblogposting socialmediaposting",
        "tech": "techarticle apireference softwaresourcecode",
        "forum": "discussionforumposting comment",
        "qa": "qapage question answer",
        "itemlist": "itemlist collectionpage searchresultspage offercatalog listitem",
        "breadcrumb": "breadcrumblist",
        "faq": "faqpage",
        "org": "organization localbusiness corporation professionalservice service store "
        "homeandconstructionbusiness legalservice medicalbusiness financialservice",
        "software": "softwareapplication webapplication mobileapplication",
        "event": "event course educationalorganization",
        "howto": "howto",
        "person": "person profilepage",
        "webpage": "webpage aboutpage contactpage itempage",
    }.items()
    for name in names.split()
}


# -- text ------------------------------------------------------------------------------------------

#: A character reference (`&#8217;`, `&#x2019;`, `&rsquo;`) left in a string after decoding once.
_REFERENCE = re.compile(r"&(?:#\d{1,7}|#x[0-9a-fA-F]{1,6}|[a-zA-Z]{2,31});")


def ld_text(value: str) -> str:
    """A JSON-LD string as the page shows it: its HTML character references decoded, twice when
    the first pass leaves one. A script's text is not decoded by the HTML parser, and templates write
    entities into it: once ("L&#8217;atelier", WordPress's texturised titles, "&quot;") or escaped
    once more ("L&amp;#8217;atelier", WooCommerce's brands), both shown as "L’atelier". Every
    reader that shows JSON-LD text uses it (facts, listings, threads, product descriptions); the
    learned scorer's `json_ld_text` reads the scripts as its model was trained, undecoded."""
    if "&" not in value:
        return value
    once = html_lib.unescape(value)
    return html_lib.unescape(once) if "&" in once and _REFERENCE.search(once) else once


# -- people ----------------------------------------------------------------------------------------


def is_organisation(value: Any) -> bool:
    """Whether a JSON-LD object's `@type` names an organisation (`ORGANISATION_TYPES`)."""
    kinds = type_values(value) if isinstance(value, dict) else []
    return any(isinstance(k, str) and ORGANISATION_TYPES.search(k) for k in kinds)


def _name(value: Any, alternate: bool) -> str | None:
    name = value.get("name")
    if alternate and not (isinstance(name, str) and squash(name)):
        name = value.get("alternateName")
    return (squash(name) or None) if isinstance(name, str) else None


def ld_people(value: Any, *, alternate: bool = False) -> tuple[str | None, bool]:
    """A JSON-LD `author` (object, list, or Text, which Readability.js skips) as names, and whether
    they are an organisation's: a list keeps its people when it has any. With `alternate`, an
    object without a `name` is read by its `alternateName` (a forum post's author is often only a
    handle). The article's author (`metadata.authors`) and a thread's posts (`views.thread`) read
    their `author` values here; Readability.js's own byline rule is ported as it is written
    (`metadata.tags.ld_author`)."""
    if isinstance(value, str):
        return ((squash(value) or None) if "://" not in value else None), False
    if isinstance(value, dict):
        return _name(value, alternate), is_organisation(value)
    if isinstance(value, list):
        items = [v for v in value if isinstance(v, dict) and _name(v, alternate)]
        people = [v for v in items if not is_organisation(v)] or items
        names = [n for n in (_name(v, alternate) for v in people) if n]
        texts = [
            n for n in ((squash(v) or None) for v in value if isinstance(v, str) and "://" not in v) if n
        ]
        joined = ", ".join(names or texts) or None
        return joined, bool(names) and all(is_organisation(v) for v in people)
    return None, False
