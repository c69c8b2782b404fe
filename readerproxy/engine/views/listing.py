"""A listing or collection page as its items: `listing_items(doc, kind)` -> each item's title, link,
excerpt, date and image.

A content index, a news page or a shop's category page is a list of cards: each one a heading or a
link naming another page, often with a short excerpt, a date, a picture and a "Read more" link to
the same page. Shown as an article it reads as one long paragraph of titles and buttons; the
listing view shows the cards as a list.

The cards are found by the page's structure, not by the names it gives them: among the elements
that hold a link's text, siblings of one tag under one parent form a group (and so do the cards of
a grid written as rows: cards of one tag in rows of one tag under one grandparent). Groups under
`nav`, `header`, `footer` and `aside` are menus and sidebars, not the list. Every group of at least
`MIN_ITEMS` is judged by its first items, and the one that reads best (titles, excerpts, images,
dates) wins; a group of one- or two-word links with nothing else (a menu written as a list) does
not count. When most cards of a group share their first class name, the few that do not (a filter
box, a banner) are left out. When the page's markup gives fewer than `MIN_ITEMS` items, its JSON-LD
`ItemList` is read instead. Page chrome is never an item: an item whose link is an action (a cart, account,
compare or share link, a form's target) or whose title is a control's label ("Add to cart", "This
product has been added to your cart") is dropped (`actions.is_action`), and with fewer than
`MIN_ITEMS` left the page has no listing.

Each item: the title is the card's first heading (else its longest link text, else its picture's
alt text), never a text most cards of the group share (a "View details" button); the link is the
heading's link (else the card's first link); short links to that same page ("Read more", a linked
picture) are folded into the item rather than shown; the excerpt is the card's first paragraph of
some length, else its other text, without form controls and their labels ("Add to compare");
words in separate elements stay apart, a name linked twice in a row is written once; the date is a
`<time>` or a short dated line (`dates.parse_day`);
the image is the card's first picture of some size, its lazy-loaded source found as the article
renderer finds it (`urls.parse_srcset` for a srcset). Links and images are made absolute and kept
only under the one URL-scheme policy (`urls.safe_url`).

`item_cards(doc, enough)` gives the winning group's card elements, and how many items they read as,
to `auto`'s `listing_items` rule (`extractors/learned/`), which keeps their text.

Pure: reads the parsed `Document` (nothing is parsed again except each JSON-LD body), no network.
"""

from __future__ import annotations

import re
import weakref
from bisect import bisect_left
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..metadata.dates import parse_day
from ..output import _image_sources, absolute_url
from ..parse.document import CLOSE, OPEN, TEXT, Document, indices_of
from ..parse.text import squash
from ..schema import ld_text, ld_types, objects, script_values
from ..urls import choose_candidate, parse_srcset, safe_url
from .actions import form_targets, is_action, is_control_label

#: Page kinds that get the listing view.
LISTING_KINDS = frozenset({"listing", "collection"})
#: Fewer items than this and the page is shown as an article: two cards are no list.
MIN_ITEMS = 3
#: Most items kept (a catalogue of thousands is cut here).
MAX_ITEMS = 120
#: Longest excerpt shown, in characters (cut at a word, with an ellipsis).
EXCERPT_CHARS = 220
#: A paragraph shorter than this is not taken as the excerpt on its own.
MIN_PARAGRAPH = 40
#: Longest text (non-space characters) of a link to the item's own page that is folded into the
#: title's link rather than read as the excerpt ("Read more", "Continue reading →").
MAX_FOLDED = 40
#: Longest title kept (longer text in a title slot is a paragraph, cut to this).
MAX_TITLE = 200
#: A picture declared narrower or lower than this (px) is an icon, not the item's image.
MIN_IMAGE_SIDE = 48
#: Groups judged, best first by a cheap estimate (for speed on pages with many groups).
GROUPS_READ = 8
#: Items read of each group judged (the winner is then read in full).
SAMPLE = 8
#: Form controls and their labels ("Add to compare", a size picker): the reader drops them
#: (`output.DROPPED`), and so does an item's text.
CONTROLS = ("form", "button", "label", "select", "textarea", "input", "svg", "dialog")
#: Elements under these are menus and sidebars, never the list.
OUTSIDE_TAGS = frozenset({"nav", "header", "footer", "aside"})
OUTSIDE_ROLES = frozenset({"navigation", "banner", "contentinfo", "complementary"})
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
#: A year of the kind `dates.parse_day` reads: a text without one holds no date.
_YEAR = re.compile(r"(?:19|20)\d\d")
#: A picture's width to ask a srcset for: a card's picture is at most a phone's width at 2x. A
#: density stands for half of it per 1x (a card is at most a phone's width), so 2x is that width.
IMAGE_WIDTH = 750


@dataclass(frozen=True, slots=True)
class ListItem:
    """One item of a listing: `url` is absolute (http, https, mailto or tel), `date` is YYYY-MM-DD."""

    title: str
    url: str
    excerpt: str = ""
    date: str | None = None
    image: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready view (the API's `items` entries)."""
        return {
            "title": self.title,
            "url": self.url,
            "excerpt": self.excerpt,
            "date": self.date,
            "image": self.image,
        }


def listing_items(doc: Document, kind: str) -> tuple[ListItem, ...] | None:
    """The items of a page of kind listing or collection (None: another kind, or fewer than
    `MIN_ITEMS` items found)."""
    if kind not in LISTING_KINDS:
        return None
    items = read_listing(doc)
    return items if len(items) >= MIN_ITEMS else None


def read_listing(doc: Document) -> tuple[ListItem, ...]:
    """The page's items by its markup, else by its JSON-LD ItemList (an empty tuple: neither),
    without the items that are page chrome (`without_actions`): a product page's "Add to cart",
    "My account" and "Start comparison" links are no list, however alike their markup."""
    found = without_actions(doc, markup_items(doc))
    if len(found) >= MIN_ITEMS:
        return found
    stated = without_actions(doc, json_ld_items(doc))
    return stated if len(stated) > len(found) else found


def without_actions(doc: Document, items: tuple[ListItem, ...]) -> tuple[ListItem, ...]:
    """The items whose link is no action and whose title is no control's label
    (`actions.is_action`: a cart, account, compare or share link, a form's target, "Shop now",
    "This product has been added to your cart")."""
    if not items:
        return items
    forms = form_targets(doc)
    return tuple(
        item for item in items if not (is_action(item.url, item.title, forms) or is_control_label(item.title))
    )


# -- markup ---------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Page:
    """What every item's reading shares: the Document and its per-element arrays."""

    doc: Document
    end: np.ndarray  # per element, the index after its last descendant
    url: str  # the page's own address without its fragment ("" when unknown)
    #: the elements of each kind the items are read from, each sorted (document order)
    headings: list[int]
    anchors: list[int]
    images: list[int]
    times: list[int]
    paragraphs: list[int]
    controls: list[int]  # form controls and their labels: never read (the reader drops them)
    terms: list[int]  # `<dt>`s: inside a title, the labels of its facts (`text`)
    ends: list[int]  # `end` as a list (for speed: no numpy scalar per lookup)
    hrefs: dict[int, str | None] = field(default_factory=dict)  # `_href` of each anchor read
    texts: dict[int, str] = field(default_factory=dict)  # `_words` of each title candidate read
    read: dict[tuple[int, frozenset[str]], ListItem | None] = field(default_factory=dict)  # cards read

    @classmethod
    def of(cls, doc: Document) -> _Page:
        tags = doc.tag
        chars = doc.subtree_chars

        def where(*names: str) -> list[int]:
            found: list[int] = []
            for name in names:
                found += indices_of(tags, name)
            return sorted(found)

        end = doc.subtree_end
        return cls(
            doc=doc,
            end=end,
            url=_without_fragment(doc.url or ""),
            headings=[h for h in where(*_HEADINGS) if chars[h] > 0],
            anchors=where("a"),
            images=where("img"),
            times=where("time"),
            paragraphs=where("p"),
            controls=where(*CONTROLS),
            terms=where("dt"),
            ends=end.tolist(),
        )

    def href(self, element: int) -> str | None:
        """`_href` of an element, read once."""
        if element not in self.hrefs:
            self.hrefs[element] = _href(self.doc, element)
        return self.hrefs[element]

    def text(self, element: int) -> str:
        """`_words` of an element up to `MAX_TITLE`, read once, without the terms of a definition
        list inside it: a shop's card can write its name as `<dl><dt>Brand Name</dt><dd>Topo
        Athletic</dd><dt>Product Name</dt><dd>ST-5</dd>...`, the terms for screen readers, and a
        title reads as the descriptions ("Topo Athletic ST-5")."""
        if element not in self.texts:
            terms = self.inside(self.terms, element)
            first, skip = _skipped_mask(self, element, terms) if terms else (0, None)
            self.texts[element] = _words(self, element, MAX_TITLE, skip, first)
        return self.texts[element]

    def inside(self, found: list[int], element: int) -> list[int]:
        """The elements of `found` (sorted) that are `element` or lie inside it."""
        return found[bisect_left(found, element) : bisect_left(found, self.ends[element])]


def markup_items(doc: Document) -> tuple[ListItem, ...]:
    """The items of the best group of repeated cards in the page's markup (empty: no such group)."""
    best, page = _best_group(doc)
    return _read_group(page, best, MAX_ITEMS) if best and page is not None else ()


def item_cards(doc: Document, enough: int = MAX_ITEMS) -> tuple[list[int], int]:
    """The card elements of the page's best group of repeated cards (`markup_items`' group, in
    document order; empty: no such group) and how many distinct items they read as, counted up to
    `enough` (for speed: a caller asking whether there are six reads six). `auto`'s `listing_items`
    rule keeps the cards' text on pages that are lists."""
    best, page = _best_group(doc)
    if not best or page is None:
        return [], 0
    return best, len(_read_group(page, best, enough))


def listing_cards(doc: Document) -> list[int] | None:
    """The card elements the listing view's items were read from (`markup_items`' group), when
    they are the markup's (None: the items are the JSON-LD's, or there are none): the view
    renders the extracted content around them (`view.around_elements`)."""
    cards, _ = _best_group(doc)
    if not cards or len(without_actions(doc, markup_items(doc))) < MIN_ITEMS:
        return None
    return cards


#: Each Document's best group of cards and the `_Page` it was read on (`_best_group`), kept while
#: the Document lives: `auto`'s `listing_items` rule searches the groups during the extraction, and
#: the listing view (`read_listing`) asks again for the same page.
_BEST_GROUPS: weakref.WeakKeyDictionary[Document, tuple[list[int], _Page | None]] = (
    weakref.WeakKeyDictionary()
)


def _best_group(doc: Document) -> tuple[list[int], _Page | None]:
    """The members of the group of repeated cards that reads best as a list, and the `_Page` they
    were read on (empty and None: no such group). Searched once per Document (for speed: the
    search reads a sample of every likely group's cards); the members are shared: do not change
    them."""
    found = _BEST_GROUPS.get(doc)
    if found is None:
        found = _BEST_GROUPS[doc] = _search_groups(doc)
    return found


def _search_groups(doc: Document) -> tuple[list[int], _Page | None]:
    """`_best_group`, searched."""
    n = len(doc.tag)
    if n == 0:
        return [], None
    tags = doc.tag
    parent = doc.parent
    chars = doc.subtree_chars
    linked = doc.subtree_anchor_chars
    outside = _outside(doc)
    # A card holds a link's text (its title, or a link around a heading) and is not a menu's part.
    candidates = np.flatnonzero((linked > 0) & (parent >= 0) & ~outside)
    if len(candidates) < MIN_ITEMS:
        return [], None
    groups: dict[tuple[int, ...], list[int]] = {}
    for element in candidates.tolist():
        up = int(parent[element])
        groups.setdefault((up, hash(tags[element])), []).append(element)
        grand = int(parent[up])
        if grand >= 0:
            groups.setdefault((grand, hash(tags[up]), hash(tags[element]), 1), []).append(element)
    capped = np.minimum(chars, 400)
    estimates = sorted(
        (
            (float(capped[members].sum()), key)
            for key, members in groups.items()
            if len(members) >= MIN_ITEMS and _one_per_branch(key, members, parent)
        ),
        reverse=True,
    )
    page = _Page.of(doc)
    # Each group is judged by its first few items (for speed); the caller reads the winner.
    best: list[int] = []
    best_score = 0.0
    for _, key in estimates[:GROUPS_READ]:
        members = _alike(doc, groups[key])
        sample = _read_group(page, members, SAMPLE)
        score = _score(sample) * len(members) / max(len(sample), 1)
        if len(sample) >= MIN_ITEMS and score > best_score:
            best, best_score = members, score
    return best, page


#: Share of a group's cards with one class above which the others are something else.
ALIKE_SHARE = 0.7


def _alike(doc: Document, members: list[int]) -> list[int]:
    """The cards of a group that look alike: when most of them (`ALIKE_SHARE`) carry the same first
    class name, those (a filter box or a banner among the cards does not); else all of them (pages
    that name every card differently, "post-101 post", "post-102 post")."""
    firsts = [(doc.classes[m] or "").split()[:1] for m in members]
    counts = Counter(first[0] for first in firsts if first)
    if not counts:
        return members
    name, count = counts.most_common(1)[0]
    if count == len(members) or count < ALIKE_SHARE * len(members) or count < MIN_ITEMS:
        return members
    return [m for m, first in zip(members, firsts, strict=True) if first == [name]]


def _one_per_branch(key: tuple[int, ...], members: list[int], parent: np.ndarray) -> bool:
    """A grandparent group counts when it spans rows: more than one parent among its members."""
    if len(key) == 2:
        return True
    return len({int(parent[m]) for m in members}) > 1


def _outside(doc: Document) -> np.ndarray:
    """Per element, whether it lies in a nav, header, footer or aside (or a navigation role)."""
    roots: list[int] = []
    for name in OUTSIDE_TAGS:
        roots += indices_of(doc.tag, name)
    roots += [i for i, role in enumerate(doc.role) if role in OUTSIDE_ROLES]
    if not roots:
        return np.zeros(len(doc.tag), dtype=bool)
    return doc.within(sorted(set(roots)), np.arange(len(doc.tag)))


def _score(items: tuple[ListItem, ...]) -> float:
    """How well a group reads as a list: titles, excerpts, images and dates, item by item. A group
    of short bare links (a menu, a tag cloud) scores nothing."""
    if not items:
        return 0.0
    bare = sum(
        1 for item in items if not (item.excerpt or item.image or item.date) and len(item.title.split()) <= 2
    )
    if bare * 2 > len(items):
        return 0.0
    return sum(
        min(len(item.title), 80)
        + min(len(item.excerpt), EXCERPT_CHARS) / 2
        + (40 if item.image else 0)
        + (20 if item.date else 0)
        for item in items
    )


def _read_group(page: _Page, members: list[int], most: int) -> tuple[ListItem, ...]:
    """Up to `most` items of a group, in page order, each link once. A title that most cards
    share ("View details", "Subscribe and save!") is a button or a banner, not a name: the cards
    are read again with it left out."""
    shared: frozenset[str] = frozenset()
    items = _read_cards(page, members, most, shared)
    for _ in range(3):  # a button, then a maker's name all cards share, ...
        counts = Counter(item.title.casefold() for item in items)
        more = {title for title, count in counts.items() if count >= 2 and count * 3 >= len(items)}
        if not more:
            break
        shared |= more
        items = _read_cards(page, members, most, shared)
    return items


def _read_cards(page: _Page, members: list[int], most: int, shared: frozenset[str]) -> tuple[ListItem, ...]:
    items: list[ListItem] = []
    seen: set[str] = set()
    for element in members:
        key = (element, shared)
        if key not in page.read:  # the winner's first items were read when it was judged
            page.read[key] = _read_item(page, element, shared)
        item = page.read[key]
        if item is None or item.url in seen:
            continue
        seen.add(item.url)
        items.append(item)
        if len(items) >= most:
            break
    return tuple(items)


def _read_item(page: _Page, element: int, shared: frozenset[str]) -> ListItem | None:
    """One card: its title, link, excerpt, date and image (None: no title with a link of its own).
    Texts in `shared` are never a title."""
    headings = [h for h in page.inside(page.headings, element) if page.text(h).casefold() not in shared]
    anchors = [a for a in page.inside(page.anchors, element) if page.href(a) is not None]
    # An "item" holding two headings that link to different pages is a row of cards, not one.
    heading_links = {link for h in headings if (link := _heading_link(page, h, element, anchors))}
    if len(heading_links) > 1:
        return None
    title_element: int | None = None
    url: str | None = None
    if headings:
        title_element = headings[0]
        url = _heading_link(page, title_element, element, anchors)
    if url is None:
        named = [
            (len(page.text(a)), -a) for a in anchors if page.text(a) and page.text(a).casefold() not in shared
        ]
        if named:
            longest = -max(named)[1]
            url = page.href(longest)
            if title_element is None:
                title_element = longest
        elif anchors:
            url = page.href(anchors[0])  # a picture or a button links the card: the heading names it
    title = page.text(title_element) if title_element is not None else _image_alt(page, element)
    if url is None or len(title) < 2 or _without_fragment(url) == page.url:
        return None
    target = _without_fragment(url)
    # Text that is not the excerpt: the title, and the short links to the item's own page ("Read
    # more", "View product"); a link around the card's text (title, price) keeps that text.
    skipped = [
        a
        for a in anchors
        if (
            _without_fragment(page.href(a) or "") == target
            and page.doc.subtree_chars[a] <= MAX_FOLDED
            and not (title_element is not None and a <= title_element < page.ends[a])
        )
        or page.text(a).casefold() in shared  # the button every card has
    ]
    skipped += [c for c in page.inside(page.controls, element) if c != element]
    skipped += page.inside(page.terms, element)  # a definition list's labels (`_Page.text`)
    if title_element is not None:
        skipped.append(title_element)
    date, dated = _date(page, element, skipped)
    if dated is not None:
        skipped.append(dated)
    excerpt = _excerpt(page, element, skipped)
    if excerpt.casefold().startswith(title.casefold()):
        excerpt = excerpt[len(title) :].lstrip(" ,.;:-–—|")  # the name written again (a caption)
    if not any(character.isalnum() for character in excerpt):
        excerpt = ""  # separators only ("|", "·")
    return ListItem(
        title=_cut(title, MAX_TITLE),
        url=url,
        excerpt=excerpt,
        date=date,
        image=_image(page, element),
    )


def _image_alt(page: _Page, element: int) -> str:
    """The text of the card's first picture that has one (a card named only by its picture)."""
    for i in page.inside(page.images, element):
        alt = squash(page.doc.elements[i].attributes.get("alt") or "")
        if alt:
            return alt
    return ""


def _heading_link(page: _Page, heading: int, item: int, anchors: list[int]) -> str | None:
    """The link of a heading: a link inside it, or a link around it within the card (or the card
    itself when it is the link)."""
    doc = page.doc
    end = int(page.end[heading])
    for a in anchors:
        if heading <= a < end:
            return page.href(a)
    up = int(doc.parent[heading])
    while up >= item:
        if doc.tag[up] == "a":
            return page.href(up)
        if up == item:
            break
        up = int(doc.parent[up])
    return None


def _href(doc: Document, element: int) -> str | None:
    """An element's href, absolute and under the URL-scheme policy (None: none, or refused)."""
    value = (doc.elements[element].attributes.get("href") or "").strip()
    if not value or value.startswith("#"):
        return None
    return safe_link(doc, value)


def safe_link(doc: Document, value: str) -> str | None:
    """`value` made absolute against the page, when its scheme is one `urls.SAFE_SCHEMES` allows
    (a URL still relative, on a page without an address, is no link of a listing)."""
    return safe_url(absolute_url(doc, value.strip()), relative=False)


def _without_fragment(url: str) -> str:
    return url.split("#", 1)[0].rstrip("/")


def _skipped_mask(page: _Page, element: int, skipped: list[int]) -> tuple[int, np.ndarray]:
    """The card's first token and, per token of the card, whether it lies in a skipped element."""
    doc = page.doc
    first, last = int(doc.start[element]), int(doc.end[element])
    mask = np.zeros(last - first + 1, dtype=bool)
    for s in skipped:
        mask[int(doc.start[s]) - first : int(doc.end[s]) - first + 1] = True
    return first, mask


#: Tags inside which text runs on without a break (between others, words are apart on the screen).
_INLINE = frozenset(
    "a abbr b bdi bdo cite code data del dfn em i ins kbd mark q s small strong sub sup u var wbr".split()
)


def _words(page: _Page, element: int, limit: int, skip: np.ndarray | None = None, first: int = 0) -> str:
    """The text of an element as a reader sees it, to about `limit` characters: text runs joined,
    with a space where an element that is not inline text (a span, a div, a cell) starts or ends
    between them; the tokens marked in `skip` (from token `first`) left out."""
    doc = page.doc
    tokens = doc.tokens
    start, end = int(doc.start[element]), int(doc.end[element])
    parts: list[str] = []
    apart = False
    length = 0
    last = ""  # the last words written
    kinds = tokens.kind
    for index in range(start, end + 1):
        if skip is not None and skip[index - first]:
            apart = True
            continue
        kind = kinds[index]
        if kind == TEXT:
            text = tokens.text[index]
            if text.strip() and text.strip() == last:
                # The same words again in the next element: a name linked twice, or a shop's
                # regular and sale prices, equal, of which its style sheet shows one.
                continue
            if apart and parts:
                parts.append(" ")
            parts.append(text)
            apart = False
            length += len(text)
            last = text.strip() or last
            if length > 2 * limit:  # for speed: the rest would be cut off
                break
        elif doc.tag[int(tokens.element[index])] not in _INLINE or (
            kind == OPEN and kinds[index - 1] == CLOSE
        ):
            # a block's edge, or one element right after another ("<a>News</a><a>Sport</a>",
            # chips or tags set apart by the page's style)
            apart = True
    return squash("".join(parts))


def _date(page: _Page, element: int, skipped: list[int]) -> tuple[str | None, int | None]:
    """The card's date (YYYY-MM-DD) and the element that shows it: a `<time>` first, else the first
    short text of the card, outside its title, that is a date."""
    doc = page.doc
    for i in page.inside(page.times, element):
        attrs = doc.elements[i].attributes
        day = parse_day(attrs.get("datetime")) or parse_day(doc.element_text(i))
        if day:
            return day, i
    first, mask = _skipped_mask(page, element, skipped)
    tokens = doc.tokens
    for offset in np.flatnonzero((tokens.kind[first : first + len(mask)] == TEXT) & ~mask).tolist():
        text = tokens.text[first + offset]
        # for speed: parse_day's patterns all need a year, looked for first
        if len(text) < 60 and _YEAR.search(text) and (day := parse_day(text)):
            return day, int(tokens.element[first + offset])
    return None, None


def _excerpt(page: _Page, element: int, skipped: list[int]) -> str:
    """The card's first paragraph of `MIN_PARAGRAPH` characters, else all its text but the
    skipped parts, cut to `EXCERPT_CHARS`."""
    doc = page.doc
    first, mask = _skipped_mask(page, element, skipped)
    for p in page.inside(page.paragraphs, element):
        if mask[int(doc.start[p]) - first]:
            continue
        text = _words(page, p, EXCERPT_CHARS)
        if len(text) >= MIN_PARAGRAPH:
            return _cut(text, EXCERPT_CHARS)
    return _cut(_words(page, element, EXCERPT_CHARS, mask, first), EXCERPT_CHARS)


def _cut(text: str, limit: int) -> str:
    """`text` to at most `limit` characters, cut at a word with an ellipsis."""
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0].rstrip(" ,.;:-–—")
    return cut + "…"


def _image(page: _Page, element: int) -> str | None:
    """The card's first picture of some size, as an absolute http(s) URL."""
    doc = page.doc
    for i in page.inside(page.images, element):
        attrs: dict[str, str | None] = dict(doc.elements[i].attributes)
        real = doc.noscript_images.get(attrs.get("src") or "")
        if real is not None:
            attrs = dict(real)
        if any(_declared_small(attrs.get(side)) for side in ("width", "height")):
            continue
        url = _image_source(doc, attrs)
        if url is not None:
            return url
    return None


def _declared_small(value: str | None) -> bool:
    digits = re.match(r"\s*(\d+)", value or "")
    return digits is not None and int(digits[1]) < MIN_IMAGE_SIDE


def _image_source(doc: Document, attrs: dict[str, str | None]) -> str | None:
    """The picture's URL: a srcset's candidate nearest `IMAGE_WIDTH` (at or above it when there is
    one), else its src, lazy-loading placeholders seen through."""
    lazy = _image_sources(attrs)
    srcset = lazy.get("srcset") or (attrs.get("srcset") or "").strip()
    src = lazy.get("src") or (attrs.get("src") or "").strip()
    candidates = parse_srcset(srcset) if srcset else []
    chosen = choose_candidate(candidates, at_least=IMAGE_WIDTH, density_width=IMAGE_WIDTH / 2)
    for value in (chosen, src):
        if not value or value.startswith("data:"):
            continue
        url = safe_link(doc, value)
        if url is not None and url.startswith(("http://", "https://")):
            return url
    return None


# -- JSON-LD --------------------------------------------------------------------------------------


def _is_item_list(item: dict[str, Any]) -> bool:
    return "ItemList" in ld_types(item) and "itemListElement" in item


def _text(value: Any) -> str:
    if isinstance(value, list):
        value = value[0] if value else ""
    if isinstance(value, dict):
        value = value.get("name") or value.get("url") or value.get("@id") or ""
    return squash(ld_text(str(value))) if isinstance(value, str | int | float) else ""


def _ld_item(doc: Document, entry: Any) -> ListItem | None:
    if not isinstance(entry, dict):
        return None
    inner = entry.get("item")
    thing: dict[str, Any] = inner if isinstance(inner, dict) else {}
    name = _text(thing.get("name") or entry.get("name") or thing.get("headline"))
    link = _text(thing.get("url") or entry.get("url") or thing.get("@id") or entry.get("item"))
    url = safe_link(doc, link) if link else None
    if not name or url is None:
        return None
    image_value = thing.get("image") or entry.get("image")
    image_link = _text(image_value.get("url") if isinstance(image_value, dict) else image_value)
    image = safe_link(doc, image_link) if image_link else None
    date = parse_day(_text(thing.get("datePublished") or entry.get("datePublished")))
    return ListItem(
        title=_cut(name, MAX_TITLE),
        url=url,
        excerpt=_cut(_text(thing.get("description") or entry.get("description")), EXCERPT_CHARS),
        date=date,
        image=image if image is not None and image.startswith(("http://", "https://")) else None,
    )


def json_ld_items(doc: Document) -> tuple[ListItem, ...]:
    """The items of the page's JSON-LD ItemList with a name and a link each (the longest list)."""
    best: tuple[ListItem, ...] = ()
    for index, raw in enumerate(doc.json_ld):
        if "itemListElement" not in raw:
            continue
        for thing in (
            found
            for data in script_values(doc, index)
            for found in objects(data, ("@graph", "mainEntity", "hasPart", "about"), max_depth=8)
        ):
            if not _is_item_list(thing):
                continue
            entries = thing["itemListElement"]
            items: list[ListItem] = []
            seen: set[str] = set()
            for entry in entries if isinstance(entries, list) else [entries]:
                item = _ld_item(doc, entry)
                if item is not None and item.url not in seen:
                    seen.add(item.url)
                    items.append(item)
            if len(items) > len(best):
                best = tuple(items[:MAX_ITEMS])
    return best
