"""Bash command lines read by a real parser (tree-sitter-bash), for the permission rules.

A rule about a command is only as good as its idea of what the command runs. Splitting at
`;` and `&&` misses `(rm x)`, `$(rm x)` and `env rm x`, and looking for `$(` misses
`${x@P}`, which runs code hidden in a `$'…'` escape. So the line is parsed, and:

- `simple_commands` lists every simple command anywhere in the tree (subshells, groups,
  `$(…)`, pipelines, function bodies, here-documents), each with its words as bash will see
  them when that is knowable, and the commands it runs in turn (`env rm x`, `xargs rm`,
  `find -exec rm`, `sh -c 'rm x'`, `eval`) - what deny rules look at;
- `plain_commands` gives the words of each simple command only when the whole line is
  plain: a list or pipeline of simple commands whose words are all literal (no expansion of
  any kind), no assignments, no redirection except to /dev/null and between descriptors, and
  nothing that runs code from a string or a file (eval, source, `.`, `sh -c`) nor a builtin
  that changes the shell (`printf -v`, `read`, `alias`) - what allow rules need.

What wrappers and shells run is read by their option grammar (`bash_wrappers`); a line that
holds a form whose code cannot be seen (`bash_forms`: `trap`, `hash -p`, `${x@P}`, a
subscript bash evaluates) has no commands at all, like a line the parser cannot read.

tree-sitter is imported on first use: `--help`, `--version` and a run without a bash call
never load it.
"""

from __future__ import annotations

import functools
import posixpath
from typing import TYPE_CHECKING, Any

from msgspec import Struct

from di_code.tools.policy.bash_forms import (
    COMMAND_VARIABLES,
    SOURCES,
    Word,
    changes_shell,
    hidden_command,
    hidden_syntax,
    hidden_text,
)
from di_code.tools.policy.bash_wrappers import Wrapped, is_wrapper, unknown_where, wrapped

if TYPE_CHECKING:
    from tree_sitter import Node

MAX_DEPTH = 8
"""How deep `eval`, `sh -c` and wrappers may nest before a command counts as unreadable."""

_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})

# Node types a plain line may consist of; anything else (if, for, subshells, functions,
# here-documents, `[[ ]]`, declarations) needs the user's eye.
_PLAIN_STRUCTURE = frozenset({"program", "list", "pipeline", "redirected_statement", "command"})
_PLAIN_TOKENS = frozenset({";", "&&", "||", "|", "|&", "&", "\n", "comment"})
_HARMLESS_REDIRECTS = frozenset({">", ">>", "&>", "&>>", "2>", "<"})
_GLOB = frozenset("*?")
_NOT_WORDS = frozenset({"variable_assignment", "file_redirect", "herestring_redirect"})


class SimpleCommand(Struct, frozen=True):
    """One simple command: its words (None where unknowable) and what it runs in turn.

    `unreadable` is set when what it runs cannot be known from the line: a program name that
    is an expansion, `source file`, `sh script`, `eval $x`, nesting deeper than MAX_DEPTH.
    """

    words: tuple[Word, ...]
    nested: tuple[SimpleCommand, ...] = ()
    unreadable: bool = False
    runs_code: bool = False
    """What it runs comes from a string of code (`sh -c`, `eval`, `watch`), parsed in turn."""

    @property
    def program(self) -> Word:
        """The program's name without its folder (`/bin/rm` and `\\rm` are both `rm`)."""
        first = self.words[0] if self.words else None
        return None if first is None else posixpath.basename(first)

    def layers(self) -> list[SimpleCommand]:
        """This command and every command it runs, through all wrappers."""
        found = [self]
        for inner in self.nested:
            found.extend(inner.layers())
        return found


class ParsedLine(Struct, frozen=True):
    """A command line as parsed: None for `commands` when the parser could not read it."""

    commands: tuple[SimpleCommand, ...] | None
    plain: tuple[tuple[str, ...], ...] | None
    """The literal words of every simple command when the whole line is plain, else None."""


@functools.lru_cache(maxsize=1)
def _parser() -> Any:
    import tree_sitter
    import tree_sitter_bash

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


@functools.lru_cache(maxsize=256)
def parse_line(command: str) -> ParsedLine:
    """The simple commands of `command` and, when it is plain, their literal words."""
    root = _parser().parse(command.encode()).root_node
    commands = _commands(root, 0)
    if commands is None:
        return ParsedLine(None, None)
    return ParsedLine(commands, _plain(root, commands))


def _read(command: str, depth: int) -> tuple[SimpleCommand, ...] | None:
    if depth > MAX_DEPTH:
        return None
    return _commands(_parser().parse(command.encode()).root_node, depth)


def _commands(root: Node, depth: int) -> tuple[SimpleCommand, ...] | None:
    """The simple commands of a tree; None when it cannot be read or holds a catalogued form
    (`bash_forms`) whose code cannot be seen."""
    if root.has_error or hidden_text(root.text.decode(errors="replace") if root.text else ""):
        return None
    nodes = _walk(root)
    if any(map(hidden_syntax, nodes)):
        return None
    return tuple(
        _simple(node, depth) if node.type == "command" else _variable_program(node, depth)
        for node in nodes
        if node.type == "command" or _names_a_program(node)
    )


def _names_a_program(node: Node) -> bool:
    """`GIT_PAGER=less`: an assignment whose value another program runs (bash_forms)."""
    name = node.child_by_field_name("name") if node.type == "variable_assignment" else None
    text = name.text.decode(errors="replace") if name is not None and name.text else ""
    return COMMAND_VARIABLES.fullmatch(text) is not None


def _variable_program(node: Node, depth: int) -> SimpleCommand:
    value = node.child_by_field_name("value")
    return _unwrapped((literal(value) if value is not None else None,), depth + 1)


def _walk(root: Node, stop: frozenset[str] = frozenset()) -> list[Node]:
    """Every node under `root` (a stack, not recursion: a line can nest deeply), without
    going into the nodes whose type is in `stop`."""
    found: list[Node] = []
    stack = [root]
    while stack:
        node = stack.pop()
        found.append(node)
        if node.type not in stop:
            stack.extend(reversed(node.children))
    return found


def _simple(node: Node, depth: int) -> SimpleCommand:
    words = tuple(literal(child) for child in command_words(node))
    return _unwrapped(words, depth)


def command_words(node: Node) -> list[Node]:
    """The word nodes of a `command` node: its name and arguments, not assignments or
    redirections."""
    return [child for child in node.named_children if child.type not in _NOT_WORDS]


def _unwrapped(words: tuple[Word, ...], depth: int) -> SimpleCommand:
    """The command with the commands it runs: what follows a wrapper, `-exec`, `-c`, eval."""
    if not words:
        return SimpleCommand(words)
    program = None if words[0] is None else posixpath.basename(words[0])
    if program is None or depth > MAX_DEPTH or hidden_command(words):
        return SimpleCommand(words, unreadable=True)
    if program == "find":
        return SimpleCommand(words, tuple(_unwrapped(run, depth + 1) for run in _find_runs(words)))
    if program in ("source", "."):
        return SimpleCommand(words, unreadable=True)
    if program == "eval":  # its words joined, after a `--`
        code = words[2:] if words[1:2] == ("--",) else words[1:]
        runs: Wrapped = None if None in code else " ".join(map(str, code))
    elif is_wrapper(program):
        runs = wrapped(program, words[1:])
    else:
        return SimpleCommand(words)
    if runs is None:
        return SimpleCommand(words, unreadable=True)
    if isinstance(runs, tuple):
        return SimpleCommand(words, (_unwrapped(runs, depth + 1),) if runs else ())
    inner = _read(runs, depth + 1)
    if inner is None:
        return SimpleCommand(words, unreadable=True)
    return SimpleCommand(words, inner, runs_code=True)


def _find_runs(words: tuple[Word, ...]) -> list[tuple[Word, ...]]:
    """The commands `find -exec … ;` (and -execdir, -ok, -okdir) runs."""
    runs: list[tuple[Word, ...]] = []
    index = 0
    while index < len(words):
        if words[index] in _FIND_EXEC:
            end = index + 1
            while end < len(words) and words[end] not in (";", "+"):
                end += 1
            runs.append(unknown_where(words[index + 1 : end], "{}"))
            index = end
        index += 1
    return runs


def literal(node: Node) -> Word:
    """The value of a word node when it has no expansion of any kind, else None."""
    text = node.text.decode(errors="replace") if node.text is not None else ""
    match node.type:
        case "command_name":
            return literal(node.named_children[0]) if node.named_children else None
        case "word" | "number":
            return _unescaped_word(text)
        case "raw_string":
            return text[1:-1]
        case "string":
            parts = node.named_children
            if any(part.type != "string_content" for part in parts) or "!" in text:
                return None
            return _unescaped_string(text[1:-1])
        case "concatenation":
            if text == "{}":  # `find -exec rm {} +`: bash does not expand an empty brace pair
                return text
            values = [literal(part) for part in node.children]
            return None if any(v is None for v in values) else "".join(map(str, values))
        case _:
            return None


def _unescaped_word(text: str) -> Word:
    """A bare word's value: backslashes removed; None if bash would expand any of it
    (`$`, a backtick, a glob, `~`, `{`, `}`, `!`)."""
    if text == "{}":
        return text
    out: list[str] = []
    chars = iter(enumerate(text))
    for index, char in chars:
        if char == "\\":
            nxt = next(chars, None)
            if nxt is not None and nxt[1] != "\n":
                out.append(nxt[1])
            continue
        if char in "$`{}!" or char in _GLOB or (char == "~" and index == 0):
            return None
        if char == "[" and "]" in text[index:]:
            return None
        out.append(char)
    return "".join(out)


def _unescaped_string(body: str) -> str:
    """A double-quoted string's value: only `\\"`, `\\\\`, `\\$`, a backslashed backtick
    and a backslashed newline lose their backslash."""
    out: list[str] = []
    index = 0
    while index < len(body):
        char = body[index]
        if char == "\\" and index + 1 < len(body) and body[index + 1] in '"\\$`\n':
            if body[index + 1] != "\n":
                out.append(body[index + 1])
            index += 2
            continue
        out.append(char)
        index += 1
    return "".join(out)


def _plain(root: Node, commands: tuple[SimpleCommand, ...]) -> tuple[tuple[str, ...], ...] | None:
    """The literal words of each simple command if the line is plain (see the module)."""
    if not _plain_structure(root):
        return None
    plain: list[tuple[str, ...]] = []
    for layer in (layer for command in commands for layer in command.layers()):
        if _runs_code(layer) or not layer.words or any(word is None for word in layer.words):
            return None
        plain.append(tuple(str(word) for word in layer.words))
    return tuple(plain)


def _runs_code(command: SimpleCommand) -> bool:
    """Code from a string or a file, or a builtin that changes the shell (a variable, an
    alias, a trap): a rule about words cannot judge what runs."""
    return (
        command.unreadable
        or command.runs_code
        or command.program in SOURCES
        or changes_shell(command.words)
    )


def _plain_structure(root: Node) -> bool:
    for node in _walk(root, stop=frozenset({"command", "file_redirect", "herestring_redirect"})):
        if node.type == "command":
            words = (child for child in node.children if child.type != "file_redirect")
            redirects = (child for child in node.children if child.type == "file_redirect")
            if not all(literal(word) is not None for word in words):
                return False
            if not all(map(_harmless_redirect, redirects)):
                return False
        elif node.type.endswith("_redirect"):
            if not _harmless_redirect(node):
                return False
        elif node.type not in _PLAIN_STRUCTURE and node.type not in _PLAIN_TOKENS:
            return False
    return True


def _harmless_redirect(node: Node) -> bool:
    """Only to /dev/null, or between descriptors (`2>&1`, `>&-`)."""
    if node.type != "file_redirect":
        return False
    operator = next((c.type for c in node.children if not c.is_named), "")
    target = node.child_by_field_name("destination")
    value = literal(target) if target is not None else None
    if operator in (">&", "<&"):
        return value is not None and (value == "-" or value.isdigit())
    return operator in _HARMLESS_REDIRECTS and value == "/dev/null"
