"""Which projects the user trusts, and what an untrusted project may set.

A project's settings file may choose a model, a thinking level, limits and deny rules; every
other key (where requests and keys go, which key variable is read, the permission mode, allow
rules, discovery URLs, and any key added later, such as ones that run code or send data) is
ignored until the user runs `di-code trust` (or `/trust` in chat). It is an allow-list on
purpose: a new setting is untrusted until someone decides otherwise.

Trust is recorded in `$DI_CODE_HOME/trusted.json` as the project folder's real path and the
SHA-256 of the settings file's bytes, so a changed file is untrusted again.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from di_code.config.project import ProjectFile, find_project_config, unsafe_reason
from di_code.config.toml_file import ConfigError, decode_toml

TRUST_FILE = "trusted.json"
SAFE_KEYS = frozenset({"model", "thinking", "limits.max_turns", "permissions.deny"})
"""The dotted keys an untrusted project may set."""


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def split_untrusted(data: Mapping[str, Any], prefix: str = "") -> tuple[dict[str, Any], list[str]]:
    """(the document with only `SAFE_KEYS`, the dotted keys left out)."""
    kept: dict[str, Any] = {}
    dropped: list[str] = []
    for key, value in data.items():
        path = prefix + (key if key.replace("_", "a").isalnum() else json.dumps(key))
        if isinstance(value, dict):
            inner, lost = split_untrusted(value, f"{path}.")
            if inner:
                kept[key] = inner
            dropped += lost
        elif path in SAFE_KEYS:
            kept[key] = value
        else:
            dropped.append(path)
    return kept, dropped


@dataclass(frozen=True, slots=True)
class TrustStore:
    """`$DI_CODE_HOME/trusted.json`: {project folder: SHA-256 of its settings file}."""

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

    def trusts(self, folder: Path, file_digest: str) -> bool:
        return self.entries().get(str(folder)) == file_digest

    def set(self, folder: Path, file_digest: str | None) -> None:
        """Record (or with None, forget) the trusted digest for a project folder."""
        projects = self.entries()
        if file_digest is None:
            projects.pop(str(folder), None)
        else:
            projects[str(folder)] = file_digest
        self._write({"version": 1, "projects": projects})

    def _write(self, data: Any) -> None:
        """Whole or not at all, readable by the user only."""
        self.home.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=self.home, prefix=".trusted-")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(data, handle, indent=1, sort_keys=True)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temp, self.path)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise


def _safe_project(home: Path, workspace: Path) -> ProjectFile:
    project = find_project_config(workspace, home)
    if project is None:
        raise ConfigError(
            f"no .di-code/config.toml in {workspace.resolve()} or up to its repository root"
        )
    reason = unsafe_reason(project)
    if reason is not None:
        raise ConfigError(f"{project.path} cannot be trusted: {reason}")
    return project


def trust_project(home: Path, workspace: Path) -> str:
    """Trust the project settings file as it is now; the line to show the user."""
    project = _safe_project(home, workspace)
    data = project.path.read_bytes()
    _, keys = split_untrusted(decode_toml(data, project.path))
    TrustStore(home).set(project.folder.resolve(), digest(data))
    allowed = ", ".join(keys) if keys else "nothing that needed trust"
    return f"trusted {project.path} as it is now; it may set: {allowed}"


def revoke_project(home: Path, workspace: Path) -> str:
    project = find_project_config(workspace, home)
    folder = (project.folder if project else workspace).resolve()
    store = TrustStore(home)
    if str(folder) not in store.entries():
        return f"{folder} was not trusted"
    store.set(folder, None)
    return f"no longer trusted: {folder}"


def trusted_lines(home: Path) -> list[str]:
    """One line per trusted project: its folder and whether its file changed since."""
    lines = []
    for folder, recorded in sorted(TrustStore(home).entries().items()):
        path = Path(folder) / ".di-code" / "config.toml"
        try:
            state = "trusted" if digest(path.read_bytes()) == recorded else "changed since"
        except OSError:
            state = "file gone"
        lines.append(f"{folder}  sha256:{recorded[:12]}  {state}")
    return lines or ["no trusted projects"]
