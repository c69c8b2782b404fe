"""What readerproxy reads at start-up, from hostile or broken input:
block list files, and the proxy's `--auth` and `--auth-file`.

Each failed before its change: a 50 MB non-ASCII block-list line took 112 s and 2.58 GB (IDNA before
the length check), 50 MB of random bytes 61 s; `--auth ':'`, `--auth nocolon` and an empty
`--auth-file` crashed with a traceback, and an empty password was taken on 0.0.0.0.
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterable
from pathlib import Path

import pytest

from readerproxy import app, cli
from readerproxy.app import load_settings
from readerproxy.proxy import blocklist
from readerproxy.proxy.blocklist import MAX_LINE, Blocklist, read_host_list
from readerproxy.web.settings import SettingsError

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


# ---- --auth and --auth-file ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flags", "problem"),
    [
        (["--auth", ":"], "--auth must be USER:PASS: the user name before the ':' is empty"),
        (
            ["--auth", "nocolon-secret"],
            "--auth must be USER:PASS: no ':' between the user name and the password",
        ),
        (["--auth", "reader:"], "--auth must be USER:PASS: the password after the ':' is empty"),
        (
            ["--auth", "a:", "--host", "0.0.0.0", "--proxy-port", "0"],
            "--auth must be USER:PASS: the password after the ':' is empty",
        ),
        (
            ["--auth", "reader:s3cret-pw", "--host", "0.0.0.0"],
            "--auth must be USER:PASS: the password has 9 characters; on --host 0.0.0.0, which other "
            "machines can reach, it needs at least 12",
        ),
        (
            ["--auth", "reader:s3cret-pw", "--host", "192.168.1.5", "--proxy-port", "0"],
            "it needs at least 12",
        ),
        (["--auth-file", "{empty}"], "--auth-file {empty} is empty: its first line must be USER:PASS"),
        (["--auth-file", "{blank}"], "--auth-file {blank} is empty: its first line must be USER:PASS"),
        (["--auth-file", "{nocolon}"], "--auth-file {nocolon} must be USER:PASS: no ':' between"),
        (["--auth-file", "{missing}"], "cannot read --auth-file {missing}: No such file or directory"),
    ],
)
def test_bad_credentials_are_one_line_errors(
    flags: list[str],
    problem: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Was a ValueError traceback from the app's set-up (and `a:` on 0.0.0.0 was taken): now the
    settings refuse it, `serve` prints one line and exits 2, and never echoes the password."""
    files = {
        "empty": tmp_path / "empty",
        "blank": tmp_path / "blank",
        "nocolon": tmp_path / "nocolon",
        "missing": tmp_path / "missing",
    }
    files["empty"].write_text("")
    files["blank"].write_text("\n\nreader:later-lines-are-not-read\n")
    files["nocolon"].write_text("nocolon-secret\n")
    for name in [key for key in os.environ if key.startswith("READERPROXY_")]:
        monkeypatch.delenv(name)
    monkeypatch.setattr(app, "run", _never_started)
    flags = [flag.format(**files) for flag in flags]
    problem = problem.format(**files)
    assert cli.main(["serve", "--port", "0", "--cache", "memory", *flags]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and problem in err, err
    assert "s3cret" not in err and "nocolon-secret" not in err


def _never_started(settings: object) -> None:
    raise AssertionError("the server would have started with these credentials")


def test_good_credentials_are_taken() -> None:
    long_enough = "reader:correct-horse"
    assert (
        load_settings({"auth": long_enough, "host": "0.0.0.0", "proxy_port": "0"}, env={}).auth == long_enough
    )
    # on loopback, only this machine reaches it: any non-empty password
    assert load_settings({"auth": "u:p", "proxy_port": "0"}, env={}).auth == "u:p"
    assert load_settings({"auth": "u:p:with:colons", "host": "::1"}, env={}).auth == "u:p:with:colons"
    with pytest.raises(SettingsError, match="at least 12"):
        load_settings({"auth": "u:p", "host": "localhost.example"}, env={})  # a name: maybe reachable
    with pytest.raises(SettingsError, match="on --lan, which other machines can reach"):
        load_settings({"auth": "u:p", "lan": True}, env={})  # --lan listens on the LAN's addresses
