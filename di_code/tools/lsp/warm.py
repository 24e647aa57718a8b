"""Which language servers a workspace needs, found before any file is edited: a chat starts
them when it opens (in the background, as its MCP servers start), so the first edit does not
wait for a cold server (basedpyright takes seconds to start).

A bounded look at the workspace's names, breadth first and at most PER_FOLDER names a folder
(one crowded folder does not take the whole look), is enough: one file a server serves shows
it is needed. Nothing is opened or read, no link is followed, hidden folders and the
usual dependency and build folders are skipped.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from itertools import islice
from pathlib import Path

from di_code.tools.lsp.servers import ServerSpec

MAX_ENTRIES = 5000
"""Names looked at, at most: a huge tree costs no more than this."""
PER_FOLDER = 500
"""Names looked at in one folder, at most: a folder of thousands of images beside `src/`
leaves the look room for the folders after it."""
MAX_DEPTH = 4
SKIPPED = frozenset(
    {
        "node_modules",
        "venv",
        "env",
        "__pycache__",
        "target",
        "build",
        "dist",
        "vendor",
        "site-packages",
    }
)
"""Folders of dependencies and build output: their files are not the project's own."""


def first_files(top: Path, specs: Sequence[ServerSpec]) -> dict[str, Path]:
    """Per server name, a file below `top` it serves (of the shallowest folders first)."""
    found: dict[str, Path] = {}
    folders, seen = [(top, 0)], 0
    while folders and seen < MAX_ENTRIES and len(found) < len(specs):
        folder, depth = folders.pop(0)
        try:  # read as listed, at most its share: a folder of millions costs no more
            with os.scandir(folder) as listing:
                entries = list(islice(listing, min(PER_FOLDER, MAX_ENTRIES - seen)))
        except OSError:
            continue
        for entry in entries:
            seen += 1
            if entry.is_dir(follow_symlinks=False):
                if depth < MAX_DEPTH and not _skipped(entry.name):
                    folders.append((Path(entry.path), depth + 1))
            elif entry.is_file(follow_symlinks=False):
                path = Path(entry.path)
                for spec in specs:
                    if spec.name not in found and spec.serves(path):
                        found[spec.name] = path
    return found


def _skipped(name: str) -> bool:
    return name.startswith(".") or name in SKIPPED
