"""The undo rule as a property over a real repository: random tool changes (write, delete,
chmod, symlinks, binary and too-large files, in folders; by bash or by the write tool), random
user changes between the tool calls, between prompts and during write-tool calls (to other
paths), then undo of every prompt.
Each path ends as the user's last change left it (as before the prompt when the user never
changed it): what tools changed after that is undone, a change of the user's never is. Where
a state since then was too large to capture (unknown), what is there is left alone, and only
a path the tools left empty may get that state back. 20 examples a run;
DI_CODE_UNDO_EXAMPLES=300 searches deeper."""

from __future__ import annotations

import asyncio
import os
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from di_code.session.undo_plan import NothingToUndo
from tests.support.undo_driver import Driver, new_repo

MAX_FILE_BYTES = 64
PATHS = ("a.txt", "b.bin", "d/c.txt", "d/e/f.txt", "new.txt", "link")
INITIAL = {"a.txt": "a\n", "b.bin": "b\n", "d/c.txt": "c\n"}

Entry = tuple[str, bytes, int] | None
"""A path as it is: kind ("file" or "link"), bytes or target, exec bits; None: absent."""
State = dict[str, tuple[str, bytes, int]]
Change = tuple[str, str, bytes]

changes = st.tuples(
    st.sampled_from(("write", "write", "delete", "chmod", "symlink")),
    st.sampled_from(PATHS),
    st.one_of(st.binary(max_size=8), st.binary(min_size=MAX_FILE_BYTES + 1, max_size=80)),
)
tool_calls = st.lists(
    st.tuples(changes, st.booleans(), st.lists(changes, max_size=1)), min_size=1, max_size=2
)
"""(the change, whether the write tool makes it, user changes made while it runs)."""
steps = st.lists(
    st.tuples(tool_calls, st.lists(changes, max_size=1), st.booleans()), min_size=1, max_size=3
)
"""(tool calls, then user changes while the model thinks, whether a new prompt starts first:
undo takes back every prompt)."""


def state(root: Path) -> State:
    """Every file and symlink under root (not .git): kind, bytes or target, exec bits."""
    found: State = {}
    for folder, folders, files in os.walk(root):
        folders[:] = [f for f in folders if f != ".git" and not Path(folder, f).is_symlink()]
        for name in [*files, *(f for f in os.listdir(folder) if Path(folder, f).is_symlink())]:
            path = Path(folder, name)
            relative = path.relative_to(root).as_posix()
            if path.is_symlink():
                found[relative] = ("link", os.readlink(path).encode(), 0)
            else:
                found[relative] = ("file", path.read_bytes(), path.stat().st_mode & 0o111)
    return found


def change(root: Path, kind: str, relative: str, data: bytes) -> None:
    path = root / relative
    if kind == "chmod":
        if path.is_file() and not path.is_symlink():
            path.chmod(path.stat().st_mode ^ 0o111)
        return
    if path.is_symlink() or path.exists():
        path.unlink()
    if kind == "write":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    elif kind == "symlink":
        path.parent.mkdir(parents=True, exist_ok=True)
        os.symlink("a.txt", path)


ToolCall = tuple[Change, bool, list[Change]]
Step = tuple[list[ToolCall], list[Change], bool]


async def run(root: Path, home: Path, plan: list[Step]) -> None:
    new_repo(root, INITIAL)
    driver = Driver(home, root, max_file_bytes=MAX_FILE_BYTES)
    before = state(root)
    states = [before]
    events: dict[str, list[tuple[str, Entry]]] = {path: [] for path in PATHS}

    def changed(path: str, by: str) -> None:  # who changed `path` between the last two states
        if states[-1].get(path) != states[-2].get(path):  # a no-op is no change
            events[path].append((by, states[-1].get(path)))

    await driver.start()
    for tool_changes, user_changes, new_prompt in plan:
        for (kind, path, data), file_tool, during in tool_changes:
            file_tool = file_tool and kind == "write" and not (root / path).is_symlink()
            during = [c for c in during if c[1] != path] if file_tool else []
            middle: list[State] = []

            def call(
                k: str = kind, p: str = path, d: bytes = data,
                seen: list[State] = middle, users: list[Change] = during,
            ) -> None:  # fmt: skip
                change(root, k, p, d)
                seen.append(state(root))
                for user_change in users:  # the user, while the write tool runs
                    change(root, *user_change)

            await driver.tool(call, "write" if file_tool else "bash", path if file_tool else None)
            states.append(middle[0])
            changed(path, "tool")
            states.append(state(root))
            for user_change in during:
                changed(user_change[1], "user")
        if new_prompt:
            await driver.end()
        for kind, path, data in user_changes:  # while the model thinks, or between prompts
            change(root, kind, path, data)
            states.append(state(root))
            changed(path, "user")
        if new_prompt:
            await driver.start()
    await driver.end()
    left = state(root)
    try:
        _, result = driver.undo(to=1)
    except NothingToUndo:
        result = None
    assert result is None or not result.failed
    after = state(root)
    for path in PATHS:
        assert after.get(path) in allowed(before.get(path), events[path], left.get(path)), path


def allowed(before: Entry, events: list[tuple[str, Entry]], left: Entry) -> list[Entry]:
    """What undo may leave at one path: what the user's last change left there (the
    prompt's start if none) once tools changed it after; what is there when the user's change
    was the last, or when a state since was too large to capture (unknown: never touched,
    though a path the tools left empty may get that state back)."""
    users = [n for n, (by, _) in enumerate(events) if by == "user"]
    since = events[users[-1] + 1 :] if users else events
    if not since:  # no change, or the user's was the last
        return [left]
    target = events[users[-1]][1] if users else before
    if any(_too_large(entry) for entry in [target, *(entry for _, entry in since)]):
        return [left, target] if left is None else [left]
    return [target]


def _too_large(entry: Entry) -> bool:
    return entry is not None and entry[0] == "file" and len(entry[1]) > MAX_FILE_BYTES


@settings(
    max_examples=int(os.environ.get("DI_CODE_UNDO_EXAMPLES", "20")),
    derandomize=os.environ.get("DI_CODE_UNDO_EXAMPLES") is None,  # CI: the same 20 every run
)
@given(plan=steps)
def test_undo_restores_only_what_tools_alone_changed(plan: list[Step]) -> None:
    with tempfile.TemporaryDirectory(prefix="di-code-undo-") as folder:
        asyncio.run(run(Path(folder, "repo"), Path(folder, "home"), plan))


def test_a_user_file_too_large_to_capture_is_not_replaced_by_undo() -> None:
    """A tool deletes b.bin, the user writes one too large to capture, a tool deletes that:
    the state the user left is unknown, so undo keeps the path (it once brought the old
    b.bin back where the user's file had been; found by DI_CODE_UNDO_EXAMPLES=300)."""
    big = b"\0" * (MAX_FILE_BYTES + 1)
    plan: list[Step] = [
        ([(("delete", "b.bin", b""), False, [])], [("write", "b.bin", big)], False),
        ([(("delete", "b.bin", b""), False, [])], [], False),
    ]
    with tempfile.TemporaryDirectory(prefix="di-code-undo-") as folder:
        asyncio.run(run(Path(folder, "repo"), Path(folder, "home"), plan))


def test_a_tool_that_reverts_the_users_change_is_undone_to_the_users_version() -> None:
    """The user makes b.bin executable, a tool makes it not: b.bin is as before the prompt,
    yet undo must give the user's executable b.bin back (it once saw "as before" and left
    it; found by DI_CODE_UNDO_EXAMPLES=300)."""
    plan: list[Step] = [
        ([(("write", "a.txt", b""), False, [])], [("chmod", "b.bin", b"")], False),
        ([(("chmod", "b.bin", b""), False, [])], [], False),
    ]
    with tempfile.TemporaryDirectory(prefix="di-code-undo-") as folder:
        asyncio.run(run(Path(folder, "repo"), Path(folder, "home"), plan))
