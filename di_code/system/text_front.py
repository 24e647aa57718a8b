"""A text stream in front of another: what is written passes the front's own `write` (the
redaction in front of the terminal, the chat's scrollback in front of the redaction), and the
rest of a text file (`fileno`, `isatty`, `encoding`, `closed`, `reconfigure`, ...) is the
stream's behind it, so code that uses more of `sys.stdout` than `write` works the same in
front of either."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import Any, TextIO


class TextFront(ABC):
    """It has no `buffer`: libraries that prefer writing bytes (prompt-toolkit, click) write
    text through `write` here instead of around it."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    @abstractmethod
    def write(self, text: str) -> int: ...

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        if name == "buffer" or name.startswith("_"):  # and no loop while `_stream` is unset
            raise AttributeError(name)
        return getattr(self._stream, name)
