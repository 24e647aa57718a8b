"""The catalogue's second half: programs that run a command or code given in their words
(wrappers like `xargs`, `env`, `flock`, and every shell), read by their option grammar
(`wrapper_grammars`: an option a grammar does not list makes the command unreadable).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable

from di_code.tools.policy.bash_forms import SOURCES, Word, special_assignment
from di_code.tools.policy.wrapper_grammars import SETARCH, WRAPPERS, Wrapper

SHELLS = frozenset(
    {
        # Every shell runs code from `-c STRING`, a script file or stdin.
        "sh",
        "bash",
        "rbash",  # restricted bash still runs `-c` code
        "dash",
        "zsh",
        "ksh",
        "mksh",
        "ash",
        "yash",
        "posh",
        "fish",
        "csh",
        "tcsh",
        "coproc",  # tree-sitter reads `coproc` as a plain command: its body is not seen
    }
)

_SHELL_VALUED = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
"""Shell options whose value is the next word (`bash -o posix -c …`)."""


Wrapped = tuple[Word, ...] | str | None
"""What a wrapper runs: a command's words, a string of shell code, or None (cannot be seen)."""


def wrapped(program: str, args: tuple[Word, ...]) -> Wrapped:
    """What `program args` runs, for a wrapper, busybox, parallel or a shell; None when it
    cannot be seen."""
    read = _READERS.get(program)
    if read is not None:
        return read(args)
    return _by_grammar(WRAPPERS[program], program, args)


def _by_grammar(grammar: Wrapper, program: str, args: tuple[Word, ...]) -> Wrapped:
    index, code = _options(grammar, program, args)
    if index is None or code is not None:
        return code
    rest = args[index:]
    if grammar.operands < 0:  # su, script: options anywhere; without -c a shell reads stdin
        return _code_anywhere(grammar, rest)
    if any(word is None for word in rest[: grammar.operands]):
        return None
    rest = rest[grammar.operands :]
    if rest and rest[0] in grammar.code:  # flock FILE -c CODE
        return rest[1] if len(rest) > 1 and rest[1] is not None else None
    if not rest:
        return None if grammar.bare is None else grammar.bare
    if grammar.joins and "-x" not in args and "--exec" not in args:
        if any(word is None for word in rest):
            return None
        return " ".join(str(word) for word in rest)
    if program == "xargs":
        return unknown_where(rest, _replace_string(args[:index]))
    return rest


def unknown_where(words: tuple[Word, ...], placeholder: str | None) -> tuple[Word, ...]:
    """The words, with each one that holds `placeholder` unknown where it is read as code or
    as a command: `xargs -I % sh -c %` and `find -exec sh -c {} ;` run input and file names
    as code (`find -exec ls {} ;` only passes them on)."""
    program = words[0] if words else None
    if placeholder is None or program is None:
        return words
    name = posixpath.basename(program)
    if placeholder not in program and not is_wrapper(name) and name not in SOURCES:
        return words
    return tuple(None if word is None or placeholder in word else word for word in words)


def _replace_string(options: tuple[Word, ...]) -> str | None:
    """The string xargs replaces with input (`-I R`, `-tIR`, `-i[R]`, `--replace[=R]`)."""
    for index, word in enumerate(options):
        if word is None or not word.startswith("-"):
            continue
        if word.startswith("--replace"):
            return word.partition("=")[2] or "{}"
        for position, char in enumerate(word[1:] if word[1:2] != "-" else "", start=2):
            rest = word[position:]
            if char == "I":
                return rest or (options[index + 1] if index + 1 < len(options) else None)
            if char == "i":
                return rest or "{}"
            if f"-{char}" in WRAPPERS["xargs"].valued:
                break
    return None


def is_wrapper(program: str) -> bool:
    return program in WRAPPERS or program in _READERS


def _options(grammar: Wrapper, program: str, args: tuple[Word, ...]) -> tuple[int | None, Word]:
    """Where the command starts after the options, and the code of a code option (`-c`);
    (None, None) when an option is unknown, hides the command or is an expansion."""
    index = 0
    while index < len(args):
        word = args[index]
        if word is None:
            return None, None
        if word == "--":
            return _after_assignments(grammar, args, index + 1), None
        if grammar.assignments and "=" in word and not word.startswith("-"):
            if special_assignment(word):
                return None, None
            index += 1
            continue
        if not word.startswith("-") or (word == "-" and "-" not in grammar.flags):
            return index, None
        if program == "nice" and re.fullmatch(r"-\d+", word):  # nice -10 COMMAND
            index += 1
            continue
        option = _one_option(grammar, word)
        if option is None:
            return None, None
        name, joined = option
        value = joined if joined is not None else (args[index + 1 : index + 2] or (None,))[0]
        if name in grammar.code:
            return (None, None) if value is None else (index, value)
        index += 1 if joined is not None or name not in grammar.valued else 2
    return index, None


def _after_assignments(grammar: Wrapper, args: tuple[Word, ...], index: int) -> int | None:
    """Where the command starts after `--`: env and sudo still take NAME=VALUE words."""
    while grammar.assignments and index < len(args):
        word = args[index]
        if word is None or "=" not in word:
            break
        if special_assignment(word):
            return None
        index += 1
    return index


def _one_option(grammar: Wrapper, word: str) -> tuple[str, str | None] | None:
    """The option `word` sets (the one that matters in a cluster like `-tn1`) and its value
    when joined to it; None when it is unknown or hides the command."""
    if word.startswith("--") or word == "-":
        name, equals, value = word.partition("=")
        if name in grammar.hiding:
            return None
        if name in grammar.valued or name in grammar.code:
            return name, value if equals else None
        return (name, "") if name in grammar.flags else None
    for position, char in enumerate(word[1:], start=1):
        name = f"-{char}"
        if name in grammar.hiding:
            return None
        if name in grammar.valued or name in grammar.code:
            return name, word[position + 1 :] or None
        if name in grammar.optional:
            return name, word[position + 1 :]
        if name not in grammar.flags:
            return None
    return word, ""


def _code_anywhere(grammar: Wrapper, args: tuple[Word, ...]) -> Wrapped:
    """su and script take their options anywhere (`su root -c CODE`); without a code option
    they start a shell, which reads what cannot be seen."""
    for index, word in enumerate(args):
        if word is None:
            return None
        name = word.partition("=")[0]
        if name in grammar.code:
            value = word.partition("=")[2] if "=" in word else None
            if value is None and index + 1 < len(args):
                value = args[index + 1]
            return value
    return None


def _shell(args: tuple[Word, ...]) -> Wrapped:
    """`sh [options] -c CODE`, with joined flags (`-ec`), valued options (`-o posix`) and
    `--`; a script file or stdin cannot be seen."""
    runs_code = False
    index = 0
    while index < len(args):
        word = args[index]
        if word is None:
            return None
        if word in ("--", "-"):
            index += 1
            break
        if not word.startswith(("-", "+")) or word == "+":
            break
        if word in _SHELL_VALUED:
            index += 2
            continue
        if not word.startswith("--") and "c" in word[1:]:
            runs_code = True
        index += 1
    code = args[index] if index < len(args) else None
    return code if runs_code and code is not None else None


def _busybox(args: tuple[Word, ...]) -> Wrapped:
    """busybox APPLET ARGS: the applet is the program (`busybox sh -c …`, `busybox rm`)."""
    return args if args and args[0] and not args[0].startswith("-") else None


def _parallel(args: tuple[Word, ...]) -> Wrapped:
    """GNU parallel COMMAND ::: ARGS runs COMMAND (joined, by a shell) with each argument;
    with options or without a command (the arguments are commands) it cannot be seen."""
    command: list[str] = []
    for word in args:
        if word is None or (not command and word.startswith("-")):
            return None
        if word.startswith(":::"):
            break
        command.append(word)
    return " ".join(command) if command else None


def _setarch(args: tuple[Word, ...]) -> Wrapped:
    """setarch ARCH [options] [COMMAND]: the architecture first, then as its links read."""
    if not args or args[0] is None or args[0].startswith("-"):
        return None
    return _by_grammar(SETARCH, "setarch", args[1:])


_READERS: dict[str, Callable[[tuple[Word, ...]], Wrapped]] = {
    "busybox": _busybox,
    "setarch": _setarch,
    "parallel": _parallel,
    **dict.fromkeys(SHELLS, _shell),
}
"""Programs whose words are read by a function of their own rather than by a Wrapper grammar."""
