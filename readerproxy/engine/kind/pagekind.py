"""What kind of page this is: `page_kind(doc, selection)` -> one of the seven WCXB page types.

The kinds are those of the WCXB benchmark (Foley 2026, `../shared/datasets/wcxb-dev/PAGE-TYPES.md`):
article, forum, product, listing, collection, documentation, service. They type a page by the
structure that decides how its content must be shown, not by topic.

The decision reads the page as a whole, from the `Document` the pipeline already parsed and the
selection its extraction already made (nothing is parsed twice). The features (`FEATURES`) are
signals that hold on any site and in any language:

- structured data: the schema.org types of the page's JSON-LD and microdata (`Product`, `Offer`,
  `AggregateRating`, `Recipe`, `Article` and its kin, `TechArticle`, `DiscussionForumPosting`,
  `QAPage`, `ItemList`, `BreadcrumbList`, `FAQPage`, `Organization`/`LocalBusiness`, ...) and the
  OpenGraph `og:type` (schema.org vocabulary, https://schema.org/docs/full.html; OpenGraph,
  https://ogp.me/#types);
- repeated item structures: many siblings with one tag-and-class signature, each holding a link and
  text of its own (the "data records" of Liu, Grossman and Zhai 2003, MDR, found here from the
  signature alone, not by tree matching);
- forms, inputs, buttons and selects; price-like strings (a currency sign or code beside digits);
  link density (Kohlschütter et al. 2010); headings, code, `<time>`, long paragraphs and how
  they sit together (Readability.js's `isProbablyReaderable`);
- the share of the page's text the extraction keeps and its length;
- class and id words that page templates share across sites (price, cart, post, reply, sidebar ...);
- the shape of the URL (path depth, a numeric id, a date, a long slug, segments and subdomains such
  as `/product/`, `/forum/`, `/docs/`, `/category/`, `forum.`, `docs.`);
- the page's words (`pagewords`): the words of its title, description, headings,
  menus, dropped links, buttons and labels and of its kept text, hashed into 4,096 buckets (the
  hashing trick, Weinberger et al. 2009: no vocabulary, any language), read by a multinomial
  logistic regression whose seven log-probabilities are features of the trees (`WORD_FEATURES`;
  stacking, Wolpert 1992: the trees are trained on the regression's out-of-fold scores, so they
  learn how far to trust it). The regression's weights ship in the same file as the trees.

The model is gradient-boosted trees (Friedman 2001), one additive ensemble per kind, trained with
LightGBM by `readerproxy pagekind train` (`research/pagekind_eval.py`) and evaluated here in numpy
by `learn.model.TreeModel` (the block scorer's evaluator); the kinds' scores go through a softmax,
and the confidence is the probability of the kind chosen.

Measured out of fold (`readerproxy pagekind eval`: five folds grouped by site, 1,310 wcxb-dev pages,
the word regression refitted inside each fold; seed 7, with the word features first shipped): accuracy 0.879 (0.878 the mean of
seeds 7, 1, 2, 3; 0.845 without the words); recall article 0.966, forum 0.895, product 0.824,
listing 0.543, collection 0.809, documentation 0.769, service 0.811. The common confusions are
services, listings and documentation taken for articles (23, 17 and 16 pages), listings taken for
services (15) and listings and collections for each other. The tree settings (500 rounds, at least 5 pages a leaf) were chosen
among a handful on the same out-of-fold accuracy (0.841-0.850), and the words' (which words, 2 ** 12
buckets, L2 1) among thirteen variants, so the figure is slightly optimistic. The decision cost
about 1.5-2 ms a page before the words (ScrapingHub pages, CPU time on a loaded machine; about 15 %
of `extract(auto)`'s 11-13 ms), the trees 0.15 ms of it: class words, repeated items, prices and
structured data are each 0.15-0.4 ms, and each is worth 1-2.5 points of accuracy out of fold. The
words add 0.6 ms (80 ScrapingHub pages, medians: the bag 590-600 µs, the regression
22 µs; the whole decision 1.56 ms of `extract(auto)`'s 5.3-5.5 ms on that host, the words 11-12 % of
it; `pagewords`) for 3.3 points of accuracy.

`readerable(probabilities)`: whether the page reads well as a reader view; articles, documentation
and forums (as a thread view) do; products, listings, collections and service pages do not, unless
the model is unsure. Two bars, because the model's mistakes are one-sided: the services and listings
it calls readerable it takes for articles, with confidence (14 of the 23 services and 5 of the 17
listings taken for articles above 0.8, seed 7 out of fold), and rarely for documentation or forums.
The page is readerable when P(article) + P(documentation) + P(forum) reaches `READERABLE_AT` (0.85),
or P(documentation) + P(forum) alone reaches `READERABLE_DOCS_AT` (0.35); the pair chosen out of
fold on wcxb-dev (`pagekind_eval.choose_thresholds`, pooled over four training seeds) as the one
keeping each readerable kind at least 0.95 readerable (`pagekind_eval.MIN_READERABLE`) with the
other kinds readerable least often.
Out of fold when the word features were first shipped (mean of training seeds 7, 1, 2, 3, each
fold's bars chosen on the other folds):

| readerable share | article | documentation | forum | product | collection | listing | service |
|---|---|---|---|---|---|---|---|
| without the words (shipped bars 0.65, 0.2) | 0.961 | 0.971 | 0.981 | 0.014 | 0.034 | 0.201 | 0.255 |
| with the words, bars kept ≥ 0.96 readerable (0.75, 0.15) | 0.961 | 0.962 | 0.993 | 0.028 | 0.031 | 0.128 | 0.131 |
| with the words, bars kept ≥ 0.95 readerable (shipped: 0.85, 0.15) | 0.953 | 0.955 | 0.995 | 0.025 | 0.014 | 0.109 | 0.104 |

By seed with those bars, listings 0.087-0.141 and services 0.101-0.107, articles 0.950-0.956 and
documentation 0.949-0.962 (with the 0.96 floor: listings 0.098-0.152, services 0.113-0.151).

On the features of `auto` with copies of a section dropped (docs/rules.md, `repeats`; the model retrained on them, bars 0.85 and 0.35): accuracy 0.874; readerable
article 0.952, documentation 0.958, forum 0.993, product 0.011, collection 0.011, listing 0.087,
service 0.096 (mean of four seeds; by seed services 0.088-0.101, listings 0.076-0.098, articles
0.950-0.954, documentation 0.949-0.962). Services crossed the target of 0.10 with a change of the
extraction, not of the model (0.105 with the same settings on the features before it): the margin,
0.6 of a page of 159 in the mean, is inside the spread between seeds. The ones left are businesses'
long prose pages read as articles with confidence 0.9-1.0, and indexes whose entries read as prose
(docs/experiments.md).
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from ..._speedups import native
from ..learn.model import TreeModel
from ..parse.document import TEXT, Document, indices_of
from ..schema import PAGE_KIND_GROUPS, text_types, type_name
from .pagewords import BITS, SCHEME, WordModel, page_words

#: The seven WCXB page types, in the model's class order.
KINDS: tuple[str, ...] = ("article", "forum", "product", "listing", "collection", "documentation", "service")
#: Kinds a reader view shows well (a forum as its thread view).
READERABLE_KINDS = frozenset(("article", "documentation", "forum"))
#: Readerable kinds the model rarely mistakes a listing or a service page for: documentation and
#: forums. The pages the model wrongly calls readerable are services and listings taken for
#: articles, so the article column alone needs the higher bar.
RARELY_MISTAKEN_KINDS = frozenset(("documentation", "forum"))
#: A page is readerable when the probabilities of `READERABLE_KINDS` together reach this, so a page
#: of another kind keeps its reader view only when the model is unsure of it; see `readerable`.
READERABLE_AT = 0.85
#: ... or when the probabilities of `RARELY_MISTAKEN_KINDS` together reach this. Both chosen out of
#: fold on wcxb-dev (`pagekind_eval.choose_thresholds` on seeds 7, 1, 2, 3 pooled): the pair at
#: which articles, documentation and forums all stay at least `pagekind_eval.MIN_READERABLE`
#: readerable and the other kinds are readerable least often; chosen on the features of `auto`
#: with copies of a section dropped (0.25 on the features before it; the pair was 0.8 and 0.3
#: before the screen-reader-only text was dropped, 0.85 and 0.15 with the first word features,
#: 0.65 and 0.2 before them).
READERABLE_DOCS_AT = 0.35
#: The weights shipped with the package (written by `readerproxy pagekind train`).
SHIPPED_MODEL = Path(__file__).resolve().parent.parent / "models" / "pagekind.npz"

# -- structured data ----------------------------------------------------------------------------

#: The page-kind features the page's schema.org types count towards (`schema.PAGE_KIND_GROUPS`).
SCHEMA_FEATURES = tuple(dict.fromkeys(PAGE_KIND_GROUPS.values()))


def structured_types(doc: Document) -> dict[str, int]:
    """Per group of `schema.PAGE_KIND_GROUPS`, how many JSON-LD and microdata objects of its types
    the page has (the JSON-LD's read without parsing: `schema.text_types`)."""
    counts: dict[str, int] = {}
    names: list[str] = [name for raw in doc.json_ld for name in text_types(raw)]
    for node in doc.tree.css("[itemtype]"):
        names.extend((node.attributes.get("itemtype") or "").split())
    for name in names:
        group = PAGE_KIND_GROUPS.get(type_name(name))
        if group is not None:
            counts[group] = counts.get(group, 0) + 1
    return counts


# -- class and id words ---------------------------------------------------------------------------

#: Parts of class and id values that page templates share across sites, by feature, found in
#: lower case anywhere in a value (`product-price`, `add_to_cart`, `postBody`, `comment-reply`).
_CLASS_WORDS: dict[str, tuple[str, ...]] = {
    "price": ("price", "cart", "basket", "checkout", "sku", "stock", "quantity"),
    "product": ("product",),
    "rating": ("rating", "star", "review"),
    "post": ("post", "message", "repl", "thread", "topic", "comment", "quote", "forum", "answer", "vote"),
    "user": ("author", "user", "avatar", "member", "profile"),
    "card": ("card", "tile", "grid", "teaser", "excerpt", "result", "item"),
    "filter": ("filter", "facet", "sort", "pagination", "pager"),
    "docs": ("sidebar", "toc", "doc", "api", "highlight", "language", "syntax", "wiki"),
    "service": ("hero", "pricing", "plan", "testimonial", "feature", "cta", "client", "partner"),
    "article": ("article", "entry", "story", "blog", "publish"),
}
CLASS_FEATURES = tuple(_CLASS_WORDS)
#: Every part of `_CLASS_WORDS`, group after group (`_native.count_parts` counts them in one pass).
_CLASS_PARTS = [part for parts in _CLASS_WORDS.values() for part in parts]


def class_word_counts(doc: Document) -> dict[str, int]:
    """How many times a part of each group of `_CLASS_WORDS` occurs in the page's distinct class
    values (each value counted once however many elements carry it, so that one repeated template
    does not outweigh the rest; ids, mostly unique, are left out). For speed, `str.count` over the
    values joined, one call per part (a regular expression over the same string took ten times as
    long)."""
    values = set(doc.classes)
    values.discard(None)
    joined = " ".join(values).lower()  # type: ignore[arg-type]
    if native is not None:  # the same counts in one pass over the values (`_native.count_parts`)
        counts = iter(native.count_parts(joined, _CLASS_PARTS))
        return {group: sum([next(counts) for _ in parts]) for group, parts in _CLASS_WORDS.items()}
    return {group: sum(joined.count(part) for part in parts) for group, parts in _CLASS_WORDS.items()}


# -- the URL --------------------------------------------------------------------------------------

#: Path segments and subdomain labels that name a page's kind on many sites, by feature.
_URL_WORDS: dict[str, frozenset[str]] = {
    "product": frozenset("product products p dp item items shop store buy sku gp".split()),
    "forum": frozenset(
        "forum forums thread threads t topic topics community communities discussion discussions "
        "discuss questions question q r viewtopic showthread board boards".split()
    ),
    "docs": frozenset(
        "docs doc documentation api reference manual guide guides wiki developer developers learn "
        "tutorial tutorials help kb support library sdk".split()
    ),
    "list": frozenset(
        "category categories tag tags collection collections c search archive archives list lists "
        "catalog catalogue browse courses topics section".split()
    ),
    "article": frozenset(
        "blog blogs news article articles post posts story stories stories insights".split()
    ),
    "service": frozenset(
        "services service solutions solution pricing features platform about company".split()
    ),
}
URL_WORD_FEATURES = tuple(_URL_WORDS)
_NUMBER = re.compile(r"^\d{3,}$|[-_.]\d{4,}|^\d+-")
_DATE = re.compile(r"/(19|20)\d\d/(0?[1-9]|1[0-2])(/|$)|\d{4}-\d\d-\d\d")
_EXTENSION = re.compile(r"\.(html?|php|aspx?|jsp|cfm)$", re.IGNORECASE)


def url_features(url: str | None) -> dict[str, float]:
    """The shape of a URL: path depth, last segment, numeric ids, dates, words of `_URL_WORDS`."""
    values = dict.fromkeys(URL_FEATURES, 0.0)
    if not url:
        values["url_missing"] = 1.0
        return values
    try:
        parts = urlsplit(url)
    except ValueError:
        values["url_missing"] = 1.0
        return values
    path = parts.path or "/"
    segments = [segment for segment in path.lower().split("/") if segment]
    last = _EXTENSION.sub("", segments[-1]) if segments else ""
    host = (parts.hostname or "").lower().split(".")
    values["url_depth"] = float(len(segments))
    values["url_last_length"] = float(len(last))
    values["url_last_words"] = float(len([w for w in re.split(r"[-_+ ]+|%20", last) if w])) if last else 0.0
    values["url_number"] = float(any(_NUMBER.search(segment) for segment in segments))
    values["url_date"] = float(bool(_DATE.search(path)))
    values["url_query"] = float(bool(parts.query))
    values["url_extension"] = float(bool(segments) and bool(_EXTENSION.search(segments[-1])))
    values["url_slash"] = float(path.endswith("/") and len(segments) > 0)
    for name, words in _URL_WORDS.items():
        in_path = [i for i, segment in enumerate(segments) if _EXTENSION.sub("", segment) in words]
        values[f"url_{name}"] = float(len(in_path) > 0)
        values[f"url_{name}_last"] = float(bool(in_path) and in_path[-1] == len(segments) - 1)
        values[f"host_{name}"] = float(any(label in words for label in host[:-2]))
    return values


URL_FEATURES: tuple[str, ...] = (
    "url_missing",
    "url_depth",
    "url_last_length",
    "url_last_words",
    "url_number",
    "url_date",
    "url_query",
    "url_extension",
    "url_slash",
    *(name for word in URL_WORD_FEATURES for name in (f"url_{word}", f"url_{word}_last", f"host_{word}")),
)


def page_url(doc: Document) -> str | None:
    """The page's URL: the one it was fetched from, else its canonical link or `og:url`."""
    if doc.url:
        return doc.url
    for index in indices_of(doc.tag, "link"):
        attributes = doc.elements[index].attributes
        if (attributes.get("rel") or "").lower().strip() == "canonical" and attributes.get("href"):
            return attributes.get("href")
    for meta in doc.meta:
        if (meta.get("property") or meta.get("name") or "").lower() == "og:url" and meta.get("content"):
            return meta.get("content")
    return None


# -- the page -------------------------------------------------------------------------------------

#: Tags counted (log of 1 + count); `h2`-`h6` together as `hn`.
COUNTED_TAGS = (
    "form input button select textarea label h1 hn pre code time article section aside nav li table "
    "img p blockquote dl a svg video iframe footer header main figure".split()
)
#: Currency signs and codes; next to digits they make a price: "$34.99", "34,99 €", "EUR 12", "1 299 kr".
#: The codes are a few common ones: each costs a search of the whole text.
_SIGN_CHARACTERS = "$€£¥₹₩₽₺₴₪฿₫"
_SIGNS = re.compile(f"[{_SIGN_CHARACTERS}]")
_CODE_NAMES = ["EUR", "USD", "kr", "zł", "Rs"]
_CODES = tuple((code, re.compile(re.escape(code))) for code in _CODE_NAMES)


def count_prices(text: str) -> int:
    """Currency signs or codes with a digit right after (a space or a dot between) or right before.

    For speed, the signs are found by one scan for a set of characters, and each code only on pages
    that hold it (`in`, a plain substring search): one regular expression for all of them stopped at
    every letter a code begins with, and took five times as long. With the C kernels, the same count
    in one pass over the text (`_native.count_prices`)."""
    if native is not None:
        return int(native.count_prices(text, _SIGN_CHARACTERS, _CODE_NAMES))
    found = _next_to_digits(text, _SIGNS.finditer(text))
    for code, pattern in _CODES:
        if code in text:
            found += _next_to_digits(text, pattern.finditer(text))
    return found


def _next_to_digits(text: str, matches: Iterable[re.Match[str]]) -> int:
    found = 0
    for match in matches:
        start, end = match.span()
        after = text[end : end + 2].lstrip(" .\u00a0")[:1]
        before = text[max(0, start - 2) : start].rstrip(" \u00a0")[-1:]
        if after.isdigit() or before.isdigit():
            found += 1
    return found


_OG_TYPES = ("article", "product", "website", "profile", "video", "book", "other")

#: The features read from the page directly (`base_features`), in the model's column order.
BASE_FEATURES: tuple[str, ...] = (
    *(f"ld_{group}" for group in SCHEMA_FEATURES),
    "ld_products_many",
    "ld_listitems",
    *(f"og_{name}" for name in _OG_TYPES),
    "meta_article_time",
    "meta_price",
    *(f"tags_{name}" for name in COUNTED_TAGS),
    "log_elements",
    "log_body_chars",
    "link_density",
    "anchors_per_element",
    "li_per_element",
    "rep_groups",
    "rep_max",
    "rep_items",
    "rep_share",
    "rep_max_share",
    "rep_image_share",
    "rep_time_share",
    "prices",
    "prices_per_kchar",
    "ld_date",
    "ld_author",
    "title_words",
    "h1_words",
    "p_share",
    "headings_per_kchar",
    "buttons_per_kchar",
    "images_per_kchar",
    "sections_per_kchar",
    "long_paragraphs",
    "long_paragraph_share",
    "long_paragraph_together",
    "kept_share",
    "log_kept_chars",
    "kept_link_density",
    "kept_elements",
    *(f"class_{name}" for name in CLASS_FEATURES),
    *URL_FEATURES,
)
#: The word regression's log-probability of each kind (`pagewords.WordModel`, stacked: Wolpert 1992).
WORD_FEATURES: tuple[str, ...] = tuple(f"words_{kind}" for kind in KINDS)
#: Feature names, in the model's column order.
FEATURES: tuple[str, ...] = (*BASE_FEATURES, *WORD_FEATURES)


def _ids(values: Sequence[str | None]) -> np.ndarray:
    """A small integer per distinct value (None -> 0), in a first-seen order. For speed, a Python
    step per distinct value, not per value."""
    lookup: dict[str | None, int] = {None: 0}
    for value in dict.fromkeys(values):
        lookup.setdefault(value, len(lookup))
    return np.fromiter(map(lookup.__getitem__, values), dtype=np.int64, count=len(values))


def page_features(
    doc: Document, selection: np.ndarray | None = None, words: WordModel | None = None
) -> np.ndarray:
    """The features of a page (`FEATURES`, in order) from its Document and its extraction's token
    selection (None: no extraction; the page counts as kept whole): `base_features`, then the word
    regression `words` applied to the page's hashed bag (`pagewords.page_words`; None: the shipped
    model's regression, ValueError if it cannot be read)."""
    if words is None:
        words = load_model().words
    return np.concatenate(
        (base_features(doc, selection), words.log_probabilities(page_words(doc, selection)))
    )


def base_features(doc: Document, selection: np.ndarray | None = None) -> np.ndarray:
    """The features of a page read from it directly (`BASE_FEATURES`, in order; see `page_features`)."""
    values: dict[str, float] = {}
    n = len(doc.elements)
    tags = doc.tag
    # structured data
    groups = structured_types(doc)
    for group in SCHEMA_FEATURES:
        values[f"ld_{group}"] = math.log1p(groups.get(group, 0))
    values["ld_products_many"] = float(groups.get("product", 0) >= 3)
    values["ld_listitems"] = math.log1p(sum(raw.count('"ListItem"') for raw in doc.json_ld))
    og = ""
    article_time = price_meta = 0.0
    for meta in doc.meta:
        key = (meta.get("property") or meta.get("name") or "").lower()
        if key == "og:type":
            og = (meta.get("content") or "").lower().strip()
        elif key.startswith("article:published") or key in ("date", "pubdate", "publish-date"):
            article_time = 1.0
        elif "price" in key:
            price_meta = 1.0
    og_kind = og.split(".", 1)[0].split(":", 1)[0] if og else ""
    for name in _OG_TYPES:
        values[f"og_{name}"] = float(
            og_kind == name or (name == "other" and og_kind not in _OG_TYPES and bool(og))
        )
    values["meta_article_time"] = article_time
    values["meta_price"] = price_meta
    # tags
    tag_counts = Counter(tags)  # for speed: counted in C, not a Python step per element

    def count(name: str) -> int:
        return tag_counts.get(name, 0)

    for name in COUNTED_TAGS:
        total = sum(count(h) for h in ("h2", "h3", "h4", "h5", "h6")) if name == "hn" else count(name)
        values[f"tags_{name}"] = math.log1p(total)
    values["log_elements"] = math.log1p(n)
    body = tag_counts.get("body")
    root = tags.index("body") if body is not None else 0
    chars = doc.subtree_chars
    anchor_chars = doc.subtree_anchor_chars
    body_chars = float(chars[root]) if n else 0.0
    values["log_body_chars"] = math.log1p(body_chars)
    values["link_density"] = float(anchor_chars[root]) / body_chars if body_chars else 0.0
    values["anchors_per_element"] = count("a") / n if n else 0.0
    values["li_per_element"] = count("li") / n if n else 0.0
    values.update(_repeated_items(doc, body_chars))
    # prices
    texts = doc.tokens.text
    kinds = doc.tokens.kind
    first, last = doc.body
    text = " ".join(texts[first : last + 1]) if n else ""
    prices = count_prices(text)
    values["prices"] = math.log1p(prices)
    values["prices_per_kchar"] = 1000.0 * prices / body_chars if body_chars else 0.0
    values["ld_date"] = float(any("datePublished" in raw for raw in doc.json_ld))
    values["ld_author"] = float(any('"author"' in raw for raw in doc.json_ld))
    values["title_words"] = float(len(doc.title.split()))
    h1 = tags.index("h1") if "h1" in tag_counts else -1
    values["h1_words"] = float(len(doc.element_text(h1).split())) if h1 >= 0 else 0.0
    kchars = max(body_chars, 1.0) / 1000.0
    headings = sum(count(h) for h in ("h1", "h2", "h3", "h4", "h5", "h6"))
    values["headings_per_kchar"] = headings / kchars
    values["buttons_per_kchar"] = (count("button") + count("input") + count("select")) / kchars
    values["images_per_kchar"] = (count("img") + count("svg") + count("picture")) / kchars
    values["sections_per_kchar"] = count("section") / kchars
    # long paragraphs, and whether they sit together (Readability.js's check)
    paragraphs = np.array(indices_of(tags, "p"), dtype=np.int64)
    values["p_share"] = float(chars[paragraphs].sum()) / body_chars if body_chars and len(paragraphs) else 0.0
    if len(paragraphs):
        lengths = chars[paragraphs]
        long = lengths >= 140
        long_chars = float(lengths[long].sum())
        values["long_paragraphs"] = math.log1p(int(long.sum()))
        values["long_paragraph_share"] = long_chars / body_chars if body_chars else 0.0
        if long.any():
            by_parent = np.bincount(doc.parent[paragraphs[long]] + 1, weights=lengths[long])
            values["long_paragraph_together"] = float(by_parent.max()) / long_chars
        else:
            values["long_paragraph_together"] = 0.0
    else:
        values["long_paragraphs"] = values["long_paragraph_share"] = values["long_paragraph_together"] = 0.0
    # the extraction
    token_chars = doc.tokens.chars
    if selection is None or not len(selection):
        kept = body_chars
        kept_anchor = float(anchor_chars[root]) if n else 0.0
        kept_elements = float(n)
    else:
        kept_text = selection & (kinds == TEXT)
        kept = float(token_chars[kept_text].sum())
        kept_anchor = float(token_chars[kept_text & doc.tokens.in_anchor].sum())
        kept_elements = float(np.count_nonzero(selection & (kinds == 1)))
    values["kept_share"] = kept / body_chars if body_chars else 0.0
    values["log_kept_chars"] = math.log1p(kept)
    values["kept_link_density"] = kept_anchor / kept if kept else 0.0
    values["kept_elements"] = math.log1p(kept_elements)
    for name, value in class_word_counts(doc).items():
        values[f"class_{name}"] = math.log1p(value)
    values.update(url_features(page_url(doc)))
    return np.array([values[name] for name in BASE_FEATURES], dtype=np.float64)


#: Fewest siblings of one signature that count as a list of items.
MIN_ITEMS = 4
#: Text characters an item needs beyond its links (an excerpt, a price, a date) to be a card, not a menu entry.
MIN_OWN_CHARS = 20


def _repeated_items(doc: Document, body_chars: float) -> dict[str, float]:
    """Repeated item structures: siblings sharing a tag-and-class signature (at least `MIN_ITEMS`),
    each holding a link's text and `MIN_OWN_CHARS` characters of text outside links, or an image."""
    names = (
        "rep_groups",
        "rep_max",
        "rep_items",
        "rep_share",
        "rep_max_share",
        "rep_image_share",
        "rep_time_share",
    )
    n = len(doc.tag)
    if n == 0:
        return dict.fromkeys(names, 0.0)

    def inside(tag: str) -> np.ndarray:
        """Per element, how many `tag` elements it holds (itself included)."""
        found = np.zeros(n)
        found[indices_of(doc.tag, tag)] = 1.0
        return doc.sum_descendants(found)

    images = inside("img")
    times = inside("time")
    chars = doc.subtree_chars
    linked = doc.subtree_anchor_chars  # a link's text (for speed: counted already, not the <a> elements)
    own = chars - linked
    item = (linked > 0) & ((own >= MIN_OWN_CHARS) | (images > 0)) & (doc.parent >= 0)
    candidates = np.flatnonzero(item)
    if len(candidates) < MIN_ITEMS:
        return dict.fromkeys(names, 0.0)
    pick = itemgetter(*candidates.tolist())  # at least MIN_ITEMS of them: a tuple
    class_ids = _ids(pick(doc.classes))
    tag_ids = _ids(pick(doc.tag))
    width = int(class_ids.max()) + 1
    key = (doc.parent[candidates].astype(np.int64) * (int(tag_ids.max()) + 1) + tag_ids) * width + class_ids
    _, inverse, sizes = np.unique(key, return_inverse=True, return_counts=True)
    in_group = sizes[inverse] >= MIN_ITEMS
    members = candidates[in_group]
    if not len(members):
        return dict.fromkeys(names, 0.0)
    group_chars = np.bincount(inverse[in_group], weights=chars[members])
    big = sizes >= MIN_ITEMS
    return {
        "rep_groups": math.log1p(int(big.sum())),
        "rep_max": math.log1p(int(sizes.max())),
        "rep_items": math.log1p(len(members)),
        "rep_share": min(1.0, float(group_chars.sum()) / body_chars) if body_chars else 0.0,
        "rep_max_share": min(1.0, float(group_chars.max()) / body_chars) if body_chars else 0.0,
        "rep_image_share": float(np.count_nonzero(images[members])) / len(members),
        "rep_time_share": float(np.count_nonzero(times[members])) / len(members),
    }


# -- the model ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PageKindModel:
    """One tree ensemble per kind (`KINDS` order); the kinds' scores through a softmax. `words` is
    the regression on the page's hashed words whose log-probabilities are the `WORD_FEATURES`."""

    kinds: tuple[str, ...]
    trees: tuple[TreeModel, ...]
    features: tuple[str, ...]
    words: WordModel
    #: accuracy out of fold on wcxb-dev of these features and settings, when `train` knew it (NaN: not)
    oof_accuracy: float = math.nan

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        """Rows × kinds probabilities for rows × features."""
        scores = np.column_stack([model.log_odds(x) for model in self.trees])
        scores -= scores.max(axis=1, keepdims=True)
        exp = np.exp(scores)
        return exp / exp.sum(axis=1, keepdims=True)

    def save(self, path: Path) -> None:
        """Write the model as an `.npz` file (`load_model` reads it)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        arrays: dict[str, np.ndarray] = {
            "kinds": np.array(self.kinds),
            "features": np.array(self.features),
            "oof_accuracy": np.array([self.oof_accuracy]),
            "words_weights": np.asarray(self.words.weights, dtype=np.float32),
            "words_bias": np.asarray(self.words.bias, dtype=np.float32),
            "words_scheme": np.array(SCHEME),
        }
        for index, model in enumerate(self.trees):
            arrays.update(model.arrays(f"k{index}_"))
        save: Any = np.savez_compressed
        with path.open("wb") as out:
            save(out, **arrays)


@functools.lru_cache(maxsize=8)
def load_model(path: str = "") -> PageKindModel:
    """The page-kind model at `path` ("" = the shipped one), read once; ValueError if unusable: not
    readable, trained on other features (`FEATURES`), or without a word regression of this code's
    hashing (`pagewords.SCHEME`) and shape (buckets × kinds)."""
    source = Path(path) if path else SHIPPED_MODEL
    try:
        with np.load(source, allow_pickle=False) as data:
            kinds = tuple(str(kind) for kind in data["kinds"])
            features = tuple(str(name) for name in data["features"])
            scheme = str(data["words_scheme"]) if "words_scheme" in data else ""
            words = (
                WordModel(
                    np.ascontiguousarray(data["words_weights"], dtype=np.float32),
                    np.asarray(data["words_bias"], dtype=np.float64),
                )
                if "words_weights" in data
                else None
            )
            trees = tuple(TreeModel.from_arrays(data, f"k{index}_") for index in range(len(kinds)))
            oof_accuracy = float(data["oof_accuracy"][0]) if "oof_accuracy" in data else math.nan
    except (OSError, KeyError, ValueError, IndexError) as exc:
        raise ValueError(f"model {str(source)!r}: cannot load page-kind model ({exc})") from None
    if features != FEATURES:
        raise ValueError(
            f"model {str(source)!r}: trained on other features; retrain with `readerproxy pagekind train`"
        )
    if words is None or scheme != SCHEME:
        raise ValueError(
            f"model {str(source)!r}: no word regression of this code's hashing ({SCHEME});"
            " retrain with `readerproxy pagekind train`"
        )
    if words.weights.shape != (1 << BITS, len(kinds)) or words.bias.shape != (len(kinds),):
        raise ValueError(
            f"model {str(source)!r}: word weights of shape {words.weights.shape}, not {(1 << BITS, len(kinds))}"
        )
    return PageKindModel(kinds, trees, features, words, oof_accuracy)


@dataclass(frozen=True, slots=True)
class PageKind:
    """The kind of a page, the probability of that kind, and every kind's probability."""

    kind: str
    confidence: float
    probabilities: dict[str, float]

    @property
    def readerable(self) -> bool:
        return readerable(self.probabilities)


#: The answer without a model.
UNDECIDED = PageKind("", 0.0, {})


def page_kind(
    doc: Document, selection: np.ndarray | None = None, model: PageKindModel | None = None
) -> PageKind:
    """The kind of the page of `doc`, given its extraction's selection (see `page_features`);
    `UNDECIDED` when no model is given and the shipped one cannot be read."""
    if model is None:
        try:
            model = load_model()
        except ValueError:
            return UNDECIDED
    probabilities = model.probabilities(page_features(doc, selection, model.words)[None, :])[0]
    best = int(probabilities.argmax())
    return PageKind(
        model.kinds[best],
        round(float(probabilities[best]), 4),
        {kind: round(float(p), 4) for kind, p in zip(model.kinds, probabilities.tolist(), strict=True)},
    )


def readerable_probability(probabilities: Mapping[str, float]) -> float:
    """The probability that the page is of a kind a reader view shows well (`READERABLE_KINDS`)."""
    return sum(probabilities.get(kind, 0.0) for kind in READERABLE_KINDS)


def rarely_mistaken_probability(probabilities: Mapping[str, float]) -> float:
    """The probability that the page is documentation or a forum (`RARELY_MISTAKEN_KINDS`)."""
    return sum(probabilities.get(kind, 0.0) for kind in RARELY_MISTAKEN_KINDS)


def readerable(
    probabilities: Mapping[str, float], at: float = READERABLE_AT, docs_at: float = READERABLE_DOCS_AT
) -> bool:
    """Whether a page reads well as a reader view, from its kinds' probabilities: articles,
    documentation and forums (as a thread view) do, the other kinds do not. The page is readerable
    when the readerable kinds together reach `at`, or documentation and forums alone reach `docs_at`
    (an empty mapping, no decision: False). Two bars, because the model's mistakes are one-sided:
    out of fold on wcxb-dev the service pages and listings it calls readerable it takes for articles,
    with confidence (a business's long prose page, a news index), while it rarely takes them for
    documentation or forums; so an article needs the higher bar and documentation keeps its reader
    view at a low one. Out of fold on wcxb-dev (with the first word features, mean of four
    training seeds), with one bar on the sum 16.0 % of service pages and 19.6 % of listings were
    readerable, with the two 13.1 % and 12.8 % (docs/experiments.md)."""
    if not probabilities:
        return False
    return (
        readerable_probability(probabilities) >= at or rarely_mistaken_probability(probabilities) >= docs_at
    )
