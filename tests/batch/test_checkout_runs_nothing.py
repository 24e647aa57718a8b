"""A batch task's checkout, patch and removal run no program that the repository or the
user's own git config names, write nothing into the user's repository, and give exact bytes:
every vector is planted in a real repository and a real ~/.gitconfig, each program leaves a
marker file when it runs, and the marker folder must stay empty."""

from __future__ import annotations

from base64 import b64decode
from pathlib import Path

import pytest

from di_code.batch.checkout import make_checkout, patch_of, remove_checkout
from tests.batch.conftest import RunBatch, bash_call, read_results, write_tasks
from tests.support.llm_server import LLMServer, Turn
from tests.support.raw_repo import RawTree, blobs_of, commit_raw, listing, raw_git, read_tree

HOOKS = (
    "post-checkout",
    "post-commit",
    "pre-commit",
    "post-index-change",
    "reference-transaction",
    "pre-auto-gc",
    "post-rewrite",
)
ATTRIBUTES = b"""\
*.txt filter=evil diff=evil
*.dat filter=proc
*.home filter=home
*.crlf text eol=crlf
*.id ident
*.u16 working-tree-encoding=UTF-16
"""
BASE: RawTree = {
    ".gitattributes": (ATTRIBUTES, False),
    "a.txt": (b"plain text\n", False),
    "b.dat": (b"data\n", False),
    "c.home": (b"home\n", False),
    "d.crlf": (b"one\ntwo\r\nthree", False),
    "e.id": (b"$Id$\n", False),
    "f.u16": ("caf\u00e9\n".encode(), False),
    "g.png": (bytes(range(256)) * 4, False),
    "run.sh": (b"#!/bin/sh\necho hi\n", True),
}


def program(markers: Path, name: str) -> str:
    """A program that leaves `markers/name` when it runs and passes stdin through (as a
    filter would)."""
    script = markers.parent / f"{name}.sh"
    script.write_text(f"#!/bin/sh\ntouch {markers / name}\ncat\n")
    script.chmod(0o755)
    return str(script)


def plant_repository(repo: Path, markers: Path) -> None:
    """The repository's own config and hooks name a program for every hook git has."""
    config = (
        f'[filter "evil"]\n\tclean = {program(markers, "clean")}\n'
        f"\tsmudge = {program(markers, 'smudge')}\n\trequired = true\n"
        f'[filter "proc"]\n\tprocess = {program(markers, "process")}\n\trequired = true\n'
        f'[diff "evil"]\n\ttextconv = {program(markers, "textconv")}\n'
        f"[diff]\n\texternal = {program(markers, 'external')}\n"
        f"[core]\n\tfsmonitor = {program(markers, 'fsmonitor')}\n"
        f"\tpager = {program(markers, 'pager')}\n"
        f"[uploadpack]\n\tpackObjectsHook = {program(markers, 'pack-hook')}\n"
    )
    with (repo / ".git" / "config").open("a") as handle:
        handle.write(config)
    for hook in HOOKS:
        target = repo / ".git" / "hooks" / hook
        target.write_text(Path(program(markers, f"hook-{hook}")).read_text())
        target.chmod(0o755)


def plant_home(home: Path, markers: Path) -> None:
    """The user's own ~/.gitconfig: a textconv for *.png (as in issue 32), filters, an
    fsmonitor, a hooks folder and a template folder with hooks."""
    hooks = home / "hooks"
    templates = home / "templates" / "hooks"
    for folder in (hooks, templates):
        folder.mkdir(parents=True)
        for hook in HOOKS:
            (folder / hook).write_text(Path(program(markers, f"home-{hook}")).read_text())
            (folder / hook).chmod(0o755)
    (home / "attributes").write_text("*.png diff=png filter=home\n")
    (home / ".gitconfig").write_text(
        f'[diff "png"]\n\ttextconv = {program(markers, "home-textconv")}\n'
        f'[filter "home"]\n\tclean = {program(markers, "home-clean")}\n'
        f"\tsmudge = {program(markers, 'home-smudge')}\n"
        f"\tprocess = {program(markers, 'home-process')}\n"
        f"[core]\n\tattributesFile = {home / 'attributes'}\n"
        f"\tfsmonitor = {program(markers, 'home-fsmonitor')}\n\thooksPath = {hooks}\n"
        f"\tautocrlf = true\n"
        f"[init]\n\ttemplateDir = {home / 'templates'}\n"
        f"[submodule]\n\trecurse = true\n"
    )


@pytest.fixture
def hostile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str, Path]:
    """(repository, base commit, marker folder), with HOME a planted home."""
    markers = tmp_path / "markers"
    markers.mkdir()
    repo = tmp_path / "repo"
    base = commit_raw(repo, BASE)
    plant_repository(repo, markers)
    home = tmp_path / "home"
    plant_home(home, markers)
    monkeypatch.setenv("HOME", str(home))
    return repo, base, markers


def change(folder: Path) -> None:
    """What a task might do: edit, make binary, drop a trailing newline, delete, add, chmod."""
    (folder / "a.txt").write_bytes(b"plain text\nmore\n")
    (folder / "d.crlf").write_bytes(b"one\r\ntwo\nthree\r\n")
    (folder / "g.png").write_bytes(bytes(reversed(range(256))) * 3)
    (folder / "e.id").unlink()
    (folder / "new.dat").write_bytes(b"\x00\xffnew\r\nno newline")
    (folder / "f.u16").write_bytes("caf\u00e9 au lait".encode("utf-16"))
    (folder / "run.sh").chmod(0o644)
    (folder / "c.home").chmod(0o755)


def test_checkout_patch_and_removal_run_nothing_and_are_byte_exact(
    hostile: tuple[Path, str, Path], tmp_path: Path
) -> None:
    repo, base, markers = hostile
    git_dir_before = listing(repo / ".git")
    checkout = make_checkout(str(repo), None, tmp_path / "work" / "checkouts" / "t1", "t1")
    assert checkout.base == base
    assert read_tree(checkout.path) == BASE  # the blobs' bytes: no smudge, eol, ident, encoding
    change(checkout.path)
    expected = read_tree(checkout.path)
    patch = patch_of(checkout).data
    remove_checkout(checkout)
    assert not checkout.path.exists()

    fresh = make_checkout(str(repo), None, tmp_path / "work" / "checkouts" / "t2", "t2")
    raw_git(fresh.path, "apply", stdin=patch)
    assert read_tree(fresh.path) == expected
    remove_checkout(fresh)
    assert sorted(p.name for p in markers.iterdir()) == []
    assert listing(repo / ".git") == git_dir_before  # nothing written into the user's .git
    assert blobs_of(repo, "main") == BASE


def test_a_git_directory_named_as_the_repo_runs_nothing(
    hostile: tuple[Path, str, Path], tmp_path: Path
) -> None:
    """A bare repository (here the planted `.git` itself) is cloned as it is, its programs
    not run, and nothing written into it."""
    repo, base, markers = hostile
    git_dir_before = listing(repo / ".git")
    checkout = make_checkout(str(repo / ".git"), None, tmp_path / "checkouts" / "g", "g")
    assert checkout.base == base
    assert read_tree(checkout.path) == BASE
    change(checkout.path)
    assert b"GIT binary patch" in patch_of(checkout).data
    remove_checkout(checkout)
    assert sorted(p.name for p in markers.iterdir()) == []
    assert listing(repo / ".git") == git_dir_before


def test_a_file_url_clone_runs_nothing_and_is_byte_exact(
    hostile: tuple[Path, str, Path], tmp_path: Path
) -> None:
    repo, base, markers = hostile
    checkout = make_checkout(f"file://{repo}", "main", tmp_path / "checkouts" / "u", "u")
    assert checkout.base == base
    assert read_tree(checkout.path) == BASE
    change(checkout.path)
    patch = patch_of(checkout).data
    remove_checkout(checkout)
    assert b"GIT binary patch" in patch and b"new mode 100644" in patch
    assert sorted(p.name for p in markers.iterdir()) == []


def test_a_folder_outside_git_is_copied_and_hashed_without_filters(
    hostile: tuple[Path, str, Path], tmp_path: Path
) -> None:
    """The copy's own repository is made by di-code: its base holds the bytes as they were,
    though the home config names filters, autocrlf and templates with hooks."""
    _, _, markers = hostile
    plain = tmp_path / "plain"
    plain.mkdir()
    for path, (content, executable) in BASE.items():
        (plain / path).write_bytes(content)
        (plain / path).chmod(0o755 if executable else 0o644)
    checkout = make_checkout(str(plain), None, tmp_path / "checkouts" / "p", "p")
    assert blobs_of(checkout.path, checkout.base) == BASE
    change(checkout.path)
    expected = read_tree(checkout.path)
    patch = patch_of(checkout).data
    remove_checkout(checkout)
    fresh = make_checkout(str(plain), None, tmp_path / "checkouts" / "q", "q")
    raw_git(fresh.path, "apply", stdin=patch)
    assert read_tree(fresh.path) == expected
    remove_checkout(fresh)
    assert sorted(p.name for p in markers.iterdir()) == []
    assert read_tree(plain) == BASE


def test_a_submodule_is_neither_fetched_nor_in_the_patch(
    hostile: tuple[Path, str, Path], tmp_path: Path
) -> None:
    """`.gitmodules` names an `ext::` URL and the home config says `submodule.recurse`."""
    repo, _, markers = hostile
    gitmodules = f'[submodule "sub"]\n\tpath = sub\n\turl = ext::sh -c touch% {markers}/ext\n'
    blob = raw_git(repo, "hash-object", "-w", "--no-filters", "--stdin", stdin=gitmodules.encode())
    for entry in (f"100644,{blob.decode().strip()},.gitmodules", f"160000,{'1' * 40},sub"):
        raw_git(repo, "update-index", "--add", "--cacheinfo", entry)
    tree = raw_git(repo, "write-tree").decode().strip()
    commit = raw_git(repo, "commit-tree", tree, "-p", "main", "-m", "sub").decode().strip()
    raw_git(repo, "update-ref", "refs/heads/main", commit)
    checkout = make_checkout(str(repo), None, tmp_path / "checkouts" / "s", "s")
    assert list((checkout.path / "sub").iterdir()) == []
    (checkout.path / "a.txt").write_bytes(b"changed\n")
    patch = patch_of(checkout).data
    remove_checkout(checkout)
    assert patch.startswith(b"diff --git a/a.txt b/a.txt\n") and b"sub" not in patch
    assert sorted(p.name for p in markers.iterdir()) == []


def test_a_batch_on_the_planted_repository_runs_nothing(
    hostile: tuple[Path, str, Path], tmp_path: Path, run_batch: RunBatch, llm_server: LLMServer
) -> None:
    """The whole chain: the driver's checkout and patch, and the task's `di-code run` (its
    checkpoints run git in the checkout too), with the planted repository and home."""
    repo, _, markers = hostile
    tasks = write_tasks(tmp_path / "t.jsonl", [{"id": "h", "repo": str(repo), "prompt": "go"}])
    change = "printf 'x\\r\\ny' > d.crlf; printf '\\0\\377PNG' > g.png; rm e.id; echo n > n.txt"
    llm_server.script(bash_call(change), Turn(text="changed"))
    done = run_batch(str(tasks), "--out", "r.jsonl", "--keep")
    assert done.returncode == 0, done.stderr
    record = read_results(tmp_path / "r.jsonl")["h"]
    kept = Path(record["checkout"])
    fresh = make_checkout(str(repo), None, tmp_path / "fresh", "fresh")
    patch = record.get("patch")
    raw_git(
        fresh.path, "apply", stdin=patch.encode() if patch else b64decode(record["patch_base64"])
    )
    assert read_tree(fresh.path) == read_tree(kept) != BASE
    assert sorted(p.name for p in markers.iterdir()) == []
