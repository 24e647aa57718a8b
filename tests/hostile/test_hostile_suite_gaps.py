"""Features deleted one at a time (issue 48): each case here is one the rest of the suite did
not notice when its feature was gone, and fails without it."""

from __future__ import annotations

import contextlib
from functools import partial
from pathlib import Path

import pytest

from di_code.ai.json_pieces import PIECE
from di_code.ai.redaction import register
from di_code.cli.guarded import guarded
from di_code.config.toml_file import ConfigError
from di_code.session.git_run import GitError, run_git
from di_code.session.jsonl import encode
from di_code.setup.flags import CliOptions
from di_code.tools.common.workspace import Workspace
from di_code.tools.process.protected import protected_path
from tests.support.git import git
from tests.support.undo_cli import planted
from tests.support.undo_driver import new_repo


def test_a_protected_name_that_is_a_symlink_protects_its_target(tmp_path: Path) -> None:
    """A repository ships `.claude` as a symlink to a folder of its own: the settings file
    written through either name is still asked about as protected (README: its target is)."""
    root = tmp_path / "repo"
    (root / "settings-dir").mkdir(parents=True)
    (root / ".claude").symlink_to("settings-dir")
    space = Workspace.create(root)
    for raw in (".claude/settings.json", "settings-dir/settings.json"):
        why = protected_path(space, raw, None)
        assert why is not None and why.startswith(f"{raw} is protected: "), (raw, why)
    assert protected_path(space, "elsewhere.json", None) is None


def test_a_session_line_longer_than_a_piece_holds_the_key_only_hidden() -> None:
    """A tool result of more than a megabyte (a log the model read) is encoded in pieces: the
    key it holds, raw and JSON-escaped, is hidden in that line as in a short one."""
    key = "sk-live/0123456789abcdefghijklmnopqrstuvwxyz"
    register(key)
    line = encode({"content": [{"text": "x" * (PIECE + 10) + f" key={key} tail"}]})
    assert b"key=***" in line
    for spelling in (key, key.replace("/", "\\/"), key[:20], key[-20:]):
        assert spelling.encode() not in line


def test_the_git_runner_s_own_diff_runs_no_external_diff_the_repository_names(
    tmp_path: Path,
) -> None:
    """A `diff` through the runner, without the caller's `--no-ext-diff`: the repository's
    `diff.external` runs under plain git (the vector is real) and not under the runner (whose
    blank setting makes git fail the diff instead: nothing runs)."""
    program, marker = planted(tmp_path)
    repo = new_repo(tmp_path / "repo")
    with (repo / ".git" / "config").open("a") as config:
        config.write(f"[diff]\n\texternal = {program}\n")
    (repo / "a.txt").write_text("changed\n")
    with contextlib.suppress(GitError):
        run_git(repo, ["diff", "HEAD"])
    assert not marker.exists()
    git(repo, "diff", "HEAD")
    assert marker.exists()


def _raises(error: Exception) -> int:
    raise error


@pytest.mark.parametrize(
    ("error", "code", "line"),
    [
        (RuntimeError("a bug \x1b[2J"), 1, "internal error: a bug ␛[2J (--verbose shows details)"),
        (ConfigError("bad \x1b]0;title\x07 file"), 2, "bad ␛]0;title␇ file"),
    ],
    ids=["bug", "user-error"],
)
def test_an_error_ending_a_command_is_one_visible_line_and_its_exit_code(
    error: Exception, code: int, line: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without --verbose a bug is one line and exit 1, not a traceback; a user's error is its
    own line; a terminal escape the message quotes (a file's name) is shown, not obeyed."""
    assert guarded(partial(_raises, error), CliOptions()) == code
    captured = capsys.readouterr()
    assert captured.err == f"di-code: {line}\n" and captured.out == ""
