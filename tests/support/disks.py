"""A small file system that really fills up (ENOSPC): a tmpfs of its own, mounted as root."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


@contextlib.contextmanager
def tiny_disk(folder: Path, size: str = "256k") -> Iterator[Path]:
    folder.mkdir(parents=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip("cannot mount a small tmpfs to fill (needs root)")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def fill(disk: Path, leave: int = 0) -> None:
    """Fill the disk, then free `leave` bytes (room for small writes, not for large ones)."""
    with contextlib.suppress(OSError), (disk / "filler").open("wb") as handle:
        while True:
            handle.write(b"\0" * 4096)
            handle.flush()
    size = (disk / "filler").stat().st_size
    os.truncate(disk / "filler", max(0, size - leave))
