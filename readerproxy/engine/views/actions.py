"""Whether a link is an action (add to cart, log out, vote, share) rather than a page to read.

A reader view shows pages to read: an item of a listing links to the item's page, a link in the
article text goes through the reader. A link that does something instead (puts a product in the
cart, signs the visitor out, casts a vote, deletes a post, opens a share dialog) is page chrome:
as a listing's item it makes a shop's product page read as "9 items: Add to cart, My account,
Start comparison, ...", and through the reader one tap on it is a state-changing GET sent by the
reader on the visitor's behalf.

The test reads the URL's structure first, since it holds in every language: a `javascript:`
URL; a query that names an action (`?action=`, `?add-to-cart=`, `?do=logout`); a path segment that
is an action or a cart, account or session page (`/cart/add/123`, `/checkout`, `/wp-login.php`,
`/user/logout`, `/wishlist`, any `add-to-...`), compared whole (letters and digits only, an extension left off), so
`/annual-report-2024` is no `report`; a segment that is also a section's name (`report`, `account`,
`share`) only at the path's end or before ids. The link's text is read second, for the labels the URL does
not show (a cart button whose href is `#`): a short list of English control labels and the
"added to your cart" message, compared whole as well ("Compare" is a control, "Compare prices of
lenses" is a title).

A form's target (`form_targets`: every `<form action>` of the page) is an action too: a link to
it sends without the form what the form would have sent.

Reader views render an action link as plain text, without an
href (`web.templating.unlink_actions`), and never route it through the reader
(`web.templating.link_rewriter`); a listing drops an item whose link is an action or whose title
is a control's label, an action's or a navigation button's ("Read more", "Next page":
`listing.without_actions`).
"""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit

from ..output import _comparable
from ..parse.document import Document, indices_of

#: Path segments (lower-cased, letters and digits only, extension left off) that name an action or
#: a page of the visitor's own session: cart, account, sign-in, voting, sharing.
ACTION_SEGMENTS = frozenset(
    (
        "cart addtocart addtobasket addtobag basket checkout shoppingcart viewcart minicart "
        "login logon logout logoff signin signout signup signon register wplogin "
        "myaccount wishlist addtowishlist subscribe unsubscribe vote upvote downvote unlike "
        "unfollow sharer delete remove wishlistadd wishlistremove cartadd cartremove"
    ).split()
)
#: Segments that are also ordinary words of a site's sections (`/report/` of a news site,
#: `/account/orders`): an action only at the path's end, or followed by nothing but ids
#: (`/like/123`, `/report/post/9` is not: `post` is a word).
TRAILING_SEGMENTS = frozenset(
    "account compare comparison like favorite favourite follow flag share report register".split()
)
#: Query keys whose presence alone makes the link an action (`?add-to-cart=42`, `?action=edit`).
ACTION_KEYS = frozenset(
    (
        "action addtocart addtobasket addtowishlist removeitem remove delete vote upvote like "
        "logout login subscribe unsubscribe wishlist compare share"
    ).split()
)
#: Query keys whose value says the action (`?do=logout`, `?task=user.logout`, `?op=delete`).
VERB_KEYS = frozenset(("do", "op", "task", "cmd", "mode", "act"))
#: A link text that is an action's label, compared whole (casefolded, punctuation and spaces
#: squashed): a button of the page's chrome whatever its href says.
ACTION_LABELS = frozenset(
    (
        "add to cart",
        "add to basket",
        "add to bag",
        "add to wishlist",
        "add to wish list",
        "add to favorites",
        "add to favourites",
        "add to compare",
        "add to comparison",
        "compare",
        "compare now",
        "start comparison",
        "buy now",
        "buy it now",
        "quick add",
        "view cart",
        "cart",
        "basket",
        "bag",
        "my cart",
        "my basket",
        "my bag",
        "checkout",
        "check out",
        "proceed to checkout",
        "account",
        "my account",
        "log in",
        "login",
        "log out",
        "logout",
        "sign in",
        "sign out",
        "sign up",
        "register",
        "create account",
        "create an account",
        "wishlist",
        "wish list",
        "my wishlist",
        "delete",
        "remove",
        "vote",
        "upvote",
        "downvote",
        "like",
        "unlike",
        "follow",
        "unfollow",
        "subscribe",
        "unsubscribe",
        "share",
        "report",
        "flag",
    )
)
#: A link text that is no action but no item's name either: a button that opens the item, pages
#: through the list or sorts it ("Read more", "Next page", "Sort by"). Such a link stays a link in
#: the article; as a listing's title it is no item.
NAVIGATION_LABELS = frozenset(
    (
        "quick view",
        "quick shop",
        "shop now",
        "learn more",
        "read more",
        "view details",
        "see details",
        "more details",
        "view all",
        "see all",
        "show all",
        "show more",
        "load more",
        "see more",
        "next",
        "next page",
        "previous",
        "previous page",
        "back to top",
        "track order",
        "sort by",
        "filter",
        "filters",
        "clear all",
        "close",
        "reply",
        "quote",
        "print",
        "email",
    )
)
#: A message a shop shows after a control was used ("This product has been added to your cart").
_DONE_MESSAGE = re.compile(r"\b(?:added|removed) (?:to|from) (?:your |the )?(?:cart|basket|bag|wish ?list)\b")
_NOT_WORD = re.compile(r"[^\w]+")
#: A path segment that is an id (digits, or a hash of hex digits), not a word.
_ID = re.compile(r"\d+|[0-9a-f]{8,}")
_EXTENSION = re.compile(r"\.(?:php|aspx?|jsp|html?|cgi|do|action)$")


def _key(part: str) -> str:
    """A path segment or query key as compared: lower-cased, its extension left off, letters and
    digits only ("add-to-cart" -> "addtocart", "wp-login.php" -> "wplogin")."""
    return _NOT_WORD.sub("", _EXTENSION.sub("", part.lower())).replace("_", "")


def is_action_url(url: str | None) -> bool:
    """Whether a URL does something rather than show a page: `javascript:`, a query naming an
    action, or a path segment that is one (module docstring)."""
    if not url:
        return False
    value = url.strip()
    scheme = value.split(":", 1)[0].lower() if ":" in value[:12] else ""
    if scheme == "javascript":
        return True
    parts = urlsplit(value)
    keys = [_key(unquote(segment)) for segment in parts.path.split("/") if segment]
    for index, key in enumerate(keys):
        if key in ACTION_SEGMENTS or (key.startswith("addto") and len(key) > 5):
            return True
        if key in TRAILING_SEGMENTS and all(_ID.fullmatch(rest) for rest in keys[index + 1 :]):
            return True
    for pair in parts.query.split("&"):
        name, _, raw = pair.partition("=")
        key = _key(unquote(name.replace("+", " ")))
        if key in ACTION_KEYS:
            return True
        if key in VERB_KEYS and raw:
            words = _comparable(unquote(raw.replace("+", " "))).replace(" ", "")
            if any(segment in words for segment in ("logout", "login", "delete", "remove", "cart", "vote")):
                return True
    return False


def is_action_label(text: str | None) -> bool:
    """Whether a link's whole text is an action's label (`ACTION_LABELS`) or a shop's "added to
    your cart" message."""
    if not text:
        return False
    squashed = _comparable(text)  # casefolded, words apart by one space ("Add to cart +": "add to cart")
    return squashed in ACTION_LABELS or bool(_DONE_MESSAGE.search(squashed))


def is_control_label(text: str | None) -> bool:
    """Whether a text is a control's label, an action's (`is_action_label`) or a navigation
    button's (`NAVIGATION_LABELS`): never an item's title."""
    return bool(text) and (_comparable(text) in NAVIGATION_LABELS or is_action_label(text))


def is_action(url: str | None, text: str | None = None, forms: frozenset[str] = frozenset()) -> bool:
    """Whether a link is an action: by its URL's structure, its text, or as a form's target."""
    if url and url.split("#", 1)[0] in forms:
        return True
    return is_action_url(url) or is_action_label(text)


def form_targets(doc: Document) -> frozenset[str]:
    """The absolute URLs every `<form action>` of the page sends to (without a fragment); the
    page's own address is left out (a form without an action, or a search box posting to the page
    itself, would make the page an action)."""
    own = (doc.url or "").split("#", 1)[0]
    targets: set[str] = set()
    for form in indices_of(doc.tag, "form"):
        action = (doc.elements[form].attributes.get("action") or "").strip()
        if not action or action.startswith("#"):
            continue
        url = (doc.absolute_url(action) or "").split("#", 1)[0]
        if url and url != own:
            targets.add(url)
    return frozenset(targets)
