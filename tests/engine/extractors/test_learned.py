"""`learned` (auto): the rules around the trees' selection on product pages."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np

from readerproxy import extract
from readerproxy.engine.extractors.auto import first_extractor
from readerproxy.engine.extractors.learned.rules import (
    after_related_heading,
    repeated_blocks,
    review_section,
    says_article,
    says_product,
)
from readerproxy.engine.learn.blocks import page_blocks
from readerproxy.engine.learn.model import BlockScorer, load_model
from readerproxy.engine.parse.document import parse
from readerproxy.research.training.labels import block_texts

DESCRIPTION = " ".join(
    f"Point {i}: the kettle boils a full litre of water in under three minutes and switches itself off."
    for i in range(12)
)
REVIEWS = "".join(
    f'<div class="review-item"><h4>Reviewer {i}</h4><p>Review {i}: I bought this kettle for my mother and '
    f"she says it is loud but quick, four stars from our whole family.</p></div>"
    for i in range(6)
)


def product_page(head: str = "", body_class: str = "") -> str:
    return f"""<html><head><title>Kettle</title>{head}
<script type="application/ld+json">{{"@context": "https://schema.org", "@type": "Product",
 "name": "Kettle", "offers": {{"@type": "Offer", "price": "20"}}}}</script></head>
<body class="{body_class}"><main><h1>Kettle</h1><p>{DESCRIPTION}</p>
<section id="customer-reviews" class="product-reviews"><h2>Customer reviews</h2>{REVIEWS}</section>
</main></body></html>"""


def _blocks(html: str):  # type: ignore[no-untyped-def]
    doc = parse(html)
    extractor, params = first_extractor()
    return doc, page_blocks(doc, extractor.run(doc, params))


def test_review_section_marks_the_blocks_inside_review_containers() -> None:
    doc, blocks = _blocks(product_page())
    texts = block_texts(doc, blocks)
    inside = review_section(doc, blocks.elements)
    reviews = np.array([t.startswith(("Review", "Customer reviews")) for t in texts])
    assert reviews.sum() == 13 and inside[reviews].all() and not inside[~reviews].any()


def test_review_section_ignores_the_page_itself_and_previews() -> None:
    # A theme naming the body after reviews, and a container holding most of the page's text, are
    # not a reviews section; neither is a "preview".
    page = (
        product_page(body_class="single-product reviews-enabled")
        .replace("<main>", '<main><div class="review-layout">')
        .replace("</main>", "</div></main>")
    )
    doc, blocks = _blocks(
        page.replace('class="product-reviews"', 'class="image-preview"')
        .replace('id="customer-reviews"', "")
        .replace("review-item", "card")
    )
    assert not review_section(doc, blocks.elements).any()


def test_reviews_are_cut_on_product_pages_only() -> None:
    page = product_page()
    _, blocks = _blocks(page)
    assert says_product(blocks.features) and not says_article(blocks.features)
    text = extract(page, algorithm="auto").text
    assert "Point 11: the kettle" in text and "Review 0:" not in text and "Review 5:" not in text
    # A review article about a product (JSON-LD Product and og:type article): the reviews may be
    # the article, nothing is cut by the rule.
    article = product_page(head='<meta property="og:type" content="article">')
    _, blocks = _blocks(article)
    assert says_article(blocks.features)
    on = extract(article, algorithm="auto").text
    assert "Review 0:" in on and on == extract(article, algorithm="auto", cut_reviews="false").text
    # With the rule off on the product page, the trees keep the reviews (they sit in the main region).
    assert "Review 5:" in extract(page, algorithm="auto", cut_reviews="false").text


SENTENCES = " ".join(
    f"Sentence {i} of the story tells the reader about the river and its bridges." for i in range(40)
)
RELATED_PAGE = f"""<html><head><title>The river</title><meta property="og:type" content="article"></head>
<body><article><h1>The river</h1><p>{SENTENCES[:1200]}</p><p>{SENTENCES[1200:]}</p>
<h2>Related articles</h2>{
    "".join(
        f"<p>Teaser {i}: another story about lakes and the people who live beside them.</p>" for i in range(3)
    )
}</article></body></html>"""


def constant_model(path: Path, probability: float) -> str:
    """The shipped model with every leaf of its second stage at 0 and its initial score at the
    log-odds of `probability`: every block scores `probability`."""
    shipped = load_model()
    second = dataclasses.replace(
        shipped.second,
        value=np.zeros_like(shipped.second.value),
        init=math.log(probability / (1 - probability)),
    )
    BlockScorer(shipped.first, second).save(path)
    return str(path)


def test_after_a_related_heading_on_an_article_the_heuristic_prior_does_not_hold(tmp_path: Path) -> None:
    doc, blocks = _blocks(RELATED_PAGE)
    texts = block_texts(doc, blocks)
    # The heading itself and the teasers after it.
    teasers = np.array([t.startswith(("Teaser", "Related")) for t in texts])
    assert teasers.sum() == 4 and (after_related_heading(blocks.features) == teasers).all()
    # Every block at p 0.4: the heuristic's blocks pass its prior (0.3) but not the threshold (0.5).
    model = constant_model(tmp_path / "flat.npz", 0.4)
    with_prior = extract(RELATED_PAGE, algorithm="auto", model=model, related_prior="true").text
    assert "Teaser 2:" in with_prior and "Sentence 39" in with_prior
    text = extract(RELATED_PAGE, algorithm="auto", model=model).text
    assert "Sentence 39" in text and "Teaser" not in text
    # Not an article: the prior holds after the heading as before.
    other = RELATED_PAGE.replace('<meta property="og:type" content="article">', "")
    assert "Teaser 2:" in extract(other, algorithm="auto", model=model).text


def test_a_product_page_repeats_no_block() -> None:
    # The description twice (one copy for narrow screens, one for wide ones), each with a short
    # line after it; a table whose cells repeat short values before them.
    copy = f"<p>{DESCRIPTION}</p><p>Handmade stoneware.</p>"
    table = "<table><tr><td>Lid</td><td>Yes</td></tr><tr><td>Filter</td><td>Yes</td></tr></table>"
    twice = product_page().replace(
        "<h1>Kettle</h1>", f'<h1>Kettle</h1>{table}<div class="mobile">{copy}</div>{copy}'
    )
    doc, blocks = _blocks(twice)
    texts = block_texts(doc, blocks)
    keep = np.ones(len(texts), dtype=bool)
    repeated = repeated_blocks(doc, blocks, keep, sections=False)  # as on a product page
    copies = [i for i, t in enumerate(texts) if t.startswith("Point 0")]
    short = [i for i, t in enumerate(texts) if t.startswith("Handmade")]
    assert len(copies) == 3 and not repeated[copies[0]] and repeated[copies[1:]].all()
    assert len(short) == 2 and not repeated[short[0]] and repeated[short[1]]
    # A short block outside a copy ("Yes" twice in the table) is no repeat; nor is a block not kept.
    assert not repeated[[i for i, t in enumerate(texts) if t == "Yes"]].any()
    assert not repeated_blocks(doc, blocks, ~np.isin(np.arange(len(texts)), copies[:2])).any()
    text = extract(twice, algorithm="auto").text
    assert text.count("Point 11: the kettle") == 1 and text.count("Handmade stoneware.") == 1
    assert extract(twice, algorithm="auto", cut_repeats="false").text.count("Point 11: the kettle") == 3
