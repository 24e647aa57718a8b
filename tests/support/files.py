"""Files a test lays out before it starts what it tests."""

from __future__ import annotations

from pathlib import Path


def write(path: Path, text: str) -> Path:
    """`text` at `path` (UTF-8), its folders made as needed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
