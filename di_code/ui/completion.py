"""Completion in the REPL: slash commands at the start of the line, `@path` anywhere."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from prompt_toolkit.completion import CompleteEvent, Completer, Completion, PathCompleter
from prompt_toolkit.document import Document

from di_code.ui.commands import COMMANDS


class ChatCompleter(Completer):
    def __init__(self, workspace: Path) -> None:
        self._paths = PathCompleter(get_paths=lambda: [str(workspace)], expanduser=True)

    def get_completions(self, document: Document, event: CompleteEvent) -> Iterable[Completion]:
        before = document.text_before_cursor
        if before.startswith("/") and " " not in before:
            for command in COMMANDS.values():
                if command.name.startswith(before):
                    yield Completion(command.name, -len(before), display_meta=command.summary)
            return
        word = document.get_word_before_cursor(WORD=True)
        if word.startswith("@"):
            inner = Document(word[1:], len(word) - 1)
            yield from self._paths.get_completions(inner, event)
