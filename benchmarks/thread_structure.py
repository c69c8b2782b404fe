"""Threads found by structure, leave one engine out, on wcxb-dev's forum pages (not a test).

    .venv/bin/python benchmarks/thread_structure.py [--smoke] [--json FILE]

Every forum page is read three ways by `thread.read_thread`:
- `full`: as the reader reads it (the engine table, JSON-LD, then the posts found by structure);
- `loeo`: with the table entry of the engine that read it under `full` switched off (JSON-LD off
  when JSON-LD read it), as if no rule had been written for that engine;
- `structure`: with every table entry and JSON-LD off (`posts.find_thread` alone);
- `table`: as `loeo` without the posts found by structure (the reader before `posts.py`).
A reading *holds* when it gives at least two posts and every post has an author. Printed: per
engine of the `full` reading, pages and pages held under each protocol, and the share of the
reference's words (bag of lower-cased \\w+ tokens, WCXB's `main_content`) the posts' text covers.
Pages where no reading finds two posts count as missed under every protocol, unless `full` reads
a single post covering at least 0.9 of the reference (the page is one post). A last row leaves out
the script shells: pages whose whole HTML text covers less than `SHELL` of the reference.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from typing import Any

from readerproxy.engine.output import render_text
from readerproxy.engine.pipeline import process_page
from readerproxy.engine.views.thread import ENGINES, Post, read_thread
from readerproxy.research.datasets import load_dataset
from readerproxy.research.metrics import bag_of_words_score

#: A page whose whole HTML text covers less than this share of the reference's words is a script
#: shell: no reader of its HTML can show the thread (`readerproxy`'s `render=1` can).
SHELL = 0.1


def coverage(reference: str, posts: tuple[Post, ...]) -> float:
    """Share of the reference's words (as a bag) found in the posts' text."""
    return bag_of_words_score(reference, " ".join(post.text for post in posts)).recall


def holds(posts: tuple[Post, ...]) -> bool:
    return len(posts) >= 2 and all(post.author for post in posts)


def run(smoke: bool) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    pages = [page for page in load_dataset("wcxb-dev").pages if page.page_type == "forum"]
    if smoke:
        pages = pages[:3]
    for page in pages:
        doc = process_page(page.read_bytes(), url=page.url).doc
        name, full = read_thread(doc)
        engines = tuple(engine for engine in ENGINES if engine.name != name)
        _, loeo = read_thread(doc, engines=engines, json_ld=name != "json-ld")
        _, alone = read_thread(doc, engines=(), json_ld=False)
        _, before = read_thread(doc, engines=engines, json_ld=name != "json-ld", structure=False)
        one_post = len(full) == 1 and coverage(page.reference_text, full) >= 0.9
        # the page's HTML holds (almost) none of the thread: a script shell only a browser fills
        shell = bag_of_words_score(page.reference_text, render_text(doc, doc.body_mask)).recall < SHELL
        rows.append(
            {
                "id": page.id,
                "url": page.url,
                "engine": name or "none",
                "one_post": one_post,
                "shell": shell,
                **{
                    f"{label}_{key}": value
                    for label, posts in (
                        ("full", full),
                        ("loeo", loeo),
                        ("structure", alone),
                        ("table", before),
                    )
                    for key, value in (
                        ("posts", len(posts)),
                        ("authored", sum(1 for post in posts if post.author)),
                        ("holds", holds(posts)),
                        ("coverage", round(coverage(page.reference_text, posts), 3)),
                    )
                },
            }
        )
    return rows


def report(rows: list[dict[str, Any]]) -> None:
    counted = [row for row in rows if not row["one_post"]]
    by_engine: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in counted:
        by_engine[row["engine"]].append(row)
    labels = ("full", "loeo", "table", "structure")
    print(
        "| engine (full reading) | pages | full holds | loeo holds | loeo without structure "
        "| structure alone holds | coverage full / loeo / structure |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
    for engine, group in sorted(by_engine.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        cells = [sum(row[f"{label}_holds"] for row in group) for label in labels]
        mean = [
            sum(row[f"{label}_coverage"] for row in group) / len(group)
            for label in ("full", "loeo", "structure")
        ]
        shown = " / ".join(f"{m:.2f}" for m in mean)
        print(f"| {engine} | {len(group)} | {' | '.join(map(str, cells))} | {shown} |")
    total = len(counted)
    cells = [sum(row[f"{label}_holds"] for row in counted) for label in labels]
    print(f"| all | {total} | {' | '.join(f'{c} ({c / max(total, 1):.1%})' for c in cells)} | |")
    solid = [row for row in counted if not row["shell"]]
    cells = [sum(row[f"{label}_holds"] for row in solid) for label in labels]
    print(
        f"| all but script shells | {len(solid)} | {' | '.join(f'{c} ({c / max(len(solid), 1):.1%})' for c in cells)} | |"
    )
    print(
        f"left out as single-post pages: {len(rows) - total}; script shells (HTML text < {SHELL} of the reference): "
        f"{', '.join(row['id'] for row in counted if row['shell']) or 'none'}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--smoke", action="store_true", help="three pages, to check the script runs")
    parser.add_argument("--json", help="write the per-page rows here")
    args = parser.parse_args()
    rows = run(args.smoke)
    report(rows)
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(rows, handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
