"""The hooks of Claude Code's project settings, `.claude/settings.json` at the repository root.

Its `hooks` object has the shape of di-code's `[hooks]` table, so the same reader takes it
(di_code.tools.policy.hook_config). Hooks are commands, so the file counts only once the user trusts
the project as it is now (di_code.config.trust); until then a file that has hooks is one
warning line. Its other keys (permissions, env, model) are Claude Code's own and not read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from di_code.ai.codec import loads_valid
from di_code.config.project import ProjectFile, project_root, unsafe_reason
from di_code.config.toml_file import MAX_BYTES
from di_code.config.trust import CLAUDE_SETTINGS, TrustStore, digest
from di_code.system.files.opener import read_path

HookTables = tuple[tuple[str, Any], ...]


def claude_hooks(home: Path, workspace: Path) -> tuple[HookTables, tuple[str, ...]]:
    """((file, its `hooks` object),) when the trusted file has hooks, and warning lines. The
    bytes checked against the trusted digest are the bytes read."""
    path = project_root(workspace.resolve()) / CLAUDE_SETTINGS
    try:
        raw = read_path(path, MAX_BYTES)
        data = loads_valid(raw)  # a cloned repository's file: nesting or NaN is no crash
    except FileNotFoundError:
        return (), ()
    except (OSError, ValueError) as exc:
        return (), (f"{path}: not readable as JSON ({exc}); its hooks are not used",)
    hooks = data.get("hooks") if isinstance(data, dict) else None
    if not hooks:
        return (), ()  # Claude Code's other settings: nothing for di-code
    reason = unsafe_reason(ProjectFile(path, path.parent))
    if reason is not None:
        return (), (f"ignored {path}: {reason}",)
    if TrustStore(home).files().get(str(path)) != digest(raw):
        return (), (f"{path}: its hooks run once you trust the project (di-code trust)",)
    return ((str(path), hooks),), ()
