"""Export a conversation: `/export [PATH]` in the chat, `di-code export` on the command line.

Three formats: `html` (one self-contained page, export_html.py), `md` (to paste into an issue,
export_markdown.py) and `json` (the branch's messages as the session format holds them, read
through the session loader). What is exported is the session's current branch: a conversation
rewound keeps its other branch in the file, not in the export. Whatever the format, the text
leaves through the one redaction (`redact`) on its way to the file.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypeAlias, cast

from di_code.ai.codec import to_dict
from di_code.ai.redaction import redact
from di_code.ai.types import Message
from di_code.session.format import MessageEntry
from di_code.system.files.opener import parent_folder, replace_whole, write_into_stream
from di_code.system.left_behind import LeftBehind, unless_aborted
from di_code.system.own_thread import on_own_thread
from di_code.system.safe_text import json_escaped
from di_code.ui.command_lines import fail, say

if TYPE_CHECKING:
    from di_code.session import Session
    from di_code.system.abort import AbortController
    from di_code.ui.chat_view import ChatView

ExportFormat: TypeAlias = Literal["html", "md", "json"]
FORMATS: tuple[ExportFormat, ...] = ("html", "md", "json")
_SUFFIXES: dict[str, ExportFormat] = {".md": "md", ".markdown": "md", ".json": "json"}


def format_of(path: Path) -> ExportFormat:
    """The format a file name asks for: `.md` and `.json` theirs, anything else HTML."""
    return _SUFFIXES.get(path.suffix.lower(), "html")


def export_text(source: Session | Sequence[Message], kind: ExportFormat) -> str:
    """The whole export of a session's branch (or of a chat's messages, with no session)."""
    from di_code.session import Session

    if isinstance(source, Session):
        entries: Sequence[object] = source.branch()
        title = f"di-code session {source.id[:8]}"
        started = time.strftime("%Y-%m-%d %H:%M", time.localtime(source.header.timestamp / 1000))
        meta = f"Started {started} in {source.cwd} · session {source.id}"
    else:
        entries, title, meta = source, "di-code conversation", "Not saved (--no-session)"
    if kind == "json":
        text = _json(source, entries)
    else:
        from di_code.ui.export_items import conversation_items

        items = conversation_items(cast("Sequence[MessageEntry | Message]", entries))
        if kind == "html":
            from di_code.ui.export_html import html_page

            text = html_page(title, meta, items)
        else:
            from di_code.ui.export_markdown import markdown_page

            text = markdown_page(title, meta, items)
    return redact(text)


def _json(source: Session | Sequence[Message], entries: Sequence[object]) -> str:
    """`{"session": {id, cwd, timestamp}, "messages": [...]}`, each message as the session
    file spells it; characters a terminal would act on written as `\\u` escapes."""
    messages = [
        entry.message if isinstance(entry, MessageEntry) else entry
        for entry in entries
        if isinstance(entry, MessageEntry) or getattr(entry, "role", None)
    ]
    header = (
        {"id": source.id, "cwd": source.cwd, "timestamp": source.header.timestamp}
        if not isinstance(source, Sequence)
        else None
    )
    data = {"session": header, "messages": [to_dict(message) for message in messages]}
    return json_escaped(json.dumps(data, ensure_ascii=False, indent=2)) + "\n"


def write_export(text: str, path: Path) -> None:
    """Write an export to `path` through the one redaction: to a new file beside it, renamed
    over it, so a symlink at `path` (one a repository planted) is replaced, never followed;
    into a pipe or a device (`-o /dev/stdout`, a FIFO, `/dev/null`), which stays as it is."""
    data = redact(text).encode("utf-8")
    if write_into_stream(path, data):
        return
    with parent_folder(path.parent.resolve() / path.name) as folder:
        replace_whole(folder, path.name, data)


async def export_command(repl: ChatView, arg: str) -> bool:
    """`/export [PATH]`: this conversation to PATH (its format from the name: `.md`, `.json`,
    else HTML), by default `di-code-<session>.html` in the workspace. Made on a thread of its
    own as the chat's busy task: a session of 50 MB takes seconds, during which Esc or Ctrl-C
    stop it (nothing is written) and the screen goes on."""
    session = repl.setup.session
    name = f"di-code-{session.id[:8] if session is not None else 'chat'}.html"
    path = Path(arg.strip()).expanduser() if arg.strip() else Path(name)
    path = path if path.is_absolute() else repl.setup.workspace / path
    source = session if session is not None else list(repl.agent.transcript)
    repl.start(_exporting(repl, source, path))
    return True


def _exporting(
    repl: ChatView, source: Session | Sequence[Message], path: Path
) -> Callable[[AbortController], Awaitable[None]]:
    async def work(controller: AbortController) -> None:
        signal, deciding, writing = controller.signal, threading.Lock(), []

        def export() -> None:
            text = export_text(source, format_of(path))
            with deciding:  # a stop while the text was made: nothing is written
                if signal.aborted:
                    return
                writing.append(path)
            write_export(text, path)

        try:
            await unless_aborted(on_own_thread(export), signal)
        except LeftBehind:
            with deciding:
                late = bool(writing)  # the file was being written: it will be whole
            done = "it was being written and is whole" if late else "nothing was written"
            say(repl, f"Export stopped: {done} ({path}).")
        except OSError as exc:
            fail(repl, f"Cannot write {path}: {exc.strerror or exc}")
        else:
            say(repl, f"Exported to {path}")

    return work
