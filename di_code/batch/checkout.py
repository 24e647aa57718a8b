"""Each task's own checkout, so that no task touches the user's working tree or another task's.

A local repository gets a `git worktree` on a new branch (`di-code/batch/ID`), a git URL a
clone, a folder outside git a copy made into a repository of its own (so that its patch can be
taken the same way). The patch is the checkout's whole state against its base commit, new
files included, binary-safe: `git add -A` into the checkout's own index, then
`git diff --cached --binary BASE`. git runs with di-code's safe settings (session.git_run): no
hook or program the repository names runs.
"""

from __future__ import annotations

import contextlib
import shutil
from dataclasses import dataclass
from pathlib import Path

from di_code.session.git_run import GitError, run_git

BRANCH_PREFIX = "di-code/batch/"
_AUTHOR = ("-c", "user.name=di-code batch", "-c", "user.email=batch@di-code.invalid")


class CheckoutError(Exception):
    """The task's checkout could not be made; the message is one line."""


@dataclass(frozen=True, slots=True)
class Checkout:
    path: Path
    base: str
    """The commit the task started from: its patch is against it."""
    source: Path | None
    """The local repository a worktree belongs to (None for a clone or a copy)."""
    branch: str | None


def is_url(repo: str) -> bool:
    return "://" in repo or (repo.startswith("git@") and ":" in repo)


def make_checkout(repo: str, ref: str | None, where: Path, task_id: str) -> Checkout:
    """A fresh checkout of `repo` at `ref` in `where` (anything left there by a killed run is
    removed first; a worktree's branch is reset by `-B`, a stale registration overridden)."""
    if where.exists():
        remove_leftover(repo, where, task_id)
    where.parent.mkdir(parents=True, exist_ok=True)
    try:
        if is_url(repo):
            return _clone(repo, ref, where)
        folder = Path(repo).expanduser().resolve()
        if not folder.is_dir():
            raise CheckoutError(f"repo {repo!r} is not a folder or a git URL")
        top = _toplevel(folder)
        if top is None:
            if ref is not None:
                raise CheckoutError(f"repo {repo!r} is not in git: it has no ref {ref!r}")
            return _copy(folder, where)
        return _worktree(top, ref, where, task_id)
    except GitError as exc:
        raise CheckoutError(str(exc)) from None


def _toplevel(folder: Path) -> Path | None:
    try:
        return Path(run_git(folder, ["rev-parse", "--show-toplevel"]).decode().strip())
    except GitError:
        return None


def _worktree(top: Path, ref: str | None, where: Path, task_id: str) -> Checkout:
    base = _commit(top, ref or "HEAD")
    branch = BRANCH_PREFIX + task_id
    run_git(top, ["worktree", "add", "--quiet", "--force", "-B", branch, str(where), base])
    return Checkout(where, base, top, branch)


def _clone(url: str, ref: str | None, where: Path) -> Checkout:
    # the URL is the user's own choice (the task file): any transport git knows may fetch it
    run_git(where.parent, ["-c", "protocol.allow=always", "clone", "--quiet", url, str(where)])
    base = _commit(where, ref or "HEAD")
    run_git(where, ["checkout", "--quiet", "--detach", base])
    return Checkout(where, base, None, None)


def _copy(folder: Path, where: Path) -> Checkout:
    batch_folder = where.parent.parent.resolve()  # OUT.work: never copied into a task's copy

    def inside_batch(directory: str, names: list[str]) -> list[str]:
        return [name for name in names if (Path(directory) / name).resolve() == batch_folder]

    shutil.copytree(folder, where, symlinks=True, ignore=inside_batch)
    run_git(where, ["init", "--quiet"])
    run_git(where, ["add", "-A"])
    run_git(where, [*_AUTHOR, "commit", "--quiet", "--allow-empty", "-m", "base"])
    return Checkout(where, _commit(where, "HEAD"), None, None)


def _commit(repo: Path, ref: str) -> str:
    try:
        return run_git(repo, ["rev-parse", "--verify", f"{ref}^{{commit}}"]).decode().strip()
    except GitError:
        raise CheckoutError(f"no commit {ref!r} in {repo}") from None


def patch_of(checkout: Checkout) -> bytes:
    """Everything the task changed, as a patch `git apply` takes on the base commit."""
    run_git(checkout.path, ["add", "-A"])
    return run_git(checkout.path, ["diff", "--cached", "--binary", "--no-ext-diff", checkout.base])


def remove_checkout(checkout: Checkout) -> None:
    """The checkout, and a worktree's branch, gone (best effort: a leftover is said by git)."""
    if checkout.source is not None:
        _remove_worktree(checkout.source, checkout.path, checkout.branch)
    shutil.rmtree(checkout.path, ignore_errors=True)


def remove_leftover(repo: str, where: Path, task_id: str) -> None:
    """What a killed earlier run left in `where` for this task."""
    if not is_url(repo):
        top = _toplevel(Path(repo).expanduser().resolve()) if Path(repo).is_dir() else None
        if top is not None:
            _remove_worktree(top, where, BRANCH_PREFIX + task_id)
    shutil.rmtree(where, ignore_errors=True)


def _remove_worktree(top: Path, where: Path, branch: str | None) -> None:
    steps = [["worktree", "remove", "--force", str(where)]]
    if branch is not None:
        steps.append(["branch", "-D", "--quiet", branch])
    for args in steps:
        with contextlib.suppress(GitError):  # already gone
            run_git(top, args)
