"""Carrying an undo out (di_code.session.undo_plan.apply): a restored text file goes through
the editor's buffer only when the editor put it back byte for byte (else undo writes the disk
itself), never through a second name of the file; snapshots lost between plan and apply fail in
one line and change nothing; a prompt asked for by a number that is not there is one line."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from di_code.session import Session
from di_code.session.checkpoint_list import prompt_checkpoints
from di_code.session.undo_plan import NothingToUndo, apply, plan
from tests.support.git import git
from tests.support.undo_driver import Driver, new_repo


async def changed_by_a_tool(tmp_path: Path, before: bytes, after: bytes) -> tuple[Path, Driver]:
    """A repository whose `a.txt` held `before` until a prompt's tool wrote `after`."""
    repo = new_repo(tmp_path / "repo")
    (repo / "a.txt").write_bytes(before)
    git(repo, "commit", "-qam", "before")
    driver = Driver(tmp_path / "home", repo)
    await driver.prompt(lambda: (repo / "a.txt").write_bytes(after))
    return repo, driver


class Editor:
    """An editor's buffers: `write_text` puts a text where the user edits it. This one saves
    it to disk at once with `line_end`s, or keeps it `unsaved`, or declines the path."""

    def __init__(self, line_end: str = "\n", unsaved: bool = False, takes: bool = True) -> None:
        self.line_end, self.unsaved, self.takes = line_end, unsaved, takes
        self.given: list[Path] = []

    def write_text(self, path: Path, text: str) -> bool:
        self.given.append(path)
        if self.takes and not self.unsaved:
            path.write_bytes(text.replace("\n", self.line_end).encode())
        return self.takes


async def test_a_text_the_editor_puts_back_exactly_is_left_to_it(tmp_path: Path) -> None:
    repo, driver = await changed_by_a_tool(tmp_path, b"mine\n", b"the tool's\n")
    editor = Editor()
    result = apply(driver.session, plan(driver.session), editor.write_text)
    assert editor.given == [repo / "a.txt"]
    assert (repo / "a.txt").read_bytes() == b"mine\n"
    assert result.done == ["restored a.txt"]
    assert result.on_disk == []  # the editor has it: nothing to reload


@pytest.mark.parametrize(
    "editor",
    [Editor(line_end="\r\n"), Editor(unsaved=True), Editor(takes=False)],
    ids=["crlf", "unsaved", "declined"],
)
async def test_a_text_the_editor_changes_keeps_unsaved_or_declines_is_written_by_undo(
    tmp_path: Path, editor: Editor
) -> None:
    repo, driver = await changed_by_a_tool(tmp_path, b"one\ntwo\n", b"its 2 l\n")  # one size
    result = apply(driver.session, plan(driver.session), editor.write_text)
    assert editor.given == [repo / "a.txt"]
    assert (repo / "a.txt").read_bytes() == b"one\ntwo\n"  # byte-exact whoever wrote it
    assert result.on_disk == [repo / "a.txt"]  # an editor that has it open must reload it


async def test_a_file_deleted_or_a_symlink_restored_is_on_disk_for_the_editor_to_reload(
    tmp_path: Path,
) -> None:
    """Only a text goes through the editor: a path undo deletes, or a symlink it puts back,
    is written on disk by undo, so an editor that has it open must reload it."""
    repo = new_repo(tmp_path / "repo")
    (repo / "link").symlink_to("a.txt")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a link")
    driver = Driver(tmp_path / "home", repo)

    def bash() -> None:
        (repo / "a.txt").write_text("the tool's\n")
        (repo / "new.txt").write_text("made by the tool\n")
        (repo / "link").unlink()
        (repo / "link").write_text("a file now\n")

    await driver.prompt(bash)
    editor = Editor()
    result = apply(driver.session, plan(driver.session), editor.write_text)
    assert sorted(result.done) == ["deleted new.txt", "restored a.txt", "restored link"]
    assert editor.given == [repo / "a.txt"] and (repo / "a.txt").read_text() == "a\n"
    assert sorted(result.on_disk) == [repo / "link", repo / "new.txt"]
    assert os.readlink(repo / "link") == "a.txt" and not (repo / "new.txt").exists()


async def test_bytes_that_are_not_text_never_go_to_the_editor(tmp_path: Path) -> None:
    repo, driver = await changed_by_a_tool(tmp_path, b"\xff\xfe not utf-8\n", b"text\n")
    editor = Editor()
    result = apply(driver.session, plan(driver.session), editor.write_text)
    assert editor.given == []
    assert (repo / "a.txt").read_bytes() == b"\xff\xfe not utf-8\n"
    assert result.on_disk == [repo / "a.txt"]


async def test_a_file_with_a_second_name_never_goes_to_the_editor(tmp_path: Path) -> None:
    """The editor would write every name of it; undo replaces this name alone."""
    repo, driver = await changed_by_a_tool(tmp_path, b"mine\n", b"the tool's\n")
    os.link(repo / "a.txt", tmp_path / "other-name")
    editor = Editor()
    apply(driver.session, plan(driver.session), editor.write_text)
    assert editor.given == []
    assert (repo / "a.txt").read_bytes() == b"mine\n"


async def test_snapshots_lost_between_plan_and_apply_fail_in_one_line(tmp_path: Path) -> None:
    repo, driver = await changed_by_a_tool(tmp_path, b"mine\n", b"the tool's\n")
    undo_plan = plan(driver.session)
    for line in git(repo, "for-each-ref", "--format=%(refname)", "refs/di-code/").splitlines():
        git(repo, "update-ref", "-d", line)
    git(repo, "reset", "-q", "--hard", "HEAD~1")  # `before` now only in the lost snapshots
    (repo / "a.txt").write_bytes(b"the tool's\n")
    git(repo, "reflog", "expire", "--expire=now", "--all")
    git(repo, "gc", "-q", "--prune=now")
    result = apply(driver.session, undo_plan)
    assert [line.split(":")[0] for line in result.failed] == ["could not read the snapshot"]
    assert len(result.failed[0].splitlines()) == 1
    assert (repo / "a.txt").read_bytes() == b"the tool's\n"  # nothing written
    assert not any(c.undone for c in prompt_checkpoints(driver.session))  # not recorded


async def test_a_whole_undo_says_so_and_the_prompt_is_not_offered_again(tmp_path: Path) -> None:
    """Not in this session, nor when its file is read again (a resumed session): the undo is
    recorded as a checkpoint entry of the prompt's kind, which the file reads back."""
    _, driver = await changed_by_a_tool(tmp_path, b"mine\n", b"the tool's\n")
    undo_plan, result = driver.undo()
    assert result.failed == []
    assert undo_plan.undid() == f"Undid prompt {undo_plan.target.number}."
    with pytest.raises(NothingToUndo, match=r"^nothing to undo$"):
        plan(driver.session)
    resumed = Session.load(driver.session.path)
    assert resumed.warnings == []
    with pytest.raises(NothingToUndo, match=r"^nothing to undo$"):
        plan(resumed)


async def test_an_undo_the_session_cannot_record_is_a_failure_not_undone(
    tmp_path: Path,
) -> None:
    """The files are back, but the session file cannot take the undo (here a folder stands
    where it was): apply says so in one line, and the prompt is not marked undone."""
    repo, driver = await changed_by_a_tool(tmp_path, b"mine\n", b"the tool's\n")
    undo_plan = plan(driver.session)
    driver.session.path.unlink()
    driver.session.path.mkdir()
    result = apply(driver.session, undo_plan)
    assert result.done == ["restored a.txt"] and (repo / "a.txt").read_bytes() == b"mine\n"
    assert [line.split(": ")[0] for line in result.failed] == ["the undo could not be recorded"]
    assert len(result.failed[0].splitlines()) == 1
    assert not any(c.undone for c in prompt_checkpoints(driver.session))


async def test_a_prompt_number_that_is_not_there_is_one_line(tmp_path: Path) -> None:
    _, driver = await changed_by_a_tool(tmp_path, b"mine\n", b"the tool's\n")
    with pytest.raises(NothingToUndo) as raised:
        plan(driver.session, to=7)
    assert str(raised.value) == "no checkpoint 7 to go back to (see --list)"
