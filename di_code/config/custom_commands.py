"""The user's own slash commands: Markdown prompt templates, `/NAME args` expands one.

Files `NAME.md` are read from the project's `.di-code/commands/` and `.claude/commands/` (in
every folder from the workspace up to the repository root), then `$DI_CODE_HOME/commands/` and
`~/.claude/commands/`; the first file for a name wins. A template is only text for the model,
so an untrusted project's commands are used too: nothing in them runs (Claude Code's `!`
command lines are not supported on purpose). In the body `$ARGUMENTS` is the whole argument
text and `$1`…`$9` its words (shell quoting groups words); a template without any of these gets
the arguments appended, so they are never lost. Front matter may give `description` and
`argument-hint` for `/help` and completion.

An `@path` in a template attaches a picture (di_code.tools.builtin.support.attachments) only
inside the workspace: a template is somebody else's text, and `@/home/me/.ssh/shot.png` in a cloned
project's command must not send a file from outside it. Such a word loses its `@` (the model
still sees the path); `@` words in the arguments are the user's own and stay.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Collection
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from di_code.config.front_matter import (
    Document,
    first_line,
    markdown_files,
    project_of,
    read_or_warn,
    search_folders,
    shown,
)

COMMAND_FOLDERS = (Path(".di-code") / "commands", Path(".claude") / "commands")
NAME = re.compile(r"[A-Za-z0-9][\w.-]*")
_PLACEHOLDER = re.compile(r"\$(ARGUMENTS|[1-9])")
_MENTION = re.compile(r"(?:^|(?<=\s))@(\S+)")
_TRAILING = ".,;:!?)]}>'\""
FILE_CAP = 256 * 1024


@dataclass(frozen=True, slots=True)
class CustomCommand:
    name: str
    """Without the slash."""
    path: Path
    description: str
    argument_hint: str
    template: str
    workspace: Path
    """Where the template's `@path` words may point."""

    def expand(self, arguments: str) -> str:
        """The prompt: the template with its placeholders filled from `arguments`."""
        arguments = arguments.strip()
        words = _words(arguments)
        template = _MENTION.sub(lambda m: _confined(m, self.workspace), self.template)
        if not _PLACEHOLDER.search(template):
            return f"{template.rstrip()}\n\n{arguments}" if arguments else template
        return _PLACEHOLDER.sub(lambda m: _fill(m.group(1), arguments, words), template)


@dataclass(frozen=True, slots=True)
class CommandSet:
    commands: dict[str, CustomCommand]
    """By name; a name a built-in command has is left out."""
    warnings: tuple[str, ...] = ()
    """Files that were skipped, and why, one line each."""

    def expand_prompt(self, text: str) -> str | None:
        """`/NAME args` expanded, or None when `text` does not name one of these commands."""
        if not text.startswith("/"):
            return None
        name, *rest = text[1:].split(None, 1) or [""]
        command = self.commands.get(name)
        return command.expand(rest[0] if rest else "") if command is not None else None


def load_commands(home: Path, workspace: Path, reserved: Collection[str] = ()) -> CommandSet:
    """Every command file, nearest first; `reserved` names (built-ins, with or without the
    slash) win over a file of the same name, which a warning says."""
    reserved_names = {name.removeprefix("/") for name in reserved}
    commands: dict[str, CustomCommand] = {}
    warnings: list[str] = []
    build = partial(_command, workspace.resolve())
    project = project_of(workspace)
    for path in markdown_files(command_folders(home, workspace)):
        name = path.stem
        if not NAME.fullmatch(name) or name in commands:
            continue
        if name in reserved_names:
            warnings.append(f"{shown(path)}: the built-in /{name} wins over this command file")
            continue
        command = read_or_warn(path, FILE_CAP, build, warnings, project)
        if command is not None:
            commands[name] = command
    return CommandSet(commands, tuple(warnings))


def command_folders(home: Path, workspace: Path) -> list[Path]:
    """Where command files are looked for, the first found for a name winning."""
    user = [home / "commands", Path.home() / ".claude" / "commands"]
    return search_folders(workspace, COMMAND_FOLDERS, user)


def _command(workspace: Path, path: Path, document: Document) -> CustomCommand:
    fields = document.fields
    description = fields.get("description") or first_line(document.body)
    hint = fields.get("argument-hint", fields.get("argument_hint", ""))
    template = document.body.strip("\n")
    return CustomCommand(path.stem, path, description, hint, template, workspace)


def _confined(mention: re.Match[str], workspace: Path) -> str:
    """A template's `@word`, kept only when it names a place inside the workspace (as the
    attachments read it: from the workspace, `~` expanded, trailing punctuation tried off)."""
    word = mention.group(0)
    for candidate in dict.fromkeys((mention.group(1), mention.group(1).rstrip(_TRAILING))):
        path = os.path.realpath(workspace / os.path.expanduser(candidate))
        if not Path(path).is_relative_to(workspace):
            return word[1:]
    return word


def _words(arguments: str) -> list[str]:
    try:
        return shlex.split(arguments)
    except ValueError:  # an unclosed quote: plain words then
        return arguments.split()


def _fill(placeholder: str, arguments: str, words: list[str]) -> str:
    if placeholder == "ARGUMENTS":
        return arguments
    index = int(placeholder) - 1
    return words[index] if index < len(words) else ""
