"""The blocks each post-rule finds: comment sections, other articles, repeated and template blocks,
link runs, whole tables and lists, teasers, choices and filters, captions, galleries, reviews,
threads and listing cards. Pure functions of the Document, the blocks and what is kept."""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Callable

import numpy as np

from ...elements import CAPTION_BIT, CLASS_WORDS, THREAD_MARKER_BIT, WIDE_ONLY_BIT, features_of
from ...learn import blocks as learn_blocks
from ...parse.document import TEXT, Document, indices_of
from ...views.listing import item_cards
from ...views.thread import PostParts, post_parts
from ..auto import selected_chars
from .params import (
    _PROSE_LIST_PARTS,
    DATA_TABLE_ROWS,
    LINK_RUN_CHARS,
    LINK_RUN_DENSITY,
    LINK_RUN_SHARE,
    WHOLE_LIST_ITEMS,
    WHOLE_LIST_LINK_DENSITY,
)


def block_selection(doc: Document, holder: np.ndarray, chosen_elements: np.ndarray) -> np.ndarray:
    """Token mask of the text holders `chosen_elements` (their own text and inline markup)."""
    t = doc.tokens
    chosen = np.zeros(len(doc.elements), dtype=bool)
    chosen[chosen_elements] = True
    owner = np.where(t.element >= 0, t.element, 0)
    return chosen[holder[owner]] & (t.element >= 0) & doc.body_mask


def _page_says(features: np.ndarray, *columns: str) -> bool:
    """Whether any of the page-wide feature `columns` is set (the same on every row: read row 0)."""
    return len(features) > 0 and any(features[0, learn_blocks.FEATURES.index(c)] > 0 for c in columns)


def says_product(features: np.ndarray) -> bool:
    """Whether the page says it is a product (JSON-LD Product/Offer types or an `og:type` with
    "product"): there the heuristic's root, an article finder's answer, does not mark a sidebar, and
    the rule for blocks outside it does not hold."""
    return _page_says(features, "ld_product", "og_product")


def comment_section(features: np.ndarray, outside: np.ndarray) -> np.ndarray:
    """The blocks of an article page's reader comments: after a heading that opens a comment section
    ("12 Comments", "Leave a Reply": `learn.blocks.COMMENT_HEADING`) and outside the heuristic's
    article root, on a page that says it is an article (JSON-LD Article types or `og:type`
    article). A rule rather than the trees' call: few training pages have such a section, and the
    trees keep the comments at p ≈ 0.85 although the heading feature is set. Forums and Q&A pages
    (no article type) keep their posts."""
    column = learn_blocks.FEATURES.index
    after = features[:, column("after_comment_heading")] > 0
    article = (features[:, column("ld_article")] > 0) | (features[:, column("og_article")] > 0)
    return after & outside & article


#: An id or class naming a shop's customer reviews, or a review service's widget (Yotpo, Okendo,
#: Judge.me, Stamped, Bazaarvoice, Trustpilot, Feefo, Reevoo); "preview" is not a review.
REVIEW_CONTAINER = re.compile(
    r"(?:review|yotpo|okendo|judgeme|stamped-|bazaarvoice|bv[-_]|trustpilot|feefo|reevoo)"
)  # searched in lower case; "preview" and a "bv" inside a word are left out after the search
#: Elements that never count as a reviews container (a theme may name the whole page after them).
_PAGE_TAGS = frozenset(("html", "body", "main"))
#: A container holding at least this share of the page's text is the page, not its reviews section.
REVIEW_MAX_SHARE = 0.5


def says_article(features: np.ndarray) -> bool:
    """Whether the page says it is an article (JSON-LD Article types or `og:type` article)."""
    return _page_says(features, "ld_article", "og_article")


def says_discussion(features: np.ndarray) -> bool:
    """Whether the page says it is a discussion (JSON-LD DiscussionForumPosting and the like)."""
    return _page_says(features, "ld_discussion")


#: The main <article> holds at least this share of the kept words, or `other_articles` says nothing.
MAIN_ARTICLE_MIN_SHARE = 0.4
#: Another <article> is another story when it keeps less than this share of the main one's words.
OTHER_ARTICLE_MAX_SHARE = 0.5


def other_articles(doc: Document, blocks: learn_blocks.PageBlocks, keep: np.ndarray) -> np.ndarray:
    """Per block, whether it lies in an <article> element that is another story: on a page with
    several, the one whose blocks keep the most words is the article (when it keeps at least
    `MAIN_ARTICLE_MIN_SHARE` of all kept words), and one keeping less than `OTHER_ARTICLE_MAX_SHARE`
    of its words is a card of a feed or a "You may like" list (HTML: an <article> is a self-contained
    composition, so one beside the story is not part of it). A block counts in its innermost
    <article>; blocks outside every <article> are left alone. Called on pages that say they are an
    article and not a discussion: a thread's posts are <article>s of one conversation."""
    which = np.full(len(blocks.elements), -1, dtype=np.int64)
    starts = doc.start[blocks.elements]
    articles = indices_of(doc.tag, "article")
    other = np.zeros(len(blocks.elements), dtype=bool)
    if len(articles) < 2:
        return other
    for article in articles:  # document order: an inner <article> comes later and overwrites
        which[(starts >= doc.start[article]) & (starts <= doc.end[article])] = article
    inside = which >= 0
    if len(np.unique(which[inside])) < 2:
        return other
    words = blocks.own_words * keep
    names, slot = np.unique(which[inside], return_inverse=True)
    mass = np.bincount(slot, weights=words[inside], minlength=len(names))
    main = int(np.argmax(mass))
    if mass[main] <= 0 or mass[main] < MAIN_ARTICLE_MIN_SHARE * words.sum():
        return other
    small = (mass < OTHER_ARTICLE_MAX_SHARE * mass[main]) & (np.arange(len(names)) != main)
    other[np.flatnonzero(inside)] = small[slot]
    return other


#: The headings `orphan_headings` reads (an h1 is the page's title, kept whatever follows it).
SECTION_HEADINGS = frozenset(("h2", "h3", "h4", "h5", "h6"))
#: A kept block of this many words after a heading is the article still going on.
ORPHAN_TAIL_WORDS = 10
#: More kept headings of one tag and class than this are the titles of a list's cards.
ORPHAN_CARD_TITLES = 2


def orphan_headings(doc: Document, blocks: learn_blocks.PageBlocks, keep: np.ndarray) -> np.ndarray:
    """Per block, a kept heading (h2-h6) after the article's last words that heads nothing kept: no
    kept block starts after it in its section (the smallest element around it holding more text
    than the heading; wrappers of the heading alone are climbed over), and no kept block of
    `ORPHAN_TAIL_WORDS` words or more follows it anywhere. What such a heading introduced was
    dropped: "Share this:" over share buttons, "Related posts" over a list of links, "Leave a
    reply" over a form, "Most read" over teasers. A heading that shares its tag and class with
    `ORPHAN_CARD_TITLES` other kept headings is a card's title (a list page keeps the titles and
    drops the excerpts) and stays. Structure only, in any language."""
    found = np.zeros(len(blocks.elements), dtype=bool)
    kept = np.flatnonzero(keep)
    if not len(kept):
        return found
    chars = doc.subtree_chars
    elements = blocks.elements[kept]
    starts = doc.start[elements]
    long_starts = starts[blocks.own_words[kept] >= ORPHAN_TAIL_WORDS]
    last_long = int(long_starts.max()) if len(long_starts) else -1
    headings = [
        (b, int(e))
        for b, e in zip(kept.tolist(), elements.tolist(), strict=True)
        if doc.tag[e] in SECTION_HEADINGS and doc.start[e] > last_long
    ]
    kinds = Counter((doc.tag[e], doc.classes[e]) for e in elements.tolist() if doc.tag[e] in SECTION_HEADINGS)
    for block, heading in headings:
        if kinds[(doc.tag[heading], doc.classes[heading])] > ORPHAN_CARD_TITLES:
            continue
        section = int(doc.parent[heading])
        while section >= 0 and chars[section] <= chars[heading]:
            section = int(doc.parent[section])
        if section < 0:
            continue
        after = (starts > doc.end[heading]) & (starts <= doc.end[section])
        found[block] = not after.any()
    return found


#: A class or id naming a photo credit or a copyright line ("image-copyright", "credits",
#: "copyright-note", "ArticleAlignedImage_CopyRight"), ASCII case aside.
CREDIT_CLASS = re.compile(r"credit|copyright", re.IGNORECASE)
#: A class or id naming a box of other pages: related stories, teasers, promotions,
#: recommendations ("related-posts", "teaser-box", "promo", "recommended"), ASCII case aside.
PROMO_CLASS = re.compile(r"related|teaser|promo|recommend", re.IGNORECASE)
#: Kept blocks of more words are never read as a credit line or a box's label.
NAMED_MAX_WORDS = 8


def credit_lines(doc: Document, blocks: learn_blocks.PageBlocks, keep: np.ndarray) -> np.ndarray:
    """Per block, whether it is a kept block of at most `NAMED_MAX_WORDS` words whose element or
    its parent has a class or id naming a credit or a copyright line (`CREDIT_CLASS`): "Foto:
    Getty Images" under a picture, "© Bundesregierung/Steffen Kugler", "Bild: Jahr Media".
    The class names are the template's, in English on sites of any language; a reader shows the
    picture's caption, not whom its rights belong to. Measured (docs/rules.md, `credits`):
    older-dev false positives 196 -> 191 out of fold, the other sets equal or higher."""
    return _short_and_named(doc, blocks, keep, CREDIT_CLASS)


def promo_lines(doc: Document, blocks: learn_blocks.PageBlocks, keep: np.ndarray) -> np.ndarray:
    """Per block, whether it is a kept block of at most `NAMED_MAX_WORDS` words whose element or
    its parent has a class or id naming a box of other pages (`PROMO_CLASS`): a teaser's title, a
    related story's headline, a promotion's line, which the trees keep when the box sits inside
    the article's container. Longer blocks there (an excerpt, a paragraph of the story in a
    "related-content" wrapper) stay. Measured (docs/rules.md, `promos`): older-dev false
    positives 191 -> 187 out of fold, the other sets and every wcxb-dev type equal or higher."""
    return _short_and_named(doc, blocks, keep, PROMO_CLASS)


def _short_and_named(
    doc: Document, blocks: learn_blocks.PageBlocks, keep: np.ndarray, names: re.Pattern[str]
) -> np.ndarray:
    """Per block, whether it is kept, of at most `NAMED_MAX_WORDS` words, and its element or its
    parent has a class or id that `names` finds."""
    found = np.zeros(len(keep), dtype=bool)
    short = np.flatnonzero(keep & (blocks.own_words <= NAMED_MAX_WORDS))
    if not len(short):
        return found
    # For speed, one search over every name the short blocks and their parents carry: on most
    # pages none matches, and no block needs a search of its own.
    elements = blocks.elements[short]
    parents = doc.parent[elements]
    candidates = [*elements.tolist(), *parents[parents >= 0].tolist()]
    values = [*map(doc.classes.__getitem__, candidates), *map(doc.ident.__getitem__, candidates)]
    if not names.search("\n".join(filter(None, values))):
        return found

    def named(element: int) -> bool:
        return any(value and names.search(value) for value in (doc.classes[element], doc.ident[element]))

    for block, element, parent in zip(short.tolist(), elements.tolist(), parents.tolist(), strict=True):
        found[block] = named(element) or (parent >= 0 and named(parent))
    return found


def after_related_heading(features: np.ndarray) -> np.ndarray:
    """Per block, whether a heading that opens a list of other pages ("Related articles", "More
    from ...": `learn.blocks.RELATED_HEADING`) comes before it, after the page's first h1."""
    return features[:, learn_blocks.FEATURES.index("after_related_heading")] > 0


#: Blocks of fewer words are never dropped as repeats (a table's "Yes", a price, a size).
REPEAT_MIN_WORDS = 4


#: A copy is dropped only when it repeats at least this many different blocks of `REPEAT_MIN_WORDS`
#: words or more: a section shipped twice repeats its paragraphs in order, while one paragraph
#: repeated on its own (a pull quote, a test page's filler text) is the page's.
COPY_MIN_TEXTS = 2
#: ... and at least this many words: a section, not a tutorial's step written twice ("Then edit
#: Bob's repository configuration: ... and add the same text.", 16 words, on Mercurial's guide).
COPY_MIN_WORDS = 50


def repeated_blocks(
    doc: Document, blocks: learn_blocks.PageBlocks, keep: np.ndarray, sections: bool = True
) -> np.ndarray:
    """Per block, whether it is kept (`keep`) and lies in a copy: a run of kept blocks whose own
    texts (whitespace normalised, at least `REPEAT_MIN_WORDS` words) each repeat that of an earlier
    kept block, at least `COPY_MIN_TEXTS` different ones and `COPY_MIN_WORDS` words, with the
    shorter blocks among them that repeat too; with `sections` False (a product page), any such
    run, one block long or more. Shops ship a product's description and details, and category
    pages their buying guide, twice, one copy for narrow screens and one for wide ones, and show
    one; a reader needs it once, and a table's repeated "Yes" or a price stays."""
    repeated = np.zeros(len(keep), dtype=bool)
    # For speed: equal texts have equal characters, so a page whose kept blocks (of at least
    # REPEAT_MIN_WORDS characters) all differ in length has no copy, and its texts are not read.
    chars = blocks.features[keep, learn_blocks.FEATURES.index("log_chars")]
    chars = chars[chars >= np.log1p(REPEAT_MIN_WORDS)]
    if len(np.unique(chars)) == len(chars):
        return repeated
    seen: set[str] = set()
    runs: list[list[tuple[int, str, int]]] = []  # each copy's (block, text, words)
    run: list[tuple[int, str, int]] | None = None  # the copy being read
    for block, raw in learn_blocks.own_texts(doc, blocks, keep).items():
        words = raw.split()
        text = " ".join(words)
        if len(words) >= REPEAT_MIN_WORDS:
            if text not in seen:
                run = None
            elif run is None:
                run = [(block, text, len(words))]
                runs.append(run)
            else:
                run.append((block, text, len(words)))
        elif run is not None and text in seen:
            run.append((block, text, len(words)))
        seen.add(text)
    for run in runs:
        if not sections or _is_section(run):
            repeated[[block for block, _, _ in run]] = True
    return repeated


def _is_section(copy: list[tuple[int, str, int]]) -> bool:
    """Whether a copy (`repeated_blocks`: its blocks' texts and words) repeats a section: at least
    `COPY_MIN_TEXTS` different texts of `REPEAT_MIN_WORDS` words or more, `COPY_MIN_WORDS` in all."""
    texts = {text for _, text, words in copy if words >= REPEAT_MIN_WORDS}
    return len(texts) >= COPY_MIN_TEXTS and sum(words for _, _, words in copy) >= COPY_MIN_WORDS


#: A card's label (`template_labels`) has at most this many words ...
LABEL_MAX_WORDS = 4
#: ... recurs in at least this many kept blocks ...
LABEL_MIN_COPIES = 5
#: ... and at least this share as often as the page's most frequent label: the template writes its
#: labels once per card, while a value ("Wide", "Waterproof") is shared by some of the cards only.
LABEL_SHARE = 0.8
#: ... and its copies fill at least this share of their slot in the cards: the kept blocks of their
#: tag and classes at their place among the siblings of that tag. A value has other values in the
#: same slot of other cards ("Paperback" where Amazon's "Hardcover" stands, blackroll's "Exercises"
#: and "Difficulty" where "Duration" stands); a label has the slot to itself (Zappos' first `<dt>`
#: in every card reads "Brand Name"). Chosen by both protocols (docs/rules.md, `labels`).
LABEL_SLOT_SHARE = 0.5
_DIGIT = re.compile(r"\d")


def template_labels(doc: Document, blocks: learn_blocks.PageBlocks, keep: np.ndarray) -> np.ndarray:
    """Per block, whether it is a kept block whose text is a label of the page's template: short
    (`LABEL_MAX_WORDS`), without a digit or a colon, the same (case folded) in at least
    `LABEL_MIN_COPIES` kept blocks and `LABEL_SHARE` as often as the most frequent such text, with
    other kept blocks between its copies. A shop's grid writes the same "Compare", "Add", "Quick
    view" or, for screen readers, "Brand Name" and "Price" into every card, which the trees, seeing
    a short block inside an item's card, keep with the item. A price or a size has digits; a label
    with a colon ("Cushioning:") or inside one ("Cap type: screw cap") introduces a value, the card's
    data; copies side by side are a list of the same link ("link" x 8 on a test page), not cards; a
    text that shares its slot in the cards with other texts is a value (`_fills_its_slot`)."""
    labels = np.zeros(len(keep), dtype=bool)
    short = keep & (blocks.own_words > 0) & (blocks.own_words <= LABEL_MAX_WORDS)
    if int(short.sum()) < LABEL_MIN_COPIES:
        return labels
    copies: dict[str, list[int]] = {}
    for block, raw in learn_blocks.own_texts(doc, blocks, short).items():
        text = " ".join(raw.split()).casefold()
        if ":" not in text and not _DIGIT.search(text):
            copies.setdefault(text, []).append(block)
    most = max((len(found) for found in copies.values()), default=0)
    least = max(LABEL_MIN_COPIES, LABEL_SHARE * most)
    rank = np.cumsum(keep)  # a block's place among the kept blocks
    kept = blocks.elements[keep & (blocks.own_words > 0)].tolist()
    slot = functools.cache(lambda element: _slot(doc, element))  # each element's once, for all texts
    for found in copies.values():
        if (
            len(found) >= least
            and np.median(np.diff(rank[found])) >= 2
            and _fills_its_slot(doc, blocks.elements[found].tolist(), kept, slot)
        ):
            labels[found] = True
    return labels


def _fills_its_slot(
    doc: Document, found: list[int], kept: list[int], slot: Callable[[int], tuple[str, str | None, int]]
) -> bool:
    """Whether the copies of a text (elements `found`) are at least `LABEL_SLOT_SHARE` of the kept
    blocks' elements (`kept`) in the slot most of them take (`slot`: `_slot`, cached per page)."""
    taken, copies = Counter(map(slot, found)).most_common(1)[0]
    tag, classes, _ = taken
    in_slot = sum(
        1
        for element in kept
        if doc.tag[element] == tag and doc.classes[element] == classes and slot(element) == taken
    )
    return copies >= LABEL_SLOT_SHARE * in_slot


def _slot(doc: Document, element: int) -> tuple[str, str | None, int]:
    """An element's slot in a card's template: its tag, its classes, and how many siblings of its
    tag come before it (the first `<dt>` of a card's `<dl>`, the second, ...)."""
    tag = doc.tag[element]
    before = 0
    sibling = doc.elements[element].prev
    while sibling is not None:
        before += sibling.tag == tag
        sibling = sibling.prev
    return tag, doc.classes[element], before


#: The class of a blockquote that a social network's script turns into an embedded post (X/Twitter,
#: Instagram, TikTok, Reddit, Bluesky, Mastodon, Threads); the blockquote holds the post's text.
_EMBED_CLASS = re.compile(
    r"twitter-tweet|twitter-video|instagram-media|tiktok-embed|reddit-card|bluesky-embed|mastodon-embed|"
    r"text-post-media"
)


def embedded_posts(doc: Document, elements: np.ndarray) -> np.ndarray:
    """Per block (`elements`), whether it lies inside a quoted social post (`_EMBED_CLASS` on a
    blockquote). An article quotes posts as part of its story ("a whole lot of people noticed:"
    then the tweets); the trees, which see a short block of links and handles that the heuristic
    did not pick, keep them at p 0.3-0.5. `extract_learned` keeps them inside the heuristic's root."""
    named = [
        index
        for index in indices_of(doc.tag, "blockquote")
        if (classes := doc.classes[index]) and _EMBED_CLASS.search(classes)
    ]
    return doc.within(named, elements)


#: A block's text ending in one of these was cut short ("[…]" and "[...]" end in one too).
_ELLIPSES = ("...", "…", "…]", "...]")
#: A page needs this many cut excerpts for them to be a list of teasers.
TEASER_MIN_BLOCKS = 3


def link_runs(blocks: learn_blocks.PageBlocks, keep: np.ndarray, least: int) -> np.ndarray:
    """Per block, whether it is a kept block of a run of at least `least` consecutive blocks (in
    document order) that are each a short link and little else (`LINK_RUN_DENSITY`,
    `LINK_RUN_CHARS`): the "You may also like" and "Don't miss" lists of other stories between an
    article's paragraphs or after its end, which the trees keep when they sit inside the article's
    container. None when such runs hold more than `LINK_RUN_SHARE` of the kept words. The test reads
    link density and structure only (Kohlschütter et al. 2010: boilerplate is dense in links), so it
    holds in any language, where a "Related" heading word list would not. Measured
    (docs/rules.md, `link_runs`): ScrapingHub +0.0015 out of fold and +0.0031 held out, Readability
    +0.0003 both, wcxb-dev +0.0006 out of fold and equal held out."""
    found = np.zeros(len(keep), dtype=bool)
    if least <= 0 or len(keep) < least:
        return found
    features = blocks.features
    density = features[:, learn_blocks.FEATURES.index("link_density")]
    chars = np.expm1(features[:, learn_blocks.FEATURES.index("log_chars")])
    linked = (density >= LINK_RUN_DENSITY) & (chars <= LINK_RUN_CHARS)
    # for speed, vectorised: each run's start and end from the steps of the padded flags
    steps = np.diff(np.concatenate(([0], linked.astype(np.int8), [0])))
    for start, end in zip(
        np.flatnonzero(steps == 1).tolist(), np.flatnonzero(steps == -1).tolist(), strict=True
    ):
        if end - start >= least:
            found[start:end] = True
    found &= keep
    words = blocks.own_words
    if words[found].sum() > LINK_RUN_SHARE * words[keep].sum():
        found[:] = False
    return found


def data_tables(doc: Document) -> list[int]:
    """The page's data tables: <table>s with a header cell (<th> or <thead>), at least
    `DATA_TABLE_ROWS` rows and no table inside them (a layout table holds the page's parts, and on
    older pages other tables; a data table's rows are one record each)."""
    found = []
    for index in indices_of(doc.tag, "table"):
        inside = doc.tag[index + 1 : int(doc.subtree_end[index])]
        if (
            "table" not in inside
            and ("th" in inside or "thead" in inside)
            and inside.count("tr") >= DATA_TABLE_ROWS
        ):
            found.append(index)
    return found


def whole_tables(
    doc: Document, blocks: learn_blocks.PageBlocks, keep: np.ndarray, share: float
) -> np.ndarray:
    """Per block, whether it lies in a data table (`data_tables`) whose kept blocks hold at least
    `share` of the table's words: a table is read whole, row by row, and the trees, which score its
    cells one by one, keep some rows of a schedule or a reference table and drop others alike.
    Measured (docs/rules.md, `whole_tables`): wcxb-dev +0.0007 out of fold (its documentation pages
    0.929 -> 0.936 by WCXB's metric) and +0.0003 held out; ScrapingHub and Readability unchanged."""
    tables = data_tables(doc) if share > 0 and "table" in doc.tag else []
    return _kept_whole(doc, blocks, keep, share, tables)


def prose_lists(doc: Document) -> list[int]:
    """The page's lists of prose: <ul>s and <ol>s of at least `WHOLE_LIST_ITEMS` items, with none
    of `_PROSE_LIST_PARTS` inside (a forum's list of posts, a grid of cards) and under
    `WHOLE_LIST_LINK_DENSITY` of their text in links (a menu, or a list of other pages, is links)."""
    found = []
    for index in indices_of(doc.tag, "ul") + indices_of(doc.tag, "ol"):
        inside = doc.tag[index + 1 : int(doc.subtree_end[index])]
        if inside.count("li") < WHOLE_LIST_ITEMS or not _PROSE_LIST_PARTS.isdisjoint(inside):
            continue
        if doc.subtree_anchor_chars[index] < WHOLE_LIST_LINK_DENSITY * max(int(doc.subtree_chars[index]), 1):
            found.append(index)
    return found


def whole_lists(doc: Document, blocks: learn_blocks.PageBlocks, keep: np.ndarray, share: float) -> np.ndarray:
    """Per block, whether it lies in a list of prose (`prose_lists`) whose kept blocks hold at
    least `share` of the list's words: the steps of a how-to, a syllabus's readings, a review's
    pros and cons are read as one list, and the trees, which score its items one by one, keep some
    and drop others alike (most often on pages of kinds they saw few of). It runs before the rules
    that drop blocks, which still take out what does not belong (a thread's extras, teasers).
    Measured (docs/rules.md, `whole_lists`): wcxb-dev +0.0001 out of fold and +0.0005 held out, the
    other sets equal or higher; last in the table, or with `<dl>`s or link lists, a set fell, and
    without `_PROSE_LIST_PARTS` a forum's posts came back with their signatures."""
    lists = prose_lists(doc) if share > 0 and ("ul" in doc.tag or "ol" in doc.tag) else []
    return _kept_whole(doc, blocks, keep, share, lists)


def _kept_whole(
    doc: Document, blocks: learn_blocks.PageBlocks, keep: np.ndarray, share: float, containers: list[int]
) -> np.ndarray:
    """Per block, whether it lies in one of the `containers` whose kept blocks hold at least `share`
    of its blocks' words."""
    found = np.zeros(len(keep), dtype=bool)
    if not containers:
        return found
    words = blocks.own_words
    starts = doc.start[blocks.elements]
    for container in containers:
        inside = (starts > doc.start[container]) & (starts < doc.end[container])
        total = float(words[inside].sum())
        if total > 0 and float(words[inside & keep].sum()) >= share * total:
            found |= inside
    return found


def teaser_blocks(doc: Document, blocks: learn_blocks.PageBlocks) -> np.ndarray:
    """Per block, whether it is one of a list's teasers of other pages: its text holds a link and
    more (a headline and an excerpt; a link alone, as in a menu, is not read) and ends with an
    ellipsis (an excerpt cut short), and the page has at least `TEASER_MIN_BLOCKS` such blocks. An article's own paragraphs are not cut short; a "Latest
    news" ticker or a "More stories" list is (its headline linked, its first lines, then "...").
    The trees keep such items at p 0.8-0.95 when they sit beside the article: they read like its
    paragraphs. Only on a page that says it is an article: a listing's excerpts are its content."""
    t = doc.tokens
    teaser = np.zeros(len(blocks.elements), dtype=bool)
    density = blocks.features[:, learn_blocks.FEATURES.index("link_density")]
    linked = np.flatnonzero((density > 0) & (density < 1))  # a link and an excerpt beside it
    if len(linked) < TEASER_MIN_BLOCKS:
        return teaser
    # For speed, vectorised: the page's visible text tokens found once, and for each linked block
    # the last of them before its end (a binary search); that is the block's own last word when the
    # text holder owning it is the block (a nested block's text ends the element otherwise: not a
    # teaser).
    elements = blocks.elements[linked]
    visible = np.flatnonzero((t.kind == TEXT) & (t.chars > 0))
    if len(visible) == 0:
        return teaser
    final = visible[np.maximum(np.searchsorted(visible, doc.end[elements], side="right") - 1, 0)]
    owner = t.element[final]
    owned = (final >= doc.start[elements]) & (final <= doc.end[elements]) & (owner >= 0)
    owned &= blocks.holder[np.maximum(owner, 0)] == elements
    text = t.text
    cut = [text[token].rstrip().endswith(_ELLIPSES) for token in final[owned].tolist()]
    teaser[linked[owned]] = cut
    if teaser.sum() < TEASER_MIN_BLOCKS:
        teaser[:] = False
    return teaser


#: A drop-down list's elements: its options are a form's choices (sort orders, currencies, a
#: mobile copy of a menu), never what a reader reads. Readability.js removes `select` from the article
#: too (`_prepArticle`).
CHOICE_TAGS = frozenset(("select", "option", "optgroup", "datalist"))


def choice_blocks(doc: Document, elements: np.ndarray) -> np.ndarray:
    """Per block (`elements`), whether it is inside a drop-down list (`CHOICE_TAGS`: a `select` or
    `datalist` with its options) or is the `<label for=...>` of one (a shop's
    card writes "Size" or "Type" above each quick-buy drop-down; without its options it says
    nothing)."""
    lists = indices_of(doc.tag, "select") + indices_of(doc.tag, "datalist")
    # An option outside a select or datalist is not a drop-down's: pages without one are done.
    if not lists:
        return np.zeros(len(elements), dtype=bool)
    named = {ident for e in lists if (ident := doc.ident[e])}
    if named:
        lists += [e for e in indices_of(doc.tag, "label") if doc.elements[e].attributes.get("for") in named]
    return doc.within(sorted(lists), elements)


#: ARIA roles of a filter's options, beside `<input type=checkbox|radio>` (WAI-ARIA 1.2, §5.3).
FILTER_ROLES = frozenset(("checkbox", "radio", "switch", "menuitemcheckbox", "menuitemradio"))
#: A filter panel holds at least this many check boxes or radio buttons ...
FILTER_MIN_CONTROLS = 5
#: ... with at most this many characters of text per control (an option's label and its count) ...
FILTER_CHARS_PER_CONTROL = 20
#: ... and under this share of the page's text (a form that is the page is not a panel beside it).
FILTER_MAX_SHARE = 0.5
#: Elements a filter panel never is: the page itself, and a table's parts (a table of check boxes
#: is a form's or a data table's, csrankings.org's areas, not a shop's facets).
_NOT_FILTER_PANELS = _PAGE_TAGS | frozenset(("table", "thead", "tbody", "tfoot", "tr", "td", "th"))


def filter_controls(doc: Document) -> list[int]:
    """The elements that are a check box or radio button: `<input type=checkbox|radio>` or an
    element with one of `FILTER_ROLES`."""
    elements = doc.elements
    controls = [
        e
        for e in indices_of(doc.tag, "input")
        if (elements[e].attributes.get("type") or "").strip().lower() in ("checkbox", "radio")
    ]
    # For speed: the page's distinct role values first (most pages have none of these roles).
    roles = {role for role in set(doc.role) if role is not None and role.strip().lower() in FILTER_ROLES}
    if roles:
        controls += [e for e, role in enumerate(doc.role) if role in roles]
    return controls


def filter_panels(doc: Document, elements: np.ndarray) -> np.ndarray:
    """Per block (`elements`), whether it lies in a panel of filters: the faceted search of a shop's
    category page ("Brand", "Price", "Size", each a column of check boxes with a label and a
    count), where WCXB's guidelines call "filters and navigation taken as content" the type's
    common mistake. Found by structure, in any language: the smallest element holding
    `FILTER_MIN_CONTROLS` check boxes or radio buttons, widened to its ancestors while they hold no
    more than `FILTER_CHARS_PER_CONTROL` characters of text a control (the facets' headings and
    "Show more" links come in, the product grid beside them does not) and under `FILTER_MAX_SHARE`
    of the page's text; never a table or a part of one (`_NOT_FILTER_PANELS`)."""
    none = np.zeros(len(elements), dtype=bool)
    controls = filter_controls(doc)
    if len(controls) < FILTER_MIN_CONTROLS:
        return none
    parent = doc.parent
    is_control = np.zeros(len(doc.elements))
    is_control[controls] = 1
    # per element, the controls inside it (itself not counted)
    counts = doc.sum_descendants(is_control) - is_control
    chars = doc.subtree_chars
    page_chars = max(int(chars[doc.tag.index("body")]) if "body" in doc.tag else int(chars.max()), 1)

    def fits(e: int) -> bool:
        return (
            doc.tag[e] not in _NOT_FILTER_PANELS
            and chars[e] <= FILTER_CHARS_PER_CONTROL * counts[e]
            and chars[e] < FILTER_MAX_SHARE * page_chars
        )

    panels: set[int] = set()
    for control in controls:
        e = int(parent[control])
        while e >= 0 and counts[e] < FILTER_MIN_CONTROLS:
            e = int(parent[e])
        if e < 0 or not fits(e):
            continue
        while parent[e] >= 0 and fits(int(parent[e])):
            e = int(parent[e])
        panels.add(e)
    if not panels:
        return none
    return doc.within(sorted(panels), elements)


#: Tags of captions; an element whose class or id has "caption" in it is one too (WordPress's
#: `wp-caption-text`, `image-caption`, `caption` spans).
CAPTION_TAGS = frozenset(("figcaption", "caption"))


def repeated_captions(doc: Document, blocks: learn_blocks.PageBlocks, keep: np.ndarray) -> np.ndarray:
    """Per block, whether it is a kept caption (`CAPTION_TAGS`, or "caption" in its class or id)
    whose text (at least `REPEAT_MIN_WORDS` words) repeats an earlier kept caption's. Blogs caption
    every photo of a series with the same line (the event, the photographer); a reader needs it once.
    Paragraphs are left alone: Readability's test pages repeat them in their references."""
    tags = doc.tag
    named = (features_of(doc).class_words[blocks.elements] & CAPTION_BIT) > 0
    caption = keep & (
        named | np.array([tags[e] in CAPTION_TAGS for e in blocks.elements.tolist()], dtype=bool)
    )
    repeated = np.zeros(len(keep), dtype=bool)
    if caption.sum() < 2:
        return repeated
    seen: set[str] = set()
    for block, raw in learn_blocks.own_texts(doc, blocks, caption).items():
        words = raw.split()
        if len(words) >= REPEAT_MIN_WORDS:
            text = " ".join(words)
            repeated[block] = text in seen
            seen.add(text)
    return repeated


def wide_only_section(doc: Document, elements: np.ndarray) -> np.ndarray:
    """Per block (`elements`), whether it lies inside an element shown on wide screens only
    (`wide_only`): a page's main content is what it shows on a phone too, and what it hides there
    is its sidebars, rails and desktop ads (a responsive theme's widget column of categories, tags
    and archives inside the article's row). The trees keep such blocks at p 0.6-0.8 when they sit
    inside the heuristic's root, so they need `wide_only_threshold`."""
    return doc.within(np.flatnonzero(features_of(doc).class_words & WIDE_ONLY_BIT), elements)


#: Levels searched above a block (the block itself is level 0) for a gallery's container.
GALLERY_LEVELS = 8
_GALLERY_BIT = 1 << list(CLASS_WORDS).index("gallery")


def gallery_section(doc: Document, elements: np.ndarray) -> np.ndarray:
    """Per block (`elements`), whether it or one of its `GALLERY_LEVELS` nearest ancestors has a class
    or id naming a gallery, slideshow, slider, carousel or lightbox (`heuristic.CLASS_WORDS`, matched
    once per class/id combination by the heuristic's memo). A photo gallery beside an article repeats
    its captions for each view, with "Caption" and "Close" buttons; the trees keep them at p 0.5-0.8
    inside the article's container. As for reviews (`review_section`), the page's `html`, `body` and
    `main` and a container of at least `REVIEW_MAX_SHARE` of the page's text are not a gallery: themes
    flag whole pages and articles (`penci-enable-lightbox`, WordPress's post classes)."""
    galleries = _section_containers(doc, np.flatnonzero(features_of(doc).class_words & _GALLERY_BIT))
    if len(galleries) == 0:
        return np.zeros(len(elements), dtype=bool)
    named = np.zeros(len(doc.elements), dtype=bool)
    named[galleries] = True
    inside = named[elements]
    node = doc.parent[elements]
    for _ in range(GALLERY_LEVELS):
        up = np.maximum(node, 0)  # the root's parent is -1: read again, nothing new
        inside |= named[up] & (node >= 0)
        node = doc.parent[up]
    return inside


def _section_containers(doc: Document, named: np.ndarray) -> np.ndarray:
    """Of the elements `named` (indices, ascending) as a section (reviews, a gallery), those that can
    be one: not the page's own `html`, `body` or `main`, and holding less than `REVIEW_MAX_SHARE` of
    the page's text (themes and shops put such names on whole pages and articles)."""
    if len(named) == 0:
        return np.zeros(0, dtype=np.int64)
    chosen = np.array([e for e in named.tolist() if doc.tag[e] not in _PAGE_TAGS], dtype=np.int64)
    return chosen[doc.subtree_chars[chosen] < REVIEW_MAX_SHARE * selected_chars(doc, doc.body_mask)]


def review_section(doc: Document, elements: np.ndarray) -> np.ndarray:
    """Per block (`elements`), whether it lies inside a container of customer reviews: an element
    whose id or class says so (`REVIEW_CONTAINER`), not the page's own `html`, `body` or `main`, and
    holding less than `REVIEW_MAX_SHARE` of the page's text. Shops mark their review widgets this
    way (and so do the services that make them); the shopper's opinions are not the product's
    description, and references of product pages leave them out, as trafilatura's class-name rules
    do for ratings (Barbaresi 2021, §3: boilerplate removal by element attributes)."""
    # One search over every element's id and class in lower case, a line each: a search per
    # element, or one that ignores case or starts with a look-behind, costs ten times more.
    lines = [f"{ident or ''} {classes or ''}" for ident, classes in zip(doc.ident, doc.classes, strict=True)]
    joined = "\n".join(lines).lower()
    starts = np.cumsum([0] + [len(line) + 1 for line in lines[:-1]])
    found = [
        at
        for at in (match.start() for match in REVIEW_CONTAINER.finditer(joined))
        if not (at > 0 and (joined[at - 1] == "p" or (joined[at] == "b" and joined[at - 1].isalnum())))
    ]
    if not found:
        return np.zeros(len(elements), dtype=bool)
    named = np.unique(np.searchsorted(starts, found, side="right") - 1)
    return doc.within(_section_containers(doc, named), elements)


def thread_parts(doc: Document, features: np.ndarray) -> PostParts | None:
    """`thread.post_parts` of `doc` (whose blocks have `features`), read once per page into
    `RulePage.thread` for the three thread rules. The page's JSON-LD counts as saying it is a
    discussion only when it does not also say it is an article: an article may state its readers'
    comments (`Comment`) too."""
    discussion = says_discussion(features) and not says_article(features)
    # For speed: whether a class names a forum engine's markup, from the heuristic's class memo.
    class_markers = bool((features_of(doc).class_words & THREAD_MARKER_BIT).any())
    return post_parts(doc, discussion=discussion, class_markers=class_markers)


def thread_posts(doc: Document, blocks: learn_blocks.PageBlocks, parts: PostParts | None) -> np.ndarray:
    """Per block, whether it is a post of a thread in a known forum engine's markup
    (`thread.post_parts`): inside a post's body and not in what the thread view drops from it
    (signatures, reaction bars, edit notes), or the first block of its author's element (the name)
    or of its date's. WCXB's forum guidelines take "many users' posts in sequence" as the content,
    each with who wrote it and when; the trees, trained mostly on articles, drop short replies as
    comments. The engine's markup decides, not the words, so it holds in any language."""
    elements = blocks.elements
    if parts is None:
        return np.zeros(len(elements), dtype=bool)
    body = doc.within(list(parts.bodies), elements) & ~doc.within(list(parts.dropped), elements)
    return body | first_blocks(doc, blocks, parts.heads)


def first_blocks(doc: Document, blocks: learn_blocks.PageBlocks, containers: tuple[int, ...]) -> np.ndarray:
    """Per block, whether it shows the first text of one of the elements `containers`: of an
    author's card, the line with the name ("Ana", not "1,430 posts · Joined 2022" under it); of a
    name inside a line ("Post by Ana » 1 March"), that line."""
    first = np.zeros(len(blocks.elements), dtype=bool)
    t = doc.tokens
    visible = np.flatnonzero((t.kind == TEXT) & (t.chars > 0))
    if len(containers) == 0 or len(visible) == 0:
        return first
    heads = np.asarray(containers, dtype=np.int64)
    at = np.minimum(np.searchsorted(visible, doc.start[heads], side="left"), len(visible) - 1)
    token = visible[at]
    shown = (token <= doc.end[heads]) & (t.element[token] >= 0)
    holders = blocks.holder[t.element[token[shown]]]
    first[np.isin(blocks.elements, holders)] = True
    return first


def thread_extras(doc: Document, blocks: learn_blocks.PageBlocks, parts: PostParts | None) -> np.ndarray:
    """Per block, whether it lies inside a thread's post (`thread.post_parts`) but is
    not the post: the poster's badges, join date and post count, "Reply with quote" and share
    buttons, and the signature and reaction bars inside the body (what the thread view drops)."""
    elements = blocks.elements
    if parts is None:
        return np.zeros(len(elements), dtype=bool)
    return doc.within(list(parts.posts), elements) & ~thread_posts(doc, blocks, parts)


def thread_outside(doc: Document, blocks: learn_blocks.PageBlocks, parts: PostParts | None) -> np.ndarray:
    """Per block, whether it comes after a thread's first post (`thread.post_parts`)
    and lies in none of its posts: the "Similar threads" list, the reply box, the forum's footer.
    What comes before the first post (the thread's title) is left to the trees."""
    elements = blocks.elements
    if parts is None:
        return np.zeros(len(elements), dtype=bool)
    after = doc.start[elements] > doc.start[min(parts.posts)]
    return after & ~doc.within(list(parts.posts), elements)


#: A kept block of at least this many characters of its own text is a paragraph of prose
#: (characters, not words: Chinese or Japanese text has no spaces between its words).
PROSE_BLOCK_CHARS = 150
#: A page whose kept paragraphs of prose hold this many characters or more is read by its prose: a
#: category page with a written introduction is that introduction, not its grid (WCXB's references),
#: and an article is its story.
LIST_MAX_PROSE_CHARS = 600
#: A card holding this many links or more (the median over the cards) is a section of a menu or an
#: archive ("March (109)" and its days), not an item: an item links to its page and a few variants.
CARD_MAX_LINKS = 10


def prose_chars(blocks: learn_blocks.PageBlocks, keep: np.ndarray) -> int:
    """The characters of the kept blocks of `PROSE_BLOCK_CHARS` characters or more."""
    chars = np.expm1(blocks.features[:, learn_blocks.FEATURES.index("log_chars")])
    return int(chars[keep & (chars >= PROSE_BLOCK_CHARS)].sum())


def links_per_card(doc: Document, cards: list[int]) -> float:
    """The median number of links (`a` elements) inside each card."""
    anchors = np.array(indices_of(doc.tag, "a"), dtype=np.int64)
    starts = np.array(cards, dtype=np.int64)
    inside = np.searchsorted(anchors, doc.subtree_end[starts]) - np.searchsorted(anchors, starts)
    return float(np.median(inside)) if len(cards) else 0.0


def listing_cards(
    doc: Document, blocks: learn_blocks.PageBlocks, keep: np.ndarray, min_items: int
) -> np.ndarray:
    """Per block, whether it lies in a card of the page's list: the best group of repeated cards
    that `listing.item_cards` finds (siblings of one tag, each holding a link's text: the "data
    records" of Liu, Grossman and Zhai 2003), when they read as at least `min_items` distinct items,
    hold fewer than `CARD_MAX_LINKS` links each, and the blocks kept so far hold less than
    `LIST_MAX_PROSE_CHARS` characters of prose. A category page's or a content index's cards are its
    content (WCXB's collection and listing types: item titles, prices, excerpts), but each card is a
    short, linked block repeated many times, which the trees learned to call boilerplate. The prose
    test comes first: it is cheap, and on an article page it stops the rule before the cards are
    looked for."""
    none = np.zeros(len(blocks.elements), dtype=bool)
    if prose_chars(blocks, keep) >= LIST_MAX_PROSE_CHARS:
        return none
    cards, items = item_cards(doc, min_items)
    if items < min_items or links_per_card(doc, cards) >= CARD_MAX_LINKS:
        return none
    return doc.within(cards, blocks.elements)
