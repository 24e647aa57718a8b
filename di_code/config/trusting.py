"""Trusting a project, and what trusting it would let through: the part of trust that reads
the settings (a file is checked before it is trusted, and what waits for trust depends on the
providers the user has set up); `trust` itself keeps the records and reads no settings."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from di_code.ai.codec import loads_valid
from di_code.config.project import ProjectFile, find_project_config, unsafe_reason
from di_code.config.settings import load_user_settings, parse_settings, user_providers
from di_code.config.toml_file import MAX_BYTES, ConfigError, decode_toml
from di_code.config.trust import (
    MCP_JSON,
    ROOT_FILES,
    TrustStore,
    digest,
    root_file,
    safe_project,
    split_by_providers,
    split_untrusted,
)
from di_code.system.files.opener import read_path


class FilesChanged(ConfigError):
    """A project file changed after the trust question showed it: nothing was trusted."""


def _root_files(workspace: Path) -> dict[Path, tuple[str, bytes]]:
    """The project's files at its repository root that trusting records: what trusting each
    allows and its bytes, read once."""
    files = {}
    for name, allowed in ROOT_FILES.items():
        path, reason = root_file(workspace, name)
        if path is None:
            continue
        if reason is not None:
            raise ConfigError(f"{path} cannot be trusted: {reason}")
        files[path] = (allowed, read_path(path, MAX_BYTES))
    return files


def trust_project(home: Path, workspace: Path, shown: Mapping[str, str] | None = None) -> str:
    """Trust the project settings file (and `.mcp.json`, `.claude/settings.json`) as it is
    now; the line to show. With `shown` (each file's SHA-256 as the question read it), only
    those exact bytes: a file changed, added or gone since raises `FilesChanged`."""
    project = find_project_config(workspace, home)
    if project is not None:
        project = safe_project(home, workspace)
    files = _root_files(workspace)
    data = read_path(project.path, MAX_BYTES) if project is not None else b""
    read = {str(path): digest(body) for path, (_, body) in files.items()}
    if project is not None:
        read[str(project.path)] = digest(data)
    if shown is not None and read != dict(shown):
        raise FilesChanged("the project's files changed after the question was asked: not trusted")
    if project is None and not files:
        safe_project(home, workspace)  # says there is nothing to trust
    if project is not None:
        document = decode_toml(data, project.path)
        parse_settings(document, str(project.path))  # a file that cannot be used is not trusted
    store = TrustStore(home)
    lines = []
    for path, (allowed, body) in files.items():
        store.set_file(path, digest(body))
        lines.append(f"trusted {path} as it is now: {allowed}")
    if project is None:
        return "\n".join(lines)
    _, keys = split_untrusted(document)
    store.set(project.folder.resolve(), digest(data))
    allowed = ", ".join(keys) if keys else "nothing that needed trust"
    return "\n".join([f"trusted {project.path} as it is now; it may set: {allowed}", *lines])


@dataclass(frozen=True, slots=True)
class HeldBack:
    """One project file's settings that wait for trust."""

    path: Path
    values: tuple[tuple[str, str], ...]
    """(dotted key, or `mcpServers.NAME`; its value as JSON, or the server's command line or
    URL), in the file's order: what trusting would let through, to show the user."""


@dataclass(frozen=True, slots=True)
class TrustOffer:
    """Chat's trust question: what it lists, and the files as read for that list, so that a
    yes trusts exactly the bytes it showed."""

    text: str
    """Each value a yes lets through, a line (the URL, the rule, the command)."""
    shown: tuple[tuple[str, str], ...]
    """(path, SHA-256) of each project file trusting records, as read for `text`."""


def trust_offer(home: Path, workspace: Path) -> TrustOffer | None:
    """What chat's first-run question asks about; None when nothing waits for trust."""
    project, files = _files_now(home, workspace)
    items = _held_back(home, project, files)
    if not items:
        return None
    shown = tuple((str(path), digest(data)) for path, data in files.items())
    return TrustOffer(_listed(items), shown)


def held_back_items(home: Path, workspace: Path) -> list[HeldBack]:
    """What trusting the project would let through now: the keys its settings file may not
    set yet, the servers of its `.mcp.json` and the hooks of `.claude/settings.json`, with
    their values."""
    return _held_back(home, *_files_now(home, workspace))


def _files_now(home: Path, workspace: Path) -> tuple[ProjectFile | None, dict[Path, bytes]]:
    """The project's settings file (None without one) and each project file trusting
    records that may be used (a file another user may write is left out), read once."""
    project = find_project_config(workspace, home)
    if project is not None and unsafe_reason(project) is not None:
        project = None
    paths = [project.path] if project is not None else []
    for name in ROOT_FILES:
        path, reason = root_file(workspace, name)
        if path is not None and reason is None:
            paths.append(path)
    files = {}
    for path in paths:
        try:
            files[path] = read_path(path, MAX_BYTES)
        except OSError:
            continue  # the start-up said what is wrong with it
    return project, files


def _held_back(home: Path, project: ProjectFile | None, files: dict[Path, bytes]) -> list[HeldBack]:
    found = []
    store = TrustStore(home)
    for path, data in files.items():
        if project is not None and path == project.path:
            try:
                usable = user_providers(load_user_settings(home), os.environ)
                _, dropped = split_by_providers(decode_toml(data, path), usable, "")
            except ConfigError:
                dropped = []  # the start-up said what is wrong with it
            if dropped and not store.trusts(project.folder.resolve(), digest(data)):
                shown = tuple((key, json.dumps(value)) for key, value in dropped)
                found.append(HeldBack(path, shown))
        elif store.files().get(str(path)) != digest(data):
            values = (_mcp_servers if path.name == MCP_JSON else _claude_hooks)(data)
            if values:
                found.append(HeldBack(path, values))
    return found


def _claude_hooks(data: bytes) -> tuple[tuple[str, str], ...]:
    """`hooks.EVENT` and each hook's command (nothing when the file has no hooks)."""
    try:
        hooks = loads_valid(data).get("hooks")
    except (ValueError, AttributeError):
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


def _mcp_servers(data: bytes) -> tuple[tuple[str, str], ...]:
    """`mcpServers.NAME` and its command line or URL, as far as the file can be read."""
    try:
        servers = loads_valid(data).get("mcpServers")
    except (ValueError, AttributeError):
        servers = None
    if not isinstance(servers, dict):
        return (("mcpServers", "(unreadable)"),)
    shown = []
    for name, entry in servers.items():
        entry = entry if isinstance(entry, dict) else {}
        url, args = entry.get("url"), entry.get("args")
        words = [url] if url else [entry.get("command"), *(args if isinstance(args, list) else [])]
        line = " ".join(_word(str(word)) for word in words if word is not None)
        shown.append((f"mcpServers.{name}", line))
    return tuple(shown)


_PLAIN_WORD = re.compile(r"[^\s\"'\\\x00-\x1f\x7f-\x9f]+")


def _word(word: str) -> str:
    """A word of a command line as it can be read back: a JSON string when it holds a space, a
    quote, a backslash or a control character (an argument with a line break would otherwise
    draw a line of its own in the list, and `"a b"` would look like two arguments)."""
    return word if _PLAIN_WORD.fullmatch(word) else json.dumps(word, ensure_ascii=False)


def _listed(items: list[HeldBack]) -> str:
    """`items` for chat's first-run question, one value a line (the URL, the rule, the
    command, not only the key's name)."""
    parts = []
    for item in items:
        if item.path.name == MCP_JSON:
            parts.append(f"{item.path} would start these MCP servers:")
            parts += [f"  {key.removeprefix('mcpServers.')}: {line}" for key, line in item.values]
        elif item.path.parent.name == ".claude":
            parts.append(f"{item.path} would run these hooks:")
            parts += [f"  {key.removeprefix('hooks.')}: {line}" for key, line in item.values]
        else:
            parts.append(f"{item.path} would set:")
            parts += [f"  {key} = {value}" for key, value in item.values]
    return "\n".join(parts)
