"""Undo never loses the user's data: each case a real repository (or folder), a checkpointed
prompt, the user's own changes, and an undo that keeps them."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from di_code.session import index_file
from di_code.session.git_snapshot import MAX_UNTRACKED_FILES, GitSnapshots
from di_code.session.snapshot_places import backup_folder
from di_code.session.stat_cache import StatCache
from di_code.session.undo_plan import USER_CHANGED, NothingToUndo, plan
from tests.support.disks import fill, tiny_disk
from tests.support.git import git, past_this_second
from tests.support.undo_driver import Driver, new_repo


async def test_a_flood_of_untracked_files_is_never_deleted(tmp_path: Path) -> None:
    """5,001 untracked files, a bash call removes two: no snapshot captured them, so undo
    deletes none and says the untracked files were not covered."""
    repo = new_repo(tmp_path / "repo")
    for n in range(MAX_UNTRACKED_FILES + 1):
        (repo / f"stray{n}.txt").write_text(f"{n}\n")
    driver = Driver(tmp_path / "home", repo)

    def bash() -> None:
        (repo / "stray1.txt").unlink()
        (repo / "stray2.txt").unlink()
        (repo / "a.txt").write_text("edited\n")

    await driver.prompt(bash)
    assert any("5,001 untracked files" in warning for warning in driver.warnings)
    undo_plan, result = driver.undo()
    assert not result.failed and result.done == ["restored a.txt"]
    assert len(list(repo.glob("stray*.txt"))) == MAX_UNTRACKED_FILES - 1
    assert undo_plan.keep == [("", "5,001 untracked files (over 5,000), none captured")]
    assert undo_plan.lines()[-1] == (
        "  keep untracked files: 5,001 untracked files (over 5,000), none captured"
    )


async def test_what_the_user_changes_between_tool_calls_is_kept(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo", {"a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n"})
    driver = Driver(tmp_path / "home", repo)
    await driver.start()
    await driver.tool(lambda: (repo / "a.txt").write_text("tool\n"))
    (repo / "a.txt").write_text("tool, then mine\n")  # the user, while the model thinks
    (repo / "b.txt").write_text("mine\n")
    (repo / "mine.txt").write_text("my new file\n")
    await driver.tool(lambda: (repo / "c.txt").write_text("tool\n"))
    await driver.end()
    (repo / "later.txt").write_text("made after the prompt\n")

    undo_plan, result = driver.undo()
    assert undo_plan.keep == [("a.txt", USER_CHANGED)]
    assert result.done == ["restored c.txt"] and not result.failed
    assert (repo / "a.txt").read_text() == "tool, then mine\n"
    assert (repo / "b.txt").read_text() == "mine\n"
    assert (repo / "mine.txt").exists() and (repo / "later.txt").exists()
    assert (repo / "c.txt").read_text() == "c\n"


async def test_force_overwrites_the_users_change_and_says_so(tmp_path: Path) -> None:
    """Only the file the user changed is forced (and marked so); one only the tool changed is
    restored as it would be without force."""
    repo = new_repo(tmp_path / "repo", {"a.txt": "a\n", "b.txt": "b\n"})
    driver = Driver(tmp_path / "home", repo)
    await driver.prompt(
        lambda: (repo / "b.txt").write_text("tool\n"), lambda: (repo / "a.txt").write_text("tool\n")
    )
    (repo / "a.txt").write_text("mine\n")
    unforced = plan(driver.session)
    assert unforced.keep == [("a.txt", USER_CHANGED)] and unforced.restores == ["b.txt"]
    undo_plan, result = driver.undo(force=True)
    assert sorted(result.done) == ["restored a.txt", "restored b.txt"] and not result.failed
    assert undo_plan.forced == ["a.txt"]
    assert undo_plan.lines()[1:] == ["  restore a.txt  (--force)", "  restore b.txt"]
    assert (repo / "a.txt").read_text() == "a\n" and (repo / "b.txt").read_text() == "b\n"


async def test_a_large_file_the_prompt_shrank_is_kept_and_named(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo")
    (repo / "big.bin").write_bytes(b"\1" * (12 * 1024 * 1024))
    driver = Driver(tmp_path / "home", repo)
    await driver.start()
    assert driver.checkpointer._snapshot is not None
    await driver.checkpointer._snapshot  # the answer streams; no tool has run yet
    assert any("big.bin (larger than 10 MB" in warning for warning in driver.warnings)
    await driver.tool(lambda: (repo / "big.bin").write_bytes(b"small"))
    await driver.end()
    undo_plan, result = driver.undo()
    assert not undo_plan.actions and not result.done
    assert undo_plan.keep == [("big.bin", "larger than 10 MB, not captured")]
    assert (repo / "big.bin").read_bytes() == b"small"


async def test_a_large_file_a_tool_changed_in_place_is_named(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo")
    (repo / "big.bin").write_bytes(b"\1" * 2048)
    driver = Driver(tmp_path / "home", repo, max_file_bytes=1024)
    await driver.prompt(
        lambda: (repo / "big.bin").write_bytes(b"\2" * 4096),
        lambda: (repo / "a.txt").write_text("x\n"),
    )
    undo_plan, _ = driver.undo()
    reason = "larger than 0.000976562 MB, not captured, changed by a tool"
    assert undo_plan.keep == [("big.bin", reason)]


async def test_an_ignored_env_file_changed_by_bash_is_named(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo", {".gitignore": ".env\n", "a.txt": "a\n"})
    (repo / ".env").write_text("KEY=1\n")
    driver = Driver(tmp_path / "home", repo)
    await driver.prompt(lambda: (repo / ".env").write_text("KEY=2\n"))
    undo_plan, result = driver.undo()
    assert undo_plan.keep == [(".env", "ignored by git, changed by a tool, not captured")]
    assert (repo / ".env").read_text() == "KEY=2\n" and not result.done


async def test_a_change_inside_a_submodule_is_named_not_silent(tmp_path: Path) -> None:
    library = new_repo(tmp_path / "library", {"lib.txt": "lib\n"})
    repo = new_repo(tmp_path / "repo")
    allow = ["-c", "protocol.file.allow=always"]
    for name in ("sub", "sub2"):
        git(repo, *allow, "submodule", "add", "-q", str(library), name)
    git(repo, "commit", "-qm", "subs")
    driver = Driver(tmp_path / "home", repo)
    await driver.start()
    await driver.tool(lambda: (repo / "sub" / "lib.txt").write_text("changed\n"))
    await driver.tool(lambda: (repo / "sub2" / "lib.txt").write_text("changed\n"))
    await driver.tool(lambda: (repo / "a.txt").write_text("x\n"))
    await driver.end()
    assert any("sub (submodule, not captured)" in warning for warning in driver.warnings)
    undo_plan, _ = driver.undo()
    assert ("sub", "submodule, not captured") in undo_plan.keep
    assert undo_plan.undid() == "Undid prompt 1, except what undo cannot cover: sub, sub2."
    assert (repo / "sub" / "lib.txt").read_text() == "changed\n"


async def test_symlinks_modes_and_folders_come_back_as_they_were(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo", {"a.txt": "a\n", "d/f.txt": "f\n"})
    os.symlink("a.txt", repo / "link")
    os.symlink(b"\xff-not-utf-8", bytes(repo / "odd-link"))  # Linux allows any bytes
    (repo / "run.sh").write_text("#!/bin/sh\n")
    (repo / "was_a_file").write_text("file\n")
    driver = Driver(tmp_path / "home", repo)

    def bash() -> None:
        (repo / "odd-link").unlink()
        (repo / "was_a_file").unlink()
        (repo / "was_a_file" / "deep").mkdir(parents=True)
        (repo / "was_a_file" / "deep" / "x").write_text("x\n")
        (repo / "link").unlink()
        (repo / "link").write_text("now a file\n")
        (repo / "run.sh").chmod(0o755)
        (repo / "d" / "f.txt").unlink()
        (repo / "d").rmdir()
        (repo / "d").write_text("a file where a folder was\n")

    await driver.prompt(bash)
    _, result = driver.undo()
    assert not result.failed, result.failed
    assert os.readlink(repo / "link") == "a.txt"
    assert os.readlink(bytes(repo / "odd-link")) == b"\xff-not-utf-8"
    assert os.stat(repo / "run.sh").st_mode & 0o111 == 0
    assert (repo / "d" / "f.txt").read_text() == "f\n"
    assert (repo / "was_a_file").read_text() == "file\n"


async def test_an_executable_a_tool_deleted_comes_back_executable(tmp_path: Path) -> None:
    """Git keeps only the executable bit: a deleted script comes back 0755, a text file 0644,
    also where a symlink now stands in its place (its mode is not the file's)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    for script in ("run.sh", "linked.sh"):
        (repo / script).write_text("#!/bin/sh\n")
        (repo / script).chmod(0o755)
    new_repo(repo, {"notes.txt": "n\n", "linked.txt": "l\n"})

    def bash() -> None:
        for name in ("run.sh", "linked.sh", "notes.txt", "linked.txt"):
            (repo / name).unlink()
        (repo / "linked.txt").symlink_to("notes.txt")
        (repo / "linked.sh").symlink_to("run.sh")

    driver = Driver(tmp_path / "home", repo)
    await driver.prompt(bash)
    _, result = driver.undo()
    assert sorted(result.done) == [
        "restored linked.sh", "restored linked.txt", "restored notes.txt", "restored run.sh"
    ]  # fmt: skip
    assert (repo / "run.sh").read_text() == "#!/bin/sh\n"
    assert (repo / "run.sh").stat().st_mode & 0o777 == 0o755
    assert (repo / "linked.sh").lstat().st_mode == 0o100755  # a regular file, 0755
    for name in ("notes.txt", "linked.txt"):
        assert (repo / name).lstat().st_mode == 0o100644  # a regular file, 0644


async def test_a_folder_swapped_for_a_symlink_is_never_written_through(tmp_path: Path) -> None:
    """Outside git: the model writes cfg/authorized_keys, then swaps cfg for a link to a
    folder outside the workspace; undo must not write there. That restore failing does
    not stop the next one (zz.txt)."""
    work, outside = tmp_path / "work", tmp_path / "outside"
    (work / "cfg").mkdir(parents=True)
    outside.mkdir()
    (work / "cfg" / "authorized_keys").write_text("mine\n")
    (work / "zz.txt").write_text("zz\n")
    driver = Driver(tmp_path / "home", work)
    await driver.start()

    def write() -> None:
        (work / "cfg" / "authorized_keys").write_text("the model's\n")

    await driver.tool(write, "write", "cfg/authorized_keys")
    await driver.tool(lambda: (work / "zz.txt").write_text("the model's\n"), "write", "zz.txt")
    await driver.tool(lambda: (work / "cfg").rename(work / "old"))
    await driver.tool(lambda: os.symlink(outside, work / "cfg"))
    await driver.end()
    _, result = driver.undo(force=True)
    assert len(result.failed) == 1 and "cfg/authorized_keys" in result.failed[0]
    assert result.done == ["restored zz.txt"] and (work / "zz.txt").read_text() == "zz\n"
    assert list(outside.iterdir()) == []
    assert "undo" not in [c.phase for c in driver.session.entries if hasattr(c, "phase")]


async def test_backups_keep_the_mode_in_private_folders(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "secret").write_text("token\n")
    (work / "secret").chmod(0o600)
    driver = Driver(tmp_path / "home", work)
    await driver.start()
    await driver.tool(lambda: (work / "secret").write_text("x\n"), "write", "secret")
    await driver.end()
    folder = next((tmp_path / "home").rglob("manifest.json")).parent
    assert folder.stat().st_mode & 0o777 == 0o700
    assert folder.parent.stat().st_mode & 0o777 == 0o700
    copies = [p for p in folder.iterdir() if p.name != "manifest.json"]
    assert [p.stat().st_mode & 0o777 for p in copies] == [0o600]
    _, result = driver.undo()
    assert result.done == ["restored secret"]
    assert (work / "secret").read_text() == "token\n"
    assert (work / "secret").stat().st_mode & 0o777 == 0o600


async def test_a_backup_on_a_full_disk_says_so_and_undo_never_claims_it(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("mine\n" * 40_000)
    with tiny_disk(tmp_path / "home", "512k") as home:
        driver = Driver(home, work)
        await driver.start()
        fill(home, leave=32 * 1024)
        await driver.tool(lambda: (work / "notes.txt").write_text("x\n"), "write", "notes.txt")
        await driver.end()
        assert any(w.startswith("no backup of notes.txt") for w in driver.warnings)
        undo_plan, result = driver.undo()
        assert undo_plan.keep == [("notes.txt", "no backup: No space left on device")]
        assert not result.done and (work / "notes.txt").read_text() == "x\n"
        # the backups' own record lost too: the session's record of the failure still says it
        shutil.rmtree(backup_folder(driver.session, "1"))
        assert plan(driver.session).keep == [("notes.txt", "no backup: No space left on device")]


async def test_a_restore_on_a_full_disk_fails_in_one_line_and_is_not_undone(
    tmp_path: Path,
) -> None:
    with tiny_disk(tmp_path / "disk", "1m") as disk:
        repo = new_repo(disk / "repo", {"a.txt": "a\n" * 20_000})
        driver = Driver(tmp_path / "home", repo)
        await driver.prompt(lambda: (repo / "a.txt").write_text("short\n"))
        fill(disk)
        _, result = driver.undo()
        assert result.failed == ["could not restore a.txt: No space left on device"]
        assert result.done == []
        assert (repo / "a.txt").read_text() == "short\n"
        (disk / "filler").unlink()
        _, again = driver.undo()  # not marked undone: it can be tried again
        assert again.done == ["restored a.txt"]


async def test_a_second_home_never_breaks_the_first_ones_undo(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo")
    first = Driver(tmp_path / "home1", repo)
    await first.prompt(lambda: (repo / "a.txt").write_text("one\n"))
    second = Driver(tmp_path / "home2", repo)
    await second.prompt(lambda: (repo / "b.txt").write_text("two\n"))
    git(repo, "gc", "-q", "--prune=now")
    _, result = first.undo(to=1)
    assert result.done == ["restored a.txt"] and (repo / "a.txt").read_text() == "a\n"


async def test_outside_git_an_edit_between_two_tool_calls_is_the_users(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("a\n")
    (work / "b.txt").write_text("b\n")
    driver = Driver(tmp_path / "home", work)
    await driver.start()
    await driver.tool(lambda: (work / "a.txt").write_text("tool\n"), "write", "a.txt")
    await driver.tool(lambda: (work / "b.txt").write_text("tool\n"), "write", "b.txt")
    (work / "a.txt").write_text("tool, then mine\n")  # while the model thinks
    await driver.tool(lambda: (work / "a.txt").write_text("tool again\n"), "write", "a.txt")
    await driver.end()
    undo_plan, result = driver.undo()
    assert undo_plan.keep == [("a.txt", USER_CHANGED)]
    assert result.done == ["restored b.txt"]
    assert (work / "a.txt").read_text() == "tool again\n" and (work / "b.txt").read_text() == "b\n"


async def test_outside_git_two_prompts_undone_go_back_to_the_first_ones_start(
    tmp_path: Path,
) -> None:
    """Nobody but the tools touched the files between the prompts, so nothing is the user's:
    each file goes back to what it was before prompt 1 (a file deleted by one prompt and made
    again by the next included), and a file a tool made and removed again is left alone."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("a\n")
    (work / "c.txt").write_text("c\n")
    driver = Driver(tmp_path / "home", work)
    await driver.start()
    await driver.tool(lambda: (work / "a.txt").write_text("one\n"), "write", "a.txt")
    await driver.tool(lambda: (work / "c.txt").unlink(), "write", "c.txt")
    await driver.tool(lambda: (work / "tmp.txt").write_text("scratch\n"), "write", "tmp.txt")
    await driver.tool(lambda: (work / "tmp.txt").unlink(), "write", "tmp.txt")
    await driver.end()
    await driver.start()
    await driver.tool(lambda: (work / "a.txt").write_text("two\n"), "write", "a.txt")
    await driver.tool(lambda: (work / "c.txt").write_text("again\n"), "write", "c.txt")
    await driver.end()
    undo_plan, result = driver.undo(to=1)
    assert undo_plan.yours == [] and undo_plan.keep == []
    assert undo_plan.lines()[1:] == ["  restore a.txt", "  restore c.txt"]
    assert sorted(result.done) == ["restored a.txt", "restored c.txt"] and not result.failed
    assert (work / "a.txt").read_text() == "a\n" and (work / "c.txt").read_text() == "c\n"
    assert not (work / "tmp.txt").exists()


async def test_outside_git_a_file_the_user_made_between_prompts_too_large_to_keep_is_kept(
    tmp_path: Path,
) -> None:
    """Prompt 1 deletes notes.txt, the user writes a new one too large to back up, prompt 2
    edits it: undoing both must not bring back prompt 1's small file over the user's."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("old\n")
    driver = Driver(tmp_path / "home", work, max_file_bytes=1024)
    await driver.start()
    await driver.tool(lambda: (work / "notes.txt").unlink(), "write", "notes.txt")
    await driver.end()
    (work / "notes.txt").write_text("mine\n" * 1000)  # the user's, over the limit
    await driver.start()
    await driver.tool(lambda: (work / "notes.txt").write_text("tool\n"), "write", "notes.txt")
    await driver.end()
    undo_plan, result = driver.undo(to=1)
    assert undo_plan.keep == [("notes.txt", "too large, not kept")]
    assert not undo_plan.actions and not result.done
    assert (work / "notes.txt").read_text() == "tool\n"


async def test_outside_git_the_plan_names_each_path_and_force_only_the_users(
    tmp_path: Path,
) -> None:
    """The plan's lines say what undo will do to each path: restore (the user's own state
    noted as such), delete, a path outside the workspace by its full name; `force` goes back
    past the user's change and is noted only where there was one."""
    from di_code.session.undo_plan import apply, plan

    work, outside = tmp_path / "work", tmp_path / "outside.txt"
    work.mkdir()
    for path in (work / "a.txt", work / "b.txt", work / "c.txt", outside):
        path.write_text("before\n")
    driver = Driver(tmp_path / "home", work)
    await driver.start()
    for name in ("a.txt", "b.txt", "c.txt", "new.txt", str(outside)):
        await driver.tool(lambda n=name: (work / n).write_text("one\n"), "write", name)
    await driver.end()
    (work / "a.txt").write_text("mine\n")
    (work / "c.txt").unlink()  # the user's too
    await driver.start()
    for name in ("a.txt", "c.txt"):
        await driver.tool(lambda n=name: (work / n).write_text("two\n"), "write", name)
    await driver.end()

    undo_plan = plan(driver.session, to=1)
    assert undo_plan.lines()[0] == "undo prompt 1 (do it): restore 3, delete 2, keep 0"
    assert sorted(undo_plan.lines()[1:]) == [
        "  delete c.txt  (as you left it)",
        "  delete new.txt",
        f"  restore {outside}",
        "  restore a.txt  (as you left it)",
        "  restore b.txt",
    ]
    assert undo_plan.forced == []
    forced = plan(driver.session, to=1, force=True)
    assert sorted(forced.forced) == ["a.txt", "c.txt"] and forced.yours == []
    assert sorted(forced.lines()[1:]) == [
        "  delete new.txt",
        f"  restore {outside}",
        "  restore a.txt  (--force)",
        "  restore b.txt",
        "  restore c.txt  (--force)",
    ]
    result = apply(driver.session, forced)
    assert not result.failed
    assert (work / "a.txt").read_text() == "before\n" and outside.read_text() == "before\n"
    assert (work / "c.txt").read_text() == "before\n"
    assert not (work / "new.txt").exists()


async def test_a_cached_blob_that_gc_pruned_is_hashed_again(tmp_path: Path) -> None:
    """The private index outlives the run; a blob it names that is gone is not trusted."""
    repo = new_repo(tmp_path / "repo")
    (repo / "old.txt").write_text("old\n")
    os.utime(repo / "old.txt", (1, 1))  # not racy: its stat data is kept
    past_this_second()
    await Driver(tmp_path / "home", repo).prompt(lambda: (repo / "a.txt").write_text("x\n"))
    index = next((tmp_path / "home" / "snapshot-cache").glob("*.index"))
    entries = index_file.decode(index.read_bytes(), "sha1")
    assert entries[b"old.txt"][40:60].hex() == git(repo, "hash-object", "old.txt").strip()
    assert index.stat().st_mode & 0o777 == 0o600
    fixed = entries[b"old.txt"]
    entries[b"old.txt"] = fixed[:40] + b"\1" * 20 + fixed[60:]  # as if gc pruned that blob
    index.write_bytes(index_file.encode(sorted(entries.items()), "sha1"))
    driver = Driver(tmp_path / "home", repo)
    await driver.prompt(lambda: (repo / "old.txt").write_text("new\n"))
    _, result = driver.undo()
    assert result.done == ["restored old.txt"] and (repo / "old.txt").read_text() == "old\n"


async def test_a_prompt_that_only_read_in_a_repository_with_gaps_changed_nothing(
    tmp_path: Path,
) -> None:
    repo = new_repo(tmp_path / "repo")
    (repo / "big.bin").write_bytes(b"\1" * 2048)
    driver = Driver(tmp_path / "home", repo, max_file_bytes=1024)
    await driver.prompt(lambda: (repo / "a.txt").write_text("x\n"), text="first")
    await driver.start("only a question")
    await driver.tool(lambda: None, "read", "a.txt")
    await driver.end()
    undo_plan, _ = driver.undo()
    assert undo_plan.target.title == "first"


async def test_a_snapshot_on_a_full_disk_says_so_and_undo_keeps_that_tools_work(
    tmp_path: Path,
) -> None:
    with tiny_disk(tmp_path / "disk", "1m") as disk:
        repo = new_repo(disk / "repo")
        driver = Driver(tmp_path / "home", repo)
        await driver.start()
        await driver.tool(lambda: (repo / "a.txt").write_text("captured\n"))

        def bash() -> None:
            fill(disk, leave=64 * 1024)
            (repo / "made.txt").write_bytes(os.urandom(48 * 1024))  # needs a new object

        await driver.tool(bash)
        await driver.end()
        assert [w for w in driver.warnings if w.startswith("checkpoint after this tool failed")]
        (disk / "filler").unlink()
        _, result = driver.undo()
        assert result.done == ["restored a.txt"] and (repo / "made.txt").exists()


async def test_in_git_a_private_file_stays_private(tmp_path: Path) -> None:
    """Git keeps only the executable bit: a private script made executable again is
    executable by its owner alone (the readers of the file now)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "mine.sh").write_text("m\n")
    (repo / "mine.sh").chmod(0o700)
    new_repo(repo, {"key.txt": "k\n", "tool.sh": "t\n"})
    (repo / "key.txt").chmod(0o600)
    driver = Driver(tmp_path / "home", repo)
    await driver.prompt(
        lambda: (repo / "key.txt").write_text("changed\n"),
        lambda: (repo / "tool.sh").chmod(0o755),
        lambda: (repo / "mine.sh").chmod(0o600),
    )
    _, result = driver.undo()
    assert not result.failed and (repo / "key.txt").read_text() == "k\n"
    assert (repo / "key.txt").stat().st_mode & 0o777 == 0o600
    assert (repo / "tool.sh").stat().st_mode & 0o777 == 0o644
    assert (repo / "mine.sh").stat().st_mode & 0o777 == 0o700


async def test_outside_git_undo_never_removes_the_workspace_itself(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    driver = Driver(tmp_path / "home", work)
    await driver.start()
    await driver.tool(lambda: (work / "only.txt").write_text("x\n"), "write", "only.txt")
    await driver.end()
    _, result = driver.undo()
    assert result.done == ["deleted only.txt"] and work.is_dir()


async def test_a_change_made_while_the_write_tool_runs_is_the_users(tmp_path: Path) -> None:
    """write and edit can change only their path: anything else changed meanwhile is yours."""
    repo = new_repo(tmp_path / "repo", {"a.txt": "a\n", "b.txt": "b\n"})
    driver = Driver(tmp_path / "home", repo)

    def write_while_the_user_saves() -> None:
        (repo / "a.txt").write_text("tool\n")
        (repo / "b.txt").write_text("mine\n")
        (repo / "mine.txt").write_text("mine\n")

    await driver.start()
    await driver.tool(write_while_the_user_saves, "write", "a.txt")
    await driver.end()
    undo_plan, result = driver.undo()
    assert result.done == ["restored a.txt"] and not undo_plan.keep
    assert (repo / "b.txt").read_text() == "mine\n" and (repo / "mine.txt").exists()


async def test_a_write_outside_the_tree_owns_nothing_in_it(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo")
    driver = Driver(tmp_path / "home", repo)

    def write_elsewhere_while_the_user_saves() -> None:
        (tmp_path / "outside.txt").write_text("tool\n")
        (repo / "a.txt").write_text("mine\n")

    await driver.start()
    await driver.tool(write_elsewhere_while_the_user_saves, "write", "../outside.txt")
    await driver.end()
    with pytest.raises(NothingToUndo):
        driver.undo()
    assert (repo / "a.txt").read_text() == "mine\n"


def test_a_tree_the_cache_remembers_that_gc_pruned_is_written_again(tmp_path: Path) -> None:
    """The next run of an unchanged work tree takes the tree the cache remembers, unless the
    repository no longer holds it: then it is written again."""
    import json

    repo = new_repo(tmp_path / "repo")
    (repo / "old.txt").write_text("old\n")
    os.utime(repo / "old.txt", (1, 1))
    cache = tmp_path / "cache.json"

    def snapshot_tree() -> str:
        stat_cache = StatCache(cache)
        tree = GitSnapshots(repo, stat_cache=stat_cache).take().tree
        stat_cache.save()
        return tree

    tree = snapshot_tree()
    assert snapshot_tree() == tree and json.loads(cache.read_text())["tree"][1] == tree
    stored = json.loads(cache.read_text())
    stored["tree"][1] = "2" * 40  # as if gc pruned the tree the cache remembers
    cache.write_text(json.dumps(stored))
    assert snapshot_tree() == tree
    assert git(repo, "cat-file", "-t", tree) == "tree\n"
