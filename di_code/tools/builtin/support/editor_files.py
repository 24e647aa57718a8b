"""Text files as the user's editor holds them, for read, write and edit under `di-code acp`
when the editor offers its file system: the model then sees unsaved buffers, and its writes
land in the editor (which tracks and can undo them) instead of behind its back.

Paths are resolved and confined to the workspace before they get here, exactly as for the disk.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol


class EditorFiles(Protocol):
    async def read_text(self, path: Path) -> str:
        """The file's text as the editor has it; raises OSError when it cannot be read."""
        ...

    async def write_text(self, path: Path, text: str) -> None:
        """Replace the file's text in the editor; raises OSError when it cannot be written."""
        ...
