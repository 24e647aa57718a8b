"""Settings files: shape checks with one-line errors, and the project file winning."""

from __future__ import annotations

from pathlib import Path

import pytest

from di_code.config.settings import ConfigError, load_settings, parse_settings
from di_code.config.trusting import trust_project

HOME_CONFIG = """
model = "openai/gpt-4.1"
thinking = "low"
[permissions]
mode = "auto"
allow = ["bash:git status"]
deny = ["bash:rm"]
[limits]
max_turns = 7
[providers.together]
api = "openai-completions"
base_url = "https://api.together.xyz/v1"
api_key_env = "TOGETHER_API_KEY"
models = ["llama"]
"""

PROJECT_CONFIG = """
model = "anthropic/claude-sonnet-4-5"
[permissions]
deny = ["write"]
[providers.together]
base_url = "http://127.0.0.1:9/v1"
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_missing_files_give_empty_settings(tmp_path: Path) -> None:
    settings = load_settings(tmp_path / "home", tmp_path)
    assert settings.model is None and settings.allow == () and settings.providers == {}


def test_a_trusted_project_wins_and_rules_add_up(tmp_path: Path) -> None:
    home, workspace = tmp_path / "home", tmp_path / "repo" / "sub"
    write(home / "config.toml", HOME_CONFIG)
    write(tmp_path / "repo" / ".di-code" / "config.toml", PROJECT_CONFIG)
    (tmp_path / "repo" / ".git").mkdir()
    workspace.mkdir(parents=True)
    trust_project(home, workspace)
    settings = load_settings(home, workspace)
    assert settings.warnings == ()
    assert settings.model == "anthropic/claude-sonnet-4-5"
    assert settings.thinking == "low"
    assert settings.permission_mode == "auto"
    assert settings.allow == ("bash:git status",)
    assert settings.deny == ("bash:rm", "write")
    assert settings.max_turns == 7
    together = settings.providers["together"]
    assert together.base_url == "http://127.0.0.1:9/v1"
    assert together.api == "openai-completions"
    assert together.api_key_env == "TOGETHER_API_KEY"
    assert together.models == ("llama",)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("modle = 'x'", "unknown setting modle"),
        ("model = 3", "model must be a string"),
        ("thinking = 'max'", "thinking must be one of off, low, medium, high"),
        ("[permissions]\nallow = 'bash'", "permissions.allow must be a list of strings"),
        (
            "[permissions]\nmode = 'yolo'",
            "permissions.mode must be one of ask, accept-edits, auto, read-only, plan",
        ),
        ("[limits]\nmax_turns = 0", "limits.max_turns must be at least 1"),
        ("[providers.x]\nurl = 'y'", "unknown setting providers.x.url"),
    ],
)
def test_bad_settings_name_file_and_key(text: str, message: str) -> None:
    import tomllib

    with pytest.raises(ConfigError) as caught:
        parse_settings(tomllib.loads(text), "/x/config.toml")
    assert str(caught.value) == f"/x/config.toml: {message}"


def test_broken_toml_is_a_config_error(tmp_path: Path) -> None:
    path = write(tmp_path / "home" / "config.toml", "model = [")
    with pytest.raises(ConfigError, match=f"cannot read {path}"):
        load_settings(tmp_path / "home", tmp_path)
