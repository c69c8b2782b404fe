"""`Article`: the main content of a page and what a reader view shows around it."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from .extraction import Extraction
from .metadata.metadata import Metadata
from .metadata.readingtime import reading_time
from .output import escape_markdown, html_to_markdown, markdown_url
from .views.facts import web_url
from .views.view import NOTHING_AROUND, Around, View, decide_view, fragment_text

if TYPE_CHECKING:
    from .kind.pagekind import PageKind
    from .views.facts import PageFacts, ProductFacts, RecipeFacts
    from .views.listing import ListItem
    from .views.thread import Post


_T = TypeVar("_T")

#: Fewer words than this kept from a page and it does not read well as a reader view.
MIN_READER_WORDS = 30
#: Page kinds whose article view shows the comments under it (`Article.comments`).
COMMENTED_KINDS = frozenset({"article", "documentation"})


@dataclass(slots=True)
class Article:
    """The main content of a page, with what the reader view shows around it."""

    text: str
    algorithm: str
    extraction: Extraction
    url: str | None = None
    timings: dict[str, float] = field(default_factory=dict)  # decode, parse, extract, render: ms
    #: Reads the metadata (`metadata.extract_metadata` over this page's Document, text and
    #: selection) on first use of `metadata` or `title`: a caller who wants only the text, as
    #: `trafilatura.extract` gives it by default, never pays its 0.3-0.5 ms; the time it
    #: took is then `timings["metadata"]`.
    decide_metadata: Callable[[], Metadata] | None = field(default=None, repr=False, compare=False)
    _metadata: Metadata | None = field(default=None, repr=False, compare=False)
    #: Renders the sanitised HTML (`output.render_html` of the selection) on first use of `html` or
    #: `markdown`, for the same reason: `trafilatura.extract` gives text by default.
    decide_html: Callable[[], str] | None = field(default=None, repr=False, compare=False)
    _html: str | None = field(default=None, repr=False, compare=False)
    #: Makes Readability.js's check (`readerable.is_probably_readerable` over this page's Document)
    #: on first use (`readability_check`): it is the answer only when no page kind is decided, so a
    #: library caller who never asks, and a page whose kind decides, never pay it.
    decide_readability: Callable[[], bool] | None = field(default=None, repr=False, compare=False)
    _readability: bool | None = field(default=None, repr=False, compare=False)
    #: Decides the page kind on first use (`pagekind.page_kind` over this page's Document and
    #: selection): a library caller who never asks never pays its ~1.7 ms.
    decide_kind: Callable[[], PageKind] | None = field(default=None, repr=False, compare=False)
    _kind: PageKind | None = field(default=None, repr=False, compare=False)
    #: Reads the product or recipe facts on first use (`facts.page_facts` over this page's Document
    #: and text, given the page kind): nothing is read unless asked, and only for a product page or
    #: a page with Recipe structured data.
    decide_facts: Callable[[str], PageFacts] | None = field(default=None, repr=False, compare=False)
    _facts: PageFacts | None = field(default=None, repr=False, compare=False)
    #: Reads the thread's posts on first use (`thread.thread_for` over this page's Document, told
    #: whether the page kind is forum): only forums and pages with a known forum engine's markup.
    decide_posts: Callable[[bool], tuple[Post, ...] | None] | None = field(
        default=None, repr=False, compare=False
    )
    _posts: tuple[Post, ...] | None = field(default=None, repr=False, compare=False)
    #: Reads the comments under the article on first use (`thread.comments_for`).
    decide_comments: Callable[[], tuple[Post, ...] | None] | None = field(
        default=None, repr=False, compare=False
    )
    _comments: tuple[Post, ...] | None = field(default=None, repr=False, compare=False)
    #: Reads a listing's items on first use (`listing.listing_items` over this page's Document,
    #: given the page kind): only pages of kind listing or collection.
    decide_items: Callable[[str], tuple[ListItem, ...] | None] | None = field(
        default=None, repr=False, compare=False
    )
    _items: tuple[ListItem, ...] | None = field(default=None, repr=False, compare=False)
    #: Reads the extracted content before and after a listing's items or a thread's posts on
    #: first use (`pipeline.view_surroundings`, given the view's name): the typed views hide
    #: nothing the extraction found.
    decide_around: Callable[[str], Around] | None = field(default=None, repr=False, compare=False)
    #: Each view's `Around` while the view is decided; then the HTML of the chosen view's alone.
    _around: dict[str, Around] = field(default_factory=dict, repr=False, compare=False)
    _around_html: tuple[str, str] = field(default=("", ""), repr=False, compare=False)
    _view: View | None = field(default=None, repr=False, compare=False)

    def _timed(self, decide: Callable[[], _T], timing: str) -> _T:
        """`decide()`, its time added to `timings[timing]` (ms), as `render` keeps its own."""
        began = time.perf_counter()
        made = decide()
        self.timings[timing] = round(self.timings.get(timing, 0.0) + (time.perf_counter() - began) * 1000, 3)
        return made

    @property
    def metadata(self) -> Metadata:
        """Title, byline, author, dates, site name, excerpt, image, language and direction, read
        once on first use (empty without a reader)."""
        if self._metadata is None:
            decide, self.decide_metadata = self.decide_metadata, None  # let the Document go
            self._metadata = self._timed(decide, "metadata") if decide is not None else Metadata()
        return self._metadata

    @property
    def title(self) -> str:
        return self.metadata.title

    @property
    def html(self) -> str:
        """The content as a sanitised HTML fragment with absolute URLs, rendered once on first use."""
        if self._html is None:
            decide, self.decide_html = self.decide_html, None  # let the Document go
            self._html = self._timed(decide, "html") if decide is not None else ""
        return self._html

    @property
    def kind(self) -> PageKind | None:
        """The page-kind decision, made once on first use (None without a decider)."""
        if self._kind is None and self.decide_kind is not None:
            self._kind = self.decide_kind()
            self.decide_kind = None  # let the Document go
        return self._kind

    @property
    def page_kind(self) -> str:
        """article, forum, product, listing, collection, documentation or service ("": undecided)."""
        kind = self.kind
        return kind.kind if kind is not None else ""

    @property
    def page_kind_confidence(self) -> float:
        """The probability of `page_kind`."""
        kind = self.kind
        return kind.confidence if kind is not None else 0.0

    @property
    def facts(self) -> PageFacts | None:
        """The product and recipe facts, read once on first use (None without a reader)."""
        if self._facts is None and self.decide_facts is not None:
            self._facts = self.decide_facts(self.page_kind)
            self.decide_facts = None  # let the Document go
        return self._facts

    @property
    def product(self) -> ProductFacts | None:
        """What a product page states about its product (None for other kinds)."""
        facts = self.facts
        return facts.product if facts is not None else None

    @property
    def recipe(self) -> RecipeFacts | None:
        """The recipe of a page with Recipe structured data, whatever its kind."""
        facts = self.facts
        return facts.recipe if facts is not None else None

    @property
    def posts(self) -> tuple[Post, ...] | None:
        """Every post of a thread in order, each with its author, date and text, read once on first
        use (None: not a thread, or fewer than two posts)."""
        if self.decide_posts is not None:
            decide, self.decide_posts = self.decide_posts, None  # let the Document go
            self._posts = decide(self.page_kind == "forum")
        return self._posts

    @property
    def items(self) -> tuple[ListItem, ...] | None:
        """The items of a listing or collection page, each with its title, link, excerpt, date and
        image, read once on first use (None: another kind, or fewer than three items)."""
        if self.decide_items is not None:
            decide, self.decide_items = self.decide_items, None  # let the Document go
            self._items = decide(self.page_kind)
        return self._items

    @property
    def comments(self) -> tuple[Post, ...] | None:
        """The comments under an article, each with its author, date and text, read once on first
        use: only where the page is shown as an article of kind article or documentation (a
        thread's replies are its posts; a product's reviews and a listing's cards are not
        comments). None: no comment section of `thread.MIN_POSTS` comments."""
        if self.decide_comments is not None:
            decide, self.decide_comments = self.decide_comments, None  # let the Document go
            if self.view.name == "article" and self.page_kind in COMMENTED_KINDS:
                self._comments = self._timed(decide, "comments")
        return self._comments

    @property
    def view(self) -> View:
        """The view the reader shows the page in (`view.decide_view`: a thread, listing, product
        or recipe view only on evidence, among it how much of the extracted text the view would
        show, else the article view), decided once on first use."""
        if self._view is None:
            self._view = decide_view(
                self.kind,
                self.items,
                self.posts,
                self.product,
                self.recipe,
                text=self.text,
                around=lambda name: self._surroundings(name).text,
                article_text=fragment_text(self.html) if self.items or self.posts else None,
            )
            # the HTML around the chosen view's items or posts only: the other views' is not shown
            self._around_html = self._timed(self._surroundings(self._view.name).html, "around")
            self._around = {}
            self.decide_around = None  # let the Document go
        return self._view

    def _surroundings(self, view: str) -> Around:
        """The content around `view`'s items or posts, read once per view asked."""
        if view not in self._around:
            decide = self.decide_around
            self._around[view] = self._timed(lambda: decide(view), "around") if decide else NOTHING_AROUND
        return self._around[view]

    @property
    def view_intro_html(self) -> str:
        """The extracted content above a listing's items or a thread's posts (sanitised HTML; ""
        for the other views)."""
        return self._view_around()[0]

    @property
    def view_outro_html(self) -> str:
        """The extracted content below a listing's items or a thread's posts (a buying guide)."""
        return self._view_around()[1]

    def _view_around(self) -> tuple[str, str]:
        """The HTML above and below the view's items or posts, rendered when the view is decided."""
        _ = self.view
        return self._around_html

    @property
    def readability_check(self) -> bool | None:
        """Readability.js's check, made once on first use: the answer when no page kind is decided
        (None without a checker)."""
        if self.decide_readability is not None:
            decide, self.decide_readability = self.decide_readability, None  # let the Document go
            self._readability = decide()
        return self._readability

    @property
    def readerable(self) -> bool | None:
        """Whether the page reads well as a reader view: the page kind's answer
        (`pagekind.readerable`: articles, documentation and forums yes; products, listings,
        collections and service pages no unless the kind is uncertain), or Readability's check
        when no kind is decided. Proxy mode replaces a page only when this is true."""
        kind = self.kind
        if kind is not None and kind.kind:
            # The kind model learned from real pages, none of them empty: a page with almost nothing
            # to read is no reader view whatever its kind.
            return kind.readerable and len(self.text.split()) >= MIN_READER_WORDS
        return self.readability_check

    @property
    def word_count(self) -> int:
        return reading_time(self.text).words

    @property
    def reading_minutes(self) -> int:
        return reading_time(self.text).minutes

    @property
    def markdown(self) -> str:
        return markdown_document(self.title, self.html)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready view used by the CLI, the JSON API and the server's result cache."""
        m = self.metadata
        length = reading_time(self.text)  # one pass over the text for both counts
        # The metadata's fields by name, in their order, as `dataclasses.asdict` gives them (less
        # the title): for speed, asdict copies every value recursively (0.1 ms a page); these are
        # all strings or None. `test_to_dict_keeps_every_metadata_field` pins the list.
        return {
            "url": self.url,
            "title": self.title,
            "byline": m.byline,
            "published": m.published,
            "site_name": m.site_name,
            "excerpt": m.excerpt,
            "image": m.image,
            "lang": m.lang,
            "dir": m.dir,
            "next_page_url": m.next_page_url,
            "date": m.date,
            "author": m.author,
            "readerable": self.readerable,
            "page_kind": self.page_kind,
            "page_kind_confidence": self.page_kind_confidence,
            "product": self.product.to_dict() if self.product is not None else None,
            "recipe": self.recipe.to_dict() if self.recipe is not None else None,
            "posts": [post.to_dict() for post in posts] if (posts := self.posts) else None,
            "comments": [post.to_dict() for post in comments] if (comments := self.comments) else None,
            "items": _items_json(self.items),
            "view": (view := self.view).name,
            "view_confidence": view.confidence,
            "view_reason": view.reason,
            "view_intro_html": self.view_intro_html,
            "view_outro_html": self.view_outro_html,
            "text": self.text,
            "html": self.html,
            "word_count": length.words,
            "reading_minutes": length.minutes,
            "algorithm": self.algorithm,
            "score": self.extraction.score,
            "parameters": self.extraction.params,
            "timings_ms": self.timings,
        }


def _items_json(items: tuple[ListItem, ...] | None) -> list[dict[str, Any]] | None:
    """A listing's items in the JSON: those linking an http(s) URL, as every URL the JSON carries
    (a listing's view also links mailto: and tel:)."""
    kept = [item.to_dict() for item in items or () if web_url(None, item.url)]
    return kept or None


def markdown_document(title: str | None, html: str, source: str | None = None) -> str:
    """The article as a Markdown document: the title as a heading, an optional source line, the body."""
    heading = f"# {escape_markdown(' '.join(title.split()))}\n\n" if title and title.strip() else ""
    link = markdown_url(source)
    origin = f"Source: [{escape_markdown(source or '')}]({link})\n\n" if link else ""
    return heading + origin + html_to_markdown(html)
