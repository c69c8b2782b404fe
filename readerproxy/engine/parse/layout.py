"""What a browser saw of a page, as plain numpy arrays: the layout snapshot and its alignment.

The visually based solution of Berg 2020 (§5.2, §6.1) reads each element's position, size, text
colour and background from a rendered page. `browser.py` renders the page in Chromium, numbers every
element of the rendered DOM with a `data-rp` attribute, and reads one JSON array of boxes, colours,
visibility and font sizes back (`LayoutSnapshot`, indexed by that number). The rendered DOM is then
serialised and parsed into the usual `Document`; `align` maps the snapshot onto the Document's
elements through the `data-rp` attribute each element carries (`Layout`, indexed like
`Document.elements`). Both are frozen dataclasses of numpy arrays: picklable, so extraction still
runs in the worker processes, and free of browser objects, so the extractors stay pure functions.

Contrast follows WCAG 2.0 (§1.4.3, "contrast ratio" and "relative luminance"), which Berg 2020 (§6.1)
cites for its contrast feature.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from .document import Document

#: The attribute that numbers the rendered DOM's elements (set in the browser, read after the parse).
MARK = "data-rp"
#: Fields of one element's row in the browser's JSON array, in order (see browser.SNAPSHOT_SCRIPT).
ROW_FIELDS = ("x", "y", "w", "h", "visible", "clipped", "r", "g", "b", "a", "br", "bg", "bb", "font_size")


@dataclass(frozen=True, slots=True)
class LayoutSnapshot:
    """Rows of the rendered DOM's elements by their `data-rp` number, and the page's size.

    `color` is the computed text colour (RGBA, 0–255 with alpha 0–1), `background` the background
    behind the element resolved up the tree (opaque RGB: translucent layers composited over their
    ancestors', white at the root), `visible` false for display:none (self or ancestor), any
    visibility but `visible`, and an effective opacity of 0; `clipped` true when the element
    clips its overflow (so a zero-size box hides what is inside it).
    """

    box: np.ndarray  # float32 (n, 4): x, y, width, height in CSS px, relative to the page
    visible: np.ndarray  # bool (n,)
    clipped: np.ndarray  # bool (n,)
    color: np.ndarray  # float32 (n, 4): r, g, b, alpha
    background: np.ndarray  # float32 (n, 3): r, g, b
    font_size: np.ndarray  # float32 (n,): px
    page_width: float
    page_height: float
    viewport_width: float

    @classmethod
    def from_rows(
        cls,
        rows: Sequence[float] | Sequence[Sequence[float]],
        page_width: float,
        page_height: float,
        viewport_width: float,
    ) -> LayoutSnapshot:
        """From the browser's rows (`ROW_FIELDS` per row, as rows or one flat array, as the snapshot
        script returns them); ValueError when they do not make whole rows."""
        table = np.asarray(rows, dtype=np.float64).reshape(-1, len(ROW_FIELDS)) if rows else _empty()
        return cls(
            box=table[:, 0:4].astype(np.float32),
            visible=table[:, 4] > 0,
            clipped=table[:, 5] > 0,
            color=table[:, 6:10].astype(np.float32),
            background=table[:, 10:13].astype(np.float32),
            font_size=table[:, 13].astype(np.float32),
            page_width=float(page_width),
            page_height=float(page_height),
            viewport_width=float(viewport_width),
        )

    def __len__(self) -> int:
        return len(self.visible)


def _empty() -> np.ndarray:
    return np.zeros((0, len(ROW_FIELDS)), dtype=np.float64)


@dataclass(frozen=True, slots=True)
class Layout:
    """The snapshot aligned with a Document: one entry per `Document.elements` entry.

    `known` is false for elements the browser did not report (none in a Document built from the
    rendered DOM, but a caller may align any Document); their boxes are NaN and they count as
    visible, so a missing row never removes text.
    """

    known: np.ndarray  # bool (n,)
    box: np.ndarray  # float32 (n, 4)
    visible: np.ndarray  # bool (n,)
    clipped: np.ndarray  # bool (n,)
    color: np.ndarray  # float32 (n, 4)
    background: np.ndarray  # float32 (n, 3)
    font_size: np.ndarray  # float32 (n,)
    page_width: float
    page_height: float
    viewport_width: float

    @property
    def contrast(self) -> np.ndarray:
        """WCAG 2.0 contrast ratio (1–21) of each element's text over its background (NaN: unknown)."""
        return contrast_ratio(self.color, self.background)

    def center_x(self) -> np.ndarray:
        return self.box[:, 0] + self.box[:, 2] / 2.0


def align(snapshot: LayoutSnapshot, doc: Document) -> Layout:
    """The snapshot's rows for the Document's elements, matched by their `data-rp` number."""
    n = len(doc.elements)
    index = np.full(n, -1, dtype=np.int64)
    for i, node in enumerate(doc.elements):
        value = node.attributes.get(MARK)
        if value is not None and value.isdigit():
            row = int(value)
            if row < len(snapshot):
                index[i] = row
    known = index >= 0
    rows = np.where(known, index, 0)

    def take(values: np.ndarray, fill: Any) -> np.ndarray:
        if len(values) == 0:
            shape = (n, *values.shape[1:])
            return np.full(shape, fill, dtype=values.dtype)
        out = values[rows].copy()
        out[~known] = fill
        return out

    return Layout(
        known=known,
        box=take(snapshot.box, np.nan),
        visible=take(snapshot.visible, True),
        clipped=take(snapshot.clipped, False),
        color=take(snapshot.color, np.nan),
        background=take(snapshot.background, np.nan),
        font_size=take(snapshot.font_size, np.nan),
        page_width=snapshot.page_width,
        page_height=snapshot.page_height,
        viewport_width=snapshot.viewport_width,
    )


def relative_luminance(rgb: np.ndarray) -> np.ndarray:
    """WCAG 2.0 relative luminance of sRGB colours (0–255 per channel), last axis r, g, b."""
    channel = np.asarray(rgb, dtype=np.float64) / 255.0
    linear = np.where(channel <= 0.03928, channel / 12.92, ((channel + 0.055) / 1.055) ** 2.4)
    return 0.2126 * linear[..., 0] + 0.7152 * linear[..., 1] + 0.0722 * linear[..., 2]


def contrast_ratio(color: np.ndarray, background: np.ndarray) -> np.ndarray:
    """WCAG 2.0 contrast ratio (L1 + 0.05) / (L2 + 0.05) of text over background.

    A translucent text colour (alpha < 1) is first composited over the background, as the browser
    paints it.
    """
    color = np.asarray(color, dtype=np.float64)
    background = np.asarray(background, dtype=np.float64)
    alpha = np.clip(color[..., 3:4], 0.0, 1.0)
    painted = alpha * color[..., :3] + (1.0 - alpha) * background
    lum_text = relative_luminance(painted)
    lum_back = relative_luminance(background)
    lighter = np.maximum(lum_text, lum_back)
    darker = np.minimum(lum_text, lum_back)
    return (lighter + 0.05) / (darker + 0.05)
