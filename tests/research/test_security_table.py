"""docs/security.md's attack tables are the rendering of the tracked results (docs/security-results.json),
which benchmarks/security_table.py folds from the attack tests' artifacts."""

from __future__ import annotations

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))

import security_table  # noqa: E402


def test_the_docs_show_the_tracked_results() -> None:
    results = json.loads(security_table.RESULTS.read_text())
    doc = security_table.DOC.read_text()
    assert security_table.updated_doc(doc, security_table.render(results)) == doc, (
        "docs/security.md is out of date: run benchmarks/security_table.py"
    )


def test_every_recorded_attack_held() -> None:
    results = json.loads(security_table.RESULTS.read_text())
    views = results["xss"]
    assert all(row["held"] for view, row in views.items() if view != "control-raw-page")
    assert not views["control-raw-page"]["held"]  # the harness can see an attack
    assert len(results["ssrf"]) >= 60
    assert all(row["api"] in ("403 refused", "400 bad_url") for row in results["ssrf"])
    assert {row["algorithm"] for row in results["pages"]} >= {"auto", "heuristic", "baseline"}


def test_the_table_renders_each_outcome(tmp_path: Path) -> None:
    results = {
        "xss": {"reader": {"cases": 3, "pages": 1, "held": False}},
        "ssrf": [
            {"case": "loopback", "host": "a|b", "api": "403 refused", "read": 403, "proxy": "403 Forbidden"}
        ],
        "pages": [
            {
                "algorithm": "x",
                "page": "p",
                "bytes": 2**20,
                "outcome": "cut off",
                "seconds": 5.1,
                "worker_peak_mb": 0,
            }
        ],
    }
    table = security_table.render(results)
    assert "**not held**" in table and "`a\\|b`" in table and "**cut off** at 5.1 s" in table
    doc = f"before\n{security_table.START}\nold\n{security_table.END}\nafter\n"
    assert security_table.updated_doc(doc, table) == f"before\n{table}\nafter\n"
