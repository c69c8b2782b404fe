"""Product descriptions stated only in a page's JSON-LD (structured.py), the article they end, and how
leniently JSON-LD is read."""

from __future__ import annotations

import json

from selectolax.lexbor import LexborHTMLParser

from readerproxy import extract
from readerproxy.engine.metadata.dates import publication_day
from readerproxy.engine.metadata.structured import MIN_WORDS, missing_description, product_description
from readerproxy.engine.parse.document import parse
from readerproxy.engine.schema import ld_text, load_json_ld, parsed_json_ld
from readerproxy.engine.views.listing import json_ld_items

DESCRIPTION = (
    "This kettle boils a full litre in under three minutes, keeps the water hot for an hour and switches "
    "itself off when the jug is lifted. The stainless steel body stays cool to the touch, the filter "
    "comes out for cleaning, and the base turns all the way round for left and right hands alike."
)
assert len(DESCRIPTION.split()) >= MIN_WORDS


def product_page(ld: object, body: str = "") -> str:
    shown = body or "<h1>Kettle</h1><p>Price: 39.00</p><p>In stock, ships tomorrow.</p>"
    return (
        '<html><head><title>Kettle</title><script type="application/ld+json">'
        + json.dumps(ld).replace("</", "<\\/")  # as sites write it: "</script>" would end the script
        + "</script></head><body><main>"
        + shown
        + "</main></body></html>"
    )


def test_the_first_product_description_is_found_anywhere_in_the_json_ld() -> None:
    graph = {
        "@context": "https://schema.org",
        "@graph": [{"@type": "WebPage"}, {"@type": "Product", "description": DESCRIPTION}],
    }
    assert product_description(parse(product_page(graph))) == [DESCRIPTION]
    listed = [{"@type": ["Thing", "ProductGroup"], "description": "Line one<br>Line <b>two</b>"}]
    assert product_description(parse(product_page(listed))) == ["Line one", "Line two"]
    encoded = {"@type": "Product", "description": "An%20elegant%20sofa%20with%20curves"}
    assert product_description(parse(product_page(encoded))) == ["An elegant sofa with curves"]
    article = {"@type": "NewsArticle", "description": DESCRIPTION}
    assert product_description(parse(product_page(article))) == []


def test_a_description_the_page_does_not_show_is_missing_and_one_it_shows_is_not() -> None:
    ld = {"@type": "Product", "name": "Kettle", "description": DESCRIPTION}
    assert missing_description(parse(product_page(ld))) == [DESCRIPTION]
    shown = product_page(ld, f"<h1>Kettle</h1><p>{DESCRIPTION}</p>")
    assert missing_description(parse(shown)) == []
    short = {"@type": "Product", "description": "A kettle that boils water quickly. Buy it now."}
    assert missing_description(parse(product_page(short))) == []  # a search snippet, not a description
    assert missing_description(parse("<p>No structured data at all.</p>")) == []


def test_the_article_ends_with_a_description_only_the_json_ld_holds() -> None:
    hostile = DESCRIPTION + " <script>alert(1)</script> <img src=x onerror=alert(2)>"
    article = extract(product_page({"@type": "Product", "description": hostile}), algorithm="auto")
    assert article.text.endswith(DESCRIPTION + " alert(1)")  # tags dropped, their text kept as text
    paragraphs = LexborHTMLParser(article.html).css("p")
    assert paragraphs[-1].text() == DESCRIPTION + " alert(1)"
    assert "<script" not in article.html and "onerror" not in article.html
    plain = extract(product_page({"@type": "Product", "name": "Kettle"}), algorithm="auto")
    assert DESCRIPTION[:20] not in plain.text and "In stock" in plain.text


def test_json_ld_is_read_as_leniently_as_search_engines_read_it() -> None:
    # valid JSON, and a CDATA wrapper
    assert load_json_ld('{"@type": "Article"}') == [{"@type": "Article"}]
    assert load_json_ld('<![CDATA[{"@type": "Article"}]]>') == [{"@type": "Article"}]
    # a line break inside a string (gamefaqs' posting bodies)
    assert load_json_ld('{"articleBody": "one\n\ntwo"}') == [{"articleBody": "one\n\ntwo"}]
    # a template's line comments, but not a "//" inside a string
    commented = '{"url": "https://example.org/a", // the page\n "ratingValue": "5" // hardcoded\n}'
    assert load_json_ld(commented) == [{"url": "https://example.org/a", "ratingValue": "5"}]
    assert load_json_ld('{"a": "q\\"//x"}') == [{"a": 'q"//x'}]
    # several values one after the other, with or without a comma
    assert load_json_ld('{"a": 1},{"b": 2}') == [{"a": 1}, {"b": 2}]
    assert load_json_ld('{"a": 1} {"b": 2}') == [{"a": 1}, {"b": 2}]
    # what is still not JSON gives nothing, or the values before it
    assert load_json_ld("not json") == []
    assert load_json_ld("") == []
    assert load_json_ld('{"a": 1} {"b": "<a href="x">"}') == [{"a": 1}]
    assert load_json_ld("[" * 100_000) == []


def test_a_lenient_json_ld_date_and_author_reach_the_metadata() -> None:
    ld = '{"@type": "DiscussionForumPosting", "author": {"@type": "Person", "name": "Ana Lima"},\n'
    ld += '"articleBody": "First line.\n\nSecond line.", "datePublished": "2024-02-21 13:00:00"}'
    page = (
        f'<html><head><script type="application/ld+json">{ld}</script></head><body><p>Hello</p></body></html>'
    )
    doc = parse(page)
    assert parsed_json_ld(doc)[0]["datePublished"] == "2024-02-21 13:00:00"
    assert publication_day(doc) == "2024-02-21"


def test_json_ld_text_is_decoded_as_the_page_shows_it() -> None:
    assert ld_text("Editors&#8217; picks") == "Editors\u2019 picks"  # once, as WordPress writes it
    assert ld_text("L&amp;#8217;atelier") == "L\u2019atelier"  # escaped once more, as WooCommerce writes it
    assert ld_text("Fish &amp; chips") == "Fish & chips"
    assert ld_text("AT&T &amp;amp; co") == "AT&T & co"
    assert ld_text("R&D, 100% &c") == "R&D, 100% &c"  # no reference: left alone
    assert ld_text("&lt;p&gt;Hi&lt;/p&gt;") == "<p>Hi</p>"
    # the scripts themselves are read as they are written (the learned scorer's feature)
    assert load_json_ld('{"name": "Caf&eacute;"}') == [{"name": "Caf&eacute;"}]


def test_a_listing_item_named_with_a_reference_shows_the_character() -> None:
    ld = {
        "@type": "ItemList",
        "itemListElement": [
            {
                "@type": "ListItem",
                "position": 1,
                "name": "Editor&#8217;s guide",
                "url": "https://example.org/a",
            },
            {
                "@type": "ListItem",
                "position": 2,
                "name": "Tea &amp;amp; cake",
                "url": "https://example.org/b",
            },
        ],
    }
    doc = parse(product_page(ld))
    assert [item.title for item in json_ld_items(doc)] == ["Editor\u2019s guide", "Tea & cake"]
