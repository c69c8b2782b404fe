"""Overlays: the original page, sanitised, with every scored block of an `Extraction` outlined.

Works from the `Document` and the `Extraction` only (blocks, selection, signals, score, params);
it never looks inside an algorithm. Pure functions, I/O at the edges:

- `inspect(source, …)` runs the one pipeline (`pipeline.process_page`) and keeps what an overlay
  needs: the text, the Document, the Extraction and the Article.
- `block_marks(doc, blocks)` finds where each block sits in the page. An element block marks its
  element. A range of tokens (a line, a string, a segment: Block.start/end index the linear view)
  becomes the run of sibling nodes under the lowest element containing both ends; a run of several
  siblings is wrapped in a `<span>`, a run of one is that element. Runs that would cross one
  another (or sit where a span cannot, e.g. between table rows) mark the enclosing element.
- `page_body(doc, extraction)` rebuilds the page's body from the linear view with the marks (class
  `rpo-mark`, `data-rpo-blocks`, a score badge per block) and puts it through nh3 with a broad
  allowlist (`sanitize.clean_page`): no script, event handler, `javascript:` URL, frame, object or form survives. Dropped
  navigation, menus, headers, footers and sidebars (`folds`) sit in a `<details>` whose summary
  says what was dropped ("navigation: 120 links dropped, tap to show"), and the first kept mark
  outside them is where the frame opens (`rpo-first`, CSS `scroll-initial-target`).
- `block_namer`, `fallback_note`: the panel's top candidates by element path and first words, and
  a fallback (auto's learned scorer, auto-heuristic's tries) told in words.
- `sanitize.page_styles(text, base)` the page's own stylesheets (links and `<style>` bodies, which the
  Document drops), so the page still looks like itself; the CSP allows styles and images but no
  script of the page.
- `frame_document(...)` the page on its own: `templates/overlay_frame.html`, the marked body with
  the page's stylesheets, a feature card per badge (shown by CSS on hover, focus or tap) and a CSP
  of its own. It is shown in a sandboxed `<iframe srcdoc>` (no `allow-scripts`, no
  `allow-same-origin`): the page's CSS applies inside the frame's box only.
- `overlay_page(...)` the whole page: `templates/overlay.html`, readerproxy's own document, with
  the frame and the panel (algorithm, parameters form, time, share selected, every block's
  features, charts from `charts.py`); no page markup or CSS reaches it.
- `blocks_json(doc, extraction)` the blocks for `/api/extract?blocks=1`.

One module per part: `inspection` (`inspect`), `marks` (`block_marks`), `features`
(`block_features`, `blocks_json`), `body` (`page_body`, `folds`) and `page` (`frame_document`,
`overlay_page`, `overlay_file`, the panel). This package re-exports their public names.
"""

from __future__ import annotations

from .body import (
    FOLD_MIN_CHARS,
    FOLD_MIN_LINKS,
    FOLD_ROLES,
    FOLD_TAGS,
    FOLD_WORDS,
    FOLDABLE,
    INLINE_PARENTS,
    NO_BADGE,
    RENAMED,
    feature_rows,
    folds,
    page_body,
    with_boundary_lines,
)
from .features import Features, block_features, blocks_json, element_path, selected_share
from .inspection import Inspection, inspect
from .marks import FOREIGN, NO_WRAP, Mark, block_marks
from .page import (
    FALLBACK_NAMES,
    FRAME_SANDBOX,
    PANEL_BLOCKS,
    BlockRow,
    OverlayLinks,
    ParamField,
    block_namer,
    fallback_note,
    first_words,
    frame_document,
    overlay_file,
    overlay_page,
    param_fields,
    short_path,
    templates_dir,
)

__all__ = [
    "FALLBACK_NAMES",
    "FOLDABLE",
    "FOLD_MIN_CHARS",
    "FOLD_MIN_LINKS",
    "FOLD_ROLES",
    "FOLD_TAGS",
    "FOLD_WORDS",
    "FOREIGN",
    "FRAME_SANDBOX",
    "INLINE_PARENTS",
    "NO_BADGE",
    "NO_WRAP",
    "PANEL_BLOCKS",
    "RENAMED",
    "BlockRow",
    "Features",
    "Inspection",
    "Mark",
    "OverlayLinks",
    "ParamField",
    "block_features",
    "block_marks",
    "block_namer",
    "blocks_json",
    "element_path",
    "fallback_note",
    "feature_rows",
    "first_words",
    "folds",
    "frame_document",
    "inspect",
    "overlay_file",
    "overlay_page",
    "page_body",
    "param_fields",
    "selected_share",
    "short_path",
    "templates_dir",
    "with_boundary_lines",
]
