"""Undo follows each path's history: tool changes with the user's between them. It goes back
to what the user's last change left (the prompt's start when none), never further without
--force, and never to or over a state no snapshot captured."""

from __future__ import annotations

from pathlib import Path

from di_code.session.undo_plan import plan
from tests.support.undo_driver import Driver, new_repo


async def tool_then_mine_then_tool(tmp_path: Path) -> tuple[Path, Driver]:
    repo = new_repo(tmp_path / "repo")
    driver = Driver(tmp_path / "home", repo)
    await driver.start()
    await driver.tool(lambda: (repo / "a.txt").write_text("tool\n"))
    (repo / "a.txt").write_text("mine\n")  # the user, while the model thinks
    await driver.tool(lambda: (repo / "a.txt").write_text("tool again\n"))
    await driver.end()
    return repo, driver


async def test_a_tool_change_after_the_users_goes_back_to_the_users_version(
    tmp_path: Path,
) -> None:
    repo, driver = await tool_then_mine_then_tool(tmp_path)
    undo_plan, result = driver.undo()
    assert "  restore a.txt  (as you left it)" in undo_plan.lines()
    assert result.done == ["restored a.txt"] and not undo_plan.keep
    assert (repo / "a.txt").read_text() == "mine\n"


async def test_force_goes_back_past_the_users_change_to_the_prompts_start(
    tmp_path: Path,
) -> None:
    repo, driver = await tool_then_mine_then_tool(tmp_path)
    undo_plan, result = driver.undo(force=True)
    assert "  restore a.txt  (--force)" in undo_plan.lines()
    assert result.done == ["restored a.txt"] and (repo / "a.txt").read_text() == "a\n"


async def test_force_goes_back_past_a_change_the_user_made_before_the_first_tool(
    tmp_path: Path,
) -> None:
    """The user's change lands after the prompt's start was recorded (at its first tool
    call, a read) and before the first tool that may change files: the first snapshot after
    the start is the user's, and --force still goes back to the start."""
    repo = new_repo(tmp_path / "repo")
    driver = Driver(tmp_path / "home", repo)
    await driver.start()
    await driver.tool(lambda: None, "read", "a.txt")  # the start is recorded by then
    (repo / "a.txt").write_text("mine\n")  # the user, while the model thinks
    await driver.tool(lambda: (repo / "a.txt").write_text("tool\n"))
    await driver.end()
    assert "  restore a.txt  (as you left it)" in plan(driver.session).lines()
    undo_plan, result = driver.undo(force=True)
    assert "  restore a.txt  (--force)" in undo_plan.lines()
    assert result.done == ["restored a.txt"] and (repo / "a.txt").read_text() == "a\n"


async def test_the_users_version_put_back_after_the_tool_is_named_as_kept(
    tmp_path: Path,
) -> None:
    """The user changes a.txt before the first tool that may change files, a tool writes it,
    the user puts their version back: undo leaves it, and says so (a tool changed it)."""
    repo = new_repo(tmp_path / "repo")
    driver = Driver(tmp_path / "home", repo)
    await driver.start()
    await driver.tool(lambda: None, "read", "a.txt")  # the start is recorded by then
    (repo / "a.txt").write_text("mine\n")
    await driver.tool(lambda: (repo / "a.txt").write_text("tool\n"))
    await driver.end()
    (repo / "a.txt").write_text("mine\n")
    undo_plan = plan(driver.session)
    assert undo_plan.keep == [("a.txt", "changed by you since the tool did")]
    assert not undo_plan.actions


async def test_force_goes_back_to_the_start_over_a_state_of_the_users_too_large_to_capture(
    tmp_path: Path,
) -> None:
    """Before the first tool that may change files the user makes b.bin too large to capture,
    then a tool writes it: undo keeps it (the state to go back to is unknown), --force goes
    back to the prompt's start, which was captured."""
    repo = new_repo(tmp_path / "repo", {"a.txt": "a\n", "b.bin": "old\n"})
    driver = Driver(tmp_path / "home", repo, max_file_bytes=1024)
    await driver.start()
    await driver.tool(lambda: None, "read", "b.bin")  # the start is recorded by then
    (repo / "b.bin").write_bytes(b"\1" * 2048)  # the user's, too large to capture
    await driver.tool(lambda: (repo / "b.bin").write_text("tool\n"))
    await driver.end()
    assert plan(driver.session).keep == [("b.bin", "larger than 0.000976562 MB, not captured")]
    undo_plan, result = driver.undo(force=True)
    assert undo_plan.forced == ["b.bin"] and result.done == ["restored b.bin"]
    assert (repo / "b.bin").read_text() == "old\n"


async def test_a_file_the_user_made_too_large_is_not_replaced_after_a_tool_deleted_it(
    tmp_path: Path,
) -> None:
    """Both trees show b.bin absent around the user's change (too large to capture): the
    skipped entry, not the tree, says the user's b.bin was there, so it is unknown."""
    repo = new_repo(tmp_path / "repo", {"a.txt": "a\n", "b.bin": "old\n"})
    driver = Driver(tmp_path / "home", repo, max_file_bytes=1024)
    await driver.start()
    await driver.tool(lambda: (repo / "b.bin").unlink())
    (repo / "b.bin").write_bytes(b"\1" * 2048)  # the user's, too large to capture
    await driver.tool(lambda: (repo / "b.bin").unlink())
    await driver.end()
    undo_plan, result = driver.undo()
    assert undo_plan.keep == [("b.bin", "larger than 0.000976562 MB, not captured")]
    assert not undo_plan.actions and not result.done and not (repo / "b.bin").exists()
    undo_plan, _ = driver.undo(force=True)  # --force may bring back what the prompt found
    assert undo_plan.forced == ["b.bin"] and (repo / "b.bin").read_text() == "old\n"


async def test_a_path_the_user_changed_last_is_kept_whatever_the_tools_did_before(
    tmp_path: Path,
) -> None:
    repo = new_repo(tmp_path / "repo")
    driver = Driver(tmp_path / "home", repo)
    await driver.start()
    await driver.tool(lambda: (repo / "a.txt").write_text("tool\n"))
    (repo / "a.txt").write_text("mine\n")
    await driver.tool(lambda: (repo / "b.txt").write_text("tool\n"))
    await driver.end()
    undo_plan, result = driver.undo()
    assert undo_plan.keep == [("a.txt", "changed by you since the tool did")]
    assert result.done == ["deleted b.txt"] and (repo / "a.txt").read_text() == "mine\n"


async def test_what_the_user_did_after_the_prompt_is_judged_by_the_files_now(
    tmp_path: Path,
) -> None:
    """After the prompt the user puts a.txt back as it was (nothing to keep or restore) and
    makes b.bin too large to capture (kept, with that reason rather than "changed by you"):
    undo reads the files as they are now, not as the prompt left them."""
    repo = new_repo(tmp_path / "repo", {"a.txt": "a\n", "b.bin": "b\n"})
    driver = Driver(tmp_path / "home", repo, max_file_bytes=1024)
    await driver.prompt(
        lambda: (repo / "a.txt").write_text("tool\n"), lambda: (repo / "b.bin").write_text("t\n")
    )
    (repo / "a.txt").write_text("a\n")
    (repo / "b.bin").write_bytes(b"\1" * 2048)
    undo_plan, result = driver.undo()
    assert undo_plan.keep == [("b.bin", "larger than 0.000976562 MB, not captured")]
    assert not undo_plan.actions and not result.done
    assert (repo / "b.bin").read_bytes() == b"\1" * 2048


async def test_outside_git_an_edit_between_prompts_is_what_undo_goes_back_to(
    tmp_path: Path,
) -> None:
    """The second prompt kept the user's version as its original: undoing both prompts
    brings that back, not the file before the first one (--force would)."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("a\n")
    driver = Driver(tmp_path / "home", work)
    await driver.start()
    await driver.tool(lambda: (work / "a.txt").write_text("tool\n"), "write", "a.txt")
    await driver.end()
    (work / "a.txt").write_text("mine\n")
    await driver.start()
    await driver.tool(lambda: (work / "a.txt").write_text("tool again\n"), "write", "a.txt")
    await driver.end()
    assert "  restore a.txt  (--force)" in plan(driver.session, to=1, force=True).lines()
    undo_plan, result = driver.undo(to=1)
    assert "  restore a.txt  (as you left it)" in undo_plan.lines()
    assert result.done == ["restored a.txt"] and (work / "a.txt").read_text() == "mine\n"
