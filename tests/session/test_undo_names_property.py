"""Any file name round-trips checkpoint -> undo byte for byte (issue 40), and nothing outside
the workspace is read: names with `\\n`, `\\r`, `\\t`, a leading `-`, spaces at either end,
bytes that are not UTF-8 and Unicode normalisation twins, files, executables and links (in
to the work tree, and out to a secret beside it), made, changed, swapped and deleted by one
bash-like tool call, then undone. The secret's bytes must be in no object of the repository.
20 examples a run (the same 20 each time); DI_CODE_UNDO_EXAMPLES=300 searches deeper."""

from __future__ import annotations

import asyncio
import os
import stat
import subprocess
import tempfile
import unicodedata
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from di_code.session.undo_plan import NothingToUndo
from tests.support.git import git
from tests.support.undo_driver import Driver

SECRET = b"-----BEGIN OPENSSH PRIVATE KEY----- not for the repository\n"
ODD = [
    b"new\nline", b"cr\r", b"\ttab", b"-rf", b" both ", b"\xff\xfe", b"x\x80y",
    unicodedata.normalize("NFC", "caf\u00e9").encode(),
    unicodedata.normalize("NFD", "caf\u00e9").encode(),
    b"\xef\xbc\xa1",  # full-width A
    b"A", b"a", b"k",
]  # fmt: skip
names = st.one_of(
    st.sampled_from(ODD),
    st.binary(min_size=1, max_size=5).filter(lambda b: b"/" not in b and b"\0" not in b),
).filter(lambda b: b not in (b".", b"..", b".git", b"d", b"-d"))
paths = st.tuples(st.sampled_from([b"", b"d/", b"-d/"]), names).map(b"".join)

Entry = tuple[str, bytes, int]
"""kind ("file" or "link"), bytes or target, exec bits."""
entries = st.one_of(
    st.tuples(st.just("file"), st.binary(max_size=6), st.sampled_from([0, 0o111])),
    st.tuples(st.just("link"), st.sampled_from([b"in", b"out"]), st.just(0)),
)
trees = st.dictionaries(paths, entries, min_size=1, max_size=6)


def state(root: bytes) -> dict[bytes, Entry]:
    """Every file and symlink under root (not .git), by its name's bytes."""
    found: dict[bytes, Entry] = {}
    for folder, folders, files in os.walk(root):
        folders[:] = [f for f in folders if f != b".git"]
        for name in files + [f for f in folders if os.path.islink(os.path.join(folder, f))]:
            path = os.path.join(folder, name)
            relative = os.path.relpath(path, root)
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                found[relative] = ("link", os.readlink(path), 0)
            else:
                with open(path, "rb") as f:
                    found[relative] = ("file", f.read(), info.st_mode & 0o111)
    return found


def make(root: bytes, path: bytes, entry: Entry | None, secret: bytes, other: bytes) -> None:
    full = os.path.join(root, path)
    if os.path.lexists(full):
        os.unlink(full)
    if entry is None:
        return
    os.makedirs(os.path.dirname(full), exist_ok=True)
    kind, data, mode = entry
    if kind == "link":
        os.symlink(secret if data == b"out" else os.path.basename(other), full)
        return
    with open(full, "wb") as f:
        f.write(data)
    os.chmod(full, 0o644 | mode)


async def round_trip(folder: Path, before: dict[bytes, Entry], after: dict[bytes, Entry | None],
                     tracked: bool) -> None:  # fmt: skip
    repo = folder / "repo"
    repo.mkdir()
    secret = folder / "id_ed25519"
    secret.write_bytes(SECRET)
    git(repo, "init", "-q")
    root, key = os.fsencode(repo), os.fsencode(secret)
    other = sorted(before)[0]
    for path, entry in before.items():
        make(root, path, entry, key, other)
    if tracked:
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", "first")
    expected = state(root)
    driver = Driver(folder / "home", repo)

    def tool() -> None:
        for path, entry in after.items():
            make(root, path, entry, key, other)

    await driver.prompt(tool)
    assert not driver.warnings
    try:
        _, result = driver.undo()
    except NothingToUndo:
        result = None
    assert result is None or not result.failed, result.failed
    assert state(root) == expected
    objects = subprocess.run(
        ["git", "cat-file", "--batch-all-objects", "--batch"], cwd=repo, capture_output=True
    ).stdout
    assert SECRET not in objects


@settings(
    max_examples=int(os.environ.get("DI_CODE_UNDO_EXAMPLES", "20")),
    derandomize=os.environ.get("DI_CODE_UNDO_EXAMPLES") is None,
)
@given(
    before=trees,
    after=st.dictionaries(paths, st.one_of(st.none(), entries), min_size=1, max_size=6),
    tracked=st.booleans(),
)
def test_any_name_round_trips_checkpoint_to_undo(
    before: dict[bytes, Entry], after: dict[bytes, Entry | None], tracked: bool
) -> None:
    with tempfile.TemporaryDirectory(prefix="di-code-names-") as folder:
        asyncio.run(round_trip(Path(folder), before, after, tracked))
