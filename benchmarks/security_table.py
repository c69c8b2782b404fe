"""The tables of attacks tried in docs/security.md, generated from what the attack tests recorded.

    .venv/bin/python benchmarks/security_table.py           # artifacts -> docs/security-results.json -> docs
    .venv/bin/python benchmarks/security_table.py --check   # exit 1 if docs/security.md is out of date

The attack tests write their rows to artifacts/ (gitignored): the XSS corpus per view
(`tests/web/test_attacks_xss.py`, artifacts/attacks/xss-*.json), the adversarial pages per algorithm with
time and worker memory (`tests/engine/test_attacks_pages.py`, artifacts/attacks/pages.json) and the SSRF
matrix (`tests/web/test_ssrf.py`, artifacts/security/ssrf.json). This script folds whatever artifacts
exist into docs/security-results.json (tracked, so the docs can be checked without rerunning
Chromium) and renders the tables between the markers in docs/security.md. `tests/research/test_security_table.py`
checks that the docs match the tracked results.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
ARTIFACTS = REPO / "artifacts"
RESULTS = REPO / "docs" / "security-results.json"
DOC = REPO / "docs" / "security.md"
START = "<!-- attack-tables:start (benchmarks/security_table.py writes this part) -->"
END = "<!-- attack-tables:end -->"

XSS_VIEWS = {
    "reader": "reader view",
    "reader-lite-links": "reader view, images off, reader links",
    "compare": "compare view",
    "overlay": "overlay view (script)",
    "overlay-requests": "overlay view (requests to the attacker host, page CSS included)",
    "markdown": "format=md rendered by markdown-it with HTML allowed",
    "error-pages": "error pages",
    "control-raw-page": "control: the raw hostile page, no reader (must NOT hold)",
}


def collect() -> dict[str, Any]:
    """The tracked results, updated from the artifacts present."""
    results: dict[str, Any] = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    xss = dict(results.get("xss", {}))
    for path in sorted((ARTIFACTS / "attacks").glob("xss-*.json")):
        data = json.loads(path.read_text())
        xss[data["view"]] = {"cases": data["cases"], "pages": data["pages"], "held": data["held"]}
    if xss:
        results["xss"] = xss
    pages = ARTIFACTS / "attacks" / "pages.json"
    if pages.exists():
        results["pages"] = json.loads(pages.read_text())
    ssrf = ARTIFACTS / "security" / "ssrf.json"
    if ssrf.exists():
        rows = json.loads(ssrf.read_text())
        results["ssrf"] = sorted(
            rows, key=lambda r: (r["case"] != "redirect", str(r["case"]), str(r["host"]))
        )
    return results


def _xss_table(xss: dict[str, Any]) -> list[str]:
    lines = ["| View | Vectors | Pages | Result |", "|---|---|---|---|"]
    for view, label in XSS_VIEWS.items():
        if view not in xss:
            continue
        row = xss[view]
        if view == "control-raw-page":
            result = (
                "the harness sees the attack (so the rows above can fail)"
                if not row["held"]
                else "**harness blind**"
            )
        else:
            result = "held: no dialog, no marker, no attacker request" if row["held"] else "**not held**"
        lines.append(f"| {label} | {row['cases']} | {row['pages']} | {result} |")
    return lines


def _ssrf_table(rows: list[dict[str, Any]]) -> list[str]:
    lines = [
        "| Case | Host / target | /api/extract | /read | proxy |",
        "|---|---|---|---|---|",
    ]
    for row in rows:
        host = str(row["host"]).replace("|", "\\|")
        lines.append(
            f"| {row['case']} | `{host}` | {row.get('api', '')} | {row.get('read', '')} | {row.get('proxy', '')} |"
        )
    return lines


def _pages_table(rows: list[dict[str, Any]]) -> list[str]:
    pages = sorted({r["page"] for r in rows})
    algorithms = sorted({r["algorithm"] for r in rows})
    sizes = {r["page"]: r["bytes"] for r in rows}
    lines = [
        "| algorithm | " + " | ".join(f"{p} ({sizes[p] / 2**20:.1f} MB)" for p in pages) + " |",
        "|---" * (len(pages) + 1) + "|",
    ]
    for algorithm in algorithms:
        cells = []
        for page in pages:
            row = next((r for r in rows if r["algorithm"] == algorithm and r["page"] == page), None)
            if row is None:
                cells.append("")
            elif row["outcome"] == "finished":
                cells.append(f"{row['seconds']:.2f} s, {row['worker_peak_mb']:.0f} MB")
            else:
                cells.append(f"**cut off** at {row['seconds']:.1f} s")
        lines.append(f"| {algorithm} | " + " | ".join(cells) + " |")
    return lines


def render(results: dict[str, Any]) -> str:
    """The markdown between the markers."""
    out = [START, ""]
    if "xss" in results:
        out += [
            "**XSS corpus in Chromium** (`tests/web/test_attacks_xss.py`):",
            "",
            *_xss_table(results["xss"]),
            "",
        ]
    if "ssrf" in results:
        rows = results["ssrf"]
        out += [
            f"**SSRF matrix** (`tests/web/test_ssrf.py`, {len(rows)} rows; the test server's guard on, nothing "
            "contacted for a refused row):",
            "",
            *_ssrf_table(rows),
            "",
        ]
    if "pages" in results:
        out += [
            "**Adversarial pages × every algorithm** (`tests/engine/test_attacks_pages.py`, one fresh worker per page, "
            "deadline 5 s; time includes the worker round trip; memory is the worker's peak resident size; "
            "measured on 2 cores shared with other work, so compare within the table):",
            "",
            *_pages_table(results["pages"]),
            "",
        ]
    out.append(END)
    return "\n".join(out)


def updated_doc(doc: str, table: str) -> str:
    if START not in doc or END not in doc:
        raise SystemExit(f"{DOC} has no {START!r} … {END!r} markers")
    head, rest = doc.split(START, 1)
    _, tail = rest.split(END, 1)
    return head + table + tail


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--check", action="store_true", help="only check that the docs match the tracked results"
    )
    parser.add_argument("--smoke", action="store_true", help="collect and render, write nothing")
    args = parser.parse_args()
    if args.smoke:
        results = collect()
        print(f"{len(results)} result sections, {len(render(results))} characters of tables (not written)")
        return 0
    if args.check:
        results = json.loads(RESULTS.read_text())
        doc = DOC.read_text()
        if updated_doc(doc, render(results)) != doc:
            print("docs/security.md is out of date: run benchmarks/security_table.py", file=sys.stderr)
            return 1
        return 0
    results = collect()
    RESULTS.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n")
    DOC.write_text(updated_doc(DOC.read_text(), render(results)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
