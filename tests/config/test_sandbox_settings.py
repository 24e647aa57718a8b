"""`[sandbox] hide` and `reveal`: read from the user's file and a trusted project's, never from
an untrusted one; a path that is neither absolute nor from `~` is one line of error."""

from __future__ import annotations

from pathlib import Path

import pytest

from di_code.config.settings import ConfigError, load_settings, parse_settings
from di_code.setup.prepare import sandbox_paths
from tests.support.files import write


def test_hide_and_reveal_add_up_from_the_user_and_a_trusted_project(tmp_path: Path) -> None:
    from di_code.config.trusting import trust_project

    home, workspace = tmp_path / "home", tmp_path / "repo"
    write(home / "config.toml", '[sandbox]\nhide = ["~/notes"]\nreveal = ["~/.npmrc"]\n')
    write(workspace / ".di-code" / "config.toml", '[sandbox]\nhide = ["/srv/keys"]\n')
    trust_project(home, workspace)
    settings = load_settings(home, workspace)
    assert settings.sandbox_hide == ("~/notes", "/srv/keys")
    assert settings.sandbox_reveal == ("~/.npmrc",)

    paths = sandbox_paths(settings, home)
    assert paths.hide == (Path("~/notes").expanduser(), Path("/srv/keys"))
    assert paths.reveal == (Path("~/.npmrc").expanduser(),)
    assert paths.di_code_home == home


def test_an_untrusted_project_cannot_reveal_a_secret(tmp_path: Path) -> None:
    home, workspace = tmp_path / "home", tmp_path / "repo"
    write(workspace / ".di-code" / "config.toml", '[sandbox]\nreveal = ["~/.ssh"]\n')
    settings = load_settings(home, workspace)
    assert settings.sandbox_reveal == ()
    assert any("sandbox.reveal" in warning for warning in settings.warnings)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[sandbox]\nhide = "~/x"\n', "f.toml: sandbox.hide must be a list of strings"),
        ("[sandbox]\nreveal = [1]\n", "f.toml: sandbox.reveal must be a list of strings"),
    ],
)
def test_bad_lists_name_the_file_and_key(text: str, message: str) -> None:
    import tomllib

    with pytest.raises(ConfigError, match=f"^{message}$"):
        parse_settings(tomllib.loads(text), "f.toml")


def test_a_relative_path_is_one_line_of_error(tmp_path: Path) -> None:
    settings = parse_settings({"sandbox": {"hide": ["notes"]}}, "f.toml")
    with pytest.raises(ConfigError) as caught:
        sandbox_paths(settings, tmp_path)
    assert str(caught.value) == "sandbox.hide: 'notes' must be absolute or start with ~"
