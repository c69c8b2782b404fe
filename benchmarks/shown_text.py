"""The words a person sees on the reader page against the words the API returns (not a test).

    .venv/bin/python benchmarks/shown_text.py [--smoke] [--out FILE.json] [--limit N]

For each wcxb-dev page, the page goes through the pipeline as the reader server runs it (`auto`
out of fold: the page's fold model of tests/fixtures/folds, the extraction `readerproxy eval
--oof` scores; links through the reader), and its JSON result is rendered by the server's reader
page renderer (`templating.Renderer.reader_page`, default preferences). The shown text is the
visible text of the page's `<article class="reader">` without its header (site name, title,
byline), its page-kind note and its footer: what a person reads as the page's content. Script,
style, template and noscript elements, `[hidden]` elements, inline `display:none` and the comments
under an article (shown apart, collapsed) are left out.

Each text is scored against the reference `ground_truth.main_content` by word F1 over bags of
lower-cased `\\w+` tokens. The issue this measures (44) asks for the shown text's F1 within 0.02 of
the API text's on every page type: a view that hides what the extractor found (a listing dropping
a shop category's buying guide) shows as a gap.

Runs on whatever `readerproxy` is importable: for a baseline, a worktree of the old commit on
PYTHONPATH (`git worktree add /tmp/base <commit>`, then `PYTHONPATH=/tmp/base .venv/bin/python
benchmarks/shown_text.py`). The view each page got (`view` in the JSON, or the template's choice by
counts on older trees) is recorded per page in `--out`, so two runs can be compared page by page.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from selectolax.lexbor import LexborHTMLParser

from readerproxy.engine.pipeline import process_page
from readerproxy.research.datasets import load_dataset
from readerproxy.research.training.folds import fold_of_site, site_of_page
from readerproxy.web.templating import Preferences, Renderer, link_rewriter

FOLDS = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "folds"
_WORD = re.compile(r"\w+")
#: Parts of the reader article that are not the page's content.
_CHROME = ("header.article-head", ".kind-note", "footer.article-foot")
_INVISIBLE = ("script", "style", "template", "noscript", "[hidden]")
_NO_DISPLAY = re.compile(r"display\s*:\s*none", re.I)


def words(text: str) -> Counter[str]:
    """The bag of lower-cased word tokens of a text."""
    return Counter(_WORD.findall(text.lower()))


def word_f1(found: str, reference: str) -> float:
    """F1 of the bags of words of `found` against `reference` (1.0 when both are empty)."""
    ours, theirs = words(found), words(reference)
    if not ours and not theirs:
        return 1.0
    common = sum((ours & theirs).values())
    if common == 0:
        return 0.0
    precision = common / sum(ours.values())
    recall = common / sum(theirs.values())
    return 2 * precision * recall / (precision + recall)


def shown_text(page_html: str) -> str:
    """The visible text of a reader page's article, without its header, note and footer."""
    tree = LexborHTMLParser(page_html)
    article = tree.css_first("article.reader")
    if article is None:
        return ""
    for selector in (*_CHROME, *_INVISIBLE):
        for node in article.css(selector):
            node.decompose()
    for node in article.css("[style]"):
        if _NO_DISPLAY.search(node.attributes.get("style") or ""):
            node.decompose()
    # an article's comments are shown apart from it, collapsed: not the page's content
    for node in article.css("details.comments > :not(summary)"):
        node.decompose()
    return article.text(separator=" ")


def template_view(data: dict[str, Any]) -> str:
    """The view a result gets: its `view` field, or on older trees the template's old rule by counts."""
    if data.get("view"):
        return str(data["view"])
    if len(data.get("items") or ()) >= 3:
        return "listing"
    if len(data.get("posts") or ()) >= 2:
        return "thread"
    return "product" if data.get("product") else "article"


def run(limit: int | None, smoke: bool) -> list[dict[str, Any]]:
    dataset = load_dataset("wcxb-dev", limit=None)
    pages = dataset.pages
    if smoke:
        # one page of each of five types, so the smoke run touches every view
        wanted = ("article", "forum", "product", "collection", "listing")
        pages = [next(p for p in pages if p.page_type == kind) for kind in wanted]
    elif limit:
        pages = pages[:limit]
    folds = int(json.loads((FOLDS / "manifest.json").read_text())["folds"])
    renderer = Renderer()
    prefs = Preferences()
    rows: list[dict[str, Any]] = []
    for number, page in enumerate(pages, 1):
        fold = fold_of_site(site_of_page(dataset.layout, page.id, page.url), folds)
        url = page.url or f"https://example.com/{page.id}"
        done = process_page(
            page.read_bytes(),
            url=url,
            algorithm="auto",
            params={"model": str(FOLDS / f"fold-{fold}.npz")},
            rewrite_link=link_rewriter(url),
        )
        data = done.article.to_dict()
        data["final_url"] = url
        shown = shown_text(renderer.reader_page(data, prefs))
        rows.append(
            {
                "id": page.id,
                "type": page.page_type or "",
                "view": template_view(data),
                "api_f1": round(word_f1(data["text"], page.reference_text), 4),
                "shown_f1": round(word_f1(shown, page.reference_text), 4),
            }
        )
        if number % 100 == 0:
            print(f"{number} pages", file=sys.stderr)
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    """Mean word F1 per page type: the API's text, the shown text, and the gap; views per type."""
    by_type: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_type[row["type"]].append(row)
    lines = [f"{'type':<14}{'pages':>6}{'api F1':>9}{'shown F1':>10}{'gap':>8}  views"]
    for kind in sorted(by_type):
        group = by_type[kind]
        api = sum(r["api_f1"] for r in group) / len(group)
        shown = sum(r["shown_f1"] for r in group) / len(group)
        views = Counter(r["view"] for r in group)
        named = ", ".join(f"{name} {count}" for name, count in views.most_common())
        lines.append(f"{kind:<14}{len(group):>6}{api:>9.4f}{shown:>10.4f}{shown - api:>+8.4f}  {named}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--smoke", action="store_true", help="one page of five types")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--out", type=Path, default=None, help="per-page rows as JSON")
    args = parser.parse_args()
    rows = run(args.limit, args.smoke)
    print(table(rows))
    if args.out is not None:
        args.out.write_text(json.dumps(rows, indent=0))


if __name__ == "__main__":
    main()
