"""The optional C kernels (`readerproxy._native`), or None: the pure-Python code then runs.

The way MarkupSafe ships `_speedups.c`: the compiled module is an accelerator, never a requirement.
Each kernel has a Python reference it must match exactly (see the header of `_native.c`):
`parse.scan._scan_fast` for `scan` (and `scan` of the tree's serialisation for `walk`), the numpy walk of `learn.model.TreeModel.log_odds` for
`tree_leaves` and `complete_tree_leaves`, `elements.inherit` and `own_text`'s word counts
for `inherit` and `word_counts`, `learn.blocks._character_counts`, `_containing`, `_element_counts`,
`repeated_items` and `_columns`' same-tag sibling counts for `class_counts`, `containing`,
`element_counts`, `repeated_items` and `key_counts`; `learn.blocks._columns` for `block_columns` and
`block_neighbours`, `structure_columns` (with `page_type_columns`' item counts) for
`structure_columns`, `context_features` for `context_columns`, and the page kind's
`pagewords._add_words`, `pagekind.class_word_counts`' `str.count` and `pagekind.count_prices` for
`word_buckets`, `count_parts` and `count_prices`; `parse.clean`'s query `_HIDDEN_OR_SCREEN_READER` for
`hidden_candidates`, `node.attributes` (`views.posts.attributed_reference`) for
`attributed_elements`, and `_tags_in_source` with `str.count` for `source_tags`. The walk calls Lexbor's functions
inside selectolax's module, so `parse.scan._walk_setup` turns it on only after it read a page of its
own exactly as the scan does (else `parse` serialises and scans). Every module that uses a kernel imports `native` from here, so a
test can switch one module back to its reference (`monkeypatch.setattr(module, "native", None)`).

`native` is None when
- `READERPROXY_PURE=1` is set (tests and debugging force the fallback), or
- the module was not built (no compiler at install time; `python hatch_build.py` builds it in place),
  or the one found lies in another directory (another source tree's build, which an editable
  install's import hook can find for a tree run with `PYTHONPATH`), or
- it is stale: `_native.c` sits beside it and its SHA-256 is not the one the module was compiled
  from (warned once, at import). An installed wheel ships the source it was built from, so there the
  check passes; in a working tree it catches a C edit that was not rebuilt.
"""

from __future__ import annotations

import hashlib
import os
import warnings
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "_native.c"


def source_hash(source: Path = SOURCE) -> str | None:
    """SHA-256 of the C source beside this module, or None when there is none (hatch_build.py computes the same)."""
    try:
        return hashlib.sha256(source.read_bytes()).hexdigest()
    except OSError:
        return None


def load_native(source: Path = SOURCE) -> ModuleType | None:
    """The compiled kernels if present, current and wanted, else None (see the module docstring)."""
    if os.environ.get("READERPROXY_PURE", "") not in ("", "0"):
        return None
    try:
        from . import _native
    except ImportError:
        return None
    if Path(_native.__file__ or "").resolve().parent != HERE:
        # Another tree's build, found by an editable install's import hook (a worktree run with
        # PYTHONPATH whose own module is not built): not compiled from this source.
        return None
    expected = source_hash(source)
    if expected is not None and getattr(_native, "SOURCE_HASH", None) != expected:
        warnings.warn(
            f"readerproxy: the compiled C kernels were not built from this {source.name}; using the "
            "pure-Python code (rebuild with `python hatch_build.py` or reinstall)",
            RuntimeWarning,
            stacklevel=2,
        )
        return None
    return _native


if TYPE_CHECKING:  # the kernels' types, from `_native.pyi`: mypy checks every call against them
    from . import _native as native
else:
    native = load_native()


def describe() -> str:
    """ "yes" or "no", for `readerproxy --version` and /healthz."""
    return "yes" if native is not None else "no"
