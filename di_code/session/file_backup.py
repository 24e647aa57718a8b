"""Checkpoints outside git: the original of each file write/edit change, saved before the
first change of each prompt, in the session's own folder.

`manifest.json` maps each touched path to whether it existed, its mode, the saved copy, and
(once the prompt ended) a hash of what the prompt left, so undo can tell the user's later
edits from the agent's.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from di_code.ai.private_files import open_private, private_folder, write_private

MANIFEST = "manifest.json"


@dataclass(frozen=True, slots=True)
class Original:
    path: str
    """Absolute path of the file."""
    existed: bool
    mode: int | None
    copy: str | None
    """File name of the saved copy in the backup folder (None: did not exist or too large)."""
    too_large: bool = False
    after_hash: str | None = None
    """sha256 of the file as the prompt left it ("" when it no longer existed)."""


class FileBackup:
    """One prompt's originals, in `folder`."""

    def __init__(self, folder: Path, *, max_file_bytes: int) -> None:
        self.folder = folder
        self.max_file_bytes = max_file_bytes
        self._originals = self._load()

    @property
    def originals(self) -> list[Original]:
        return list(self._originals.values())

    def save(self, path: Path) -> None:
        """Keep `path` as it is now, unless this prompt already kept it."""
        key = str(path)
        if key in self._originals:
            return
        try:
            info = path.stat()
        except FileNotFoundError:
            self._record(Original(key, existed=False, mode=None, copy=None))
            return
        if not stat.S_ISREG(info.st_mode):
            return
        if info.st_size > self.max_file_bytes:
            self._record(Original(key, True, info.st_mode & 0o7777, None, too_large=True))
            return
        copy = f"{len(self._originals):06d}"
        _private_copy(path, self._private_folder() / copy)
        self._record(Original(key, True, info.st_mode & 0o7777, copy))

    def seal(self) -> None:
        """Record what the prompt left in each touched file."""
        if not self._originals:
            return
        for key, original in self._originals.items():
            self._originals[key] = _replace_hash(original, content_hash(Path(key)))
        self._write()

    def restore(self, original: Original) -> None:
        path = Path(original.path)
        if not original.existed:
            path.unlink(missing_ok=True)
            return
        if original.copy is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        temp = path.with_name(f".{path.name}.di-code-undo")
        shutil.copyfile(self.folder / original.copy, temp)
        if original.mode is not None:
            os.chmod(temp, original.mode)
        os.replace(temp, path)

    def _record(self, original: Original) -> None:
        self._originals[original.path] = original
        self._write()

    def _private_folder(self) -> Path:
        """The copies hold the user's files (a `.env` too): 0700, never another user's."""
        self.folder = private_folder(self.folder, within=self.folder.parent.parent)
        return self.folder

    def _write(self) -> None:
        data = [_to_json(original) for original in self._originals.values()]
        write_private(self._private_folder() / MANIFEST, json.dumps(data).encode("utf-8"))

    def _load(self) -> dict[str, Original]:
        try:
            raw = json.loads((self.folder / MANIFEST).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        loaded = [_from_json(item) for item in raw] if isinstance(raw, list) else []
        return {original.path: original for original in loaded if original is not None}


def _private_copy(source: Path, target: Path) -> None:
    """`source`'s bytes into a new 0600 file `target`, whatever the source's mode."""
    with (
        source.open("rb") as reading,
        os.fdopen(open_private(target, os.O_WRONLY | os.O_TRUNC), "wb") as writing,
    ):
        shutil.copyfileobj(reading, writing)


def content_hash(path: Path) -> str:
    """sha256 of the file's bytes; "" when it does not exist (or is not a readable file)."""
    digest = hashlib.sha256()
    try:
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except OSError:
        return ""
    return digest.hexdigest()


def _replace_hash(original: Original, after_hash: str) -> Original:
    return Original(
        original.path,
        original.existed,
        original.mode,
        original.copy,
        original.too_large,
        after_hash,
    )


def _to_json(original: Original) -> dict[str, Any]:
    return {
        "path": original.path,
        "existed": original.existed,
        "mode": original.mode,
        "copy": original.copy,
        "too_large": original.too_large,
        "after_hash": original.after_hash,
    }


def _from_json(item: Any) -> Original | None:
    """A manifest row, or None when it is not one (a damaged file restores what it can)."""
    if not isinstance(item, dict) or not isinstance(item.get("path"), str):
        return None
    mode, copy, after = item.get("mode"), item.get("copy"), item.get("after_hash")
    if copy is not None and (not isinstance(copy, str) or "/" in copy or copy.startswith(".")):
        return None
    return Original(
        item["path"],
        bool(item.get("existed")),
        mode if isinstance(mode, int) and not isinstance(mode, bool) else None,
        copy,
        bool(item.get("too_large")),
        after if isinstance(after, str) else None,
    )
