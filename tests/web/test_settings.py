"""Settings: defaults, config file, environment and command line, in that order of precedence."""

from __future__ import annotations

from pathlib import Path

import pytest

from readerproxy.app import Settings, load_settings
from readerproxy.web.fetch import FetchSettings
from readerproxy.web.settings import SettingsError, data_dir, default_cache_spec


def test_defaults_are_loopback_8080_sqlite_in_the_user_data_dir(tmp_path: Path) -> None:
    settings = load_settings({}, env={"XDG_DATA_HOME": str(tmp_path)})
    assert (settings.host, settings.port, settings.allow_private) == ("127.0.0.1", 8080, False)
    assert settings.cache == f"sqlite:{tmp_path / 'readerproxy' / 'cache.sqlite3'}"
    assert settings.fetch == FetchSettings()


def test_data_dir_falls_back_to_home() -> None:
    assert data_dir({"HOME": "/home/ada"}) == Path("/home/ada/.local/share/readerproxy")
    assert (
        default_cache_spec({"HOME": "/home/ada"}) == "sqlite:/home/ada/.local/share/readerproxy/cache.sqlite3"
    )


def test_environment_overrides_defaults() -> None:
    env = {
        "READERPROXY_HOST": "0.0.0.0",
        "READERPROXY_PORT": "9000",
        "READERPROXY_CACHE": "memory",
        "READERPROXY_ALLOW_PRIVATE": "yes",
        "HOME": "/tmp",
    }
    settings = load_settings({}, env=env)
    assert (settings.host, settings.port, settings.cache, settings.allow_private) == (
        "0.0.0.0",
        9000,
        "memory",
        True,
    )
    assert settings.fetch.allow_private


def test_config_file_then_environment_then_cli(tmp_path: Path) -> None:
    config = tmp_path / "readerproxy.toml"
    config.write_text(
        'host = "10.0.0.1"\nport = 7000\ncache = "memory"\nresult_ttl = 60\n'
        "[fetch]\ntotal_timeout = 3.5\nmax_redirects = 4\nallow_private = true\n"
    )
    env = {"READERPROXY_CONFIG": str(config), "READERPROXY_PORT": "7001", "HOME": str(tmp_path)}
    settings = load_settings({}, env=env)
    assert (settings.host, settings.port, settings.cache, settings.result_ttl) == (
        "10.0.0.1",
        7001,
        "memory",
        60.0,
    )
    assert (
        settings.fetch.total_timeout == 3.5 and settings.fetch.max_redirects == 4 and settings.allow_private
    )
    settings = load_settings({"port": 7002, "host": None, "allow_private": None}, env=env)
    assert settings.port == 7002 and settings.host == "10.0.0.1" and settings.allow_private
    env["READERPROXY_ALLOW_PRIVATE"] = "0"
    assert not load_settings({}, env=env).allow_private
    assert load_settings({"allow_private": True}, env=env).allow_private


def test_cli_config_path_wins_over_environment(tmp_path: Path) -> None:
    first, second = tmp_path / "a.toml", tmp_path / "b.toml"
    first.write_text('host = "1.1.1.1"\n')
    second.write_text('host = "2.2.2.2"\n')
    settings = load_settings({"config": str(second)}, env={"READERPROXY_CONFIG": str(first), "HOME": "/tmp"})
    assert settings.host == "2.2.2.2"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('colour = "red"\n', "unknown settings option"),
        ("[fetch]\nspeed = 3\n", r"unknown \[fetch\] option"),
        ('port = "eighty"\n', "port expects int"),
        ("port = 70000\n", "port expects int"),
        ("[fetch]\nallow_private = 3\n", "allow_private expects bool"),
        ("port = [\n", "not valid TOML"),
        ("fetch = 3\n", "must be a table"),
        ('cache = "mongodb://x"\n', "unknown cache"),
        ('cache = "sqlite:"\n', "needs a file path"),
    ],
)
def test_bad_config_is_a_clear_error(tmp_path: Path, text: str, message: str) -> None:
    config = tmp_path / "bad.toml"
    config.write_text(text)
    with pytest.raises(SettingsError, match=message):
        load_settings({"config": str(config)}, env={"HOME": "/tmp"})


def test_missing_config_file_and_bad_environment() -> None:
    with pytest.raises(SettingsError, match="cannot read config file"):
        load_settings({"config": "/nonexistent/readerproxy.toml"}, env={"HOME": "/tmp"})
    with pytest.raises(SettingsError, match="port expects int"):
        load_settings({}, env={"READERPROXY_PORT": "http", "HOME": "/tmp"})
    with pytest.raises(SettingsError, match="allow_private expects bool"):
        load_settings({}, env={"READERPROXY_ALLOW_PRIVATE": "perhaps", "HOME": "/tmp"})


def test_with_overrides_reaches_into_fetch() -> None:
    settings = Settings(cache="memory").with_overrides(allow_private=True, port=0)
    assert settings.allow_private and settings.fetch.allow_private and settings.port == 0
    assert settings.fetch.total_timeout == FetchSettings().total_timeout
