"""Proof that a speed change left every output alone (not a test): hashes of everything we compute.

    .venv/bin/python benchmarks/output_hashes.py --out before.json       # on the old code
    .venv/bin/python benchmarks/output_hashes.py --compare before.json   # on the new code

For every page of the shared datasets (ScrapingHub and Readability by default), one hash each of:

- the `Document` (every token array with its dtype, texts, tags, parents, spans, title, lang, dir,
  base URL, JSON-LD, whether lines were re-broken, and the cleaned tree's HTML);
- every extractor configuration in `CONFIGS` (each registered extractor with its defaults plus
  link-filter and parameter variants): its full `Extraction` (selection bits, blocks, score, every
  signal array with its dtype, algorithm and parameters);
- for `auto`: `render_text`, `render_html` with and without images, the metadata (which holds
  `next_page_url`), the readerable check, the body the reader page shows (`fit_under_header`
  of the HTML, as `render.Renderer.reader_page` calls it), and the pipeline's whole `Article` as
  the JSON API gives it (the page kind, the view, the facts, posts, items and comments it read).

`--outputs-only` computes only `auto`'s output hashes (the last item), for a quicker check of work
after the extraction. `--compare` prints how many hashes differ (and which, up to 20) and exits 1
if any does; a hash only the new run has (one added to this script since the old run) is counted
apart and is not a difference, one the new run lacks is.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections.abc import Iterable
from typing import Any

import numpy as np

from readerproxy.api import extract, to_text
from readerproxy.engine.extraction import Extraction, get_extractor
from readerproxy.engine.kind.readerable import is_probably_readerable
from readerproxy.engine.metadata.metadata import extract_metadata
from readerproxy.engine.output import fit_under_header, render_html, render_text
from readerproxy.engine.parse.document import Document, parse
from readerproxy.research.datasets import load_dataset

#: (algorithm, parameter overrides): every registered extractor, then the variants the evaluation runs.
CONFIGS: list[tuple[str, dict[str, Any]]] = [
    (name, {})
    for name in ("auto", "baseline", "density", "cetr", "cetr-km", "cetr-tm", "lineblock", "danag", "accb")
] + [
    ("heuristic", {}),
    *[
        (name, {"link_filter": value})
        for name in ("density", "cetr", "cetr-km", "cetr-tm", "lineblock", "danag")
        for value in ("1", "2", "3")
    ],
    ("cetr", {"k": "2"}),
    ("lineblock", {"adaptive": "true"}),
    ("heuristic", {"unlikely_candidates": "true"}),
    ("heuristic", {"article_root": "top-candidate"}),
    ("accb", {"anchors": "remove"}),
    ("accb", {"unit": "char"}),
]


def _digest(parts: Iterable[Any]) -> str:
    hasher = hashlib.sha256()
    for part in parts:
        if isinstance(part, np.ndarray):
            hasher.update(str(part.dtype).encode())
            hasher.update(str(part.shape).encode())
            hasher.update(np.ascontiguousarray(part).tobytes())
        else:
            hasher.update(repr(part).encode())
        hasher.update(b"\x1f")
    return hasher.hexdigest()[:16]


def document_hash(doc: Document) -> str:
    t = doc.tokens
    return _digest(
        [
            t.kind,
            t.element,
            t.line,
            t.length,
            t.chars,
            t.in_anchor,
            t.text,
            doc.tag,
            doc.parent,
            doc.start,
            doc.end,
            doc.url,
            doc.base_url,
            doc.title,
            doc.lang,
            doc.dir,
            doc.source_length,
            doc.rebroken,
            doc.json_ld,
            doc.tree.html,
        ]
    )


def extraction_hash(extraction: Extraction) -> str:
    blocks = [(b.start, b.end, b.score, b.selected, b.element, b.label) for b in extraction.blocks]
    signals = [(name, value) for name, value in sorted(extraction.signals.items())]
    flat: list[Any] = [extraction.selection, blocks, extraction.score, extraction.algorithm]
    flat.append(sorted((k, repr(v)) for k, v in extraction.params.items()))
    for name, value in signals:
        flat.extend([name, np.asarray(value)])
    return _digest(flat)


def output_hashes(text: str, url: str | None) -> dict[str, str]:
    """The hashes of what `auto`'s pipeline makes after the extraction, by name."""
    hashes: dict[str, str] = {}
    page = parse(text, url)
    extractor = get_extractor("auto")
    auto = extractor.run(page, extractor.defaults())
    plain = render_text(page, auto.selection)
    fragment = render_html(page, auto.selection)
    metadata = extract_metadata(page, plain, selection=auto.selection)
    hashes["auto:render_text"] = _digest([plain])
    hashes["auto:render_html"] = _digest([fragment])
    hashes["auto:render_html:lite"] = _digest([render_html(page, auto.selection, images=False)])
    hashes["auto:metadata"] = _digest([metadata])
    hashes["auto:readerable"] = _digest([is_probably_readerable(page)])
    dated = bool(metadata.published or re.search(r"\d{4}", metadata.byline or ""))
    hashes["auto:fit_under_header"] = _digest(
        [fit_under_header(fragment, metadata.title, metadata.byline, dated=dated)]
    )
    hashes["auto:article"] = article_hash(text, url)
    return hashes


def article_hash(text: str, url: str | None) -> str:
    """The pipeline's whole `Article` as the JSON API gives it (`to_dict`: the page kind, the view
    and what it read: facts, posts, items, the comments under an article), less its timings."""
    article = extract(text, url=url, algorithm="auto")
    data = article.to_dict()
    del data["timings_ms"]
    return _digest([json.dumps(data, sort_keys=True, default=repr)])


def page_hashes(text: str, url: str | None, outputs_only: bool = False) -> dict[str, str]:
    """Every hash of one page, by name."""
    if outputs_only:
        return output_hashes(text, url)
    hashes: dict[str, str] = {}
    doc = parse(text, url)
    hashes["document"] = document_hash(doc)
    for name, overrides in CONFIGS:
        extractor = get_extractor(name)
        extraction = extractor.run(parse(text, url), extractor.make_params(overrides))
        key = name + "".join(f":{k}={v}" for k, v in sorted(overrides.items()))
        hashes[key] = extraction_hash(extraction)
        if name == "auto" and not overrides:
            hashes.update(output_hashes(text, url))
    return hashes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", nargs="+", default=["scrapinghub", "readability"])
    parser.add_argument("--limit", type=int)
    parser.add_argument("--out", help="write the hashes to this JSON file")
    parser.add_argument("--compare", help="compare with hashes written earlier by --out")
    parser.add_argument("--outputs-only", action="store_true", help="only auto's output hashes")
    parser.add_argument("--smoke", action="store_true", help="two pages of the first dataset")
    args = parser.parse_args()
    if args.smoke:
        args.dataset, args.limit = args.dataset[:1], 2
    hashes: dict[str, str] = {}
    for name in args.dataset:
        for page in load_dataset(name, args.limit).pages:
            text = to_text(page.read_bytes())
            for key, value in page_hashes(text, page.url, args.outputs_only).items():
                hashes[f"{name}/{page.id}/{key}"] = value
    print(f"{len(hashes)} hashes over {len({k.rsplit('/', 1)[0] for k in hashes})} pages")
    if args.out:
        with open(args.out, "w") as out:
            json.dump(hashes, out, indent=0, sort_keys=True)
    if args.compare:
        with open(args.compare) as before_file:
            before: dict[str, str] = json.load(before_file)
        if args.outputs_only:  # only the hashes this run made a kind of, on the pages it ran
            pages = {k.rsplit("/", 1)[0] for k in hashes}
            before = {k: v for k, v in before.items() if k.rsplit("/", 1)[0] in pages and "/auto:" in k}
        differ = sorted(k for k in before if before[k] != hashes.get(k))
        new = len(hashes.keys() - before.keys())
        print(
            f"compared with {args.compare}: {len(before)} before, {len(hashes)} now, {len(differ)} differ"
            f" ({new} new hashes not in the old run)"
        )
        for key in differ[:20]:
            print(f"  {key}: {before.get(key)} -> {hashes.get(key)}")
        return 1 if differ else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
