"""The editor's file system over ACP (`fs/read_text_file`, `fs/write_text_file`), as the
file tools' EditorFiles: what the editor refuses becomes the OSError the tools report."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acp import RequestError


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
