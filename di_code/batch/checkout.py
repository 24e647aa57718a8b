"""Each task's own checkout, so that no task touches the user's repository or another task's.

A checkout is a repository of its own in the task's folder, on a branch `di-code/batch/ID` at
the task's base commit. A local repository is cloned with its objects shared (nothing is
copied, and nothing but git's refresh of an object's time is written into the user's
repository: any number of tasks can start and end on one repository at once), a git URL is
cloned (README's transports only), a folder outside git is copied and its files hashed as
they are into a first commit.

No program a repository names runs: every git call goes through session.git_run, the clone
copies no hooks, and the checkout's own `info/attributes` (which beats every `.gitattributes`)
unsets each attribute that converts bytes or picks a filter, so each file is its blob's bytes.
The patch is the checkout's tree (batch.checkout_tree: raw bytes, no filter, read without
leaving the checkout: a link is a link) against the base, by `diff-tree` without textconv or
external diff: `git apply` on the base gives back the task's files byte for byte.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from di_code.batch.checkout_tree import MAX_FILE_BYTES, checkout_tree, tree_entries
from di_code.session.git_run import GitError, GitStopped, clone, remote_transport, run_git
from di_code.system.errors import DiCodeError

BRANCH_PREFIX = "di-code/batch/"
RAW_ATTRIBUTES = "* -text !eol -filter -ident -working-tree-encoding\n"
"""No eol conversion, no filter (clean, smudge, process), no `$Id$`, no re-encoding."""
_AUTHOR = ("di-code batch", "batch@di-code.invalid")
_PATCH = [
    "diff-tree",
    "-p",
    "--binary",
    "--full-index",
    "--no-textconv",
    "--no-ext-diff",
    "--no-renames",
    "--ignore-submodules",
    "--no-color",
    "--src-prefix=a/",
    "--dst-prefix=b/",
]
"""Plumbing (no `diff.*` settings of the user's), no program, every blob named in full."""


class CheckoutError(DiCodeError):
    """The task's checkout could not be made; the message is one line."""


class CheckoutStopped(CheckoutError):
    """The checkout was stopped while its clone ran (Ctrl-C, or the task's timeout)."""


@dataclass(frozen=True, slots=True)
class Checkout:
    path: Path
    base: str
    """The commit the task started from: its patch is against it."""
    left_out: tuple[str, ...] = ()
    """Files of a copied folder its base does not hold as they are (not copied, or left out
    of its tree by checkout_tree)."""


@dataclass(frozen=True, slots=True)
class Patch:
    data: bytes
    left_out: tuple[str, ...] = ()
    """`NAME: why` for each file the patch does not give as the task left it."""


def is_url(repo: str) -> bool:
    """Whether `repo` is a git URL to clone (else a folder); CheckoutError (one line) for a
    transport README does not name (`ext::`, `fd::`, ...)."""
    try:
        return remote_transport(repo) is not None
    except GitError as exc:
        raise CheckoutError(str(exc)) from None


def make_checkout(
    repo: str,
    ref: str | None,
    where: Path,
    task_id: str,
    stopped: Callable[[], bool] | None = None,
) -> Checkout:
    """A fresh checkout of `repo` at `ref` in `where` (anything a killed run left there is
    removed first; nothing is left there when this fails); a clone ends, with all it started,
    once `stopped()` says so (CheckoutStopped)."""
    shutil.rmtree(where, ignore_errors=True)
    where.parent.mkdir(parents=True, exist_ok=True)
    try:
        if is_url(repo):
            clone(repo, where, stopped=stopped)
            return _on_branch(where, _cloned_commit(where, ref), task_id)
        folder = Path(repo).expanduser().resolve()
        if not folder.is_dir():
            raise CheckoutError(f"repo {repo!r} is not a folder or a git URL")
        if _is_git_directory(folder):  # a bare repository (or a `.git` folder), named as it is
            _clone_local(folder, where)
            return _on_branch(where, _cloned_commit(where, ref), task_id)
        top = _work_tree_top(folder)
        if top is None:
            if ref is not None:
                raise CheckoutError(f"repo {repo!r} is not in git: it has no ref {ref!r}")
            return _copy(folder, where, task_id)
        base = _commit(top, ref)
        _clone_local(top, where)
        return _on_branch(where, base, task_id)
    except (CheckoutError, GitError) as exc:
        shutil.rmtree(where, ignore_errors=True)
        kind = CheckoutStopped if isinstance(exc, GitStopped) else CheckoutError
        raise kind(str(exc)) from None


def _clone_local(source: Path, where: Path) -> None:
    """A clone of the local repository `source` that borrows its objects (`--shared`), but for
    a path holding a newline: git keeps a borrowed path as one line of `objects/info/alternates`,
    so that clone has its objects of its own (hard-linked where the file system allows)."""
    clone(str(source), where, shared="\n" not in str(source))


def _on_branch(where: Path, base: str, task_id: str) -> Checkout:
    _raw_attributes(where)
    branch = BRANCH_PREFIX + task_id
    run_git(where, ["checkout", "--quiet", "--no-recurse-submodules", "-B", branch, base])
    return Checkout(where, base)


def _copy(folder: Path, where: Path, task_id: str) -> Checkout:
    batch_folder = where.parent.parent.resolve()  # OUT.work: never copied into a task's copy
    not_copied: list[str] = []

    def left_out(directory: str, names: list[str]) -> list[str]:
        path = Path(directory)
        skipped = []
        for name in names:
            info = (path / name).lstat()
            if stat.S_ISLNK(info.st_mode):
                continue  # copied as a link (a loop too), never followed
            if (path / name) == batch_folder or (path == folder and name == ".git"):
                skipped.append(name)
                continue
            why = _not_copied(info)
            if why is not None:
                skipped.append(name)
                shown = (path / name).relative_to(folder).as_posix()
                not_copied.append(f"{os.fsencode(shown).decode(errors='backslashreplace')}: {why}")
        return skipped

    shutil.copytree(folder, where, symlinks=True, ignore=left_out)
    run_git(where, ["init", "--quiet", "--template="])
    _raw_attributes(where)
    tree = checkout_tree(where)
    commit = ["commit-tree", "--no-gpg-sign", "-m", "base", tree.tree]
    base = run_git(where, commit, author=_AUTHOR).decode().strip()
    run_git(where, ["symbolic-ref", "HEAD", f"refs/heads/{BRANCH_PREFIX}{task_id}"])
    run_git(where, ["reset", "--quiet", base])
    return Checkout(where, base, (*not_copied, *tree.left_out))


def _not_copied(info: os.stat_result) -> str | None:
    """Why a copied folder's entry is not copied, or None: a FIFO would block its copy, a
    socket or device cannot be copied, and a file over MAX_FILE_BYTES could be in no base or
    patch (a sparse 1 TiB image would be written out whole)."""
    if stat.S_ISDIR(info.st_mode):
        return None
    if not stat.S_ISREG(info.st_mode):
        return "a FIFO, socket or device: not copied"
    if info.st_size > MAX_FILE_BYTES:
        return f"{info.st_size:,} bytes, over the {MAX_FILE_BYTES:,} of one file: not copied"
    return None


def _raw_attributes(where: Path) -> None:
    """The checkout's own git directory (made by di-code, never the user's) unsets every
    attribute that would change bytes or run a filter, above any `.gitattributes`."""
    info = where / ".git" / "info"
    info.mkdir(exist_ok=True)
    (info / "attributes").write_text(RAW_ATTRIBUTES, encoding="utf-8")


def _is_git_directory(folder: Path) -> bool:
    """Whether `folder` is itself a repository's git directory, as git tells one (its HEAD,
    objects and refs): di-code's git never discovers a bare repository on its own
    (`safe.bareRepository=explicit`), so one the task file names is recognised here."""
    return (
        (folder / "HEAD").is_file() and (folder / "objects").is_dir() and (folder / "refs").is_dir()
    )


def _work_tree_top(folder: Path) -> Path | None:
    """The top of the work tree `folder` is in, its name exactly as git prints it (only the
    line's end taken off: `proj ` keeps its space), or None outside one."""
    try:
        printed = run_git(folder, ["rev-parse", "--show-toplevel"]).removesuffix(b"\n")
    except GitError:
        return None
    top = Path(os.fsdecode(printed))
    return top if printed and folder.is_relative_to(top) else None


def _cloned_commit(clone_path: Path, ref: str | None) -> str:
    """`ref` in a fresh clone, where the source's branches are `origin/NAME` (only its default
    branch has a local name): a branch is found as the source would find it."""
    if ref is not None and ref != "HEAD":
        try:
            return _commit(clone_path, ref)
        except CheckoutError:
            branch = ref.removeprefix("refs/heads/")
            return _commit(clone_path, f"refs/remotes/origin/{branch}", shown=ref)
    return _commit(clone_path, ref)


def _commit(repo: Path, ref: str | None, *, shown: str | None = None) -> str:
    name = f"{ref or 'HEAD'}^{{commit}}"
    try:
        return run_git(repo, ["rev-parse", "--verify", "--end-of-options", name]).decode().strip()
    except GitError:
        raise CheckoutError(f"no commit {shown or ref or 'HEAD'!r} in {repo}") from None


def patch_of(checkout: Checkout) -> Patch:
    """Everything the task changed, as a patch `git apply` takes on the base commit."""
    tree = checkout_tree(checkout.path, tree_entries(checkout.path, checkout.base))
    data = run_git(checkout.path, [*_PATCH, checkout.base, tree.tree])
    return Patch(data, tuple(dict.fromkeys(checkout.left_out + tree.left_out)))


def remove_checkout(checkout: Checkout) -> None:
    """The checkout gone (best effort); the user's repository holds nothing of it."""
    shutil.rmtree(checkout.path, ignore_errors=True)
