"""The editor's file system over ACP (`fs/read_text_file`, `fs/write_text_file`), as the
file tools' EditorFiles: what the editor refuses becomes the OSError the tools report; and as
the writer `/undo` hands a restored text file to, so the editor's open buffer gets it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acp import RequestError

from di_code.acp.previews import confined
from di_code.session.undo_plan import TextWriter

EDITOR_WAIT = 60.0
"""Seconds undo waits for the editor to write one file before writing the disk itself."""


@dataclass
class ClientFiles:
    client: Any
    session_id: str = ""
    """Set once the session has its id (the tools are made before it)."""

    async def read_text(self, path: Path) -> str:
        try:
            reply = await self.client.read_text_file(session_id=self.session_id, path=str(path))
        except RequestError as exc:
            raise OSError(f"the editor could not read it: {exc}") from None
        content: str = reply.content
        return content

    async def write_text(self, path: Path, text: str) -> None:
        try:
            await self.client.write_text_file(
                session_id=self.session_id, path=str(path), content=text
            )
        except RequestError as exc:
            raise OSError(f"the editor could not write it: {exc}") from None


def undo_writer(
    files: ClientFiles, tools: Callable[[], Iterable[Any]], loop: asyncio.AbstractEventLoop
) -> TextWriter:
    """Undo's writer (it runs in a worker thread): a file the session's write tool could
    write goes to the editor, on the event loop; False when refused or the editor fails."""

    def write(path: Path, text: str) -> bool:
        target = confined(tools(), path)
        if target is None:
            return False
        asked = asyncio.run_coroutine_threadsafe(files.write_text(target, text), loop)
        try:
            asked.result(EDITOR_WAIT)
        except (OSError, TimeoutError):
            asked.cancel()
            return False
        return True

    return write
