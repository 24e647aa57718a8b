"""One line for each session of a folder, for `/resume`'s list: its first prompt, when it was
last written and its size.

A folder may hold a thousand sessions, some of them huge, and any may be broken or written by
someone else, so each is read only as far as its first prompt and no further than HEAD_BYTES,
through the opener that refuses what is not a regular file (a FIFO would wait forever). A file
that cannot be read is listed as such, never an error: opening it says why."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from di_code.ai.codec import message_from_dict
from di_code.ai.types import TextContent, UserMessage
from di_code.session.format import SessionError, header_from_dict, migrate
from di_code.session.store import NUMBERED, SessionStore, session_id_of
from di_code.system.files.opener import open_path

HEAD_BYTES = 64 * 1024
"""How much of a file is read at most: the header and, but for a huge first paste, the first
prompt are well within it."""
PROMPT_CHARS = 200
"""Of the first prompt, what a line can show."""
_MESSAGE = b'{"type":"message"'
_USER = b'"role":"user"'
_TEXT_START = re.compile(rb'"text":"((?:[^"\\]|\\.){0,%d})' % PROMPT_CHARS)
"""The start of a text too long to read whole: its first characters, escapes kept whole."""


@dataclass(frozen=True, slots=True)
class SessionLine:
    path: Path
    id: str
    modified: float
    """Seconds since the epoch."""
    size: int
    first_prompt: str | None
    """The first prompt's text, made one line ("" before the first prompt); None when the file
    is no readable session."""


def session_lines(store: SessionStore, cwd: Path) -> list[SessionLine]:
    """This folder's sessions, the most recently written first."""
    return [session_line(path) for _, path in store.newest(cwd)]


def pick(store: SessionStore, choice: str, cwd: Path) -> Path:
    """The file of a session as `/resume` and `di-code export` name it: its number N as the
    list numbers it (`numbered`), else its id or id prefix."""
    if choice.isdigit() and 1 <= int(choice) <= NUMBERED:
        recent = numbered(session_lines(store, cwd))
        if int(choice) <= len(recent):
            return recent[int(choice) - 1].path
    return store.locate(choice, cwd)


def numbered(lines: Sequence[SessionLine]) -> list[SessionLine]:
    """The lines `/resume N` and `di-code export N` take for N = 1, 2, …: the newest NUMBERED
    readable ones, readable as the list reads them (so the list's `1.` is what `1` takes)."""
    return [line for line in lines if line.first_prompt is not None][:NUMBERED]


def session_line(path: Path) -> SessionLine:
    try:
        with open_path(path) as file:
            status = os.fstat(file.fileno())
            head = file.read(HEAD_BYTES)
    except OSError:  # gone, unreadable, or no regular file (the opener's errors are OSErrors)
        return SessionLine(path, session_id_of(path), 0.0, 0, None)
    return SessionLine(
        path, session_id_of(path), status.st_mtime, status.st_size, _first_prompt(head)
    )


def _first_prompt(head: bytes) -> str | None:
    lines = head.split(b"\n")
    if not _is_header(lines[0]):
        return None
    for line in lines[1:]:
        if line.startswith(_MESSAGE) and _USER in line:
            return _prompt_text(line)
    return ""


def _is_header(line: bytes) -> bool:
    """Whether the line is a session header, as `SessionStore.pick`'s numbering reads one."""
    try:
        header_from_dict(migrate(json.loads(line), [])[0])
    except (ValueError, AttributeError, SessionError, IndexError, RecursionError):
        return False
    return True


def _prompt_text(line: bytes) -> str:
    """The text of a user message's line, or of its start when the line was cut at HEAD_BYTES."""
    try:
        message = message_from_dict(json.loads(line)["message"])
    except (ValueError, KeyError, TypeError, RecursionError):
        return _text_start(line)
    if not isinstance(message, UserMessage):
        return ""
    text = " ".join(block.text for block in message.content if isinstance(block, TextContent))
    return " ".join(text.split())[:PROMPT_CHARS]


def _text_start(line: bytes) -> str:
    found = _TEXT_START.search(line)
    if found is None:
        return ""
    try:
        text = json.loads(b'"' + found.group(1) + b'"')
    except ValueError:
        return ""
    return " ".join(str(text).split())
