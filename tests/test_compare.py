"""Compare: every algorithm on one Document, agreement of their selections, the /compare page."""

from __future__ import annotations

from pathlib import Path

import aiohttp
import numpy as np
from selectolax.lexbor import LexborHTMLParser
from support.reader_server import RunningServer
from support.upstream import Upstream

from readerproxy.engine.extraction import registry
from readerproxy.web.compare import algorithm_names, compare_page_source

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def test_every_algorithm_runs_once_on_one_document() -> None:
    comparison = compare_page_source((FIXTURES / "wiki_links.html").read_bytes(), url="https://example.org/a")
    assert [r.name for r in comparison.runs] == algorithm_names()
    assert set(algorithm_names()) == {name for name, e in registry().items() if not e.needs_browser}
    agreement = comparison.agreement
    assert agreement.shape == (len(comparison.runs),) * 2
    np.testing.assert_allclose(agreement, agreement.T)
    assert np.all((agreement >= 0) & (agreement <= 1))
    np.testing.assert_allclose(np.diag(agreement), 1.0)
    by_name = {r.name: r for r in comparison.runs}
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
