"""The command line: extract in every format, algorithms, and clear errors."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from readerproxy.cli import main

PAGE = """<html><head><title>CLI page</title></head><body>
<nav><a href="/x">Nav link</a></nav>
<article><h1>CLI page</h1><p>{p}</p><p>{p}</p><p><a href="/rel">relative link</a> {p}</p></article>
</body></html>""".format(p="Sentences about the command line and its many output formats. " * 8)


@pytest.fixture
def page_file(tmp_path: Path) -> Path:
    path = tmp_path / "page.html.gz"
    path.write_bytes(gzip.compress(PAGE.encode()))
    return path


def test_extract_text(page_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["extract", str(page_file), "--algo", "density"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("CLI page\n\n")
    assert "Sentences about the command line" in out
    assert "Nav link" not in out


def test_extract_json_html_markdown(page_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["extract", str(page_file), "--format", "json", "--url", "https://cli.example/a/"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["title"] == "CLI page" and data["algorithm"] != "auto"
    assert 'href="https://cli.example/rel"' in data["html"]
    assert main(["extract", str(page_file), "--format", "html"]) == 0
    assert "<p>" in capsys.readouterr().out
    assert main(["extract", str(page_file), "--format", "markdown"]) == 0
    assert capsys.readouterr().out.startswith("# CLI page\n")


def test_extract_parameters(page_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["extract", str(page_file), "--algo", "density", "-p", "c1=0.5", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["parameters"]["c1"] == 0.5


def test_errors_are_clear(page_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["extract", str(page_file), "--algo", "nope"]) == 2
    assert "unknown algorithm 'nope'" in capsys.readouterr().err
    assert main(["extract", str(page_file), "-p", "c9=1", "--algo", "density"]) == 2
    assert "valid: c1" in capsys.readouterr().err
    assert main(["extract", str(tmp_path / "missing.html")]) == 2
    assert "cannot read" in capsys.readouterr().err
    bomb = tmp_path / "bomb.gz"
    bomb.write_bytes(gzip.compress(b"<p>" + b"a" * (80 * 1024 * 1024)))
    assert main(["extract", str(bomb)]) == 2
    assert "exceeds" in capsys.readouterr().err


def test_algorithms_lists_every_algorithm(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["algorithms"]) == 0
    out = capsys.readouterr().out
    for name in ("auto", "baseline", "density"):
        assert any(line.split()[0] == name for line in out.splitlines())
