"""The day a page was published, as `YYYY-MM-DD`, from every place today's pages state it.

Readability.js reads only JSON-LD `datePublished` and `article:published_time`; on the modern web
(WCXB's development set, 2025) that finds a date on about half the pages that state one. The
sources here, in order of trust, follow what a reader would believe: what the page declares for
machines about its publication (JSON-LD, `<meta>`, `itemprop`), then what it shows (`<time>`, a
dated line by the headline), then what its address says, and last when it was modified; a
declared publication yields to an earlier date the headline shows (a refreshed story,
`shown_earlier`). A date is read with a handful of patterns (ISO 8601, "June 29, 2020", "29 June 2020", "29.06.2020",
"5 de mayo de 2024", "11-29-2024"; month names and abbreviations in English, German, French,
Spanish, Italian, Portuguese and Dutch), never a guess between day-first and month-first: a
numeric date is read only when one of its numbers can only be the day.
"""

from __future__ import annotations

import datetime
import re
import time
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ..parse.document import TEXT, Document, indices_of
from ..parse.text import join_runs, runs_hit
from ..schema import page_objects

#: <meta> names, properties and itemprops that state the publication time.
PUBLISHED_META = (
    "article:published_time",
    "og:article:published_time",
    "og:published_time",
    "datepublished",
    "published_time",
    "publishdate",
    "publish-date",
    "publish_date",
    "pubdate",
    "parsely-pub-date",
    "sailthru.date",
    "article.published",
    "dc.date.issued",
    "dcterms.issued",
    "dc.date",
    "dcterms.date",
    "dcterms.created",
    "date",
    "citation_publication_date",
    "citation_date",
    "originalpublicationdate",
)
#: <meta> keys of the last modification: the fallback when nothing states the publication.
MODIFIED_META = (
    "article:modified_time",
    "og:updated_time",
    "datemodified",
    "last-modified",
    "dcterms.modified",
)
#: Month names and abbreviations, English first, then German, French, Spanish, Italian, Portuguese
#: and Dutch (a name shared by two languages names the same month in both).
_MONTH_NAMES = (
    "january jan januar janvier enero gennaio janeiro januari janv ene gen",
    "february feb februar février fevrier febrero febbraio fevereiro februari févr fevr",
    "march mar märz maerz mars marzo março maart mär",
    "april apr avril abril aprile avr abr",
    "may mai mayo maggio maio mei mag",
    "june jun juni juin junio giugno junho",
    "july jul juli juillet julio luglio julho juil lug",
    "august aug august août aout agosto augustus ago",
    "september sep sept septembre septiembre setiembre settembre setembro",
    "october oct oktober octobre octubre ottobre outubro okt ott",
    "november nov novembre noviembre novembro",
    "december dec dezember décembre decembre diciembre dicembre dezembro dez déc dic",
)
_MONTHS = {name: number for number, names in enumerate(_MONTH_NAMES, start=1) for name in names.split()}
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th|er|º|°)?"
_YEAR = r"(?P<year>(?:19|20)\d{2})"
#: "de" / "del" between the parts of a Spanish or Portuguese date ("5 de mayo de 2024").
_OF = r"(?:\s+del?)?"
_PATTERNS = (
    re.compile(rf"(?<![\d-]){_YEAR}[-/](?P<month>\d{{1,2}})[-/](?P<day>\d{{1,2}})(?!\d)"),
    re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b", re.I),
    re.compile(rf"\b{_DAY}\.?{_OF}\s+{_MONTH},?{_OF}\s+{_YEAR}\b", re.I),
    re.compile(rf"(?<![\d.]){_DAY}\.(?P<month>\d{{1,2}})\.{_YEAR}(?!\d)"),
    # 11-29-2024 or 29/11/2024: read only when one of the two numbers can only be the day
    re.compile(rf"(?<![\d./-])(?P<first>\d{{1,2}})[-/](?P<second>\d{{1,2}})[-/]{_YEAR}(?!\d)"),
)
#: A date in an address: /2024/03/05/, /2024-03-05-slug, /2024/03/, /2023/october/03/; the day
#: ends at anything but a letter or digit (/2025-12-15+Rust+GCC was read as December 2025).
_URL_DATE = re.compile(
    r"/(?P<year>(?:19|20)\d{2})[/-](?P<month>\d{1,2}|[a-z]{3,9})(?:[/-](?P<day>\d{1,2}))?(?=[\W_]|$)",
    re.I,
)
#: Class or id words of elements that show the publication (not the modification) date.
_PUBLISHED_HINT = re.compile(r"publish|posted|entry-date|post-date|pubdate|date-?time|article-date", re.I)
_MODIFIED_HINT = re.compile(r"updat|modif|edited", re.I)
#: Characters after the headline in which a dated line counts as the article's own.
HEADLINE_WINDOW = 600


def _valid(year: int, month: int, day: int, latest: datetime.date) -> str | None:
    try:
        found = datetime.date(year, month, day)
    except ValueError:
        return None
    if found.year < 1990 or found > latest:
        return None
    return found.isoformat()


def _latest() -> datetime.date:
    """No page is dated after tomorrow (time zones aside). Today's date is asked of the clock at
    most once a minute (for speed: every date read needs it)."""
    global _LATEST
    now = time.monotonic()
    if now >= _LATEST[0]:
        _LATEST = (now + 60.0, datetime.date.today() + datetime.timedelta(days=1))
    return _LATEST[1]


#: (monotonic time until which it holds, `_latest()`'s answer)
_LATEST: tuple[float, datetime.date] = (0.0, datetime.date.min)
#: Every pattern writes a year of the 1900s or 2000s: a text without one holds no date.
_ANY_YEAR = re.compile(r"(?:19|20)\d\d")


def _days(text: str, earliest_only: bool = False) -> Iterator[tuple[int, str]]:
    """Every calendar day written in `text` by one of the patterns: (where it starts, YYYY-MM-DD);
    with `earliest_only`, only the first of each pattern (enough for the earliest, and faster)."""
    if not _ANY_YEAR.search(text):  # for speed: most texts read hold no date
        return
    latest = _latest()
    for pattern in _PATTERNS:
        for found in pattern.finditer(text):
            groups = found.groupdict()
            if groups.get("first"):
                one, two = int(groups["first"]), int(groups["second"])
                if (one > 12) == (two > 12):
                    continue  # day-first or month-first: never guessed
                number, date = (two, one) if one > 12 else (one, two)
            else:
                month = groups["month"]
                number = int(month) if month.isdigit() else _MONTHS[month.lower().rstrip(".")]
                date = int(groups["day"])
            day = _valid(int(groups["year"]), number, date, latest)
            if day:
                yield found.start(), day
                if earliest_only:
                    break


def parse_day(text: str | None) -> str | None:
    """The first calendar day written in `text` by one of the patterns, as YYYY-MM-DD."""
    if not text or not _ANY_YEAR.search(text):  # for speed: most texts read hold no date
        return None
    found = min(_days(text, earliest_only=True), default=None)
    return found[1] if found else None


def last_day(text: str | None) -> str | None:
    """The last calendar day written in `text`, as YYYY-MM-DD."""
    if not text:
        return None
    found = max(_days(text), default=None)
    return found[1] if found else None


def meta_contents(doc: Document) -> dict[str, str]:
    """Every <meta> key (its `property`, `name`, `itemprop` or `http-equiv`, lower-cased) -> the first
    non-empty content given for it: one walk over the <meta> tags for every key looked up."""
    found: dict[str, str] = {}
    for attrs in doc.meta:
        content = attrs.get("content")
        if not content:
            continue
        for attribute in ("property", "name", "itemprop", "http-equiv"):
            value = attrs.get(attribute)
            if value:
                found.setdefault(value.strip().lower(), content)
    return found


def _meta_days(contents: dict[str, str], keys: tuple[str, ...]) -> Iterator[str]:
    """The day of each of `keys` (in their order) whose content holds a date."""
    return (day for key in keys if (day := parse_day(contents.get(key))))


#: Words in a <meta> key that name the publication when the key is none of `PUBLISHED_META`
#: ("published", "w-published-date", "article.publishdate"): any site's own spelling.
_PUBLISHED_KEY = re.compile(r"publish|pub[-_.]?date|date[-_.]?pub|release[-_.]?date", re.I)


def _meta_dates_by_word(doc: Document) -> str | None:
    """The first <meta> whose key says publication in the site's own words and whose content is
    a date (a modification key never counts)."""
    for attrs in doc.meta:
        content = attrs.get("content")
        if not content:
            continue
        key = " ".join(filter(None, (attrs.get(a) for a in ("property", "name", "itemprop"))))
        if key and _PUBLISHED_KEY.search(key) and not _MODIFIED_HINT.search(key):
            day = parse_day(content)
            if day:
                return day
    return None


def _element_date(node: Any) -> str | None:
    attrs = node.attributes
    stated = attrs.get("datetime") or attrs.get("content") or attrs.get("ts")
    return parse_day(stated) or parse_day(node.text() or "")


#: Elements that stand for a <time>: the element itself, the web components that render one
#: ("3 hours ago") from a timestamp (GitHub's `relative-time`, Reddit's `faceplate-timeago`, whose
#: `ts` holds it), and `itemprop=datePublished`. Reddit's post pages without comments state their
#: post's time only so (wcxb-dev: one page gained, none lost).
_TIME_ELEMENTS = "time, relative-time, faceplate-timeago, [itemprop='datePublished']"


#: Tokens before and after the first <h1>'s start tag within which a <time> is the headline's own
#: (those `headline_texts` reads).
TIME_BEFORE_HEADLINE = 199
TIME_AFTER_HEADLINE = 400


def _headline_time(doc: Document) -> str | None:
    """The date of the <time> element nearest the page's first <h1>, within
    `TIME_BEFORE_HEADLINE`/`TIME_AFTER_HEADLINE` tokens of it and not marked as a modification: a
    story's own date, where a list of other stories' dated <time>s comes before it (a newsletter's
    sidebar of dated items, each classed `datetime`, above its article)."""
    times = indices_of(doc.tag, "time")
    if not times or "h1" not in doc.tag:
        return None
    heading = int(doc.start[doc.tag.index("h1")])
    near = [
        (abs(int(doc.start[index]) - heading), index)
        for index in times
        if -TIME_BEFORE_HEADLINE <= int(doc.start[index]) - heading <= TIME_AFTER_HEADLINE
    ]
    for _, index in sorted(near):
        node = doc.elements[index]
        if _MODIFIED_HINT.search(node.attributes.get("class") or ""):
            continue
        day = _element_date(node)
        if day:
            return day
    return None


def _time_elements(doc: Document) -> str | None:
    """The first <time> (or an element standing for one, `_TIME_ELEMENTS`) marked as the
    publication, else the first not marked as a modification."""
    first: str | None = None
    for node in doc.tree.css(_TIME_ELEMENTS):
        words = f"{node.attributes.get('class') or ''} {node.attributes.get('itemprop') or ''}"
        day = _element_date(node)
        if not day:
            continue
        if _PUBLISHED_HINT.search(words) or "pubdate" in node.attributes:
            return day
        if first is None and not _MODIFIED_HINT.search(words):
            first = day
    return first


#: Class or id words of elements that hold a dated line (a post's meta line, a story's date).
_DATED_WORDS = ("date", "publish", "posted", "byline", "time", "meta")
_DATED_HINT = re.compile("|".join(_DATED_WORDS))
#: Elements of `_DATED_HINT` read at most, in document order (for speed on pages full of them).
DATED_ELEMENTS = 60


def _dated_elements(doc: Document, modified: bool = False) -> str | None:
    """The first short element whose class or id says it holds a date, and does: a publication
    date (the first `DATED_ELEMENTS` such elements read), or with `modified` a modification date
    (every one read)."""
    read = 0
    for index, (ident, classes) in enumerate(zip(doc.ident, doc.classes, strict=True)):
        if classes is None and ident is None:
            continue
        words = f"{classes or ''} {ident or ''}".lower()
        # for speed: one search for the hint words first, the modification test on the few that pass
        if not _DATED_HINT.search(words) or bool(_MODIFIED_HINT.search(words)) != modified:
            continue
        read += 1
        if read > DATED_ELEMENTS and not modified:
            break
        text = doc.elements[index].text() or ""
        if len(text) < 160 and (day := parse_day(text)):
            return day
    return None


#: Each Document's `headline_texts`, by (after, window): dates and bylines read them several times.
_HEADLINE_TEXTS: weakref.WeakKeyDictionary[Document, dict[Any, Any]] = weakref.WeakKeyDictionary()


def headline_texts(doc: Document, after: bool = True, window: int = HEADLINE_WINDOW) -> list[str] | None:
    """The text runs just after the page's first <h1> (its own text included), or just before it
    (`after` False), in document order, up to `window` characters; None when the page has no <h1>.
    Read once per Document and arguments: read the list, do not change it."""
    known = _HEADLINE_TEXTS.setdefault(doc, {})
    key = (after, window)
    if key not in known:
        if "runs" not in known:
            found = _headline_tokens(doc)
            texts = doc.tokens.text
            known["runs"] = None if found is None else tuple([texts[i] for i in side] for side in found)
        runs = known["runs"]
        known[key] = None if runs is None else _within(runs[0] if after else runs[1], window, after)
    result: list[str] | None = known[key]
    return result


def _headline_tokens(doc: Document) -> tuple[list[int], list[int]] | None:
    """The text tokens among the 400 tokens from the first <h1>'s start tag on, in document order,
    and among the 199 tokens before it, nearest first; None without an <h1>. Found at once (for
    speed: not token by token), once per Document (`headline_texts`' memo)."""
    known = _HEADLINE_TEXTS.setdefault(doc, {})
    if "tokens" not in known:
        known["tokens"] = _find_headline_tokens(doc)
    found: tuple[list[int], list[int]] | None = known["tokens"]
    return found


def _find_headline_tokens(doc: Document) -> tuple[list[int], list[int]] | None:
    try:
        heading = doc.tag.index("h1")
    except ValueError:
        return None
    kind = doc.tokens.kind
    start = int(doc.start[heading])
    after = (np.flatnonzero(kind[start : min(start + 400, len(kind))] == TEXT) + start).tolist()
    first = max(start - 199, 1)
    before = (np.flatnonzero(kind[first:start] == TEXT) + first).tolist()
    return after, before[::-1]


def _within(runs: list[str], window: int, after: bool) -> list[str]:
    """The runs up to the first one that brings their characters past `window`, that one
    included; in document order (`runs` before the heading come nearest first)."""
    seen = 0
    parts: list[str] = []
    for text in runs:
        parts.append(text)
        seen += len(text)
        if seen > window:
            break
    return parts if after else parts[::-1]


def headline_text(doc: Document, after: bool = True, window: int = HEADLINE_WINDOW) -> str | None:
    """`headline_texts` as one text."""
    parts = headline_texts(doc, after, window)
    return None if parts is None else " ".join(parts)


def _near_headline(doc: Document) -> str | None:
    """A date written in the text just after the page's first <h1> (the dated line of a byline)."""
    return parse_day(headline_text(doc))


def _shown_by_headline(doc: Document) -> str | None:
    """The date a date-classed element shows (`_dated_elements`) when the text by the headline
    shows it too (the byline's date under a title itself dated, "LWN.net Weekly Edition for March
    26, 2015" over "By Nathan Willis March 25, 2015"); else a dated line just after the headline or
    just above it (`_headline_lines`); else the date-classed element anywhere; else any date in the
    text by the headline. A dated line before the classed elements, because a "Related" box's dates
    are classed too (wcxb-dev: 3 pages gained, none lost)."""
    classed = _dated_elements(doc)
    if classed and classed in {day for _, day in _days(headline_text(doc) or "")}:
        return classed
    lines = _headline_lines(doc)
    return (
        next((day for text in lines if (day := parse_day(text))), None)
        or classed
        or _near_headline(doc)
        or _above_headline(doc)
    )


def _headline_lines(doc: Document) -> list[str]:
    """The short runs (at most `DATED_LINE` characters) by the headline (`_headline_tokens`), those
    after it in order, then those above it nearest first, within `HEADLINE_WINDOW` and
    `ABOVE_HEADLINE_WINDOW` characters, outside tables: a line, not a sentence, and not an
    infobox's row ("Initial release: February 28, 1998" under Wikipedia's headline)."""
    found = _headline_tokens(doc)
    if found is None:
        return []
    tokens = doc.tokens
    chars, texts = tokens.chars, tokens.text
    tables = indices_of(doc.tag, "table")
    in_table = doc.mask_elements(tables) if tables else np.zeros(len(chars), dtype=bool)
    lines: list[str] = []
    for side, window in zip(found, (HEADLINE_WINDOW, ABOVE_HEADLINE_WINDOW), strict=True):
        # for speed, vectorised: the text runs up to the one that brings them past the window
        runs = np.asarray(side, dtype=np.int64)
        runs = runs[: int(np.searchsorted(np.cumsum(chars[runs]), window, side="right")) + 1]
        runs = runs[(chars[runs] > 0) & (chars[runs] <= DATED_LINE) & ~in_table[runs]]
        lines.extend(texts[index] for index in runs.tolist())
    return lines


#: Characters before the headline in which a dated line counts as the article's own (a "Published
#: March 3, 2026" line set above the title); shorter than after it, where the byline sits.
ABOVE_HEADLINE_WINDOW = 200


def _above_headline(doc: Document) -> str | None:
    """The last date written in the short text just before the page's first <h1>."""
    return last_day(headline_text(doc, after=False, window=ABOVE_HEADLINE_WINDOW))


def _url_date(url: str | None, with_day: bool = False) -> str | None:
    """The date in the page's address (the first of a month that names no day), or None; with
    `with_day`, only a date that names its day."""
    if not url:
        return None
    for found in _URL_DATE.finditer(url):
        month = found.group("month")
        number = int(month) if month.isdigit() else _MONTHS.get(month.lower())
        if number and (found.group("day") or not with_day):
            return _valid(int(found.group("year")), number, int(found.group("day") or 1), _latest())
    return None


#: Containers whose dated lines belong to something else than the page: a list's items, the
#: site's menus, footer and side boxes (links are left out too: a listing's dated entries).
_ELSEWHERE_TAGS = ("li", "nav", "footer", "aside")
#: Words, besides the date and a time of day, that a dated line may hold ("Last updated on",
#: "Posted", "Veröffentlicht am"): a label in any language, not a sentence.
DATED_LINE_WORDS = 3
_TIME_OF_DAY = re.compile(r"\b\d{1,2}[:.]\d\d(?:[:.]\d\d)?\s*(?:[ap]\.?m\.?)?", re.I)
#: A word of a dated line, letters only (not `parse.text.WORD`): the numbers of the date itself do not
#: count towards `DATED_LINE_WORDS`.
_WORD = re.compile(r"[^\W\d_]+")


def _dated_line(doc: Document) -> str | None:
    """The day of the body's dated lines, text runs that are a date and at most a short label
    ("Nov 21, 2018", "Last updated: November 13, 2025", "20 Dec 2025, 11:59") outside links, list
    items, menus, footers and side boxes, when they all name that one day; None when they name
    several (a product's reviews, a feed's posts, a list of events: dated things, not the page).
    Read last among the shown dates: a page whose date sits far from its headline (a template
    without an <h1>, a "Last updated" line at the end of the text). Measured on wcxb-dev:
    7 pages gain their date, none loses it; taking the first dated line, whatever
    the others say, gained one more and gave a date to 31 pages whose annotation states none,
    against 17 with the one-day rule."""
    tokens = doc.tokens
    first, last = doc.body
    texts = tokens.text
    # for speed: the short runs found at once, and one search over them joined finds those with a year
    short = (tokens.kind[first : last + 1] == TEXT) & (tokens.chars[first : last + 1] > 0)
    short &= tokens.chars[first : last + 1] <= DATED_LINE
    runs = (np.flatnonzero(short) + first).tolist()
    run_texts = [texts[index] for index in runs]
    hits = runs_hit(run_texts, (found.start() for found in _ANY_YEAR.finditer(join_runs(run_texts))))
    candidates = [runs[position] for position in hits]
    if not candidates:
        return None
    wanted = [i for name in _ELSEWHERE_TAGS for i in indices_of(doc.tag, name)]
    elsewhere = doc.mask_elements(wanted) if wanted else np.zeros(len(tokens.kind), dtype=bool)
    days: set[str] = set()
    for index in candidates:
        if elsewhere[index] or tokens.in_anchor[index]:
            continue
        text = texts[index]
        found = min(_days(text, earliest_only=True), default=None)
        # + 1: the month's name
        if found is not None and len(_WORD.findall(_TIME_OF_DAY.sub(" ", text))) <= DATED_LINE_WORDS + 1:
            days.add(found[1])
            if len(days) > 1:
                return None
    return next(iter(days), None)


def local_day(doc: Document, declared: str) -> str:
    """The day the page's address gives, when it is the day before the `declared` one, else
    `declared`: a publication declared in UTC ("2025-12-19T02:41Z") is the evening before where
    the site is, and its address and its page say so ("/2025/12/18/", "December 18, 2025")."""
    in_address = _url_date(doc.url)
    return in_address if in_address and in_address == _days_before(declared, 1) else declared


def _days_before(day: str, days: int) -> str:
    """The YYYY-MM-DD `days` before the YYYY-MM-DD `day`."""
    return (datetime.date.fromisoformat(day) - datetime.timedelta(days=days)).isoformat()


#: Days by which a date shown at the headline must precede the declared one to be taken instead:
#: more than a time zone's shift (a declared "2025-12-19T03:05Z" is the page's "December 18").
SHOWN_EARLIER_DAYS = 2
#: Characters of a text run that can be a dated line (a byline's "Published March 3, 2026 at 9:00").
DATED_LINE = 80


def shown_earlier(doc: Document, declared: str) -> str | None:
    """The first date shown just above or after the headline that is at least
    `SHOWN_EARLIER_DAYS` before the `declared` day, or None.

    Sites that refresh a story often declare the refresh as its publication (`datePublished`,
    `article:published_time`) while the page still shows its first date by the title; a reader,
    and WCXB's annotators, take the date the page shows. Only an earlier shown date is taken: a
    later one is usually an "Updated" line, which WCXB records about as often as it records the
    publication (measured on wcxb-dev: taking every shown date fixes 38 pages and
    breaks 38; taking only dates on a dated line (`DATED_LINE`) two days or more earlier fixes 9
    and breaks none; one day earlier, as a time zone would shift it, fixed 2 and broke 3)."""
    above = headline_texts(doc, after=False, window=ABOVE_HEADLINE_WINDOW)
    if above is None:
        return None
    latest = _days_before(declared, SHOWN_EARLIER_DAYS)
    # a dated line, not a sentence of the story that mentions a day ("in November 2017, ...")
    below = headline_texts(doc) or ()
    lines = [text for text in [*above, *below] if len(text) <= DATED_LINE]
    # for speed: one search over the lines joined finds the few with a year, the only ones read
    dated = runs_hit(lines, (found.start() for found in _ANY_YEAR.finditer(join_runs(lines))))
    shown = (day for index in dated if (day := parse_day(lines[index])))
    return next((day for day in shown if day <= latest), None)


def _declared_days(objects: list[dict[str, Any]], contents: dict[str, str], doc: Document) -> list[str]:
    """Every publication day the page declares, in the order they are trusted: JSON-LD
    `datePublished`, then `dateCreated` (each object in turn), the `PUBLISHED_META` keys in their
    order, then the first <meta> whose key says publication in the site's words."""
    days = [
        day
        for wanted in ("datePublished", "dateCreated")
        for item in objects
        if isinstance(item.get(wanted), str) and (day := parse_day(item[wanted]))
    ]
    days.extend(_meta_days(contents, PUBLISHED_META))
    if by_word := _meta_dates_by_word(doc):
        days.append(by_word)
    return days


def _shown_declaration(doc: Document, declared: list[str]) -> str | None:
    """The declared publication day to trust (`declared` in order): the first, unless the
    declarations disagree and the page's text shows another of them and not the first. A template
    that writes its JSON-LD from another record than the page shows (pcworld.com's `datePublished`
    a year before the `<meta name=date>` and the byline's day) is outvoted by the declaration the
    reader sees (wcxb-dev: 2 pages gained, none lost)."""
    if not declared:
        return None
    first = declared[0]
    if all(day == first for day in declared):
        return first
    # for speed: one search over the page's text runs joined, on the few pages whose declarations
    # disagree
    shown = {day for _, day in _days(join_runs(doc.tokens.text))}
    if first in shown:
        return first
    return next((day for day in declared if day in shown), first)


def publication_day(
    doc: Document,
    first_post: Callable[[], str | None] | None = None,
    contents: dict[str, str] | None = None,
) -> str | None:
    """The day the page was published, YYYY-MM-DD, or None: JSON-LD `datePublished`, `<meta>`
    publication keys (the known ones, then any key that says "publish"), each unless the headline
    shows an earlier date (`shown_earlier`); the first post's date on a discussion thread
    (`first_post` gives it as the page states it, asked only when needed), a full date in the
    address, `<time>`/`itemprop=datePublished` elements, a dated line after the headline or just
    above it, date-classed elements, the address's month, a dated line elsewhere in the body
    (`_dated_line`), and last the modification date, declared or shown. A declared publication
    one day after the address's date is the address's (`local_day`), and a day from the first
    post's shown day is the post's. `contents` is
    `meta_contents(doc)`, when the caller has it already."""
    objects = list(page_objects(doc))
    if contents is None:
        contents = meta_contents(doc)
    declared = _shown_declaration(doc, _declared_days(objects, contents, doc))
    if declared:
        earlier = shown_earlier(doc, declared)
        posted = parse_day(first_post()) if first_post else None
        # a thread's page shows its posts' dates, and "now", around its title: none is a refresh
        if earlier and not posted:
            return earlier
        # the first post's day as the page shows it, where the declaration is the same moment in
        # UTC ("2026-02-15 03:05:48" for "Feb 14, 2026 | 9:05 pm"); a day further, another post's
        if posted and posted in (_days_before(declared, 1), _days_before(declared, -1)):
            return posted
        return local_day(doc, declared)
    return (
        (parse_day(first_post()) if first_post else None)
        # an address's full date is the page's own, where a <time> or a dated element may be a
        # side box's ("/2023/october/03/" beside a "Related" list dated 2026)
        or _url_date(doc.url, with_day=True)
        or _headline_time(doc)
        or _time_elements(doc)
        or _shown_by_headline(doc)
        or _url_date(doc.url)
        or _dated_line(doc)
        or next(
            (
                day
                for item in objects
                if isinstance(item.get("dateModified"), str) and (day := parse_day(item["dateModified"]))
            ),
            None,
        )
        or next(_meta_days(contents, MODIFIED_META), None)
        # the last shown date, for a page that shows no other: WCXB's annotators take an "Updated"
        # line as the page's date about as often as its declared publication
        or _dated_elements(doc, modified=True)
    )
