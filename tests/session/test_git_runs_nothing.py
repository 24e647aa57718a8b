"""di-code's git runs no program that the repository (or the environment) names: each vector is
planted in a real repository, a prompt is checkpointed and undone, and the program never ran."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest

from di_code.session.git_run import work_tree_top
from di_code.session.review_diff import ReviewError, ReviewTarget, read_diff
from di_code.session.undo_plan import NothingToUndo
from tests.support.git import git
from tests.support.undo_cli import planted
from tests.support.undo_driver import Driver, new_repo


async def checkpoint_and_undo(driver: Driver, work: Path) -> None:
    """A prompt whose tool changes a tracked file and makes an untracked one, then undo."""
    before = (work / "a.txt").read_bytes()
    await driver.prompt(
        lambda: (work / "a.txt").write_bytes(b"changed\r\n"),
        lambda: (work / "new.txt").write_text("new\n"),
    )
    _, result = driver.undo()
    assert not result.failed
    assert (work / "a.txt").read_bytes() == before and not (work / "new.txt").exists()


def write_config(repo: Path, text: str) -> None:
    with (repo / ".git" / "config").open("a") as config:
        config.write(text)


@pytest.mark.parametrize(
    ("config", "attributes"),
    [
        ('[filter "x"]\n\tclean = {p}\n\tsmudge = {p}\n\trequired = true\n', "* filter=x\n"),
        ('[filter "x"]\n\tprocess = {p}\n', "* filter=x\n"),
        ("[core]\n\tfsmonitor = {p}\n", ""),
        ('[diff "x"]\n\ttextconv = {p}\n[diff]\n\texternal = {p}\n', "* diff=x\n"),
        ("[core]\n\tpager = {p}\n[pager]\n\tdiff = {p}\n", ""),
        ("[credential]\n\thelper = !{p}\n[core]\n\tsshCommand = {p}\n", ""),
    ],
    ids=["clean-smudge", "process", "fsmonitor", "textconv-external", "pager", "credentials"],
)
async def test_the_repository_config_runs_nothing(
    tmp_path: Path, config: str, attributes: str
) -> None:
    program, marker = planted(tmp_path)
    repo = new_repo(tmp_path / "repo")
    write_config(repo, config.format(p=program))
    (repo / ".gitattributes").write_text(attributes)
    await checkpoint_and_undo(Driver(tmp_path / "home", repo), repo)
    (repo / "a.txt").write_text("reviewed\n")  # a diff too: undo alone never runs a diff driver
    with contextlib.suppress(ReviewError):  # a required filter, blanked, fails the diff instead
        read_diff(repo, ReviewTarget())
    assert not marker.exists()


async def test_hooks_run_nothing(tmp_path: Path) -> None:
    """update-ref and update-index would run these two hooks."""
    program, marker = planted(tmp_path)
    repo = new_repo(tmp_path / "repo")
    for hook in ("reference-transaction", "post-index-change", "pre-commit"):
        target = repo / ".git" / "hooks" / hook
        target.write_text(Path(program).read_text())
        target.chmod(0o755)
    await checkpoint_and_undo(Driver(tmp_path / "home", repo), repo)
    assert not marker.exists()


async def test_a_config_a_tool_writes_during_the_prompt_runs_nothing(tmp_path: Path) -> None:
    """The model (write/edit in accept-edits) or a sandboxed bash writes .git/config and
    .gitattributes: di-code's own git, outside any sandbox, must not obey them."""
    program, marker = planted(tmp_path)
    repo = new_repo(tmp_path / "repo")
    driver = Driver(tmp_path / "home", repo)

    def plant() -> None:
        write_config(repo, f'[filter "x"]\n\tclean = {program}\n\tsmudge = {program}\n')
        write_config(repo, f"[core]\n\tfsmonitor = {program}\n")
        (repo / ".gitattributes").write_text("* filter=x\n")
        (repo / "a.txt").write_text("by the tool\n")

    await driver.prompt(plant)
    await driver.prompt(lambda: (repo / "b.txt").write_text("b\n"))
    _, result = driver.undo(to=1)
    assert not result.failed and (repo / "a.txt").read_text() == "a\n"
    assert not (repo / ".gitattributes").exists() and not (repo / "b.txt").exists()
    assert not marker.exists()


async def test_the_environment_does_not_redirect_or_reconfigure_git(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    program, marker = planted(tmp_path)
    repo = new_repo(tmp_path / "repo")
    other = new_repo(tmp_path / "other", {"o.txt": "o\n"})
    (repo / ".gitattributes").write_text("* filter=x diff=x\n")
    for key, value in {
        "GIT_DIR": str(other / ".git"),
        "GIT_WORK_TREE": str(other),
        "GIT_INDEX_FILE": str(other / ".git" / "index"),
        "GIT_CONFIG_COUNT": "2",
        "GIT_CONFIG_KEY_0": "filter.x.clean",
        "GIT_CONFIG_VALUE_0": program,
        "GIT_CONFIG_KEY_1": "filter.x.smudge",
        "GIT_CONFIG_VALUE_1": program,
        "GIT_EXTERNAL_DIFF": program,
        "GIT_PAGER": program,
        "GIT_SSH_COMMAND": program,
    }.items():
        monkeypatch.setenv(key, value)
    await checkpoint_and_undo(Driver(tmp_path / "home", repo), repo)
    assert not marker.exists()
    for key in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_CONFIG_COUNT"):
        monkeypatch.delenv(key)
    assert "o.txt" in git(other, "ls-files") and not git(other, "status", "--porcelain")


async def test_an_embedded_bare_repository_in_a_clone_is_never_the_repository(
    tmp_path: Path,
) -> None:
    """A project commits a folder laid out as a git directory whose config names a filter;
    the user clones it and starts di-code in that folder."""
    program, marker = planted(tmp_path)
    origin = new_repo(tmp_path / "origin")
    evil = origin / "evil"
    for folder in ("objects", "refs"):
        (evil / folder).mkdir(parents=True)
        (evil / folder / ".keep").write_text("")
    (evil / "HEAD").write_text("ref: refs/heads/main\n")
    (evil / "config").write_text(
        "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n"
        f'\tfsmonitor = {program}\n[filter "x"]\n\tclean = {program}\n\tsmudge = {program}\n'
    )
    (evil / ".gitattributes").write_text("* filter=x\n")
    (evil / "notes.txt").write_text("n\n")
    git(origin, "add", "-A")
    git(origin, "commit", "-qm", "embed")
    git(tmp_path, "clone", "-q", str(origin), "clone")
    folder = tmp_path / "clone" / "evil"
    assert work_tree_top(folder) is None  # git refuses it: outside git, write is undone
    driver = Driver(tmp_path / "home", folder)
    await driver.start()
    await driver.tool(lambda: (folder / "notes.txt").write_text("changed\n"), "write", "notes.txt")
    await driver.end()
    _, result = driver.undo()
    assert not result.failed and (folder / "notes.txt").read_text() == "n\n"
    assert not marker.exists()


async def test_eol_crlf_files_come_back_byte_exact(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo", {".gitattributes": "*.txt text eol=crlf\n"})
    (repo / "a.txt").write_bytes(b"one\r\ntwo\nthree\r\n")  # mixed, as editors leave them
    (repo / "b.bin").write_bytes(bytes(range(256)) * 10)
    os.chmod(repo / "b.bin", 0o755)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "crlf")
    (repo / "a.txt").write_bytes(b"one\r\ntwo\nthree\r\nuncommitted\n")
    before = {p: (repo / p).read_bytes() for p in ("a.txt", "b.bin")}
    driver = Driver(tmp_path / "home", repo)
    await driver.prompt(
        lambda: (repo / "a.txt").write_bytes(b"x\n"), lambda: (repo / "b.bin").write_bytes(b"")
    )
    _, result = driver.undo()
    assert not result.failed
    assert {p: (repo / p).read_bytes() for p in before} == before
    assert os.stat(repo / "b.bin").st_mode & 0o777 == 0o755


async def test_a_worktree_setting_never_sends_undo_to_another_folder(tmp_path: Path) -> None:
    """A tool sets core.worktree to a folder outside: undo must not write there."""
    repo = new_repo(tmp_path / "repo")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    driver = Driver(tmp_path / "home", repo)

    def bash() -> None:
        (repo / "a.txt").write_text("changed\n")
        write_config(repo, f"[core]\n\tworktree = {elsewhere}\n")

    await driver.prompt(bash)
    assert work_tree_top(repo) is None
    with pytest.raises(NothingToUndo):
        driver.undo()
    assert list(elsewhere.iterdir()) == []
