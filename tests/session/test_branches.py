"""A session's branches as `/tree` builds them from its file (issue 45 item 2), and the move
to another branch written down so that a resumed session goes on there. Session files are
untrusted: hostile trees end in a tree or one error line, never a hang."""

from __future__ import annotations

from pathlib import Path

import pytest

from di_code.session import Session, SessionError, SessionStore
from di_code.session.branches import Branch, branch_tree
from tests.support.session_branches import answer, prompt, two_branches, user_entry, write_session


def texts(session: Session) -> list[str]:
    return [block.text for message in session.context() for block in message.content]  # type: ignore[union-attr]


def tree_of(session: Session) -> list[Branch]:
    reloaded = Session.load(session.path)
    return branch_tree(reloaded.entries, reloaded.leaf_id)


def test_branch_points_cut_the_conversation_into_branches(tmp_path: Path) -> None:
    session = two_branches(tmp_path)
    tree = tree_of(session)
    assert [(b.title, b.prompts, b.turns, b.depth, b.ends, b.current) for b in tree] == [
        ("one", 1, 1, 0, False, False),
        ("two", 1, 2, 1, True, False),
        ("other", 1, 1, 1, True, True),
    ]
    assert [(b.parent, b.last) for b in tree] == [(None, True), (0, False), (0, True)]
    assert tree[1].timestamp <= tree[2].timestamp


def test_a_session_without_branch_points_is_one_branch(tmp_path: Path) -> None:
    session = SessionStore(tmp_path / "home").create(tmp_path)
    session.append_message(prompt("only"))
    session.append_message(answer("reply"))
    [only] = tree_of(session)
    assert (only.title, only.prompts, only.ends, only.current) == ("only", 1, True, True)


def test_a_rewind_to_the_start_makes_branches_from_the_start(tmp_path: Path) -> None:
    session = SessionStore(tmp_path / "home").create(tmp_path)
    session.append_message(prompt("first try"))
    session.branch_from(None)
    session.append_checkpoint(1, "rewind", "files", "")  # what `/rewind 1 conversation` writes
    tree = tree_of(session)
    assert [(b.title, b.depth, b.parent, b.current) for b in tree] == [
        ("first try", 1, None, False),
        ("", 1, None, True),  # no prompt typed on it yet
    ]


def test_moving_to_a_branch_is_saved_and_a_resumed_session_goes_on_there(tmp_path: Path) -> None:
    session = two_branches(tmp_path)
    old = tree_of(session)[1]
    session.switch_to(old.last_id)
    reloaded = Session.load(session.path)
    assert texts(reloaded) == [
        "one", "first answer", "two\nsecond line", "old branch", "old branch again"
    ]  # fmt: skip
    assert [b.current for b in tree_of(session)] == [False, True, False]
    assert len(tree_of(session)) == 3  # the move made no new branch
    session.release()
    reloaded.append_message(prompt("goes on"))
    assert texts(Session.load(session.path))[-1] == "goes on"
    assert [b.prompts for b in tree_of(session)] == [1, 2, 1]


def test_entries_that_share_ids_in_a_circle_are_one_error(tmp_path: Path) -> None:
    path = write_session(
        tmp_path / "s.jsonl",
        [user_entry("a", None, "x"), user_entry("b", "a", "y"), user_entry("a", "b", "z")],
    )
    session = Session.load(path)
    with pytest.raises(SessionError, match="in a circle") as raised:
        branch_tree(session.entries, session.leaf_id)
    assert "\n" not in str(raised.value)


def test_an_entry_following_itself_is_one_error(tmp_path: Path) -> None:
    path = write_session(
        tmp_path / "s.jsonl", [user_entry("a", None, "x"), user_entry("a", "a", "again")]
    )
    session = Session.load(path)
    with pytest.raises(SessionError, match="in a circle"):
        branch_tree(session.entries, session.leaf_id)


def test_a_missing_parent_follows_the_entry_before_it(tmp_path: Path) -> None:
    path = write_session(
        tmp_path / "s.jsonl", [user_entry("a", None, "x"), user_entry("b", "gone", "y")]
    )
    session = Session.load(path)
    assert [b.prompts for b in branch_tree(session.entries, session.leaf_id)] == [2]


def test_a_chain_of_100k_entries_is_walked_without_recursion(tmp_path: Path) -> None:
    entries = [user_entry(f"e{i}", f"e{i - 1}" if i else None, f"p{i}") for i in range(100_000)]
    session = Session.load(write_session(tmp_path / "s.jsonl", entries))
    [only] = branch_tree(session.entries, session.leaf_id)
    assert (only.prompts, only.title, only.current) == (100_000, "p0", True)


def test_100k_branch_points_deep_are_built(tmp_path: Path) -> None:
    """Each entry has two children: one ends at once, the other goes on (a comb 50k deep)."""
    entries = [user_entry("s0", None, "start")]
    for i in range(1, 50_000):
        entries.append(user_entry(f"x{i}", f"s{i - 1}", f"side {i}"))
        entries.append(user_entry(f"s{i}", f"s{i - 1}", f"spine {i}"))
    session = Session.load(write_session(tmp_path / "s.jsonl", entries))
    tree = branch_tree(session.entries, session.leaf_id)
    assert len(tree) == 1 + 2 * 49_999
    assert max(b.depth for b in tree) == 49_999
    assert tree[-1].current and tree[-1].title == "spine 49999"


FULL_DISK_MOVE = """
import resource, sys
from pathlib import Path
from di_code.session import Session, SessionError
from di_code.session.branches import branch_tree

path = Path(sys.argv[1])
session = Session.load(path)
before = session.leaf_id
[other] = [b for b in branch_tree(session.entries, before) if b.ends and not b.current]
hard = resource.getrlimit(resource.RLIMIT_FSIZE)[1]
resource.setrlimit(resource.RLIMIT_FSIZE, (path.stat().st_size, hard))
try:
    session.switch_to(other.last_id)
except SessionError as exc:
    print("refused:", exc)
print("unchanged" if session.leaf_id == before else "moved")
"""


def test_a_move_the_full_disk_refuses_changes_nothing(tmp_path: Path) -> None:
    """A real EFBIG (RLIMIT_FSIZE in a child process): one line, the conversation stays."""
    import subprocess
    import sys

    session = two_branches(tmp_path)
    session.release()
    before = session.path.read_bytes()
    done = subprocess.run(
        [sys.executable, "-c", FULL_DISK_MOVE, str(session.path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stdout.splitlines()[-1] == "unchanged", done.stdout + done.stderr
    assert (
        done.stdout.startswith("refused: cannot write session") and "Traceback" not in done.stderr
    )
    assert session.path.read_bytes() == before


def test_a_fork_after_a_move_holds_the_chosen_branch_and_no_branch_mark(tmp_path: Path) -> None:
    from di_code.session.fork import fork

    session = two_branches(tmp_path)
    session.switch_to(tree_of(session)[1].last_id)
    store = SessionStore(tmp_path / "home")
    forked = fork(store, session, tmp_path, session.leaf_id)
    reloaded = store.find(forked.id, tmp_path, write=False)
    assert texts(reloaded)[-1] == "old branch again"
    assert not any(entry.type == "branch" for entry in reloaded.entries)
