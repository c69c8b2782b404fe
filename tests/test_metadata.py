"""Metadata: JSON-LD, <meta>, and Readability-style title cleaning."""

from __future__ import annotations

import json

from readerproxy.document import parse
from readerproxy.metadata import clean_title, extract_metadata


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
        "The OG Title", "Example Site", "Jane Doe", "2020-01-02", "Desc.",
    )
    assert meta.image == "https://e.example/img/cover.jpg"
    assert meta.dir == "rtl"


def test_title_cleaning_like_readability() -> None:
    doc = parse("<h1>Heading</h1>")
    assert clean_title("How to grow tomatoes at home | Gardening Weekly", doc) == "How to grow tomatoes at home"
    assert clean_title("Site - How to grow tomatoes at home", doc) == "How to grow tomatoes at home"
    assert clean_title("Short | Site", doc) == "Short | Site"  # too little left: keep the original
    assert clean_title("Tiny", parse("<h1>The one heading of the page</h1>")) == "The one heading of the page"


def test_excerpt_falls_back_to_first_paragraph() -> None:
    meta = extract_metadata(parse("<title>T</title><p>x</p>"), text="First para.\n\nSecond.")
    assert meta.excerpt == "First para."
