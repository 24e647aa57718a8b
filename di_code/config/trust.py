"""Which projects the user trusts, and what an untrusted project may set.

A project's settings file may choose a model (on a provider the user has set up), a thinking
level, limits (only lower than the user's: di_code.config.settings) and deny rules; every
other key (where requests and keys go, which key variable is read, the permission mode, allow
rules, discovery URLs, and any key added later, such as ones that run code or send data) is
ignored until the user runs `di-code trust` (or `/trust` in chat). It is an allow-list on
purpose: a new setting is untrusted until someone decides otherwise.

Trust is recorded in `$DI_CODE_HOME/trusted.json` as the project folder's real path and the
SHA-256 of the settings file's bytes, so a changed file is untrusted again. A project's
`.mcp.json` (MCP servers are programs that run here) and Claude Code's `.claude/settings.json`
(its hooks are commands) are trusted the same way, each by its own hash and its place in the
project (never where a symlink points). `trust --list` shows every kind, `--revoke` takes them
all back; `held_back_items` lists what trusting would let through.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Collection, Iterator, Mapping
from pathlib import Path
from typing import Any

import msgspec

from di_code.config.project import (
    ProjectFile,
    find_project_config,
    project_root,
    unsafe_reason,
)
from di_code.config.toml_file import MAX_BYTES, ConfigError
from di_code.system.files.opener import read_path
from di_code.system.private_files import open_private, private_folder

TRUST_FILE = "trusted.json"
LOCK_FILE = "trusted.json.lock"
MCP_JSON = ".mcp.json"
CLAUDE_SETTINGS = ".claude/settings.json"
ROOT_FILES = {MCP_JSON: "its MCP servers may start", CLAUDE_SETTINGS: "its hooks may run"}
"""Files at the repository root that run programs, trusted one by one: what trust allows."""
SAFE_KEYS = frozenset({"model", "thinking", "limits.max_turns", "permissions.deny"})
"""The dotted keys an untrusted project may set."""


def dotted(prefix: str, key: str) -> str:
    """A key's dotted path, the key quoted when it is not a plain word."""
    return prefix + (key if key.replace("_", "a").isalnum() else json.dumps(key))


def digest(data: bytes) -> str:
    import hashlib  # it brings tempfile: only once a project has a file to check

    return hashlib.sha256(data).hexdigest()


def split_untrusted(
    data: Mapping[str, Any], usable: Collection[str] | None = None
) -> tuple[dict[str, Any], list[str]]:
    """(the document with only `SAFE_KEYS`, the dotted keys left out). With `usable` (the
    providers the user has set up), a `model` on any other provider is left out too."""
    kept, dropped = split_by_providers(data, usable, "")
    return kept, [key for key, _ in dropped]


def split_by_providers(
    data: Mapping[str, Any], usable: Collection[str] | None, prefix: str
) -> tuple[dict[str, Any], list[tuple[str, Any]]]:
    """`split_untrusted`, with the value of each key left out."""
    kept: dict[str, Any] = {}
    dropped: list[tuple[str, Any]] = []
    for key, value in data.items():
        path = dotted(prefix, key)
        if isinstance(value, dict):
            inner, lost = split_by_providers(value, usable, f"{path}.")
            if inner:
                kept[key] = inner
            dropped += lost
        elif path in SAFE_KEYS and not (path == "model" and _elsewhere(value, usable)):
            kept[key] = value
        else:
            dropped.append((path, value))
    return kept, dropped


def _elsewhere(model: Any, usable: Collection[str] | None) -> bool:
    """Whether a project's `model` would choose a provider outside `usable`, read as the provider
    factory reads a spec (di_code.config.selection.provider_named, on the presets): an id alone
    counts for the preset that knows it; one no preset knows names no provider of the user's."""
    if usable is None or not isinstance(model, str):
        return False
    from di_code.config.models import PRESETS

    if "/" in model:
        return model.split("/", 1)[0] not in usable
    owners = [name for name, preset in PRESETS.items() if any(m.id == model for m in preset.models)]
    return not owners or owners[0] not in usable


class TrustStore(msgspec.Struct, frozen=True):
    """`$DI_CODE_HOME/trusted.json`: {project folder: SHA-256 of its settings file} and
    {`.mcp.json` path: SHA-256 of it}."""

    home: Path

    @property
    def path(self) -> Path:
        return self.home / TRUST_FILE

    def entries(self) -> dict[str, str]:
        try:
            data = json.loads(self.path.read_bytes())
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            raise ConfigError(f"cannot read {self.path}: {exc}") from exc
        projects = data.get("projects") if isinstance(data, dict) else None
        if not isinstance(projects, dict):
            raise ConfigError(f"{self.path}: not a di-code trust file")
        return {str(k): str(v) for k, v in projects.items()}

    def files(self) -> dict[str, str]:
        """Other trusted project files (`.mcp.json`) by real path."""
        try:
            data = json.loads(self.path.read_bytes())
        except (OSError, ValueError):
            return {}
        files = data.get("files") if isinstance(data, dict) else None
        return {str(k): str(v) for k, v in files.items()} if isinstance(files, dict) else {}

    def trusts(self, folder: Path, file_digest: str) -> bool:
        return self.entries().get(str(folder)) == file_digest

    def set(self, folder: Path, file_digest: str | None) -> None:
        """Record (or with None, forget) the trusted digest for a project folder."""
        with self._changing():
            projects = _with(self.entries(), str(folder), file_digest)
            self._write({"version": 1, "projects": projects, "files": self.files()})

    def set_file(self, path: Path, file_digest: str | None) -> None:
        """Record (or with None, forget) the trusted digest of one project file."""
        with self._changing():
            files = _with(self.files(), str(path), file_digest)
            self._write({"version": 1, "projects": self.entries(), "files": files})

    @contextlib.contextmanager
    def _changing(self) -> Iterator[None]:
        """One change of the file at a time, across processes: an exclusive `flock` on a lock
        file beside it, held from the read to the rename, so two `di-code trust` at once (or a
        `/trust` in each of two chats) each keep the other's record."""
        fd = open_private(private_folder(self.home) / LOCK_FILE, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing drops the flock

    def _write(self, data: Any) -> None:
        """Whole or not at all, readable by the user only (mkstemp makes it 0600), in a 0700
        folder that is the user's own."""
        import tempfile

        folder = private_folder(self.home)
        fd, temp = tempfile.mkstemp(dir=folder, prefix=".trusted-")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(data, handle, indent=1, sort_keys=True)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temp, folder / TRUST_FILE)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise


def _with(table: dict[str, str], key: str, value: str | None) -> dict[str, str]:
    if value is None:
        table.pop(key, None)
    else:
        table[key] = value
    return table


def safe_project(home: Path, workspace: Path) -> ProjectFile:
    project = find_project_config(workspace, home)
    if project is None:
        raise ConfigError(
            f"no .di-code/config.toml in {workspace.resolve()} or up to its repository root"
        )
    reason = unsafe_reason(project)
    if reason is not None:
        raise ConfigError(f"{project.path} cannot be trusted: {reason}")
    return project


def project_trusted(home: Path, workspace: Path) -> bool:
    """Whether the user trusts the project: its settings file is trusted as it is now (a
    project without one is not trusted; `di-code trust` needs that file)."""
    project = find_project_config(workspace, home)
    if project is None or unsafe_reason(project) is not None:
        return False
    try:
        data = read_path(project.path, MAX_BYTES)
    except OSError:
        return False
    return TrustStore(home).trusts(project.folder.resolve(), digest(data))


def root_file(workspace: Path, name: str) -> tuple[Path | None, str | None]:
    """The project's file `name` at its repository root and why it may not be used (another
    user's or a writable file), or (None, None) when there is none."""
    path = project_root(workspace.resolve()) / name
    if not path.is_file():
        return None, None
    return path, unsafe_reason(ProjectFile(path, path.parent))


def trusted_mcp_json(home: Path, workspace: Path) -> tuple[Path | None, bytes | None, str | None]:
    """The project's `.mcp.json` (at its repository root) and its bytes if the user trusts it
    as it is now, read once: what is used is what was checked (read again, it may have
    changed in between). (path, None, why not) when there is one that may not be used;
    (None, None, None) when there is none."""
    path, reason = root_file(workspace, MCP_JSON)
    if path is None:
        return None, None, None
    if reason is not None:
        return path, None, f"ignored {path}: {reason}"
    data = trusted_bytes(home, path)
    if data is None:
        why_not = f"{path}: its MCP servers start once you trust the project (di-code trust)"
        return path, None, why_not
    return path, data, None


def trusted_bytes(home: Path, path: Path) -> bytes | None:
    """The file's bytes if their digest is the trusted one, read once, else None. Trust is
    keyed to where the file is in this project (its folder's real path), never to where a
    symlink points: a link to a trusted project's `.mcp.json` is not trusted here, where its
    relative commands would run this project's programs."""
    data = read_path(path, MAX_BYTES)
    return data if TrustStore(home).files().get(str(path)) == digest(data) else None


def revoke_project(home: Path, workspace: Path) -> str:
    """Take back the trust of the project's settings file and of its `.mcp.json`."""
    project = find_project_config(workspace, home)
    folder = (project.folder if project else workspace).resolve()
    store = TrustStore(home)
    lines = []
    if str(folder) in store.entries():
        store.set(folder, None)
        lines.append(f"no longer trusted: {folder}")
    for name in ROOT_FILES:
        path = project_root(workspace.resolve()) / name
        if str(path) in store.files():
            store.set_file(path, None)
            lines.append(f"no longer trusted: {path}")
    return "\n".join(lines) or f"{folder} was not trusted"


def trusted_lines(home: Path) -> list[str]:
    """One line per trusted project and per trusted `.mcp.json`: where it is and whether the
    file changed since."""
    store = TrustStore(home)
    entries = [(Path(f) / ".di-code" / "config.toml", f, d) for f, d in store.entries().items()]
    entries += [(Path(path), path, d) for path, d in store.files().items()]
    lines = []
    for path, shown, recorded in sorted(entries, key=lambda entry: entry[1]):
        try:
            state = "trusted" if digest(read_path(path, MAX_BYTES)) == recorded else "changed since"
        except OSError:
            state = "file gone"
        lines.append(f"{shown}  sha256:{recorded[:12]}  {state}")
    return lines or ["no trusted projects"]
