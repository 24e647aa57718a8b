"""Long pastes in the chat's input: shown as one placeholder, sent whole."""

from __future__ import annotations

PASTE_LINES = 10
"""A paste longer than this shows in the input as one placeholder."""


class Pastes:
    """Long pastes: the input shows `[pasted 200 lines]`, the prompt sent has the text."""

    def __init__(self) -> None:
        self._texts: dict[str, str] = {}

    def placeholder(self, text: str) -> str:
        """What to insert for a paste: the text itself if short, else a placeholder."""
        lines = len(text.splitlines())
        if lines <= PASTE_LINES:
            return text
        label = f"[pasted {lines} lines]"
        if label in self._texts:
            label = f"[pasted {lines} lines #{len(self._texts) + 1}]"
        self._texts[label] = text
        return label

    def expand(self, line: str) -> str:
        for label, text in self._texts.items():
            line = line.replace(label, text)
        self._texts.clear()
        return line
