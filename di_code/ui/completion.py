"""Completion in the REPL: slash commands (built-in and the user's own command files) at the
start of the line, model ids after `/model `, `@path` anywhere."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from prompt_toolkit.completion import CompleteEvent, Completer, Completion, PathCompleter
from prompt_toolkit.document import Document

from di_code.config.custom_commands import load_commands
from di_code.config.settings import di_code_home
from di_code.system.safe_text import visible
from di_code.ui.slash_commands import COMMANDS, DEFAULT_COMMANDS

MODEL_COMMAND = "/model "


class ChatCompleter(Completer):
    def __init__(self, workspace: Path, models: Callable[[], list[str]] = list) -> None:
        self._workspace = workspace
        self._models = models
        self._paths = PathCompleter(get_paths=lambda: [str(workspace)], expanduser=True)

    def get_completions(self, document: Document, event: CompleteEvent) -> Iterable[Completion]:
        before = document.text_before_cursor
        if before.startswith(MODEL_COMMAND):
            typed = before[len(MODEL_COMMAND) :]
            for spec in self._models():
                if spec.startswith(typed) or spec.partition("/")[2].startswith(typed):
                    yield Completion(spec, -len(typed))
            return
        if before.startswith("/") and " " not in before:
            yield from self._commands(before)
            return
        word = document.get_word_before_cursor(WORD=True)
        if word.startswith("@"):
            inner = Document(word[1:], len(word) - 1)
            yield from self._paths.get_completions(inner, event)

    def _commands(self, before: str) -> Iterable[Completion]:
        """The built-in commands and the command files, read at each `/` typed (a few small
        files), so new ones show; a file named like a default command (/review) replaces it."""
        mine = load_commands(di_code_home(), self._workspace, reserved=COMMANDS).commands
        defaults = [c for c in DEFAULT_COMMANDS.values() if c.name[1:] not in mine]
        for builtin in (*COMMANDS.values(), *defaults):
            if builtin.name.startswith(before):
                yield Completion(builtin.name, -len(before), display_meta=builtin.summary)
        for name, command in mine.items():
            if f"/{name}".startswith(before):
                meta = " ".join(filter(None, [command.argument_hint, command.description]))
                yield Completion(f"/{name}", -len(before), display_meta=visible(meta))
