"""`auto`'s parameters: the threshold, the model, and each post-rule's parameter with its default
and its "off" value (validated where they are made, as every extractor's are)."""

from __future__ import annotations

from dataclasses import dataclass

from ...convert import check_range
from ...learn import model as learn_model
from ..auto import MIN_CHARS, MIN_SHARE

#: Consecutive blocks, each a short link and little else, that make a list of links to other pages.
LINK_RUN_BLOCKS = 3
#: A block of such a list: this share of its text at least is link text ...
LINK_RUN_DENSITY = 0.75
#: ... and it has at most this many characters (a headline, not a paragraph).
LINK_RUN_CHARS = 150
#: The lists are dropped only when they hold at most this share of the kept words: on a page that
#: is mostly lists of links (Wikipedia's "List of ..." pages, a recipe index) they are the content.
LINK_RUN_SHARE = 0.25
#: A data table (`data_tables`) whose kept blocks hold at least this share of its text is kept whole
#: (`whole_tables`; 0: off).
WHOLE_TABLE_SHARE = 0.2
#: Rows a table needs to be a data table (a header row and two of data).
DATA_TABLE_ROWS = 3
#: A list (`whole_lists`) whose kept blocks hold at least this share of its words is kept whole
#: (0: off).
WHOLE_LIST_SHARE = 0.3
#: Items a list needs for `whole_lists`, and the share of its text in links it must stay under (a
#: menu, a list of other pages, is links).
WHOLE_LIST_ITEMS = 3
WHOLE_LIST_LINK_DENSITY = 0.5
#: Elements a list of prose never holds: a menu's, or those of a list of posts or cards, each item
#: a box of its own parts (a header, an author's box, a signature, a form, a picture).
_PROSE_LIST_PARTS = frozenset(
    "nav div section article aside header footer form table figure img picture button input".split()
)


@dataclass(frozen=True, slots=True)
class LearnedParams:
    """Ranges: threshold and heuristic_threshold in [0, 1]; min_chars and short_page_chars in [0, 10_000_000]; link_run_blocks in [0, 10_000]; min_share, whole_list_share and whole_table_share in [0, 1]; model is a
    path to a `.npz` written by `readerproxy train` ("" = the weights shipped with the package)."""

    threshold: float = 0.5  # probability of "content" at which a block is kept
    heuristic_threshold: float | None = 0.3  # blocks the heuristic keeps need only this (None: threshold)
    outside_threshold: float | None = 0.7  # blocks outside the heuristic's article root need this
    cut_comments: bool = True  # on an article, drop what follows a comment heading outside the root
    cut_reviews: bool = True  # on a product page, drop the customer reviews' containers
    cut_repeats: bool = True  # off an article, drop a copy of kept blocks (on a product page, any repeat)
    cut_labels: bool = True  # off an article, drop the labels a template writes into every card
    gallery_threshold: float | None = 0.8  # on an article, blocks in a gallery need this (None: off)
    wide_only_threshold: float | None = 0.9  # blocks shown on wide screens only need this (None: off)
    cut_caption_repeats: bool = True  # drop a caption that repeats an earlier kept caption
    cut_choices: bool = True  # drop the options of drop-down lists (`CHOICE_TAGS`) and their labels
    cut_filters: bool = True  # drop the panels of check boxes that filter a list (`filter_panels`)
    cut_teasers: bool = True  # on an article, drop linked excerpts cut short with an ellipsis
    cut_other_articles: bool = True  # on an article, drop the small <article>s beside the main one
    keep_embeds: bool = True  # keep social posts quoted inside the heuristic's article root
    related_prior: bool = False  # on an article, the heuristic's prior holds after a related heading too
    list_min_items: int = 6  # on a list page, its cards' text is kept when there are this many (0: off)
    keep_thread_posts: bool = True  # on a forum engine's thread, keep every post's body, author and date
    cut_thread_extras: bool = True  # on such a thread, drop the rest of each post (badges, signatures)
    cut_thread_outside: bool = True  # on such a thread, drop what follows the first post outside every post
    cut_orphan_headings: bool = True  # drop a heading whose section keeps nothing after it
    cut_credits: bool = True  # drop a short block whose class or id (or its parent's) names a credit
    cut_promos: bool = True  # drop a short block whose class or id (or its parent's) names a teaser box
    short_page_chars: int = MIN_CHARS  # a page with less text than this is kept whole
    link_run_blocks: int = (
        LINK_RUN_BLOCKS  # on an article, runs of this many short links are dropped (0: off)
    )
    whole_list_share: float = WHOLE_LIST_SHARE  # a list of prose kept this much is kept whole (0: off)
    whole_table_share: float = WHOLE_TABLE_SHARE  # a data table kept this much is kept whole (0: off)
    model: str = ""
    min_chars: int = MIN_CHARS
    min_share: float = MIN_SHARE

    def __post_init__(self) -> None:
        check_range("threshold", self.threshold, 0, 1)
        if self.heuristic_threshold is not None:
            check_range("heuristic_threshold", self.heuristic_threshold, 0, 1)
        if self.outside_threshold is not None:
            check_range("outside_threshold", self.outside_threshold, 0, 1)
        if self.gallery_threshold is not None:
            check_range("gallery_threshold", self.gallery_threshold, 0, 1)
        if self.wide_only_threshold is not None:
            check_range("wide_only_threshold", self.wide_only_threshold, 0, 1)
        check_range("list_min_items", self.list_min_items, 0, 10_000)
        check_range("min_chars", self.min_chars, 0, 10_000_000)
        check_range("short_page_chars", self.short_page_chars, 0, 10_000_000)
        check_range("link_run_blocks", self.link_run_blocks, 0, 10_000)
        check_range("min_share", self.min_share, 0, 1)
        check_range("whole_list_share", self.whole_list_share, 0, 1)
        check_range("whole_table_share", self.whole_table_share, 0, 1)
        learn_model.load_model(self.model)  # ValueError naming the file if it cannot be used
