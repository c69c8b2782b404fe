"""The post-rules as one table (`POST_RULES`): each rule's name, the page conditions it runs on, its
parameter and off value, the blocks it finds and whether it drops or adds them; `run_post_rules`
runs exactly that table, in order."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from ...learn import blocks as learn_blocks
from ...parse.document import Document
from ...views.thread import PostParts
from ..auto import selected_chars
from .params import LearnedParams
from .rules import (
    after_related_heading,
    choice_blocks,
    comment_section,
    credit_lines,
    embedded_posts,
    filter_panels,
    gallery_section,
    link_runs,
    listing_cards,
    orphan_headings,
    other_articles,
    promo_lines,
    repeated_blocks,
    repeated_captions,
    review_section,
    says_product,
    teaser_blocks,
    template_labels,
    thread_extras,
    thread_outside,
    thread_posts,
    whole_lists,
    whole_tables,
    wide_only_section,
)

# --- The post-rules, as one table ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PageKinds:
    """What a page says it is (page-wide block features) and whether the heuristic's root holds a
    block: the conditions a post-rule may require (`PostRule.when`)."""

    article: bool  # JSON-LD Article types or `og:type` article (`says_article`)
    product: bool  # JSON-LD Product/Offer types or `og:type` product (`says_product`)
    discussion: bool  # JSON-LD DiscussionForumPosting and the like (`says_discussion`)
    root: bool  # the heuristic's article root holds at least one block
    agrees: bool = True  # the trees do not reject the heuristic's answer (`trees_agree`)

    def holds(self, when: tuple[str, ...]) -> bool:
        """Whether every condition of `when` holds ("article", or "not article" for its negation)."""
        for condition in when:
            negated = condition.startswith("not ")
            if bool(getattr(self, condition[4:] if negated else condition)) == negated:
                return False
        return True


#: The conditions a rule's `when` may name (each also as "not NAME").
PAGE_CONDITIONS = ("article", "product", "discussion", "root", "agrees")

#: The share of the heuristic's words that the trees must score at least `heuristic_threshold`
#: for the heuristic's answer to count as a prior (`heuristic_prior`'s condition "agrees"). Under
#: it the trees reject the heuristic's region as a whole, and the prior would keep scraps of it
#: (chosen held out: docs/rules.md, `heuristic_prior`).
PRIOR_AGREEMENT = 0.3


def trees_agree(blocks: learn_blocks.PageBlocks, probability: np.ndarray, at: float) -> bool:
    """Whether the blocks the heuristic keeps that score at least `at` hold `PRIOR_AGREEMENT` of
    the words of all the blocks it keeps (never, when the heuristic keeps no words)."""
    heuristic = blocks.features[:, learn_blocks.FEATURES.index("heuristic_selected")] > 0
    words = blocks.own_words
    scored = words[heuristic & (probability >= at)].sum()
    return bool(scored >= PRIOR_AGREEMENT * max(float(words[heuristic].sum()), 1.0))


@dataclass(frozen=True, slots=True)
class RulePage:
    """What the post-rules read of one page, computed once before the first rule."""

    doc: Document
    blocks: learn_blocks.PageBlocks
    probability: np.ndarray  # float64 per block: the trees' probability of "content"
    outside: np.ndarray  # bool per block: outside the heuristic's article root
    params: LearnedParams
    thread: PostParts | None  # the posts of a forum engine's thread (`thread_parts`), or None


#: Which blocks a rule is about: (the page, the blocks kept so far, the rule's parameter value) ->
#: bool per block.
BlockFinder = Callable[[RulePage, np.ndarray, Any], np.ndarray]


@dataclass(frozen=True, slots=True)
class PostRule:
    """One post-rule of `auto`: it runs on a page where every condition of `when` holds
    (`PageKinds.holds`) and its parameter (a field of `LearnedParams`) is not `off`, and then
    drops the blocks `blocks` finds from those kept, or adds them (`effect`)."""

    name: str
    when: tuple[str, ...]  # page conditions, all required: names of `PAGE_CONDITIONS`, or "not NAME"
    parameter: str  # the `LearnedParams` field that sets the rule (a threshold, a switch, a size)
    off: bool | int | float | None  # the parameter's value that turns the rule off
    effect: Literal["drop", "add"]
    blocks: BlockFinder
    does: str  # what it does, in one line

    def apply(self, page: RulePage, keep: np.ndarray) -> np.ndarray:
        """The blocks kept after this rule (its parameter read from the page's parameters)."""
        found = self.blocks(page, keep, getattr(page.params, self.parameter))
        return keep | found if self.effect == "add" else keep & ~found

    def active(self, params: LearnedParams) -> bool:
        """Whether the parameters leave the rule on."""
        return bool(getattr(params, self.parameter) != self.off)

    @property
    def off_text(self) -> str:
        """The off value as a parameter string (`auto:PARAMETER=OFF_TEXT`)."""
        if self.off is None:
            return "none"
        if isinstance(self.off, bool):
            return "true" if self.off else "false"
        return str(self.off)


def _column(page: RulePage, name: str) -> np.ndarray:
    return page.blocks.features[:, learn_blocks.FEATURES.index(name)]


def _under(page: RulePage, threshold: float) -> np.ndarray:
    """The blocks the trees score under `threshold` (the negation of "at least", as NaN compares)."""
    return ~(page.probability >= threshold)


def _short(page: RulePage, chars: int) -> np.ndarray:
    """Every block when the page has less text than `chars` (the least an article has), else none."""
    return np.full(len(page.probability), selected_chars(page.doc, page.doc.body_mask) < chars)


#: `auto`'s post-rules, run in this order after the trees' `threshold` (docs/rules.md: why each
#: rule, its parameter and its place, with the scores that chose them). A rule whose blocks need a
#: threshold finds the blocks of its kind that score under it.
POST_RULES: tuple[PostRule, ...] = (
    PostRule(
        name="heuristic_prior",
        when=("agrees",),
        parameter="heuristic_threshold",
        off=None,
        effect="add",
        blocks=lambda page, keep, threshold: (
            (_column(page, "heuristic_selected") > 0) & (page.probability >= threshold)
        ),
        does="blocks the heuristic keeps need only heuristic_threshold (its answer is a prior)",
    ),
    PostRule(
        name="whole_lists",
        when=(),
        parameter="whole_list_share",
        off=0.0,
        effect="add",
        blocks=lambda page, keep, share: whole_lists(page.doc, page.blocks, keep, share),
        does="a list of prose kept in part (whole_list_share of its words) is kept whole",
    ),
    PostRule(
        name="related_heading",
        when=("article",),
        parameter="related_prior",
        off=True,
        effect="drop",
        blocks=lambda page, keep, _: (
            after_related_heading(page.blocks.features) & _under(page, page.params.threshold)
        ),
        does="after a heading opening a list of other pages, the heuristic's prior no longer holds",
    ),
    PostRule(
        name="outside_root",
        when=("root", "not product", "not discussion"),
        parameter="outside_threshold",
        off=None,
        effect="drop",
        blocks=lambda page, keep, threshold: page.outside & _under(page, threshold),
        does="blocks outside the heuristic's article root need outside_threshold",
    ),
    PostRule(
        name="comment_section",
        when=("root", "article"),
        parameter="cut_comments",
        off=False,
        effect="drop",
        blocks=lambda page, keep, _: comment_section(page.blocks.features, page.outside),
        does="blocks outside the root after a comment section's heading are dropped",
    ),
    PostRule(
        name="embedded_posts",
        when=("root",),
        parameter="keep_embeds",
        off=False,
        effect="add",
        blocks=lambda page, keep, _: ~page.outside & embedded_posts(page.doc, page.blocks.elements),
        does="social posts quoted inside the root are kept",
    ),
    PostRule(
        name="teasers",
        when=("article",),
        parameter="cut_teasers",
        off=False,
        effect="drop",
        blocks=lambda page, keep, _: teaser_blocks(page.doc, page.blocks),
        does="three or more linked excerpts cut short with an ellipsis are dropped",
    ),
    PostRule(
        name="other_articles",
        when=("article", "not discussion"),
        parameter="cut_other_articles",
        off=False,
        effect="drop",
        blocks=lambda page, keep, _: other_articles(page.doc, page.blocks, keep),
        does="<article>s keeping under half the words of the main one are dropped",
    ),
    PostRule(
        name="gallery",
        when=("article",),
        parameter="gallery_threshold",
        off=None,
        effect="drop",
        blocks=lambda page, keep, threshold: (
            gallery_section(page.doc, page.blocks.elements) & _under(page, threshold)
        ),
        does="blocks in a photo gallery need gallery_threshold",
    ),
    PostRule(
        name="wide_only",
        when=(),
        parameter="wide_only_threshold",
        off=None,
        effect="drop",
        blocks=lambda page, keep, threshold: (
            wide_only_section(page.doc, page.blocks.elements) & _under(page, threshold)
        ),
        does="blocks shown on wide screens only need wide_only_threshold",
    ),
    PostRule(
        name="caption_repeats",
        when=(),
        parameter="cut_caption_repeats",
        off=False,
        effect="drop",
        blocks=lambda page, keep, _: repeated_captions(page.doc, page.blocks, keep),
        does="a kept caption repeating an earlier kept caption is dropped",
    ),
    PostRule(
        name="filters",
        when=(),
        parameter="cut_filters",
        off=False,
        effect="drop",
        blocks=lambda page, keep, _: filter_panels(page.doc, page.blocks.elements),
        does="the panels of check boxes that filter a list (a shop's facets) are dropped",
    ),
    PostRule(
        name="reviews",
        when=("product", "not article"),
        parameter="cut_reviews",
        off=False,
        effect="drop",
        blocks=lambda page, keep, _: review_section(page.doc, page.blocks.elements),
        does="blocks inside a container of customer reviews are dropped",
    ),
    PostRule(
        name="repeats",
        when=("not article",),
        parameter="cut_repeats",
        off=False,
        effect="drop",
        blocks=lambda page, keep, _: repeated_blocks(
            page.doc, page.blocks, keep, sections=not says_product(page.blocks.features)
        ),
        does="a copied section (on a product page, any kept block repeating an earlier one) is dropped",
    ),
    PostRule(
        name="listing_items",
        when=("not article", "not discussion"),
        parameter="list_min_items",
        off=0,
        effect="add",
        blocks=lambda page, keep, min_items: listing_cards(page.doc, page.blocks, keep, min_items),
        does="on a page that is a list, the text of its repeated cards is kept",
    ),
    PostRule(
        name="choices",
        when=(),
        parameter="cut_choices",
        off=False,
        effect="drop",
        blocks=lambda page, keep, _: choice_blocks(page.doc, page.blocks.elements),
        does="the options of drop-down lists, and their labels, are dropped (after the cards are added)",
    ),
    PostRule(
        name="labels",
        when=("not article",),
        parameter="cut_labels",
        off=False,
        effect="drop",
        blocks=lambda page, keep, _: template_labels(page.doc, page.blocks, keep),
        does="the labels a template writes into every card (Compare, Add, Quick view) are dropped",
    ),
    PostRule(
        name="thread_extras",
        when=(),
        parameter="cut_thread_extras",
        off=False,
        effect="drop",
        blocks=lambda page, keep, _: thread_extras(page.doc, page.blocks, page.thread),
        does="on a forum engine's thread, what lies in a post but is not its body, author or date is dropped",
    ),
    PostRule(
        name="thread_outside",
        when=(),
        parameter="cut_thread_outside",
        off=False,
        effect="drop",
        blocks=lambda page, keep, _: thread_outside(page.doc, page.blocks, page.thread),
        does="on a forum engine's thread, what follows the first post outside every post is dropped",
    ),
    PostRule(
        name="thread_posts",
        when=(),
        parameter="keep_thread_posts",
        off=False,
        effect="add",
        blocks=lambda page, keep, _: thread_posts(page.doc, page.blocks, page.thread),
        does="on a forum engine's thread, every post's body, author and date are kept",
    ),
    PostRule(
        name="link_runs",
        when=("article",),
        parameter="link_run_blocks",
        off=0,
        effect="drop",
        blocks=lambda page, keep, least: link_runs(page.blocks, keep, least),
        does="on an article, runs of three or more short link-only blocks (lists of other stories) are dropped",
    ),
    PostRule(
        name="whole_tables",
        when=(),
        parameter="whole_table_share",
        off=0.0,
        effect="add",
        blocks=lambda page, keep, share: whole_tables(page.doc, page.blocks, keep, share),
        does="a data table kept in part (whole_table_share of its words) is kept whole",
    ),
    PostRule(
        name="orphan_headings",
        when=(),
        parameter="cut_orphan_headings",
        off=False,
        effect="drop",
        blocks=lambda page, keep, _: orphan_headings(page.doc, page.blocks, keep),
        does="a heading whose section keeps nothing after it (what it introduced was dropped) is dropped",
    ),
    PostRule(
        name="credits",
        when=(),
        parameter="cut_credits",
        off=False,
        effect="drop",
        blocks=lambda page, keep, _: credit_lines(page.doc, page.blocks, keep),
        does="a short block whose class or id (or its parent's) names a photo credit or copyright is dropped",
    ),
    PostRule(
        name="promos",
        when=(),
        parameter="cut_promos",
        off=False,
        effect="drop",
        blocks=lambda page, keep, _: promo_lines(page.doc, page.blocks, keep),
        does="a short block whose class or id (or its parent's) names a related, teaser or promotion box is dropped",
    ),
    PostRule(
        name="short_page",
        when=(),
        parameter="short_page_chars",
        off=0,
        effect="add",
        blocks=lambda page, keep, chars: _short(page, chars),
        does="a page with less text than short_page_chars is kept whole",
    ),
)


def post_rule(name: str) -> PostRule:
    """The rule of `POST_RULES` named `name`; ValueError naming the valid ones."""
    for rule in POST_RULES:
        if rule.name == name:
            return rule
    raise ValueError(f"unknown post-rule {name!r}; valid: {', '.join(rule.name for rule in POST_RULES)}")


def run_post_rules(page: RulePage, kinds: PageKinds, keep: np.ndarray) -> np.ndarray:
    """The blocks kept after every rule of `POST_RULES` that holds on the page, in order."""
    for rule in POST_RULES:
        if rule.active(page.params) and kinds.holds(rule.when):
            keep = rule.apply(page, keep)
    return keep
