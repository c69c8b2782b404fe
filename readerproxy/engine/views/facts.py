"""The key facts of a product or a recipe, for the views of those page kinds.

A reader of a product page wants what the shop states about the product: its name, price (and the
price it was), whether it is in stock, its rating and how many reviews give it, a description, a
specifications table and the main image. A reader of a recipe wants the ingredients, the steps, the
times and the yield before the story around them. The extractor keeps the page's main text; these
facts are read beside it, for the card the reader view shows above that text.

Where they come from, most trusted first:

- the page's structured data: JSON-LD `Product` / `ProductGroup` with its `Offer`, `AggregateOffer`
  or variants' offers, `priceSpecification` (a `StrikethroughPrice` or `ListPrice` above the price
  is the was-price), `AggregateRating` (on the product, or standing alone and naming it in
  `itemReviewed`), `additionalProperty`; JSON-LD `Recipe` (`recipeIngredient`,
  `recipeInstructions` as text, `HowToStep`s or `HowToSection`s, ISO 8601 times, `recipeYield`);
- the page: microdata (`itemprop="price"`, `priceCurrency`, `ratingValue`, `reviewCount`,
  `availability`), `<meta property="product:price:amount">` and `og:price:amount`, and last a
  price written in the text just after the product's name (the `<h1>`), with a struck-through or
  "was"/"compare"/"regular"-classed price there as the was-price; a key/value table or definition
  list marked as specifications (by its own or an ancestor's class or id, or the heading before it).

Everything here is pure: a `Document` in, frozen dataclasses out. `page_facts` is what the pipeline
calls, lazily (`Article.facts`), so an extraction nobody asks about pays nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from ..parse.document import TEXT, Document
from ..parse.text import squash
from ..schema import ld_text, ld_types, parsed_json_ld, walk

#: Deepest nesting of JSON-LD objects searched (a `@graph`, `mainEntity`, an `offers` list, ...).
MAX_DEPTH = 12
#: Keys under which a product is another product than the page's own (related, similar, a list).
OTHER_PRODUCT_KEYS = frozenset(
    "isRelatedTo isSimilarTo isAccessoryOrSparePartFor isConsumableFor itemListElement "
    "hasVariant model isVariantOf".split()
)
#: Characters of text after the product's name searched for a visible price.
PRICE_WINDOW = 600
#: A was-price above this many times the price is no was-price (a bundle, a different product).
MAX_WAS_RATIO = 10
#: Most rows of a specifications table shown, and the longest key of one.
MAX_SPECS = 40
MAX_SPEC_KEY = 60
#: Most ingredients and steps taken from a recipe (a page of several recipes lists them all).
MAX_RECIPE_ITEMS = 200

CURRENCY_SIGNS = {
    "USD": "$",
    "EUR": "€",
    "GBP": "£",
    "JPY": "¥",
    "CNY": "¥",
    "INR": "₹",
    "KRW": "₩",
    "AUD": "A$",
    "CAD": "CA$",
    "NZD": "NZ$",
    "HKD": "HK$",
    "SGD": "S$",
    "MXN": "MX$",
    "BRL": "R$",
    "RUB": "₽",
    "TRY": "₺",
    "UAH": "₴",
    "ILS": "₪",
    "THB": "฿",
    "VND": "₫",
    "PHP": "₱",
}
#: Signs that stand for one currency when a page writes a price without naming it.
SIGN_CURRENCIES = {
    "€": "EUR",
    "£": "GBP",
    "₹": "INR",
    "₩": "KRW",
    "₽": "RUB",
    "₺": "TRY",
    "₴": "UAH",
    "₪": "ILS",
}

_SIGN = r"(?:US\$|A\$|CA\$|C\$|NZ\$|HK\$|S\$|R\$|[$€£¥₹₩₽₺₴₪฿₫₱])"
_CODE = r"(?:USD|EUR|GBP|AUD|CAD|CHF|JPY|SEK|NOK|DKK|PLN|CZK|INR|kr|zł|Kč|Rs\.?)"
_AMOUNT = r"(?P<{}>\d{{1,3}}(?:[ ,.\u00a0\u202f]\d{{3}})*(?:[.,]\d{{1,2}})?|\d+(?:[.,]\d{{1,2}})?)"
#: A price written on a page: a sign or code before the amount, or a sign or code after it.
PRICE_PATTERN = re.compile(
    rf"(?P<before>{_SIGN}|{_CODE})\s?{_AMOUNT.format('amount')}(?![\d%])"
    rf"|(?<![\w.,]){_AMOUNT.format('amount_after')}\s?(?P<after>{_SIGN}|{_CODE})(?!\w)"
)
#: Classes and ids of an element holding a price that no longer applies.
WAS_CLASS = re.compile(r"compare|was|old|regular|original|strike|list-?price|before|msrp|rrp", re.I)
#: Classes, ids and headings of a specifications table.
SPEC_HINT = re.compile(
    r"spec|technical|tech-?data|attribute|characteristic|dimension|product-?(?:detail|info|data)|"
    r"additional-?information|caract[ée]ristique|technische",
    re.I,
)
_TAG = re.compile(r"<[^>]*>")
_DURATION = re.compile(
    r"^P(?:(?P<days>\d+(?:\.\d+)?)D)?(?:T(?:(?P<hours>\d+(?:\.\d+)?)H)?(?:(?P<minutes>\d+(?:\.\d+)?)M)?"
    r"(?:(?P<seconds>\d+(?:\.\d+)?)S)?)?$",
    re.I,
)
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")


@dataclass(frozen=True, slots=True)
class Price:
    """An amount of money as a page states it: a decimal string and an ISO 4217 code, or the sign the
    page wrote when it names no code ("$" is many currencies), or ""."""

    amount: str
    currency: str = ""

    @property
    def value(self) -> Decimal:
        return Decimal(self.amount)

    @property
    def cents(self) -> bool:
        """Whether the amount is written with cents ("149.00", "34.99")."""
        return "." in self.amount or self.value != self.value.to_integral_value()

    @property
    def text(self) -> str:
        """As a reader reads it: "$34.99", "€149", "1,299.00 CHF"."""
        return self.format(self.cents)

    def format(self, cents: bool) -> str:
        """As a reader reads it, with or without cents (two prices side by side agree)."""
        value = self.value
        digits = f"{value:,.2f}" if cents else f"{value:,.0f}"
        sign = CURRENCY_SIGNS.get(self.currency) or (self.currency if not self.currency.isalpha() else "")
        if sign:
            return f"{sign}{digits}"
        return f"{digits} {self.currency}".strip()


@dataclass(frozen=True, slots=True)
class ProductFacts:
    """What a product page states about its product; None or empty where it does not say."""

    name: str
    price: Price | None = None
    high_price: Price | None = None  # the top of a price range (variants, an AggregateOffer)
    was_price: Price | None = None
    availability: str | None = None  # "In stock", "Out of stock", "Pre-order", ...
    rating: float | None = None
    best_rating: float = 5.0
    review_count: int | None = None
    rating_count: int | None = None
    brand: str | None = None
    description: str | None = None
    image: str | None = None
    specs: tuple[tuple[str, str], ...] = ()
    #: Whether the article text already holds the description / the specifications (the card then
    #: leaves them to it).
    description_in_text: bool = False
    specs_in_text: bool = False
    source: str = "structured"  # "structured" when the price or rating came from structured data, else "page"

    @property
    def _cents(self) -> bool:
        prices = (self.price, self.high_price, self.was_price)
        return any(p.cents for p in prices if p is not None)

    @property
    def price_text(self) -> str | None:
        if self.price is None:
            return None
        if self.high_price is not None and self.high_price.value > self.price.value:
            return f"{self.price.format(self._cents)} – {self.high_price.format(self._cents)}"
        return self.price.format(self._cents)

    @property
    def was_price_text(self) -> str | None:
        return self.was_price.format(self._cents) if self.was_price is not None else None

    @property
    def rating_text(self) -> str | None:
        if self.rating is None:
            return None
        return f"{_number(self.rating)} out of {_number(self.best_rating)}"

    @property
    def reviews_text(self) -> str | None:
        if self.review_count:
            return f"{self.review_count:,} review" + ("s" if self.review_count != 1 else "")
        if self.rating_count:
            return f"{self.rating_count:,} rating" + ("s" if self.rating_count != 1 else "")
        return None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, with the texts a reader sees beside the values."""
        data = asdict(self)
        data["specs"] = [list(row) for row in self.specs]
        data["price_text"] = self.price_text
        data["was_price_text"] = self.was_price_text
        data["rating_text"] = self.rating_text
        data["reviews_text"] = self.reviews_text
        return data


@dataclass(frozen=True, slots=True)
class RecipeSection:
    """A named group of steps ("For the sauce"), or the steps of a recipe without sections ("")."""

    name: str
    steps: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RecipeFacts:
    """What a page's Recipe structured data states."""

    name: str
    ingredients: tuple[str, ...] = ()
    sections: tuple[RecipeSection, ...] = ()
    prep_time: str | None = None  # "15 min", "1 hr 20 min"
    cook_time: str | None = None
    total_time: str | None = None
    recipe_yield: str | None = None
    image: str | None = None
    rating: float | None = None
    rating_count: int | None = None

    @property
    def times(self) -> list[tuple[str, str]]:
        """The times a reader plans with, labelled, in order."""
        pairs = (("Prep", self.prep_time), ("Cook", self.cook_time), ("Total", self.total_time))
        return [(label, value) for label, value in pairs if value]

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["ingredients"] = list(self.ingredients)
        data["sections"] = [{"name": s.name, "steps": list(s.steps)} for s in self.sections]
        data["yield"] = data.pop("recipe_yield")
        data["times"] = [list(pair) for pair in self.times]
        return data


@dataclass(frozen=True, slots=True)
class PageFacts:
    """The facts the view for a page's kind shows (None where they do not apply or are not stated)."""

    product: ProductFacts | None = None
    recipe: RecipeFacts | None = None


def page_facts(doc: Document, text: str, kind: str) -> PageFacts:
    """The product facts of a product page and the recipe of any page with Recipe structured data.

    `text` is the article's text (to tell whether it already shows the description and the
    specifications); `kind` the page kind (`pagekind.page_kind`)."""
    has_recipe = any("Recipe" in raw for raw in doc.json_ld)  # for speed: no JSON parse otherwise
    if kind != "product" and not has_recipe:
        return PageFacts()
    objects = list(parsed_json_ld(doc))
    product = product_facts(doc, text, objects) if kind == "product" else None
    recipe = recipe_facts(objects, doc) if has_recipe else None
    return PageFacts(product=product, recipe=recipe)


# --- JSON-LD ------------------------------------------------------------------------------------


def _walk(objects: list[Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every object, with the key of the nearest holder that says whose it is ("" at the top: the
    page's own; `OTHER_PRODUCT_KEYS`), no deeper than `MAX_DEPTH`."""
    return walk(objects, max_depth=MAX_DEPTH, marks=OTHER_PRODUCT_KEYS)


def _text(value: Any) -> str | None:
    """A plain-text string from a JSON-LD value (tags dropped, entities decoded), None if empty."""
    if isinstance(value, list):
        value = next((v for v in value if isinstance(v, str | dict)), None)
    if isinstance(value, dict):
        value = value.get("name") or value.get("text") or value.get("@value")
    if isinstance(value, int | float) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        return None
    cleaned = squash(_TAG.sub(" ", ld_text(value)))
    return cleaned or None


def _image(value: Any, doc: Document | None) -> str | None:
    """The first of a JSON-LD `image` value's addresses (a string, an ImageObject, a list of
    either) that is an http(s) URL once made absolute against the page (`web_url`)."""
    if isinstance(value, list):
        for item in value:
            found = _image(item, doc)
            if found:
                return found
        return None
    if isinstance(value, dict):
        value = value.get("url") or value.get("contentUrl")
    return web_url(doc, value) if isinstance(value, str) else None


_WEB_URL = re.compile(r"https?://", re.I)


def web_url(doc: Document | None, value: str | None) -> str | None:
    """`value` made absolute against the page (`doc`'s base URL), when that is an http(s) URL; else
    None, so a `javascript:` or `data:` URL (or a relative one with nothing to resolve it against)
    never reaches the JSON: the API promises http(s) only in every URL it carries, and a client may
    put them in an `href` or `src` as they are. The HTML views have their own scheme policy."""
    if value is None or not value.strip():
        return None
    url = doc.absolute_url(value) if doc is not None else value.strip()
    return url if url is not None and _WEB_URL.match(url) else None


def _number(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".") if value != int(value) else str(int(value))


def _float(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip().replace(",", "."))
        except ValueError:
            return None
    return None


def _count(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return int(value) if value >= 0 else None
    if isinstance(value, str):
        digits = re.sub(r"[\s,.\u00a0]", "", value)
        return int(digits) if digits.isdigit() else None
    return None


def _amount(value: Any) -> str | None:
    """A price amount as a plain decimal string ("1299.00"), None unless a positive number."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        text = repr(value) if isinstance(value, float) else str(value)
    elif isinstance(value, str):
        text = value.strip().replace("\u00a0", "").replace(" ", "")
        if "," in text and "." in text:  # 1,299.00 or 1.299,00: the last one is the decimal point
            text = (
                text.replace(",", "")
                if text.rfind(".") > text.rfind(",")
                else text.replace(".", "").replace(",", ".")
            )
        elif "," in text:
            head, _, tail = text.rpartition(",")
            text = f"{head.replace(',', '')}.{tail}" if len(tail) != 3 else text.replace(",", "")
    else:
        return None
    try:
        number = Decimal(text)
    except InvalidOperation:
        return None
    if not number.is_finite() or number <= 0:
        return None
    return text if not text.startswith("+") else text[1:]


def _currency(value: Any) -> str:
    return value.strip().upper()[:3] if isinstance(value, str) and value.strip() else ""


def _availability(value: Any) -> str | None:
    """schema.org's ItemAvailability ("https://schema.org/InStock") as words ("In stock")."""
    if isinstance(value, list):
        value = next(iter(value), None)
    if not isinstance(value, str) or not value.strip():
        return None
    name = value.strip().rstrip("/").rsplit("/", 1)[-1]
    special = {"PreOrder": "Pre-order", "PreSale": "Pre-sale", "BackOrder": "Back order"}
    if name in special:
        return special[name]
    words = _CAMEL.sub(" ", name).strip()
    return words[:1].upper() + words[1:].lower() if words and len(words) < 40 else None


def _offers(product: dict[str, Any]) -> list[dict[str, Any]]:
    offers = product.get("offers")
    if isinstance(offers, dict):
        offers = [offers]
    return [o for o in offers if isinstance(o, dict)] if isinstance(offers, list) else []


def _offer_prices(offer: dict[str, Any]) -> tuple[Price | None, Price | None, Price | None]:
    """Price, top of range and was-price of one offer."""
    currency = _currency(offer.get("priceCurrency"))
    price = _amount(offer.get("price"))
    low = _amount(offer.get("lowPrice") or offer.get("minPrice"))
    high = _amount(offer.get("highPrice") or offer.get("maxPrice"))
    was: Price | None = None
    specs = offer.get("priceSpecification")
    for spec in specs if isinstance(specs, list) else [specs]:
        if not isinstance(spec, dict):
            continue
        amount = _amount(spec.get("price"))
        spec_currency = _currency(spec.get("priceCurrency")) or currency
        if amount is None:
            continue
        kind = str(spec.get("priceType") or "")
        if "Strikethrough" in kind or "ListPrice" in kind or "SRP" in kind:
            was = Price(amount, spec_currency)
        elif price is None:
            price, currency = amount, spec_currency
    first = price or low
    if first is None:
        return None, None, was
    current = Price(first, currency)
    top = Price(high, currency) if high and not price else None
    if was is not None and not (current.value < was.value <= current.value * MAX_WAS_RATIO):
        was = None
    return current, top, was


def _main_product(objects: list[Any], title: str) -> dict[str, Any] | None:
    """The page's own product: at the top of its data (not a variant, a related product or a list
    item), named like the page's headline when several are, with an offer or a rating first."""
    candidates: list[tuple[int, int, dict[str, Any]]] = []
    nested: list[dict[str, Any]] = []
    for order, (key, node) in enumerate(_walk(objects)):
        if not any("Product" in t for t in ld_types(node)):
            continue
        if key:
            nested.append(node)
            continue
        name = _text(node.get("name")) or ""
        score = (2 if _offers(node) or node.get("hasVariant") else 0) + (
            1 if node.get("aggregateRating") else 0
        )
        if name and title and name.lower() in title.lower():
            score += 2
        candidates.append((-score, order, node))
    if candidates:
        return min(candidates, key=lambda c: (c[0], c[1]))[2]
    # Only nested products: a page whose one product sits in a list of one is still that product.
    return nested[0] if len(nested) == 1 else None


def _variant_prices(product: dict[str, Any]) -> tuple[Price | None, Price | None]:
    prices = []
    variants = product.get("hasVariant")
    for variant in variants if isinstance(variants, list) else [variants]:
        if isinstance(variant, dict):
            for offer in _offers(variant):
                price = _offer_prices(offer)[0]
                if price is not None:
                    prices.append(price)
    if not prices:
        return None, None
    low = min(prices, key=lambda p: p.value)
    high = max(prices, key=lambda p: p.value)
    return low, (high if high.value > low.value and high.currency == low.currency else None)


def _standalone_rating(objects: list[Any], name: str) -> dict[str, Any] | None:
    """An AggregateRating on its own whose `itemReviewed` is the product (by name, or a Product)."""
    for _, node in _walk(objects):
        if "AggregateRating" not in ld_types(node):
            continue
        reviewed = node.get("itemReviewed")
        if isinstance(reviewed, dict):
            reviewed_name = _text(reviewed.get("name")) or ""
            if reviewed_name.lower() == name.lower() or (
                not reviewed_name and any("Product" in t for t in ld_types(reviewed))
            ):
                return node
    return None


def _brand(product: dict[str, Any]) -> str | None:
    brand = _text(product.get("brand"))
    return brand if brand and len(brand) < 80 else None


def _properties(product: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    rows = []
    props = product.get("additionalProperty")
    for prop in props if isinstance(props, list) else [props]:
        if isinstance(prop, dict):
            key, value = _text(prop.get("name")), _text(prop.get("value"))
            if key and value and len(key) <= MAX_SPEC_KEY:
                rows.append((key, value))
    return tuple(rows[:MAX_SPECS])


# --- The page -----------------------------------------------------------------------------------


def _itemprops(doc: Document) -> dict[str, str]:
    """The first value of each microdata property of an offer or a rating (content, else text)."""
    wanted = (
        "price",
        "lowprice",
        "pricecurrency",
        "ratingvalue",
        "reviewcount",
        "ratingcount",
        "availability",
    )
    found: dict[str, str] = {}
    for node in doc.tree.css("[itemprop]"):
        attrs = node.attributes
        for prop in (attrs.get("itemprop") or "").lower().split():
            if prop in wanted and prop not in found:
                value = attrs.get("content") or attrs.get("href") or node.text(deep=True)
                if value and value.strip():
                    found[prop] = value.strip()
    return found


def _meta_price(doc: Document) -> Price | None:
    values: dict[str, str] = {}
    for attrs in doc.meta:
        key = (attrs.get("property") or attrs.get("name") or "").strip().lower()
        content = attrs.get("content")
        if content and key and key not in values:
            values[key] = content
    for prefix in ("product:price", "og:price"):
        amount = _amount(values.get(f"{prefix}:amount"))
        if amount:
            return Price(amount, _currency(values.get(f"{prefix}:currency")))
    return None


def _written_price(match: re.Match[str], currency: str) -> Price | None:
    amount = _amount(match.group("amount") or match.group("amount_after"))
    if amount is None:
        return None
    mark = (match.group("before") or match.group("after") or "").upper()
    code = mark if re.fullmatch(r"[A-Z]{3}", mark) else SIGN_CURRENCIES.get(mark, "")
    if not code and not mark.isalpha():
        code = currency if currency and CURRENCY_SIGNS.get(currency, "").endswith(mark) else mark
    return Price(amount, code or currency)


def _headline(doc: Document, name: str) -> int | None:
    """The element of the product's name: the `<h1>` (the one saying the name, when several)."""
    h1s = [i for i, tag in enumerate(doc.tag) if tag == "h1"]
    for index in h1s:
        if name and name.lower()[:30] in doc.element_text(index).lower():
            return index
    return h1s[0] if h1s else None


def _prices_after(doc: Document, element: int, currency: str) -> tuple[Price | None, Price | None]:
    """The first price written within `PRICE_WINDOW` characters after an element, and a was-price
    there (struck through, or in an element classed as an old price)."""
    t = doc.tokens
    first = int(doc.end[element]) + 1
    seen = 0
    current: Price | None = None
    struck: list[Price] = []
    for token in range(first, len(t)):
        if seen > PRICE_WINDOW:
            break
        if t.kind[token] != TEXT or not t.chars[token]:
            continue
        text = t.text[token]
        seen += len(text)
        for match in PRICE_PATTERN.finditer(text):
            price = _written_price(match, currency)
            if price is None:
                continue
            if _is_old_price(doc, int(t.element[token])):
                struck.append(price)
            elif current is None:
                current = price
    was = next(
        (
            p
            for p in struck
            if current is not None and current.value < p.value <= current.value * MAX_WAS_RATIO
        ),
        None,
    )
    return current, was


def _is_old_price(doc: Document, element: int, levels: int = 3) -> bool:
    for _ in range(levels):
        if element < 0:
            return False
        if doc.tag[element] in ("del", "s", "strike"):
            return True
        hint = f"{doc.ident[element] or ''} {doc.classes[element] or ''}"
        if hint.strip() and WAS_CLASS.search(hint):
            return True
        element = int(doc.parent[element])
    return False


def _spec_rows(doc: Document, element: int) -> list[tuple[str, str]]:
    """Key/value rows of a table (th/td or td/td rows) or a definition list (dt/dd)."""
    node = doc.elements[element]
    rows: list[tuple[str, str]] = []
    if doc.tag[element] == "table":
        for row in node.css("tr"):
            cells = [c for c in row.iter() if c.tag in ("th", "td")]
            if len(cells) != 2:
                continue
            key, value = (squash(c.text(deep=True)) for c in cells)
            if key and value and len(key) <= MAX_SPEC_KEY:
                rows.append((key, value))
    else:
        key = None
        for child in node.iter():
            if child.tag == "dt":
                key = squash(child.text(deep=True))
            elif child.tag == "dd" and key:
                value = squash(child.text(deep=True))
                if value and len(key) <= MAX_SPEC_KEY:
                    rows.append((key, value))
                key = None
    return rows


def _heading_before(doc: Document, element: int, within: int = 3) -> str:
    """The text of the nearest heading among the few elements just before `element`."""
    for index in range(element - 1, max(-1, element - 1 - within * 4), -1):
        if doc.tag[index] in ("h2", "h3", "h4", "h5", "h6", "summary", "button"):
            return doc.element_text(index)
    return ""


def page_specs(doc: Document) -> tuple[tuple[str, str], ...]:
    """The page's specifications table: the first key/value table or definition list of at least
    two rows that its class or id, an ancestor's, or the heading before it calls specifications."""
    for element, tag in enumerate(doc.tag):
        if tag not in ("table", "dl"):
            continue
        hinted = False
        ancestor = element
        for _ in range(4):
            if ancestor < 0:
                break
            hint = f"{doc.ident[ancestor] or ''} {doc.classes[ancestor] or ''}"
            if hint.strip() and SPEC_HINT.search(hint):
                hinted = True
                break
            ancestor = int(doc.parent[ancestor])
        if not hinted and not SPEC_HINT.search(_heading_before(doc, element) or "-"):
            continue
        rows = _spec_rows(doc, element)
        if len(rows) >= 2:
            return tuple(rows[:MAX_SPECS])
    return ()


def _shown(text: str, fragment: str | None) -> bool:
    """Whether `fragment`'s opening words occur in `text` (whitespace and case aside)."""
    if not fragment:
        return False
    words = fragment.lower().split()[:12]
    return bool(words) and " ".join(words) in " ".join(text.lower().split())


def product_facts(doc: Document, text: str = "", objects: list[Any] | None = None) -> ProductFacts | None:
    """The facts of the page's product (None when the page names no product and shows no price)."""
    if objects is None:
        objects = list(parsed_json_ld(doc))
    product = _main_product(objects, doc.title) or {}
    name = _text(product.get("name")) or ""
    price = high = was = None
    availability = None
    for offer in _offers(product):
        price, high, was = _offer_prices(offer)
        availability = _availability(offer.get("availability"))
        if price is not None:
            break
    if price is None and product.get("hasVariant"):
        price, high = _variant_prices(product)
    if availability is None:
        availability = next(
            (
                _availability(o.get("availability"))
                for v in (product.get("hasVariant") or [])
                if isinstance(v, dict)
                for o in _offers(v)
                if o.get("availability")
            ),
            None,
        )
    rating_node = product.get("aggregateRating")
    if not isinstance(rating_node, dict):
        rating_node = _standalone_rating(objects, name) if name else None
    rating = review_count = rating_count = None
    best = 5.0
    if isinstance(rating_node, dict):
        rating = _float(rating_node.get("ratingValue"))
        best = _float(rating_node.get("bestRating")) or 5.0
        review_count = _count(rating_node.get("reviewCount"))
        rating_count = _count(rating_node.get("ratingCount"))
    source = "structured" if price is not None or rating is not None else "page"

    headline = _headline(doc, name)
    if not name and headline is not None:
        name = doc.element_text(headline)
    if price is None or rating is None or availability is None:
        props = _itemprops(doc)
        if price is None:
            amount = _amount(props.get("price")) or _amount(props.get("lowprice"))
            price = Price(amount, _currency(props.get("pricecurrency"))) if amount else _meta_price(doc)
        if rating is None and _float(props.get("ratingvalue")) is not None:
            rating = _float(props.get("ratingvalue"))
            review_count = _count(props.get("reviewcount"))
            rating_count = _count(props.get("ratingcount"))
            if rating is not None and rating > best:
                best = 10.0 if rating <= 10 else 100.0
        availability = availability or _availability(props.get("availability"))
    if headline is not None and (price is None or was is None):
        shown, shown_was = _prices_after(doc, headline, price.currency if price else "")
        if price is None:
            price = shown
        if was is None and shown_was is not None and price is not None and shown_was.value > price.value:
            was = shown_was
    if rating is not None and not 0 < rating <= best:
        rating = None
    if not name and price is None:
        return None
    description = _text(product.get("description"))
    specs = _properties(product) or page_specs(doc)
    return ProductFacts(
        name=name,
        price=price,
        high_price=high,
        was_price=was,
        availability=availability,
        rating=rating,
        best_rating=best,
        review_count=review_count,
        rating_count=rating_count,
        brand=_brand(product),
        description=description,
        image=_image(product.get("image"), doc),
        specs=specs,
        description_in_text=_shown(text, description),
        specs_in_text=bool(specs) and _shown(text, " ".join(specs[0])),
        source=source,
    )


# --- Recipes ------------------------------------------------------------------------------------


def duration_text(value: Any) -> str | None:
    """An ISO 8601 duration ("PT1H20M") as a reader reads it ("1 hr 20 min"); other text as given."""
    if not isinstance(value, str) or not value.strip():
        return None
    found = _DURATION.match(value.strip())
    if not found:
        cleaned = _text(value)
        return cleaned if cleaned and len(cleaned) < 40 else None
    minutes = 0.0
    for unit, factor in (("days", 1440), ("hours", 60), ("minutes", 1), ("seconds", 1 / 60)):
        if found.group(unit):
            minutes += float(found.group(unit)) * factor
    total = round(minutes)
    if total <= 0:
        return None
    days, rest = divmod(total, 1440)
    hours, mins = divmod(rest, 60)
    parts = [f"{days} d" if days else "", f"{hours} hr" if hours else "", f"{mins} min" if mins else ""]
    return " ".join(part for part in parts if part)


def _yield_text(value: Any) -> str | None:
    values = value if isinstance(value, list) else [value]
    texts = [t for t in (_text(v) for v in values) if t]
    if not texts:
        return None
    worded = [t for t in texts if not t.isdigit()]
    chosen = worded[0] if worded else texts[0]
    return f"{chosen} servings" if chosen.isdigit() else chosen


def _steps(value: Any, depth: int = 0) -> list[RecipeSection]:
    """`recipeInstructions` in all its shapes: one text (split at lines), a list of texts,
    `HowToStep`s, `HowToSection`s of steps, an `ItemList`."""
    if depth > 4 or value is None:
        return []
    if isinstance(value, str):
        lines = [_text(line) for line in re.split(r"\n+|<br\s*/?>|</p>|</li>", value)]
        return [RecipeSection("", tuple(line for line in lines if line))] if any(lines) else []
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        return []
    sections: list[RecipeSection] = []
    loose: list[str] = []
    for item in value:
        if isinstance(item, dict) and ("HowToSection" in ld_types(item) or "ItemList" in ld_types(item)):
            if loose:
                sections.append(RecipeSection("", tuple(loose)))
                loose = []
            inner = [step for s in _steps(item.get("itemListElement"), depth + 1) for step in s.steps]
            if inner:
                sections.append(RecipeSection(_text(item.get("name")) or "", tuple(inner)))
        elif isinstance(item, dict):
            step = _text(item.get("text")) or _text(item.get("name")) or _text(item.get("description"))
            if step:
                loose.append(step)
        elif isinstance(item, str):
            loose.extend(s for section in _steps(item, depth + 1) for s in section.steps)
    if loose:
        sections.append(RecipeSection("", tuple(loose)))
    return sections


def recipe_facts(objects: list[Any], doc: Document | None = None) -> RecipeFacts | None:
    """The page's first Recipe with ingredients or steps (None for none); its image made absolute
    against `doc` (and kept only as an http(s) URL: `web_url`)."""
    for _, node in _walk(objects):
        if "Recipe" not in ld_types(node):
            continue
        raw = node.get("recipeIngredient") or node.get("ingredients") or []
        ingredients = tuple(t for t in (_text(i) for i in (raw if isinstance(raw, list) else [raw])) if t)
        sections = _steps(node.get("recipeInstructions"))
        if not ingredients and not sections:
            continue
        rating = node.get("aggregateRating")
        return RecipeFacts(
            name=_text(node.get("name")) or "",
            ingredients=ingredients[:MAX_RECIPE_ITEMS],
            sections=tuple(sections[:MAX_RECIPE_ITEMS]),
            prep_time=duration_text(node.get("prepTime")),
            cook_time=duration_text(node.get("cookTime")),
            total_time=duration_text(node.get("totalTime")),
            recipe_yield=_yield_text(node.get("recipeYield")),
            image=_image(node.get("image"), doc),
            rating=_float(rating.get("ratingValue")) if isinstance(rating, dict) else None,
            rating_count=(
                _count(rating.get("ratingCount") or rating.get("reviewCount"))
                if isinstance(rating, dict)
                else None
            ),
        )
    return None
