"""`di-code undo` end to end: a scripted prompt changes files (tools and bash), undo takes
it back, in a real git repository and outside git."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.cli.conftest import RunDiCode
from tests.support.git import git
from tests.support.llm_server import LLMServer, Turn, call
from tests.support.undo_cli import repo as repo

pytestmark = pytest.mark.skipif(
    subprocess.run(["git", "--version"], capture_output=True).returncode != 0,
    reason="git is not installed",
)


def git_state(repo: Path) -> dict[str, str]:
    """Everything of the user's git state that undo must leave alone."""
    return {
        "head": git(repo, "rev-parse", "HEAD"),
        "index": (repo / ".git" / "index").read_bytes().hex(),
        "branches": git(repo, "branch", "-a", "-v"),
        "stash": git(repo, "stash", "list"),
        "ignored": git(repo, "status", "--porcelain", "--ignored"),
    }


def tree_files(root: Path) -> dict[str, tuple[bytes, int]]:
    files = {}
    for path in root.rglob("*"):
        if ".git" in path.relative_to(root).parts or not path.is_file():
            continue
        files[path.relative_to(root).as_posix()] = (path.read_bytes(), path.stat().st_mode)
    return files


def scripted_changes() -> tuple[Turn, ...]:
    """Edit a tracked file, write a new one, and let bash delete one and create another."""
    return (
        call("edit", {"path": "app.py", "old_text": "1", "new_text": "2"}, "c1"),
        call("write", {"path": "new/module.py", "content": "x = 1\n"}, "c2"),
        call("bash", {"command": "rm script.sh && echo made > made_by_bash.txt"}, "c3"),
        Turn(text="done"),
    )


def test_undo_in_git_restores_tool_and_bash_changes(
    run_di_code: RunDiCode, llm_server: LLMServer, repo: Path
) -> None:
    before_files, before_git = tree_files(repo), git_state(repo)
    llm_server.script(*scripted_changes())
    done = run_di_code("run", "--yes", "change things")
    assert done.returncode == 0, done.stderr
    assert not (repo / "script.sh").exists() and (repo / "made_by_bash.txt").exists()

    unasked = run_di_code("undo")  # no terminal to ask: nothing is written without --yes
    assert unasked.returncode == 1 and "--yes" in unasked.stderr
    assert (repo / "made_by_bash.txt").exists()

    undone = run_di_code("undo", "--yes")
    assert undone.returncode == 0, undone.stderr
    assert tree_files(repo) == before_files  # contents and modes, the new files gone
    assert not (repo / "new").exists()
    assert git_state(repo) == before_git
    lines = undone.stdout.splitlines()
    assert "undo prompt 1 (change things): restore 2, delete 2, keep 0" in lines
    assert "restored app.py" in lines and "restored script.sh" in lines
    assert "deleted made_by_bash.txt" in lines and "deleted new/module.py" in lines

    again = run_di_code("undo", "--yes")
    assert again.returncode == 1 and "nothing to undo" in again.stderr


def test_undo_without_git_restores_write_and_edit(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path
) -> None:
    (workspace / "app.py").write_text("value = 1\n")
    (workspace / "script.sh").write_text("echo hi\n")
    (workspace / "script.sh").chmod(0o751)
    before = tree_files(workspace)
    llm_server.script(
        call("edit", {"path": "app.py", "old_text": "1", "new_text": "2"}, "c1"),
        call("write", {"path": "script.sh", "content": "echo bye\n"}, "c2"),
        call("write", {"path": "new/module.py", "content": "x = 1\n"}, "c3"),
        Turn(text="done"),
    )
    assert run_di_code("run", "--yes", "change things").returncode == 0
    assert (workspace / "app.py").read_text() == "value = 2\n"

    undone = run_di_code("undo", "--yes")
    assert undone.returncode == 0, undone.stderr
    assert tree_files(workspace) == before
    assert "deleted new/module.py" in undone.stdout.splitlines()


@pytest.mark.parametrize("in_git", [True, False], ids=["git", "files"])
def test_undo_refuses_to_overwrite_a_later_user_edit(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path, in_git: bool
) -> None:
    (workspace / "app.py").write_text("value = 1\n")
    if in_git:
        git(workspace, "init", "-q")
        git(workspace, "add", ".")
        git(workspace, "commit", "-qm", "first")
    llm_server.script(
        call("edit", {"path": "app.py", "old_text": "1", "new_text": "2"}, "c1"),
        Turn(text="done"),
    )
    assert run_di_code("run", "--yes", "bump").returncode == 0
    (workspace / "app.py").write_text("value = 3  # mine\n")

    refused = run_di_code("undo", "--yes")
    assert refused.returncode == 1
    assert "  keep app.py: changed by you since the tool did" in refused.stdout.splitlines()
    assert "--force" in refused.stderr
    assert (workspace / "app.py").read_text() == "value = 3  # mine\n"

    forced = run_di_code("undo", "--force", "--yes")
    assert "  restore app.py  (--force)" in forced.stdout.splitlines()
    assert forced.returncode == 0, forced.stderr
    assert (workspace / "app.py").read_text() == "value = 1\n"


def test_list_and_undo_to_an_older_prompt(
    run_di_code: RunDiCode, llm_server: LLMServer, repo: Path
) -> None:
    llm_server.script(
        call("write", {"path": "a.txt", "content": "a\n"}, "c1"),
        Turn(text="one"),
        call("write", {"path": "b.txt", "content": "b\n"}, "c2"),
        Turn(text="two"),
        Turn(text="a plain answer changes nothing"),
    )
    assert run_di_code("run", "--yes", "first prompt").returncode == 0
    for prompt in ("second prompt", "third prompt"):
        assert run_di_code("run", "--yes", "-c", prompt).returncode == 0
    listed = run_di_code("undo", "--list")
    assert listed.returncode == 0
    rows = listed.stdout.splitlines()
    assert [row[17:] for row in rows[:3]] == ["* first prompt", "* second prompt", "  third prompt"]
    assert rows[3] == "*: the prompt changed files"

    newest = run_di_code("undo", "--yes")  # the third prompt changed nothing: the second
    assert newest.returncode == 0, newest.stderr
    assert newest.stdout.splitlines()[-1] == "undone: prompt 2 (second prompt)"
    assert (repo / "a.txt").exists() and not (repo / "b.txt").exists()

    undone = run_di_code("undo", "--to", "1", "--yes")
    assert undone.returncode == 0, undone.stderr
    assert not (repo / "a.txt").exists() and not (repo / "b.txt").exists()
    assert "(files undone)" in run_di_code("undo", "--list").stdout


def test_a_prompt_that_changes_nothing_adds_no_git_objects(
    run_di_code: RunDiCode, llm_server: LLMServer, repo: Path
) -> None:
    llm_server.script(Turn(text="hello"), Turn(text="hello again"))
    assert run_di_code("run", "hi").returncode == 0
    objects = git(repo, "count-objects", "-v")
    assert run_di_code("run", "-c", "hi again").returncode == 0
    assert git(repo, "count-objects", "-v") == objects


def test_nothing_to_undo_without_a_session(run_di_code: RunDiCode) -> None:
    done = run_di_code("undo", server=False)
    assert done.returncode == 1
    assert done.stderr == "di-code: no session in this folder to undo\n"


def test_refs_of_a_deleted_session_are_pruned(
    run_di_code: RunDiCode, llm_server: LLMServer, repo: Path, di_code_home: Path
) -> None:
    llm_server.script(
        call("write", {"path": "a.txt", "content": "a\n"}, "c1"), Turn(text="one"), Turn(text="2")
    )
    assert run_di_code("run", "--yes", "first").returncode == 0
    refs = git(repo, "for-each-ref", "--format=%(refname)", "refs/di-code/").split()
    assert len(refs) == 2  # before and after the prompt
    for session_file in di_code_home.glob("sessions/*/*.jsonl"):
        session_file.unlink()
    assert run_di_code("run", "second").returncode == 0
    left = git(repo, "for-each-ref", "--format=%(refname)", "refs/di-code/").split()
    assert not set(refs) & set(left) and len(left) == 1


def test_a_flood_of_untracked_files_is_not_copied_into_the_repository(repo: Path) -> None:
    from di_code.session import git_snapshot

    for n in range(git_snapshot.MAX_UNTRACKED_FILES + 1):
        (repo / f"stray{n}.txt").write_text(f"{n}\n")
    objects = git(repo, "count-objects", "-v")
    snapshot = git_snapshot.GitSnapshots(repo).take()
    assert snapshot.skipped[-1].startswith("5,002 untracked files")  # and untracked.txt
    assert git(repo, "count-objects", "-v") == objects


def test_undo_asks_on_a_terminal(
    run_di_code: RunDiCode, llm_server: LLMServer, repo: Path, di_code_home: Path
) -> None:
    import pexpect

    from tests.cli.conftest import DI_CODE, cli_env

    llm_server.script(call("write", {"path": "a.txt", "content": "a\n"}, "c1"), Turn(text="ok"))
    assert run_di_code("run", "--yes", "make a").returncode == 0
    child = pexpect.spawn(
        DI_CODE, ["undo"], cwd=str(repo), env=cli_env(di_code_home, None), encoding="utf-8",
        timeout=30,
    )  # fmt: skip
    try:
        child.expect("restore 0, delete 1, keep 0")
        child.expect(r"Undo this\? \[y/N\]")
        assert (repo / "a.txt").exists()
        child.sendline("y")
        child.expect("undone: prompt 1")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0 and not (repo / "a.txt").exists()


@pytest.mark.parametrize("sandbox", ["workspace-write", "off"])
def test_a_filter_the_prompt_plants_never_runs(
    run_di_code: RunDiCode, llm_server: LLMServer, repo: Path, tmp_path: Path, sandbox: str
) -> None:
    """The model writes .gitattributes (write needs no approval in accept-edits) and bash
    (sandboxed or not) adds a filter to .git/config: di-code's own git, which runs outside any
    sandbox, never runs it, neither in the prompt's snapshots nor in the next prompt's nor in
    undo. (Where the sandbox keeps .git read-only, the config is simply not written.)"""
    marker = tmp_path / "it-ran"
    program = tmp_path / "filter.sh"
    program.write_text(f"#!/bin/sh\ntouch {marker}\ncat\n")
    program.chmod(0o755)
    config = f'[filter "x"]\\n\\tclean = {program}\\n\\tsmudge = {program}\\n'
    llm_server.script(
        call("write", {"path": ".gitattributes", "content": "* filter=x\n"}, "c1"),
        call("bash", {"command": f"printf '{config}' >> .git/config; echo x > app.py"}, "c2"),
        Turn(text="planted"),
        call("write", {"path": "later.txt", "content": "later\n"}, "c3"),
        Turn(text="more"),
    )
    args = ("--sandbox", sandbox) if sandbox != "off" else ("--sandbox", "off")
    assert run_di_code("run", "--yes", *args, "plant").returncode == 0
    assert run_di_code("run", "--yes", *args, "-c", "more").returncode == 0
    undone = run_di_code("undo", "--yes", "--to", "1")
    assert undone.returncode == 0, undone.stderr
    assert (repo / "app.py").read_text() == "value = 1\n" and not (repo / "later.txt").exists()
    assert not marker.exists()


def test_an_ignore_rule_changed_by_bash_makes_undo_delete_nothing_it_uncovered(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path
) -> None:
    """Issue 40: one bash call `printf '*.log\\n' > .gitignore`, no tool touching `.env`:
    undo planned "delete .env, delete build/app.bin", deleted them and said "undone"."""
    git(workspace, "init", "-q", "-b", "main")
    (workspace / ".gitignore").write_text(".env\nbuild/\n")
    git(workspace, "add", ".")
    git(workspace, "commit", "-qm", "first")
    (workspace / ".env").write_text("KEY=mine\n")
    (workspace / "build").mkdir()
    (workspace / "build" / "app.bin").write_bytes(b"\x7fELF")
    llm_server.script(
        call("bash", {"command": "printf '*.log\\n' > .gitignore"}, "c1"), Turn(text="done")
    )
    assert run_di_code("run", "--yes", "--sandbox", "off", "tidy").returncode == 0
    undone = run_di_code("undo", "--yes")
    assert undone.returncode == 0, undone.stderr
    assert "undo prompt 1 (tidy): restore 1, delete 0, keep 3" in undone.stdout.splitlines()
    assert (workspace / ".env").read_text() == "KEY=mine\n"
    assert (workspace / "build" / "app.bin").read_bytes() == b"\x7fELF"
    assert (workspace / ".gitignore").read_text() == ".env\nbuild/\n"
