"""What the chat puts in front of a prompt for the model only: the output of a `!command` the
user ran, and which files `/undo` or `/rewind` restored. The model reads them with the prompt;
the user never typed them, so the echo of the prompt, a resumed chat and the checkpoint lists
show what is left once they are taken off. Written and read here, so the two agree."""

from __future__ import annotations

import re

from di_code.ai.types import TextContent, UserContent

_SHELL_NOTE = re.compile(
    r"I ran `(.*?)` in the shell myself\. Its output:\n(`{3,})\n.*?\n\2(?!`)", re.S
)
_BACKTICKS = re.compile(r"`+")
_UNDO_NOTE = re.compile(r"\[Note from di-code: [^\n]*\]")
_SEPARATOR = "\n\n"


def shell_note(command: str, output: str) -> str:
    """A `!command` and its output, as the model reads them: in a fence longer than any run
    of backticks in the output, so the output cannot end it early (as in Markdown)."""
    longest = max((len(run) for run in _BACKTICKS.findall(output)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"I ran `{command}` in the shell myself. Its output:\n{fence}\n{output}\n{fence}"


def undo_note(number: int, done: list[str]) -> str:
    """What the model reads of an undo: which files are back as they were, by the user."""
    return (
        f"[Note from di-code: the user undid the file changes since prompt "
        f"{number}: {'; '.join(done)}. Edits made since then no longer stand.]"
    )


def with_notes(notes: list[str], typed: str) -> str:
    """The prompt the model is sent: the notes, then what the user typed."""
    return _SEPARATOR.join([*notes, typed])


def content_with_notes(notes: list[str], content: list[UserContent]) -> list[UserContent]:
    """`with_notes` for a prompt of several blocks (an editor's text, files, images): the
    notes go in front of its first text, so `split_notes` takes them off the same way."""
    if not notes:
        return content
    if content and isinstance(content[0], TextContent):
        return [TextContent(with_notes(notes, content[0].text)), *content[1:]]
    return [TextContent(with_notes(notes, "")), *content]


def split_notes(prompt: str) -> tuple[list[str], str]:
    """(the `!commands` whose output leads the prompt, what the user typed): the notes that
    `with_notes` put in front are taken off, whatever follows them is the user's."""
    commands: list[str] = []
    rest = prompt
    while True:
        shell = _SHELL_NOTE.match(rest)
        note = shell or _UNDO_NOTE.match(rest)
        if note is None or not rest[note.end() :].startswith(_SEPARATOR):
            return commands, rest
        if shell is not None:
            commands.append(shell.group(1))
        rest = rest[note.end() + len(_SEPARATOR) :]
