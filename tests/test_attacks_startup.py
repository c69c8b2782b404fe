"""What readerproxy reads at start-up, from hostile or broken input (issue 46, items 11 and 12):
block list files, and the proxy's `--auth` and `--auth-file`.

Each failed before its change: a 50 MB non-ASCII block-list line took 112 s and 2.58 GB (IDNA before
the length check), 50 MB of random bytes 61 s; `--auth ':'`, `--auth nocolon` and an empty
`--auth-file` crashed with a traceback, and an empty password was taken on 0.0.0.0.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from pathlib import Path

import pytest

from readerproxy.proxy import blocklist
from readerproxy.proxy.blocklist import MAX_LINE, Blocklist, read_host_list

# ---- block lists --------------------------------------------------------------------------------


def hostile_list(path: Path) -> Path:
    """One 1 MB non-ASCII line, 256 KB of random bytes, then real rules (one line ending in CR only)."""
    noise = random.Random(46).randbytes(256 * 1024)
    path.write_bytes(
        ("ä" * 500_000).encode()
        + b"\n"
        + noise
        + b"\n0.0.0.0 ads.example pixel.example\r\n||tracker.example^\rcounter.example\n"
        + "bücher.example\n".encode()
    )
    return path


def test_block_list_lines_are_bounded_and_names_checked_before_idna(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No line past MAX_LINE reaches the parser (a file is read a bounded line at a time), and IDNA
    (`valid_host`, pure Python) sees only names of at most 253 host-name characters: never the
    megabyte line, never a byte that was not UTF-8 (U+FFFD)."""
    checked: list[str] = []
    lines: list[int] = []
    real_valid = blocklist.valid_host
    real_parse = blocklist.parse_host_list

    def spy_valid(host: str, **options: bool) -> bool:
        checked.append(host)
        return real_valid(host, **options)

    def spy_parse(given: Iterable[str]) -> blocklist.ParsedList:
        kept = list(given)
        lines.extend(len(line) for line in kept)
        return real_parse(kept)

    monkeypatch.setattr(blocklist, "valid_host", spy_valid)
    monkeypatch.setattr(blocklist, "parse_host_list", spy_parse)
    parsed = read_host_list(hostile_list(tmp_path / "list.txt"))
    assert parsed.hosts == {
        "ads.example",
        "pixel.example",
        "tracker.example",
        "counter.example",
        "bücher.example",
    }
    assert parsed.skipped >= 2
    assert max(lines) <= MAX_LINE + 1
    assert checked and max(len(host) for host in checked) <= 253
    assert not any("\ufffd" in host for host in checked)
    assert len(checked) < 100  # random bytes rarely look like a name


def test_a_list_of_one_endless_line_blocks_what_follows_it(tmp_path: Path) -> None:
    path = tmp_path / "long.txt"
    with path.open("wb") as file:
        for _ in range(64):
            file.write(b"a" * 65536)  # 4 MB with no line end: skipped, read in bounded pieces
        file.write(b"\nads.example\n")
    made = Blocklist.from_settings("", [str(path)])
    assert made.reason("img.ads.example", 443) == "ads.example"
    assert made.sources == (f"{path}: 1 hosts, 1 rules skipped",)
