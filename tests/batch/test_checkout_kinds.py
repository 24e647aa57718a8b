"""Each kind of `repo` is taken for what it is (issue 40): a bare repository and a folder whose
name ends in a space are cloned (not copied as plain folders with a made-up base), and a
branch of a URL clone is found as it is by path."""

from __future__ import annotations

from pathlib import Path

import pytest

from di_code.batch.checkout import CheckoutError, make_checkout
from tests.batch.conftest import RunBatch, make_repo, read_results, write_tasks
from tests.support.git import git
from tests.support.llm_server import LLMServer, Turn
from tests.support.raw_repo import read_tree


def with_develop(folder: Path) -> tuple[str, str]:
    """A repository with `main` (a.txt) and `develop` (a.txt, d.txt): their commits."""
    make_repo(folder, {"a.txt": "a\n"})
    git(folder, "checkout", "--quiet", "-b", "develop")
    (folder / "d.txt").write_text("d\n")
    git(folder, "add", "d.txt")
    git(folder, "commit", "--quiet", "-m", "develop")
    git(folder, "checkout", "--quiet", "main")
    return git(folder, "rev-parse", "main").strip(), git(folder, "rev-parse", "develop").strip()


ODD_NAMES = ["proj ", " proj", "pro\tj", "-proj", "pro\nj", "proj\n", "caf\u00e9"]


@pytest.mark.parametrize("name", ODD_NAMES)
def test_a_work_tree_with_an_odd_name_is_cloned_at_its_commits(tmp_path: Path, name: str) -> None:
    main, develop = with_develop(tmp_path / name)
    checkout = make_checkout(str(tmp_path / name), None, tmp_path / "w" / "t", "t")
    assert checkout.base == main
    assert read_tree(checkout.path) == {"a.txt": (b"a\n", False)}
    other = make_checkout(str(tmp_path / name), "develop", tmp_path / "w" / "u", "u")
    assert other.base == develop


@pytest.mark.parametrize("source", ["path", "file-url"])
def test_a_bare_repository_is_cloned_not_copied(tmp_path: Path, source: str) -> None:
    main, develop = with_develop(tmp_path / "work")
    git(tmp_path, "clone", "--quiet", "--bare", "work", "bare.git")
    repo = str(tmp_path / "bare.git")
    if source == "file-url":
        repo = f"file://{repo}"
    checkout = make_checkout(repo, None, tmp_path / "w" / "t", "t")
    assert checkout.base == main
    assert read_tree(checkout.path) == {"a.txt": (b"a\n", False)}  # not HEAD, config, objects/
    assert make_checkout(repo, "develop", tmp_path / "w" / "u", "u").base == develop


def test_a_url_clone_finds_a_branch_as_the_path_does(tmp_path: Path) -> None:
    _, develop = with_develop(tmp_path / "repo")
    by_path = make_checkout(str(tmp_path / "repo"), "develop", tmp_path / "w" / "p", "p")
    by_url = make_checkout(f"file://{tmp_path / 'repo'}", "develop", tmp_path / "w" / "u", "u")
    assert by_path.base == by_url.base == develop
    full = make_checkout(f"file://{tmp_path / 'repo'}", "refs/heads/develop", tmp_path / "f", "f")
    assert full.base == develop
    with pytest.raises(CheckoutError, match="no commit 'nowhere'"):
        make_checkout(f"file://{tmp_path / 'repo'}", "nowhere", tmp_path / "w" / "n", "n")


def test_a_bare_repository_inside_a_work_tree_is_itself(tmp_path: Path) -> None:
    make_repo(tmp_path / "outer", {"outer.txt": "outer\n"})
    with_develop(tmp_path / "inner-work")
    git(tmp_path, "clone", "--quiet", "--bare", "inner-work", "outer/vendor.git")
    checkout = make_checkout(
        str(tmp_path / "outer" / "vendor.git"), None, tmp_path / "w" / "t", "t"
    )
    assert read_tree(checkout.path) == {"a.txt": (b"a\n", False)}


def test_a_batch_on_an_odd_folder_name_and_a_bare_repository(
    run_batch: RunBatch, llm_server: LLMServer, tmp_path: Path
) -> None:
    main, _ = with_develop(tmp_path / "proj ")
    git(tmp_path, "clone", "--quiet", "--bare", "proj ", "bare.git")
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [
            {"id": "spaced", "repo": "proj ", "prompt": "look"},
            {"id": "bare", "repo": "bare.git", "ref": "develop", "prompt": "look"},
        ],
    )
    llm_server.script(Turn(text="one"), Turn(text="two"))
    done = run_batch(str(tasks), "--out", "r.jsonl", "--jobs", "1")
    assert done.returncode == 0, done.stderr
    results = read_results(tmp_path / "r.jsonl")
    assert results["spaced"]["base"] == main
    assert results["bare"]["base"] == git(tmp_path / "proj ", "rev-parse", "develop").strip()
    assert results["spaced"]["patch"] == results["bare"]["patch"] == ""
