"""Product and recipe facts (`engine/views/facts.py`): structured data first, then the page; the cards."""

from __future__ import annotations

import json

from selectolax.lexbor import LexborHTMLParser

from readerproxy.engine import pipeline
from readerproxy.engine.parse.document import parse
from readerproxy.engine.views.facts import Price, duration_text, page_facts, product_facts
from readerproxy.web.templating import Preferences, Renderer

BODY = "<p>" + "A sturdy shoe for long runs on rough trails, with a grippy sole. " * 6 + "</p>"


def _page(ld: object | None = None, head: str = "", body: str = "") -> str:
    script = f'<script type="application/ld+json">{json.dumps(ld)}</script>' if ld is not None else ""
    return (
        f"<html><head><title>Trail Runner 2 | Shop</title>{head}{script}</head><body><main>"
        f"<h1>Trail Runner 2</h1>{body}{BODY}</main></body></html>"
    )


PRODUCT = {
    "@context": "https://schema.org",
    "@type": "Product",
    "name": "Trail Runner 2",
    "image": ["/img/runner.jpg"],
    "brand": {"@type": "Brand", "name": "Acme"},
    "offers": {
        "@type": "Offer",
        "price": "34.99",
        "priceCurrency": "USD",
        "availability": "https://schema.org/InStock",
        "priceSpecification": [
            {
                "@type": "UnitPriceSpecification",
                "price": "49.99",
                "priceCurrency": "USD",
                "priceType": "https://schema.org/StrikethroughPrice",
            },
        ],
    },
    "aggregateRating": {"@type": "AggregateRating", "ratingValue": "4.8", "reviewCount": "1941"},
}


def test_structured_data_gives_price_was_price_availability_rating_and_image() -> None:
    facts = product_facts(parse(_page(PRODUCT), "https://shop.example/p/1"))
    assert facts is not None
    assert facts.name == "Trail Runner 2" and facts.brand == "Acme"
    assert facts.price_text == "$34.99" and facts.was_price_text == "$49.99"
    assert facts.availability == "In stock"
    assert facts.rating_text == "4.8 out of 5" and facts.reviews_text == "1,941 reviews"
    assert facts.image == "https://shop.example/img/runner.jpg"
    assert facts.source == "structured"


def test_names_escaped_twice_by_the_shop_read_as_written() -> None:
    ld = {
        **PRODUCT,
        "name": "Caf&amp;eacute; Mug",
        "brand": {"@type": "Brand", "name": "L&amp;#8217;atelier"},
    }
    facts = product_facts(parse(_page(ld), "https://shop.example/p/1"))
    assert facts is not None
    assert facts.brand == "L\u2019atelier" and facts.name == "Café Mug"
    # Text that merely holds an ampersand stays as it is.
    plain = product_facts(parse(_page({**PRODUCT, "name": "Salt & Pepper; Set"}), "https://shop.example/p/2"))
    assert plain is not None and plain.name == "Salt & Pepper; Set"


def test_the_page_s_own_product_not_a_related_one_and_variants_give_a_range() -> None:
    group = {
        "@graph": [
            {
                "@type": "ItemList",
                "itemListElement": [{"@type": "Product", "name": "Other", "offers": {"price": 5}}],
            },
            {
                "@type": "ProductGroup",
                "name": "Trail Runner 2",
                "hasVariant": [
                    {
                        "@type": "Product",
                        "name": "Trail Runner 2 - 42",
                        "offers": {"price": 110, "priceCurrency": "EUR"},
                    },
                    {
                        "@type": "Product",
                        "name": "Trail Runner 2 - 44",
                        "offers": {"price": 120, "priceCurrency": "EUR"},
                    },
                ],
            },
            {
                "@type": "AggregateRating",
                "ratingValue": 4.5,
                "ratingCount": 12,
                "itemReviewed": {"@type": "Product", "name": "Trail Runner 2"},
            },
        ]
    }
    facts = product_facts(parse(_page(group)))
    assert facts is not None and facts.name == "Trail Runner 2"
    assert facts.price_text == "€110 – €120"
    assert facts.rating == 4.5 and facts.reviews_text == "12 ratings"


def test_a_shop_s_own_rating_is_not_the_product_s() -> None:
    ld = [
        {"@type": "Product", "name": "Trail Runner 2", "offers": {"price": "10", "priceCurrency": "GBP"}},
        {
            "@type": "LocalBusiness",
            "name": "Shop",
            "aggregateRating": {"ratingValue": "5", "ratingCount": "31"},
        },
    ]
    facts = product_facts(parse(_page(ld)))
    assert facts is not None and facts.price_text == "£10" and facts.rating is None


def test_without_structured_data_microdata_meta_and_the_visible_price_are_read() -> None:
    micro = '<div itemprop="offers"><meta itemprop="priceCurrency" content="EUR"><span itemprop="price" content="19.90">19,90 €</span></div>'
    micro += '<span itemprop="ratingValue">4.2</span><span itemprop="reviewCount">31</span>'
    facts = product_facts(parse(_page(body=micro)))
    assert (
        facts is not None
        and facts.price_text == "€19.90"
        and facts.rating == 4.2
        and facts.review_count == 31
    )

    meta = '<meta property="product:price:amount" content="25.00"><meta property="product:price:currency" content="GBP">'
    facts = product_facts(parse(_page(head=meta)))
    assert facts is not None and facts.price_text == "£25.00"

    shown = '<p class="price"><del class="price--compare">$49.99</del> <span>$34.99</span></p>'
    facts = product_facts(parse(_page(body=shown)))
    assert facts is not None and facts.price_text == "$34.99" and facts.was_price_text == "$49.99"
    assert facts.source == "page"


def test_a_specifications_table_is_read_by_its_class_or_heading() -> None:
    table = (
        "<h2>Specifications</h2><table><tr><th>Weight</th><td>280 g</td></tr>"
        "<tr><th>Drop</th><td>6 mm</td></tr><tr><td colspan=2>note</td></tr></table>"
    )
    facts = product_facts(parse(_page(PRODUCT, body=table)))
    assert facts is not None and facts.specs == (("Weight", "280 g"), ("Drop", "6 mm"))
    listed = '<dl class="product-specs"><dt>Upper</dt><dd>Mesh</dd><dt>Sole</dt><dd>Rubber</dd></dl>'
    facts = product_facts(parse(_page(PRODUCT, body=listed)))
    assert facts is not None and facts.specs == (("Upper", "Mesh"), ("Sole", "Rubber"))


def test_prices_read_as_people_write_them() -> None:
    assert Price("1299.5", "CHF").text == "1,299.50 CHF"
    assert Price("1099", "$").text == "$1,099"
    assert Price("2.88", "EUR").text == "€2.88"


RECIPE = {
    "@context": "https://schema.org",
    "@type": "Recipe",
    "name": "Pear Jam",
    "recipeIngredient": ["8 pears", "1 lemon", "1 cup honey"],
    "recipeInstructions": [
        {
            "@type": "HowToSection",
            "name": "The fruit",
            "itemListElement": [
                {"@type": "HowToStep", "text": "Peel and core the pears."},
                {"@type": "HowToStep", "text": "Cube them."},
            ],
        },
        {"@type": "HowToStep", "text": "Boil with the lemon and honey until thick."},
    ],
    "prepTime": "PT20M",
    "cookTime": "PT1H5M",
    "recipeYield": ["6", "6 jars"],
}


def test_recipe_facts_on_any_page_with_recipe_data() -> None:
    facts = page_facts(parse(_page(RECIPE)), "", "article")
    assert facts.product is None and facts.recipe is not None
    recipe = facts.recipe
    assert recipe.ingredients == ("8 pears", "1 lemon", "1 cup honey")
    assert [(s.name, s.steps) for s in recipe.sections] == [
        ("The fruit", ("Peel and core the pears.", "Cube them.")),
        ("", ("Boil with the lemon and honey until thick.",)),
    ]
    assert recipe.times == [("Prep", "20 min"), ("Cook", "1 hr 5 min")] and recipe.recipe_yield == "6 jars"
    assert duration_text("P1DT2H") == "1 d 2 hr" and duration_text("PT0S") is None
    plain = page_facts(parse(_page({"@type": "Recipe", "recipeInstructions": "Mix.\nBake."})), "", "article")
    assert plain.recipe is not None and plain.recipe.sections[0].steps == ("Mix.", "Bake.")


def test_no_facts_for_other_pages_and_none_read_unless_asked() -> None:
    assert page_facts(parse(_page(PRODUCT)), "", "article").product is None
    article = pipeline.process(_page(PRODUCT), url="https://shop.example/p/1")
    assert article._facts is None and article.decide_facts is not None  # extract() paid nothing
    data = article.to_dict()
    assert "product" in data and "recipe" in data and data["recipe"] is None
    if article.page_kind == "product":
        assert data["product"]["price_text"] == "$34.99"


def test_the_reader_view_shows_the_product_card_and_the_recipe_card() -> None:
    article = pipeline.process(_page(PRODUCT), url="https://shop.example/p/1").to_dict()
    article["page_kind"], article["readerable"] = "product", False
    article["product"] = product_facts(parse(_page(PRODUCT), "https://shop.example/p/1")).to_dict()  # type: ignore[union-attr]
    tree = LexborHTMLParser(Renderer().reader_page(article, Preferences()))
    card = tree.css_first("section.product-card")
    assert card is not None
    price, was, rating = (card.css_first(s) for s in (".price", ".was-price s", ".rating"))
    assert price is not None and was is not None and rating is not None
    assert price.text() == "$34.99" and was.text() == "$49.99"
    assert "4.8 out of 5" in rating.text() and "1,941 reviews" in card.text()
    assert card.css_first(".facts-image img") is not None
    lite = LexborHTMLParser(Renderer().reader_page(article, Preferences(lite=True)))
    assert lite.css_first(".facts-image") is None

    recipe_page = pipeline.process(_page(RECIPE), url="https://food.example/jam").to_dict()
    tree = LexborHTMLParser(Renderer().reader_page(recipe_page, Preferences()))
    card = tree.css_first("section.recipe-card")
    assert card is not None and [li.text() for li in card.css(".ingredients li")] == [
        "8 pears",
        "1 lemon",
        "1 cup honey",
    ]
    assert len(card.css(".steps li")) == 3
    # The recipe comes first, the story after.
    html = tree.html or ""
    assert html.index("recipe-card") < html.index('class="content"')
