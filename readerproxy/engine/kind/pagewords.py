"""The page's interface words as a hashed bag, and the logistic regression that reads it.

`page_words(doc, selection)`: the set of hashed word ids of a page, the words of the parts that
name what a page is for (its title, its description, its headings, its menus' links, the links the
extraction drops, its buttons and form labels) and of the text the extraction keeps. Each word is
lower-cased `\\w+` (Unicode: any script; one-character words and numbers left out), prefixed by where
it stands (`SOURCES`), and hashed into `2 ** BITS` buckets (CRC-32 of the UTF-8 of `prefix:word`),
as presence, not count: the hashing trick (Weinberger et al. 2009, "Feature hashing for large scale
multitask learning"), so that no vocabulary ships and a word of any language has a bucket. In
scripts written without spaces (Chinese, Japanese, Thai) a `\\w+` run is a phrase up to the next
punctuation, not a word: such pages get ids, fewer and more rarely shared ones (the training pages
are mostly English).

`WordModel`: a multinomial logistic regression on those buckets (a weight per bucket and kind, a
bias per kind), fitted by `readerproxy pagekind train` (`research/pagekind_eval.py`, L2-penalised,
L-BFGS); its log-probabilities of the seven kinds are seven features of the page-kind trees
(`pagekind.WORD_FEATURES`), a stacked generalisation (Wolpert 1992, "Stacked generalization"): the
trees were trained on regression scores made out of fold, so they learn how far to trust them.

Cost (the first 80 ScrapingHub pages, each page's fastest of five, 2-CPU host shared with
other work; two runs): `page_words` 590-600 µs a page at the median (1.06-1.09 ms at the 90th
percentile; 520 buckets at the median), most of it `\\w+` over the kept text and the elements' texts,
and the regression 22 µs beside it: together 11-12 % of `extract(auto)`'s 5.3-5.5 ms (the page kind
decided, 1.56 ms of it). Joining the tokens' texts instead of cutting each element's text was 480 µs
(see `page_words`); a split at white space with `str.isalnum` before the regular expression gave the
same ids and no time back.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np

from ..._speedups import native
from ..parse.document import TEXT, Document, indices_of
from ..parse.text import WORD

#: Buckets of the hashed bag: 2 ** BITS (4,096; 2 ** 14 measured no better out of fold).
BITS = 12
#: Where a word stands, as its prefix: title, meta description (and og:description), headings,
#: link text in the page's chrome (`CHROME_TAGS`, `CHROME_ROLES`), other link text the extraction
#: drops, button, label and input text, the kept text (its first `KEPT_CHARS` characters).
SOURCES = ("t", "m", "h", "n", "a", "b", "k")
#: Characters of the kept text whose words count (a long article's later words add little).
KEPT_CHARS = 20_000
#: Characters of a heading's, a link's, a button's or a label's text whose words count.
ELEMENT_CHARS = 200
#: Elements whose links are the page's chrome (menus, header, footer, sidebars).
CHROME_TAGS = ("nav", "header", "footer", "aside")
#: ARIA roles (lower case) that mark an element as chrome.
CHROME_ROLES = frozenset(("navigation", "banner", "contentinfo", "menu", "menubar", "complementary"))
#: What the ids mean: a model fitted on another scheme is refused at load (`pagekind.load_model`).
SCHEME = (
    f"crc32 prefix:word, {BITS} bits, presence, sources {' '.join(SOURCES)}, kept {KEPT_CHARS} chars,"
    f" elements {ELEMENT_CHARS} chars"
)
#: Floor of a log-probability (log 1e-6): a page far from a kind does not give the trees -inf.
LOG_FLOOR = float(np.log(1e-6))

_MASK = (1 << BITS) - 1
_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
#: CRC-32 of each prefix with its colon, continued over the word (`zlib.crc32(word, start)`): the
#: same value as hashing `prefix:word` whole, without building the string.
_PREFIX_CRC = {source: zlib.crc32(f"{source}:".encode()) for source in SOURCES}


def _add_words(source: str, text: str, into: set[int]) -> None:
    """Add the bucket of each distinct word of `text` (lower case, two characters or more, not a number)."""
    start = _PREFIX_CRC[source]
    for word in set(WORD.findall(text.lower())):
        if len(word) > 1 and not word.isdigit():
            into.add(zlib.crc32(word.encode("utf-8", "surrogatepass"), start) & _MASK)


@dataclass(slots=True)
class _Sources:
    """Where a page's words stand (`SOURCES`): whole strings (title, descriptions, inputs) by
    source, elements whose text counts by source, and the kept text tokens in document order."""

    strings: list[tuple[str, str]]
    elements: list[tuple[str, list[int]]]
    kept: np.ndarray  # int64 token indices


def _sources(doc: Document, selection: np.ndarray | None) -> _Sources:
    strings = [("t", doc.title)]
    for meta in doc.meta:
        key = (meta.get("property") or meta.get("name") or "").lower()
        if key in ("description", "og:description"):
            strings.append(("m", meta.get("content") or ""))
    tokens = doc.tokens
    n = len(tokens)
    if not n:
        return _Sources(strings, [], np.zeros(0, dtype=np.int64))
    tags = doc.tag
    starts = doc.start
    chrome_elements = [index for name in CHROME_TAGS for index in indices_of(tags, name)]
    # For speed: the roles are scanned only on pages with a chrome role among their distinct values.
    roles = {role for role in set(doc.role) if role is not None and role.lower() in CHROME_ROLES}
    if roles:
        chrome_elements += [index for index, role in enumerate(doc.role) if role in roles]
    chrome = doc.mask_elements(chrome_elements) if chrome_elements else np.zeros(n, dtype=bool)
    kept = selection if selection is not None and len(selection) else np.ones(n, dtype=bool)
    elements = [("h", [index for name in _HEADINGS for index in indices_of(tags, name)])]
    links = np.array(indices_of(tags, "a"), dtype=np.int64)
    if len(links):
        at = starts[links]
        in_chrome = chrome[at]
        elements.append(("n", links[in_chrome].tolist()))
        elements.append(("a", links[~in_chrome & ~kept[at]].tolist()))
    elements.append(("b", indices_of(tags, "button") + indices_of(tags, "label")))
    for index in indices_of(tags, "input"):
        attributes = doc.elements[index].attributes
        kind = (attributes.get("type") or "").lower()
        label = attributes.get("value") if kind in ("submit", "button") else attributes.get("placeholder")
        strings.append(("b", f"{kind} {label or ''}"))
    text = (tokens.kind == TEXT) & (tokens.chars > 0) & doc.body_mask & kept
    return _Sources(strings, elements, np.flatnonzero(text))


def page_words(doc: Document, selection: np.ndarray | None = None) -> np.ndarray:
    """The sorted distinct bucket ids (int64, below `2 ** BITS`) of the page's words (`SOURCES`),
    given its extraction's token selection (None or empty: the page counts as kept whole).

    Headings, links, buttons and labels count element by element, as the prototype measured them:
    each element's text (`Document.element_text`, its first `ELEMENT_CHARS`
    characters), a link in the chrome or not, kept or not, by its start tag. Token by token
    instead (the same words, joined at every tag, no cut, a link's text kept or not by its own
    tokens) measured listings 0.141 and services 0.138 readerable out of fold, against 0.125 and
    0.105 (mean of four seeds): one of the variants' draws, kept as measured.

    For speed, with the C kernels (`_native.word_buckets`), the words are read from the page's
    text as the linear view holds it (its tokens' texts joined once, each token's place known from
    its length, each character lower-cased by the kernel), each element's or kept token's text as a span of it: no string
    per element, no Python step per word (`_spans_words`); `_strings_words` is the reference."""
    sources = _sources(doc, selection)
    if native is not None:
        found = _spans_words(doc, sources)
        if found is not None:
            return found
    return _strings_words(doc, sources)


def _strings_words(doc: Document, sources: _Sources) -> np.ndarray:
    """`page_words` by strings: each source's text built and its words hashed in Python."""
    found: set[int] = set()
    for source, text in sources.strings:
        _add_words(source, text, found)
    for source, elements in sources.elements:
        _add_words(source, " ".join([doc.element_text(index)[:ELEMENT_CHARS] for index in elements]), found)
    texts = doc.tokens.text
    _add_words("k", " ".join([texts[i] for i in sources.kept.tolist()])[:KEPT_CHARS], found)
    return np.array(sorted(found), dtype=np.int64)


def _spans_words(doc: Document, sources: _Sources) -> np.ndarray | None:
    """`page_words` by spans of the page's text (`_native.word_buckets`), or None where that text
    cannot stand for the strings `_strings_words` builds (then the caller builds them).

    The same words: an element's text (its tokens' texts joined, whitespace made single spaces,
    trimmed) has the words of its tokens' texts joined as they are, whitespace being no part of a
    word, unless it is cut at `ELEMENT_CHARS` (only an element of more characters than that is
    built as a string). The kept text, tokens joined with spaces and cut at `KEPT_CHARS`, is each
    token's span up to the cut. The kernel lower-cases each character as `str.lower` does, which
    is lower-casing each piece as long as no character of the spans lower-cases to two (U+0130)
    and none is a capital sigma, whose lower case depends on its neighbours: else None."""
    assert native is not None
    tokens = doc.tokens
    whole = "".join(tokens.text)
    sizes = np.where(tokens.kind == TEXT, tokens.length, 0).astype(np.int64)
    offsets = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    if int(offsets[-1]) != len(whole):
        return None
    buckets = np.zeros(1 << BITS, dtype=np.uint8)
    for source, text in sources.strings:
        native.word_buckets(text.lower(), _PREFIX_CRC[source], buckets)
    spans: list[tuple[str, np.ndarray, np.ndarray]] = []
    for source, elements in sources.elements:
        if not elements:
            continue
        chosen = np.array(elements, dtype=np.int64)
        first = offsets[doc.start[chosen]]
        last = offsets[doc.end[chosen].astype(np.int64) + 1]
        long = last - first > ELEMENT_CHARS
        if long.any():
            cut = " ".join([doc.element_text(index)[:ELEMENT_CHARS] for index in chosen[long].tolist()])
            native.word_buckets(cut.lower(), _PREFIX_CRC[source], buckets)
            first, last = first[~long], last[~long]
        spans.append((source, first, last))
    kept = sources.kept
    if len(kept):
        size = sizes[kept]
        # Where each kept token starts in the kept text (tokens joined with one space), cut at KEPT_CHARS.
        at = np.cumsum(size + 1) - size - 1
        inside = at < KEPT_CHARS
        first = offsets[kept[inside]]
        spans.append(("k", first, first + np.minimum(size[inside], KEPT_CHARS - at[inside])))
    for source, first, last in spans:
        if not native.word_buckets(whole, _PREFIX_CRC[source], buckets, first, last, True):
            return None  # a character the kernel does not lower-case alone
    return np.flatnonzero(buckets).astype(np.int64)


def floored_log_softmax(scores: np.ndarray) -> np.ndarray:
    """Row-wise log-softmax of rows × classes scores, floored at `LOG_FLOOR`."""
    shifted = scores - scores.max(axis=-1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    return np.maximum(log_p, LOG_FLOOR)


@dataclass(frozen=True, slots=True)
class WordModel:
    """A multinomial logistic regression on the hashed bag: `weights` buckets × classes (float32),
    `bias` per class; a page's score for a class is its bias plus the weights of its buckets."""

    weights: np.ndarray
    bias: np.ndarray

    def log_probabilities(self, ids: np.ndarray) -> np.ndarray:
        """The classes' log-probabilities (floored at `LOG_FLOOR`) of one page's bucket ids."""
        scores = self.weights[ids].sum(axis=0, dtype=np.float64) + self.bias
        return floored_log_softmax(scores[None, :])[0]

    def log_probabilities_of_rows(self, presence: np.ndarray) -> np.ndarray:
        """Rows × classes log-probabilities of rows × buckets presence (many pages at once, each
        summed as `log_probabilities` sums it, so a page scores the same either way)."""
        rows = [self.log_probabilities(np.flatnonzero(row)) for row in presence]
        return np.array(rows, dtype=np.float64).reshape(len(presence), len(self.bias))

    @property
    def buckets(self) -> int:
        return int(self.weights.shape[0])
