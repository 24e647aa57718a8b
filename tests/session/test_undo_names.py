"""Names git would split or trim on a line protocol (issue 40): a newline in a name broke
the checkpoint (a traceback, then "nothing to undo"), and `k\\r` was hashed as `k`, so undo
wrote another file's bytes into it. Git takes names NUL-separated only; di-code reads the
bytes itself, through the file opener, so git opens no file of the work tree by name."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from di_code.session.git_snapshot import GitSnapshots
from tests.support.undo_driver import Driver, new_repo


async def test_a_name_with_a_newline_is_checkpointed_and_undone(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo")
    driver = Driver(tmp_path / "home", repo)
    odd = repo / "two\nlines.txt"
    await driver.prompt(lambda: odd.write_bytes(b"new\n"))
    assert not driver.warnings
    _, result = driver.undo()
    assert result.done == ["deleted two\u240alines.txt"] and not result.failed  # one line
    assert not odd.exists()


async def test_a_name_ending_in_a_carriage_return_gets_its_own_bytes_back(
    tmp_path: Path,
) -> None:
    repo = new_repo(tmp_path / "repo", {"k": "k's own\n", "k\r": "k-cr's own\n", "-x ": "x\n"})
    driver = Driver(tmp_path / "home", repo)

    def change() -> None:
        for name in ("k", "k\r", "-x "):
            (repo / name).write_text("changed\n")

    await driver.prompt(change)
    _, result = driver.undo()
    assert not result.failed and not driver.warnings
    assert (repo / "k").read_text() == "k's own\n"
    assert (repo / "k\r").read_text() == "k-cr's own\n"
    assert (repo / "-x ").read_text() == "x\n"


async def test_a_link_is_kept_as_a_link_and_its_target_is_never_read(tmp_path: Path) -> None:
    """A name that is a link to a secret outside the workspace: its blob is the link's
    target, never the secret's bytes, whatever the name looks like to a line protocol."""
    secret = tmp_path / "id_ed25519"
    secret.write_bytes(b"PRIVATE KEY\n")
    repo = new_repo(tmp_path / "repo")
    driver = Driver(tmp_path / "home", repo)

    def plant() -> None:
        os.symlink(secret, repo / "k")
        (repo / "k\r").write_bytes(b"cr\n")

    await driver.prompt(plant)
    git = driver.checkpointer._git
    assert git is not None
    listing = git.git(["ls-tree", "-r", "-z", git.take().tree]).split(b"\0")
    rows = [row.split(b"\t", 1) for row in listing if row]
    blob_of = {path: meta.split(b" ")[2].decode() for meta, path in rows}
    contents = git.blobs(blob_of.values())
    assert b"PRIVATE KEY\n" not in contents.values()
    assert contents[blob_of[b"k"]] == str(secret).encode()
    assert contents[blob_of[b"k\r"]] == b"cr\n"


async def test_a_repository_whose_folder_name_ends_in_a_space_is_snapshotted(
    tmp_path: Path,
) -> None:
    """git's answer ends in one line end; stripping more took `proj ` for `proj`."""
    repo = new_repo(tmp_path / "proj ")
    (tmp_path / "proj").mkdir()
    driver = Driver(tmp_path / "home", repo)
    await driver.prompt(lambda: (repo / "a.txt").write_text("changed\n"))
    _, result = driver.undo()
    assert result.done == ["restored a.txt"] and (repo / "a.txt").read_text() == "a\n"


async def test_a_work_tree_reached_through_a_link_of_the_users_is_snapshotted(
    tmp_path: Path,
) -> None:
    """The link is on the way to the top, which the user chose: followed. Below the top no
    link is."""
    repo = new_repo(tmp_path / "real")
    (tmp_path / "via").symlink_to(tmp_path)
    (repo / "a.txt").write_text("changed\n")
    snapshots = GitSnapshots(tmp_path / "via" / "real")
    row = snapshots.git(["ls-tree", "-z", snapshots.take().tree, "a.txt"]).decode()
    assert snapshots.blobs([row.split()[2]]) == {row.split()[2]: b"changed\n"}


async def test_a_folder_swapped_for_a_link_out_is_never_read_through(tmp_path: Path) -> None:
    """A tracked folder replaced by a link to a folder outside (`~/.kube`): its files are
    absent to the snapshot (the link is recorded as a link), the outside bytes are in no
    object, and undo puts the folder back."""
    outside = tmp_path / "kube"
    outside.mkdir()
    (outside / "f.txt").write_bytes(b"KUBE SECRET\n")
    repo = new_repo(tmp_path / "repo", {"d/f.txt": "mine\n"})
    driver = Driver(tmp_path / "home", repo)

    def swap() -> None:
        (repo / "d" / "f.txt").unlink()
        (repo / "d").rmdir()
        os.symlink(outside, repo / "d")

    await driver.prompt(swap)
    _, result = driver.undo()
    assert not result.failed, result.failed
    assert not (repo / "d").is_symlink() and (repo / "d" / "f.txt").read_text() == "mine\n"
    objects = subprocess.run(["git", "cat-file", "--batch-all-objects", "--batch"], cwd=repo,
                             capture_output=True, check=True).stdout  # fmt: skip
    assert b"KUBE SECRET" not in objects
