"""engine/urls.py: the URL policy, the lazy-image attributes, the srcset chooser and the page's site
by the Public Suffix List (and the overlay's CSP built on it)."""

from __future__ import annotations

import numpy as np

from readerproxy.engine.output import render_html
from readerproxy.engine.parse.document import parse
from readerproxy.engine.urls import (
    LAZY_SOURCES,
    choose_candidate,
    page_site,
    parse_srcset,
    safe_url,
    same_site,
    srcset_width,
    url_scheme,
)
from readerproxy.web.images import best_source
from readerproxy.web.overlay import body as overlay
from readerproxy.web.sanitize import overlay_csp
from readerproxy.web.sanitize import safe_url as overlay_url


def test_url_scheme() -> None:
    assert url_scheme("HTTPS://example.com/") == "https"
    assert url_scheme("javascript:alert(1)") == "javascript"
    assert url_scheme("/a:b") == ""  # a "/" before the colon: a path, no scheme
    assert url_scheme("page.html") == ""


def test_safe_url_policy() -> None:
    assert safe_url("https://example.com/") == "https://example.com/"
    assert safe_url("mailto:a@example.com") == "mailto:a@example.com"
    assert safe_url("javascript:alert(1)") is None
    assert safe_url("JavaScript:alert(1)", data_images=True) is None
    assert safe_url("data:image/png;base64,AAAA") is None
    assert safe_url("DATA:image/png;base64,AAAA", data_images=True) == "DATA:image/png;base64,AAAA"
    assert safe_url("data:text/html,<script>", data_images=True) is None
    assert safe_url("page.html") == "page.html"
    assert safe_url("page.html", relative=False) is None
    assert safe_url("") is None and safe_url(None) is None


def test_the_overlay_uses_the_same_policy() -> None:
    base = "https://example.com/a/"
    assert overlay_url("b.html", base) == "https://example.com/a/b.html"
    assert overlay_url("javascript:alert(1)", base) is None
    assert overlay_url("tel:+441234", base) == "tel:+441234"
    assert overlay_url("#top", base) == "#top"  # a same-page link, as written
    assert overlay_url("b.html", None) is None  # still relative: refused


def test_one_lazy_image_list_for_the_reader_and_the_overlay() -> None:
    assert "data-hi-res-src" in LAZY_SOURCES
    assert overlay.LAZY_SOURCES is LAZY_SOURCES  # the overlay reads the reader's list
    html = '<html><body><article><p>Some text here.</p><img src="data:," data-hi-res-src="/big.jpg"></article></body></html>'
    doc = parse(html, "https://example.com/post")
    assert 'src="https://example.com/big.jpg"' in render_html(doc, np.ones(len(doc.tokens.kind), dtype=bool))


def test_srcset_width_and_choice() -> None:
    candidates = parse_srcset("s.jpg 320w, m.jpg 640w, l.jpg 1600w, m2.jpg 640w")
    assert [srcset_width(d) for _, d in candidates] == [320, 640, 1600, 640]
    assert choose_candidate(candidates) == "l.jpg"  # the widest
    assert choose_candidate(candidates, at_most=1200) == "m.jpg"  # widest that fits; first among equals
    assert choose_candidate(candidates, at_most=100) == "l.jpg"  # none fits: the widest
    assert choose_candidate(candidates, at_least=480) == "m.jpg"  # narrowest wide enough
    assert choose_candidate(candidates, at_least=2000) == "l.jpg"  # none is: the widest
    assert choose_candidate([]) is None
    densities = parse_srcset("a.jpg 1x, b.jpg 2x")
    assert choose_candidate(densities) == "a.jpg"  # a density states no width
    assert choose_candidate(densities, density_width=1000) == "b.jpg"
    # a listing's card: 750 px wanted, 1x standing for 375 px; the 2x, not the text-order pick
    cards = parse_srcset("i.jpg?w=64 1x, i.jpg?w=128 2x, i.jpg?w=192 3x")
    assert choose_candidate(cards, at_least=750, density_width=375) == "i.jpg?w=128"


def test_the_image_route_takes_the_widest_fetchable_candidate() -> None:
    assert best_source("s.jpg", "https://e.com/1.jpg 1x, https://e.com/2.jpg 2x") == "https://e.com/2.jpg"
    assert best_source("https://e.com/s.jpg", "data:image/png;base64,AA 2000w") == "https://e.com/s.jpg"
    assert best_source(None, "https://e.com/a.jpg 300w, https://e.com/b.jpg 900w") == "https://e.com/b.jpg"


def test_page_site_is_the_registrable_domain() -> None:
    assert page_site("https://www.bbc.co.uk/news") == "bbc.co.uk"  # not co.uk: a public suffix
    assert page_site("https://news.example.com/") == "example.com"
    assert page_site("https://foo.github.io/") == "foo.github.io"  # github.io's users are other sites
    assert page_site("http://127.0.0.1:8080/") == "127.0.0.1"
    assert page_site("not a url") is None
    assert same_site("https://static.bbc.co.uk/x.css", "bbc.co.uk")
    assert not same_site("https://attacker.co.uk/x.css", page_site("https://www.bbc.co.uk/"))


def test_the_overlay_csp_allows_the_site_not_its_public_suffix() -> None:
    csp = overlay_csp("https://www.bbc.co.uk/news")
    assert "https://*.bbc.co.uk:*" in csp
    assert "*.co.uk:" not in csp.replace("*.bbc.co.uk:", "") and "//co.uk" not in csp
