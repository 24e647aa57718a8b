"""Which paths are protected, found without a sandbox: the `.git` of a repository, of a linked
worktree (its git directory and the common one it names) and DI_CODE_HOME, each with why; a
`.git` file that is hostile (not UTF-8, a line without end) is read within bounds."""

from __future__ import annotations

import subprocess
from pathlib import Path

from di_code.tools.process.protected import GIT_WHY, HOME_WHY, git_dirs, protected_entries


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def test_a_linked_worktree_protects_its_git_file_its_git_dir_and_the_common_one(
    tmp_path: Path,
) -> None:
    main = tmp_path / "main"
    main.mkdir()
    git("init", "-q", "-b", "main", cwd=main)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x",
        cwd=main)  # fmt: skip
    git("worktree", "add", "-q", str(tmp_path / "linked"), cwd=main)
    linked = tmp_path / "linked"
    assert git_dirs(linked / "sub") == [
        linked / ".git",
        (main / ".git" / "worktrees" / "linked").resolve(),
        (main / ".git").resolve(),
    ]
    assert git_dirs(main) == [(main / ".git").resolve()]
    assert git_dirs(tmp_path) == []


def test_a_git_file_naming_a_folder_without_commondir_names_only_that_folder(
    tmp_path: Path,
) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / ".git").write_text("gitdir: elsewhere\n")
    assert git_dirs(tmp_path) == [tmp_path / ".git", (tmp_path / "elsewhere").resolve()]


def test_a_hostile_git_file_is_read_within_bounds(tmp_path: Path) -> None:
    (tmp_path / ".git").write_bytes(b"gitdir: \xff\xfe" + b"a" * 10_000)  # no newline
    entry, pointed = git_dirs(tmp_path)
    assert entry == tmp_path / ".git"
    assert pointed.name == "\ufffd\ufffd" + "a" * (4096 - 10)  # the first 4096 bytes only
    (tmp_path / ".git").write_text("not a pointer\n")
    assert git_dirs(tmp_path) == [tmp_path / ".git"]


def test_each_protected_entry_says_why(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / ".git").write_text("gitdir: elsewhere\n")
    home = tmp_path / "home"
    found = dict(protected_entries([tmp_path], home))
    assert found[(tmp_path / "elsewhere").resolve()] == GIT_WHY
    assert found[home.resolve()] == HOME_WHY
    assert all(isinstance(why, str) and why for why in found.values())
    assert home.resolve() not in dict(protected_entries([tmp_path], None))
