"""Trusting a project, and what trusting it would let through: the part of trust that reads
the settings (a file is checked before it is trusted, and what waits for trust depends on the
providers the user has set up); `trust` itself keeps the records and reads no settings."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from di_code.ai.files.door import read_path
from di_code.config.project import find_project_config, unsafe_reason
from di_code.config.settings import load_user_settings, parse_settings, user_providers
from di_code.config.toml_file import MAX_BYTES, ConfigError, decode_toml
from di_code.config.trust import (
    CLAUDE_SETTINGS,
    MCP_JSON,
    ROOT_FILES,
    TrustStore,
    digest,
    root_file,
    safe_project,
    split_by_providers,
    split_untrusted,
    trusted_file,
)


def trust_root_files(home: Path, workspace: Path) -> list[str]:
    lines = []
    for name, allowed in ROOT_FILES.items():
        path, reason = root_file(workspace, name)
        if path is None:
            continue
        if reason is not None:
            raise ConfigError(f"{path} cannot be trusted: {reason}")
        TrustStore(home).set_file(path, digest(read_path(path, MAX_BYTES)))
        lines.append(f"trusted {path} as it is now: {allowed}")
    return lines


def trust_project(home: Path, workspace: Path) -> str:
    """Trust the project settings file (and `.mcp.json`) as it is now; the line to show."""
    if find_project_config(workspace, home) is None:
        file_lines = trust_root_files(home, workspace)
        if file_lines:
            return "\n".join(file_lines)
    project = safe_project(home, workspace)
    data = read_path(project.path, MAX_BYTES)
    document = decode_toml(data, project.path)
    parse_settings(document, str(project.path))  # a file that cannot be used is not trusted
    file_lines = trust_root_files(home, workspace)
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
    found = []
    project = find_project_config(workspace, home)
    if project is not None and unsafe_reason(project) is None:
        try:
            data = read_path(project.path, MAX_BYTES)
            usable = user_providers(load_user_settings(home), os.environ)
            _, dropped = split_by_providers(decode_toml(data, project.path), usable, "")
        except (OSError, ConfigError):
            dropped = []  # the start-up said what is wrong with it
        if dropped and not TrustStore(home).trusts(project.folder.resolve(), digest(data)):
            shown = tuple((key, json.dumps(value)) for key, value in dropped)
            found.append(HeldBack(project.path, shown))
    for name, shown_by in ((MCP_JSON, _mcp_servers), (CLAUDE_SETTINGS, _claude_hooks)):
        path, reason = root_file(workspace, name)
        if path is not None and reason is None and not trusted_file(home, path):
            values = shown_by(path)
            if values:
                found.append(HeldBack(path, values))
    return found


def _claude_hooks(path: Path) -> tuple[tuple[str, str], ...]:
    """`hooks.EVENT` and each hook's command (nothing when the file has no hooks)."""
    try:
        hooks = json.loads(read_path(path, MAX_BYTES)).get("hooks")
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
        servers = json.loads(read_path(path, MAX_BYTES)).get("mcpServers")
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
