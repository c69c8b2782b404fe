"""Reader page size vs original page size on the dataset pages (not a test).

    .venv/bin/python benchmarks/page_size.py [--limit N] [--algo auto]

The reader page is what /read serves (HTML document, links through /read); the stylesheet is one
file cached for a year, counted separately. The original is the page's HTML alone (its scripts,
styles and images would come on top of that in a browser).
"""

from __future__ import annotations

import argparse
import gzip
import statistics
import sys
from pathlib import Path

from readerproxy.engine.extraction import get_extractor
from readerproxy.engine.pipeline import process
from readerproxy.web.templating import Preferences, Renderer, link_rewriter

DATASETS = Path(__file__).resolve().parent.parent.parent / "shared" / "datasets"


def pages(limit: int | None) -> list[tuple[str, bytes]]:
    found = [
        (p.name.removesuffix(".html.gz"), gzip.decompress(p.read_bytes()))
        for p in sorted((DATASETS / "scrapinghub" / "html").glob("*.html.gz"))
    ]
    found += [
        (p.parent.name, p.read_bytes()) for p in sorted((DATASETS / "readability").glob("*/source.html"))
    ]
    return found[:limit] if limit else found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--limit", type=int)
    parser.add_argument("--algo", default="auto")
    parser.add_argument("--smoke", action="store_true", help="two pages")
    args = parser.parse_args()
    if args.smoke:
        args.limit = 2
    renderer = Renderer()
    extractor = get_extractor(args.algo)
    params = extractor.make_params({})
    ratios, originals, readers, gz_originals, gz_readers = [], [], [], [], []
    for name, body in pages(args.limit):
        url = f"https://example.com/{name}"
        article = process(
            body, url=url, algorithm=extractor, params=params, rewrite_link=link_rewriter(url, args.algo)
        )
        data = article.to_dict() | {"final_url": url}
        page = renderer.reader_page(data, Preferences(), args.algo).encode()
        originals.append(len(body))
        readers.append(len(page))
        gz_originals.append(len(gzip.compress(body)))
        gz_readers.append(len(gzip.compress(page)))
        ratios.append(len(page) / len(body))
    css = sum(len(asset.body) for asset in renderer.static.values())
    print(f"pages: {len(ratios)}  algorithm: {extractor.name}")
    print(
        f"original HTML   median {statistics.median(originals) / 1024:8.1f} KB   total {sum(originals) / 2**20:7.1f} MB"
    )
    print(
        f"reader page     median {statistics.median(readers) / 1024:8.1f} KB   total {sum(readers) / 2**20:7.1f} MB"
    )
    print(f"gzip original   median {statistics.median(gz_originals) / 1024:8.1f} KB")
    print(f"gzip reader     median {statistics.median(gz_readers) / 1024:8.1f} KB")
    print(
        f"reader/original median {statistics.median(ratios):.3f}  p90 {sorted(ratios)[int(len(ratios) * 0.9)]:.3f}"
        f"  overall {sum(readers) / sum(originals):.3f}"
    )
    print(f"stylesheet (once, cached a year): {css / 1024:.1f} KB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
