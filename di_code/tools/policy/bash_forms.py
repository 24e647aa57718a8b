"""The catalogue of bash forms that run code from their arguments, for the permission rules.

A deny rule must see every program a line runs, and an allow rule must not cover a line that
runs more than its words say. Most code is visible in the syntax tree (`$( )`, `( )`, pipes);
the forms below are not: their code hides in a word (a subscript bash evaluates, a trap's
string, a wrapper's option grammar) or in a variable's value. Each entry says why it is here.

`shell_parse` asks this module (and `bash_wrappers`, the other half of the catalogue, what a
wrapper or a shell runs):
- `hidden_text` - does the line's text hold code the parser cannot see (subscripts);
- `hidden_command` - does this simple command run code its words do not show;
- `hidden_syntax` - does this node of the tree (an expansion, an arithmetic context, `[[ ]]`,
  a declaration, an assignment) evaluate code the parser cannot see;
- `changes_shell` - is this a builtin that changes what later words mean (never allowed).
`permissions` asks `exact_only`: which programs an "always" grant names exactly.
Whatever is hidden makes the whole line unreadable: it matches every deny rule, and no allow
rule or grant covers it (the user is asked). A form that cannot be understood is hidden.
"""

from __future__ import annotations

import itertools
import posixpath
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from di_code.tools.policy.bash_subscripts import subscript_code
from di_code.tools.policy.subcommands import git_runs_code

if TYPE_CHECKING:
    from tree_sitter import Node

Word = str | None
"""A word's value as bash will see it, or None when it depends on an expansion."""


def names(text: str) -> frozenset[str]:
    """Names written on one line: `names("-s --signal")`."""
    return frozenset(text.split())


_JOINED_LINES = re.compile(r"\S\\\n\S")
"""A backslash-newline inside a word: bash joins the word (`r\\<newline>m x` runs rm),
tree-sitter reads two words."""


def hidden_text(text: str) -> bool:
    """Whether a line's text holds code the parser cannot see (a subscript, a joined word)."""
    return subscript_code(text) or _JOINED_LINES.search(text) is not None


SOURCES = frozenset({"source", ".", "eval"})
"""Run code from a file (source, `.`) or from their words joined (eval)."""

SPECIAL_VARIABLES = re.compile(
    r"PROMPT_COMMAND|PS[0-4]|BASH_ENV|ENV|SHELLOPTS|BASHOPTS|BASH_FUNC_.*|LD_PRELOAD|LD_AUDIT"
    r"|LD_LIBRARY_PATH|BASH_LOADABLES_PATH|EXECIGNORE|GLOBIGNORE"
    r"|GIT_CONFIG.*|GIT_EXEC_PATH|GIT_TEMPLATE_DIR|GIT_DIR|GIT_COMMON_DIR"
)
"""Variables whose value bash (or a shell it starts, or the loader) runs or reads as code:
PROMPT_COMMAND and PS0-PS4 (PS4 under `set -x`) are expanded with command substitution,
BASH_ENV and ENV name a file a new shell sources, SHELLOPTS/BASHOPTS set a new shell's
options, BASH_FUNC_name%% imports a function, LD_* load a library into every program; git's
GIT_CONFIG_* are `git -c` (GIT_CONFIG_COUNT/KEY_n/VALUE_n, GIT_CONFIG_PARAMETERS) or name a
config file (GIT_CONFIG_GLOBAL): aliases and pagers are commands; GIT_EXEC_PATH and
GIT_TEMPLATE_DIR name where git's programs and a new repository's hooks come from; GIT_DIR and
GIT_COMMON_DIR a repository whose config (aliases, core.fsmonitor, hooks) git then reads: any
folder laid out as one, which no rule protects as it does the work tree's `.git`."""

COMMAND_VARIABLES = re.compile(
    r"PAGER|GIT_PAGER|MANPAGER|EDITOR|VISUAL|GIT_EDITOR|GIT_SEQUENCE_EDITOR|GIT_SSH"
    r"|GIT_SSH_COMMAND|GIT_EXTERNAL_DIFF|GIT_ASKPASS|SSH_ASKPASS|SUDO_ASKPASS|GIT_PROXY_COMMAND"
    r"|LESSOPEN|LESSCLOSE|BROWSER|RSYNC_RSH"
)
"""Variables whose value other programs run as a command line (`GIT_PAGER='rm x' git log`
runs rm through sh): a bare program name is read as a command run by the line, anything
else hides code."""

PROGRAM_NAME = re.compile(r"[\w./+-]+")

_ARITHMETIC_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
"""`[[ x -eq y ]]` evaluates both sides as arithmetic: a name's value is evaluated in turn."""

_NAME_TESTS = frozenset({"-v", "-R"})
"""`test -v NAME`, `[ -v`, `[[ -v`: bash evaluates NAME's subscript."""


def hidden_command(words: tuple[Word, ...]) -> bool:
    """Whether a simple command runs code that its words do not show (the builtins below)."""
    if not words or words[0] is None:
        return False
    program, args = posixpath.basename(words[0]), words[1:]
    if any(word is not None and subscript_code(word) for word in words):
        return True
    if words[0].startswith(("/proc/", "/dev/fd/")):  # /proc/self/exe is bash itself
        return True
    judge = _BUILTINS.get(program) or _PROGRAMS.get(program)
    return judge is not None and judge(args)


def changes_shell(words: tuple[Word, ...]) -> bool:
    """Whether a command is one of the builtins above used to set a variable, an alias, a
    trap or a callback: harmless perhaps, but what later words mean then depends on it, so
    no allow rule covers it (`printf -v PATH .; ls` runs ./ls). printf and test without
    -v, and `wait`, `hash`, `jobs` without their option, are ordinary."""
    if not words or words[0] is None:
        return False
    program, args = posixpath.basename(words[0]), words[1:]
    if program in ("printf", "test", "["):
        return any(word in _NAME_TESTS for word in args)
    if program in ("wait", "jobs", "hash", "bind", "complete", "compgen"):
        return _BUILTINS[program](args)  # ordinary without the option that runs code
    return program in _BUILTINS


def _always(_args: tuple[Word, ...]) -> bool:
    return True


def _any_argument(args: tuple[Word, ...]) -> bool:
    return bool(args)


def _unsafe_name(word: Word) -> bool:
    """A variable name bash may evaluate (an expansion, one with a subscript), or a special
    or command variable, set from data (`read BASH_ENV; export BASH_ENV; bash -c :`)."""
    return word is None or "[" in word or special_name(word)


def _names_unsafe(args: tuple[Word, ...]) -> bool:
    return any(_unsafe_name(word) for word in args)


def _printf(args: tuple[Word, ...]) -> bool:
    """printf -v NAME or -vNAME with a subscript or an expansion."""
    for index, word in enumerate(args):
        if word is None or word == "--" or not word.startswith("-v"):
            return word is None and index == 0
        name = word[2:] or (args[index + 1] if index + 1 < len(args) else None)
        return _unsafe_name(name)
    return False


def _test(args: tuple[Word, ...]) -> bool:
    return any(
        word in _NAME_TESTS and _unsafe_name(args[i + 1] if i + 1 < len(args) else None)
        for i, word in enumerate(args)
    )


def _flagged(*options: str) -> Callable[[tuple[Word, ...]], bool]:
    """Hidden when any of `options` is given, alone or in a cluster (`-tC`)."""

    def judge(args: tuple[Word, ...]) -> bool:
        letters = {o[1] for o in options}
        return any(
            word is None
            or word in options
            or (word.startswith("-") and not word.startswith("--") and letters & set(word[1:]))
            for word in args
        )

    return judge


def _trap(args: tuple[Word, ...]) -> bool:
    operands = [word for word in args if word not in ("-p", "-l", "--")]
    return bool(operands) and operands[0] not in ("-", "")


def _mapfile(args: tuple[Word, ...]) -> bool:
    return _flagged("-C")(args) or _names_unsafe(args)


_BUILTINS: dict[str, Callable[[tuple[Word, ...]], bool]] = {
    # printf -v NAME: NAME's subscript is evaluated (`printf -v 'a[$(id)]' x`).
    "printf": _printf,
    # test -v NAME / [ -v NAME ]: NAME's subscript is evaluated.
    "test": _test,
    "[": _test,
    # read [-a] NAME…: each NAME's subscript is evaluated.
    "read": _names_unsafe,
    # mapfile/readarray -C CODE runs CODE; the array name's subscript is evaluated.
    "mapfile": _mapfile,
    "readarray": _mapfile,
    # let EXPR: arithmetic, in which every name's value is evaluated in turn.
    "let": _always,
    # getopts OPTSTRING NAME, wait -p NAME: NAME's subscript is evaluated.
    "getopts": _names_unsafe,
    "wait": _flagged("-p"),
    # declare/typeset/local/export/readonly/unset when tree-sitter reads them as commands
    # (behind `command`, `builtin`): names and values may be evaluated.
    "declare": _any_argument,
    "typeset": _any_argument,
    "local": _any_argument,
    "export": _any_argument,
    "readonly": _any_argument,
    "unset": _names_unsafe,
    # trap CODE SIGNAL runs CODE later (at EXIT, DEBUG, ERR); -p and -l list, `-` and ''
    # reset or ignore.
    "trap": _trap,
    # alias NAME=CODE runs CODE where NAME is used (with expand_aliases); shopt sets it.
    "alias": _any_argument,
    "shopt": _any_argument,
    # hash -p FILE NAME makes NAME run FILE (`hash -p /bin/rm ls`).
    "hash": _flagged("-p"),
    # complete -C / compgen -C CODE run CODE; -F runs a function; -W WORDS is expanded
    # (`compgen -W '$(id)' a` runs id).
    "complete": _flagged("-C", "-F", "-W"),
    "compgen": _flagged("-C", "-F", "-W"),
    # bind -x KEYSEQ:CODE runs CODE; jobs -x COMMAND runs COMMAND.
    "bind": _flagged("-x"),
    "jobs": _flagged("-x"),
    # enable -f FILE loads a builtin from a shared library; fc runs history lines.
    "enable": _any_argument,
    "fc": _always,
}


EXACT_ONLY = names(
    "rm mv cp dd chmod chown chgrp ln truncate shred rmdir unlink install tee rsync scp "
    "curl wget ssh sftp ftp telnet nc ncat netcat socat gh glab aws gcloud az helm sudo doas "
    "sh bash dash zsh ksh node nodejs deno bun ruby perl php lua Rscript java tclsh "
    "awk gawk mawk sed make cmake ninja gradle mvn rake npm npx yarn pnpm pip pip3 uv "
    "poetry pipx cargo go docker podman kubectl terraform"
)
"""Programs a session grant names exactly, line by line: destructive ones, the network, and
interpreters and build runners, which run whatever code they are given."""
EXACT_ONLY_WORDS = {
    "git": names("push reset clean checkout restore")
    | names("config grep fetch pull clone ls-remote archive send-email instaweb")
    | names("difftool mergetool rebase bisect submodule filter-branch"),
    "find": names("-delete -exec -execdir -ok -okdir -fprint -fprint0 -fprintf -fls"),
}
"""Programs granted exactly when one of these words follows (`git -C . push` too). git's are
the destructive subcommands and those that run a command their arguments name (`grep -O`,
`fetch --upload-pack`, `rebase --exec`, `bisect run`, ...) or store one for git to run
(`config alias.x '!…'`): their options are many and abbreviated, so the subcommand decides."""
_INTERPRETER = re.compile(r"(python|pypy|node|ruby|perl|php|lua)[0-9.]*")


def exact_only(words: tuple[str, ...]) -> bool:
    """Whether "always" for this command may grant only the exact line (see EXACT_ONLY): it
    runs such a program, or names one in any word, as a program di-code does not know as a
    wrapper may run it (`valgrind rm x`, `bundle exec rm x`)."""
    program = posixpath.basename(words[0])
    return any(map(_names_exact_only, words)) or not EXACT_ONLY_WORDS.get(
        program, frozenset()
    ).isdisjoint(words[1:])


def _names_exact_only(word: str) -> bool:
    program = posixpath.basename(word)
    return program in EXACT_ONLY or _INTERPRETER.fullmatch(program) is not None


_PROGRAMS: dict[str, Callable[[tuple[Word, ...]], bool]] = {"git": git_runs_code}
"""Programs (not builtins) that run code given in their arguments, beyond the shells and
wrappers of `bash_wrappers` and the interpreters no rule can read."""


def hidden_syntax(node: Node) -> bool:
    """Whether a node of the tree evaluates code that the parser cannot see: `${x@P}`,
    `${!x}`, arithmetic on names (`$((x))`, `${a[i]}`, `${s:n}`, `[[ x -eq 1 ]]`),
    `[[ -v NAME ]]`, declarations with attributes or subscripts, special variables."""
    match node.type:
        case "command" | "declaration_command" | "unset_command":
            return _split_word(node) or (node.type != "command" and _hidden_declaration(node))
        case "expansion":
            return _hidden_expansion(node)
        case "heredoc_body":  # tree-sitter does not read backticks in a here-document
            return "`" in _text(node)
        case "command_substitution":  # `$((x))` misread as `$( (x) )`: arithmetic on x
            return _text(node).startswith("$((")
        case "arithmetic_expansion" | "c_style_for_statement":
            return _names_in(node)
        case "compound_statement":
            return node.text is not None and node.text.startswith(b"((") and _names_in(node)
        case "subscript":
            index = node.child_by_field_name("index")
            return index is not None and index.type != "number" and _text(index) not in ("@", "*")
        case "variable_assignment":
            return _hidden_assignment(node)
        case "test_command":
            return _hidden_test(node, double=_text(node).startswith("[["))
        case "for_statement" | "select_statement":
            variable = node.child_by_field_name("variable")
            return variable is not None and special_name(_text(variable))
        case _:
            return False


def _hidden_assignment(node: Node) -> bool:
    name = _text(node.child_by_field_name("name") or node)
    if SPECIAL_VARIABLES.fullmatch(name):
        return True
    value = node.child_by_field_name("value")
    program = _text(value) if value is not None and value.type == "word" else ""
    return COMMAND_VARIABLES.fullmatch(name) is not None and not PROGRAM_NAME.fullmatch(program)


def special_name(name: str) -> bool:
    """A special or a command variable (above): whoever sets it chooses code that runs."""
    return bool(SPECIAL_VARIABLES.fullmatch(name) or COMMAND_VARIABLES.fullmatch(name))


def special_assignment(word: str) -> bool:
    """NAME=VALUE given to env or sudo, NAME a special or a command variable."""
    return special_name(word.partition("=")[0])


_WORD_NODES = names(
    "command_name word number raw_string string ansi_c_string translated_string concatenation"
    " simple_expansion expansion command_substitution arithmetic_expansion process_substitution"
)


def _split_word(node: Node) -> bool:
    """Two words with nothing between them: bash reads one word, tree-sitter two (`'a'\\[…`
    and a newline before `\\rm` are read wrongly), so the line is not what it seems."""
    words = [child for child in node.named_children if child.type in _WORD_NODES]
    return any(left.end_byte == right.start_byte for left, right in itertools.pairwise(words))


def _text(node: Node) -> str:
    return node.text.decode(errors="replace") if node.text is not None else ""


def _names_in(node: Node) -> bool:
    """Arithmetic on anything but numbers: a name's value is evaluated as arithmetic in turn
    (`x='a[$(id)]'; echo $((x))` runs id)."""
    stack = list(node.named_children)
    while stack:
        child = stack.pop()
        if child.type in ("variable_name", "word", "simple_expansion", "expansion", "string"):
            return True
        stack.extend(child.named_children)
    return False


def _hidden_expansion(node: Node) -> bool:
    text = _text(node)
    assigned = re.match(r"\$\{(\w+):?=", text)  # ${NAME:=value} sets NAME
    if assigned is not None and special_name(assigned.group(1)):
        return True
    if text.endswith("@P}"):  # prompt expansion runs `$(…)` from the value
        return True
    if text.startswith("${!") and not re.search(r"(\[[@*]\]|[@*])\}$", text):
        return True  # indirection: the value names a variable, whose subscript is evaluated
    if re.match(r"\$\{[A-Za-z_0-9]+(\[[^]]*\])?:[^-=?+]", text):  # ${s:offset:length}
        return re.fullmatch(r"\$\{[^:]+:\s*-?\d+(:\s*-?\d+)?\}", text) is None
    return False


def _hidden_test(node: Node, double: bool) -> bool:
    """`-v`/`-R` on anything but a plain name; in `[[ ]]` arithmetic on anything but
    numbers."""
    for child in node.named_children:
        operator = child.child_by_field_name("operator")
        if operator is None:
            continue
        op = _text(operator)
        operands = [c for c in child.named_children if c != operator]
        if op in _NAME_TESTS and any(not re.fullmatch(r"\w+", _text(c)) for c in operands):
            return True
        if double and op in _ARITHMETIC_TESTS and any(c.type != "number" for c in operands):
            return True
    return False


def _hidden_declaration(node: Node) -> bool:
    """declare -i/-n make later assignments evaluate; a subscript, an expansion or a special
    variable among the names hides code."""
    for child in node.named_children:
        text = _text(child)
        if child.type == "word" and text.startswith(("-", "+")) and set(text[1:]) & set("in"):
            return True
        if child.type == "variable_name" and special_name(text):
            return True
        if child.type in ("variable_assignment", "variable_name"):
            continue
        if child.type not in ("word", "raw_string") or "[" in text or "$" in text:
            return True
        if SPECIAL_VARIABLES.fullmatch(text.partition("=")[0].strip("'")):
            return True
    return False
