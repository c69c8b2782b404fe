"""A cap on element nesting, applied to page markup before it reaches the HTML parser.

The HTML tree builder is quadratic in nesting depth: each start tag asks whether an element is "in
scope" (WHATWG HTML, 13.2.4.2 "The stack of open elements"), which walks the stack of open elements,
so 100,000 nested `<div>`s cost Lexbor ~30 s and html5ever (the nh3 sanitiser) as much again.
Browsers bound the depth of the tree they build: Blink attaches an element deeper than 512 levels
to its ancestor at that depth instead of nesting it further (HTMLConstructionSite,
kMaximumHTMLParserDOMTreeDepth). `cap_depth` does the same to the markup itself, so every later
tree walk (parser, cleaner, extractors, renderer, sanitiser) sees at most `MAX_DEPTH` levels:

- a fast check counts the open elements along the page with one regular-expression pass
  (start tags of elements that can contain others, minus their end tags); a page that never goes
  past `MAX_DEPTH` is returned unchanged (every real page we know: none of the 12,440 dataset pages
  comes near);
- otherwise a start tag that would open level `MAX_DEPTH + 1` or deeper is dropped together with
  its end tag. The text inside stays where it was, so nothing is lost but the extra levels.

Counting is conservative: elements whose end tag may be left out (`p`, `li`, table parts, …) are not
counted (they cannot nest in themselves without a counted container between), comments and the
contents of raw-text elements (`script`, `style`, …) are skipped, void elements never open a level.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

#: Deepest nesting kept, as in Blink's HTML parser.
MAX_DEPTH = 512

#: Elements that never contain anything.
VOID = frozenset(
    "area base br col embed hr img input keygen link meta param source track wbr basefont bgsound frame".split()
)
#: Elements whose end tag may be omitted (WHATWG HTML 13.1.2.4): not counted as a level.
OPTIONAL_END = frozenset(
    "html head body p li dt dd option optgroup rb rt rtc rp tr td th tbody thead tfoot colgroup caption".split()
)
#: Elements whose content is text, not markup (WHATWG HTML 13.1.2, raw text and escapable raw text).
RAW_TEXT = frozenset({"script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes"})
#: A comment start, or a tag (groups: "/" or ""; the name).
_TAG = re.compile(r"<!--|<(/?)([A-Za-z][^\s/>]*)[^>]*>")
#: Start and end tags, roughly (for the fast bound): "<name" or "</name".
_ROUGH_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9]*")
_FOREIGN = frozenset({"svg", "math"})
_COMMENT_END = re.compile(r"--!?>")
#: Elements inside svg/math whose content is HTML again (HTML integration points and MathML text
#: integration points, WHATWG HTML 13.2.6.5).
_INTEGRATION = frozenset(
    {"foreignobject", "desc", "title", "annotation-xml", "mi", "mo", "mn", "ms", "mtext"}
)
#: Start tags that leave foreign content for HTML (13.2.6.5, "any other start tag" exceptions).
_BREAKOUT = frozenset(
    "b big blockquote body br center code dd div dl dt em embed h1 h2 h3 h4 h5 h6 head hr i img li "
    "listing menu meta nobr ol p pre ruby s small span strong strike sub sup table tt u ul var font".split()
)
#: Pages with fewer tags than this are parsed as they are: their depth cannot cost much.
QUICK_TAGS = 5000


@dataclass(frozen=True, slots=True)
class Capped:
    """The markup to parse and how many start tags (with their end tags) were dropped."""

    html: str
    dropped: int


def _counted(name: str) -> bool:
    return name not in VOID and name not in OPTIONAL_END


def rough_depth(html: str) -> int:
    """An upper bound on the nesting of counted elements, from one regex pass and numpy.

    For each element name, the open count along the page (start tags minus end tags, never below
    zero) is at least the number of elements of that name on the stack of open elements; their sum
    is therefore at least the stack's size at every point.
    """
    found = _ROUGH_TAG.findall(html)
    if not found:
        return 0
    tags = "\n".join(found).lower().split("\n")
    names: dict[str, int] = {}
    ids: dict[str, int] = {}
    signs: dict[str, int] = {}
    for tag in set(tags):
        closing = tag.startswith("</")
        name = tag[2:] if closing else tag[1:]
        ids[tag] = names.setdefault(name, len(names))
        signs[tag] = 0 if not _counted(name) else (-1 if closing else 1)
    name_id = np.fromiter((ids[t] for t in tags), dtype=np.int64, count=len(tags))
    sign = np.fromiter((signs[t] for t in tags), dtype=np.int64, count=len(tags))
    order = np.argsort(name_id, kind="stable")  # grouped by name, in page order within a name
    grouped, steps = name_id[order], sign[order]
    starts = np.r_[True, grouped[1:] != grouped[:-1]]
    rank = np.cumsum(starts) - 1
    total = np.cumsum(steps)
    before = (total - steps)[starts][rank]  # the running total at the start of each name's group
    walk = total - before  # per-name running count
    big = 2 * len(tags) + 2
    lowest = np.minimum.accumulate(walk - rank * big) + rank * big  # running minimum within a name
    clamped = walk - np.minimum(lowest, 0)
    previous = np.r_[0, clamped[:-1]]
    previous[starts] = 0
    delta = np.empty_like(clamped)
    delta[order] = clamped - previous
    return int(np.cumsum(delta).max())


def _comment_end(html: str, position: int) -> int:
    """Where a comment opened just before `position` ends (13.2.5.43-52: `<!-->`, `<!--->`, `-->`
    and `--!>` all end one)."""
    if html.startswith(">", position):
        return position + 1
    if html.startswith("->", position):
        return position + 2
    end = _COMMENT_END.search(html, position)
    return end.end() if end else len(html)


def _tokens(html: str) -> Iterator[tuple[int, int, str, bool]]:
    """(start, end, name, closing) of each counted tag as the tree builder would nest it: comments
    and raw text skipped, and in foreign content (`<svg>`, `<math>`, outside their HTML integration
    points) no raw text and `<x/>` closed at once, until a breakout tag returns to HTML (13.2.6.5)."""
    lower = html.lower()
    contexts: list[tuple[str, bool]] = []  # open svg/math/integration points: (name, foreign inside)
    position = 0
    while (match := _TAG.search(html, position)) is not None:
        position = match.end()
        if match[0] == "<!--":
            position = _comment_end(html, position)
            continue
        name = match[2].lower()
        closing = bool(match[1])
        foreign = bool(contexts) and contexts[-1][1]
        if foreign and not closing and name in _BREAKOUT:
            while contexts and contexts[-1][1]:  # back to the nearest HTML context
                contexts.pop()
            foreign = bool(contexts) and contexts[-1][1]
        if not foreign and name in RAW_TEXT:
            if not closing:
                found = lower.find("</" + name, position)
                position = len(html) if found < 0 else found
            continue
        if not _counted(name):
            continue
        if closing:
            for index in range(len(contexts) - 1, -1, -1):
                if contexts[index][0] == name:
                    del contexts[index:]
                    break
        elif foreign and html[position - 2] == "/":
            continue  # self-closed in foreign content: opens nothing
        elif name in _FOREIGN and not foreign:
            contexts.append((name, True))
        elif foreign and name in _INTEGRATION:
            contexts.append((name, False))
        yield match.start(), position, name, closing


def cap_depth(html: str, limit: int = MAX_DEPTH, tags: int | None = None) -> Capped:
    """The markup with start tags beyond `limit` levels (and their end tags) dropped. `tags`:
    `html.count("<")` when counted already (`clean.source_tags`)."""
    if tags is None:
        tags = html.count("<")
    if tags <= max(limit, QUICK_TAGS) or rough_depth(html) <= limit:
        return Capped(html, 0)
    out: list[str] = []
    kept: list[str] = []  # names of the open counted elements that were written
    dropped_open: dict[str, int] = {}  # open counted elements that were dropped, by name
    dropped_total = dropped = 0
    position = 0
    for start, end, name, closing in _tokens(html):
        if closing:
            if dropped_open.get(name, 0) > 0:
                dropped_open[name] -= 1
                dropped_total -= 1
                out.append(html[position:start])
                position = end
                continue
            # close the innermost written element of that name (and any left open inside it)
            for index in range(len(kept) - 1, -1, -1):
                if kept[index] == name:
                    del kept[index:]
                    break
        elif len(kept) + dropped_total >= limit:
            dropped_open[name] = dropped_open.get(name, 0) + 1
            dropped_total += 1
            dropped += 1
            out.append(html[position:start])
            position = end
        else:
            kept.append(name)
    if not dropped:
        return Capped(html, 0)
    out.append(html[position:])
    return Capped("".join(out), dropped)
