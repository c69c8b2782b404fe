"""Candidate blocks of a page and their features, all in numpy.

A block is a *text holder* of the DOM heuristic (`elements.TEXT_HOLDERS`: a block-level element,
credited with the text of the inline markup inside it) that owns visible text; its tokens are the
text tokens it owns. Every block gets one row of `FEATURES`, drawn from every seed algorithm and
from the page's structure:

- size: characters and words of the block's own text and of its subtree;
- link density of the own text and of the parent's and grandparent's subtrees (DANAg, Filter 3:
  text inside anchors does not count as content);
- tag/text ratio of the block's span (CETR, Weninger, Hsu, Han 2010, §3: text characters per tag);
- text density, words per 80-character wrapped line (Kohlschütter, Frankhauser, Nejdl 2010, §4.2);
- the DOM heuristic's score, its context (semantic tags, ARIA roles, class/id hints inherited),
  its own-tag weight, Readability.js's unlikely-candidate rule, whether the heuristic selects the
  block and whether it lies inside the heuristic's article root (Berg 2020, §5–6);
- the semantic containers around the block (article, main, nav, aside, footer, header, form, li,
  table, figure) and the block's own tag;
- depth, relative position in the page, punctuation and digit shares of the text;
- siblings: how many blocks share the parent, their mean size, how many share the block's tag;
- neighbours: the previous and next block's score, link density and selection, and the heuristic
  selection smoothed over five blocks;
- the page: its text size, link density, number of blocks and the share the heuristic selected.
- sections (`section_columns`): the text and headings since the nearest heading that opens a list
  of other pages ("Related articles", "More from ...") or the comments, and whether such a heading
  comes after the page's first h1.

The features are cheap: prefix sums over the token view, `np.bincount` per block and one pass of
numpy over the code points of the page's text. Choices made for speed (each gives the same numbers
as the direct way): tags are compared as small integer codes, never as numpy object arrays; "inside
a container" is counted for every container tag at once with two `np.searchsorted` over range ends
(`_containing`) rather than one token mask per tag; character classes come from one lookup table.
With the optional C kernels (`readerproxy._speedups`), `_containing`, `_character_counts`,
`_element_counts`, `repeated_items` and the same-tag sibling counts count in C (`_native.containing`,
`class_counts`, `element_counts`, `repeated_items`, `key_counts`) and the numpy code is their
reference. For speed, a page's fixed cost (a few hundred numpy calls on arrays of a few dozen
entries) is cut the same way: `_columns` and `structure_columns` (with `page_type_columns`' item
counts) are written straight into the feature matrix by `_native.block_columns`, `block_neighbours`
and `structure_columns` (`_place_columns`, `_place_structure`), and `context_features` comes from
`_native.context_columns`; the numpy functions stay as their references, numpy still takes every
logarithm, and the tests compare both on every dataset page, bit for bit.

One module per feature family: `columns` (the block's own features, the first rows), `structure`,
`page_type` and `sections`, and `context` (the second stage's features); `tags` holds the page's tag
codes and the tag groups the families read, `features` the matrix's layout (every name in row
order), and `page` the blocks and the matrix (`page_blocks`). This package re-exports their public
names.
"""

from __future__ import annotations

from .columns import PUNCTUATION, WRAP_WIDTH
from .context import CONTEXT_FEATURES, CONTEXT_RADIUS, context_features
from .features import FEATURES, PAGE_TYPE_FEATURES, SECTION_FEATURES, STRUCTURE_FEATURES, Column, signed_log
from .page import PageBlocks, own_texts, page_blocks
from .page_type import (
    LD_BODY_MIN_WORDS,
    LD_KINDS,
    LD_PIECE_MIN_WORDS,
    LD_TEXT_DEPTH,
    LD_TEXT_KEYS,
    json_ld_text,
    json_ld_types,
    ld_body_share,
    page_type_columns,
)
from .sections import COMMENT_HEADING, COMMENT_HEADING_WORDS, RELATED_HEADING, section_columns, section_titles
from .structure import REPEAT_LEVELS, RepeatedItems, repeated_items, structure_columns
from .tags import CONTAINERS, CONTROL_TAGS, HEADING_TAGS, OWN_TAGS, TagCodes, tag_codes

__all__ = [
    "COMMENT_HEADING",
    "COMMENT_HEADING_WORDS",
    "CONTAINERS",
    "CONTEXT_FEATURES",
    "CONTEXT_RADIUS",
    "CONTROL_TAGS",
    "FEATURES",
    "HEADING_TAGS",
    "LD_BODY_MIN_WORDS",
    "LD_KINDS",
    "LD_PIECE_MIN_WORDS",
    "LD_TEXT_DEPTH",
    "LD_TEXT_KEYS",
    "OWN_TAGS",
    "PAGE_TYPE_FEATURES",
    "PUNCTUATION",
    "RELATED_HEADING",
    "REPEAT_LEVELS",
    "SECTION_FEATURES",
    "STRUCTURE_FEATURES",
    "WRAP_WIDTH",
    "Column",
    "PageBlocks",
    "RepeatedItems",
    "TagCodes",
    "context_features",
    "json_ld_text",
    "json_ld_types",
    "ld_body_share",
    "own_texts",
    "page_blocks",
    "page_type_columns",
    "repeated_items",
    "section_columns",
    "section_titles",
    "signed_log",
    "structure_columns",
    "tag_codes",
]
