"""Overlay building blocks: marks cover every block, the page is sanitised, blocks JSON, the CLI file,
and the server's routes (view=overlay with its CSP, blocks=1)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import aiohttp
import pytest
from selectolax.lexbor import LexborHTMLParser
from support.reader_server import RunningServer
from support.upstream import Upstream

from readerproxy.web.overlay import (
    FRAME_SANDBOX,
    OverlayLinks,
    block_marks,
    blocks_json,
    fallback_note,
    folds,
    inspect,
    overlay_page,
    page_body,
)
from readerproxy.web.sanitize import frame_csp, overlay_csp, page_site, page_styles, safe_css, same_site

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
ALGORITHMS = (
    "auto",
    "accb",
    "baseline",
    "cetr",
    "cetr-km",
    "cetr-tm",
    "danag",
    "density",
    "heuristic",
    "lineblock",
)


def _frame(page: str) -> str:
    """The document of the overlay's page frame (its srcdoc), or the page itself when it has none."""
    frame = LexborHTMLParser(page).css_first("iframe#rpo-frame")
    return (frame.attributes.get("srcdoc") or "") if frame is not None else page


def _marked_blocks(page: str) -> set[int]:
    ids: set[int] = set()
    for node in LexborHTMLParser(_frame(page)).css(".rpo-mark"):
        ids.update(int(i) for i in (node.attributes.get("data-rpo-blocks") or "").split())
    return ids


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("fixture", ["wiki_links.html", "nav_article.html", "overlay_script.html"])
def test_every_block_is_marked_and_marks_nest(fixture: str, algorithm: str) -> None:
    insp = inspect((FIXTURES / fixture).read_bytes(), url="https://example.org/a", algorithm=algorithm)
    marks = block_marks(insp.doc, insp.extraction.blocks)
    assert len(marks) == len(insp.extraction.blocks)
    wraps = sorted({(m.first, m.last) for m in marks if m.wrap})
    for a, b in wraps:  # laminar: any two runs are nested or apart
        for c, d in wraps:
            assert b < c or d < a or (a <= c and d <= b) or (c <= a and b <= d)
    body, _ = page_body(insp.doc, insp.extraction)
    assert _marked_blocks(body) == set(range(len(insp.extraction.blocks)))


def test_page_is_sanitised() -> None:
    insp = inspect(
        (FIXTURES / "overlay_script.html").read_bytes(), url="https://example.org/a", algorithm="heuristic"
    )
    page, _ = overlay_page(
        insp, OverlayLinks(url="https://example.org/a"), {"heuristic": ""}, asset=lambda n: n
    )
    shell = LexborHTMLParser(page)
    assert not shell.css("script") and not shell.css(".rpo-mark, .rpo-page")  # no script, no page markup
    assert [n.attributes.get("href") for n in shell.css('link[rel="stylesheet"]')] == ["overlay-panel.css"]
    assert not shell.css("style")  # no page CSS in readerproxy's document
    [frame] = shell.css("iframe")
    assert frame.attributes.get("id") == "rpo-frame"
    sandbox = (frame.attributes.get("sandbox") or "").split()
    assert "allow-scripts" not in sandbox and "allow-same-origin" not in sandbox
    title = shell.css_first("title")
    assert title is not None and title.text().startswith("Harmless fixture page")
    tree = LexborHTMLParser(_frame(page))
    assert not tree.css("script, base, meta[http-equiv=refresh i], iframe, object, embed, form, svg")
    csp = tree.css_first('meta[http-equiv="Content-Security-Policy"]')
    assert csp is not None and "script-src 'none'" in (csp.attributes.get("content") or "")
    assert "'self'" not in (csp.attributes.get("content") or "")
    for node in tree.css("*"):
        for name, value in node.attributes.items():
            assert not name.lower().startswith("on"), (node.tag, name)
            assert "javascript:" not in (value or "").lower(), (node.tag, name, value)
    for link in tree.css("a[href]"):  # no bare fragment: it would resolve against readerproxy's address
        assert not (link.attributes.get("href") or "").startswith("#"), link.attributes
        assert link.attributes.get("target") == "_top"
    cards = tree.css(".rpo-badge + .rpo-fc")
    assert cards and "words" in cards[0].text() and "link density" in cards[0].text()
    sheets = [n.attributes.get("href") for n in tree.css('link[rel="stylesheet"]')]
    assert "https://example.org/fixture.css" in sheets  # the page's own stylesheet, absolute
    frame_html = _frame(page)
    assert "rgb(128, 0, 128)" in frame_html  # and its inline style
    assert 'url("https://example.org/pixel.png")' in frame_html  # with its URLs made absolute


def test_blocks_json_has_paths_and_signals() -> None:
    insp = inspect((FIXTURES / "wiki_links.html").read_bytes(), algorithm="density")
    data = blocks_json(insp.doc, insp.extraction)
    assert len(data["blocks"]) == len(insp.extraction.blocks)
    first = data["blocks"][0]
    assert set(first) >= {"label", "score", "selected", "text_length", "path"}
    assert first["path"].startswith("html > body")
    assert data["signals"]["density"] == insp.extraction.signals["density"].tolist()


def test_cli_writes_a_self_contained_overlay(tmp_path: Path) -> None:
    out = tmp_path / "overlay.html"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "readerproxy.cli",
            "extract",
            str(FIXTURES / "overlay_script.html"),
            "--algo",
            "cetr",
            "--overlay",
            str(out),
            "--url",
            "https://example.org/a",
        ],
        check=True,
    )
    page = out.read_text()
    tree = LexborHTMLParser(page)
    assert not tree.css("script") and tree.css("svg.rpo-chart") and tree.css("iframe[sandbox][srcdoc]")
    assert LexborHTMLParser(_frame(page)).css(".rpo-mark")
    csp = tree.css_first('meta[http-equiv="Content-Security-Policy"]')
    assert csp is not None and "script-src 'none'" in (csp.attributes["content"] or "")
    assert not tree.css('link[href*="/static/"]')  # our CSS is inline


async def test_overlay_route_and_blocks_api(
    reader_server: RunningServer, upstream: Upstream, http: aiohttp.ClientSession
) -> None:
    target = upstream.url("/article")
    async with http.get(reader_server.read_url(target, algo="density", view="overlay")) as response:
        assert response.status == 200
        assert response.headers["Content-Security-Policy"] == overlay_csp(target)
        assert "style-src 'self' 'unsafe-inline' http://127.0.0.1:* https://127.0.0.1:*;" in overlay_csp(
            target
        )
        page = await response.text()
    async with http.get(
        reader_server.url("/api/extract", url=target, algo="density", blocks="1")
    ) as response:
        data = await response.json()
    assert data["title"] and len(data["blocks"]) == len(_marked_blocks(page)) > 0
    assert "density" in data["signals"]
    async with http.post(
        reader_server.url("/api/extract", algo="cetr", blocks="1"),
        data=(FIXTURES / "wiki_links.html").read_bytes(),
    ) as response:
        posted = await response.json()
    assert posted["blocks"] and "smoothed" in posted["signals"]
    async with http.get(reader_server.url("/api/extract", url=target)) as response:
        assert "blocks" not in await response.json()
    async with http.get(reader_server.read_url(target, algo="density", view="overlay", c1="2")) as response:
        assert response.status == 400  # parameters are checked as for /read


def test_page_site_and_same_site() -> None:
    assert page_site("https://www.example.com/a") == "example.com"
    assert page_site("https://a.b.example.com/") == "example.com"
    assert page_site("https://www.bbc.co.uk/news") == "bbc.co.uk"  # not co.uk: a public suffix
    assert page_site("https://bbc.co.uk./") == "bbc.co.uk"
    assert page_site("https://foo.github.io/") == "foo.github.io"  # github.io's users are other sites
    assert page_site("https://github.io/") == "github.io"
    assert page_site("http://127.0.0.1:8080/") == "127.0.0.1"
    assert page_site("http://10.1.2.3/") == "10.1.2.3"
    assert page_site("http://[::1]/") == "::1"
    assert page_site("http://localhost:8080/") == "localhost"
    assert page_site(None) is None
    assert same_site("https://static.bbc.co.uk/x.css", "bbc.co.uk")
    assert not same_site("https://attacker.co.uk/x.css", page_site("https://www.bbc.co.uk/"))
    assert not same_site("https://bar.github.io/x.css", page_site("https://foo.github.io/"))
    assert not same_site("https://bar.github.io/x.css", "github.io")  # a suffix has no subdomains of its own
    assert not same_site("http://1.127.0.0.1/x.css", "127.0.0.1")
    assert same_site("https://cdn.example.com/x.css", "example.com")
    assert same_site("https://example.com/x.css", "example.com")
    assert not same_site("https://attacker.example/x.css", "example.com")
    assert not same_site("https://notexample.com/x.css", "example.com")
    assert not same_site("https://example.com/x.css", None)


def test_overlay_csp_limits_styles_and_fonts_to_the_site() -> None:
    csp = overlay_csp("https://www.example.com/a")
    assert "style-src 'self' 'unsafe-inline' http://example.com:* https://example.com:* " in csp
    assert "https://*.example.com:*" in csp and "font-src http://example.com:*" in csp
    assert "img-src http: https: data:" in csp  # images from anywhere, as in the reader view
    assert "style-src 'self' 'unsafe-inline';" in overlay_csp(None)
    csp = overlay_csp("https://www.bbc.co.uk/news")
    assert "https://*.bbc.co.uk:*" in csp and "//*.co.uk:" not in csp and "//co.uk:" not in csp
    csp = overlay_csp("https://foo.github.io/")  # its own subdomains, not github.io's other users
    assert "https://*.foo.github.io:*" in csp and "//*.github.io:" not in csp
    assert "*." not in overlay_csp("http://127.0.0.1:8080/") and "*." not in overlay_csp("http://localhost/")


def test_styles_load_nothing_from_other_sites() -> None:
    base = site = "https://www.example.com/"
    css = safe_css(
        "@import 'https://attacker.example/a.css'; @import 'https://cdn.example.com/ok.css';"
        "a{background:url(https://attacker.example/bg)} b{background:url(/local.png)}"
        "i{background:\\75rl(https://attacker.example/escaped)} @\\69mport 'https://attacker.example/e.css';"
        'u{background:image-set("https://attacker.example/s.png" 1x)} s{content:"\\201C"}'
        "@font-face{src:url(//attacker.example/f.woff)} q{background:url(data:image/png;base64,AA==)}",
        base,
        page_site(site),
    )
    assert "attacker" not in css
    assert '@import "https://cdn.example.com/ok.css"' in css
    assert 'url("https://www.example.com/local.png")' in css
    assert '"\\201C"' in css  # an escape that spells no URL stays
    assert "data:image/png" in css
    styles = page_styles(
        '<link rel=stylesheet href="https://attacker.example/x.css"><link rel=stylesheet href="/own.css">',
        base,
        page_site(site),
    )
    assert [sheet.href for sheet in styles] == ["https://www.example.com/own.css"]


def test_the_page_is_in_a_sandboxed_frame_with_its_own_csp() -> None:
    """readerproxy's document holds the panel and a sandboxed `<iframe srcdoc>`; the page's markup and
    CSS are only in the frame, whose links target the tab, which the sandbox refuses (no `#x` resolving to our
    address either)."""
    hostile = (
        b"<html><head><title>T</title><style>#rpo-panel{display:none}</style>"
        b'<style>p{color:red}</style></head><body style="display:none"><article><h1>T</h1><p>'
        + b"words here " * 60
        + b"<a href='#sec'>jump</a> <a href='/x'>x</a></p></article></body></html>"
    )
    insp = inspect(hostile, url="https://www.example.org/story?a=1", algorithm="heuristic")
    page, _ = overlay_page(insp, OverlayLinks(url="https://www.example.org/story?a=1"), {}, asset=str)
    shell = LexborHTMLParser(page)
    assert "display:none" not in page.split("<iframe")[0]  # nothing of the page before the frame
    assert not shell.css("style") and shell.css_first("#rpo-panel") is not None
    [frame] = shell.css("iframe")
    assert frame.attributes.get("sandbox") == FRAME_SANDBOX == ""  # no script, no navigation of the tab
    inner = LexborHTMLParser(frame.attributes.get("srcdoc") or "")
    hrefs = [(a.attributes.get("href"), a.attributes.get("target")) for a in inner.css("a")]
    assert hrefs == [
        ("https://www.example.org/story?a=1#sec", "_top"),
        ("https://www.example.org/x", "_top"),
    ]
    assert "#rpo-panel{display:none}" in (inner.css("style")[0].text())  # kept, but only in the frame
    body = inner.css_first("body")
    assert body is not None and body.attributes.get("style") == "display:none"
    csp = inner.css_first('meta[http-equiv="Content-Security-Policy"]')
    assert csp is not None and csp.attributes.get("content") == frame_csp("https://www.example.org/story")
    assert frame_csp("https://www.example.org/") == (
        "default-src 'none'; script-src 'none'; style-src 'unsafe-inline' http://example.org:* "
        "https://example.org:* http://*.example.org:* https://*.example.org:*; img-src http: https: data:; "
        "font-src http://example.org:* https://example.org:* http://*.example.org:* https://*.example.org:* "
        "data:; form-action 'none'; base-uri 'none'; frame-src 'none'; object-src 'none'"
    )
    assert "script-src 'none'" in overlay_csp("https://www.example.org/")  # no script in ours either


NAV_PAGE = (
    b"<html><head><title>Story</title></head><body>"
    b'<header class="site-header"><nav>'
    + b"".join(b'<a href="/s%d">Section %d</a> ' % (i, i) for i in range(40))
    + b"</nav></header>"
    b"<main><article><h1>The story</h1>"
    + b"".join(
        b"<p>" + b"A sentence of the article, long enough to be kept by any reader. " * 4 + b"</p>"
        for _ in range(8)
    )
    + b"</article></main>"
    b'<div id="footer"><p>About us, contact, jobs and the rest of the small print of the site.</p>'
    + b"".join(b'<a href="/f%d">Footer %d</a> ' % (i, i) for i in range(5))
    + b"</div></body></html>"
)


def test_dropped_menus_and_footers_fold_into_one_line_each() -> None:
    """A dropped nav/header/footer becomes a <details> whose summary says what was dropped; a region
    holding kept text never folds; every block is still marked inside the folds."""
    insp = inspect(NAV_PAGE, url="https://example.org/story", algorithm="heuristic")
    folded = folds(insp.doc, insp.extraction)
    assert sorted(folded.values()) == [
        "footer: 5 links dropped, tap to show",
        "header: 40 links dropped, tap to show",
    ]
    body, _ = page_body(insp.doc, insp.extraction)
    tree = LexborHTMLParser(body)
    summaries = [s.text() for s in tree.css("details.rpo-fold > summary.rpo-fold-s")]
    assert summaries == ["header: 40 links dropped, tap to show", "footer: 5 links dropped, tap to show"]
    assert tree.css_first("details.rpo-fold header nav") is not None
    assert tree.css_first("details.rpo-fold article") is None  # the kept article is not folded
    marked = {
        int(i) for m in tree.css(".rpo-mark") for i in (m.attributes.get("data-rpo-blocks") or "").split()
    }
    assert marked == set(range(len(insp.extraction.blocks)))


def test_top_candidates_are_named_by_path_and_first_words() -> None:
    insp = inspect(NAV_PAGE, url="https://example.org/story", algorithm="heuristic")
    page, _ = overlay_page(insp, OverlayLinks(url="https://example.org/story"), {}, asset=str)
    tree = LexborHTMLParser(page)
    notes = [li.text() for li in tree.css("ol.rpo-top li")]
    assert notes and len(set(notes)) == len(notes), notes  # each one told apart
    assert all(" > " in n and "“" in n and " — score " in n for n in notes), notes
    panel = tree.css_first("#rpo-panel")
    assert panel is not None and "e-0" not in panel.text()  # no number in exponent form


def test_a_fallback_is_explained_in_words() -> None:
    """auto-heuristic on a page its first try reads too little of says which tries failed and why."""
    tiny = b"<html><body><div><p>Short text.</p></div><ul><li><a href='/a'>one</a></li></ul></body></html>"
    insp = inspect(tiny, url="https://example.org/", algorithm="auto-heuristic")
    note = fallback_note(insp)
    assert note is not None and "kept too little" in note, note
    page, _ = overlay_page(insp, OverlayLinks(url="https://example.org/"), {}, asset=str)
    shown = LexborHTMLParser(page).css_first(".rpo-fallback")
    assert shown is not None and "kept too little" in shown.text()
    insp = inspect(NAV_PAGE, url="https://example.org/story", algorithm="heuristic")
    assert fallback_note(insp) is None
