"""`auto`'s thread rules: on a forum engine's thread every post is kept, the rest of the page not."""

from __future__ import annotations

import numpy as np
import pytest

from readerproxy import extract
from readerproxy.engine.extractors.auto import first_extractor
from readerproxy.engine.extractors.learned import table as learned_table
from readerproxy.engine.extractors.learned.rules import (
    thread_extras,
    thread_outside,
    thread_parts,
    thread_posts,
)
from readerproxy.engine.extractors.learned.table import POST_RULES, post_rule
from readerproxy.engine.learn.blocks import page_blocks
from readerproxy.engine.parse.document import parse
from readerproxy.engine.views.thread import post_parts
from readerproxy.engine.views.thread import thread_posts as thread_view_posts
from readerproxy.research.training.labels import block_texts

POSTS = [
    (
        "Ana",
        "2024-03-01T10:00:00",
        "Fri Mar 01, 2024 10:00 am",
        "Our well pump trips the breaker every "
        "morning since the frost. The pump is eleven years old and the pressure switch was replaced last "
        "spring. Has anyone seen a pump that only fails in the cold, and what did you check first?",
    ),
    ("Bruno", "2024-03-01T11:20:00", "Fri Mar 01, 2024 11:20 am", "Check the heat tape on the pipe."),
    (
        "Chidi",
        "2024-03-01T12:05:00",
        "Fri Mar 01, 2024 12:05 pm",
        "Cold starts draw more current: a "
        "capacitor that is weak in the cold will trip a breaker that holds in summer. Measure the start "
        "capacitor before you replace anything else.",
    ),
    ("Ana", "2024-03-02T09:15:00", "Sat Mar 02, 2024 9:15 am", "Thanks, it was the capacitor."),
]


def _post(number: int, author: str, iso: str, shown: str, text: str) -> str:
    # phpBB puts the signature after the post's content; a theme may put it inside (the last post).
    signature = (
        f'<div id="sig{number}" class="signature">{author}\'s workshop: lathes, pumps and a dog.</div>'
    )
    inside = number == len(POSTS) - 1
    return f"""<div id="p{number}" class="post has-profile bg{number % 2 + 1}"><div class="inner">
<dl class="postprofile"><dt><a href="/memberlist.php?u={number}" class="username">{author}</a></dt>
<dd class="profile-rank">Well-known member</dd><dd class="profile-posts">Posts: {4000 + number}</dd>
<dd class="profile-joined">Joined: Dec 11, 2021</dd></dl>
<div class="postbody"><div id="post_content{number}"><h3><a href="#p{number}">Re: Well pump</a></h3>
<ul class="post-buttons"><li><a href="/posting.php?p={number}" class="button">Reply with quote</a></li></ul>
<p class="author"><a href="#p{number}">Post</a> by <strong><a href="/u/{number}" class="username">{author}</a>
</strong> &raquo; <time datetime="{iso}">{shown}</time></p>
<div class="content">{text}{signature if inside else ""}</div>{"" if inside else signature}
</div></div></div></div>"""


THREAD = f"""<html><head><title>Well pump trips the breaker in the cold - Home Repair Forum</title></head>
<body><div id="wrap"><div class="navbar"><ul><li><a href="/">Board index</a></li>
<li><a href="/viewforum.php?f=3">Plumbing</a></li><li><a href="/faq">FAQ</a></li></ul></div>
<h2 class="topic-title"><a href="/viewtopic.php?t=9">Well pump trips the breaker in the cold</a></h2>
<div class="action-bar"><a class="button" href="/posting.php">Post Reply</a> 4 posts</div>
{"".join(_post(i, *post) for i, post in enumerate(POSTS))}
<div class="panel"><h3>Similar topics</h3><ul>{
    "".join(
        f'<li><a href="/viewtopic.php?t={20 + i}">Pressure tank question number {i}</a> in Plumbing '
        f"by someone, 3 replies, last post by a neighbour of the forum</li>"
        for i in range(6)
    )
}</ul></div>
<div class="copyright">Powered by phpBB® Forum Software © phpBB Limited</div></div></body></html>"""


def _blocks(html: str):  # type: ignore[no-untyped-def]
    doc = parse(html)
    extractor, params = first_extractor()
    return doc, page_blocks(doc, extractor.run(doc, params))


def test_post_parts_finds_each_post_its_body_author_date_and_signature() -> None:
    doc = parse(THREAD)
    parts = post_parts(doc)
    assert parts is not None and parts.engine == "phpbb" and len(parts.posts) == len(POSTS)
    assert [doc.classes[body] for body in parts.bodies] == ["content"] * len(POSTS)
    # What the thread view drops inside a body: the signature inside the last post's content.
    assert [doc.ident[part] for part in parts.dropped] == [f"sig{len(POSTS) - 1}"]
    # An author and a date per post, as the thread view reads them.
    assert len(parts.heads) == 2 * len(POSTS)
    assert [post.author for post in thread_view_posts(doc)] == [author for author, *_ in POSTS]


def test_thread_rules_find_the_posts_the_extras_and_what_follows() -> None:
    doc, blocks = _blocks(THREAD)
    texts = [" ".join(text.split()) for text in block_texts(doc, blocks)]
    kept = thread_posts(doc, blocks, thread_parts(doc, blocks.features))
    extras = thread_extras(doc, blocks, thread_parts(doc, blocks.features))
    outside = thread_outside(doc, blocks, thread_parts(doc, blocks.features))
    for *_, body in POSTS:
        (index,) = [i for i, text in enumerate(texts) if text.startswith(body[:30])]
        assert kept[index] and not extras[index] and not outside[index]
    bylines = [i for i, text in enumerate(texts) if text.startswith("Post by")]
    assert len(bylines) == len(POSTS) and kept[bylines].all()
    signatures = np.array(["workshop: lathes" in text for text in texts])
    profile = np.array([text.startswith(("Posts:", "Joined:", "Well-known", "Reply with")) for text in texts])
    assert signatures.sum() == len(POSTS) and extras[signatures].all() and not kept[signatures].any()
    assert profile.sum() >= 3 * len(POSTS) and extras[profile].all() and not kept[profile].any()
    similar = np.array([text.startswith(("Pressure tank", "Similar topics", "Powered by")) for text in texts])
    assert similar.sum() == 8 and outside[similar].all() and not (kept | extras)[similar].any()
    # Before the first post: left to the trees.
    title = [i for i, text in enumerate(texts) if text.startswith("Well pump trips")]
    assert not (kept | extras | outside)[title].any()


def test_auto_keeps_every_post_and_drops_signatures_badges_and_the_similar_list() -> None:
    text = extract(THREAD, algorithm="auto").text
    for author, _, shown, body in POSTS:
        assert body in text and author in text and shown in text
    for extra in (
        "workshop: lathes",
        "Posts: 4001",
        "Joined: Dec",
        "Reply with quote",
        "Pressure tank",
        "phpBB",
    ):
        assert extra not in text, extra
    # Each rule is a row of POST_RULES with an off value, so `--ablate` can turn it off; off, the
    # page reads differently (the rules are not idle on it).
    rules = {rule.name: rule for rule in POST_RULES}
    for name in ("thread_posts", "thread_extras", "thread_outside"):
        assert rules[name].off is False
    off = {"keep_thread_posts": "false", "cut_thread_extras": "false", "cut_thread_outside": "false"}
    assert extract(THREAD, algorithm="auto", **off).text != text


ARTICLE = f"""<html><head><title>Frost and well pumps</title>
<meta property="og:type" content="article"></head><body><article><h1>Frost and well pumps</h1>
{
    "".join(
        f"<p>Paragraph {i}: a pump that trips its breaker in the cold often has a weak start capacitor, "
        f"which draws more current when the motor oil is thick.</p>"
        for i in range(8)
    )
}
</article><section id="comments"><h2>3 Comments</h2>{
    "".join(
        f'<div class="comment" itemscope itemtype="https://schema.org/Comment"><span itemprop="author">'
        f'Reader {i}</span><div itemprop="text">Reader {i} says thanks for the article.</div></div>'
        for i in range(3)
    )
}</section></body></html>"""

FAQ = f"""<html><head><title>Pump FAQ</title></head><body><main><h1>Pump questions</h1>{
    "".join(
        f'<div itemscope itemtype="https://schema.org/Question"><h3 itemprop="name">Question {i}?</h3>'
        f'<div itemprop="acceptedAnswer" itemscope itemtype="https://schema.org/Answer">'
        f'<div itemprop="text">Answer {i}: check the capacitor, the switch and the wiring first.</div>'
        f"</div></div>"
        for i in range(6)
    )
}</main></body></html>"""


def test_pages_without_a_thread_are_left_alone() -> None:
    # An article with microdata comments, an FAQ in Question/Answer microdata: no forum engine's
    # markup, no discussion microdata, no authored posts; the rules find nothing and change nothing.
    off = {"keep_thread_posts": "false", "cut_thread_extras": "false", "cut_thread_outside": "false"}
    for page in (ARTICLE, FAQ):
        assert post_parts(parse(page)) is None
        doc, blocks = _blocks(page)
        assert not (
            thread_posts(doc, blocks, thread_parts(doc, blocks.features))
            | thread_extras(doc, blocks, thread_parts(doc, blocks.features))
            | thread_outside(doc, blocks, thread_parts(doc, blocks.features))
        ).any()
        assert extract(page, algorithm="auto").text == extract(page, algorithm="auto", **off).text


def test_discussion_microdata_without_an_engine_is_read_when_posts_name_authors() -> None:
    posts = "".join(
        f'<div class="reply" itemprop="comment" itemscope itemtype="https://schema.org/Comment">'
        f'<div class="who"><span itemprop="author">Member {i}</span><span>{100 + i} posts</span></div>'
        f'<time itemprop="datePublished" datetime="2024-05-0{i + 1}">May {i + 1}</time>'
        f'<div itemprop="text">Reply {i}: I had the same trouble with my pump last winter.</div>'
        f'<div class="tools">Like Quote Report</div></div>'
        for i in range(4)
    )
    page = f"""<html><head><title>Pump trouble</title></head><body>
<div itemscope itemtype="https://schema.org/DiscussionForumPosting"><h1 itemprop="headline">Pump trouble</h1>
{posts}</div><div class="related"><h3>More threads</h3><p>Another thread about tanks and taps.</p></div>
</body></html>"""
    parts = post_parts(parse(page))
    assert parts is not None and parts.engine == "microdata" and len(parts.posts) == 4
    text = extract(page, algorithm="auto").text
    for i in range(4):
        assert f"Reply {i}: I had the same trouble" in text and f"Member {i}" in text
    assert "Like Quote Report" not in text and "104 posts" not in text and "Another thread" not in text


REPLIES = [
    ("Dana", "The gasket on my pressure tank split in the first frost, and the pump cycled all night long."),
    ("Emeka", "Mine did the same until I wrapped the tank in an old sleeping bag and taped the seams."),
    ("Farah", "Replace the gasket in spring when the tank is empty; it takes twenty minutes with a wrench."),
]


def ld_thread(head: str = "") -> str:
    comments = ", ".join(
        f'{{"@type": "Comment", "author": {{"@type": "Person", "name": "{name}"}}, "text": "{text}"}}'
        for name, text in REPLIES
    )
    ld = (
        '{"@context": "https://schema.org", "@type": "DiscussionForumPosting", "headline": "Tank gasket",'
        ' "author": {"@type": "Person", "name": "Dana"}, "text": "' + REPLIES[0][1] + '",'
        f' "comment": [{comments}]}}'
    )
    cards = "".join(
        f'<div class="c-msg"><div class="c-msg__who"><b>{name}</b> · 2 days ago</div>'
        f'<div class="c-msg__text"><p>{text}</p></div><div class="c-msg__tools">Like · Reply · Share</div></div>'
        for name, text in [REPLIES[0], *REPLIES]
    )
    return f"""<html><head><title>Tank gasket</title>{head}
<script type="application/ld+json">{ld}</script></head><body><main><h1>Tank gasket</h1>{cards}
<aside class="c-more"><h3>Hot threads</h3><p>Which heat tape lasts longest in a cold cellar?</p>
<p>Best way to winterise an outdoor tap without a shut-off valve?</p></aside></main></body></html>"""


def test_json_ld_posts_are_found_in_markup_no_engine_reads() -> None:
    page = ld_thread()
    assert post_parts(parse(page)) is None  # no engine's markup: the page's JSON-LD must be asked for
    parts = post_parts(parse(page), discussion=True)
    assert parts is not None and parts.engine == "json-ld" and len(parts.bodies) == len(REPLIES) + 1
    doc = parse(page)
    assert {doc.classes[body] for body in parts.bodies} <= {"c-msg__text", None}
    text = extract(page, algorithm="auto").text
    for _, reply in REPLIES:
        assert reply in text
    assert "Hot threads" not in text and "heat tape lasts" not in text
    # The same JSON-LD on a page that says it is an article: its readers' comments, not a thread.
    article = ld_thread('<meta property="og:type" content="article">')
    off = {"keep_thread_posts": "false", "cut_thread_extras": "false", "cut_thread_outside": "false"}
    assert extract(article, algorithm="auto").text == extract(article, algorithm="auto", **off).text


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("thread_posts", {"threshold": "1", "heuristic_threshold": "1"}),  # trees keeping nothing
        ("thread_extras", {"threshold": "0"}),  # trees keeping everything
        ("thread_outside", {"threshold": "0"}),
    ],
)
def test_each_thread_rule_is_a_row_of_the_table_that_runs(
    monkeypatch: pytest.MonkeyPatch, name: str, params: dict[str, str]
) -> None:
    rule = post_rule(name)
    on = extract(THREAD, algorithm="auto", **params).text
    off = extract(THREAD, algorithm="auto", **{**params, rule.parameter: rule.off_text}).text
    assert on != off  # the rule fires on the thread
    # Taken out of the table, the page reads as with the rule's parameter off (what --ablate runs).
    monkeypatch.setattr(learned_table, "POST_RULES", tuple(r for r in POST_RULES if r.name != name))
    assert extract(THREAD, algorithm="auto", **params).text == off
