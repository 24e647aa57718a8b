"""An embedded bare repository attacked from README alone (Permissions: "always" and allow rules;
Threat model: bash; HOSTILE.md "Programs a repository can name").

A cloned repository can carry, as ordinary files, a folder laid out as a bare repository whose
`config` names programs (`core.fsmonitor`, with `core.worktree` so that `git status` has a work
tree to watch). git takes such a folder for the repository when it runs inside it, and no rule
protects its config as it does `.git`'s: the model may even write one in accept-edits mode. A
line the user's rules cover (`cd evil && git status` under `bash:cd` and `bash:git status`)
must not let git run what that folder names, nor may di-code's own git (its checkpoints) in a
workspace that is such a folder. Each case runs a real `di-code run` against the loopback model
server, with real git and bash, and looks for the file the planted program would make."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.cli.conftest import DI_CODE, RunDiCode, cli_env
from tests.support.git import git
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn
from tests.support.rule_runs import calls, results, user_rules

NEEDS_APPROVAL = "needs the user's approval"


def cloned_with_bare_repo(source: Path, clone: Path, marker: Path) -> Path:
    """Clone into `clone` a repository whose committed files hold `evil/`, a bare repository
    whose config has `core.fsmonitor` make `marker` (its work tree: the clone's top); the
    folder `evil` of the clone."""
    git(source.parent, "init", "-q", "-b", "main", str(source))
    evil = source / "evil"
    git(source, "init", "-q", "--bare", str(evil))
    for setting in (
        ("core.bare", "false"),
        ("core.worktree", ".."),
        ("core.fsmonitor", f"touch {marker}; false"),
    ):
        git(evil, "config", *setting)
    for kept in ("refs", "objects"):  # git keeps no empty folder: a clone must still hold them
        (evil / kept / ".keep").write_text("")
    (source / "README.md").write_text("hello\n")
    git(source, "add", "-A")
    git(source, "commit", "-q", "-m", "a project with a folder laid out as a repository")
    git(source.parent, "clone", "-q", str(source), str(clone))
    assert (clone / "evil" / "config").is_file()
    return clone / "evil"


GIT_IN_EVIL = [
    "cd evil && git status",
    "cd evil; git status",
    "cd evil\ngit status",
    "pushd evil && git status",
    "git -C evil status",
]
"""Lines the rules below cover, each running `git status` in the embedded bare repository."""


def test_a_covered_git_line_in_an_embedded_bare_repository_runs_nothing_it_names(
    run_di_code: RunDiCode,
    llm_server: LLMServer,
    workspace: Path,
    di_code_home: Path,
    tmp_path: Path,
) -> None:
    """README: `bash:git status` runs the repository's own `.git/config` programs, a protected
    folder; a folder the clone merely holds is not the repository. Every line is covered (the
    model is not told to ask) and git refuses the folder, so its fsmonitor never runs."""
    marker = tmp_path / "fsmonitor-ran"
    workspace.rmdir()
    cloned_with_bare_repo(tmp_path / "source", workspace, marker)
    user_rules(
        di_code_home,
        ["bash:cd", "bash:pushd", "bash:git status", "bash:git -C evil status"],
    )
    ids = calls(llm_server, "bash", [{"command": line} for line in GIT_IN_EVIL])
    done = run_di_code("run", "go")
    assert done.returncode == 0, done.stderr
    told = results(llm_server)
    for call, line in zip(ids, GIT_IN_EVIL, strict=True):
        assert NEEDS_APPROVAL not in told[call], line
        assert "cannot use bare repository" in told[call], (line, told[call])
    assert not marker.exists()


def test_git_in_the_workspace_s_own_repository_still_works_with_the_user_s_git_settings(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path, di_code_home: Path
) -> None:
    """The control: the setting that refuses bare folders leaves the repository itself and the
    user's own `GIT_CONFIG_COUNT` settings (their environment's) as they were."""
    git(workspace, "init", "-q", "-b", "main")
    user_rules(di_code_home, ["bash:git status", "bash:git config"])
    lines = ["git status", "git config user.name"]
    ids = calls(llm_server, "bash", [{"command": line} for line in lines])
    mine = {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "user.name", "GIT_CONFIG_VALUE_0": "me"}
    done = run_di_code("run", "go", env_extra=mine)
    assert done.returncode == 0, done.stderr
    told = results(llm_server)
    assert "On branch main" in told[ids[0]], told[ids[0]]
    assert "me" in told[ids[1]] and "error" not in told[ids[1]].lower(), told[ids[1]]


def test_a_workspace_that_is_a_bare_repository_runs_nothing_it_names(
    llm_server: LLMServer, di_code_home: Path, tmp_path: Path
) -> None:
    """di-code started inside the embedded folder: neither its own git (the checkpoint before
    the write) nor a covered `git status` runs the folder's fsmonitor."""
    marker = tmp_path / "fsmonitor-ran"
    evil = cloned_with_bare_repo(tmp_path / "source", tmp_path / "clone", marker)
    user_rules(di_code_home, ["bash:git status"])
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("write", {"path": "notes.txt", "content": "x\n"}, "w0"),)),
        Turn(tool_calls=(ToolCallSpec("bash", {"command": "git status"}, "b0"),)),
        Turn(text="done"),
    )
    done = subprocess.run(
        [DI_CODE, "run", "--permission-mode", "accept-edits", "go"],
        cwd=evil,
        env=cli_env(di_code_home, llm_server),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert (evil / "notes.txt").read_text() == "x\n"
    told = results(llm_server)
    assert NEEDS_APPROVAL not in told["b0"], told["b0"]
    assert not marker.exists()
