"""Undo deletes only what it can prove a tool of the prompt made (issue 40): a path that a
snapshot did not show because git ignored it is not a path a tool created when a changed
ignore rule brings it into view. And what undo cannot cover (a nested repository that is not
a submodule, a submodule) is said when the prompt starts and in the plan."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.support.git import git
from tests.support.undo_driver import Driver, new_repo


async def test_an_ignore_rule_changed_by_bash_deletes_nothing_it_uncovered(
    tmp_path: Path,
) -> None:
    repo = new_repo(tmp_path / "repo", {".gitignore": ".env\nbuild/\n", "a.txt": "a\n"})
    (repo / ".env").write_text("SECRET=1\n")
    (repo / "build").mkdir()
    (repo / "build" / "app.bin").write_bytes(b"\x7fELF")
    driver = Driver(tmp_path / "home", repo)
    await driver.prompt(lambda: (repo / ".gitignore").write_text("*.log\n"))
    undo_plan, result = driver.undo()
    assert undo_plan.deletes == [], undo_plan.lines()
    assert result.done == ["restored .gitignore"]
    assert (repo / ".env").read_text() == "SECRET=1\n"
    assert (repo / "build" / "app.bin").read_bytes() == b"\x7fELF"
    kept = dict(undo_plan.keep)
    assert ".env" in kept and "build/app.bin" in kept, undo_plan.lines()


async def test_a_file_a_tool_made_in_an_ignored_folder_it_uncovered_is_kept_too(
    tmp_path: Path,
) -> None:
    """The same call makes a new file where the old rule ignored: its absence before the
    call is not known either (it may have been the user's), so it is kept, not deleted."""
    repo = new_repo(tmp_path / "repo", {".gitignore": "build/\n"})
    (repo / "build").mkdir()

    def change() -> None:
        (repo / ".gitignore").write_text("")
        (repo / "build" / "new.txt").write_text("made\n")
        (repo / "made.txt").write_text("made\n")

    driver = Driver(tmp_path / "home", repo)
    await driver.prompt(change)
    undo_plan, _ = driver.undo()
    assert undo_plan.deletes == ["made.txt"]
    assert (repo / "build" / "new.txt").exists() and not (repo / "made.txt").exists()


async def test_a_nested_repository_is_said_at_the_start_and_in_the_plan(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo")
    nested = new_repo(repo / "vendor" / "lib", {"lib.txt": "lib\n"})
    driver = Driver(tmp_path / "home", repo)

    def change() -> None:
        (repo / "a.txt").write_text("changed\n")
        (nested / "lib.txt").write_text("changed too\n")

    await driver.prompt(change)
    assert any("vendor/lib" in w and "nested repository" in w for w in driver.warnings), (
        driver.warnings
    )
    undo_plan, result = driver.undo()
    assert ("vendor/lib", "a nested repository, not covered by undo") in undo_plan.keep
    assert undo_plan.uncovered == ["vendor/lib"]
    assert undo_plan.undid() == "Undid prompt 1, except what undo cannot cover: vendor/lib."
    assert result.done == ["restored a.txt"]
    assert (nested / "lib.txt").read_text() == "changed too\n"


async def test_a_submodule_is_said_at_the_start_and_in_the_plan(tmp_path: Path) -> None:
    library = new_repo(tmp_path / "library", {"lib.txt": "lib\n"})
    repo = new_repo(tmp_path / "repo")
    allow = ["-c", "protocol.file.allow=always"]
    subprocess.run(["git", *allow, "submodule", "add", "-q", str(library), "lib"], cwd=repo,
                   check=True, capture_output=True, timeout=60)  # fmt: skip
    git(repo, "commit", "-qm", "lib")
    driver = Driver(tmp_path / "home", repo)
    await driver.prompt(lambda: (repo / "a.txt").write_text("changed\n"))
    assert any("lib (submodule" in w for w in driver.warnings), driver.warnings
    undo_plan, _ = driver.undo()
    assert any(path == "lib" for path, _ in undo_plan.keep), undo_plan.lines()


async def test_a_file_an_ignore_rule_hid_is_never_overwritten(tmp_path: Path) -> None:
    """The mirror case: a tool's rule hides an untracked file; the user edits it after the
    prompt (git no longer shows it). It is not gone: undo must not write the old bytes over
    the user's."""
    repo = new_repo(tmp_path / "repo", {"a.txt": "a\n"})
    (repo / "notes.md").write_text("v1\n")
    (repo / "docs").mkdir()
    (repo / "docs" / "b.md").write_text("b1\n")
    driver = Driver(tmp_path / "home", repo)
    await driver.prompt(lambda: (repo / ".gitignore").write_text("*.md\ndocs/\n"))
    (repo / "notes.md").write_text("mine\n")
    (repo / "docs" / "b.md").write_text("mine too\n")
    undo_plan, result = driver.undo()
    assert result.done == ["deleted .gitignore"], undo_plan.lines()
    assert (repo / "notes.md").read_text() == "mine\n"
    assert (repo / "docs" / "b.md").read_text() == "mine too\n"


async def test_a_file_the_user_hid_after_the_prompt_is_never_overwritten(tmp_path: Path) -> None:
    """A tool deletes notes.md; after the prompt the user writes a new one and a rule that
    ignores it. The snapshot of now does not show it, which is not its absence: undo keeps
    it, named, and never writes the old bytes over the user's."""
    repo = new_repo(tmp_path / "repo", {"a.txt": "a\n"})
    (repo / "notes.md").write_text("v1\n")
    driver = Driver(tmp_path / "home", repo)
    await driver.prompt(lambda: (repo / "notes.md").unlink())
    (repo / "notes.md").write_text("mine\n")
    (repo / ".gitignore").write_text("*.md\n")
    undo_plan, result = driver.undo()
    assert undo_plan.keep == [("notes.md", "ignored by git now, not captured")]
    assert not undo_plan.actions and not result.done
    assert (repo / "notes.md").read_text() == "mine\n"
