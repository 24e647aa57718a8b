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

import json
import os
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from di_code.ai.private_files import private_folder
from di_code.config.project import (
    ProjectFile,
    find_project_config,
    project_root,
    unsafe_reason,
)
from di_code.config.toml_file import ConfigError, decode_toml

TRUST_FILE = "trusted.json"
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
    import hashlib  # with tempfile, ~10 ms: only once a project has a file to check

    return hashlib.sha256(data).hexdigest()


def split_untrusted(
    data: Mapping[str, Any], usable: Collection[str] | None = None
) -> tuple[dict[str, Any], list[str]]:
    """(the document with only `SAFE_KEYS`, the dotted keys left out). With `usable` (the
    providers the user has set up), a `model` on any other provider is left out too."""
    kept, dropped = _split(data, usable, "")
    return kept, [key for key, _ in dropped]


def _split(
    data: Mapping[str, Any], usable: Collection[str] | None, prefix: str
) -> tuple[dict[str, Any], list[tuple[str, Any]]]:
    """`split_untrusted`, with the value of each key left out."""
    kept: dict[str, Any] = {}
    dropped: list[tuple[str, Any]] = []
    for key, value in data.items():
        path = dotted(prefix, key)
        if isinstance(value, dict):
            inner, lost = _split(value, usable, f"{path}.")
            if inner:
                kept[key] = inner
            dropped += lost
        elif path in SAFE_KEYS and not (path == "model" and _elsewhere(value, usable)):
            kept[key] = value
        else:
            dropped.append((path, value))
    return kept, dropped


def _elsewhere(model: Any, usable: Collection[str] | None) -> bool:
    """Whether a project's `model` would choose a provider outside `usable` (an id without a
    provider counts for the preset that knows it)."""
    if usable is None or not isinstance(model, str):
        return False
    from di_code.config.models import PRESETS

    if "/" in model:
        return model.split("/", 1)[0] not in usable
    owners = [name for name, preset in PRESETS.items() if any(m.id == model for m in preset.models)]
    return bool(owners) and owners[0] not in usable


@dataclass(frozen=True, slots=True)
class TrustStore:
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
        projects = _with(self.entries(), str(folder), file_digest)
        self._write({"version": 1, "projects": projects, "files": self.files()})

    def set_file(self, path: Path, file_digest: str | None) -> None:
        """Record (or with None, forget) the trusted digest of one project file."""
        files = _with(self.files(), str(path), file_digest)
        self._write({"version": 1, "projects": self.entries(), "files": files})

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


def _root_file(workspace: Path, name: str) -> tuple[Path | None, str | None]:
    """The project's file `name` at its repository root and why it may not be used (another
    user's or a writable file), or (None, None) when there is none."""
    path = project_root(workspace.resolve()) / name
    if not path.is_file():
        return None, None
    return path, unsafe_reason(ProjectFile(path, path.parent))


def project_mcp_json(home: Path, workspace: Path) -> tuple[Path | None, str | None]:
    """The project's `.mcp.json` (at its repository root) if the user trusts it as it is now:
    (path, None); (None, why not) when there is one that may not be used; (None, None) when
    there is none."""
    path, reason = _root_file(workspace, MCP_JSON)
    if path is None:
        return None, None
    if reason is not None:
        return None, f"ignored {path}: {reason}"
    if not _trusted_file(home, path):
        return None, f"{path}: its MCP servers start once you trust the project (di-code trust)"
    return path, None


def _trusted_file(home: Path, path: Path) -> bool:
    """Trust is keyed to where the file is in this project (its folder's real path), never to
    where a symlink points: a link to a trusted project's `.mcp.json` is not trusted here,
    where its relative commands would run this project's programs."""
    return TrustStore(home).files().get(str(path)) == digest(path.read_bytes())


def _trust_root_files(home: Path, workspace: Path) -> list[str]:
    lines = []
    for name, allowed in ROOT_FILES.items():
        path, reason = _root_file(workspace, name)
        if path is None:
            continue
        if reason is not None:
            raise ConfigError(f"{path} cannot be trusted: {reason}")
        TrustStore(home).set_file(path, digest(path.read_bytes()))
        lines.append(f"trusted {path} as it is now: {allowed}")
    return lines


def trust_project(home: Path, workspace: Path) -> str:
    """Trust the project settings file (and `.mcp.json`) as it is now; the line to show."""
    if find_project_config(workspace, home) is None:
        file_lines = _trust_root_files(home, workspace)
        if file_lines:
            return "\n".join(file_lines)
    from di_code.config.settings import parse_settings  # settings reads the trust store

    project = _safe_project(home, workspace)
    data = project.path.read_bytes()
    document = decode_toml(data, project.path)
    parse_settings(document, str(project.path))  # a file that cannot be used is not trusted
    file_lines = _trust_root_files(home, workspace)
    _, keys = split_untrusted(document)
    TrustStore(home).set(project.folder.resolve(), digest(data))
    allowed = ", ".join(keys) if keys else "nothing that needed trust"
    return "\n".join([f"trusted {project.path} as it is now; it may set: {allowed}", *file_lines])


@dataclass(frozen=True, slots=True)
class HeldBack:
    """One project file's settings that wait for trust."""

    path: Path
    values: tuple[tuple[str, str], ...]
    """(dotted key, or `mcpServers.NAME`; its value as JSON, or the server's command line or
    URL), in the file's order: what trusting would let through, to show the user."""


def held_back_items(home: Path, workspace: Path) -> list[HeldBack]:
    """What trusting the project would let through now: the keys its settings file may not
    set yet and the servers of its `.mcp.json`, with their values."""
    from di_code.config.settings import load_user_settings, user_providers

    found = []
    project = find_project_config(workspace, home)
    if project is not None and unsafe_reason(project) is None:
        try:
            data = project.path.read_bytes()
            usable = user_providers(load_user_settings(home), os.environ)
            _, dropped = _split(decode_toml(data, project.path), usable, "")
        except (OSError, ConfigError):
            dropped = []  # the start-up said what is wrong with it
        if dropped and not TrustStore(home).trusts(project.folder.resolve(), digest(data)):
            shown = tuple((key, json.dumps(value)) for key, value in dropped)
            found.append(HeldBack(project.path, shown))
    for name, shown_by in ((MCP_JSON, _mcp_servers), (CLAUDE_SETTINGS, _claude_hooks)):
        path, reason = _root_file(workspace, name)
        if path is not None and reason is None and not _trusted_file(home, path):
            values = shown_by(path)
            if values:
                found.append(HeldBack(path, values))
    return found


def _claude_hooks(path: Path) -> tuple[tuple[str, str], ...]:
    """`hooks.EVENT` and each hook's command (nothing when the file has no hooks)."""
    try:
        hooks = json.loads(path.read_bytes()).get("hooks")
    except (OSError, ValueError, AttributeError):
        return (("hooks", "(unreadable)"),)
    if not isinstance(hooks, dict):
        return ()
    shown = []
    for event, groups in hooks.items():
        for group in groups if isinstance(groups, list) else []:
            entries = group.get("hooks") if isinstance(group, dict) else None
            for entry in entries if isinstance(entries, list) else []:
                command = entry.get("command") if isinstance(entry, dict) else None
                shown.append((f"hooks.{event}", str(command)))
    return tuple(shown)


def _mcp_servers(path: Path) -> tuple[tuple[str, str], ...]:
    """`mcpServers.NAME` and its command line or URL, as far as the file can be read."""
    try:
        servers = json.loads(path.read_bytes()).get("mcpServers")
    except (OSError, ValueError, AttributeError):
        servers = None
    if not isinstance(servers, dict):
        return (("mcpServers", "(unreadable)"),)
    shown = []
    for name, entry in servers.items():
        entry = entry if isinstance(entry, dict) else {}
        words = [entry.get("command"), *(entry.get("args") or [])]
        line = entry.get("url") or " ".join(str(word) for word in words if word is not None)
        shown.append((f"mcpServers.{name}", str(line)))
    return tuple(shown)


def held_back(home: Path, workspace: Path) -> str | None:
    """`held_back_items` for chat's first-run question, one value a line (the URL, the rule,
    the command, not only the key's name); None when nothing waits."""
    parts = []
    for item in held_back_items(home, workspace):
        if item.path.name == MCP_JSON:
            parts.append(f"{item.path} would start these MCP servers:")
            parts += [f"  {key.removeprefix('mcpServers.')}: {line}" for key, line in item.values]
        elif item.path.parent.name == ".claude":
            parts.append(f"{item.path} would run these hooks:")
            parts += [f"  {key.removeprefix('hooks.')}: {line}" for key, line in item.values]
        else:
            parts.append(f"{item.path} would set:")
            parts += [f"  {key} = {value}" for key, value in item.values]
    return "\n".join(parts) or None


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
            state = "trusted" if digest(path.read_bytes()) == recorded else "changed since"
        except OSError:
            state = "file gone"
        lines.append(f"{shown}  sha256:{recorded[:12]}  {state}")
    return lines or ["no trusted projects"]
