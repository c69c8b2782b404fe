"""Threads found by structure (`engine/views/posts.py`), read through `thread.read_thread` with no engine
table entry for the markup: Vanilla, bbPress, a comment list with its controls, and pages that hold
no thread (a list of topics, an article)."""

from __future__ import annotations

from pathlib import Path

import pytest

from readerproxy.engine.parse.document import parse
from readerproxy.engine.views import posts
from readerproxy.engine.views.posts import (
    DATE_TEXT,
    PROFILE_URL,
    find_thread,
    profile_url,
    reads_as_date,
)
from readerproxy.engine.views.thread import ENGINES, read_thread

THREADS = Path(__file__).parent.parent / "fixtures" / "threads"


def read(name: str) -> tuple[str, list]:
    doc = parse((THREADS / name).read_text(), "https://forum.example/t/1")
    engine, posts = read_thread(doc)
    return engine, list(posts)


def test_no_engine_table_entry_reads_these_fixtures() -> None:
    for name in ("vanilla.html", "bbpress.html"):
        doc = parse((THREADS / name).read_text(), "https://forum.example/t/1")
        assert read_thread(doc, structure=False)[1] == () or len(read_thread(doc, structure=False)[1]) < 2
        assert read_thread(doc, engines=ENGINES)[0] == "structure"


def test_vanilla_thread_reads_as_every_post_under_its_author() -> None:
    engine, posts = read("vanilla.html")
    assert engine == "structure"
    assert [p.author for p in posts] == ["marta_k", "ovenbird", "deglaze", "marta_k"]
    assert [p.date for p in posts] == [
        "2025-03-01T16:35:52+00:00",
        "2025-03-04T19:40:35+00:00",
        "2025-03-06T17:46:42+00:00",
        "2025-03-07T04:10:46+00:00",
    ]
    assert posts[0].text.startswith("I inherited my grandmother's cast iron pan")
    assert "keep it from going sticky" in posts[0].text
    # the quote is attributed and set apart, its header not read as the post's text
    assert [(q.author, q.text) for q in posts[2].quotes] == [("ovenbird", "Thin coats of flaxseed oil")]
    assert posts[2].text.startswith("Flaxseed flakes")
    assert "<figcaption>ovenbird said:</figcaption>" in posts[2].html


def test_controls_repeated_in_every_post_are_dropped() -> None:
    _, posts = read("vanilla.html")
    for post in posts:
        for control in ("Quote", "Like", "Flag"):
            assert control not in post.text.split()
        # nor the author's name and the date in the post's own text
        assert "March 2025" not in post.text
        assert not post.text.startswith(post.author)


def test_bbpress_thread_with_times_in_header_rows_reads_every_post() -> None:
    engine, posts = read("bbpress.html")
    assert engine == "structure"
    assert [p.author for p in posts] == ["harlan", "quartermaster", "wells"]
    assert [p.date_text for p in posts] == [
        "June 3, 2021 at 9:12 am",
        "June 3, 2021 at 11:40 am",
        "June 4, 2021 at 7:05 am",
    ]
    assert "out of the sun" in posts[0].text
    # the author's role sits in the author's box, not in the post
    assert all("Participant" not in p.text and "Moderator" not in p.text for p in posts)


TOPIC_LIST = """<html><body><main><h1>Kitchen</h1><ul class="topics">
{rows}
</ul></main></body></html>"""
ROW = (
    '<li class="topic"><a href="/t/{n}/a-topic-title-{n}">A topic title number {n} about pans and pots</a>'
    ' by <a href="/u/cook{n}">cook{n}</a> <time datetime="2025-03-0{n}T10:00:00Z">Mar {n}</time></li>'
)


def test_a_list_of_topics_is_no_thread() -> None:
    doc = parse(TOPIC_LIST.format(rows="\n".join(ROW.format(n=n) for n in range(1, 8))))
    assert find_thread(doc) is None


def test_an_article_without_replies_is_no_thread() -> None:
    doc = parse(
        "<html><body><article><h1>Title</h1><p>By <a href='/author/ana'>Ana</a>"
        " <time datetime='2025-01-02'>2 Jan 2025</time></p>"
        + "<p>A paragraph of the article that goes on for a while about something.</p>" * 8
        + "</article></body></html>"
    )
    assert find_thread(doc) is None


def test_profile_urls_and_date_texts() -> None:
    for url in (
        "/u/ana",
        "/members/ana.12/",
        "/profile/ana",
        "/@ana",
        "/~ana",
        "/user?id=ana",
        "memberlist.php?mode=viewprofile&u=2",
        "/forums/users/harlan/",
    ):
        assert PROFILE_URL.search(url), url
    for url in ("/t/123/topic", "/viewforum.php?id=4", "/discussion/88/best-way"):
        assert not PROFILE_URL.search(url), url


def test_profile_url_answers_as_the_pattern_in_any_case() -> None:
    """`profile_url` (the pattern without `re.I` on an ASCII address in lower case) answers as
    `PROFILE_URL` does, ASCII case aside, and searches a non-ASCII address with `re.I`'s own
    folding (the long s matches "s", the Kelvin sign "k")."""
    urls = ["/u/ana", "/Members/Ana.12/", "/PROFILE/x", "/@Ana?x=1", "/~ana/", "/USER?ID=7", "/t/123/topic"]
    urls += ["Memberlist.PHP?u=2", "/news/user", "/a/b?uid=", "/UſERS/ana", "/\u212aarl", "/users/Zoë"]
    for url in urls:
        for variant in (url, url.upper(), url.lower(), url.title()):
            assert profile_url(variant) == (PROFILE_URL.search(variant) is not None), variant
    assert profile_url("/uſer/ana") and profile_url("/USERS/ANA") and not profile_url("/uses/ana")
    for text in (
        "3 hours ago",
        "March 5, 2024",
        "5 Mar",
        "2024-01-02",
        "12/9/25 11:01 PM",
        "yesterday",
        "vor 2 Tagen",
        "3d",
        "Jan '24",
    ):
        assert DATE_TEXT.search(text), text
    for text in ("Reply", "Quote", "harlan", "Participant"):
        assert not DATE_TEXT.search(text), text


def test_reads_as_date_answers_as_the_pattern_does() -> None:
    """The shortcut (no digit and no date word in an ASCII text: no date) never changes an answer,
    whatever the case, script or digit system."""
    texts = [
        "3 hours ago", "TODAY", "Just now", "just  now", "Heute, 10:04", "hier", "Hier soir", "aujourd'hui",
        "AYER", "Reply", "Quote", "harlan", "Participant", "yeſterday", "Jan '24", "٣ hours ago", "१२:३० pm",
        "Ieri", "İeri", "oggi alle 9", "hoy", "shoyu", "history", "Sunday", "", " ", "15", "mayo 3",
    ]  # fmt: skip
    for text in texts:
        assert reads_as_date(text) == (DATE_TEXT.search(text) is not None), text


BYLINE_POST = (
    '<div class="sc-ksPmiX kKPaZQ"><div class="sc-fSnZTl cMUloo"><img alt="{name}" src="/a.png"><div class="sc-eTLXjT hjQIOA">'
    '<div class="sc-jQbJRc kdFqjr">{name}</div><div class="sc-fcmNWj hBxASz">28/11/2025 at {n}:07 pm</div></div></div>'
    '<div class="sc-yMzcK lnNsx"><p>{text}</p></div></div>'
)


def test_a_name_marked_up_in_no_way_of_its_own_is_read_from_the_byline() -> None:
    """Classes hashed by a CSS-in-JS library, no profile link: the name is the text before the time."""
    posts = "".join(
        BYLINE_POST.format(
            name=name, n=n, text=f"{name} thinks the nursery hours should be longer, post {n}."
        )
        for n, name in enumerate(("Mod Sharon", "Judith C", "Indi I"), start=1)
    )
    doc = parse(f"<html><body><main><h1>Working in early years</h1>{posts}</main></body></html>")
    _, found = read_thread(doc)
    assert [p.author for p in found] == ["Mod Sharon", "Judith C", "Indi I"]
    assert [p.date_text for p in found] == [
        "28/11/2025 at 1:07 pm",
        "28/11/2025 at 2:07 pm",
        "28/11/2025 at 3:07 pm",
    ]
    assert found[0].text == "Mod Sharon thinks the nursery hours should be longer, post 1."


def test_posts_without_times_read_as_a_thread_when_three_have_authors() -> None:
    """The script-less copy of an app's thread: a plain <article> per post, a name, no time."""
    article = '<article><div class="PostUser"><h3 class="PostUser-name">{name}</h3></div><div class="Post-body"><p>{text}</p></div></article>'
    names = ("antonjw", "Toby", "wizgriz")
    body = "".join(
        article.format(name=n, text=f"A reply by {n} about forums as discussion engines.") for n in names
    )
    doc = parse(f"<html><body><main><h1>Types of threads</h1>{body}</main></body></html>")
    _, found = read_thread(doc)
    assert [p.author for p in found] == list(names)
    assert all(p.date is None and p.date_text == "" for p in found)
    # two such posts are not enough without times
    two = "".join(
        article.format(name=n, text=f"A reply by {n} about forums as discussion engines.") for n in names[:2]
    )
    assert find_thread(parse(f"<html><body><main>{two}</main></body></html>")) is None


def test_comments_under_an_article_are_read_apart_from_it() -> None:
    """A blog post with a "More from" box of teaser cards (each a linked headline, a byline and a
    date) and then its comments: the comments alone, after the article, without their Reply links
    and "says:"; the teasers are no comments, and the article is no opening post."""
    from readerproxy.engine.pipeline import process_page
    from readerproxy.engine.views.thread import comments_for

    page = process_page(
        (THREADS / "article_comments.html").read_text(), url="https://garden.example/2021/04/lemons/"
    )
    comments = comments_for(page.doc, page.extraction.selection)
    assert comments is not None
    assert [c.author for c in comments] == ["Meena", "Holly Brook", "Ruth Alder"]
    assert [c.date for c in comments] == [
        "2021-04-19T10:12:00+00:00",
        "2021-04-21T18:40:00+00:00",
        "2021-04-22T07:05:00+00:00",
    ]
    assert (
        comments[1].text
        == "Mine is eight years old and has never flowered. Does it need a cold winter to set buds?"
    )
    assert all("Reply" not in c.text and "says" not in c.text for c in comments)
    # the story stays the article's, and no comment repeats it
    assert "Peeling the seeds" not in page.article.text
    assert all("glossy leaves" not in c.text for c in comments)


def test_an_article_without_a_comment_section_has_no_comments() -> None:
    from readerproxy.engine.pipeline import process_page
    from readerproxy.engine.views.thread import comments_for

    html = (THREADS / "article_comments.html").read_text()
    cut = html[: html.index('<div id="comments"')] + "</main></body></html>"
    page = process_page(cut, url="https://garden.example/2021/04/lemons/")
    # the teaser cards (linked headlines with bylines and dates) are not read as comments
    assert comments_for(page.doc, page.extraction.selection) is None


def structure_only(name: str) -> list:
    """The posts of a fixture read by structure alone (no table entry, no JSON-LD)."""
    doc = parse((THREADS / name).read_text(), "https://forum.example/t/1")
    engine, posts = read_thread(doc, engines=(), json_ld=False)
    assert engine == "structure"
    return list(posts)


def test_hacker_news_reads_as_the_story_and_its_comments() -> None:
    """Comments as table rows whose author is a `user?id=` link and whose time is a `title`."""
    posts = structure_only("hackernews.html")
    assert [p.author for p in posts] == ["alice", "bob", "alice", "carol", "dave"]
    assert "I built a reader-mode proxy" in posts[0].text
    assert [p.date for p in posts[1:]] == [
        "2024-05-01T10:30:00",
        "2024-05-01T10:41:00",
        "2024-05-01T11:02:00",
        "2024-05-01T11:20:00",
    ]
    assert posts[3].text.startswith("Did you compare it with Firefox's reader mode")
    # the repeated controls (reply, next, the fold toggle) are not the comments' text
    assert all(not {"reply", "next", "[–]"} & set(p.text.split()) for p in posts[1:])


def test_a_github_issue_reads_as_its_comments_not_its_header() -> None:
    """The issue's header restates the first comment's author and time: it is no post."""
    posts = structure_only("github_issue.html")
    assert [p.author for p in posts] == ["alice", "bob", "alice", "carol"]
    assert posts[0].text.startswith("The reader drops the replies")
    assert all("commented" not in p.text and "👍" not in p.text for p in posts)


#: Texts a template repeats around every post (votes, replies, sharing, reporting), in any case.
CONTROL_WORDS = {"reply", "share", "report", "flag", "save", "permalink", "embed", "quote", "link", "hide"}


def assert_no_controls(posts: list, counts: tuple[str, ...] = ()) -> None:
    """No post's text holds a control of the template, nor one of the vote and reaction counts
    the page shows beside it."""
    for post in posts:
        words = {w.strip(".,:;!?()[]").lower() for w in post.text.split()}
        assert not CONTROL_WORDS & words, (post.author, CONTROL_WORDS & words)
        assert not set(counts) & set(post.text.split()), (post.author, post.text)


def test_lobsters_story_text_and_comment_tree() -> None:
    """The story's text is set apart from its title and byline (a sibling after them); the
    comments form a tree; an avatar's `alt` ("ana avatar") is not the author's name."""
    posts = structure_only("lobsters.html")
    assert [p.author for p in posts] == [
        "wrenfield",
        "oskarbeck",
        "wrenfield",
        "oskarbeck",
        "tamsin",
        "pellucid",
    ]
    assert posts[0].text.startswith("For the last two years I have kept everything")
    assert "Keeping a reading list" not in posts[0].text  # the title is the thread's, not the post's
    assert posts[1].text.startswith("Same here, but one file")
    assert [q.text for q in posts[4].quotes] == ["It greps well and survives every app that comes and goes."]
    assert_no_controls(posts, counts=("27", "14", "6", "4", "9", "3"))
    assert all("hours ago" not in p.text and "|" not in p.text for p in posts)


def test_lemmy_post_and_nested_comments_without_scores() -> None:
    """Score and "OP" badge sit in the byline row beside the name and time: the row's, not the
    post's; a federated author keeps the instance in the name."""
    posts = structure_only("lemmy.html")
    assert [p.author for p in posts] == [
        "fernhollow",
        "tideline",
        "fernhollow",
        "tideline",
        "quillon@feddit.example",
    ]
    assert posts[0].text.startswith("I have a small shop in a shed")
    assert posts[2].text == (
        "Glass and sandpaper I can do. How coarse a grit do you start with on a sole that has a visible dip?"
    )
    assert_no_controls(posts, counts=("41", "18", "19", "6", "9", "11", "12", "OP"))
    assert all(p.date_text == "2d" for p in posts)


def test_flarum_no_script_view_reads_its_articles() -> None:
    """The page a script-less reader gets: a plain <article> per post, a name, no time."""
    posts = structure_only("flarum.html")
    assert [p.author for p in posts] == ["linnea_bakes", "Crumbshot", "Old Baker Tom", "linnea_bakes"]
    assert posts[0].text.startswith("My starter is three weeks old")
    assert [q.text for q in posts[2].quotes] == ["Feed it twice a day for a few days"]
    assert posts[2].text.startswith("And use a higher ratio")
    assert all(p.date is None for p in posts)


def test_old_reddit_self_post_and_comments() -> None:
    """Comment bodies inside forms, a sidebar before the content with a date and moderators,
    scores and "[–]" in the tagline, a button list under every comment."""
    posts = structure_only("old_reddit.html")
    assert [p.author for p in posts] == [
        "dunmore_kitchen",
        "greywaterforge",
        "dunmore_kitchen",
        "pan_handle_sam",
        "rivet_and_rust",
    ]
    assert posts[0].text.startswith("We bake bread in ours nearly every day")
    assert "How long does a cast iron" not in posts[0].text
    assert [p.date for p in posts] == [
        "2024-03-06T14:22:07+00:00",
        "2024-03-06T14:40:51+00:00",
        "2024-03-06T15:02:19+00:00",
        "2024-03-06T14:51:30+00:00",
        "2024-03-06T15:30:44+00:00",
    ]
    assert_no_controls(posts, counts=("213", "214", "215", "[–]"))
    assert all("points" not in p.text and "child" not in p.text and "comments" not in p.text for p in posts)


def test_question_and_answers_with_comments_under_them() -> None:
    """A question-and-answer page: the question, the comments under it and the answers, each
    under its author; the vote counts, karma, tags and "add a comment" are no post's text."""
    posts = structure_only("qa_clone.html")
    assert [p.author for p in posts] == [
        "perrin-hale",
        "mara-quist",
        "perrin-hale",
        "mara-quist",
        "ilse-brandt",
        "perrin-hale",
    ]
    assert posts[0].text.endswith("What should I change first?")
    assert posts[2].text == "Supermarket bread flour, around 12% protein according to the bag."
    assert posts[3].text.startswith("Six hours at room temperature")
    assert all("add a comment" not in p.text and "gravatar" not in p.text for p in posts)
    assert_no_controls(posts, counts=("7", "12", "4", "1", "46", "2318", "190"))


def test_github_discussion_with_answer_summary_and_replies() -> None:
    """The opening post's "Answered by" box repeats the answer's beginning: an excerpt, not the
    post's; replies nested in a comment follow it; vote and reaction counts, labels and
    "Sign in to reply" are no post's text."""
    posts = structure_only("github_discussion.html")
    assert [p.author for p in posts] == ["tovelund", "kasimir-d", "tovelund", "kasimir-d", "oriel-stack"]
    assert posts[0].text.endswith("or is there a reason the lifetime was chosen?")
    assert posts[1].text.startswith("The lifetime predates the reading list")
    assert [p.date for p in posts] == [
        "2024-06-03T08:14:52Z",
        "2024-06-03T10:02:11Z",
        "2024-06-03T11:40:27Z",
        "2024-06-03T12:15:09Z",
        "2024-06-04T07:51:40Z",
    ]
    for post in posts:
        for text in ("Answered by", "View full answer", "Sign in to reply", "Maintainer", "Answer "):
            assert text not in post.text
    assert_no_controls(posts, counts=("7", "4", "2", "1"))


def test_phpbb_derived_theme_with_renamed_classes() -> None:
    """An author's box (avatar, rank, post count, join date) beside each post, the time as text
    in a byline after the post's title: the post's time, not the day its author joined."""
    posts = structure_only("phpbb_custom.html")
    assert [p.author for p in posts] == ["corvid_lane", "Halloran", "petra.ness", "corvid_lane"]
    assert [p.date_text for p in posts] == [
        "Thu Mar 07, 2024 6:12 pm",
        "Thu Mar 07, 2024 7:30 pm",
        "Fri Mar 08, 2024 8:02 am",
        "Sat Mar 09, 2024 3:47 pm",
    ]
    assert posts[1].text.startswith("Yes, a metal lamp needs three-core flex")
    assert [(q.author, q.text) for q in posts[2].quotes] == [
        ("Halloran", "Replace the switch while you are at it")
    ]
    for post in posts:
        for text in ("Re:", "Joined", "Posts:", "Apprentice", "Moderator", "User avatar", "Top"):
            assert text not in post.text
    assert_no_controls(posts)


def test_wordpress_threaded_comments_under_the_post() -> None:
    """Read as a thread, the post and its comments (a reply nested in a `ul.children`, times as
    text in a link); read as an article, the comments alone."""
    from readerproxy.engine.pipeline import process_page
    from readerproxy.engine.views.thread import comments_for

    posts = structure_only("wordpress_threaded.html")
    names = ["Aldous Reeve", "Maud Pellow", "Ines Marlow", "Tobiah Crane"]
    assert [p.author for p in posts] == ["Maud Pellow", *names]
    assert posts[0].text.startswith("Our front room has two box sash windows")
    assert [p.date_text for p in posts[1:]] == [
        "March 3, 2024 at 9:14 am",
        "March 3, 2024 at 12:48 pm",
        "March 4, 2024 at 7:02 pm",
        "March 6, 2024 at 10:31 pm",
    ]
    assert all("says" not in p.text for p in posts)
    assert_no_controls(posts)
    page = process_page(
        (THREADS / "wordpress_threaded.html").read_text(), url="https://oldhouse.example/2024/03/sash-window/"
    )
    comments = comments_for(page.doc, page.extraction.selection)
    assert comments is not None
    assert [c.author for c in comments] == names
    assert comments[1].text.startswith("Wait for a dry spell first")


def test_hacker_news_story_row_is_no_part_of_the_story() -> None:
    """The story's title row (its rank, title and site) and its subline (points, author, age,
    "hide", "past", the comment count) are its header, not its text."""
    posts = structure_only("hackernews.html")
    assert posts[0].text.startswith("I built a reader-mode proxy")
    assert posts[0].date == "2024-05-01T10:00:00"
    for text in ("Show HN", "reader.example", "points", "hide", "past", "comments"):
        assert text not in posts[0].text


AUTHOR_BOX_POST = (
    '<div class="blockpost" id="p{n}"><h2><span>#{n}</span> <a href="?pid={n}">2025-11-0{n} 10:1{n}:00</a></h2>'
    '<div class="box"><div class="postleft"><dl><dt><strong>{name}</strong></dt><dd class="usertitle">'
    "<strong>Member</strong></dd><dd><span>Registered: 2019-04-0{n}</span></dd><dd><span>Posts: 1{n}</span>"
    '</dd></dl></div><div class="postright"><div class="postmsg"><p>{text}</p></div></div></div></div>'
)


def test_a_name_in_an_author_box_is_its_first_text_not_the_member_title() -> None:
    """An author's box of plain texts (name, member title, join date): the name is the box's
    first text that reads as one, not the title written just before the date."""
    posts = "".join(
        AUTHOR_BOX_POST.format(n=n, name=name, text=f"{name} writes a reply about boot loaders, number {n}.")
        for n, name in enumerate(("chunix", "nl6720", "Trilby"), start=1)
    )
    doc = parse(f"<html><body><main><h1>ISO size</h1>{posts}</main></body></html>")
    _, found = read_thread(doc, engines=(), json_ld=False)
    assert [p.author for p in found] == ["chunix", "nl6720", "Trilby"]
    assert all("Member" not in p.text for p in found)


def test_a_reply_written_as_bare_text_after_a_quote_is_part_of_the_post() -> None:
    """A body whose largest child is a quote and whose reply is the body's own text between its
    children: the reply is the post's text, not left out beside the quote."""
    post = (
        '<article><div class="PostUser"><h3 class="PostUser-name">{name}</h3></div>'
        '<div class="Post-body"><blockquote>{quote}</blockquote>{reply}</div></article>'
    )
    quote = "Someone earlier said the old pan needs a long bake at a low heat before every use of it."
    names = ("antonjw", "Toby", "wizgriz")
    body = "".join(
        post.format(
            name=n, quote=quote, reply=f"Reply by {n}: a thin coat of oil and an hour at 230 degrees works."
        )
        for n in names
    )
    _, found = read_thread(parse(f"<html><body><main><h1>Seasoning</h1>{body}</main></body></html>"))
    assert [p.author for p in found] == list(names)
    for name, p in zip(names, found, strict=True):
        assert f"Reply by {name}: a thin coat of oil" in p.text


@pytest.mark.parametrize(
    "value",
    [
        "comment-author vcard",
        "PostUser-name",
        "postAuthorName",
        "fn n",
        "hnuser",
        "author-box",
        "entry-content clearfix",
        "ARTICLE__BYLINE-NAME",
        "poſter",  # re.I folds "ſ" into "s": searched, not skipped
        "\u212aick",  # the Kelvin sign folds into "k"
        "display_name",
        "user",
        "",
    ],
)
def test_author_hinted_is_the_search_with_a_shortcut(value: str) -> None:
    assert posts.author_hinted(value) == (posts.AUTHOR_HINT.search(value) is not None)
