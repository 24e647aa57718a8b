"""The task file of `di-code batch`: one JSON object a line, checked whole before anything runs.

A batch that fails on line 900 after 899 tasks ran is half-run: every line is read and checked
first, and all the bad ones are reported together with their line numbers (exit 2).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from di_code.batch.checkout import CheckoutError, is_url

PERMISSION_MODES = ("ask", "accept-edits", "auto", "read-only")
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
"""Ids name folders and branches: a safe, short alphabet."""
_FIELDS = {
    "id",
    "repo",
    "ref",
    "prompt",
    "prompt_file",
    "model",
    "max_turns",
    "timeout",
    "permission_mode",
    "tools",
    "env",
}


class TaskFileError(Exception):
    """The task file cannot run as it is; the message lists every bad line."""


@dataclass(frozen=True, slots=True)
class Task:
    id: str
    repo: str
    prompt: str
    ref: str | None = None
    model: str | None = None
    max_turns: int | None = None
    timeout: float | None = None
    permission_mode: str | None = None
    tools: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    line: int = 0


def read_tasks(path: Path) -> list[Task]:
    """All the tasks of `path`, or TaskFileError naming each bad line (blank lines skipped)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TaskFileError(f"cannot read {path}: {exc}") from None
    tasks: list[Task] = []
    errors: list[str] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            task = _task(json.loads(line), number, path.parent)
        except json.JSONDecodeError as exc:
            errors.append(f"{path}:{number}: not JSON ({exc.msg})")
            continue
        except ValueError as exc:
            errors.append(f"{path}:{number}: {exc}")
            continue
        if task.id in seen:
            errors.append(f"{path}:{number}: id {task.id!r} is also on line {seen[task.id]}")
            continue
        seen[task.id] = number
        tasks.append(task)
    if errors:
        raise TaskFileError("\n".join(errors))
    if not tasks:
        raise TaskFileError(f"{path}: no tasks")
    return tasks


def _task(data: Any, line: int, base: Path) -> Task:
    if not isinstance(data, dict):
        raise ValueError("a task is a JSON object")
    unknown = sorted(set(data) - _FIELDS)
    if unknown:
        raise ValueError(f"unknown field {unknown[0]!r}")
    task_id = _text(data, "id", required=True)
    if not _ID.fullmatch(task_id or ""):
        raise ValueError("id must be 1-100 letters, digits, '.', '_' or '-'")
    mode = _text(data, "permission_mode")
    if mode is not None and mode not in PERMISSION_MODES:
        raise ValueError(f"permission_mode must be one of {', '.join(PERMISSION_MODES)}")
    return Task(
        id=task_id or "",
        repo=_repo(_text(data, "repo", required=True) or "", base),
        prompt=_prompt(data, base),
        ref=_text(data, "ref"),
        model=_text(data, "model"),
        max_turns=_number(data, "max_turns", int),
        timeout=_number(data, "timeout", float),
        permission_mode=mode,
        tools=_text(data, "tools"),
        env=_env(data),
        line=line,
    )


def _text(data: dict[str, Any], name: str, *, required: bool = False) -> str | None:
    value = data.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{name} must be a non-empty string")
    return value


def _number(data: dict[str, Any], name: str, kind: type[int] | type[float]) -> Any:
    value = data.get(name)
    if value is None:
        return None
    wrong_kind = isinstance(value, bool) or not isinstance(value, int | float)
    if wrong_kind or (kind is int and not isinstance(value, int)) or value <= 0:
        raise ValueError(f"{name} must be a positive {'integer' if kind is int else 'number'}")
    return kind(value)


def _repo(repo: str, base: Path) -> str:
    """A URL as it is; a path from the task file's folder (so the file works from anywhere)."""
    try:
        url = is_url(repo)
    except CheckoutError as exc:  # a transport README does not name (`ext::` runs a command)
        raise ValueError(str(exc)) from None
    if url:
        return repo
    folder = base / Path(repo).expanduser()
    if not folder.is_dir():
        raise ValueError(f"repo {repo!r} is neither a folder nor a git URL")
    return str(folder)


def _prompt(data: dict[str, Any], base: Path) -> str:
    """`prompt`, or the text of `prompt_file` (relative to the task file's folder)."""
    if ("prompt" in data) == ("prompt_file" in data):
        raise ValueError("give exactly one of prompt and prompt_file")
    if "prompt" in data:
        return _text(data, "prompt", required=True) or ""
    name = _text(data, "prompt_file", required=True) or ""
    try:
        return (base / name).read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"prompt_file {name!r}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ValueError(f"prompt_file {name!r} is not UTF-8 text") from None


def _env(data: dict[str, Any]) -> dict[str, str]:
    env = data.get("env") or {}
    if not isinstance(env, dict) or not all(
        isinstance(key, str) and key and "=" not in key and isinstance(value, str)
        for key, value in env.items()
    ):
        raise ValueError("env must be an object of string names to string values")
    return dict(env)
