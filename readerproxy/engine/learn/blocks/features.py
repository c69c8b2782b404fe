"""The feature matrix's layout: every feature's name in row order, and the helpers the families share.

`FEATURES` names the first stage's columns: the block's own features (`columns`), then
`STRUCTURE_FEATURES` (`structure`), `PAGE_TYPE_FEATURES` (`page_type`) and `SECTION_FEATURES`
(`sections`); `_ROW` gives each name's row in `page_blocks`' feature-major matrix. The shipped model
records a hash of these names (`model.code_feature_hash`). The helpers: `signed_log`, a ratio that is
0 where the denominator is, and the heuristic's article root.
"""

from __future__ import annotations

import numpy as np

from ...extraction import Extraction
from .tags import CONTAINERS, OWN_TAGS

_TAG_COLUMNS = tuple(f"tag_{group.replace(' ', '_')}" for group in OWN_TAGS)
_IN_COLUMNS = tuple(f"in_{name}" for name in CONTAINERS)

#: Structure features (`structure_columns`), appended after the original ones.
STRUCTURE_FEATURES: tuple[str, ...] = (
    "log_repeat",
    "repeat_level",
    "repeat_item_log_chars",
    "repeat_item_link_density",
    "repeat_group_chars_share",
    "repeat_item_index",
    "log_controls_grandparent",
    "log_controls_ancestor4",
    "log_headings_grandparent",
    "log_images_grandparent",
    "log_time_grandparent",
    "position_from_h1",
    "title_overlap",
    "depth_below_root",
)
#: Page-type features (`page_type_columns`), appended after the structure features.
PAGE_TYPE_FEATURES: tuple[str, ...] = (
    "ld_product",
    "ld_article",
    "ld_discussion",
    "ld_list",
    "og_article",
    "og_product",
    "page_log_h1",
    "page_log_forms",
    "page_log_controls",
    "page_log_times",
    "page_repeat_share",
    "after_comment_heading",
    "comment_heading_position",
    "item_log_headings",
    "item_log_images",
    "item_log_times",
    "item_log_controls",
    "item_log_links",
    "ld_body_log_chars",
    "ld_body_share",
)
#: Section features (`section_columns`), appended after the page-type features: where the block
#: stands after the nearest heading that opens a list of other pages ("Related articles", "More
#: from ...", "Most popular", "Customers also viewed") or the readers' comments.
SECTION_FEATURES: tuple[str, ...] = (
    "after_related_heading",
    "log_chars_since_related",
    "log_chars_since_comment",
    "log_headings_since_related",
)

FEATURES: tuple[str, ...] = (
    "log_chars",
    "log_words",
    "link_density",
    "log_subtree_chars",
    "tag_ratio",
    "text_density",
    "heuristic_score",
    "heuristic_context",
    "heuristic_own_tag",
    "unlikely",
    "heuristic_selected",
    "in_heuristic_root",
    "depth",
    "position",
    "punctuation_share",
    "digit_share",
    "upper_share",
    "chars_share",
    *_TAG_COLUMNS,
    *_IN_COLUMNS,
    "parent_link_density",
    "grandparent_link_density",
    "parent_chars_share",
    "grandparent_chars_share",
    "log_parent_blocks",
    "parent_mean_log_chars",
    "log_same_tag_siblings",
    "prev_score",
    "next_score",
    "prev_link_density",
    "next_link_density",
    "prev_selected",
    "next_selected",
    "selected_smoothed",
    "log_prev_chars",
    "log_next_chars",
    "page_log_chars",
    "page_link_density",
    "page_log_blocks",
    "page_selected_share",
    "root_chars_share",
    "position_in_root",
    *STRUCTURE_FEATURES,
    *PAGE_TYPE_FEATURES,
    *SECTION_FEATURES,
)

#: A feature column: one value per block, or one number for every block of the page.
Column = np.ndarray | float

#: Row of each feature in `page_blocks`' feature-major matrix.
_ROW = {name: k for k, name in enumerate(FEATURES)}


def signed_log(values: np.ndarray) -> np.ndarray:
    """sign(x)·log1p(|x|): heuristic scores span -4000..4000, the trees need only their order."""
    return np.sign(values) * np.log1p(np.abs(values))


def _article_root(heuristic: Extraction) -> int:
    """The element the heuristic took for the article's root (its `article_element` signal), or -1."""
    roots = heuristic.signals.get("article_element")
    return int(roots[0]) if roots is not None and len(roots) else -1


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    return np.divide(
        numerator, denominator, out=np.zeros(np.shape(numerator), dtype=np.float64), where=denominator > 0
    )
