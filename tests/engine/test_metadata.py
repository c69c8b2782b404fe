"""Metadata: JSON-LD, <meta>, and Readability-style title cleaning."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from readerproxy import extract
from readerproxy.engine.metadata import authors, metadata
from readerproxy.engine.metadata.metadata import extract_metadata
from readerproxy.engine.metadata.title import clean_title
from readerproxy.engine.parse.document import parse


def test_json_ld_wins() -> None:
    ld = {
        "@context": "https://schema.org",
        "@graph": [
            {"@type": "WebSite", "name": "Site"},
            {
                "@type": "NewsArticle",
                "headline": "Real headline",
                "author": [{"@type": "Person", "name": "Ada Lovelace"}, {"name": "Alan Turing"}],
                "datePublished": "2024-05-01T10:00:00Z",
                "publisher": {"@type": "Organization", "name": "The Paper"},
                "description": "What it is about.",
            },
        ],
    }
    page = f"""<html lang="en"><head><title>Real headline - The Paper</title>
    <meta property="og:title" content="OG title"><script type="application/ld+json">{json.dumps(ld)}</script>
    </head><body><p>x</p></body></html>"""
    meta = extract_metadata(parse(page, url="https://paper.example/x"))
    assert meta.title == "Real headline"
    assert meta.byline == "Ada Lovelace, Alan Turing"
    assert meta.published == "2024-05-01T10:00:00Z"
    assert meta.site_name == "The Paper"
    assert meta.excerpt == "What it is about."
    assert meta.lang == "en"


def test_meta_tags() -> None:
    page = """<html dir="rtl"><head><title>t</title>
    <meta property="og:title" content="The OG Title">
    <meta property="og:site_name" content="Example Site">
    <meta name="author" content="Jane Doe">
    <meta property="article:published_time" content="2020-01-02">
    <meta name="description" content="Desc.">
    <meta property="og:image" content="/img/cover.jpg">
    </head><body></body></html>"""
    meta = extract_metadata(parse(page, url="https://e.example/a/b"))
    assert (meta.title, meta.site_name, meta.byline, meta.published, meta.excerpt) == (
        "The OG Title",
        "Example Site",
        "Jane Doe",
        "2020-01-02",
        "Desc.",
    )
    assert meta.image == "https://e.example/img/cover.jpg"
    assert meta.dir == "rtl"


def test_title_cleaning_like_readability() -> None:
    doc = parse("<h1>Heading</h1>")
    assert (
        clean_title("How to grow tomatoes at home | Gardening Weekly", doc) == "How to grow tomatoes at home"
    )
    assert clean_title("Site - How to grow tomatoes at home", doc) == "How to grow tomatoes at home"
    assert clean_title("Short | Site", doc) == "Short | Site"  # too little left: keep the original
    assert clean_title("Tiny", parse("<h1>The one heading of the page</h1>")) == "The one heading of the page"


def test_excerpt_falls_back_to_the_first_paragraph_of_the_article() -> None:
    page = """<title>T</title><body><nav><p>Menu text</p></nav><article><h1>Head</h1>
    <p>Lorem <b>ipsum</b><br>dolor   sit.</p><p>Second.</p></article></body>"""
    doc = parse(page)
    article = doc.tag.index("article")
    meta = extract_metadata(doc, selection=doc.mask_elements([article]))
    assert meta.excerpt == "Lorem ipsumdolor sit."  # textContent of the first <p>, as Readability.js


def test_excerpt_from_div_text_and_double_br() -> None:
    doc = parse("<title>T</title><body><div>Intro line<br><br>After the breaks.</div></body>")
    assert extract_metadata(doc).excerpt == "Intro line"  # a <div> without blocks is a paragraph
    doc = parse("<title>T</title><body><section><h2>H</h2>Before<br><br>After the breaks.</section></body>")
    assert extract_metadata(doc).excerpt == "After the breaks."  # only what follows <br><br> is


def test_entities_left_encoded_in_meta_are_decoded() -> None:
    page = """<head><title>T</title><meta name="description" content="&amp;#x1F62D; &amp;amp; &amp;#xg;">
    </head><body></body>"""
    assert extract_metadata(parse(page)).excerpt == "\U0001f62d & &#xg;"


def test_page_byline_reads_the_itemprop_name_and_skips_sidebars() -> None:
    page = """<title>T</title><body><aside class="sidebar"><span class="author">Sidebar Author</span></aside>
    <p class="byline" itemprop="author"><a rel="author"><span itemprop="name">Dan Goodin</span></a>
    - Apr 16, 2015 8:02 pm UTC</p><p>Text</p></body>"""
    assert extract_metadata(parse(page)).byline == "Dan Goodin"


def test_meta_keys_like_readability() -> None:
    page = """<head><title>draft-x-04 - remoteStorage</title><meta name="DC.Title" content="remoteStorage">
    <meta name="DC.Creator" content="Jong, Michiel de"><meta property="og:title twitter:title" content="OG">
    <meta name="application-name" content="App"></head><body></body>"""
    meta = extract_metadata(parse(page))
    assert (meta.title, meta.byline, meta.site_name) == ("remoteStorage", "Jong, Michiel de", None)


def test_json_ld_needs_schema_org_context_and_an_article_type() -> None:
    ld = {"@context": "https://example.org", "@type": "NewsArticle", "headline": "Wrong"}
    page = f"""<head><title>Right title of this page</title><script type="application/ld+json">{json.dumps(ld)}</script>
    </head><body></body>"""
    assert extract_metadata(parse(page)).title == "Right title of this page"
    ld = {"@context": {"@vocab": "http://schema.org/"}, "@type": "WebPage", "name": "Also wrong"}
    page = page.replace(
        json.dumps({"@context": "https://example.org", "@type": "NewsArticle", "headline": "Wrong"}),
        json.dumps(ld),
    )
    assert extract_metadata(parse(page)).title == "Right title of this page"


def test_title_separators_include_dashes() -> None:
    doc = parse("<h1>x</h1><h1>y</h1>")
    assert clean_title("Lorem ipsum dolor sit amet – My website", doc) == "Lorem ipsum dolor sit amet"


def test_a_hyphen_inside_a_word_is_no_separator() -> None:
    # Readability.js cuts the first part at the first separator character, "Pour-" included
    doc = parse("<h1>x</h1><h1>y</h1>")
    assert clean_title("Pour-over drippers | Bean & Burr", doc) == "Pour-over drippers | Bean & Burr"
    assert clean_title("Pour-over | Ten drippers we like for home", doc) == "Ten drippers we like for home"


def test_dir_comes_from_the_article_ancestors() -> None:
    doc = parse('<html dir="ltr"><body dir="rtl"><main><article><p>نص</p></article></main></body></html>')
    article = doc.tag.index("article")
    assert extract_metadata(doc, selection=doc.mask_elements([article])).dir == "rtl"


def test_lead_image_falls_back_to_the_first_article_image() -> None:
    doc = parse('<body><article><p>x</p><img src="/a.jpg"></article></body>', url="https://e.example/p/")
    article = doc.tag.index("article")
    assert extract_metadata(doc, selection=doc.mask_elements([article])).image == "https://e.example/a.jpg"


def test_readability_set_fields(shared_datasets: Path) -> None:
    """Per-field exact match against Readability's expected-metadata.json stays at the targets."""
    from readerproxy.research.datasets import load_dataset
    from readerproxy.research.metadata_eval import evaluate_metadata

    results = {
        r.name: r.accuracy for r in evaluate_metadata(load_dataset(str(shared_datasets / "readability")))
    }
    # 0.938 since 2026-11-26: titles lose the site's name whatever the separator, which
    # Readability.js keeps on 8 of these pages ("How to Build a Terrarium | eHow", "… - Breitbart").
    assert results["title"] >= 0.93
    for name in ("byline", "excerpt", "dir", "readerable"):
        assert results[name] >= 0.9, (name, results[name])


def test_squash_is_the_regex_whitespace_rule() -> None:
    import random
    import re
    import sys

    from readerproxy.engine.parse.text import squash

    everything = "".join(map(chr, range(sys.maxunicode + 1)))
    spaces = re.findall(r"\s", everything)
    assert spaces == [c for c in everything if c.isspace()]
    rng = random.Random(2)
    alphabet = [*spaces, "a", "b", "\u200b", "é"]
    for _ in range(20_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 10)))
        assert squash(text) == re.sub(r"\s+", " ", text).strip(), repr(text)


# --- author and title on the modern web ------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "name"),
    [
        ("By Sarah Schwartz — November 18, 2025", "Sarah Schwartz"),
        ("Written By: Cazzy Magennis Last Updated: August 1, 2025", "Cazzy Magennis"),
        ("BySummer Swann-June 12, 2025", "Summer Swann"),
        ("By Reyan Perumal Published on July 18, 2025", "Reyan Perumal"),
        ("David Jackson - FullStack Editorial Team", "David Jackson"),
        ("Author Escalon", "Escalon"),
        ("Von Anna Müller", "Anna Müller"),
        ("Manoj Jain and Jagpreet Chhatwal", "Manoj Jain and Jagpreet Chhatwal"),
        ("https://example.org/user/megan", None),
        ("Updated on November 20, 2025", None),
        ("The Author", None),
        ("By", None),
        ("5mins read", None),
        # shapes seen on wcxb-dev pages (2026-11-26)
        ("Sep 16 Written By Alpha Apex", "Alpha Apex"),
        ("Dec. 19, 2025 · Niko Matsakis on behalf of the Rust team", "Niko Matsakis"),
        ("Recipe by PJ Hamel", "PJ Hamel"),
        ("Read more about The Upwork Team", "The Upwork Team"),
        ("Ellen O'Brien Ellen O'Brien Ellen is an editor", "Ellen O'Brien"),
        ("Harry RabinowitzTech Reporter", "Harry Rabinowitz"),
        ("Stephen Jesudunsin AI Writer, Embarque", "Stephen Jesudunsin"),
        ("Guide by Will Judd Former Deputy Tech Editor", "Will Judd"),
        ("CM Craig McCarthy", "Craig McCarthy"),
        ("Cazzy MagennisLast Updated August 1, 2025", "Cazzy Magennis"),
        ("Luke Kim December", "Luke Kim"),
        ("Top Growth Marketing", "Top Growth Marketing"),  # "Mar…" is no month
        ("AuthorVenteur", "Venteur"),
        ("page.head.extra.author", None),  # a template's placeholder
        ("Dec", None),
        ("Sign In", None),
        # 2026-11-26: user names, dates after the name, roles, labels, credits
        ("user3080392", "user3080392"),  # a user name ends in digits
        ("ggailey777", "ggailey777"),
        ("mdelatorreq6vkpg2ma0ci", None),  # digits inside the letters: a generated id
        ("sara.r.peter", "sara.r.peter"),  # an initial: a login, not a template's placeholder
        ("FlowGuard EMEA on 04-ago-2021 5:10", "FlowGuard EMEA"),
        ("Andrew Gerrand 4 August 2010", "Andrew Gerrand"),
        ("by Jeff FoustMonday, November 18, 2019", "Jeff Foust"),
        ("98 Buck Social", "98 Buck Social"),  # "98 Buck" is no date before the name
        ("Liz Kenny Former McKinsey", "Liz Kenny"),
        ("Brett Cruz , Privacy and Digital Security Expert", "Brett Cruz"),
        ("Help Net Security Sponsored", "Help Net Security"),
        ("content: MarketingSherpa, design: Scott McDaniel, code: Steve Beger", None),
        ("Join Us", None),
        (None, None),
    ],
)
def test_person_names(raw: str | None, name: str | None) -> None:
    from readerproxy.engine.metadata.authors import person_names

    assert person_names(raw) == name


def test_author_from_json_ld_text_and_markup() -> None:
    ld = (
        '<script type="application/ld+json">{"@context":"https://schema.org","@type":"WebPage",'
        '"author":"Swoogo"}</script>'
    )
    page = f"<html><head><title>T</title>{ld}</head><body><p>{'Words here. ' * 30}</p></body></html>"
    assert extract(page).metadata.author == "Swoogo"
    marked = (
        "<html><head><title>T</title></head><body><div class='byline'>Written by"
        "<a rel='author' href='/a'>Ana <b>Writer</b></a></div>"
        f"<p>{'Words here. ' * 30}</p></body></html>"
    )
    assert extract(marked).metadata.author == "Ana Writer"


@pytest.mark.parametrize(
    ("title", "site", "url", "expected"),
    [
        ("What is GraphQL? | GraphQL", None, "https://graphql.org/learn/", "What is GraphQL?"),
        (
            "Template anatomy - AWS CloudFormation",
            "AWS CloudFormation",
            "https://docs.aws.amazon.com/x",
            "Template anatomy",
        ),
        (
            "Greenhouse Studio — How to design a room",
            None,
            "https://greenhousestudio.com/x",
            "How to design a room",
        ),
        (
            "Machine learning, explained | MIT Sloan",
            "MIT Sloan",
            "https://mitsloan.mit.edu/x",
            "Machine learning, explained",
        ),
    ],
)
def test_title_without_the_site_name(title: str, site: str | None, url: str, expected: str) -> None:
    meta = f'<meta property="og:site_name" content="{site}">' if site else ""
    page = f"<html><head><title>{title}</title>{meta}</head><body><p>{'Words here. ' * 30}</p></body></html>"
    assert extract(page, url=url).metadata.title == expected


def _article(head: str = "", body: str = "", title: str = "T") -> str:
    words = "<p>" + "Words of the article that make it long enough to read. " * 12 + "</p>"
    return f"<html><head><title>{title}</title>{head}</head><body>{body}{words}</body></html>"


def test_a_person_wins_over_an_organisation_standing_in() -> None:
    """JSON-LD names the publisher as the author; the page names the writer: the writer is the
    author. With no person anywhere, the organisation is the answer."""
    ld = (
        '<script type="application/ld+json">{"@context":"https://schema.org","@type":"Article",'
        '"headline":"T","author":{"@type":"Organization","name":"GlossGenius"}}</script>'
    )
    byline = '<div class="staff__wrap"><div class="text__author">Shauna Mitchell</div></div>'
    assert extract(_article(ld, byline)).metadata.author == "Shauna Mitchell"
    assert extract(_article(ld)).metadata.author == "GlossGenius"


def test_json_ld_author_list_keeps_its_people() -> None:
    ld = (
        '<script type="application/ld+json">{"@context":"https://schema.org","@type":"NewsArticle",'
        '"headline":"T","author":[{"@type":"Person","name":"Ana Writer"},'
        '{"@type":"Organization","name":"The Daily"},{"@type":"Person","name":"Ben Reporter"}]}</script>'
    )
    assert extract(_article(ld)).metadata.author == "Ana Writer, Ben Reporter"


def test_written_by_label_of_link_previews() -> None:
    """Yoast's twitter:label1 "Written by" with twitter:data1 the name."""
    head = (
        '<meta name="twitter:label1" content="Written by"><meta name="twitter:data1" content="Tyler Brown">'
    )
    assert extract(_article(head)).metadata.author == "Tyler Brown"


@pytest.mark.parametrize(
    ("body", "author"),
    [
        # the lead and the name as separate text runs (React's <!-- --> between them)
        ("<h1>Mini-SGLang</h1><p>by: <!-- -->Ziyi Xu<!-- -->, <!-- -->Dec 17, 2025</p>", "Ziyi Xu"),
        (
            "<h1>Trends in catering</h1><p>Last updated</p><time>Aug 04, 2025</time>"
            "<p>Written by</p><p>Edzel Tabing</p>",
            "Edzel Tabing",
        ),
        # an author box after the article
        (
            "<h1>Habits</h1>"
            + "<p>Text of the story goes on.</p>" * 40
            + "<h3>Written by Cassidy Horton</h3>",
            "Cassidy Horton",
        ),
        # "Shop by Category" is no byline, nor a testimonial's author
        ("<h1>Gummies</h1><p>Shop by</p><p>Category</p>", None),
        ('<h1>Gummies</h1><div class="reviews"><span class="review-author">Tom K.</span></div>', None),
    ],
)
def test_bylines_shown_on_the_page(body: str, author: str | None) -> None:
    assert extract(_article(body=body)).metadata.author == author


def test_personal_blog_title_names_its_owner() -> None:
    page = _article(title="Preparing a transition in Debusine | Colin Watson's blog")
    assert (
        extract(page, url="https://www.chiark.greenend.org.uk/~cjwatson/blog/x.html").metadata.author
        == "Colin Watson"
    )


def test_forum_thread_author_and_date_are_the_starters() -> None:
    """phpBB: the first post's author and date, not a later replier's and not the sidebar's."""
    posts = "".join(
        f'<div class="post"><div class="postbody"><p class="author">by <a class="username">{name}</a> '
        f'» {when}</p><div class="content">{text}</div></div></div>'
        for name, when, text in (
            ("b.scherer", "Sun Dec 17, 2023 11:23 am", "I just got my new board and it will not boot."),
            ("helper", "Sun Dec 17, 2023 12:01 pm", "Which power supply are you using with it?"),
            ("b.scherer", "Sun Dec 17, 2023 12:30 pm", "The official one, 27 W, straight from the shop."),
        )
    )
    meta = extract(_article(body=f"<h1>Pi 5 does not boot</h1>{posts}")).metadata
    assert (meta.author, meta.date) == ("b.scherer", "2023-12-17")


def test_wcxb_scoring_rules_are_the_same_for_every_system() -> None:
    """A month-only ground truth ("2003-11") matches any day of that month (dateutil would fill
    in today's day); authors match as sets of names; a missing value never matches."""
    from readerproxy.research.metadata_eval import FieldResult, format_wcxb_metadata, wcxb_match

    assert wcxb_match("publish_date", "2003-11", "2003-11-05")
    assert not wcxb_match("publish_date", "2003-11", "2025-11-26")
    assert wcxb_match("publish_date", "2025-09-04", "2025-09-04T10:00:00+02:00")
    assert not wcxb_match("publish_date", "2025-09-04", None)
    assert wcxb_match("author", "Ana Writer and Ben Reporter", "Ben Reporter, Ana Writer")
    results = {
        system: [
            FieldResult(name, matched=1, total=2, unstated=4, stated_anyway=stated)
            for name in ("t", "a", "d")
        ]
        for system, stated in (("readerproxy", 1), ("trafilatura", 3))
    }
    table = format_wcxb_metadata(results, "wcxb-dev")
    assert "given anyway" in table and "0.250" in table and "0.750" in table


# --- 2026-11-26: more sources of the author, and names read as the page gives them --------------


def _ld(data: object) -> str:
    return f'<script type="application/ld+json">{json.dumps(data)}</script>'


def test_json_ld_author_given_by_reference_is_read_from_the_graph() -> None:
    """Yoast writes the article's author as {"@id": ...} and the Person once in the @graph."""
    person = "https://kff.example/#/schema/person/5380"
    graph = {
        "@context": "https://schema.org",
        "@graph": [
            {"@type": "Article", "headline": "T", "author": {"@id": person}},
            {"@type": "Person", "@id": person, "name": "Nirmita Panchal"},
        ],
    }
    head = _ld(graph) + '<meta name="author" content="kffnirmitap">'
    assert extract(_article(head)).metadata.author == "Nirmita Panchal"


def test_article_author_given_as_a_name_in_a_meta_name() -> None:
    head = '<meta name="article:author" content="Jillian Kubala, MS, RD">'
    assert extract(_article(head)).metadata.author == "Jillian Kubala, MS, RD"
    profile = '<meta property="article:author" content="https://www.facebook.com/paper">'
    assert extract(_article(profile)).metadata.author is None


def test_article_author_profile_address_names_its_user() -> None:
    head = '<meta property="article:author" content="https://lobste.rs/~scvalex">'
    assert extract(_article(head)).metadata.author == "scvalex"


def test_scholarly_pages_list_every_citation_author() -> None:
    head = (
        '<meta name="citation_author" content="Roy, Aniruddha">'
        '<meta name="citation_author" content="Patel, Jyoti">'
        '<meta name="citation_author" content="Roy, Aniruddha">'
    )
    assert extract(_article(head)).metadata.author == "Aniruddha Roy, Jyoti Patel"


def test_a_login_name_yields_to_the_person_the_page_shows() -> None:
    head = '<meta name="author" content="andrew.keaveney">'
    shown = '<div class="author-info"><span class="author_name">Denise Everheart</span></div>'
    assert extract(_article(head, shown)).metadata.author == "Denise Everheart"
    assert extract(_article(head)).metadata.author == "andrew.keaveney"  # no one else: the login


def test_a_questions_asker_is_the_pages_author() -> None:
    qa = {
        "@context": "https://schema.org",
        "@type": "QAPage",
        "mainEntity": {
            "@type": "Question",
            "name": "Worth it?",
            "author": {"@type": "Person", "name": "AtlanG"},
        },
    }
    assert extract(_article(_ld(qa))).metadata.author == "AtlanG"


def test_thread_starter_shown_under_the_title() -> None:
    body = (
        '<h1>How close is the project?</h1><ul><li><span class="u-srOnly">Thread starter</span> '
        '<a class="username" href="/members/beijingwalker.134467/">beijingwalker</a></li></ul>'
    )
    assert extract(_article(body=body)).metadata.author == "beijingwalker"


@pytest.mark.parametrize(
    ("body", "author"),
    [
        # a name beside the date under the headline, pictured by its avatar
        (
            '<h1>HR Shared Services explained</h1><img alt="Elliot Raba Image" src="/a.jpg">'
            "<p>Elliot Raba</p><p>23.07.2025</p><p>6 min read</p>",
            "Elliot Raba",
        ),
        # the same without a picture of the person: a blog's or a tag's name, not taken
        ("<h1>Are AI evangelists in heat?</h1><p>Nonessential Thoughts</p><p>December 18, 2025</p>", None),
        # a breadcrumb's last step beside the date is no byline
        (
            '<h1>Meal prep</h1><img alt="Meal Plans" src="/m.jpg"><p>Nutrition</p><p>&gt;</p>'
            "<p>Meal Plans</p><p>November 12, 2018</p>",
            None,
        ),
    ],
)
def test_a_name_set_beside_the_date(body: str, author: str | None) -> None:
    assert extract(_article(body=body)).metadata.author == author


def test_the_sites_own_name_stands_in_whole() -> None:
    """No person is named: the author is the site, as it writes its name (not cut as a job title)."""
    head = '<meta name="author" content="Luxury Travel Expert"><meta property="og:site_name" content="Luxury Travel Expert">'
    page = _article(head)
    assert extract(page, url="https://theluxurytravelexpert.com/x").metadata.author == "Luxury Travel Expert"


def test_dated_bylines_in_the_page() -> None:
    body = '<h1>Defer, Panic, and Recover</h1><p class="author">Andrew Gerrand<br>4 August 2010</p>'
    meta = extract(_article(body=body)).metadata
    assert (meta.author, meta.date) == ("Andrew Gerrand", "2010-08-04")


@pytest.mark.parametrize(
    "body",
    [
        '<p class="Byline">By Ana</p><a rel="author" href="/ana">Ana</a>',
        '<a rel="author" href="/ana">Ana</a><div id="post-AUTHOR">Ana Lima</div>',
        '<span itemprop="author"><b itemprop="name">Ana</b></span>',
        '<div class="x"><p class="meta byline-writtenBy">Ana</p></div><i class="byline">B</i>',
        '<p class="dateline">Lisbon</p><p id="Dateline">Porto</p><p class="other">no</p>',
        '<p class="byIine">no: a capital I is no l</p><p>none at all</p>',
    ],
)
def test_byline_candidates_are_the_byline_query(body: str) -> None:
    """The byline's candidates read from the Document's class and id values are the elements (in
    document order, each once) that the whole CSS query finds."""
    doc = parse(f"<html><body><header class='top'>{body}</header><p>Text of the page.</p></body></html>")
    expected = list({node.mem_id: node for node in doc.tree.css(authors._BYLINE_SELECTOR)}.values())
    assert [n.mem_id for n in authors._byline_candidates(doc)] == [n.mem_id for n in expected]


@pytest.mark.parametrize(
    "body",
    [
        '<p class="Author-Name">Ana Lima</p><a rel="author" href="/ana">Ana</a>',
        '<span itemprop="author"><b itemprop="name">Ana</b></span><i class="byline__name">B</i>',
        '<div class="post-AUTHORNAME x">Ana</div><div class="byline-name">B</div><p class="author">C</p>',
        '<p class="writer">nobody classed</p>',
    ],
)
def test_author_candidates_are_the_author_queries(body: str) -> None:
    """`_element_author`'s and `classed_author`'s candidates, read from the Document's class values,
    are the elements their CSS queries find, in document order."""
    doc = parse(f"<html><body><header class='top'>{body}</header><p>Text of the page.</p></body></html>")
    query = list({node.mem_id: node for node in doc.tree.css(authors._AUTHOR_SELECTOR)}.values())
    found = authors._classed(doc, authors._AUTHOR_NAME_CLASSES)
    marked = doc.tree.css(authors._AUTHOR_MARKUP)
    merged = authors._with_marked(doc, found, marked, authors._AUTHOR_SELECTOR)
    assert [n.mem_id for n in merged] == [n.mem_id for n in query]
    classed = [doc.elements[i] for i in authors._classed(doc, ("author",))]
    assert [n.mem_id for n in classed] == [n.mem_id for n in doc.tree.css('[class*="author" i]')]


def test_once_reads_at_most_once() -> None:
    """extract_metadata's lazy reads (the byline element, the thread's starter) run once, when asked."""
    calls: list[int] = []
    read = metadata._once(lambda: calls.append(1) or None)
    assert calls == []
    assert read() is None and read() is None and calls == [1]


def _titled(head: str, body: str, url: str = "https://router.example.org/guide/") -> str:
    return extract_metadata(parse(f"<html><head>{head}</head><body>{body}</body></html>", url)).title


@pytest.mark.parametrize(
    ("head", "body", "expected"),
    [
        # og:title is the og:site_name; the one <h1> names the topic
        (
            '<title>Getting Started | Vue Router</title><meta property="og:title" content="Vue Router">'
            '<meta property="og:site_name" content="Vue Router">',
            "<h1>Getting Started</h1><p>Text.</p>",
            "Getting Started",
        ),
        # the application-name, compared by its letters ("Vue.js" = "vuejs")
        (
            '<title>Vue.js</title><meta name="application-name" content="vuejs">',
            "<h1>Reactivity Fundamentals</h1>",
            "Reactivity Fundamentals",
        ),
        # no site name stated: og:title is an end of the <title> whose other part is the <h1>
        (
            '<title>Installation – Docsy Docs</title><meta property="og:title" content="Docsy Docs">',
            '<h1><a href="#top">¶</a>Installation</h1>',
            "Installation",
        ),
        # the host's own name
        ("<title>Router</title>", "<h1>Navigation guards</h1>", "Navigation guards"),
    ],
)
def test_a_title_that_is_only_the_sites_name_gives_way_to_the_h1(head: str, body: str, expected: str) -> None:
    assert _titled(head, body) == expected


@pytest.mark.parametrize(
    ("head", "body"),
    [
        # two <h1>s: none of them is the page's heading
        ('<meta property="og:title" content="Vue Router">', "<h1>Getting Started</h1><h1>Other</h1>"),
        # the <h1> is the logo, the site's name again
        ('<meta property="og:title" content="Vue Router">', "<h1>Vue Router</h1>"),
        # an end of the <title>, but the <h1> is not what the rest of it says
        (
            '<title>Vue Router | Chapter 2</title><meta property="og:title" content="Vue Router">',
            "<h1>Unrelated banner words</h1>",
        ),
    ],
)
def test_a_site_title_stays_without_a_lone_h1_naming_the_topic(head: str, body: str) -> None:
    assert _titled(head, body, "https://docs.example.org/guide/") == "Vue Router"


def test_a_real_title_is_not_replaced_by_the_h1() -> None:
    head = '<title>Pricing | Harbor Cowork</title><meta property="og:title" content="Membership pricing">'
    assert (
        _titled(head, "<h1>Plans and rates</h1>", "https://harborcowork.example/pricing")
        == "Membership pricing"
    )


def test_a_home_page_and_a_brand_first_title_keep_their_title() -> None:
    """A site's home page is rightly titled by its name (its <h1> is a slogan); and the first part
    of a <title> is the page's own ("Defining Traits - The Rust Book", whose <h1> is the book's)."""
    home = (
        '<meta property="og:title" content="Vue Router"><meta property="og:site_name" content="Vue Router">'
    )
    assert (
        _titled(home, "<h1>The official router for Vue.js</h1>", "https://router.example.org/")
        == "Vue Router"
    )
    book = "<title>Defining Shared Behavior with Traits - The Rust Book</title>"
    assert (
        _titled(book, "<h1>The Rust Book</h1>", "https://doc.example.org/book/ch10.html")
        == "Defining Shared Behavior with Traits"
    )
