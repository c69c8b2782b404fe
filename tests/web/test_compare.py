"""Compare: every algorithm on one Document, agreement of their selections, the /compare page."""

from __future__ import annotations

from pathlib import Path

import aiohttp
import numpy as np
import pytest
from selectolax.lexbor import LexborHTMLParser
from support.reader_server import RunningServer, serve, test_settings
from support.upstream import Upstream

from readerproxy.engine.extraction import registry
from readerproxy.web.compare import algorithm_names, compare_page_source, comparison_context
from readerproxy.web.reader import Reader, compare_and_finish
from readerproxy.web.workers import Call

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def test_every_algorithm_runs_once_on_one_document() -> None:
    comparison = compare_page_source((FIXTURES / "wiki_links.html").read_bytes(), url="https://example.org/a")
    assert [r.name for r in comparison.runs] == algorithm_names()
    assert set(algorithm_names()) == set(registry()) - {"learned"}  # learned is auto by its own name
    assert algorithm_names()[0] == "auto" and "visual" in algorithm_names()
    by_name = {r.name: r for r in comparison.runs}
    # without a render, visual is listed and says why it did not run
    assert by_name["visual"].unavailable and by_name["visual"].extraction is None
    assert by_name["visual"].error.startswith("unavailable: ")
    agreement = comparison.agreement
    assert agreement.shape == (len(comparison.runs),) * 2
    np.testing.assert_allclose(agreement, agreement.T)
    assert np.all((agreement >= 0) & (agreement <= 1))
    np.testing.assert_allclose(np.diag(agreement), 1.0)
    assert by_name["baseline"].share == 1.0 and by_name["baseline"].words >= by_name["heuristic"].words


async def test_compare_page(
    reader_server: RunningServer, upstream: Upstream, http: aiohttp.ClientSession
) -> None:
    async with http.get(reader_server.url("/compare", url=upstream.url("/article"))) as response:
        assert response.status == 200
        page = await response.text()
    tree = LexborHTMLParser(page)
    assert [n.attributes.get("data-algorithm") for n in tree.css(".rpc-card")] == algorithm_names()
    assert len(tree.css("svg.rpc-thumb")) == len(algorithm_names())
    assert len(tree.css(".rpc-agree tbody tr")) == len(algorithm_names())


def test_visual_runs_on_a_layout_and_is_unavailable_without() -> None:
    """With a browser's layout of the page, visual runs beside the rest; without, the reason shows."""
    source = (FIXTURES / "wiki_links.html").read_bytes()
    missing = compare_page_source(source, url="https://example.org/a", unavailable="no browser at /x")
    context = comparison_context(missing, {})
    rows = {row["name"]: row for row in context["rows"]}  # type: ignore[attr-defined]
    assert rows["visual"]["unavailable"] and rows["visual"]["error"] == "unavailable: no browser at /x"
    assert set(rows["visual"]["agreement"]) == {"–"}
    assert "visual" not in context["ran"]  # type: ignore[operator]
    assert rows["auto"]["score_means"].startswith("confidence")  # auto ran learned
    assert rows["baseline"]["score_means"].startswith("always 1")


async def test_compare_page_explains_score_and_names_visual(
    reader_server: RunningServer, upstream: Upstream, http: aiohttp.ClientSession
) -> None:
    async with http.get(reader_server.url("/compare", url=upstream.url("/article"))) as response:
        assert response.status == 200
        page = await response.text()
    tree = LexborHTMLParser(page)
    visual = tree.css_first('.rpc-card[data-algorithm="visual"]')
    assert visual is not None
    error = visual.css_first(".rpc-error")
    assert visual.css_first(".rpc-score") is not None or (error is not None and "unavailable" in error.text())
    for card in tree.css(".rpc-card"):
        if card.css_first(".rpc-score") is not None:  # the share of text kept stands beside the score
            names = [dt.text() for dt in card.css("dt")]
            assert names.index("Score") == names.index("Text kept") + 1
            means = card.css_first(".rpc-means")
            assert means is not None and means.text().startswith("Score: ")
    section = tree.css_first("section.rpc")
    assert section is not None and "not across algorithms" in section.text()


async def test_a_comparison_is_made_once_per_copy_of_the_page(
    upstream: Upstream, http: aiohttp.ClientSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    """/compare runs a dozen extractions: a reload (or a query key it does not read) is answered
    from the finished comparison, and only a new copy of the page (`refresh=1`) is compared again."""
    runs: list[object] = []
    in_worker = Reader._in_worker

    async def counted(self: Reader, call: Call) -> object:
        runs.append(call.function)
        return await in_worker(self, call)

    monkeypatch.setattr(Reader, "_in_worker", counted)
    pages = []
    async with serve(test_settings(rate_limit=0)) as server:
        for query in ({}, {"theme": "dark"}, {"refresh": "1"}, {}):
            async with http.get(server.url("/compare", url=upstream.url("/article"), **query)) as response:
                assert response.status == 200
                pages.append(await response.text())
    assert runs == [compare_and_finish, compare_and_finish]
    assert 'data-algorithm="auto"' in pages[0] and pages[0].count("rpc-card") == pages[1].count("rpc-card")
    assert 'data-theme="dark"' in pages[1]  # the page is made for each request from the kept result
    assert pages[3] == pages[2]  # the refreshed copy's comparison, kept in turn
