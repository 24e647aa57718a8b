"""The undo rule as a property over a real repository: random tool changes (write, delete,
chmod, symlinks, binary and too-large files, in folders; by bash or by the write tool), random
user changes between the tool calls and during write-tool calls (to other paths), then undo.
Every path the user changed is as the user left it; every path only tools changed is as it
was before the prompt, unless a snapshot could not capture it (too large): then what is there
is left alone, and only a path the tools left empty may get its old file back. 20 examples a
run; DI_CODE_UNDO_EXAMPLES=300 searches deeper."""

from __future__ import annotations

import asyncio
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from di_code.session.undo_plan import NothingToUndo
from tests.session.prompts import Driver, new_repo

MAX_FILE_BYTES = 64
PATHS = ("a.txt", "b.bin", "d/c.txt", "d/e/f.txt", "new.txt", "link")
INITIAL = {"a.txt": "a\n", "b.bin": "b\n", "d/c.txt": "c\n"}

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
steps = st.lists(st.tuples(tool_calls, st.lists(changes, max_size=1)), min_size=1, max_size=3)


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


def too_large(states: list[State], relative: str) -> bool:
    return any(
        s.get(relative, ("", b"", 0))[0] == "file" and len(s[relative][1]) > MAX_FILE_BYTES
        for s in states
    )


ToolCall = tuple[Change, bool, list[Change]]


async def run(root: Path, home: Path, plan: list[tuple[list[ToolCall], list[Change]]]) -> None:
    new_repo(root, INITIAL)
    driver = Driver(home, root, max_file_bytes=MAX_FILE_BYTES)
    before = state(root)
    states, by_user, by_tool = [before], set(), set()
    await driver.start()
    for tool_changes, user_changes in plan:
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
            if middle[0].get(path) != states[-1].get(path):
                by_tool.add(path)
            states += [middle[0], state(root)]
            if during and states[-1].get(during[0][1]) != states[-2].get(during[0][1]):
                by_user.add(during[0][1])
        for kind, path, data in user_changes:  # while the model thinks
            change(root, kind, path, data)
            states.append(state(root))
            if states[-1].get(path) != states[-2].get(path):  # a no-op is no change
                by_user.add(path)
    await driver.end()
    left = state(root)
    try:
        _, result = driver.undo()
    except NothingToUndo:
        result = None
    assert result is None or not result.failed
    after = state(root)
    for path in PATHS:
        if path in by_user or path not in by_tool:
            assert after.get(path) == left.get(path), path
        elif too_large(states, path):  # unknown at some point: what is there is never touched;
            kept = after.get(path) == left.get(path)  # a path the tools left empty may come back
            back = left.get(path) is None and after.get(path) == before.get(path)
            assert kept or back, path
        else:
            assert after.get(path) == before.get(path), path


@settings(
    max_examples=int(os.environ.get("DI_CODE_UNDO_EXAMPLES", "20")),
    deadline=None,
    derandomize=os.environ.get("DI_CODE_UNDO_EXAMPLES") is None,  # CI: the same 20 every run
)
@given(plan=steps)
def test_undo_restores_only_what_tools_alone_changed(
    plan: list[tuple[list[ToolCall], list[Change]]],
) -> None:
    with tempfile.TemporaryDirectory(prefix="di-code-undo-") as folder:
        asyncio.run(run(Path(folder, "repo"), Path(folder, "home"), plan))


@pytest.mark.xfail(
    strict=True,
    reason="known gap: a tool deletes a path, the user writes a file there too large to "
    "capture, a tool deletes it again; undo then brings the old file back where the user's "
    "unknown file was (found by DI_CODE_UNDO_EXAMPLES=300)",
)
def test_a_user_file_too_large_to_capture_is_not_replaced_by_undo() -> None:
    big = b"\0" * (MAX_FILE_BYTES + 1)
    plan: list[tuple[list[ToolCall], list[Change]]] = [
        ([(("delete", "b.bin", b""), False, [])], [("write", "b.bin", big)]),
        ([(("delete", "b.bin", b""), False, [])], []),
    ]
    with tempfile.TemporaryDirectory(prefix="di-code-undo-") as folder:
        asyncio.run(run(Path(folder, "repo"), Path(folder, "home"), plan))
