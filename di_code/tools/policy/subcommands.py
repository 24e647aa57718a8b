"""Where a command's subcommand is: the first word after the options before it, read by the
program's own grammar of those options.

An "always" grant names a program and its subcommand (`permissions.command_prefix`), and the
catalogue looks for git's options that run code (`bash_forms`): both must find the subcommand
where the program finds it. An option that takes a value moves it: in `git -C dir log` it is
`log`, not `dir`. Which options take a value only the program knows, so where its grammar is
not written here, or an option is not in it, the answer is "unknown" and each caller assumes
the worst. Only a long option with its value joined (`--color=auto`) needs no grammar: getopt
never gives it the next word too.
"""

from __future__ import annotations

import itertools
import posixpath
from collections.abc import Sequence

from msgspec import Struct


class Grammar(Struct, frozen=True):
    """The options a program takes before its subcommand."""

    valued: frozenset[str] = frozenset()
    """Options whose value is the next word (a long one's may be joined: `--git-dir=x`)."""
    flags: frozenset[str] = frozenset()
    """Options without a value."""
    joined: frozenset[str] = frozenset()
    """Long options with no value, or one joined by `=` only (`--exec-path[=DIR]`)."""


GIT = Grammar(
    valued=frozenset(
        {"-C", "-c", "--config-env", "--git-dir", "--work-tree", "--namespace", "--super-prefix"}
        | {"--shallow-file", "--attr-source"}
    ),
    flags=frozenset(
        {"-p", "--paginate", "-P", "--no-pager", "--no-replace-objects", "--bare"}
        | {"--literal-pathspecs", "--glob-pathspecs", "--noglob-pathspecs", "--icase-pathspecs"}
        | {"--no-optional-locks", "--no-lazy-fetch", "--no-advice"}
        | {"--html-path", "--man-path", "--info-path", "-h", "--help", "-v", "--version"}
    ),
    joined=frozenset({"--exec-path", "--list-cmds"}),
)
"""git.c's handle_options: anything else before the subcommand git refuses."""

GRAMMARS = {"git": GIT}


class Leading(Struct, frozen=True):
    """The options before a command's subcommand, and where the subcommand is."""

    options: tuple[str, ...]
    """Their names, as written before any `=`."""
    at: int | None
    """The subcommand's index in the words (their length when there is none); None when it
    cannot be told: an option the grammar does not know, or a word that is an expansion."""


def leading_options(program: str | None, args: Sequence[str | None]) -> Leading:
    """Read the words of `program` (None for an expansion in them) up to the first that is
    not an option; `Leading.at` counts the program as word 0."""
    grammar = GRAMMARS.get(posixpath.basename(program or ""))
    words = (program, *args)
    options: list[str] = []
    index = 1
    while index < len(words):
        word = words[index]
        if word is None:
            return Leading(tuple(options), None)
        if word == "--":
            return Leading((*options, word), index + 1)
        if word == "-" or not word.startswith("-"):
            return Leading(tuple(options), index)
        name = word.partition("=")[0]
        options.append(name)
        step = _width(grammar, word)
        if step is None:
            return Leading(tuple(options), None)
        index += step
    return Leading(tuple(options), len(words) if index == len(words) else None)


def _width(grammar: Grammar | None, word: str) -> int | None:
    """How many words the option `word` takes up (itself, or with its value); None when the
    grammar does not say. Without a grammar only `--name=value` is known."""
    name, equals, _ = word.partition("=")
    long = name.startswith("--") and len(name) > 2
    if equals:
        known = grammar is None or name in grammar.valued or name in grammar.joined
        return 1 if long and known else None
    if grammar is None:
        return None
    if name in grammar.flags or name in grammar.joined:
        return 1
    return 2 if name in grammar.valued else None


def git_runs_code(args: Sequence[str | None]) -> bool:
    """Whether git's options before the subcommand run code the words do not show: `-c
    NAME=VALUE` (or --config-env, --exec-path=DIR), as many config values are commands
    (`alias.x=!rm x`, core.pager, core.sshCommand, diff.external), or `--git-dir` naming a
    repository other than a `.git` folder. Read by git's grammar, so a value is never taken
    for the subcommand (`git --git-dir .git -c …`); an option it does not know hides the rest."""
    leading = leading_options("git", args)
    if leading.at is None or not _GIT_CODE.isdisjoint(leading.options):
        return True
    return any(not _git_directory(folder) for folder in _git_dirs(args[: leading.at - 1]))


_GIT_CODE = frozenset({"-c", "--config-env", "--exec-path"})
"""git's options before the subcommand that set configuration or where its programs are."""


def _git_dirs(options: Sequence[str | None]) -> list[str | None]:
    """The folders `--git-dir` names among git's options (`--git-dir=F`, `--git-dir F`)."""
    named = [word.partition("=")[2] for word in options if word and word.startswith("--git-dir=")]
    return named + [value for word, value in itertools.pairwise(options) if word == "--git-dir"]


def _git_directory(folder: str | None) -> bool:
    """Whether `folder` is a `.git` folder, whose files the write tools protect. Any other
    laid out as a repository has a config (aliases, core.fsmonitor) the model may have
    written: git run on it runs what that says (GIT_DIR, likewise: bash_forms'
    SPECIAL_VARIABLES)."""
    return folder is not None and posixpath.basename(folder.rstrip("/")) == ".git"
