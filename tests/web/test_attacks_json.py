"""http(s) only in every URL the JSON carries.

`docs/security.md` promises that nothing in the output links to anything but http(s); the HTML views
held, but the JSON carried a page's `javascript:` and `data:` addresses as they were: the lead
`image` (og:image, link rel=image_src), `product.image`, `recipe.image`, and with no page URL to
resolve against `next_page_url`. A client putting them in an `href` or `src` ran the page's script.
Each is now made absolute and kept only as an http(s) URL where it is made (`facts.web_url`), the
next candidate taken when there is one; a listing's items linking mailto: or tel: stay out of the
JSON's `items`. The walk over the whole JSON looks at every key naming a URL or an image.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import aiohttp
import pytest
from support.reader_server import serve, test_settings

from readerproxy.engine.extraction import get_extractor
from readerproxy.engine.metadata.metadata import lead_image
from readerproxy.engine.parse.document import parse
from readerproxy.engine.pipeline import process_page

TEXT = "<p>" + "Words of the article that a reader reads, and then some more of them. " * 30 + "</p>"
HOSTILE = (
    "javascript:alert(1)",
    " JaVaScRiPt:alert(1)",
    "\x01javascript:alert(1)",
    "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
    "data:image/svg+xml,%3Csvg%20onload%3Dalert(1)%3E",
    "vbscript:msgbox(1)",
)


def _page(head: str = "", body: str = "", ld: object | None = None) -> str:
    script = f'<script type="application/ld+json">{json.dumps(ld)}</script>' if ld is not None else ""
    return f"<!doctype html><html><head><title>T</title>{head}{script}</head><body>{body}</body></html>"


def _article(image: str) -> str:
    return (
        f"<article><h1>T</h1>{TEXT}<figure><img src='{image}' alt='A harbour at dawn' width='800' "
        "height='600'></figure></article>"
    )


def _product(image: object) -> dict[str, Any]:
    return {
        "@context": "https://schema.org",
        "@type": "Product",
        "name": "Trail Runner 2",
        "image": image,
        "offers": {"@type": "Offer", "price": "34.99", "priceCurrency": "USD"},
    }


def _recipe(image: object) -> dict[str, Any]:
    return {
        "@context": "https://schema.org",
        "@type": "Recipe",
        "name": "Soup",
        "image": image,
        "recipeIngredient": ["1 onion", "2 carrots"],
        "recipeInstructions": [
            {"@type": "HowToStep", "text": "Cut."},
            {"@type": "HowToStep", "text": "Boil."},
        ],
    }


def hostile_pages(bad: str) -> Iterator[tuple[str, str]]:
    """(what carries it, page) for one hostile address in every place the JSON takes a URL from
    (`test_each_carrier_reaches_the_json` checks that each carries a good address through)."""
    article = f"<article><h1>T</h1>{TEXT}</article>"
    yield "og:image", _page(f'<meta property="og:image" content="{bad}">', article)
    yield "twitter:image", _page(f'<meta name="twitter:image" content="{bad}">', article)
    yield "link rel=image_src", _page(f'<link rel="image_src" href="{bad}">', article)
    yield (
        "JSON-LD image",
        _page(
            "",
            article,
            {"@context": "https://schema.org", "@type": "NewsArticle", "headline": "T", "image": bad},
        ),
    )
    yield "first img", _page("", _article(bad))
    yield "rel=next", _page(f'<link rel="next" href="{bad}">', article)
    shop = f"<main><h1>Trail Runner 2</h1><p>Price $34.99</p><button>Add to cart</button>{TEXT}</main>"
    yield "product image", _page("", shop, _product(bad))
    yield "product image list", _page("", shop, _product([bad, {"url": bad}]))
    yield "recipe image", _page("", article, _recipe([bad]))
    cards = "".join(
        f'<article class="post"><h2><a href="{bad if n % 2 else f"/story-{n}"}">Story number {n} of the week</a></h2>'
        f"<p>What happened in story {n}, told in a sentence or two for the list.</p></article>"
        for n in range(8)
    )
    yield "listing items", _page("", f"<main><h1>Latest stories</h1><div class='posts'>{cards}</div></main>")


def url_values(value: Any, key: str = "") -> Iterator[tuple[str, str]]:
    """Every string under a key naming a URL or an image, with its path."""
    if isinstance(value, dict):
        for name, child in value.items():
            yield from url_values(child, f"{key}.{name}")
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from url_values(child, f"{key}[{index}]")
    elif isinstance(value, str) and re.search(r"(url|image)$", key):
        yield key, value


def not_web(data: dict[str, Any]) -> list[tuple[str, str]]:
    return [(key, value) for key, value in url_values(data) if not value.startswith(("http://", "https://"))]


@pytest.mark.parametrize("base", ["https://ex.org/a/", None])
@pytest.mark.parametrize("bad", HOSTILE)
def test_no_url_in_the_json_is_anything_but_http_s(bad: str, base: str | None) -> None:
    for carrier, page in hostile_pages(bad):
        data = process_page(page, url=base, algorithm=get_extractor("auto")).article.to_dict()
        data.pop("url")  # the page's own (None when posted without one)
        assert not_web(data) == [], (carrier, bad, base)


@pytest.mark.parametrize("base", ["https://ex.org/a/", None])
def test_each_carrier_reaches_the_json(base: str | None) -> None:
    """The control: a good address in each place reaches the JSON (so the test above would see a
    bad one), where the page kind and the resolving allow (a product and a listing need the page's
    URL; an image the article shows is not repeated as its lead image: `test_lead_image_...`)."""
    reached = {}
    for carrier, page in hostile_pages("https://ex.org/good-2.jpg"):
        data = process_page(page, url=base, algorithm=get_extractor("auto")).article.to_dict()
        reached[carrier] = [key for key, value in url_values(data) if "good-2" in value]
    missing = {carrier for carrier, keys in reached.items() if not keys}
    without_url = {"product image", "product image list", "listing items"}
    assert missing == {"first img"} | (without_url if base is None else set())


def test_lead_image_from_the_article_s_images_is_the_first_web_one() -> None:
    for bad in HOSTILE:
        images = f"<p><img src='{bad}' alt='A'></p><p><img src='/second.jpg' alt='B'></p>"
        page = _page("", f"<article><h1>T</h1>{images}{TEXT}</article>")
        assert lead_image(parse(page, "https://ex.org/a/"), {}, {}, None) == "https://ex.org/second.jpg"
        assert lead_image(parse(page, None), {}, {}, None) is None  # relative, nothing to resolve it by


def test_a_hostile_candidate_gives_way_to_the_next() -> None:
    """The lead image and the product's are the first candidates that are http(s), not none."""
    head = '<meta property="og:image" content="javascript:alert(1)"><meta name="twitter:image" content="/lead.jpg">'
    data = process_page(
        _page(head, f"<article><h1>T</h1>{TEXT}</article>"),
        url="https://ex.org/a/",
        algorithm=get_extractor("auto"),
    ).article.to_dict()
    assert data["image"] == "https://ex.org/lead.jpg"
    shop = f"<main><h1>Trail Runner 2</h1><p>Price $34.99</p>{TEXT}</main>"
    product = _product(["data:image/png;base64,AAAA", {"url": "javascript:x"}, "/img/runner.jpg"])
    done = process_page(
        _page("", shop, product), url="https://shop.example/p/1", algorithm=get_extractor("auto")
    )
    assert done.article.to_dict()["product"]["image"] == "https://shop.example/img/runner.jpg"


def test_a_listing_keeps_its_web_items_and_only_those() -> None:
    cards = "".join(
        f'<article class="post"><h2><a href="{"mailto:a@ex.org" if n == 3 else f"/story-{n}"}">Story number {n} of the week</a></h2>'
        f"<p>What happened in story {n}, told in a sentence or two for the list.</p></article>"
        for n in range(8)
    )
    page = _page("", f"<main><h1>Latest stories</h1><div class='posts'>{cards}</div></main>")
    article = process_page(page, url="https://ex.org/", algorithm=get_extractor("auto")).article
    assert article.items is not None and any(item.url.startswith("mailto:") for item in article.items)
    items = article.to_dict()["items"]
    assert [item["url"] for item in items] == [f"https://ex.org/story-{n}" for n in range(8) if n != 3]


def test_web_url() -> None:
    from readerproxy.engine.views.facts import web_url

    assert web_url(None, "https://ex.org/a") == "https://ex.org/a"
    assert web_url(None, " HTTP://ex.org/a ") == "HTTP://ex.org/a"
    for value in (*HOSTILE, "/relative.jpg", "", "  ", None, "https:", "https:/x", "//ex.org/a"):
        assert web_url(None, value) is None, value


async def test_the_api_answers_http_s_urls_only() -> None:
    async with serve(test_settings(rate_limit=0)) as server, aiohttp.ClientSession() as http:
        for bad in HOSTILE[:4]:
            for carrier, page in hostile_pages(bad):
                for url in ("https://ex.org/a/", None):
                    body = {"html": page, **({"url": url} if url else {})}
                    async with http.post(server.url("/api/extract"), json=body) as response:
                        assert response.status == 200, (carrier, await response.text())
                        data = await response.json()
                    data.pop("url", None)
                    data.pop("final_url", None)
                    assert not_web(data) == [], (carrier, bad, url)
