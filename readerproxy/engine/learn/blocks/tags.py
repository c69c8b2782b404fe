"""The page's tags as small integer codes, and the groups of tag names the block features read.

`TagCodes` numbers a page's distinct tag names once (`tag_codes`), so that every feature family
compares tags as integers, never as numpy object arrays. The groups: the own tags that get a one-hot
column (`OWN_TAGS`), the containers whose presence around a block is a feature (`CONTAINERS`), form
controls, headings and images; `_code_table` packs each tag's groups into one int64 per tag code, as
the C kernels read them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...elements import ElementFeatures, tag_ids
from ...parse.document import Document

#: Own tags that get a feature of their own (one-hot); any other tag leaves them all 0.
OWN_TAGS = (
    "p",
    "li",
    "h1",
    "h2",
    "h3",
    "h4 h5 h6",
    "td th",
    "div",
    "pre",
    "blockquote",
    "dd dt",
    "figcaption caption",
    "section article main",
    "button label option legend select textarea",
    "span a",
)
#: Containers whose presence around a block is a feature (one token-range mask each).
CONTAINERS = ("article", "main", "nav", "aside", "footer", "header", "form", "li", "table", "figure", "a")
_CONTAINER_INDEX = {name: index for index, name in enumerate(CONTAINERS)}
_OWN_TAG_GROUP = {name: index for index, group in enumerate(OWN_TAGS) for name in group.split()}

#: Form controls: a reply box or a search form around a block is chrome, not content.
CONTROL_TAGS = frozenset(("input", "button", "textarea", "select"))
HEADING_TAGS = frozenset(("h1", "h2", "h3", "h4", "h5", "h6"))

_IMAGE_TAGS = ("img", "picture", "svg")

#: The tag groups `_native.structure_columns` counts (bit g of a tag's group bits), in its order.
_COUNTED_GROUPS = (
    CONTROL_TAGS,
    HEADING_TAGS,
    frozenset(_IMAGE_TAGS),
    frozenset(("time",)),
    frozenset(("a",)),
)
_GROUP_BITS = {name: 1 << g for g, group in enumerate(_COUNTED_GROUPS) for name in group}  # disjoint groups

#: Per tag name, packed in one int64 as the C kernels read it: its container kind (`CONTAINERS`) + 1
#: in bits 0-7, its own-tag group (`OWN_TAGS`) + 1 in bits 8-15, its counted groups' bits from bit 16.
_TAG_INFO = {
    name: (_CONTAINER_INDEX.get(name, -1) + 1)
    | (_OWN_TAG_GROUP.get(name, -1) + 1) << 8
    | _GROUP_BITS.get(name, 0) << 16
    for name in {*_CONTAINER_INDEX, *_OWN_TAG_GROUP, *_GROUP_BITS}
}
assert len(CONTAINERS) < 255 and len(OWN_TAGS) < 255


@dataclass(frozen=True, slots=True)
class TagCodes:
    """The page's tags as small integer codes (its distinct tag names, numbered in order of
    appearance), computed once per page for all the block features that read tags."""

    names: list[str]
    ids: dict[str, int]
    tag_id: np.ndarray  # int64 per element
    # For speed: `starts` per group of tag names, kept (the structure, page-type and section
    # features ask for the same groups; `page_blocks` asks for all of them in one pass first).
    _starts: dict[frozenset[str], np.ndarray] = field(default_factory=dict, repr=False, compare=False)

    def count(self, name: str) -> int:
        """How many elements have this tag."""
        code = self.ids.get(name)
        return 0 if code is None else int(np.count_nonzero(self.tag_id == code))

    def starts(self, doc: Document, *groups: tuple[str, ...] | frozenset[str]) -> list[np.ndarray]:
        """Per group of tag names, the start tokens of its elements (sorted: elements are in
        document order)."""
        keys = [frozenset(group) for group in groups]
        start_of: np.ndarray | None = None
        for key in keys:
            if key not in self._starts:
                start_of = doc.start.astype(np.int64) if start_of is None else start_of
                member = np.zeros(len(self.names), dtype=bool)
                member[[self.ids[name] for name in key if name in self.ids]] = True
                self._starts[key] = start_of[member[self.tag_id]]
        return [self._starts[key] for key in keys]


def tag_codes(doc: Document, features: ElementFeatures | None = None) -> TagCodes:
    """The page's `TagCodes` (`heuristic.tag_ids`), taken from its element features when given."""
    names, tag_id = (features.tag_names, features.tag_id) if features is not None else tag_ids(doc.tag)
    return TagCodes(names, dict(zip(names, range(len(names)), strict=True)), tag_id)


def _code_table(codes: TagCodes) -> np.ndarray:
    """int64 per tag code: its `_TAG_INFO` (0 for a tag that is in no container, group or counted
    group). For speed, one flat list of ints (numpy reads it at a tenth of the cost of tuples)."""
    return np.array([_TAG_INFO.get(name, 0) for name in codes.names], dtype=np.int64)
