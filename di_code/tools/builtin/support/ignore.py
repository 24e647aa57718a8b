"""A Python walk over a folder that honours .gitignore the way git reads it, for when rg is
missing; and the globs of grep and find, which are read the same way.

A .gitignore is read as git reads it (gitignore(5); checked against git itself in
tests/tools/test_gitignore_vs_git.py): lines split at a newline (a carriage return before it
dropped), blank lines and `#` comments skipped, trailing spaces dropped unless escaped; `!`
re-includes; a trailing `/` matches folders only; a pattern with a `/` elsewhere is anchored to
its .gitignore's folder, one without matches a name at any depth; globs as in `wildmatch`; a
rule git could never match (an unclosed `[`) matches nothing. .gitignore files apply from the
folders above the search root too (as rg does without a git repository, `--no-require-git`);
the last matching rule wins, deeper files last; an ignored folder is not entered. Like
`rg --hidden`, dotfiles are included, `.git` is skipped, symlinks are not followed and entries
come in `rg --sort path` order (by name within each folder, folders entered where they sort).
Not supported: `.ignore`/`.rgignore`, the global excludes file and `.git/info/exclude` (rg is
run with those switched off too).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from di_code.system.files.opener import open_real, read_at_most
from di_code.tools.builtin.support.errors import ToolError
from di_code.tools.builtin.support.wildmatch import Glob, GlobError, parse_glob

if TYPE_CHECKING:
    from di_code.system.abort import AbortSignal  # annotations only: no asyncio in grep's worker

IGNORE_MAX_BYTES = 1024 * 1024
"""A larger .gitignore is not read (git's own limit is 100 MB; no real one comes near 1 MB)."""


@dataclass(frozen=True, slots=True)
class Rule:
    glob: Glob
    anchored: bool
    """With a `/`: matched against the path below the .gitignore's folder, else the name."""
    negated: bool
    dir_only: bool

    def matches(self, relative: str) -> bool:
        """`relative`: the path below the rule's folder, `/`-separated."""
        return self.glob.matches(relative if self.anchored else relative.rpartition("/")[2])


@dataclass(frozen=True, slots=True)
class IgnoreFile:
    base: Path
    rules: tuple[Rule, ...]


def parse_rule(line: str) -> Rule | None:
    """One .gitignore line as git reads it; None for blanks, comments and rules git could
    never match (an unclosed `[`, an unknown `[:class:]`)."""
    if not line or line.startswith("#"):
        return None
    text = trim_trailing_spaces(line)
    negated = text.startswith("!")
    text = text[1:] if negated else text
    dir_only = text.endswith("/")
    text = text.removesuffix("/")
    anchored = "/" in text
    text = text.removeprefix("/")
    if not text:
        return None
    try:
        return _rule(text, anchored, negated, dir_only)
    except GlobError:
        return None


def _rule(text: str, anchored: bool, negated: bool, dir_only: bool) -> Rule:
    glob = parse_glob(text)
    name_glob = glob.name_only() if anchored else None
    if name_glob is not None:  # `**/*.py` is `*.py`: matching names only is faster
        return Rule(name_glob, False, negated, dir_only)
    return Rule(glob, anchored, negated, dir_only)


@functools.lru_cache(maxsize=64)
def compile_glob(pattern: str) -> Rule:
    """The `glob` of grep and `pattern` of find, read as a .gitignore line is (without `!` or a
    trailing `/`): a name at any depth, or with a `/` a path below the searched folder."""
    try:
        return _rule(pattern.removeprefix("/"), "/" in pattern, False, False)
    except GlobError as exc:
        shown = pattern if pattern.isprintable() else repr(pattern)
        raise ToolError(f"Invalid glob {shown}: {exc}") from None


def trim_trailing_spaces(line: str) -> str:
    """Drop trailing spaces, but not one escaped with a backslash (`a\\ ` keeps it)."""
    end = len(line.rstrip(" "))
    backslashes = len(line[:end]) - len(line[:end].rstrip("\\"))
    return line[: end + 1] if backslashes % 2 and end < len(line) else line[:end]


def load_ignore(folder: Path) -> IgnoreFile | None:
    try:
        with open_real(folder / ".gitignore") as f:
            data = read_at_most(f, IGNORE_MAX_BYTES)
    except OSError:  # none, a FIFO or a device, a link, or too large
        return None
    text = data.removeprefix(b"\xef\xbb\xbf").decode("utf-8", "surrogateescape")
    lines = (line.removesuffix("\r") for line in text.split("\n"))
    rules = tuple(rule for line in lines if (rule := parse_rule(line)))
    return IgnoreFile(folder, rules) if rules else None


def is_ignored(path: Path, is_dir: bool, files: list[IgnoreFile]) -> bool:
    ignored = False
    name = path.name
    for ignore in files:
        relative = path.relative_to(ignore.base).as_posix()
        for rule in ignore.rules:
            if (is_dir or not rule.dir_only) and rule.glob.matches(
                relative if rule.anchored else name
            ):
                ignored = not rule.negated
    return ignored


def walk_files(top: Path, signal: AbortSignal | None = None) -> Iterator[Path]:
    """Files under `top` that are not ignored, in ripgrep's sorted order; it stops early once
    `signal` is aborted (checked at every entry, ignored ones too)."""
    parents = [f for p in reversed(top.parents) if (f := load_ignore(p))]
    yield from _walk(top, parents, signal)


def _walk(folder: Path, inherited: list[IgnoreFile], signal: AbortSignal | None) -> Iterator[Path]:
    own = load_ignore(folder)
    files = [*inherited, own] if own else inherited
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        if signal is not None and signal.aborted:
            return
        if entry.is_symlink() or entry.name == ".git":
            continue
        path = Path(entry.path)
        is_dir = entry.is_dir()
        if is_ignored(path, is_dir, files):
            continue
        if is_dir:
            yield from _walk(path, files, signal)
        elif entry.is_file():
            yield path
