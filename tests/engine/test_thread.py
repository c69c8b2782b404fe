"""The thread view's reading of forum pages (`readerproxy.engine.views.thread`): every post with its author,
date and own text; quotes attributed and set apart; signatures, badges and reactions dropped.

Small pages in each engine's markup pin the rules; real wcxb-dev forum pages of several engines
(XenForo, phpBB, Discourse, vBulletin, Stack Exchange, Invision, old Reddit, JSON-LD) check that every
post keeps its author.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from readerproxy.api import to_text
from readerproxy.engine.elements import THREAD_MARKER_BIT, features_of
from readerproxy.engine.parse.document import parse
from readerproxy.engine.pipeline import process
from readerproxy.engine.views.thread import (
    MARKER_WORDS,
    Post,
    has_markers,
    read_thread,
    thread_for,
    thread_posts,
)
from readerproxy.web.templating import Renderer, preferences


def posts_of(html: str, url: str = "https://forum.example/t/1") -> tuple[Post, ...]:
    return thread_posts(parse(html, url))


XENFORO = """<html><body><div class="p-body">
<article class="message message--post" data-author="Ana" id="js-post-1">
  <div class="message-userDetails"><h4 class="message-name"><a class="username">Ana</a></h4>
    <h5 class="userTitle">Well-known member</h5></div>
  <div class="message-attribution-main"><time class="u-dt" datetime="2024-03-01T10:00:00+0000">Mar 1, 2024</time></div>
  <div class="message-body"><div class="bbWrapper">Has anyone tried the new firmware? It bricked mine. <img class="smilie" src="/smilies/frown.png" alt=":(" /></div></div>
  <aside class="message-signature"><div class="bbWrapper">My rig: 3 GPUs and a dream</div></aside>
  <div class="reactionsBar">Ben, Cleo and 4 others</div>
</article>
<article class="message message--post" data-author="Ben" id="js-post-2">
  <div class="message-userDetails"><h4 class="message-name"><a class="username">Ben</a></h4>
    <h5 class="userTitle">Well-known member</h5></div>
  <div class="message-attribution-main"><time class="u-dt" datetime="2024-03-01T11:00:00+0000">Mar 1, 2024</time></div>
  <div class="message-body"><div class="bbWrapper">
    <blockquote class="bbCodeBlock bbCodeBlock--expandable bbCodeBlock--quote" data-quote="Ana">
      <div class="bbCodeBlock-title"><a href="/goto/1">Ana said:</a></div>
      <div class="bbCodeBlock-content"><div class="bbCodeBlock-expandContent">It bricked mine.</div>
      <div class="bbCodeBlock-expandLink"><a>Click to expand...</a></div></div>
    </blockquote>
    Hold the power button for 30 seconds. <script>alert(1)</script><a href="javascript:alert(1)" onclick="x()">recovery</a>
  </div></div>
  <form class="js-quickReply"><textarea>Write your reply...</textarea><button>Post reply</button></form>
</article>
</div></body></html>"""


def test_xenforo_posts_authors_dates_and_attributed_quotes() -> None:
    posts = posts_of(XENFORO)
    assert [p.author for p in posts] == ["Ana", "Ben"]
    assert posts[0].date == "2024-03-01T10:00:00+0000" and posts[0].date_text == "Mar 1, 2024"
    assert posts[0].text.endswith("It bricked mine. :(") and "<img" not in posts[0].html  # a smiley is text
    assert posts[1].quotes[0].author == "Ana" and posts[1].quotes[0].text == "It bricked mine."
    assert "<figure><figcaption>Ana said:</figcaption><blockquote>" in posts[1].html
    every = " ".join(p.html + p.text for p in posts)
    for dropped in (
        "Well-known member",
        "My rig",
        "and 4 others",
        "Click to expand",
        "Post reply",
        "Write your reply",
    ):
        assert dropped not in every
    assert "<script" not in every and "javascript:" not in every and "onclick" not in every
    # The quote's header is replaced by the attribution, not kept twice.
    assert posts[1].text.count("Ana said") == 0 and posts[1].html.count("said:") == 1


PHPBB = """<html><body>
<div id="p1" class="post has-profile bg2"><div class="inner">
  <dl class="postprofile"><dt><a class="username-coloured" href="/memberlist.php?u=2">Ana</a></dt><dd>Posts: 12</dd></dl>
  <div class="postbody"><h3>Boot fails</h3>
    <p class="author"><a href="/p1">Post</a> by <strong><a class="username-coloured">Ana</a></strong> &raquo; <time datetime="2023-12-17T11:23:00+00:00">Sun Dec 17, 2023 11:23 am</time></p>
    <div class="content">My Pi does not boot after the update.</div>
    <div class="signature">Sent from my toaster</div>
  </div></div></div>
<div id="p2" class="post has-profile bg1"><div class="inner">
  <div class="postbody">
    <p class="author">by <strong><a class="username">Ben</a></strong> &raquo; <time datetime="2023-12-17T12:00:00+00:00">Sun Dec 17, 2023 12:00 pm</time></p>
    <div class="content"><blockquote><div><cite><a href="/u/2">Ana</a> wrote: <a href="/p1">&uarr;</a></cite>My Pi does not boot</div></blockquote>Reflash the card.</div>
  </div></div></div>
</body></html>"""


def test_phpbb_authors_and_cite_quotes() -> None:
    posts = posts_of(PHPBB)
    assert [p.author for p in posts] == ["Ana", "Ben"]
    assert posts[1].quotes[0].author == "Ana"
    assert posts[1].quotes[0].text == "My Pi does not boot"
    assert "Reflash the card." in posts[1].text and "wrote" not in posts[1].html
    assert "Sent from my toaster" not in posts[0].html and "Posts: 12" not in posts[0].text


DISCOURSE = """<html><body><div id="main-outlet">
<div id="post_1" class="topic-body crawler-post">
  <div class="crawler-post-meta"><span class="creator" itemprop="author" itemscope itemtype="http://schema.org/Person">
    <a itemprop="url" href="/u/ana"><span itemprop="name">ana</span></a></span>
    <span class="crawler-post-infos"><time datetime="2024-09-05T23:15:57Z" class="post-time">September 5, 2024, 11:15pm</time></span></div>
  <div class="post" itemprop="text"><p>Is the API down?</p></div>
  <div itemprop="interactionStatistic"><span class="post-likes">3 Likes</span></div>
</div>
<div id="post_2" itemprop="comment" itemscope itemtype="http://schema.org/Comment" class="topic-body crawler-post">
  <div class="crawler-post-meta"><span class="creator" itemprop="author" itemscope itemtype="http://schema.org/Person">
    <a itemprop="url" href="/u/ben"><span itemprop="name">ben</span></a></span>
    <span class="crawler-post-infos"><time itemprop="datePublished" datetime="2024-09-05T23:26:42Z" class="post-time">September 5, 2024, 11:26pm</time></span></div>
  <div class="post" itemprop="text"><aside class="quote" data-username="ana" data-post="1"><div class="title">ana:</div>
    <blockquote><p>Is the API down?</p></blockquote></aside><p>Works for me.</p></div>
</div></div></body></html>"""


def test_discourse_crawler_view() -> None:
    engine, posts = read_thread(parse(DISCOURSE, "https://forum.example/t/x/1"))
    assert engine == "discourse"
    assert [p.author for p in posts] == ["ana", "ben"]
    assert posts[1].quotes[0].author == "ana" and "Works for me." in posts[1].text
    assert "3 Likes" not in posts[0].text


VBULLETIN = """<html><body><ol id="posts">
<li class="postbitlegacy postbitim postcontainer" id="post_1">
  <div class="posthead"><span class="postdate"><span class="date">11-29-2024,&nbsp;<span class="time">09:03 AM</span></span></span></div>
  <div class="userinfo"><a class="username" href="/u/1"><strong>HOSTLAR</strong></a><span class="usertitle">Junior Guru</span></div>
  <div class="postbody"><div class="content"><div id="post_message_1"><blockquote class="postcontent restore">Which panel do you use?</blockquote></div></div></div>
</li>
<li class="postbitlegacy postbitim postcontainer" id="post_2">
  <div class="posthead"><span class="postdate"><span class="date">11-29-2024,&nbsp;<span class="time">01:50 PM</span></span></span></div>
  <div class="userinfo"><a class="username" href="/u/2"><strong>1Ali</strong></a></div>
  <div class="postbody"><div class="content"><div id="post_message_2"><blockquote class="postcontent restore">
    <div class="bbcode_container"><div class="bbcode_quote"><div class="quote_container">
      <div class="bbcode_postedby">Originally Posted by <strong>HOSTLAR</strong></div>
      <div class="message">Which panel do you use?</div></div></div></div>
    cPanel, always.</blockquote></div></div></div>
</li></ol></body></html>"""


def test_vbulletin_postcontainers() -> None:
    posts = posts_of(VBULLETIN)
    assert [p.author for p in posts] == ["HOSTLAR", "1Ali"]
    assert posts[0].date_text.startswith("11-29-2024")
    assert posts[1].quotes[0].author == "HOSTLAR" and "cPanel, always." in posts[1].text
    assert "Junior Guru" not in posts[0].text
    # vBulletin 3's div rows (flyertalk's theme): the date in the post's header row
    rows = VBULLETIN.replace(
        '<div class="posthead"><span class="postdate"><span class="date">',
        '<div class="trow thead"><div class="tcell">',
    )
    rows = rows.replace("</span></span></span></div>", "</span></div></div>")
    assert [p.date_text[:10] for p in posts_of(rows)] == ["11-29-2024", "11-29-2024"]


STACK_EXCHANGE = """<html><body><div id="question" class="question js-question">
  <div class="post-layout"><div class="s-prose js-post-body" itemprop="text"><p>How do I undo a commit?</p></div>
  <div class="post-signature owner"><div class="user-action-time">asked <span title="2014-03-28 15:35:05Z" class="relativetime">Mar 28, 2014</span></div>
    <div class="user-details"><a href="/users/1/ana">Ana</a><div class="-flair"><span class="reputation-score">1,234</span></div></div></div></div>
</div>
<div id="answers"><div id="answer-2" class="answer js-answer">
  <div class="post-layout"><div class="s-prose js-post-body" itemprop="text"><p>Use <code>git reset HEAD~</code>.</p></div>
  <div class="post-signature"><div class="user-action-time">edited <span class="relativetime" title="2015-01-01 00:00:00Z">Jan 1, 2015</span></div>
    <div class="user-details"><a href="/users/9/cleo">Cleo</a></div></div>
  <div class="post-signature"><div class="user-action-time">answered <span title="2014-03-28 16:00:00Z" class="relativetime">Mar 28, 2014</span></div>
    <div class="user-details"><a href="/users/2/ben">Ben</a></div></div></div>
</div></div></body></html>"""


def test_stack_exchange_question_and_answers_by_their_owners() -> None:
    posts = posts_of(STACK_EXCHANGE)
    assert [p.author for p in posts] == ["Ana", "Ben"]  # the answerer, not the editor
    assert "1,234" not in posts[0].text


OLD_REDDIT = """<html><body><div class="sitetable nestedlisting">
<div class="thing comment" data-author="ana" id="thing_t1_a"><div class="entry">
  <p class="tagline"><a class="author">ana</a> <span class="score">12 points</span> <time datetime="2026-03-04T18:58:00+00:00">17 hours ago</time></p>
  <form class="usertext"><div class="usertext-body"><div class="md"><p>First!</p></div></div></form></div>
  <div class="child"><div class="sitetable">
    <div class="thing comment" data-author="ben" id="thing_t1_b"><div class="entry">
      <p class="tagline"><a class="author">ben</a> <time datetime="2026-03-04T19:34:00+00:00">16 hours ago</time></p>
      <div class="usertext-body"><div class="md"><blockquote><p>First!</p></blockquote><p>Second.</p></div></div></div></div>
  </div></div>
</div></div></body></html>"""


def test_old_reddit_nested_comments_in_order_each_with_its_own_text() -> None:
    posts = posts_of(OLD_REDDIT)
    assert [p.author for p in posts] == ["ana", "ben"]
    assert posts[0].text == "First!"  # the reply is its own post, not part of its parent
    assert posts[1].date == "2026-03-04T19:34:00+00:00" and posts[1].date_text == ""  # "16 hours ago" ages


JSON_LD = {
    "@context": "https://schema.org",
    "@type": "DiscussionForumPosting",
    "headline": "Best tent?",
    "author": {"@type": "Person", "name": "Ana"},
    "datePublished": "2024-06-14T10:00:00Z",
    "text": "Looking for a two-person tent.\n\nBudget is small.",
    "comment": [
        {
            "@type": "Comment",
            "author": {"name": "Ben"},
            "datePublished": "2024-06-14T11:00:00Z",
            "text": "Get a used one.",
        },
        {"@type": "Comment", "author": [{"name": "Cleo"}], "text": "<b>Borrow</b> one."},
    ],
}


def test_json_ld_discussion_forum_posting_and_its_comments() -> None:
    html = f'<html><head><script type="application/ld+json">{json.dumps(JSON_LD)}</script></head><body><p>x</p></body></html>'
    engine, posts = read_thread(parse(html, "https://forum.example/t/1"))
    assert engine == "json-ld"
    assert [p.author for p in posts] == ["Ana", "Ben", "Cleo"]
    assert posts[0].html == "<p>Looking for a two-person tent.</p><p>Budget is small.</p>"
    assert "<b>" not in posts[2].html and "&lt;b&gt;" in posts[2].html  # text is text


def test_json_ld_posts_show_the_characters_their_references_stand_for() -> None:
    stated = {
        "@type": "DiscussionForumPosting",
        "author": {"@type": "Person", "name": "Zo&#235;"},
        "text": "An SEO audit &quot;roadmap&quot; &amp;amp; a fee",
        "comment": [
            {"@type": "Comment", "author": {"name": f"R{i}"}, "text": f"Reply {i} it&#8217;s fine"}
            for i in range(3)
        ],
    }
    html = f'<html><head><script type="application/ld+json">{json.dumps(stated)}</script></head><body><p>x</p></body></html>'
    engine, posts = read_thread(parse(html, "https://forum.example/t/2"))
    assert engine == "json-ld"
    assert posts[0].author == "Zo\u00eb"
    assert posts[0].html == '<p>An SEO audit "roadmap" &amp; a fee</p>'
    assert posts[1].text == "Reply 0 it\u2019s fine"


def test_article_with_comments_is_no_thread_unless_a_forum() -> None:
    """Microdata comments under a blog post do not turn the post into a thread; a forum page does."""
    html = (
        "<html><body><article><h1>Story</h1><p>"
        + "Words of the story. " * 40
        + "</p></article>"
        + "".join(
            f'<div itemscope itemtype="https://schema.org/Comment"><span itemprop="author">C{i}</span>'
            f'<div itemprop="text">Nice story number {i}.</div></div>'
            for i in range(3)
        )
        + "</body></html>"
    )
    doc = parse(html, "https://blog.example/story")
    assert thread_for(doc, forum=False) is None
    assert [p.author for p in thread_for(doc, forum=True) or ()] == ["C0", "C1", "C2"]
    assert thread_for(parse("<html><body><p>Just one paragraph.</p></body></html>"), forum=True) is None


def test_an_opening_post_stated_in_json_ld_leads_the_microdata_replies() -> None:
    """warriorforum.com marks its replies up as microdata `Comment`s and its opening post only as the
    page's JSON-LD `Article`: the thread starts with it, by its author, not with the first reply."""
    article = {
        "@context": "https://schema.org",
        "@type": "Article",
        "headline": "Will this simple method work?",
        "author": {"@type": "Person", "name": "Shancock"},
        "datePublished": "2024-05-27T07:11:40",
        "articleBody": "So could it be as simple as this?\n\nWhere will I run into a snag?",
    }
    replies = "".join(
        f'<div itemscope itemtype="https://schema.org/Comment"><span itemprop="author">R{i}</span>'
        f'<div itemprop="text">Reply number {i}.</div></div>'
        for i in range(3)
    )
    head = f'<script type="application/ld+json">{json.dumps(article)}</script>'
    html = f"<html><head>{head}</head><body><article><p>So could it be as simple as this?</p></article>{replies}</body></html>"
    engine, posts = read_thread(parse(html, "https://forum.example/t/1"))
    assert engine == "microdata"
    assert [p.author for p in posts] == ["Shancock", "R0", "R1", "R2"]
    assert posts[0].date == "2024-05-27T07:11:40"
    assert posts[0].html == "<p>So could it be as simple as this?</p><p>Where will I run into a snag?</p>"
    # Microdata with an opening post of its own is read as it is; so is JSON-LD without an author.
    own = replies.replace("/Comment", "/DiscussionForumPosting", 1)
    assert [p.author for p in read_thread(parse(html.replace(replies, own)))[1]] == ["R0", "R1", "R2"]
    anonymous = html.replace(json.dumps(article), json.dumps({**article, "author": ""}))
    assert [p.author for p in read_thread(parse(anonymous))[1]] == ["R0", "R1", "R2"]


def test_article_posts_in_to_dict_and_the_reader_view() -> None:
    article = process(XENFORO, url="https://forum.example/threads/firmware.1/")
    result = article.to_dict()
    assert [p["author"] for p in result["posts"]] == ["Ana", "Ben"]
    assert result["posts"][1]["quotes"] == [{"author": "Ana", "text": "It bricked mine."}]
    page = Renderer().reader_page(result, preferences({}, {})[0])
    assert page.count('class="post') >= 2 and '<span class="post-author">Ana</span>' in page
    assert "<figcaption>Ana said:</figcaption>" in page
    assert '<span class="byline">Ana</span>' in page  # the thread is by its starter
    plain = process("<html><body><article><p>" + "An article. " * 60 + "</p></article></body></html>")
    assert plain.to_dict()["posts"] is None
    assert 'class="content thread"' not in Renderer().reader_page(plain.to_dict(), preferences({}, {})[0])


# -- real forum pages ------------------------------------------------------------------------------

#: wcxb-dev forum pages, by engine: (page id, engine read, first author, at least this many posts).
REAL_PAGES = (
    ("0513", "xenforo", "felixen", 15),
    ("4311", "xenforo", "SamuelMIz", 5),
    ("0535", "phpbb", "b.scherer", 10),
    ("0540", "phpbb", "Outer Armatonisdaristan", 20),
    ("0502", "discourse", "amondale", 8),
    ("0533", "vbulletin", "HOSTLAR", 15),
    ("0527", "vbulletin", "lowjhg", 10),
    ("2827", "stackexchange", "user447274", 2),
    ("0550", "invision", "Mr_Enigmatic", 8),
    ("0562", "reddit", "AutoModerator", 30),
    ("0544", "json-ld", "ColdJ", 20),
    ("0555", "fluxbb", "archuser38013", 20),
    ("0526", "microdata", "Shancock", 20),  # the opening post from JSON-LD, the replies from microdata
)


@pytest.fixture(scope="module")
def wcxb(shared_datasets: Path) -> Path:
    directory = shared_datasets / "wcxb-dev"
    if not directory.is_dir():
        pytest.skip("wcxb-dev is not in ../shared/datasets")
    return directory


@pytest.mark.parametrize(("page", "engine", "first", "at_least"), REAL_PAGES)
def test_real_forum_pages_keep_every_posts_author(
    wcxb: Path, page: str, engine: str, first: str, at_least: int
) -> None:
    domain = json.loads((wcxb / "metadata.json").read_text())["files"][page]["domain"]
    html = to_text((wcxb / "html" / f"{page}.html.gz").read_bytes())
    found, posts = read_thread(parse(html, f"https://{domain}/thread"))
    assert found == engine
    assert len(posts) >= at_least
    assert posts[0].author == first
    assert all(p.author for p in posts), [p.text[:40] for p in posts if not p.author]
    assert all(p.text for p in posts)
    assert len({(p.author, p.text) for p in posts}) == len(posts)  # no post read twice
    for post in posts:
        assert "<script" not in post.html and not re.search(r"<[^>]*\son\w+\s*=", post.html)


def test_real_forum_quotes_are_attributed(wcxb: Path) -> None:
    """On a XenForo and a phpBB thread, quotes name whom they quote and leave the "said:" line."""
    for page, quoted in (("0513", "spikeymike"), ("0540", "Minoa")):
        html = to_text((wcxb / "html" / f"{page}.html.gz").read_bytes())
        quotes = [q for p in thread_posts(parse(html, "https://forum.example/t")) for q in p.quotes]
        attributed = [q for q in quotes if q.author]
        assert len(attributed) >= 0.8 * len(quotes) > 0  # a bare [quote] names nobody
        assert quoted in {q.author for q in quotes}
        assert not any(q.author.endswith(("said", "wrote")) for q in quotes)


def test_has_markers_is_answered_once_per_document(monkeypatch: pytest.MonkeyPatch) -> None:
    """The marker test runs once per Document (the thread rules ask, then the metadata): a second
    question is answered from the first, whatever the caller says it knows."""
    doc = parse('<div class="message-inner bbWrapper">Hello there</div><p class="x">Other</p>')
    assert has_markers(doc)
    monkeypatch.setattr(doc, "classes", [None] * len(doc.classes))
    assert has_markers(doc) and has_markers(doc, class_markers=False)
    plain = parse('<div class="message-inner">Hello there</div>')
    assert not has_markers(plain)
    told = parse('<div class="entry">Hello there</div>')
    assert has_markers(told, class_markers=True)  # the caller's answer is the one kept


def test_auto_reads_thread_markers_from_the_heuristic_memo() -> None:
    """`heuristic.THREAD_MARKER_BIT` is set exactly on the elements whose class holds one of
    `MARKER_WORDS` as a substring (as `has_markers` searches the class text), so the thread rules
    decide from the memo as from the text."""
    html = (
        '<div class="outer"><div class="xpostbodyx">One</div><div class="post-body">Two</div>'
        '<span class="message-userDetails">Ana</span><p id="postbody">Three</p></div>'
    )
    doc = parse(html)
    bits = features_of(doc).class_words & THREAD_MARKER_BIT
    expected = [bool(c) and any(word in c for word in MARKER_WORDS) for c in doc.classes]
    assert (bits > 0).tolist() == expected
    assert sum(expected) == 2  # "xpostbodyx" and "message-userDetails"; an id does not count
