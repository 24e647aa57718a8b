"""The batch's sandbox notice is what its tasks' bash does: the user's `[sandbox] mode` counts
(issue 40: with `mode = "off"` the batch said "bash runs in the bubblewrap sandbox" while bash
wrote outside)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from di_code.batch.sandbox_notice import ON_RAY
from tests.batch.conftest import RunBatch, bash_call, make_repo, read_results, write_tasks
from tests.cli.conftest import DI_CODE, cli_env
from tests.support.bubblewrap import needs_bubblewrap
from tests.support.llm_server import LLMServer, Turn

SANDBOXED = "di-code batch: bash runs in the bubblewrap sandbox (workspace-write)"
OFF = (
    "di-code batch: auto mode runs bash unsandboxed: the sandbox is off "
    "(--sandbox off or [sandbox] mode)"
)


def write_outside(
    run_batch: RunBatch, llm_server: LLMServer, tmp_path: Path, *args: str
) -> tuple[list[str], bool]:
    """The batch's first stderr lines, and whether its task's bash wrote outside the checkout."""
    make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    tasks = write_tasks(tmp_path / "tasks.jsonl", [{"id": "t", "repo": "repo", "prompt": "go"}])
    mark = tmp_path / "written-from-the-task"
    llm_server.script(bash_call(f"touch {mark}; echo tried"), Turn(text="tried"))
    done = run_batch(str(tasks), "--out", "r.jsonl", *args)
    assert done.returncode == 0, done.stderr
    assert read_results(tmp_path / "r.jsonl")["t"]["status"] == "done"
    return done.stderr.splitlines(), mark.exists()


def test_the_users_sandbox_off_is_said_and_is_what_happens(
    run_batch: RunBatch, llm_server: LLMServer, tmp_path: Path, di_code_home: Path
) -> None:
    (di_code_home / "config.toml").write_text('[sandbox]\nmode = "off"\n')
    lines, wrote = write_outside(run_batch, llm_server, tmp_path)
    assert wrote
    assert lines[0] == OFF and SANDBOXED not in lines


@needs_bubblewrap
def test_the_default_sandbox_is_said_and_holds(
    run_batch: RunBatch, llm_server: LLMServer, tmp_path: Path
) -> None:
    lines, wrote = write_outside(run_batch, llm_server, tmp_path)
    assert not wrote
    assert lines[0] == SANDBOXED


@needs_bubblewrap
def test_an_explicit_sandbox_holds_in_every_mode_and_is_said(
    run_batch: RunBatch, llm_server: LLMServer, tmp_path: Path, di_code_home: Path
) -> None:
    (di_code_home / "config.toml").write_text('[sandbox]\nmode = "read-only"\n')
    lines, wrote = write_outside(run_batch, llm_server, tmp_path, "--permission-mode", "auto")
    assert not wrote
    assert lines[0] == "di-code batch: bash runs in the bubblewrap sandbox (read-only)"


@needs_bubblewrap
def test_a_tasks_own_home_gives_its_own_notice(
    run_batch: RunBatch, llm_server: LLMServer, tmp_path: Path
) -> None:
    """A task whose `env` names another DI_CODE_HOME runs with that home's config."""
    other = tmp_path / "other-home"
    other.mkdir()
    (other / "config.toml").write_text('[sandbox]\nmode = "off"\n')
    make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [
            {"id": "mine", "repo": "repo", "prompt": "go"},
            {"id": "theirs", "repo": "repo", "prompt": "go", "env": {"DI_CODE_HOME": str(other)}},
        ],
    )
    llm_server.script(Turn(text="one"), Turn(text="two"))
    done = run_batch(str(tasks), "--out", "r.jsonl", "--jobs", "1")
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[:2] == [SANDBOXED, OFF]


def test_on_ray_the_notice_says_the_nodes_decide(run_batch: RunBatch, tmp_path: Path) -> None:
    tasks = write_tasks(tmp_path / "tasks.jsonl", [{"id": "t", "repo": ".", "prompt": "go"}])
    done = run_batch(str(tasks), "--out", "r.jsonl", "--ray", "127.0.0.1:9", "--ray-timeout", "1")
    assert done.returncode == 2
    assert done.stderr.splitlines()[0] == f"di-code batch: {ON_RAY}"


def test_a_sandbox_asked_for_where_there_is_none_is_exit_2(
    di_code_home: Path, llm_server: LLMServer, tmp_path: Path
) -> None:
    """Every task would fail the same way: the batch says it once and runs none."""
    (di_code_home / "config.toml").write_text('[sandbox]\nmode = "workspace-write"\n')
    tools = tmp_path / "bin"  # git, and no bwrap
    tools.mkdir()
    (tools / "git").symlink_to(shutil.which("git") or "git")
    tasks = write_tasks(tmp_path / "tasks.jsonl", [{"id": "t", "repo": ".", "prompt": "go"}])
    done = subprocess.run(
        [DI_CODE, "batch", str(tasks), "--out", "r.jsonl"],
        cwd=tmp_path,
        env=cli_env(di_code_home, llm_server, PATH=str(tools)),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("di-code: --sandbox workspace-write: bubblewrap is not installed")
    assert done.stderr.count("\n") == 1 and not llm_server.requests
