"""`auto`'s listing rule: on a page that is a list (a category page, a content index), the text of
its repeated cards is kept; on an article, or a list page read by its written introduction, not."""

from __future__ import annotations

import numpy as np
import pytest

from readerproxy import extract
from readerproxy.engine.extractors.auto import first_extractor
from readerproxy.engine.extractors.learned.params import LearnedParams
from readerproxy.engine.extractors.learned.rules import LIST_MAX_PROSE_CHARS, listing_cards, prose_chars
from readerproxy.engine.extractors.learned.table import POST_RULES, PageKinds, post_rule
from readerproxy.engine.learn.blocks import page_blocks
from readerproxy.engine.parse.document import Document, parse
from readerproxy.engine.views import listing
from readerproxy.engine.views.listing import item_cards, markup_items
from readerproxy.research.training.labels import block_texts

#: The page's address: cards link relative to it (a link that cannot be made absolute is no item).
URL = "https://shop.example/kitchen/kettles"
KETTLES = [
    ("Stovetop kettle in brushed steel, 2 litres", "€ 39.90", "Whistles when the water boils"),
    ("Electric kettle with temperature control", "€ 64.00", "Five settings for tea and coffee"),
    ("Gooseneck pour-over kettle, matte black", "€ 54.50", "A slow, steady pour"),
    ("Travel kettle, folding silicone", "€ 24.99", "Folds flat for a suitcase"),
    ("Enamel kettle, cream, 1.5 litres", "€ 45.00", "For gas, electric and induction hobs"),
    ("Glass kettle with blue light", "€ 32.00", "See the water as it boils"),
    ("Copper kettle, hand-hammered", "€ 89.00", "Made in a small workshop"),
    ("Cordless kettle with keep-warm base", "€ 49.90", "Keeps water hot for thirty minutes"),
]


def _card(number: int, name: str, price: str, note: str) -> str:
    # A shop's product card: a linked picture, a linked name, a price, a line, a button.
    return f"""<li class="product-card"><a href="/p/{number}"><img src="/img/{number}.jpg" width="300"
alt="{name}"></a><h3 class="product-card__title"><a href="/p/{number}">{name}</a></h3>
<span class="price">{price}</span><p class="note">{note}</p>
<button class="add">Add to basket</button></li>"""


FACETS = "".join(
    f'<li><label><input type="checkbox" name="f"> {name}</label></li>'
    for name in ("Steel", "Glass", "Copper")
)
CATEGORY = f"""<html><head><title>Kettles | Kitchen Shop</title>
<meta property="og:type" content="website"></head><body>
<header><nav><ul><li><a href="/">Home</a></li><li><a href="/kitchen">Kitchen</a></li>
<li><a href="/garden">Garden</a></li><li><a href="/offers">Offers</a></li></ul></nav></header>
<main><h1>Kettles</h1><p>{len(KETTLES)} products</p>
<aside class="filters"><h2>Filter</h2><ul>{FACETS}</ul></aside>
<ul class="products">{"".join(_card(i, *kettle) for i, kettle in enumerate(KETTLES))}</ul></main>
<footer><p>Kitchen Shop Ltd, 12 Harbour Street. Customer service: call us on weekdays.</p></footer>
</body></html>"""

INTRODUCTION = " ".join(
    f"Sentence {i} of the buying guide explains what to look for in a kettle before you choose one."
    for i in range(12)
)
CATEGORY_WITH_GUIDE = CATEGORY.replace(
    "<h1>Kettles</h1>", f"<h1>Kettles</h1><div class='guide'><p>{INTRODUCTION}</p></div>"
)


def _page(html: str):  # type: ignore[no-untyped-def]
    doc = parse(html, URL)
    extractor, params = first_extractor()
    blocks = page_blocks(doc, extractor.run(doc, params))
    return doc, blocks, [" ".join(text.split()) for text in block_texts(doc, blocks)]


def test_item_cards_are_the_listing_views_cards() -> None:
    doc = parse(CATEGORY, URL)
    cards, items = item_cards(doc)
    # The same group the listing view reads, one card per product.
    assert items == len(KETTLES) == len(markup_items(doc)) and len(cards) == len(KETTLES)
    assert {doc.classes[card] for card in cards} == {"product-card"}
    assert [item.title for item in markup_items(doc)] == [name for name, *_ in KETTLES]


def test_the_card_groups_are_searched_once_per_document(monkeypatch: pytest.MonkeyPatch) -> None:
    """The rule's `item_cards` and the view's `markup_items` share one search of the card groups
    per Document (`listing._best_group`); another Document searches again."""
    searched: list[Document] = []
    search = listing._search_groups

    def counted(doc: Document):  # type: ignore[no-untyped-def]
        searched.append(doc)
        return search(doc)

    monkeypatch.setattr(listing, "_search_groups", counted)
    doc = parse(CATEGORY, URL)
    cards, items = item_cards(doc, 6)
    assert items == 6 and len(markup_items(doc)) == len(KETTLES)
    assert item_cards(doc) == (cards, len(KETTLES))
    assert searched == [doc]
    other = parse(CATEGORY, URL)
    assert len(markup_items(other)) == len(KETTLES) and searched == [doc, other]


def test_listing_cards_marks_every_card_and_nothing_else() -> None:
    doc, blocks, texts = _page(CATEGORY)
    nothing_kept = np.zeros(len(blocks.elements), dtype=bool)
    found = listing_cards(doc, blocks, nothing_kept, 6)
    for name, price, note in KETTLES:
        for part in (name, price, note):
            (index,) = [i for i, text in enumerate(texts) if text == part]
            assert found[index], part
    others = [i for i, text in enumerate(texts) if text in ("Home", "Garden", "Filter", "Steel", "Kettles")]
    others += [i for i, text in enumerate(texts) if text.startswith("Kitchen Shop Ltd")]
    assert len(others) == 6 and not found[others].any()
    # Fewer cards than asked for: no list.
    assert not listing_cards(doc, blocks, nothing_kept, len(KETTLES) + 1).any()


def test_a_list_page_read_by_its_introduction_is_left_alone() -> None:
    doc, blocks, texts = _page(CATEGORY_WITH_GUIDE)
    guide = np.array([text.startswith("Sentence 0 of the buying guide") for text in texts])
    assert guide.sum() == 1 and prose_chars(blocks, guide) >= LIST_MAX_PROSE_CHARS
    assert not listing_cards(doc, blocks, guide, 6).any()
    # With the introduction not kept (yet), the cards are.
    assert listing_cards(doc, blocks, np.zeros(len(texts), dtype=bool), 6).sum() >= 3 * len(KETTLES)


def test_auto_keeps_each_cards_name_price_and_line_on_a_category_page() -> None:
    text = extract(CATEGORY, URL, algorithm="auto").text
    for name, price, note in KETTLES:
        assert name in text and price in text and note in text
    # The rule is a row of POST_RULES with an off value, so `--ablate listing_items` turns it off.
    rule = post_rule("listing_items")
    assert rule in POST_RULES and rule.effect == "add" and rule.off == 0
    assert rule.active(LearnedParams()) and not rule.active(LearnedParams(list_min_items=0))


def test_articles_and_discussions_never_gain_their_lists() -> None:
    rule = post_rule("listing_items")
    page = {"product": False, "root": True}
    assert PageKinds(article=False, discussion=False, **page).holds(rule.when)
    assert not PageKinds(article=True, discussion=False, **page).holds(rule.when)
    assert not PageKinds(article=False, discussion=True, **page).holds(rule.when)
    # An article whose page ends with a grid of eight cards of other stories.
    story = " ".join(f"Paragraph sentence {i} tells of the harbour and its boats." for i in range(40))
    article = CATEGORY.replace('content="website"', 'content="article"').replace(
        "<h1>Kettles</h1>", f"<article><h1>The harbour</h1><p>{story}</p></article>"
    )
    on = extract(article, URL, algorithm="auto").text
    off = extract(article, URL, algorithm="auto", list_min_items=0).text
    assert on == off and "Paragraph sentence 39" in on


def test_cards_of_many_links_are_a_menu_not_a_list() -> None:
    # A news site's archive: a year per card, each card twelve months, each month a link and a count.
    months = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
    years = "".join(
        f'<li class="year"><a href="/{year}/">{year} archive</a> <span>({year - 1990} stories)</span><ul>'
        + "".join(f'<li><a href="/{year}/{m}/">{m} ({year % 7 + i})</a></li>' for i, m in enumerate(months))
        + "</ul></li>"
        for year in range(2010, 2018)
    )
    page = CATEGORY.replace('<ul class="products">', f'<ul class="archive">{years}</ul><ul class="x">', 1)
    page = page.replace("".join(_card(i, *kettle) for i, kettle in enumerate(KETTLES)), "")
    doc, blocks, texts = _page(page)
    cards, items = item_cards(doc)
    assert items >= 6 and {doc.classes[card] for card in cards} == {"year"}
    assert not listing_cards(doc, blocks, np.zeros(len(texts), dtype=bool), 6).any()
