"""Adversarial pages for every algorithm: each must finish or be cut off at the extraction
deadline, in a worker process whose memory is measured. Times and peak memory are recorded in
artifacts/attacks/pages.json (docs/security.md quotes them)."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from readerproxy.engine.extraction import get_extractor, registry
from readerproxy.web.workers import ExtractionTimeout, Job, WorkerPool

DEADLINE = 5.0
#: Seconds after which a page counts as hung: the deadline did not end it (a bound for a hang only).
HANG = 120.0
RESULTS = Path(__file__).resolve().parents[2] / "artifacts" / "attacks"


def _pages() -> dict[str, bytes]:
    words = "lorem ipsum dolor sit amet "
    return {
        "nested-divs-100k": (
            "<html><body>" + "<div>" * 100_000 + "deep" + "</div>" * 100_000 + "</body></html>"
        ).encode(),
        "single-line-5mb": (
            "<html><body><p>" + words * (5 * 1024 * 1024 // len(words)) + "</p></body></html>"
        ).encode(),
        "links-200k": (
            "<html><body>"
            + "".join(f'<a href="/l{i}">link {i}</a> ' for i in range(200_000))
            + "</body></html>"
        ).encode(),
        "text-nodes-20k": ("<html><body><p>" + "<b>a</b>" * 20_000 + "</p></body></html>").encode(),
        "table-300x300": (
            "<html><body><table>" + ("<tr>" + "<td>c</td>" * 300 + "</tr>") * 300 + "</table></body></html>"
        ).encode(),
        "nested-tables-2k": (
            "<html><body>" + "<table><tr><td>" * 2000 + "x" + "</td></tr></table>" * 2000 + "</body></html>"
        ).encode(),
        "invalid-utf8": b"<html><head><meta charset=utf-8></head><body><p>"
        + bytes(range(128, 256)) * 20_000
        + b"</p></body></html>",
        # Screen-reader labels under one parent: each label's twin test once read all its siblings
        # (80 s for these, in 2026-12-02's first form; 0.07 s since).
        "screen-reader-labels-20k": (
            "<html><body><div>" + '<span class="sr-only">x</span>' * 20_000 + "</div></body></html>"
        ).encode(),
    }


#: Pages every algorithm must finish, not be cut off at the deadline: they are cheap unless a
#: step is quadratic in them.
MUST_FINISH = frozenset(("screen-reader-labels-20k",))


PAGES = _pages()
RECORDS: list[dict[str, object]] = []

#: Every test adds its records to RECORDS and rewrites pages.json: under pytest-xdist the module's
#: tests run in one worker (`--dist loadgroup`), so the file holds every algorithm's records.
pytestmark = pytest.mark.xdist_group("artifacts-attack-pages")


@pytest.fixture(scope="module")
def results_file() -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    return RESULTS / "pages.json"


@pytest.mark.slow
@pytest.mark.parametrize("algorithm", sorted(registry()))
async def test_every_adversarial_page_finishes_or_is_cut_off(algorithm: str, results_file: Path) -> None:
    """Proves no adversarial page runs past the extraction deadline: each one either finishes or is
    answered ExtractionTimeout (the pool killed its worker at DEADLINE), and the pages of
    MUST_FINISH finish. The times are recorded, not asserted; a page that hangs despite the deadline
    fails the test by `asyncio.wait_for`'s TimeoutError (HANG, far past any deadline)."""
    extractor = get_extractor(algorithm)
    pool = WorkerPool(1, deadline=DEADLINE, queue_limit=1, max_rss_bytes=1)  # a fresh worker for every page
    await pool.start()
    try:
        for name, body in PAGES.items():
            began = time.monotonic()
            job = Job(body, "https://example.com/", "text/html", extractor.name, extractor.make_params({}))
            try:
                await asyncio.wait_for(pool.run(job), HANG)
                outcome = "finished"
            except ExtractionTimeout:
                outcome = "cut off"
            seconds = time.monotonic() - began
            RECORDS.append(
                {
                    "algorithm": algorithm,
                    "page": name,
                    "bytes": len(body),
                    "outcome": outcome,
                    "seconds": round(seconds, 2),
                    "worker_peak_mb": round(pool.last_peak / 2**20, 1),
                }
            )
            assert outcome == "finished" or name not in MUST_FINISH, (name, outcome)
    finally:
        await pool.close()
        results_file.write_text(json.dumps(RECORDS, indent=1))
