"""Checkpoints outside git: the original of each file write/edit change, saved before the
first change of each prompt, in the session's own folder.

`manifest.json` maps each touched path to whether it existed, its mode, the saved copy, a hash
of what the last tool call left, and whether the user changed it between two tool calls, so
undo can tell the user's edits from the agent's. Copies are 0600 in 0700 folders whatever
the original's mode (which the manifest keeps, and a restore gives back), and are read and
written without following symlinks. The user's files are opened through the file opener: a FIFO
or a device is never waited on (nothing to back up: the tool refuses it), and no more than
`max_file_bytes` of a file is ever read.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
from pathlib import Path
from typing import Any

import msgspec
from msgspec.structs import replace

from di_code.session.safe_files import read_file, write_file
from di_code.system.files.opener import (
    FileTooLarge,
    NotRegularFile,
    chunks,
    open_real,
    read_at_most,
)
from di_code.system.private_files import private_folder

MANIFEST = "manifest.json"
MANIFEST_MAX_BYTES = 64 * 1024 * 1024


class Original(msgspec.Struct, frozen=True):
    path: str
    """Absolute real path of the file."""
    existed: bool
    mode: int | None
    copy: str | None
    """File name of the saved copy in the backup folder (None: did not exist or not kept)."""
    too_large: bool = False
    after_hash: str | None = None
    """sha256 of the file as the last tool call left it ("" when it no longer existed)."""
    user_changed: bool = False
    """Changed by someone else between two of the prompt's tool calls."""
    failed: str = ""
    """Why no copy could be kept (a full disk, no permission): undo cannot restore it."""


class FileBackup:
    """One prompt's originals, in `folder`."""

    def __init__(self, folder: Path, max_file_bytes: int) -> None:
        self.folder = folder
        self.max_file_bytes = max_file_bytes
        self._originals = self._load()

    @property
    def originals(self) -> list[Original]:
        return list(self._originals.values())

    def save(self, path: Path) -> str:
        """Keep `path` as it is now, unless this prompt already kept it; "" or why it failed."""
        key = str(path)
        known = self._originals.get(key)
        if known is not None:
            if known.after_hash is not None and content_hash(path) != known.after_hash:
                return self._record(replace(known, user_changed=True))
            return ""
        try:
            with open_real(path) as f:
                info = os.fstat(f.fileno())
                mode = stat.S_IMODE(info.st_mode)
                data = read_at_most(f, self.max_file_bytes)
        except FileNotFoundError:
            return self._record(Original(key, existed=False, mode=None, copy=None))
        except FileTooLarge:
            return self._record(Original(key, True, mode, None, too_large=True))
        except (IsADirectoryError, NotRegularFile):
            return ""  # a folder, a FIFO or a device: the tool refuses it
        except OSError as exc:
            if _is_file_or_link(path):
                return self._record(Original(key, True, None, None, failed=_reason(exc)))
            return ""
        copy = f"{len(self._originals):06d}"
        try:
            self._make_folders()
            with contextlib.suppress(FileNotFoundError):
                (self.folder / copy).unlink()
            write_file(self.folder / copy, data, 0o600)  # the mode is in the manifest
        except OSError as exc:
            return self._record(Original(key, True, mode, None, failed=_reason(exc)))
        return self._record(Original(key, True, mode, copy))

    def seal(self, path: Path) -> str:
        """Record what the tool call left in `path`; "" or why that failed."""
        known = self._originals.get(str(path))
        if known is None:
            return ""
        return self._record(replace(known, after_hash=content_hash(path)))

    def copy_hash(self, original: Original) -> str:
        return content_hash(self.folder / original.copy) if original.copy else ""

    def kept(self, original: Original) -> tuple[bytes, int]:
        """The bytes and mode of a file that existed, as its copy kept them (raises OSError:
        the caller names the path that failed)."""
        if original.copy is None:
            raise OSError(original.failed or "no copy was kept")
        data, _ = read_file(self.folder / original.copy, self.max_file_bytes)
        return data, original.mode if original.mode is not None else 0o644

    def _record(self, original: Original) -> str:
        self._originals[original.path] = original
        try:
            self._write()
        except OSError as exc:
            return _reason(exc)
        return original.failed

    def _make_folders(self) -> None:
        """The copies hold the user's files (a `.env` too): 0700, never another user's."""
        self.folder = private_folder(self.folder, within=self.folder.parent.parent)

    def _write(self) -> None:
        self._make_folders()
        data = [_to_json(original) for original in self._originals.values()]
        temp = self.folder / (MANIFEST + ".tmp")
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
        write_file(temp, json.dumps(data).encode(), 0o600)
        os.replace(temp, self.folder / MANIFEST)

    def _load(self) -> dict[str, Original]:
        try:
            raw = json.loads(read_file(self.folder / MANIFEST, MANIFEST_MAX_BYTES)[0])
        except (OSError, ValueError):
            return {}
        loaded = [_from_json(item) for item in raw] if isinstance(raw, list) else []
        return {original.path: original for original in loaded if original is not None}


def content_hash(path: Path) -> str:
    """sha256 of the file's bytes, read in chunks; "" when it does not exist (or is not a
    regular file)."""
    digest = hashlib.sha256()
    try:
        with open_real(path) as f:
            for chunk in chunks(f):
                digest.update(chunk)
    except OSError:
        return ""
    return digest.hexdigest()


def _is_file_or_link(path: Path) -> bool:
    try:
        return not stat.S_ISDIR(path.lstat().st_mode)
    except OSError:
        return False


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


def _to_json(original: Original) -> dict[str, Any]:
    return {
        "path": original.path,
        "existed": original.existed,
        "mode": original.mode,
        "copy": original.copy,
        "too_large": original.too_large,
        "after_hash": original.after_hash,
        "user_changed": original.user_changed,
        "failed": original.failed,
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
        bool(item.get("user_changed")),
        str(item.get("failed") or ""),
    )
