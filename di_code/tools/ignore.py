"""A Python walk over a folder that honours .gitignore the way ripgrep does, for when rg is
missing.

Semantics (the common subset of gitignore): blank lines and `#` comments are skipped; `!`
re-includes; a trailing `/` matches folders only; a pattern with a `/` elsewhere is anchored to
its .gitignore's folder, one without matches a name at any depth; `*`, `?`, `[...]` and `**`
work as in git. .gitignore files apply from the folders above the search root too (as rg does
without a git repository, `--no-require-git`); the last matching rule wins, deeper files
last; an ignored folder is not entered. Like `rg --hidden`, dotfiles are included, `.git` is
skipped, symlinks are not followed and entries come in `rg --sort path` order (by name within
each folder, folders entered where they sort). Not supported: `.ignore`/`.rgignore`, the
global excludes file and `.git/info/exclude` (rg is run with those switched off too).
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Rule:
    regex: re.Pattern[str]
    negated: bool
    dir_only: bool


@dataclass(frozen=True, slots=True)
class IgnoreFile:
    base: Path
    rules: tuple[Rule, ...]


def translate_glob(pattern: str) -> str:
    """A regex for a slash-separated glob: `*` and `?` stay within a segment, `**` crosses."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[" and "]" in pattern[i + 2 :]:
            end = pattern.index("]", i + 2)
            body = pattern[i + 1 : end]
            out.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
            i = end + 1
        elif pattern[i] == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return "".join(out)


def parse_rule(line: str) -> Rule | None:
    text = line.rstrip("\n").rstrip()
    if not text or text.startswith("#"):
        return None
    negated = text.startswith("!")
    text = text[1:] if negated else text.removeprefix("\\")
    dir_only = text.endswith("/")
    text = text.rstrip("/")
    if not text:
        return None
    return Rule(compile_glob(text), negated, dir_only)


@functools.lru_cache(maxsize=256)
def compile_glob(pattern: str) -> re.Pattern[str]:
    """Gitignore-style: with a `/` the glob is anchored to its folder, else it matches a name
    at any depth. Used by .gitignore rules and by the `glob`/`pattern` of grep and find."""
    anchored = "/" in pattern
    text = pattern.lstrip("/")
    prefix = "" if anchored or text.startswith("**/") else "(?:.*/)?"
    return re.compile(prefix + translate_glob(text), re.S)


def load_ignore(folder: Path) -> IgnoreFile | None:
    try:
        text = (folder / ".gitignore").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    rules = tuple(rule for line in text.splitlines() if (rule := parse_rule(line)))
    return IgnoreFile(folder, rules) if rules else None


def is_ignored(path: Path, is_dir: bool, files: list[IgnoreFile]) -> bool:
    ignored = False
    for ignore in files:
        relative = path.relative_to(ignore.base).as_posix()
        for rule in ignore.rules:
            if rule.dir_only and not is_dir:
                continue
            if rule.regex.fullmatch(relative):
                ignored = not rule.negated
    return ignored


def walk_files(top: Path) -> Iterator[Path]:
    """Files under `top` that are not ignored, in ripgrep's sorted order."""
    parents = [f for p in reversed(top.parents) if (f := load_ignore(p))]
    yield from _walk(top, parents)


def _walk(folder: Path, inherited: list[IgnoreFile]) -> Iterator[Path]:
    own = load_ignore(folder)
    files = [*inherited, own] if own else inherited
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        if entry.is_symlink() or entry.name == ".git":
            continue
        path = Path(entry.path)
        is_dir = entry.is_dir()
        if is_ignored(path, is_dir, files):
            continue
        if is_dir:
            yield from _walk(path, files)
        elif entry.is_file():
            yield path
