"""A discussion thread as its posts: `thread_posts(doc)` -> every post with its author, date and text.

A forum page shown as an article reads as one person talking: the names sit in a column beside the
posts (or in a byline the extraction drops), quotes lose who said them, and badges such as
"Well-known member" or reaction counts read as text. The thread view shows each post with its
author, its date and its own text, with quotes attributed and set apart.

Posts are found by the markup of the forum engines the web runs on, each a table entry (`ENGINES`)
of CSS selectors: where a post starts, where its author, date and body are, how a quote names the
person quoted, and what inside a body is not the post (signatures, reaction bars, "Click to
expand..."). The engines: XenForo, phpBB, Discourse (its server-rendered crawler view and its
app markup), vBulletin 3 and 4, Invision Community, NodeBB, Stack Exchange, Reddit (new and old),
then schema.org microdata (`Comment`, `DiscussionForumPosting`, `Answer` with `author` and
`text`, which many other engines emit), and last the page's JSON-LD `DiscussionForumPosting` with
its `comment` list (Google's forum structured data). Every engine whose post selector matches is
tried and the one that gives the most posts with an author wins, so a page with two sets of
markup (a theme over an engine) gets the better reading.

The text of each post is rewritten from its nodes through the reader's allowlist (tags as
`output.ALLOWED_TAGS`, containers as `<div>`, forms and media players dropped) and sanitised by
`output.sanitize`, the same nh3 cleaner as the article body. A quote becomes
`<figure><figcaption>Ana said:</figcaption><blockquote>…</blockquote></figure>`.

Pure: reads the parsed `Document` (nothing is parsed again except each JSON-LD body), no network.

`post_parts(doc)` says where the same posts lie in the page (element indices of each post, its
body, its author and date, and what the view drops inside the body) without writing them out: what
`auto`'s thread rules keep and drop (`extractors.learned`).
"""

from __future__ import annotations

import html as html_lib
import re
import weakref
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from selectolax.lexbor import LexborNode

from ..output import (
    ALLOWED_TAGS,
    AS_DIV,
    ATTRIBUTES,
    DROPPED,
    LinkRewriter,
    _image_sources,
    _safe_url,
    sanitize,
)
from ..parse.document import TEXT, Document
from ..parse.text import squash
from ..schema import (
    FORUM_POST_TYPES,
    OPENING_POST_TYPES,
    has_type,
    ld_people,
    ld_text,
    objects,
    script_values,
)
from .posts import StructuralThread, find_thread

#: Fewer posts than this and the page is shown as an article: one post is no thread.
MIN_POSTS = 2
#: Longest author name kept (longer text in an author slot is not a name).
MAX_AUTHOR = 80


@dataclass(frozen=True, slots=True)
class Quote:
    """One quote inside a post: whom it quotes ("" when the page does not say) and its plain text."""

    author: str
    text: str


@dataclass(frozen=True, slots=True)
class Post:
    """One post of a thread.

    `html` is sanitised and has its quotes written as attributed figures; `date` is the machine
    date (ISO 8601) when the page gives one, `date_text` the date as the page shows it (or `date`).
    """

    author: str
    date: str | None
    date_text: str
    html: str
    text: str
    quotes: tuple[Quote, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready view (the API's `posts` entries)."""
        return {
            "author": self.author,
            "date": self.date,
            "date_text": self.date_text,
            "html": self.html,
            "text": self.text,
            "quotes": [{"author": q.author, "text": q.text} for q in self.quotes],
        }


@dataclass(frozen=True, slots=True)
class Engine:
    """Where one forum engine puts a post's parts, as CSS selectors.

    In `author`, `date` and `quote_author`, an entry starting with "@" names an attribute of the
    post (or quote) element itself; the others are selectors inside it whose first match with text
    gives the value (a date selector's `datetime`, `title` or `content` attribute first).
    """

    name: str
    post: str
    author: tuple[str, ...]
    date: tuple[str, ...]
    body: tuple[str, ...]
    quote: str = "blockquote"
    quote_author: tuple[str, ...] = ()
    #: Inside a quote: what is the quote's own header (dropped, the attribution replaces it).
    quote_drop: str = ""
    #: Inside a body: what is not the post.
    drop: str = ""
    #: Markup only this engine writes: `detect_engine` names the engine when it matches twice
    #: ("" for engines not named on their own, such as microdata, which article comments carry too).
    sign: str = ""


#: Inside any body: signatures, reactions, vote and share bars, "Click to expand...", edit notes.
COMMON_DROP = (
    ".signature, .message-signature, .post-signature, .reactionsBar, .js-reactionsList, "
    ".bbCodeBlock-expandLink, .bbCodeBlock-shrinkLink, .ipsReact, .ipsComment_controls, "
    ".post-menu-area, .post-controls, .likes, .like-count, .vote-count, .share-button, "
    ".message-lastEdit, .editedby, .lastedited, .post-edited, [data-role=reactionButton]"
)

ENGINES: tuple[Engine, ...] = (
    Engine(
        name="xenforo",
        sign=".message-userDetails, .message-body .bbWrapper",
        post="article.message--post, article.message",
        author=("@data-author", ".message-name .username", ".message-name", ".username"),
        date=("time.u-dt", ".message-attribution-main time", "time"),
        body=(".message-body .bbWrapper", ".message-content .bbWrapper", ".bbWrapper"),
        quote="blockquote.bbCodeBlock--quote, blockquote.bbCodeBlock, blockquote",
        quote_author=("@data-quote", ".bbCodeBlock-title"),
        quote_drop=".bbCodeBlock-title, .bbCodeBlock-expandLink",
    ),
    Engine(
        name="discourse",
        sign=".crawler-post .post[itemprop=text], .topic-post .cooked",
        post=".crawler-post, .topic-post",
        author=(
            ".creator [itemprop=name]",
            ".creator a",
            ".names .username a",
            ".names .first a",
            ".names a",
        ),
        date=("time.post-time", ".post-date [data-time]", ".relative-date", "time"),
        body=(".post[itemprop=text]", ".cooked", "[itemprop=text]"),
        quote="aside.quote",
        quote_author=("@data-username", ".title"),
        quote_drop=".title, .quote-controls",
    ),
    Engine(
        name="phpbb",
        sign="div.post .postbody .content",
        post="div.post",
        author=(
            ".author .username-coloured",
            ".author .username",
            ".author strong",
            ".postprofile .username",
        ),
        date=(".author time", "time", ".author"),
        body=(".postbody .content", ".content"),
        quote="blockquote",
        quote_author=("cite",),
        quote_drop="cite",
    ),
    Engine(
        name="vbulletin",
        sign="[id^=post_message_]",
        post="li.postcontainer, li.postbitlegacy, li.postbit, div[id^=edit]",
        author=(".username strong", ".username", ".bigusername", "[id^=postmenu_] a"),
        date=(".postdate .date", ".postdate", ".date", ".thead"),
        body=("[id^=post_message_]", ".postbody .content", ".postcontent"),
        quote=".bbcode_quote, div.quote",
        quote_author=(".bbcode_postedby strong", ".bbcode_postedby", "strong"),
        quote_drop=".bbcode_postedby, .bbcode_description",
    ),
    Engine(
        name="xenforo1",
        sign="li.message[data-author] .messageText",
        post="li.message[data-author]",
        author=("@data-author", ".messageUserInfo .username", ".username"),
        date=(".messageMeta .DateTime", ".DateTime"),
        body=(".messageText", ".messageContent"),
        quote="div.bbCodeQuote",
        quote_author=("@data-author", ".attribution"),
        quote_drop=".attribution, .quoteExpand",
    ),
    Engine(
        name="fluxbb",
        sign="div.blockpost .postmsg",
        post="div.blockpost",
        author=(".postleft dt strong", ".postleft dt"),
        date=("h2 a", "h2"),
        body=(".postmsg",),
        quote="div.quotebox, blockquote",
        quote_author=("cite",),
        quote_drop="cite",
        drop=".postsignature, .postedit",
    ),
    Engine(
        name="smf",
        sign=".post_wrapper .poster",
        post="div.post_wrapper",
        author=(".poster h4 a", ".poster h4"),
        date=(".postinfo .smalltext", ".keyinfo .smalltext", ".smalltext"),
        body=(".post .inner", ".inner"),
        quote="blockquote",
        quote_author=("cite",),
        quote_drop="cite",
    ),
    Engine(
        name="mybb",
        sign="div.post .post_author",
        post="div.post",
        author=(".post_author .largetext a", ".post_author .largetext", ".post_author strong"),
        date=(".post_date",),
        body=(".post_body",),
        quote="blockquote",
        quote_author=("cite",),
        quote_drop="cite",
    ),
    Engine(
        name="invision",
        sign="article.cPost [data-role=commentContent]",
        post="article.cPost[id^=elComment], article.ipsComment[id^=elComment]",
        author=(
            ".cAuthorPane_author [itemprop=name]",
            ".cAuthorPane_author a",
            ".ipsComment_author a",
            "h3 a",
        ),
        date=("time", "[data-short]"),
        body=("[data-role=commentContent]", ".cPost_contentWrap .ipsType_richText", ".ipsType_richText"),
        quote="blockquote.ipsQuote, blockquote",
        quote_author=("@data-ipsquote-username", ".ipsQuote_citation"),
        quote_drop=".ipsQuote_citation",
    ),
    Engine(
        name="nodebb",
        sign="[component=post] [component='post/content']",
        post="[component=post]",
        author=(
            "@data-username",
            "[itemprop=author] [itemprop=name]",
            "[itemprop=author]",
            "a[data-username]",
        ),
        date=("[itemprop=datePublished]", ".timeago", "time"),
        body=("[component='post/content']", "[itemprop=text]", ".content"),
        quote="blockquote",
    ),
    Engine(
        name="stackexchange",
        sign="div.answer .js-post-body, div.question .js-post-body",
        post="div.question, div.answer",
        author=(
            ".post-signature.owner .user-details [itemprop=name]",
            ".post-signature.owner .user-details a",
            ".post-signature:last-child .user-details [itemprop=name]",
            ".post-signature:last-child .user-details a",
            ".user-details [itemprop=name]",
            ".user-details a",
        ),
        date=(
            ".post-signature.owner .relativetime",
            ".post-signature:last-child .relativetime",
            "time",
            ".relativetime",
        ),
        body=(".js-post-body", ".s-prose", ".post-text"),
        quote="blockquote",
        drop=".js-post-notice, .post-menu, .js-voting-container",
    ),
    Engine(
        name="reddit",
        sign="shreddit-comment, .thing.comment .usertext-body",
        post="shreddit-post, shreddit-comment, .thing.link, .thing.comment, [data-testid=comment]",
        author=("@author", "@data-author", ".tagline .author", "a[href*='/user/']"),
        date=("@created-timestamp", ".tagline time", "time", "faceplate-timeago"),
        body=(
            "[slot=text-body]",
            "[slot=comment]",
            ".usertext-body .md",
            ".md",
            "[data-testid=comment] > div",
        ),
        quote="blockquote",
    ),
    Engine(
        name="microdata",
        post=(
            "[itemtype$='/Comment'], [itemtype$='/DiscussionForumPosting'], [itemtype$='/Answer'], "
            "[itemtype$='/Question'], [itemtype$='/SocialMediaPosting']"
        ),
        author=(
            "[itemprop=author] [itemprop=name]",
            "[itemprop=author] [itemprop=alternateName]",
            "[itemprop=creator] [itemprop=name]",
            "[itemprop=author]",
        ),
        date=("[itemprop=datePublished]", "[itemprop=dateCreated]", "time"),
        body=("[itemprop=text]", "[itemprop=articleBody]"),
        quote="blockquote",
    ),
)

#: Small pictures that stand for text: smilies and emoji.
_SMILEY = re.compile(r"smil|emoji|emoticon", re.I)


def _is_smiley(node: LexborNode) -> bool:
    """A smiley or emoji picture: so named in its class or path, with a short alt text (":)")."""
    attrs = node.attributes
    alt = attrs.get("alt") or ""
    named = _SMILEY.search(attrs.get("class") or "") or _SMILEY.search(attrs.get("src") or "")
    return bool(named) and 0 < len(alt) <= 12


#: Line breaks at the start or end of a post (the space before a signature, after a quote).
_EDGE_BREAKS = re.compile(r"^(?:\s*<br>)+\s*|\s*(?:<br>\s*)+$")
#: Line breaks right after a quote (the figure already ends its line).
_BREAKS_AFTER_QUOTE = re.compile(r"</figure>(?:\s*<br>)+")
#: Class names of the engines' `sign` markup, one of which every page `detect_engine` names holds
#: (as a whole class word; `postbit` also as the start of one, `postbitlegacy`). The one list of
#: them: `has_markers` looks for them as plain substrings, then `_MARKERS` as words.
MARKER_WORDS = tuple(
    "message-userDetails bbWrapper postbody crawler-post topic-post postcontainer messageText "
    "blockpost post_wrapper post_author cPost js-post-body usertext-body bigusername postbit".split()
)
_MARKERS = re.compile(r"\b(?:" + "|".join(map(re.escape, MARKER_WORDS)) + r")\b|\bpostbit\w*\b")
#: A post's reply box and quick-reply form are no part of it (`output` keeps a form's text: a page can be one).
_DROP_TAGS = DROPPED | frozenset(
    {"form", "script", "style", "noscript", "template", "iframe", "object", "embed"}
)
_SAID = re.compile(r"\s*(?:said|wrote|schrieb|a écrit|escribió|ha scritto|написал)\s*:?\s*[↑^]?\s*$", re.I)
_QUOTE_LEAD = re.compile(r"^\s*(?:quote|originally posted by|quoting|zitat|citation)\s*:?\s*", re.I)
_WHEN = re.compile(r"\s*(?:»|on\s+(?:\w{3},?\s+)?\w{3,9}\.?\s+\d{1,2}).*$")


def _class_text(doc: Document) -> str:
    """Every class attribute of the page, joined by spaces."""
    return " ".join(filter(None, doc.classes))


#: Each Document's `has_markers` answer, kept while the Document lives: `auto`'s thread rules ask
#: (`post_parts`), then the metadata's thread starter (`detect_engine`), on every page.
_HAS_MARKERS: weakref.WeakKeyDictionary[Document, bool] = weakref.WeakKeyDictionary()


def has_markers(doc: Document, class_markers: bool | None = None) -> bool:
    """Whether the page may carry a known forum engine's post markup: Reddit's `shreddit-comment`,
    or one of `MARKER_WORDS` in a class value (a plain substring test). False: `detect_engine`
    finds no engine here. Answered once per Document. `class_markers` is whether a class value holds
    one of the words, when the caller already knows (`auto` reads it from the heuristic's memo of
    class values, `heuristic.THREAD_MARKER_BIT`); else each distinct class value is searched once
    (pages repeat their class values, so the joined text is a fraction of every element's)."""
    known = _HAS_MARKERS.get(doc)
    if known is None:
        if "shreddit-comment" in doc.tag:
            known = True
        elif class_markers is not None:
            known = class_markers
        else:
            # No word holds a space, so the words found in the joined values are those in one value.
            classes = " ".join(filter(None, set(doc.classes)))
            known = any(word in classes for word in MARKER_WORDS)
        _HAS_MARKERS[doc] = known
    return known


def detect_engine(doc: Document) -> str | None:
    """The forum engine whose post markup the page carries (None: no known engine).

    Cheap: one query per engine, for pages the page-kind decision did not call a forum."""
    # For speed, a look at the class names the Document already read decides most pages (0.1 ms
    # rather than a dozen queries over the tree): plain substrings first (a regex over every class
    # of a large page took 4 ms), then the words.
    if not has_markers(doc):
        return None
    if "shreddit-comment" not in doc.tag and not _MARKERS.search(_class_text(doc)):
        return None
    for engine in ENGINES:
        if engine.sign and len(doc.tree.css(engine.sign)) >= MIN_POSTS:
            return engine.name
    return None


def thread_for(
    doc: Document,
    forum: bool,
    *,
    rewrite_link: LinkRewriter | None = None,
    images: bool = True,
) -> tuple[Post, ...] | None:
    """The posts of a page shown as a thread: a page the page-kind decision calls a forum, or one
    carrying a known engine's markup (None: no thread, or fewer than `MIN_POSTS` posts)."""
    if not forum and detect_engine(doc) is None:
        return None
    posts = thread_posts(doc, rewrite_link=rewrite_link, images=images)
    return posts if len(posts) >= MIN_POSTS else None


def thread_posts(
    doc: Document,
    *,
    rewrite_link: LinkRewriter | None = None,
    images: bool = True,
) -> tuple[Post, ...]:
    """Every post of the thread in page order, by the engine that reads the most authored posts
    (an empty tuple: the page is no thread this module can read)."""
    return read_thread(doc, rewrite_link=rewrite_link, images=images)[1]


def read_thread(
    doc: Document,
    *,
    rewrite_link: LinkRewriter | None = None,
    images: bool = True,
    engines: tuple[Engine, ...] = ENGINES,
    json_ld: bool = True,
    structure: bool = True,
) -> tuple[str, tuple[Post, ...]]:
    """`thread_posts` with the name of the engine that read them ("json-ld", "structure", or ""
    for none). `engines` and `json_ld` switch readings off (the leave-one-engine-out measure of
    `benchmarks/thread_structure.py` reads with an engine's table entry, or all of them, off), and
    `structure` the posts found by structure (`posts.find_thread`)."""
    order = {node.mem_id: index for index, node in enumerate(doc.elements)}
    best: tuple[Post, ...] = ()
    best_name = ""
    best_key = (0, 0)
    named = detect_engine(doc) if engines is ENGINES else None
    # For speed, the engine the page names is read first, and when every post it finds has an
    # author no other reading can do better.
    first = [engine for engine in engines if engine.name == named]
    for engine in first + [engine for engine in engines if engine.name != named]:
        posts = _read_engine(doc, engine, order, rewrite_link, images)
        key = (sum(1 for p in posts if p.author), len(posts))
        if key > best_key:
            best, best_key, best_name = posts, key, engine.name
        if engine.name == named and key[1] >= MIN_POSTS and key[0] == key[1]:
            break
    if best_key[0] < MIN_POSTS and json_ld:
        ld = _json_ld_posts(doc)
        if sum(1 for p in ld if p.author) > best_key[0]:
            best, best_key, best_name = ld, (sum(1 for p in ld if p.author), len(ld)), "json-ld"
    if best_name == "microdata":
        opening = _opening_post(doc, best)
        if opening is not None:
            best = (opening, *best)
    if best_key[0] < MIN_POSTS and structure:
        # No table entry reads this engine: the posts as their structure shows them (`posts.py`).
        found = _structural_posts(doc, rewrite_link, images)
        if sum(1 for p in found if p.author) > best_key[0]:
            return "structure", found
    return best_name, best


# -- markup ---------------------------------------------------------------------------------------


def _read_engine(
    doc: Document, engine: Engine, order: dict[int, int], rewrite_link: LinkRewriter | None, images: bool
) -> tuple[Post, ...]:
    nodes = list({node.mem_id: node for node in doc.tree.css(engine.post)}.values())
    if not nodes:
        return ()
    nodes.sort(key=lambda node: order.get(node.mem_id, 0))
    ids = {node.mem_id for node in nodes}
    quote_ids = {node.mem_id for node in doc.tree.css(engine.quote)} if engine.quote else set()
    posts: list[Post] = []
    for node in nodes:
        body = _own_first(node, engine.body, ids)
        if body is None:
            continue
        author = _clean_author(_value(node, engine.author, ids))
        machine, shown = _date(node, engine.date, ids)
        post = _post(doc, body, engine, author, machine, shown, ids, quote_ids, rewrite_link, images)
        if post is not None:
            posts.append(post)
    return tuple(posts)


def _owner(node: LexborNode, top: LexborNode, posts: set[int]) -> bool:
    """Whether `node` belongs to the post `top`: no other post lies between them."""
    parent = node.parent
    while parent is not None and parent.mem_id != top.mem_id:
        if parent.mem_id in posts:
            return False
        parent = parent.parent
    return parent is not None


def _own(top: LexborNode, selector: str, posts: set[int]) -> Iterator[LexborNode]:
    for node in top.css(selector):
        if node.mem_id != top.mem_id and node.mem_id not in posts and _owner(node, top, posts):
            yield node


def _own_first(top: LexborNode, selectors: Iterable[str], posts: set[int]) -> LexborNode | None:
    for selector in selectors:
        for node in _own(top, selector, posts):
            if (node.text(deep=True) or "").strip() or node.css_first("img"):
                return node
    return None


def _value(top: LexborNode, selectors: Iterable[str], posts: set[int]) -> str:
    """The first non-empty value of `selectors` (attributes of `top` for "@name")."""
    for selector in selectors:
        if selector.startswith("@"):
            value = top.attributes.get(selector[1:])
            if value and value.strip():
                return value
            continue
        for node in _own(top, selector, posts):
            text = squash(node.text(deep=True) or "") or (node.attributes.get("content") or "").strip()
            if text:
                return text
    return ""


def _clean_author(value: str) -> str:
    name = _QUOTE_LEAD.sub("", _SAID.sub("", squash(value))).strip(" :,-–—@")
    name = _WHEN.sub("", name).strip(" :,")
    if name.lower().startswith("by "):
        name = name[3:].strip()
    return name if 0 < len(name) <= MAX_AUTHOR else ""


_ISO = re.compile(r"^\d{4}-\d{2}-\d{2}")
#: Before the date in a post header: "by Ana »", "#12", "Posted:".
_WHEN_SHOWN = re.compile(r"^(?:.*»\s*|#\d+\s*|posted\s*(?:on)?\s*:?\s*)", re.I)


def _date(top: LexborNode, selectors: Iterable[str], posts: set[int]) -> tuple[str | None, str]:
    """(machine date or None, the date as shown)."""
    for selector in selectors:
        if selector.startswith("@"):
            value = (top.attributes.get(selector[1:]) or "").strip()
            if value:
                return (value if _ISO.match(value) else None), value
            continue
        for node in _own(top, selector, posts):
            machine, shown = _node_date(node)
            if machine or shown:
                return machine, shown
    return None, ""


def _node_date(node: LexborNode) -> tuple[str | None, str]:
    """(machine date or None, the date as shown) of one element holding a date."""
    attrs = node.attributes
    machine = next(
        (
            v.strip()
            for k in ("datetime", "content", "title", "data-time")
            if (v := attrs.get(k)) and _ISO.match(v.strip())
        ),
        None,
    )
    shown = squash(node.text(deep=True) or "")
    if len(shown) > 60:
        shown = ""
    shown = _WHEN_SHOWN.sub("", shown).strip()
    if _ISO.match(shown) or (machine and "ago" in shown.split()):
        shown = ""  # the reader writes the machine date its own way
    return machine, shown


def _post(
    doc: Document,
    body: LexborNode,
    engine: Engine,
    author: str,
    machine: str | None,
    shown: str,
    posts: set[int],
    quote_ids: set[int],
    rewrite_link: LinkRewriter | None,
    images: bool,
    also_dropped: Iterable[int] = (),
) -> Post | None:
    drop = ", ".join(filter(None, (COMMON_DROP, engine.drop)))
    dropped = {node.mem_id for node in body.css(drop)} | set(also_dropped)
    quotes: list[Quote] = []
    writer = _Writer(doc, engine, dropped, posts, quote_ids, quotes, rewrite_link, images)
    writer.children(body)
    fragment = _EDGE_BREAKS.sub("", sanitize("".join(writer.out)).strip())
    fragment = _BREAKS_AFTER_QUOTE.sub("</figure>", fragment)
    text = squash(" ".join(writer.text))
    if not text and "<img" not in fragment:
        return None
    return Post(
        author=author,
        date=machine,
        date_text=shown,
        html=fragment,
        text=text,
        quotes=tuple(quotes),
    )


class _Writer:
    """Writes a post body through the allowlist, quotes as attributed figures."""

    def __init__(
        self,
        doc: Document,
        engine: Engine,
        dropped: set[int],
        posts: set[int],
        quote_ids: set[int],
        quotes: list[Quote],
        rewrite_link: LinkRewriter | None,
        images: bool,
    ) -> None:
        self.doc = doc
        self.engine = engine
        self.dropped = dropped
        self.posts = posts
        self.quote_ids = quote_ids
        self.quotes = quotes
        self.rewrite_link = rewrite_link
        self.images = images
        self.out: list[str] = []
        self.text: list[str] = []
        self.quoted: list[str] = []  # the text of the quotes written (not the post's own)
        self.depth = 0

    def children(self, node: LexborNode) -> None:
        child = node.child
        while child is not None:
            self.node(child)
            child = child.next

    def node(self, node: LexborNode) -> None:
        tag = node.tag or ""
        if tag == "-text":
            value = node.text_content or ""
            self.out.append(html_lib.escape(value, quote=False))
            self.text.append(value)
            return
        if (
            tag.startswith("-")
            or tag in _DROP_TAGS
            or node.mem_id in self.dropped
            or node.mem_id in self.posts
        ):
            return
        if self.depth < 8 and node.mem_id in self.quote_ids:
            self.quote(node)
            return
        name = tag if tag in ALLOWED_TAGS else "div" if tag in AS_DIV else None
        if name == "img" and _is_smiley(node):
            alt = node.attributes.get("alt") or ""  # a smiley reads as its text (":)")
            self.out.append(html_lib.escape(alt, quote=False))
            self.text.append(alt)
            return
        if name in ("img", "picture", "source") and not self.images:
            return
        if name is None:
            self.children(node)
            return
        self.out.append(self._start(node, name))
        if name not in ("img", "br", "hr", "wbr", "source", "col"):
            self.depth += 1
            self.children(node)
            self.depth -= 1
            self.out.append(f"</{name}>")
        if name in ("p", "div", "li", "br", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "blockquote", "pre"):
            self.text.append("\n")

    def quote(self, node: LexborNode) -> None:
        author = _clean_author(_value(node, self.engine.quote_author, set()))
        header = {n.mem_id for n in node.css(self.engine.quote_drop)} if self.engine.quote_drop else set()
        inner = _Writer(
            self.doc,
            self.engine,
            self.dropped | header,
            self.posts,
            self.quote_ids,
            [],
            self.rewrite_link,
            self.images,
        )
        inner.depth = self.depth + 1
        inner.children(node)
        text = squash(" ".join(inner.text + inner.quoted))
        if not text:
            return
        self.quoted.append(text)
        self.quotes.append(Quote(author=author, text=text))
        caption = f"<figcaption>{html_lib.escape(author)} said:</figcaption>" if author else ""
        self.out.append(f"<figure>{caption}<blockquote>{''.join(inner.out)}</blockquote></figure>")
        self.text.append("\n")

    def _start(self, node: LexborNode, name: str) -> str:
        allowed = ATTRIBUTES.get(name)
        if not allowed:
            return f"<{name}>"
        attrs = node.attributes
        values: dict[str, str] = {}
        if name in ("img", "source"):
            values.update(_image_sources(attrs))
        for key in allowed:
            value = attrs.get(key)
            if key not in values and value is not None:
                values[key] = value
        parts = [name]
        for key, value in sorted(values.items()):
            if key in ("href", "src", "cite"):
                url = _safe_url(self.doc, value)
                if url is None:
                    continue
                if (
                    key == "href"
                    and self.rewrite_link is not None
                    and url.startswith(("http://", "https://"))
                ):
                    url = self.rewrite_link(url)
                value = url
            elif key == "srcset":
                continue  # the src is enough for a post's picture
            parts.append(f'{key}="{html_lib.escape(value, quote=True)}"')
        if name == "img" and not any(p.startswith("src=") for p in parts[1:]):
            return ""
        return "<" + " ".join(parts) + ">"


# -- structure ------------------------------------------------------------------------------------

#: How a thread found by structure is written: quotes as blockquotes and the common quote boxes,
#: their author from the attributes engines put on them or a `<cite>`.
STRUCTURE = Engine(
    name="structure",
    post="",
    author=(),
    date=(),
    body=(),
    quote="blockquote, div.quote, aside.quote, div.bbCodeQuote, div.bbcode_quote, div.quotebox",
    quote_author=("@data-author", "@data-username", "@data-quote", "cite", "[class*=uthor]"),
    quote_drop="cite, [class*=uthor], .quote-header, .quote-title",
)


def _structural_posts(
    doc: Document,
    rewrite_link: LinkRewriter | None,
    images: bool,
    found: StructuralThread | None = None,
) -> tuple[Post, ...]:
    """The posts `posts.find_thread` finds by structure (or those of `found`), written as a table
    engine's are."""
    if found is None:
        found = find_thread(doc)
    if found is None:
        return ()
    elements = doc.elements
    ids = {elements[index].mem_id for index in found.members}
    quote_ids = {node.mem_id for node in doc.tree.css(STRUCTURE.quote)}
    posts: list[Post] = []
    for part in found.posts:
        author = _clean_author(part.name)
        machine, shown = _node_date(elements[part.date]) if part.date >= 0 else (None, "")
        dropped = [elements[index].mem_id for index in part.dropped]
        if part.author >= 0:
            dropped.append(elements[part.author].mem_id)
        if part.date >= 0:
            dropped.append(elements[part.date].mem_id)
        body = elements[part.body]
        post = _post(
            doc,
            body,
            STRUCTURE,
            author,
            machine,
            shown,
            ids - {body.mem_id},
            quote_ids,
            rewrite_link,
            images,
            dropped,
        )
        if post is not None:
            posts.append(post)
    return tuple(posts)


#: Class and id words of a comment section: the cheap test before comments are sought.
_COMMENT_WORDS = ("comment", "repl", "respons", "discuss")


def _may_have_comments(doc: Document) -> bool:
    """Whether a page may hold a comment section: a class or id naming comments or replies, or
    `Comment` microdata. Most articles have none, and seeking posts reads every element."""
    names = " ".join(filter(None, {*doc.classes, *doc.ident})).lower()
    return (
        any(word in names for word in _COMMENT_WORDS)
        or doc.tree.css_first("[itemtype$='/Comment']") is not None
    )


def comments_for(
    doc: Document,
    selection: np.ndarray,
    *,
    rewrite_link: LinkRewriter | None = None,
    images: bool = True,
) -> tuple[Post, ...] | None:
    """The comments under an article: the posts found by structure (`posts.find_thread`) that
    start after the last token of the extraction's `selection`, each with its author, date and
    text, for the reader to show after the article, apart and collapsed (None: fewer than
    `MIN_POSTS`). Comments inside the selection are the extraction's and are not repeated."""
    chosen = np.flatnonzero(selection)
    if not len(chosen) or not _may_have_comments(doc):
        return None
    found = find_thread(doc, after=int(chosen[-1]))
    if found is None:
        return None
    posts = _structural_posts(doc, rewrite_link, images, found)
    return posts if sum(1 for post in posts if post.author) >= MIN_POSTS else None


# -- JSON-LD --------------------------------------------------------------------------------------

#: Deepest reply to a reply read (`_json_ld_posts`). Not a walk of the data (`schema.walk`): a chain
#: of replies under the keys that hold them, ending at an object that is no post.
MAX_REPLY_DEPTH = 20


def _ld_post(item: dict[str, Any]) -> Post | None:
    text = item.get("text") or item.get("articleBody") or ""
    if not isinstance(text, str) or not text.strip():
        return None
    paragraphs = [squash(p) for p in re.split(r"\n\s*\n|\r\n\s*\r\n", ld_text(text)) if p.strip()]
    fragment = "".join(f"<p>{html_lib.escape(p, quote=False)}</p>" for p in paragraphs)
    date = item.get("datePublished") or item.get("dateCreated")
    date = date if isinstance(date, str) else None
    return Post(
        author=_clean_author(ld_text(ld_people(item.get("author"), alternate=True)[0] or "")),
        date=date,
        date_text="",
        html=sanitize(fragment),
        text="\n".join(paragraphs),
    )


#: Where a page's posts are found in its JSON-LD: list items, a `@graph`, a page's `mainEntity`.
_LD_FOLLOW = ("@graph", "mainEntity")
#: Microdata of a thread's opening post (`_opening_post`: when the page has one, it is read).
_OPENING_MICRODATA = "[itemtype$='/DiscussionForumPosting'], [itemtype$='/Question']"


def _opening_post(doc: Document, replies: tuple[Post, ...]) -> Post | None:
    """The thread's opening post when the page marks only its replies up (microdata `Comment`s)
    and states the opening post in JSON-LD instead (an `Article` or `DiscussionForumPosting` with
    an author and its text): threads whose first post is the page's article.
    None when the microdata has an opening post of its own, when the JSON-LD names no author or
    text, or when its text is a reply's (already shown)."""
    if not replies or doc.tree.css_first(_OPENING_MICRODATA) is not None:
        return None
    shown = {squash(post.text)[:200] for post in replies}
    for index, raw in enumerate(doc.json_ld):
        if "articleBody" not in raw and '"text"' not in raw:
            continue
        for item in (found for data in script_values(doc, index) for found in objects(data, _LD_FOLLOW)):
            if not has_type(item, OPENING_POST_TYPES):
                continue
            post = _ld_post(item)
            if post is not None and post.author and squash(post.text)[:200] not in shown:
                return post
    return None


def _json_ld_posts(doc: Document) -> tuple[Post, ...]:
    """The posts a page states in JSON-LD: a `DiscussionForumPosting` (or `QAPage` question) and
    its `comment` / `suggestedAnswer` / `acceptedAnswer` lists, nested replies in order."""
    posts: list[Post] = []

    def add(item: dict[str, Any], depth: int) -> None:
        if depth > MAX_REPLY_DEPTH or not has_type(item, FORUM_POST_TYPES):
            return
        post = _ld_post(item)
        if post is not None:
            posts.append(post)
        for key in ("acceptedAnswer", "suggestedAnswer", "comment"):
            replies = item.get(key)
            for reply in replies if isinstance(replies, list) else [replies]:
                if isinstance(reply, dict):
                    add(reply, depth + 1)

    for index, raw in enumerate(doc.json_ld):
        if not any(
            name in raw for name in ("DiscussionForumPosting", "Comment", "Question", "SocialMediaPosting")
        ):
            continue
        for item in (found for data in script_values(doc, index) for found in objects(data, _LD_FOLLOW)):
            add(item, 0)
        if len(posts) >= MIN_POSTS:
            break
    return tuple(posts)


# -- where the posts are, for the extractors --------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PostParts:
    """Where a thread's posts lie in a `Document`, as indices into `doc.elements`: each post's
    element, its body, its author and date elements (`heads`), and what inside a body is not the
    post (`dropped`: signatures, reaction and vote bars, edit notes, as the thread view drops)."""

    engine: str
    posts: tuple[int, ...]
    bodies: tuple[int, ...]
    heads: tuple[int, ...]
    dropped: tuple[int, ...]


def _first_node(top: LexborNode, selectors: Iterable[str], posts: set[int]) -> LexborNode | None:
    """The first element of `selectors` inside the post `top` that shows text ("@" entries, which
    name attributes of the post itself, are skipped: they are no element of the page's text)."""
    for selector in selectors:
        if selector.startswith("@"):
            continue
        for node in _own(top, selector, posts):
            if squash(node.text(deep=True) or ""):
                return node
    return None


#: Microdata that says the page is a discussion (not `Comment`, which articles carry too, nor
#: `Question`, which FAQ sections carry).
_FORUM_MICRODATA = "[itemtype$='/DiscussionForumPosting']"


def _engine_parts(doc: Document, engine: Engine, index: dict[int, int]) -> tuple[PostParts, int]:
    """The parts of the posts `engine`'s markup finds, and how many of them have an author."""
    nodes = list({node.mem_id: node for node in doc.tree.css(engine.post)}.values())
    ids = {node.mem_id for node in nodes}
    drop = ", ".join(filter(None, (COMMON_DROP, engine.drop)))
    posts: list[int] = []
    bodies: list[int] = []
    heads: list[int] = []
    dropped: list[int] = []
    authored = 0
    for node in nodes:
        body = _own_first(node, engine.body, ids)
        if body is None or node.mem_id not in index or body.mem_id not in index:
            continue
        posts.append(index[node.mem_id])
        bodies.append(index[body.mem_id])
        author = _first_node(node, engine.author, ids)
        authored += author is not None or bool(_value(node, engine.author, ids))
        for head in (author, _first_node(node, engine.date, ids)):
            if head is not None and head.mem_id in index:
                heads.append(index[head.mem_id])
        dropped.extend(index[part.mem_id] for part in body.css(drop) if part.mem_id in index)
    return PostParts(engine.name, tuple(posts), tuple(bodies), tuple(heads), tuple(dropped)), authored


def post_parts(
    doc: Document, discussion: bool = False, class_markers: bool | None = None
) -> PostParts | None:
    """The parts of the thread's posts, read as `read_thread` reads them (the engine whose markup
    the page carries first, then every engine; the one finding the most posts with an author wins),
    without writing any post out. Only on a page that carries a known engine's markup
    (`detect_engine`: a substring test on a page without one of `MARKER_WORDS`), that says it is a
    discussion (`discussion`: its JSON-LD, as the caller read it) or whose microdata does
    (`DiscussionForumPosting`); on a page without an engine's markup, the posts must name their
    authors (an FAQ's questions and answers do not). None: no such page, or fewer than `MIN_POSTS`
    posts. `class_markers`: as `has_markers` takes it."""
    named = detect_engine(doc) if has_markers(doc, class_markers) else None
    if named is None and not discussion and doc.tree.css_first(_FORUM_MICRODATA) is None:
        return None
    index = {node.mem_id: position for position, node in enumerate(doc.elements)}
    best: PostParts | None = None
    best_key = (0, 0)
    for engine in [e for e in ENGINES if e.name == named] + [e for e in ENGINES if e.name != named]:
        parts, authored = _engine_parts(doc, engine, index)
        key = (authored, len(parts.posts))
        if key > best_key:
            best, best_key = parts, key
        if engine.name == named and key[1] >= MIN_POSTS and key[0] == key[1]:
            break
    least = (0 if named else MIN_POSTS, MIN_POSTS)
    if best is not None and best_key[0] >= least[0] and best_key[1] >= least[1]:
        return best
    return _ld_parts(doc) if discussion else None


#: Words of a post's start and end looked for in the page's text (`_ld_parts`).
_LD_MATCH_WORDS = 8


def _ld_parts(doc: Document) -> PostParts | None:
    """The posts of the page's JSON-LD (`_json_ld_posts`, when `MIN_POSTS` of them name an author)
    found in its text: each post's body is the innermost element holding the first and the last
    `_LD_MATCH_WORDS` words of its text, in page order. Google's forum structured data states each
    post's text, so the page says which of its text is a post even in markup no engine here reads.
    The body stands for the whole post (no author or date element is known)."""
    posts = _json_ld_posts(doc)
    if sum(1 for post in posts if post.author) < MIN_POSTS:
        return None
    t = doc.tokens
    visible = [i for i in np.flatnonzero((t.kind == TEXT) & (t.chars > 0)).tolist() if t.element[i] >= 0]
    pieces = [squash(t.text[i]) for i in visible]
    offsets = np.cumsum([0] + [len(piece) + 1 for piece in pieces[:-1]])
    page = " ".join(pieces)
    bodies: list[int] = []
    cursor = 0
    for post in posts:
        words = post.text.split()
        head, tail = " ".join(words[:_LD_MATCH_WORDS]), " ".join(words[-_LD_MATCH_WORDS:])
        first = page.find(head, cursor)
        last = page.find(tail, first) if first >= 0 else -1
        if first < 0 or last < 0:
            continue
        cursor = last + len(tail)
        start = int(t.element[visible[int(np.searchsorted(offsets, first, side="right")) - 1]])
        end = int(t.element[visible[int(np.searchsorted(offsets, cursor - 1, side="right")) - 1]])
        bodies.append(_common_ancestor(doc, start, end))
    if len(bodies) < MIN_POSTS:
        return None
    return PostParts("json-ld", tuple(bodies), tuple(bodies), (), ())


def _common_ancestor(doc: Document, first: int, second: int) -> int:
    """The innermost element holding both elements (by index into `doc.elements`)."""
    ancestors = set()
    element = first
    while element >= 0:
        ancestors.add(element)
        element = int(doc.parent[element])
    element = second
    while element >= 0 and element not in ancestors:
        element = int(doc.parent[element])
    return max(element, 0)
