"""The editor's file system over ACP (`fs/read_text_file`, `fs/write_text_file`), as the
file tools' EditorFiles: what the editor refuses becomes the OSError the tools report; and as
the writer `/undo` hands a restored text file to, so the editor's open buffer gets it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from acp import RequestError

from di_code.acp.previews import confined
from di_code.session.undo_plan import TextWriter
from di_code.system.files.opener import read_path
from di_code.tools.builtin.write import PREVIEW_BYTES

EDITOR_WAIT = 60.0
"""Seconds undo waits for the editor to answer before writing the disk itself."""
T = TypeVar("T")


@dataclass
class ClientFiles:
    client: Any
    session_id: str = ""
    """Set once the session has its id (the tools are made before it)."""
    _asking: set[asyncio.Future[Any]] = field(default_factory=set)
    _abandoned: bool = False

    async def read_text(self, path: Path) -> str:
        reply = await self._ask(
            self.client.read_text_file(session_id=self.session_id, path=str(path)), "read"
        )
        content: str = reply.content
        return content

    async def write_text(self, path: Path, text: str) -> None:
        await self._ask(
            self.client.write_text_file(session_id=self.session_id, path=str(path), content=text),
            "write",
        )

    def abandon(self) -> None:
        """The session is closing: every question still waiting for the editor is given up
        (its tool fails at once), and no new one is asked. A close never waits on the editor."""
        self._abandoned = True
        for asking in list(self._asking):
            asking.cancel()

    async def _ask(self, request: Coroutine[Any, Any, Any], verb: str) -> Any:
        if self._abandoned:
            request.close()
            raise OSError(f"the editor could not {verb} it: the session was closed")
        asking = asyncio.ensure_future(request)
        self._asking.add(asking)
        try:
            return await asking
        except RequestError as exc:
            raise OSError(f"the editor could not {verb} it: {exc}") from None
        except asyncio.CancelledError:
            if not (self._abandoned and asking.cancelled()) or _cancelling():
                raise
            raise OSError(f"the editor could not {verb} it: the session was closed") from None
        finally:
            self._asking.discard(asking)


def _cancelling() -> bool:
    """Whether the task running this is itself being cancelled (not only what it awaits)."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


def undo_writer(
    files: ClientFiles, tools: Callable[[], Iterable[Any]], loop: asyncio.AbstractEventLoop
) -> TextWriter:
    """Undo's writer (it runs in a worker thread): a file the session's write tool could
    write, whose buffer holds no unsaved change, goes to the editor (asked on the event
    loop); False when not, or when the editor fails: undo writes the disk then."""

    def asked(call: Coroutine[Any, Any, T]) -> T:
        future = asyncio.run_coroutine_threadsafe(call, loop)
        try:
            return future.result(EDITOR_WAIT)
        except TimeoutError:
            future.cancel()
            raise

    def write(path: Path, text: str) -> bool:
        target = confined(tools(), path)
        try:
            if target is None or _unsaved(target, lambda: asked(files.read_text(target))):
                return False
            asked(files.write_text(target, text))
        except (OSError, ValueError, TimeoutError):
            return False
        return True

    return write


def _unsaved(path: Path, buffer: Callable[[], str]) -> bool:
    """Whether the editor's buffer of `path` differs from the disk (the user typed and did
    not save: writing the buffer would throw that away). Line ends are the editor's own."""
    try:
        disk: str | None = read_path(path, PREVIEW_BYTES).decode("utf-8")
    except FileNotFoundError:
        disk = None
    try:
        shown = buffer()
    except OSError:  # the editor has no such file: then neither may the disk
        return disk is not None
    return disk is None or shown not in (disk, disk.replace("\r\n", "\n"))
