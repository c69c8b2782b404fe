"""Where `extract(algorithm="auto")`'s time goes, stage by stage, against trafilatura (not a test).

    .venv/bin/python benchmarks/parse_stages.py [--repeat 3] [--limit N] [--dataset scrapinghub ...]

For every page (decoded to text once, outside the timings), in one process, the fastest of
`--repeat` interleaved runs of each stage; printed per dataset: the median over pages in
milliseconds and as a share of `trafilatura.extract`'s median in the same run. The stages:

- Lexbor's parse alone and the whole `Document` build (`document.parse`);
- auto's extraction on a fresh `Document` (each run parses again, outside the timing: the
  element features are kept per `Document`), and inside it the heuristic it starts from
  (`elements.element_features`, then the rest of that extractor), the block features
  (`learn.blocks.page_blocks`) and the two stages of trees with the context between them;
- the output (`render_text`, `render_html`, metadata, the readerable check) of that extraction;
- `readerproxy.extract` whole, and `trafilatura.extract` with its defaults.

The sub-stages are timed one after the other on the same `Document`, so their sum is close to,
not exactly, the extraction timed whole. Requires trafilatura (`pip install 'readerproxy[bench]'`).
"""

from __future__ import annotations

import argparse
import gc
import statistics

import trafilatura
from selectolax.lexbor import LexborHTMLParser
from timing import dataset_options, decoded_pages, timed

import readerproxy
from readerproxy.engine import elements
from readerproxy.engine.extraction import get_extractor
from readerproxy.engine.extractors.auto import first_extractor
from readerproxy.engine.kind.readerable import is_probably_readerable
from readerproxy.engine.learn import blocks as learn_blocks
from readerproxy.engine.learn.model import load_model
from readerproxy.engine.metadata.metadata import extract_metadata
from readerproxy.engine.output import render_html, render_text
from readerproxy.engine.parse.document import parse

STAGES = (
    "Lexbor parse alone",
    "Document (parse, clean, serialise, linear view)",
    "auto's extraction, whole",
    "- heuristic: element features",
    "- heuristic: scoring and selection",
    "- block features (page_blocks)",
    "- trees, both stages and context",
    "render_text",
    "render_html",
    "metadata",
    "readerable check",
    "readerproxy.extract(auto), whole",
    "trafilatura.extract",
)


def page_stages(text: str, url: str | None) -> dict[str, float]:
    """Seconds per stage for one run on one page."""
    auto = get_extractor("auto")
    auto_params = auto.defaults()
    first, first_params = first_extractor()
    model = load_model()
    out: dict[str, float] = {}
    out[STAGES[0]], _ = timed(lambda: LexborHTMLParser(text))
    out[STAGES[1]], doc = timed(lambda: parse(text, url))
    out[STAGES[2]], extraction = timed(lambda: auto.run(doc, auto_params))
    doc = parse(text, url)
    out[STAGES[3]], features = timed(lambda: elements.element_features(doc))
    elements._FEATURES[doc] = features  # what features_of(doc) would keep
    out[STAGES[4]], first_extraction = timed(lambda: first.run(doc, first_params))
    out[STAGES[5]], blocks = timed(lambda: learn_blocks.page_blocks(doc, first_extraction))
    out[STAGES[6]], _ = timed(lambda: model.probability(blocks.features, blocks.parent, blocks.grandparent))
    selection = extraction.selection
    out[STAGES[7]], plain = timed(lambda: render_text(doc, selection))
    out[STAGES[8]], _ = timed(lambda: render_html(doc, selection))
    out[STAGES[9]], _ = timed(lambda: extract_metadata(doc, plain, selection=selection))
    out[STAGES[10]], _ = timed(lambda: is_probably_readerable(doc))
    out[STAGES[11]], _ = timed(lambda: readerproxy.extract(text, url=url, algorithm="auto"))
    out[STAGES[12]], _ = timed(lambda: trafilatura.extract(text, url=url))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    dataset_options(parser, repeat=3)
    args = parser.parse_args()
    for name in args.dataset:
        pages = decoded_pages(name, args.limit)
        for text, url in pages[:3]:  # warm up imports and caches
            page_stages(text, url)
        gc.collect()
        best: dict[str, list[float]] = {stage: [] for stage in STAGES}
        for text, url in pages:
            runs = [page_stages(text, url) for _ in range(args.repeat)]
            for stage in STAGES:
                best[stage].append(min(run[stage] for run in runs))
        reference = statistics.median(best[STAGES[-1]])
        print(f"{name}: {len(pages)} pages, fastest of {args.repeat} per page, median over pages")
        print("| stage | ms | × trafilatura |\n|---|---|---|")
        for stage in STAGES:
            median = statistics.median(best[stage])
            print(f"| {stage} | {median * 1000:.2f} | {median / reference:.3f} |")
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
