"""git on a named pipe (issue 41): a command's `mkfifo logs/.gitignore` left di-code's
`git ls-files -o --exclude-standard` blocked opening it, for ever: `run` survived SIGTERM and
the git process outlived di-code. di-code's git never waits on a FIFO: a git call blocked
opening one is killed with its process group, and the snapshot goes on without the untracked
files (undo then treats them as unknown and never deletes one)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.cli.conftest import DI_CODE, cli_env
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn
from tests.support.processes import MARK, SAFETY_TIMEOUT, marked, wait_until


def git(repo: Path, *args: str) -> None:
    identity = ["-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", *identity, *args], cwd=repo, check=True, capture_output=True)


def test_a_fifo_among_the_ignore_files_never_holds_run(
    llm_server: LLMServer, di_code_home: Path, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "a.txt").write_text("a\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "first")
    command = "mkdir logs && mkfifo logs/.gitignore && echo x > a.txt && echo n > new.txt"
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("bash", {"command": command}),)), Turn(text="piped")
    )
    env = {**cli_env(di_code_home, llm_server), MARK: "git-fifo"}
    run = [DI_CODE, "run", "--yes", "--sandbox", "off", "make a pipe"]
    try:
        done = subprocess.run(run, cwd=repo, env=env, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=SAFETY_TIMEOUT)  # fmt: skip
    finally:
        wait_until(lambda: not marked("git-fifo"), "no git left behind")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "piped"
    undo = [DI_CODE, "undo", "--yes"]
    undone = subprocess.run(undo, cwd=repo, env=env, stdin=subprocess.DEVNULL,
                            capture_output=True, text=True, timeout=SAFETY_TIMEOUT)  # fmt: skip
    assert undone.returncode == 0, undone.stderr
    assert (repo / "a.txt").read_text() == "a\n"
    assert (repo / "new.txt").exists()  # untracked files were not captured: never deleted
    assert "keep untracked files: " in undone.stdout and "FIFO" in undone.stdout, undone.stdout


HOLDER = """
import os, sys
from pathlib import Path
from di_code.session.git_run import run_git
print("running", flush=True)  # git's stdin never ends: the test holds its other end
run_git(Path(sys.argv[1]), ["fast-import", "--quiet"], stdin=os.fdopen(int(sys.argv[2]), "rb"))
"""


def test_a_git_call_ends_when_di_code_is_killed(tmp_path: Path) -> None:
    """Issue 41: the git process outlived a SIGKILL of di-code. Each git call dies with the
    process that started it, whatever it waits on."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    env = {**os.environ, MARK: "git-killed"}
    read, write = os.pipe()
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(repo), str(read)], env=env,
                              stdout=subprocess.PIPE, text=True, pass_fds=[read])  # fmt: skip
    os.close(read)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "running\n"
        wait_until(lambda: len(marked("git-killed")) == 2, "git to start")
    finally:
        holder.kill()
        holder.wait()
    try:
        wait_until(lambda: not marked("git-killed"), "git to end with what started it")
    finally:
        os.close(write)
