"""The git processes a `run` starts on its own account (issue 47: each one costs the first
request on a loaded machine): where the folder is in a work tree is found once, by the system
prompt's git state (with the refs of this home's snapshots, in the same process), and the
prompt's checkpoint takes both from there; outside git that one probe is all."""

from __future__ import annotations

import os
from pathlib import Path

from tests.cli.conftest import RunDiCode
from tests.support.git import git, logging_git, subcommands
from tests.support.llm_server import LLMServer, Turn


def run_logged(run_di_code: RunDiCode, tmp_path: Path, *args: str) -> Path:
    """The log of the git calls of one `run`."""
    log = tmp_path / "git.log"
    shim = logging_git(tmp_path / "bin", log)
    done = run_di_code("run", *args, env_extra={"PATH": f"{shim}:{os.environ['PATH']}"})
    assert done.returncode == 0, done.stderr
    return log


def test_outside_git_a_recorded_run_asks_git_once(
    run_di_code: RunDiCode, llm_server: LLMServer, tmp_path: Path
) -> None:
    llm_server.script(Turn(text="hello"))
    assert subcommands(run_logged(run_di_code, tmp_path, "hi")) == ["rev-parse"]


def test_inside_git_the_work_tree_is_found_once_for_the_prompt_and_its_checkpoint(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path, tmp_path: Path
) -> None:
    git(workspace, "init", "-q")
    (workspace / "a.txt").write_text("a\n")
    llm_server.script(Turn(text="hello"))
    log = run_logged(run_di_code, tmp_path, "hi")
    assert log.read_text().count("--show-toplevel") == 1, log.read_text()
    calls = subcommands(log)
    assert "status" in calls and "ls-files" in calls, calls  # the prompt's state, the snapshot
    assert "for-each-ref" not in calls, calls  # the refs came with the top
