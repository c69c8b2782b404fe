"""Element features: what the DOM heuristic (Berg 2020, §5.1) reads of every element, shared by
the heuristic extractor (`extractors/heuristic.py`) and the learned block scorer's features
(`learn/blocks/`).

The weights table, class and id hints (Readability.js's word lists and the class words the block
features read), each element's text holder and inherited context (`inherit`), and the words,
characters and link characters each holder owns (`own_text`), computed once per `Document`
(`features_of`). It sits below both of its readers, so the block features do not import the
extractors' package, and the extractors and `learn` import each other's modules at their tops.
"""

from __future__ import annotations

import functools
import re
import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import overload

import numpy as np

from .._speedups import native
from .kind.readability_rules import UNLIKELY_ROLES, literal_trie, unlikely_by_class_id
from .parse.document import BLOCK_TAGS, TEXT, Document, token_word_counts
from .parse.scan import VOID_TAGS
from .views.thread import MARKER_WORDS


@dataclass(frozen=True, slots=True)
class Weights:
    """The weights w_i of the evaluation function (Berg 2020, §5), all in one place."""

    word: float  # per word of the element's own text
    link_density: float  # times the share of the own text that sits inside links (0..1)
    own_tag: dict[str, float]  # the element's own tag
    context_tag: dict[str, float]  # semantic tags, inherited by every descendant
    role: dict[str, float]  # ARIA role attribute values, inherited
    positive_hint: float  # class or id matches POSITIVE_HINTS, inherited (once per attribute)
    negative_hint: float  # class or id matches NEGATIVE_HINTS, inherited (once per attribute)
    hint_decay: float  # inherited class/id hints fade by this factor per generation
    neighbour_share: float = 0.0  # part of each neighbour's score added (Berg 2020, §6)
    neighbour_floor: float = (
        -100.0
    )  # a neighbour lends at least this much (a -4000 menu must not sink an article)
    children_share: float = 0.0  # part of the contained text holders' scores, for containers


WEIGHTS = Weights(
    word=1.0,
    link_density=-200.0,
    own_tag={
        "p": 15.0,
        "pre": 10.0,
        "blockquote": 10.0,
        "h1": 5.0,
        "h2": 5.0,
        "h3": 5.0,
        "h4": 0.0,
        "li": -5.0,
        "dt": -5.0,
        "dd": -5.0,
        "td": -5.0,
        "th": -10.0,
        "figcaption": -5.0,
        "address": -20.0,
        "form": -50.0,
        "button": -50.0,
        "select": -50.0,
        "label": -20.0,
        "option": -50.0,
        "textarea": -50.0,
        "legend": -20.0,
        "caption": -5.0,
    },
    context_tag={
        "article": 100.0,
        "main": 100.0,
        "section": 10.0,
        "nav": -1000.0,
        "header": -150.0,
        "footer": -600.0,
        "aside": -600.0,
        "menu": -600.0,
        "dialog": -600.0,
    },
    role={
        "main": 300.0,
        "article": 100.0,
        "navigation": -1000.0,
        "banner": -400.0,
        "contentinfo": -600.0,
        "complementary": -600.0,
        "search": -600.0,
        "menu": -600.0,
        "menubar": -600.0,
        "dialog": -600.0,
        "alert": -200.0,
    },
    positive_hint=25.0,
    negative_hint=-50.0,
    hint_decay=0.5,
    neighbour_share=0.25,
    neighbour_floor=-100.0,
    children_share=0.1,
)


#: Class/id words hinting at the main content (Berg 2020, §5.1: "article", "content" …); matched
#: against the lower-cased value (three times faster than re.I on long utility-class lists).
POSITIVE_WORDS = (
    "article", "body", "content", "entry", "hentry", "h-entry", "main", "page", "post", "text", "blog", "story",
)  # fmt: skip
POSITIVE_HINTS = re.compile(literal_trie(POSITIVE_WORDS))
#: Class/id words hinting at everything else (Berg 2020, §5.1: "footer" …), and three that must
#: stand alone or start a word ("ad", "tag", "nav").
NEGATIVE_WORDS = (
    "-ad-", "advert", "banner", "breadcrumb", "combx", "comment", "com-", "contact", "disqus", "footer",
    "gdpr", "masthead", "menu", "outbrain", "pagination", "pager", "popup", "promo", "related", "remark",
    "replies", "rss", "share", "sharing", "shoutbox", "sidebar", "skyscraper", "social", "sponsor",
    "shopping", "subscribe", "newsletter", "taboola", "widget", "cookie", "login", "signup", "recommend",
    "trending", "popular",
)  # fmt: skip
NEGATIVE_HINTS = re.compile(
    literal_trie(NEGATIVE_WORDS) + r"|(?:^|[\s_-])(?:ads?|tags?)(?:$|[\s_-])|(?:^|[\s_-])nav"
)
#: `NEGATIVE_HINTS` as two searches, for speed (1.2 ms instead of 1.8 ms over the 335 distinct class
#: and id values of a 200 KB page, paid on each first visit): the words alone keep `re`'s fast
#: scan for their first letters, which the branches starting with `(?:^|[\s_-])` defeated; those
#: branches test the character before with a lookbehind instead of consuming it (the same matches:
#: start of text or one of `\s_-` before; end of text or one of them after).
_NEGATIVE_LITERALS = re.compile(literal_trie(NEGATIVE_WORDS))
_NEGATIVE_STANDALONE = re.compile(r"(?<![^\s_-])(?:ads?(?![^\s_-])|tags?(?![^\s_-])|nav)")


def negative_hint(value: str) -> bool:
    """`NEGATIVE_HINTS.search(value)` as a bool. For speed on a first visit (every value new), the
    standalone words' search, whose pattern begins with a lookbehind and so is tried at every
    position, runs only on a value holding one of those words."""
    if _NEGATIVE_LITERALS.search(value):
        return True
    holds_one = "ad" in value or "tag" in value or "nav" in value
    return holds_one and _NEGATIVE_STANDALONE.search(value) is not None


#: Categories of the words authors name their boxes with, which the learned scorer's rules read
#: (`learned.gallery_section` reads `gallery`): a class or id names a category when one of its words
#: (`class_id_words`) is one of the category's words, or a word of at least `CLASS_PREFIX_CHARS`
#: characters starts with one of its words of that length ("galleryitem", "slideshowwrap"; "stage"
#: is not "tag"). Words any web developer would recognise, chosen before looking at pages. Twelve
#: more categories (related, media, comment, share, subscribe, aside, ad, nav, tags, meta, content,
#: title) were measured as block features and as rules and left out (docs/experiments.md, "Class and
#: id vocabulary as block features"); they are in the history if a rule needs one.
CLASS_WORDS: dict[str, tuple[str, ...]] = {
    "gallery": (
        "gallery",
        "slideshow",
        "slider",
        "carousel",
        "lightbox",
        "swiper",
        "slick",
        "slide",
        "slides",
    ),
}
#: Words of at least this many characters also name their category as a prefix of a longer word.
CLASS_PREFIX_CHARS = 6
_CLASS_WORD_BITS: dict[str, int] = {}
for _bit, _words in enumerate(CLASS_WORDS.values()):
    for _word in _words:
        _CLASS_WORD_BITS[_word] = _CLASS_WORD_BITS.get(_word, 0) | 1 << _bit
_CLASS_PREFIX = re.compile(
    literal_trie(tuple(sorted(word for word in _CLASS_WORD_BITS if len(word) >= CLASS_PREFIX_CHARS)))
)
#: A class or id's words: runs of lower-case letters, a capitalised word, or an upper-case acronym
#: (camelCase and `-`, `_`, digits and spaces all split words).
_CLASS_ID_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+")


def class_id_words(value: str) -> list[str]:
    """The lower-case words of a class or id value: "postBody related-posts_2" -> post, body,
    related, posts."""
    return [word.lower() for word in _CLASS_ID_WORD.findall(value)]


#: Every word of `CLASS_WORDS` that holds none of the others: a word names a category only if it
#: holds one of these (it is a category's word, its plural or a longer word it starts).
_CLASS_WORD_CORES = tuple(
    sorted(
        word
        for word in _CLASS_WORD_BITS
        if not any(other != word and other in word for other in _CLASS_WORD_BITS)
    )
)


@functools.lru_cache(maxsize=16384)
def class_word_bits(value: str) -> int:
    """The categories of `CLASS_WORDS` (bit k: the k-th) that the words of a class or id value name
    (memoised per value, and each word once: pages repeat both).

    For speed, a value whose lower case holds none of `_CLASS_WORD_CORES` names none, unsplit: the
    same answer, as a word is a run of ASCII letters of the value, lower-cased (on a first visit,
    when every value is new, splitting them was 7 % of `extract`)."""
    lowered = value.lower()
    return class_word_bits_split(value) if any(core in lowered for core in _CLASS_WORD_CORES) else 0


def class_word_bits_split(value: str) -> int:
    """`class_word_bits` without its quick answer: every word of the value looked up (its
    reference in the tests)."""
    bits = 0
    for word in class_id_words(value):
        bits |= _word_bits(word)
    return bits


#: Bits of `ElementFeatures.class_words` above `CLASS_WORDS`' categories (bit k: the k-th), read
#: from the whole class value rather than its words: shown on wide screens only (`wide_only`), a
#: caption ("caption" in the class or id: WordPress's `wp-caption-text`, `image-caption`), and a
#: forum engine's post markup (one of `thread.MARKER_WORDS` in the class, as a plain substring).
THREAD_MARKER_BIT = 1 << 13
WIDE_ONLY_BIT = 1 << 14
CAPTION_BIT = 1 << 15
#: `thread.MARKER_WORDS` as one search (found anywhere in the value, as `in` finds them).
_THREAD_MARKERS = re.compile(literal_trie(MARKER_WORDS))


#: Classes that show an element on wide screens only (hidden on phones): Bootstrap 3's `hidden-xs`,
#: `visible-md` and `visible-lg` (without `visible-xs` or `visible-sm`), Bootstrap 4-5's `d-none` with
#: `d-md-block` and the like, Tailwind's `hidden` with `md:block` and the like, Foundation's
#: `show-for-medium`, `show-for-large` and `hide-for-small`, and the common `desktop-only` names.
_WIDE_ONLY_CLASS = re.compile(
    r"(?:^|\s)(?:hidden-xs|visible-(?:md|lg)(?:-block|-inline|-inline-block)?|show-for-(?:medium|large)(?:-up)?|"
    r"hide-for-small(?:-only)?|desktop-only|only-desktop|hide-mobile|hidden-mobile|mobile-hidden|hide-on-mobile|"
    r"hidden-phone|visible-desktop|hide-for-mobile|no-mobile)(?=\s|$)"
)
_NARROW_VISIBLE_CLASS = re.compile(r"(?:^|\s)visible-(?:xs|sm)")
_BOOTSTRAP_SHOWN_WIDE = re.compile(
    r"(?:^|\s)d-(?:sm|md|lg|xl|xxl)-(?:block|flex|inline|inline-block|grid|table)(?=\s|$)"
)
_TAILWIND_SHOWN_WIDE = re.compile(
    r"(?:^|\s)(?:sm|md|lg|xl|2xl):(?:block|flex|inline|inline-block|inline-flex|grid|table|contents)(?=\s|$)"
)


#: A part that every class list `wide_only` answers True for holds: each name of
#: `_WIDE_ONLY_CLASS` holds one, as do "d-none" and "hidden".
_WIDE_ONLY_PARTS = ("hid", "visible-", "show-for-", "desktop", "no-mobile", "d-none")


def wide_only(classes: str) -> bool:
    """Whether a class attribute shows its element on wide screens only (`_WIDE_ONLY_CLASS`). For
    speed on a first visit (every class list new), a list holding none of `_WIDE_ONLY_PARTS` is
    answered without the searches."""
    return any(part in classes for part in _WIDE_ONLY_PARTS) and wide_only_searched(classes)


def wide_only_searched(classes: str) -> bool:
    """`wide_only` without its quick answer: every pattern searched (its reference in the tests)."""
    if _WIDE_ONLY_CLASS.search(classes):
        return not _NARROW_VISIBLE_CLASS.search(classes)
    words = classes.split()
    if "d-none" in words:
        return bool(_BOOTSTRAP_SHOWN_WIDE.search(classes))
    if "hidden" in words:
        return bool(_TAILWIND_SHOWN_WIDE.search(classes))
    return False


@functools.lru_cache(maxsize=16384)
def class_value_bits(value: str, is_class: bool) -> int:
    """`WIDE_ONLY_BIT`, `CAPTION_BIT` and `THREAD_MARKER_BIT` of a class value (`is_class`) or an id
    value (caption only). For speed, the thread markers are looked for here, once per distinct
    class value of the process, with the rest of the value's bits: a page's thread rules then read
    one bit per element (`thread.has_markers`) instead of searching its class text."""
    bits = CAPTION_BIT if "caption" in value.lower() else 0
    if is_class:
        if wide_only(value):
            bits |= WIDE_ONLY_BIT
        if _THREAD_MARKERS.search(value):
            bits |= THREAD_MARKER_BIT
    return bits


@functools.lru_cache(maxsize=16384)
def _word_bits(word: str) -> int:
    found = _CLASS_WORD_BITS.get(word)
    if found is None and word.endswith("s"):
        found = _CLASS_WORD_BITS.get(word[:-1])
    if found is None and len(word) > CLASS_PREFIX_CHARS:
        prefix = _CLASS_PREFIX.match(word)
        found = _CLASS_WORD_BITS[prefix.group()] if prefix else None
    return found or 0


#: Elements that hold text for scoring: block-level tags that can contain text.
TEXT_HOLDERS = frozenset(BLOCK_TAGS - VOID_TAGS - {"html", "head", "title"}) | {
    "button",
    "label",
    "legend",
    "caption",
    "option",
}


@dataclass(frozen=True, slots=True)
class ElementFeatures:
    """Per-element feature arrays (Berg 2020, §5.1), one entry per element of the document."""

    holder: np.ndarray  # int32: the text holder that owns the element's text
    words: np.ndarray  # float: words of own text (text holders only)
    chars: np.ndarray  # float: non-whitespace characters of own text
    anchor_chars: np.ndarray  # float: of which inside links
    own: np.ndarray  # float: weighted own-tag feature
    context: np.ndarray  # float: inherited semantic tag + role + class/id weight
    unlikely: np.ndarray  # bool: Readability.js would drop this element and its subtree
    label: Sequence[str]  # the element's block label: "tag#id", or "tag" without an id
    # Read once here for the block features too (`learn.blocks`): the text tokens of <body> that
    # lie in an element and have a non-whitespace character (int64, in order), and their holders.
    text_tokens: np.ndarray
    text_owner: np.ndarray
    tag_names: list[str]  # the page's distinct tag names, in order of first appearance (`tag_ids`)
    tag_id: np.ndarray  # int64 per element: its tag's index in tag_names
    # uint16 per element: the categories of `CLASS_WORDS` its class or id names (bit k: category k),
    # from the same memo as the scores; the block features read them (`learn.blocks`).
    class_words: np.ndarray


class ElementLabels(Sequence[str]):
    """Each element's block label, "tag#id" or "tag" without an id, made when read: a page's blocks
    are labelled only when an overlay, chart or evaluation looks at them (`HolderBlocks`)."""

    __slots__ = ("_idents", "_tags")

    def __init__(self, tags: list[str], idents: list[str | None]) -> None:
        self._tags, self._idents = tags, idents

    def __len__(self) -> int:
        return len(self._tags)

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        name, ident = self._tags[index], self._idents[index]
        return f"{name}#{ident}" if ident else name


def tag_ids(tags: list[str]) -> tuple[list[str], np.ndarray]:
    """The distinct tag names in order of first appearance, and each element's index among them
    (int64): small integer codes that numpy gathers by, where a lookup per element would be Python."""
    names = list(dict.fromkeys(tags))
    ids = dict(zip(names, range(len(names)), strict=True))
    return names, np.fromiter(map(ids.__getitem__, tags), dtype=np.int64, count=len(tags))


def element_features(doc: Document, weights: Weights = WEIGHTS) -> ElementFeatures:
    """Berg 2020, §5.1: word count, tag, semantic tags, ARIA roles, class/id hints per element."""
    n = len(doc.elements)
    tags = doc.tag
    # For speed: each weight looked up once per distinct tag, then gathered by tag code.
    names, tag_id = tag_ids(tags)
    own = np.array([weights.own_tag.get(name, 0.0) for name in names], dtype=np.float64)[tag_id]
    semantic = np.array([weights.context_tag.get(name, 0.0) for name in names], dtype=np.float64)[tag_id]
    # For speed: the scores read only the tag, role, class and id, which pages (and the pages of a
    # site) repeat many times, so they are computed once per distinct combination (`ScoreMemo`); the
    # id, class and role come from the parse (`Document.ident` etc.), not from `node.attributes`,
    # which builds a dict per element. Every element is looked up (one without any of them gets
    # (0.0, 0.0, False)), which replaces a Python loop with a test per element.
    memo = _default_scores if weights is WEIGHTS else ScoreMemo(weights)
    role_weight, hints, unlikely, class_words = memo.scores_and_words(tags, doc.role, doc.classes, doc.ident)
    semantic += role_weight  # the same float sums as one by one (a zero role weight adds +0.0)
    is_holder = np.array([name in TEXT_HOLDERS for name in names], dtype=np.bool_)[tag_id]
    holder, context = inherit(doc, semantic, hints, weights.hint_decay, is_holder)
    tokens = body_text_tokens(doc)
    owner = holder[doc.tokens.element[tokens]]  # the holder of each of those tokens
    words, chars, anchor_chars = own_text(doc, tokens, owner, n)
    return ElementFeatures(
        holder,
        words,
        chars,
        anchor_chars,
        own,
        context,
        unlikely,
        ElementLabels(tags, doc.ident),
        tokens,
        owner,
        names,
        tag_id,
        class_words,
    )


def _attribute_scores(
    name: str, role: str | None, classes: str | None, ident: str | None, weights: Weights
) -> tuple[float, float, bool]:
    """(role weight, class/id hint weight, unlikely candidate) of an element from its tag, role,
    class and id: everything `attribute_weights` and `is_unlikely_candidate` read."""
    attrs = {"role": role, "class": classes, "id": ident}
    return (*attribute_weights(attrs, weights), is_unlikely_candidate(name, attrs))


AttributeKey = tuple[str, str | None, str | None, str | None]


class ScoreMemo:
    """`_attribute_scores` by (tag, role, class, id) with one set of weights, kept across pages and
    emptied before a page would take it past `size` entries (bounded memory).

    For speed: each combination gets a row of three numpy columns, found through a plain dict read
    with `map(dict.get, zip(...))`; that makes no object per element (zip reuses its tuple once the
    lookup has let go of it; a memoised function builds a key tuple per call, and so many that the
    garbage collector runs during the page), and a page's scores are three gathers, not tuples to
    take apart. A lock keeps a page's rows and tables together when threads share the memo."""

    __slots__ = ("_hint", "_lock", "_role", "_row", "_unlikely", "_words", "size", "weights")

    def __init__(self, weights: Weights, size: int = 32768) -> None:
        self.weights, self.size = weights, size
        self._lock = threading.Lock()
        self._reset()

    def cache_clear(self) -> None:
        """Forget every combination (as `functools.lru_cache`'s, for benchmarks of a first visit)."""
        with self._lock:
            self._reset()

    def _reset(self) -> None:
        self._row: dict[AttributeKey, int] = {}
        self._role = np.zeros(256)
        self._hint = np.zeros(256)
        self._unlikely = np.zeros(256, dtype=bool)
        self._words = np.zeros(256, dtype=np.uint16)

    def scores(
        self, tags: list[str], roles: list[str | None], classes: list[str | None], idents: list[str | None]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per element: role weight, class/id hint weight (float64) and unlikely candidate (bool)."""
        return self.scores_and_words(tags, roles, classes, idents)[:3]

    def scores_and_words(
        self, tags: list[str], roles: list[str | None], classes: list[str | None], idents: list[str | None]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """`scores`, and per element the `CLASS_WORDS` categories its class or id names (uint16 bits;
        computed with the scores, once per combination)."""
        with self._lock:
            return self._scores(tags, roles, classes, idents)

    def _scores(
        self, tags: list[str], roles: list[str | None], classes: list[str | None], idents: list[str | None]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        if len(self._row) + len(tags) > self.size:
            self._reset()  # before the page: its rows stay valid while it is read
        row = self._row
        found: list[int | None] = list(map(row.get, zip(tags, roles, classes, idents, strict=True)))
        if None in found:  # computed once per new combination
            self._add_rows(found, tags, roles, classes, idents)
        rows = np.array(found, dtype=np.intp)
        return self._role[rows], self._hint[rows], self._unlikely[rows], self._words[rows]

    def _add_rows(
        self,
        found: list[int | None],
        tags: list[str],
        roles: list[str | None],
        classes: list[str | None],
        idents: list[str | None],
    ) -> None:
        """Give each combination of the page not yet known a row (in `found`, where it is None),
        computed and then stored together. For speed, on a first visit (every combination new):
        the columns written as slices rather than item by item, and only the new elements' keys
        built: a new memo's page 0.57 -> 0.47 ms at the median of 80 ScrapingHub pages, the value
        memos warm (2026-12-08)."""
        row, weights = self._row, self.weights
        new: list[AttributeKey] = []
        for index in [index for index, at in enumerate(found) if at is None]:
            key = (tags[index], roles[index], classes[index], idents[index])
            at = row.get(key)
            if at is None:
                at = row[key] = len(row)
                new.append(key)
            found[index] = at
        first, end = len(row) - len(new), len(row)
        if end > len(self._role):  # the room doubled until it fits, the rows kept
            size = len(self._role)
            while size < end:
                size *= 2
            self._role, self._hint, self._unlikely, self._words = (
                np.concatenate((column, np.zeros(size - len(column), dtype=column.dtype)))
                for column in (self._role, self._hint, self._unlikely, self._words)
            )
        scores = [_attribute_scores(*key, weights) for key in new]
        self._role[first:end] = [score[0] for score in scores]
        self._hint[first:end] = [score[1] for score in scores]
        self._unlikely[first:end] = [score[2] for score in scores]
        self._words[first:end] = [_class_id_bits(key[2], key[3]) for key in new]


def _class_id_bits(classes: str | None, ident: str | None) -> int:
    """`ElementFeatures.class_words` of one element: the categories its class and id name
    (`class_word_bits`) and its class value's and id value's own bits (`class_value_bits`)."""
    words = class_word_bits(classes) | class_value_bits(classes, True) if classes else 0
    if ident:
        words |= class_word_bits(ident) | class_value_bits(ident, False)
    return words


#: The default weights' memo, shared by every page of the process.
_default_scores = ScoreMemo(WEIGHTS)


_FEATURES: weakref.WeakKeyDictionary[Document, ElementFeatures] = weakref.WeakKeyDictionary()


def features_of(doc: Document) -> ElementFeatures:
    """`element_features(doc)` with the default weights, computed once per Document (the learned
    block scorer reads them after the heuristic has run on the same page)."""
    features = _FEATURES.get(doc)
    if features is None:
        features = _FEATURES[doc] = element_features(doc)
    return features


def is_unlikely_candidate(tag: str, attrs: dict[str, str | None]) -> bool:
    """Readability.js _grabArticle: class/id says boilerplate (and nothing says content), or the role does."""
    if tag in ("html", "body", "a", "article", "main"):  # semantic content tags outrank class names
        return False
    if (attrs.get("role") or "").strip().lower() in UNLIKELY_ROLES:
        return True
    match_string = f"{attrs.get('class') or ''} {attrs.get('id') or ''}"
    return len(match_string) > 1 and _unlikely_match(match_string)


@functools.lru_cache(maxsize=16384)
def _unlikely_match(match_string: str) -> bool:
    return unlikely_by_class_id(match_string)


def attribute_weights(attrs: dict[str, str | None], weights: Weights) -> tuple[float, float]:
    """Berg 2020, §5.1: (ARIA role weight, class/id hint weight) of one element."""
    role_value = 0.0
    role = attrs.get("role")
    if role:
        role_value = weights.role.get(role.strip().lower(), 0.0)
    hint_value = 0.0
    for name in ("class", "id"):
        hint = attrs.get(name)
        if hint:
            hint_value += hint_weight(hint, weights.positive_hint, weights.negative_hint)
    return role_value, hint_value


@functools.lru_cache(maxsize=16384)
def hint_weight(value: str, positive: float, negative: float) -> float:
    """Weight of one class or id value (memoised: pages repeat the same class lists many times)."""
    weight = 0.0
    lowered = value.lower()
    if POSITIVE_HINTS.search(lowered):
        weight += positive
    if negative_hint(lowered):
        weight += negative
    return weight


def inherit(
    doc: Document,
    semantic: np.ndarray | list[float],
    hints: np.ndarray | list[float],
    decay: float,
    is_holder: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Text holder of every element and its context inherited from its ancestors.

    Semantic tags and roles are explicit, so they are inherited in full; class/id hints are
    free-form (Berg 2020, §5.1: "difficult to properly analyze"), so an ancestor's hint fades by
    `decay` per generation: ten nested "elementor-widget" wrappers must not outweigh a paragraph.

    With the optional C kernels this loop runs in C (`_native.inherit`: the same float operations in
    the same order); the Python loop below is its reference. `is_holder`: whether each element's
    tag is in `TEXT_HOLDERS`, when the caller has it already.
    """
    if is_holder is None:
        is_holder = np.fromiter(map(TEXT_HOLDERS.__contains__, doc.tag), dtype=np.bool_, count=len(doc.tag))
    if native is not None:  # the same loop in C (`_native.inherit`), bit for bit
        holder_bytes, context_bytes = native.inherit(
            np.ascontiguousarray(doc.parent, dtype=np.int32),
            np.ascontiguousarray(is_holder, dtype=np.bool_),
            np.ascontiguousarray(semantic, dtype=np.float64),
            np.ascontiguousarray(hints, dtype=np.float64),
            float(decay),
        )
        return np.frombuffer(holder_bytes, dtype=np.int32), np.frombuffer(context_bytes, dtype=np.float64)
    parent = doc.parent.tolist()
    holds = is_holder.tolist()
    holder = list(range(len(parent)))
    tag_context = np.asarray(semantic, dtype=np.float64).tolist()
    hint_context = np.asarray(hints, dtype=np.float64).tolist()
    for index, up in enumerate(parent):  # parents precede their children in document order
        if up < 0:
            continue
        tag_context[index] += tag_context[up]
        hint_context[index] += decay * hint_context[up]
        if not holds[index]:
            holder[index] = holder[up]
    context = np.array(tag_context, dtype=np.float64) + np.array(hint_context, dtype=np.float64)
    return np.array(holder, dtype=np.int32), context


def body_text_tokens(doc: Document) -> np.ndarray:
    """The text tokens of <body> inside an element with a non-whitespace character (int64, in order):
    the text the holders own."""
    t = doc.tokens
    span = doc.body_span
    # For speed: masks over slices of the token arrays (views), not over a gathered index.
    kept = (t.kind[span] == TEXT) & (t.chars[span] > 0) & (t.element[span] >= 0)
    return np.flatnonzero(kept) + span.start


def own_text(
    doc: Document, index: np.ndarray, owner: np.ndarray, n: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Words, characters and link characters of the text each holder owns (np.bincount), from the
    text tokens `index` (`body_text_tokens`) and the holder `owner` of each."""
    t = doc.tokens
    word_counts = token_word_counts(t.text, index)
    chars = t.chars[index].astype(np.float64)

    def per_holder(weights: np.ndarray) -> np.ndarray:
        return np.bincount(owner, weights=weights, minlength=n)[:n].astype(np.float64)

    return per_holder(word_counts), per_holder(chars), per_holder(np.where(t.in_anchor[index], chars, 0.0))
