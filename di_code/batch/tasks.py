"""The task file of `di-code batch`: one JSON object a line, checked whole before anything runs.

A batch that fails on line 900 after 899 tasks ran is half-run: every line is read and checked
first, and all the bad ones are reported together with their line numbers (exit 2). The check
is exact, so that nothing it lets through fails later: lines end at `\n` only (JSON strings may
hold U+2028), an id is a valid git branch name component, every text is bounded and free of
NUL, and a bad value is echoed shortened.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from di_code.batch.checkout import CheckoutError, is_url
from di_code.system.errors import DiCodeError
from di_code.system.files.opener import FileTooLarge, NotRegularFile, read_path

PERMISSION_MODES = ("ask", "accept-edits", "auto", "read-only")
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
"""Ids name folders and branches: a safe alphabet, and git's rules (ref_component_problem)."""
MAX_CHARS = {
    "id": 100,
    "repo": 4096,
    "ref": 256,
    "prompt": 2_000_000,
    "prompt_file": 4096,
    "model": 256,
    "permission_mode": 64,
    "tools": 4096,
    "check": 32_768,
}
ENV_NAME_CHARS, ENV_VALUE_CHARS = 256, 32_768
ECHO_CHARS = 60
"""A bad value is echoed with at most this many characters."""
JSON_BLANKS = " \t\r"
HOME_VARIABLES = ("DI_CODE_HOME", "HOME")
"""Where a task's `run` finds its config (its sandbox, its permissions): a relative one would
be read in the task's checkout, the repository's files, while the batch read its own folder."""
_NOT_IN_REFS = re.compile(r"[\x00-\x20\x7f~^:?*\[\\/]")
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
    "check",
}


class TaskFileError(DiCodeError):
    """The task file cannot run as it is; the message lists every bad line."""

    exit_code = 2


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
    check: str | None = None
    """A shell command run in the checkout once the task ended: exit 0 is `passed`."""
    line: int = 0


def read_tasks(path: Path) -> list[Task]:
    """All the tasks of `path`, or TaskFileError naming each bad line (blank lines skipped)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TaskFileError(f"cannot read {path}: {exc}") from None
    tasks: list[Task] = []
    errors: list[str] = []
    seen: dict[str, tuple[int, str]] = {}
    """By the id in lower case: ids name folders, which a case-insensitive disk shares."""
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip(JSON_BLANKS):
            continue
        try:  # a lone surrogate (`\\ud800`) is refused by the checks of _task, with its line
            task = _task(json.loads(line, object_pairs_hook=_fields_once), number, path.parent)
        except json.JSONDecodeError as exc:
            errors.append(f"{path}:{number}: not JSON ({exc.msg})")
            continue
        except RecursionError:  # Python's parser takes about 1000 levels
            errors.append(f"{path}:{number}: nested too deep to read")
            continue
        except ValueError as exc:
            errors.append(f"{path}:{number}: {exc}")
            continue
        if task.id.lower() in seen:
            first, spelled = seen[task.id.lower()]
            also = "" if spelled == task.id else f" (as {spelled!r})"
            errors.append(f"{path}:{number}: id {task.id!r} is also on line {first}{also}")
            continue
        seen[task.id.lower()] = (number, task.id)
        tasks.append(task)
    if errors:
        raise TaskFileError("\n".join(errors))
    if not tasks:
        raise TaskFileError(f"{path}: no tasks")
    return tasks


def _fields_once(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose every field is given once: of a field given twice, which value the
    user meant (which prompt runs) is a guess."""
    fields: dict[str, Any] = {}
    for name, value in pairs:
        if name in fields:
            raise ValueError(f"{echo(name)} is given twice")
        fields[name] = value
    return fields


def _task(data: Any, line: int, base: Path) -> Task:
    if not isinstance(data, dict):
        raise ValueError("a task is a JSON object")
    unknown = sorted(set(data) - _FIELDS)
    if unknown:
        raise ValueError(f"unknown field {echo(unknown[0])}")
    task_id = _text(data, "id", required=True) or ""
    if not _ID.fullmatch(task_id):
        raise ValueError("id must be 1-100 letters, digits, '.', '_' or '-'")
    problem = ref_component_problem(task_id)
    if problem is not None:
        raise ValueError(f"id must be a valid git branch name: it {problem}")
    mode = _text(data, "permission_mode")
    if mode is not None and mode not in PERMISSION_MODES:
        raise ValueError(f"permission_mode must be one of {', '.join(PERMISSION_MODES)}")
    return Task(
        id=task_id,
        repo=_repo(_text(data, "repo", required=True) or "", base),
        prompt=_prompt(data, base),
        ref=_text(data, "ref"),
        model=_text(data, "model"),
        max_turns=_number(data, "max_turns", int),
        timeout=_number(data, "timeout", float),
        permission_mode=mode,
        tools=_text(data, "tools"),
        env=_env(data),
        check=_text(data, "check"),
        line=line,
    )


def _text(data: dict[str, Any], name: str, *, required: bool = False) -> str | None:
    value = data.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{name} must be a non-empty string")
    return checked(value, name, MAX_CHARS[name])


def checked(value: str, name: str, limit: int) -> str:
    """`value` when it has no NUL and no lone surrogate (no file name, argument or variable
    can hold either: JSON spells a lone UTF-16 half as `\\ud800`) and at most `limit`
    characters; else ValueError naming it."""
    if "\0" in value:
        raise ValueError(f"{name} contains a NUL character")
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            lone = f"U+{ord(value[exc.start]):04X}"
            raise ValueError(f"{name} contains a lone surrogate ({lone})") from None
    if len(value) > limit:
        raise ValueError(f"{name} is {len(value)} characters long (at most {limit})")
    return value


def echo(value: str) -> str:
    """`value` quoted for an error message, cut to ECHO_CHARS characters."""
    if len(value) <= ECHO_CHARS:
        return repr(value)
    shown = repr(value[:ECHO_CHARS])
    return f"{shown[:-1]}…{shown[-1]}"


def ref_component_problem(name: str) -> str | None:
    """What makes `name` no valid component of a git ref name (the rules of
    `git check-ref-format`), or None when it is one."""
    bad = _NOT_IN_REFS.search(name)
    for problem, found in (
        ("is empty", not name),
        ("starts with '.'", name.startswith(".")),
        ("contains '..'", ".." in name),
        ("contains '@{'", "@{" in name),
        (f"contains {bad.group()!r}" if bad else "", bad is not None),
        ("ends with '.'", name.endswith(".")),
        ("ends with '.lock'", name.endswith(".lock")),
    ):
        if found:
            return problem
    return None


def _number(data: dict[str, Any], name: str, kind: type[int] | type[float]) -> Any:
    value = data.get(name)
    if value is None:
        return None
    wrong_kind = isinstance(value, bool) or not isinstance(value, int | float)
    if wrong_kind or (kind is int and not isinstance(value, int)) or not 0 < value < math.inf:
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
    try:
        folder = base / Path(repo).expanduser()
        is_folder = folder.is_dir()
    except RuntimeError as exc:  # ~user with no such user
        raise ValueError(f"repo {echo(repo)}: {exc}") from None
    except OSError as exc:  # a name longer than the file system takes
        raise ValueError(f"repo {echo(repo)}: {exc.strerror or exc}") from None
    if not is_folder:
        raise ValueError(f"repo {echo(repo)} is neither a folder nor a git URL")
    return str(folder)


def _prompt(data: dict[str, Any], base: Path) -> str:
    """`prompt`, or the text of `prompt_file` (relative to the task file's folder)."""
    if ("prompt" in data) == ("prompt_file" in data):
        raise ValueError("give exactly one of prompt and prompt_file")
    if "prompt" in data:
        return _text(data, "prompt", required=True) or ""
    name = _text(data, "prompt_file", required=True) or ""
    shown = f"prompt_file {echo(name)}"
    limit = MAX_CHARS["prompt"]
    try:  # UTF-8: at most 4 bytes a character
        return checked(read_path(base / name, 4 * limit).decode("utf-8"), shown, limit)
    except FileTooLarge:
        raise ValueError(f"{shown} is over {limit} characters long") from None
    except NotRegularFile:  # a FIFO or a device, refused without waiting on it
        raise ValueError(f"{shown}: not a regular file") from None
    except OSError as exc:
        raise ValueError(f"{shown}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ValueError(f"{shown} is not UTF-8 text") from None


def _env(data: dict[str, Any]) -> dict[str, str]:
    env = data.get("env") or {}
    if not isinstance(env, dict) or not all(
        isinstance(key, str) and key and "=" not in key and isinstance(value, str)
        for key, value in env.items()
    ):
        raise ValueError("env must be an object of string names to string values")
    for name, value in env.items():
        checked(name, f"env name {echo(name)}", ENV_NAME_CHARS)
        checked(value, f"env {echo(name)}", ENV_VALUE_CHARS)
        if name in HOME_VARIABLES and not Path(value).is_absolute():
            raise ValueError(f"env {echo(name)} must be an absolute path (the task runs elsewhere)")
    return dict(env)
