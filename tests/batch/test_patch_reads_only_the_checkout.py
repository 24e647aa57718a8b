"""A task's patch is read by the driver, outside the task's sandbox: a name or a link the task
made must not carry a byte from outside its checkout into RESULTS.jsonl (issue 40)."""

from __future__ import annotations

import os
import shutil
import socket
from pathlib import Path

from di_code.batch.checkout import make_checkout, patch_of
from di_code.batch.checkout_tree import MAX_FILE_BYTES
from tests.batch.conftest import RunBatch, bash_call, make_repo, read_results, write_tasks
from tests.support.llm_server import LLMServer, Turn
from tests.support.permission_faults import needs_permission_faults
from tests.support.raw_repo import commit_raw, raw_git, read_tree

SECRET = b"-----BEGIN OPENSSH PRIVATE KEY----- the user's own key\n"


def plant_secret(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "id_ed25519").write_bytes(SECRET)
    (outside / "config").write_bytes(SECRET)  # as a ~/.kube folder holds it
    return outside


def applied(repo: Path, where: Path, patch: bytes) -> dict[str, tuple[bytes, bool]]:
    clean = make_checkout(str(repo), None, where, "clean")
    raw_git(clean.path, "apply", stdin=patch)
    return read_tree(clean.path)


def test_a_name_ending_in_cr_beside_a_link_is_its_own_file(tmp_path: Path) -> None:
    """`hash-object --stdin-paths` took `k\\r` for `k`, and hashed `k` through its link."""
    outside = plant_secret(tmp_path)
    commit_raw(tmp_path / "repo", {"a.txt": (b"a\n", False)})
    checkout = make_checkout(str(tmp_path / "repo"), None, tmp_path / "c" / "t", "t")
    (checkout.path / "k").symlink_to(outside / "id_ed25519")
    (checkout.path / "k\r").write_bytes(b"plain\n")
    expected = read_tree(checkout.path)
    patch = patch_of(checkout).data
    assert SECRET not in patch
    assert applied(tmp_path / "repo", tmp_path / "c" / "u", patch) == expected
    assert expected["k"] == (str(outside / "id_ed25519").encode(), False)


def test_a_tracked_folder_replaced_by_a_link_is_a_link(tmp_path: Path) -> None:
    outside = plant_secret(tmp_path)
    commit_raw(tmp_path / "repo", {"kube/config": (b"mine\n", False), "a": (b"a\n", False)})
    checkout = make_checkout(str(tmp_path / "repo"), None, tmp_path / "c" / "t", "t")
    shutil.rmtree(checkout.path / "kube")
    (checkout.path / "kube").symlink_to(outside)
    expected = read_tree(checkout.path)
    patch = patch_of(checkout).data
    assert SECRET not in patch
    assert applied(tmp_path / "repo", tmp_path / "c" / "u", patch) == expected
    assert expected["kube"] == (str(outside).encode(), False)


def test_a_tracked_folder_replaced_by_a_file_and_special_files(tmp_path: Path) -> None:
    commit_raw(tmp_path / "repo", {"d/x": (b"x\n", False)})
    checkout = make_checkout(str(tmp_path / "repo"), None, tmp_path / "c" / "t", "t")
    shutil.rmtree(checkout.path / "d")
    (checkout.path / "d").write_bytes(b"now a file\n")
    expected = read_tree(checkout.path)
    os.mkfifo(checkout.path / "fifo")  # never opened: it would block the driver
    patch = patch_of(checkout).data
    assert applied(tmp_path / "repo", tmp_path / "c" / "u", patch) == expected


def test_a_batch_task_cannot_put_an_outside_file_in_its_results(
    run_batch: RunBatch, llm_server: LLMServer, tmp_path: Path
) -> None:
    outside = plant_secret(tmp_path)
    make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    tasks = write_tasks(tmp_path / "tasks.jsonl", [{"id": "t", "repo": "repo", "prompt": "go"}])
    command = (
        f"ln -s {outside}/id_ed25519 k && printf plain > \"$(printf 'k\\r')\"; "
        f"ln {outside}/id_ed25519 hard; cp -r {outside} copied; true"  # the sandbox refuses
    )
    llm_server.script(bash_call(command), Turn(text="made them"))
    done = run_batch(str(tasks), "--out", "results.jsonl")
    assert done.returncode == 0, done.stderr
    results = (tmp_path / "results.jsonl").read_bytes()
    assert b"the user's own key" not in results
    assert b'"status": "done"' in results and b"+plain" in results


def test_a_huge_sparse_file_and_a_socket_are_left_out_and_named(tmp_path: Path) -> None:
    """A sparse 1 TiB file costs the driver a bounded read (it used to hash all of it), and
    is named in `left_out`; a tracked file over the limit stays as it was in the base; a
    socket is not opened. The rest of the patch is whole."""
    commit_raw(tmp_path / "repo", {"tracked.bin": (b"base\n", False), "a": (b"a\n", False)})
    checkout = make_checkout(str(tmp_path / "repo"), None, tmp_path / "c" / "t", "t")
    with (checkout.path / "huge").open("wb") as handle:
        handle.truncate(1 << 40)
    with (checkout.path / "tracked.bin").open("wb") as handle:
        handle.truncate(MAX_FILE_BYTES + 1)
    (checkout.path / "a").write_bytes(b"changed\n")
    listening = socket.socket(socket.AF_UNIX)
    listening.bind(str(checkout.path / "sock"))
    patch = patch_of(checkout)
    listening.close()
    assert sorted(name.split(":")[0] for name in patch.left_out) == ["huge", "tracked.bin"]
    assert patch.left_out[0].endswith(f"bytes, over the {MAX_FILE_BYTES:,} of one file")
    tree = applied(tmp_path / "repo", tmp_path / "c" / "u", patch.data)
    assert tree == {"tracked.bin": (b"base\n", False), "a": (b"changed\n", False)}


@needs_permission_faults
def test_an_unreadable_file_is_left_out_and_named(tmp_path: Path) -> None:
    commit_raw(tmp_path / "repo", {"a": (b"a\n", False)})
    checkout = make_checkout(str(tmp_path / "repo"), None, tmp_path / "c" / "t", "t")
    (checkout.path / "a").write_bytes(b"changed\n")
    (checkout.path / "locked").write_bytes(b"x")
    (checkout.path / "locked").chmod(0)
    patch = patch_of(checkout)
    assert patch.left_out == ("locked: not readable",)
    assert b"+changed" in patch.data


def test_a_left_out_file_is_named_in_the_results(
    run_batch: RunBatch, llm_server: LLMServer, tmp_path: Path
) -> None:
    make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    tasks = write_tasks(tmp_path / "tasks.jsonl", [{"id": "t", "repo": "repo", "prompt": "go"}])
    llm_server.script(bash_call("truncate -s 1T huge && echo b > b.txt"), Turn(text="made it"))
    done = run_batch(str(tasks), "--out", "results.jsonl")
    assert done.returncode == 0, done.stderr
    record = read_results(tmp_path / "results.jsonl")["t"]
    assert record["status"] == "done" and "+b" in record["patch"]
    assert record["left_out"] == [
        f"huge: {1 << 40:,} bytes, over the {MAX_FILE_BYTES:,} of one file"
    ]
