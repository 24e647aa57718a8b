"""Undo never deletes or writes over a path because an ignore rule changed (issue 40), as a
property over a real repository: random `.gitignore` rules before the prompt, one bash-like
tool call that rewrites the rules and makes or changes some files, then the user's edits;
undo of the prompt. Whatever the tool did not touch, and whatever the user edited after it,
undo leaves exactly as it found it. 20 examples a run (the same each time);
DI_CODE_UNDO_EXAMPLES=300 searches deeper."""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from di_code.session.undo_plan import NothingToUndo
from tests.support.git import git
from tests.support.undo_driver import Driver

NAMES = ("a.md", "b.txt", ".env", "d/c.md", "d/e.txt", "d/f/g.txt")
RULES = ("*.md", "*.txt", ".env", "d/", "d/f/", "!d/c.md")

rules = st.lists(st.sampled_from(RULES), max_size=3, unique=True)
files = st.dictionaries(st.sampled_from(NAMES), st.binary(min_size=1, max_size=4), max_size=5)


def read_all(root: Path) -> dict[str, bytes]:
    found = {}
    for path in root.rglob("*"):
        if ".git" not in path.relative_to(root).parts and path.is_file():
            found[path.relative_to(root).as_posix()] = path.read_bytes()
    return found


def put(root: Path, name: str, data: bytes) -> None:
    (root / name).parent.mkdir(parents=True, exist_ok=True)
    (root / name).write_bytes(data)


async def run(
    folder: Path, first: list[str], existing: dict[str, bytes], tracked: bool,
    then: list[str], made: dict[str, bytes], edits: dict[str, bytes],
) -> None:  # fmt: skip
    repo = folder / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    put(repo, ".gitignore", "".join(f"{rule}\n" for rule in first).encode())
    for name, data in existing.items():
        put(repo, name, data)
    git(repo, "add", ".gitignore")
    if tracked:
        git(repo, "add", "-A")
    git(repo, "commit", "-qm", "first")
    driver = Driver(folder / "home", repo)
    touched = {".gitignore", *made}

    def tool() -> None:
        put(repo, ".gitignore", "".join(f"{rule}\n" for rule in then).encode())
        for name, data in made.items():
            put(repo, name, data)

    await driver.prompt(tool)
    prompted = read_all(repo)
    edited = {name for name, data in edits.items() if prompted.get(name) != data}
    for name, data in edits.items():  # the user, after the prompt
        put(repo, name, data)
    found = read_all(repo)
    with contextlib.suppress(NothingToUndo):
        driver.undo()
    left = read_all(repo)
    for name in set(found) | set(left):
        if name not in touched or name in edited:
            assert left.get(name) == found.get(name), name


@settings(
    max_examples=int(os.environ.get("DI_CODE_UNDO_EXAMPLES", "20")),
    derandomize=os.environ.get("DI_CODE_UNDO_EXAMPLES") is None,
)
@given(first=rules, existing=files, tracked=st.booleans(), then=rules, made=files, edits=files)
def test_undo_touches_nothing_an_ignore_rule_change_uncovered_or_hid(
    first: list[str], existing: dict[str, bytes], tracked: bool,
    then: list[str], made: dict[str, bytes], edits: dict[str, bytes],
) -> None:  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="di-code-ignore-") as folder:
        asyncio.run(run(Path(folder), first, existing, tracked, then, made, edits))
