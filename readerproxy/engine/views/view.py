"""Which view the reader shows a page in, and why: `decide_view` -> `View(name, confidence, reason)`.

The typed views (a thread of posts, a listing of items, a product's card, a recipe's card) each
read a page better than the article view when they fit it, and much worse when they do not: a
product page taken for a collection became "9 items" of its cart and account links. So a typed
view is shown only on evidence: its confidence combines the page kind's probability (the model's,
`pagekind.PageKind`) with what the view itself found on the page, as their geometric mean, so that
neither a sure kind with poor evidence (a product page's chrome read as items) nor good-looking
evidence on a page of another kind is enough alone. Below `THRESHOLD` the page is shown as an
article.

The evidence, by the page's structure:

- thread: the share of posts with an author (two thirds of the weight) and with a date (one
  third), times a count factor that reaches 1 at `FULL_POSTS` posts;
- listing: the items are alike in structure by construction (`listing`: siblings of one tag,
  sharing their first class name) and each has its own link (distinct URLs, none an action:
  `listing.without_actions`); the evidence is the share of items carrying text of their own (an
  excerpt, a picture, a date, or a title of three words or more: not a menu's one-word links),
  times a count factor that reaches 1 at `FULL_ITEMS` items;
- product: how many of price, availability, rating, picture, description and brand the page
  states (4 of them are full evidence); without a price, a rating or an availability there is no
  card to show;
- recipe: the page's own Recipe structured data with ingredients or steps (declared, so no kind is
  asked: a recipe sits on an article page).

A listing or thread view shows its items' or posts' own text and the content around them, and the
extraction found what the page is about: so their confidence is multiplied by the share of the
extracted text's words the view shows (relative to the share the article view's HTML shows) and
by the share of the items' (posts') own words that are the extraction's (`coverage`, by bags of
words). A listing of a sidebar's links, or one whose cards' excerpts cut away what the extraction
kept, hides what was found and gives way to the article view. (On wcxb-dev, in sample: with the two shares as they are, the listing
view is kept on 53 of 89 listing pages and 52 of 87 collections, and the words on screen are
within 0.004 of the API text's word F1 on collections and forums; counting a share of 0.8 as
full kept 65 listings and put listing pages' shown text 0.043 below the API's.)

`around_elements` reads what the extraction kept outside the items or posts of a listing or
thread view, before the first and after the last (a shop category's introduction and buying
guide): the views never hide what was found. Its text is read for the decision; its HTML is
rendered only for the view shown (`Around.html`).

Pure: reads its arguments (and, for `around_elements`, the parsed `Document`); no network.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from selectolax.lexbor import LexborHTMLParser

from ..output import LinkRewriter, render_html, render_text
from ..parse.text import WORD

if TYPE_CHECKING:
    from ..kind.pagekind import PageKind
    from ..parse.document import Document
    from .facts import ProductFacts, RecipeFacts
    from .listing import ListItem
    from .thread import Post

#: The views, the article view first (the one shown when no other has the evidence).
VIEWS = ("article", "thread", "listing", "product", "recipe")
#: A typed view below this confidence gives way to the article view.
THRESHOLD = 0.5
#: Posts at which a thread's count stops adding evidence (2 posts: two thirds).
FULL_POSTS = 3
#: Items at which a listing's count stops adding evidence (3 items: 0.6).
FULL_ITEMS = 5
#: Product facts that are full evidence of a product page (of price, availability, rating,
#: picture, description, brand).
FULL_FACTS = 4
#: Page kinds whose probabilities speak for each typed view.
VIEW_KINDS = {
    "thread": ("forum",),
    "listing": ("listing", "collection"),
    "product": ("product",),
}


@dataclass(frozen=True, slots=True)
class View:
    """The view a page is shown in: `name` one of `VIEWS`, `confidence` in [0, 1], and `reason` a
    short English sentence a person can read ("forum page (0.97); 12 posts, all with authors")."""

    name: str
    confidence: float
    reason: str


@dataclass(frozen=True, slots=True)
class Around:
    """The extracted content around a listing's items or a thread's posts (`around_elements`):
    the plain text of what comes before the first and after the last (`text`, for the view's
    coverage of the extracted words), and their sanitised HTML, rendered when asked (`html()`:
    only the view shown needs it, and a page whose listing of a sidebar gives way to the article
    view would otherwise have its whole article rendered once more)."""

    text: str = ""
    render: Callable[[], tuple[str, str]] | None = field(default=None, repr=False, compare=False)

    def html(self) -> tuple[str, str]:
        """The content before the first item or post and after the last, as sanitised HTML."""
        return self.render() if self.render is not None else ("", "")


NOTHING_AROUND = Around()


@dataclass(frozen=True, slots=True)
class _Candidate:
    name: str
    confidence: float
    evidence: str  # what the view found, for the reason


def _kind_probability(kind: PageKind | None, view: str) -> float:
    """The probability the page-kind model gives the kinds that speak for `view`."""
    if kind is None or not kind.kind:
        return 0.0
    return sum(kind.probabilities.get(name, 0.0) for name in VIEW_KINDS.get(view, ()))


def _kind_phrase(kind: PageKind | None) -> str:
    """ "forum page (0.97)", or "page kind undecided"."""
    if kind is None or not kind.kind:
        return "page kind undecided"
    return f"{kind.kind} page ({kind.confidence:.2f})"


def _count(n: int, full: int) -> str:
    return "all" if n == full else ("none" if n == 0 else str(n))


def thread_evidence(posts: Sequence[Post]) -> tuple[float, str]:
    """How well posts read as a thread (0..1), and what they are, in words."""
    n = len(posts)
    if n == 0:
        return 0.0, "no posts"
    authored = sum(1 for post in posts if post.author)
    dated = sum(1 for post in posts if post.date or post.date_text)
    score = min(1.0, n / FULL_POSTS) * (2 / 3 * authored / n + 1 / 3 * dated / n)
    words = f"{n} posts, {_count(authored, n)} with authors"
    if dated < n:
        words += f", {_count(dated, n)} dated"
    return score, words


def listing_evidence(items: Sequence[ListItem]) -> tuple[float, str]:
    """How well items read as a listing (0..1), and what they are, in words."""
    n = len(items)
    if n == 0:
        return 0.0, "no items"
    bodied = sum(
        1 for item in items if item.excerpt or item.image or item.date or len(item.title.split()) >= 3
    )
    score = min(1.0, n / FULL_ITEMS) * bodied / n
    words = f"{n} items, each with its own link"
    if bodied < n:
        words += f", {_count(bodied, n)} with more than a short title"
    return score, words


def product_evidence(product: ProductFacts) -> tuple[float, str]:
    """How much a product page states about its product (0..1), and what, in words."""
    stated = [
        name
        for name, value in (
            ("price", product.price),
            ("availability", product.availability),
            ("rating", product.rating),
            ("picture", product.image),
            ("description", product.description),
            ("brand", product.brand),
        )
        if value
    ]
    if not (product.price or product.rating or product.availability):
        return 0.0, "no price, rating or availability"
    listed = ", ".join(stated[:-1]) + f" and {stated[-1]}" if len(stated) > 1 else stated[0]
    return min(1.0, len(stated) / FULL_FACTS), f"{listed} stated"


def recipe_evidence(recipe: RecipeFacts) -> tuple[float, str]:
    """How much of a recipe the page's structured data states (0..1), and what, in words."""
    steps = sum(len(section.steps) for section in recipe.sections)
    score = 0.5 * bool(recipe.ingredients) + 0.5 * bool(steps)
    return score, f"Recipe structured data, {len(recipe.ingredients)} ingredients and {steps} steps"


def fragment_text(fragment: str) -> str:
    """The words of an HTML fragment (the reader's sanitised HTML: no script or style in it)."""
    return LexborHTMLParser(fragment).text(separator=" ") if fragment else ""


def _bag(text: str) -> Counter[str]:
    return Counter(WORD.findall(text.casefold()))


def coverage(own: str, around: str, extracted: str) -> tuple[float, float]:
    """How much of the extracted text a view shows, by bags of words: the share of the extracted
    text's words found in the view (its items' or posts' own text `own` with the content around
    them `around`: recall), and the share of the view's own words that are the extracted text's
    (precision). (1.0, 1.0) when nothing was extracted."""
    return _coverage(own, around, _bag(extracted))


def _coverage(own: str, around: str, found: Counter[str]) -> tuple[float, float]:
    """`coverage`, given the extracted text's bag of words (`found`)."""
    total = sum(found.values())
    if total == 0:
        return 1.0, 1.0
    mine = _bag(own)
    shown = mine + _bag(around)
    recall = sum((shown & found).values()) / total
    precision = sum((mine & found).values()) / max(sum(mine.values()), 1)
    return recall, precision


def decide_view(
    kind: PageKind | None,
    items: Sequence[ListItem] | None = None,
    posts: Sequence[Post] | None = None,
    product: ProductFacts | None = None,
    recipe: RecipeFacts | None = None,
    *,
    text: str | None = None,
    around: Callable[[str], str] | None = None,
    article_text: str | None = None,
) -> View:
    """The view for a page of `kind` with what its readers found: the typed view of highest
    confidence at or above `THRESHOLD`, else the article view (module docstring).

    With the extracted `text`, a listing or thread view's confidence is also multiplied by how
    much of it the view shows, relative to what the article view would show of it (the text of
    the article's HTML, `article_text`: a grid inside a form is text the HTML leaves out), and
    by how much of the view's own words are of it (`coverage`; `around(view)` gives the plain
    text of the content the view shows around its items or posts): a listing that would hide
    most of what the extraction kept (a category's guide, a sidebar's links) gives way to the
    article view.
    """
    candidates: list[_Candidate] = []
    # the extracted text's words, and the share of them the article view shows: read once for
    # the thread and listing views, and only when there is one to weigh
    found = _bag(text) if text is not None and (posts or items) else None
    article_recall = (
        _coverage(article_text, "", found)[0] if found is not None and article_text is not None else None
    )

    def shown(name: str, own: str, words: str, precise: bool = True) -> tuple[float, str]:
        """The factor of how much of the extracted text the view shows, and its words. A thread's
        posts may hold more than the extraction kept (replies the extractor's thread rules do not
        know, read by structure): for it only the share shown counts (`precise=False`)."""
        if found is None:
            return 1.0, words
        recall, precision = _coverage(own, around(name) if around is not None else "", found)
        words = f"{words}; shows {recall:.2f} of the extracted words"
        if precision < 0.9:
            words += f", {precision:.2f} of its own are extracted"
        if article_recall is not None:
            recall /= max(article_recall, recall, 1e-9)
        return (recall * precision if precise else recall), words

    if posts:
        evidence, words = thread_evidence(posts)
        own = " ".join(f"{post.author} {post.date_text} {post.text}" for post in posts)
        factor, words = shown("thread", own, words, precise=False)
        p = _kind_probability(kind, "thread")
        candidates.append(_Candidate("thread", math.sqrt(p * evidence) * factor, words))
    if items:
        evidence, words = listing_evidence(items)
        factor, words = shown("listing", " ".join(f"{item.title} {item.excerpt}" for item in items), words)
        p = _kind_probability(kind, "listing")
        candidates.append(_Candidate("listing", math.sqrt(p * evidence) * factor, words))
    if product is not None:
        evidence, words = product_evidence(product)
        p = _kind_probability(kind, "product")
        candidates.append(_Candidate("product", math.sqrt(p * evidence), words))
    if recipe is not None:
        evidence, words = recipe_evidence(recipe)
        candidates.append(_Candidate("recipe", evidence, words))
    phrase = _kind_phrase(kind)
    best = max(candidates, key=lambda c: c.confidence, default=None)
    if best is not None and best.confidence >= THRESHOLD:
        return View(best.name, round(best.confidence, 4), f"{phrase}; {best.evidence}")
    if best is not None:
        reason = f"{phrase}; {best.evidence}: too little for a {best.name} view ({best.confidence:.2f})"
        return View("article", round(1.0 - best.confidence, 4), reason)
    missing = {
        "forum": "no thread of 2 posts found",
        "listing": "no list of 3 items found",
        "collection": "no list of 3 items found",
        "product": "no product facts found",
    }.get(kind.kind if kind is not None else "")
    return View("article", 1.0, f"{phrase}; {missing}" if missing else phrase)


def around_elements(
    doc: Document,
    selection: np.ndarray,
    elements: Sequence[int],
    *,
    rewrite_link: LinkRewriter | None = None,
    images: bool = True,
) -> Around:
    """The selected content outside `elements` (a listing's cards, a thread's posts) in two parts:
    what comes before the first of them (an introduction) and what comes after the last (a guide,
    a footnote), as plain text, and as sanitised HTML on demand (`Around.html`). Content between
    them is the items' own (a banner among the cards) and is left to the items. `NOTHING_AROUND`:
    no elements, or nothing selected outside them."""
    if not len(elements) or not selection.any():
        return NOTHING_AROUND
    inside = doc.mask_elements(list(elements))
    first = int(np.argmax(inside))
    last = len(inside) - 1 - int(np.argmax(inside[::-1]))
    outside = selection & ~inside
    before = outside.copy()
    before[first:] = False
    after = outside.copy()
    after[: last + 1] = False
    if not (before.any() or after.any()):
        return NOTHING_AROUND

    def render() -> tuple[str, str]:
        return (
            render_html(doc, before, rewrite_link=rewrite_link, images=images) if before.any() else "",
            render_html(doc, after, rewrite_link=rewrite_link, images=images) if after.any() else "",
        )

    return Around(render_text(doc, before | after), render)
