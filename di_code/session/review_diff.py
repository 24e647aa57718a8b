"""The changes a review looks at, read through the one git runner (di_code.session.git_run).

Three targets: the uncommitted changes (the work tree and the index against HEAD, and the
names of new files git does not track yet), a branch against a base (`BASE...HEAD`: what the
branch added since it left the base), or one commit (its message and its patch). A name the
user gives is resolved to a commit first (`rev-parse --verify --end-of-options`), so a
`--base` that looks like an option (`--output=FILE`) is refused as unknown, never read by git
as one. Diffs run with `--no-ext-diff --no-textconv`: a repository's `.gitattributes` may name
a diff driver or a textconv program, and di-code runs none (git_run empties the filters).

The diff is bounded (MAX_CHARS): a diff cut short says where, and names the files left out,
so the model (and the user) know what was not reviewed.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from di_code.session.git_run import GitError, run_git
from di_code.system.errors import DiCodeError

_NO_COMMIT = "the repository has no commit yet"
MAX_CHARS = 120_000
"""About 30k tokens of diff: room left in any context window for the files around it."""
_DIFF = (
    "--no-ext-diff",
    "--no-textconv",
    "--no-color",
    "--find-renames",
    "--ignore-submodules=dirty",
)
"""`--ignore-submodules=dirty`: git would look into a checked-out submodule's work tree (is it
dirty?) with the submodule's own config, whose filters git_run cannot know by name."""
_QUOTED = r'"(?:[^"\\]|\\.)*"'
_FILE_HEADER = re.compile(
    rf"^diff --git (?:{_QUOTED}|a/.*?) (?P<new>{_QUOTED}|b/.*)$", re.MULTILINE
)
"""A file's section; git quotes a name with a control character, a quote or (by default) a
non-ASCII letter in it, C-style: `diff --git "a/donn\\303\\251es.py" "b/donn\\303\\251es.py"`."""
_C_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}


class ReviewError(DiCodeError):
    """The target cannot be reviewed (not a repository, an unknown commit); one line."""

    exit_code = 2


@dataclass(frozen=True, slots=True)
class ReviewTarget:
    kind: Literal["uncommitted", "base", "commit"] = "uncommitted"
    ref: str = ""
    """The base branch or the commit, as the user named it."""

    def describe(self) -> str:
        if self.kind == "base":
            return f"the changes of this branch since it left {self.ref}"
        if self.kind == "commit":
            return f"commit {self.ref}"
        return "the uncommitted changes"

    def nothing(self) -> str:
        """Why there is nothing to review."""
        if self.kind == "base":
            return f"this branch has no changes since it left {self.ref}"
        if self.kind == "commit":
            return f"commit {self.ref} changes nothing"
        return "there are no uncommitted changes"


@dataclass(frozen=True, slots=True)
class ReviewDiff:
    target: ReviewTarget
    diff: str
    """The unified diff, cut to MAX_CHARS at a line's end."""
    untracked: tuple[str, ...] = ()
    """New files git does not track yet (uncommitted changes only): named, not shown."""
    left_out: str = ""
    """What the cut left out, for the model and the user; empty when the diff is whole."""

    @property
    def empty(self) -> bool:
        return not self.diff.strip() and not self.untracked


def read_diff(workspace: Path, target: ReviewTarget, limit: int = MAX_CHARS) -> ReviewDiff:
    """The diff of `target` in the repository around `workspace`; ReviewError (one line)."""
    try:
        if target.kind == "uncommitted":
            raw = run_git(workspace, ["diff", *_DIFF, _head_or_empty_tree(workspace)])
            untracked = _untracked(workspace)
        elif target.kind == "base":
            base = _commit(workspace, target.ref, f"no branch or commit {target.ref!r}")
            raw, untracked = run_git(workspace, ["diff", *_DIFF, f"{base}...HEAD"]), ()
        else:
            sha = _commit(workspace, target.ref, f"no commit {target.ref!r}")
            show = ["show", *_DIFF, "--format=commit %H%nAuthor: %an%n%n%B", sha]
            raw, untracked = run_git(workspace, show), ()
    except GitError as exc:
        raise ReviewError(_one_line(str(exc))) from None
    diff, left_out = cut(raw.decode("utf-8", errors="replace"), limit)
    return ReviewDiff(target, diff, untracked, left_out)


def _commit(workspace: Path, name: str, unknown: str) -> str:
    """The commit `name` names (its full id), or ReviewError saying `unknown`."""
    try:
        verify = ["rev-parse", "--verify", "--quiet", "--end-of-options"]
        out = run_git(workspace, [*verify, f"{name}^{{commit}}"])
    except GitError as exc:
        if "not a git repository" in str(exc):
            raise ReviewError("not inside a git repository: review reads git's changes") from None
        raise ReviewError(unknown) from None
    return out.decode().strip()


def _head_or_empty_tree(workspace: Path) -> str:
    """HEAD; in a repository with no commit yet, the empty tree: every file is new there, and
    a repository with no file at all has nothing to review."""
    try:
        return _commit(workspace, "HEAD", _NO_COMMIT)
    except ReviewError as exc:
        if str(exc) != _NO_COMMIT:
            raise
    return run_git(workspace, ["hash-object", "-t", "tree", "--stdin"]).decode().strip()


def _untracked(workspace: Path) -> tuple[str, ...]:
    out = run_git(workspace, ["ls-files", "-z", "--others", "--exclude-standard"])
    return tuple(os.fsdecode(name) for name in out.split(b"\0") if name)


def cut(diff: str, limit: int) -> tuple[str, str]:
    """`diff` cut at the last line end within `limit` characters, and what that left out
    (the files whose section starts after the cut, and how much of the diff was left)."""
    if len(diff) <= limit:
        return diff, ""
    end = diff.rfind("\n", 0, limit) + 1 or limit
    later = [_name(m.group("new")) for m in _FILE_HEADER.finditer(diff, end)]
    shown = [_name(m.group("new")) for m in _FILE_HEADER.finditer(diff, 0, end)]
    files = f"; files not shown: {', '.join(later)}" if later else ""
    partly = f"; {shown[-1]} shown only in part" if shown else ""
    note = f"[the diff was cut at {end} of {len(diff)} characters{partly}{files}]"
    return diff[:end], note


def _name(header: str) -> str:
    """The file's name in a section's header, `b/` and git's quoting taken off (the callers
    show it through the terminal's sanitizer)."""
    if not header.startswith('"'):
        return header[2:]
    raw, rest = bytearray(), header[3:-1]
    escape = re.compile(r"\\([0-7]{3}|.)")
    at = 0
    for found in escape.finditer(rest):
        raw += rest[at : found.start()].encode()
        code = found.group(1)
        raw.append(int(code, 8) if len(code) == 3 else _C_ESCAPES.get(code, ord(code)))
        at = found.end()
    raw += rest[at:].encode()
    return raw.decode("utf-8", errors="replace")


def _one_line(text: str) -> str:
    return (text.strip().splitlines() or ["no reason given"])[0]
