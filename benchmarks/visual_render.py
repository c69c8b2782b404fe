"""Cost of rendering pages in the browser service, and the pool's throughput (not a test).

    .venv/bin/python benchmarks/visual_render.py [--limit 40] [--dataset scrapinghub ...]

Each page of the dataset is rendered from its own bytes as `visual` sees it (JavaScript off, no
fetcher: the document is all the browser gets, other hosts and images blocked) with the layout
snapshot read back, then `visual` is run on the result. Printed per dataset:

- the median and p95 time of one render (browser only: tab, load, snapshot, serialisation) with one
  tab at a time, and of the `visual` extraction on the rendered DOM (parse + extract + render);
- throughput in pages per second when all pages are submitted at once to a pool of 1 and of 2 tabs
  (`BrowserService(pages=N)`), the browser already running.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

import numpy as np

from readerproxy.api import to_text
from readerproxy.engine.pipeline import process
from readerproxy.research.datasets import load_dataset
from readerproxy.web.browser import BrowserService, BrowserSettings
from readerproxy.web.reader import BLANK_PAGE_URL


async def sequential(pages: list[tuple[str, str | None]]) -> tuple[list[float], list[float]]:
    """Per page: milliseconds of the render, and of `visual` on the rendered page."""
    service = BrowserService(BrowserSettings(pages=1, timeout=60.0))
    render_ms: list[float] = []
    extract_ms: list[float] = []
    try:
        await service.render(BLANK_PAGE_URL, "<p>warm up</p>", layout=True)
        for text, url in pages:
            began = time.perf_counter()
            page = await service.render(url or BLANK_PAGE_URL, text, layout=True)
            rendered = time.perf_counter()
            process(page.html, url=url, algorithm="visual", layout=page.layout)
            render_ms.append((rendered - began) * 1000)
            extract_ms.append((time.perf_counter() - rendered) * 1000)
    finally:
        await service.close()
    return render_ms, extract_ms


async def throughput(pages: list[tuple[str, str | None]], size: int) -> float:
    """Pages per second with every page submitted at once to a pool of `size` tabs."""
    service = BrowserService(BrowserSettings(pages=size, timeout=120.0))
    try:
        await service.render(BLANK_PAGE_URL, "<p>warm up</p>", layout=True)
        began = time.perf_counter()
        await asyncio.gather(
            *(service.render(url or BLANK_PAGE_URL, text, layout=True) for text, url in pages)
        )
        return len(pages) / (time.perf_counter() - began)
    finally:
        await service.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", action="append", help="scrapinghub, readability (repeatable)")
    parser.add_argument("--limit", type=int, default=40, help="pages per dataset")
    parser.add_argument("--smoke", action="store_true", help="two pages of one dataset")
    args = parser.parse_args()
    if args.smoke:
        args.dataset, args.limit = (args.dataset or ["scrapinghub"])[:1], 2
    for name in args.dataset or ["scrapinghub", "readability"]:
        dataset = load_dataset(name, args.limit)
        pages = [(to_text(page.read_html()), page.url) for page in dataset]
        render_ms, extract_ms = asyncio.run(sequential(pages))
        one = asyncio.run(throughput(pages, 1))
        two = asyncio.run(throughput(pages, 2))
        print(
            f"{name} ({len(pages)} pages): render median {statistics.median(render_ms):.0f} ms, "
            f"p95 {np.percentile(render_ms, 95):.0f} ms; visual on the rendered page median "
            f"{statistics.median(extract_ms):.1f} ms; throughput {one:.2f} pages/s (1 tab), "
            f"{two:.2f} pages/s (2 tabs)"
        )


if __name__ == "__main__":
    main()
