"""User hooks: commands the user's config runs around tool calls and prompts, in Claude Code's
shape.

    [[hooks.PreToolUse]]
    matcher = "bash|write"                 # a regular expression on the tool name; "" or "*": all
    hooks = [{ type = "command", command = "~/bin/check-tool", timeout = 30 }]

The same shape as the `hooks` object of Claude Code's settings.json, so one reader serves
both. Settings keep each file's `hooks` table as written (an untrusted project's is dropped with
its other unsafe keys); this module reads them when the agent is set up; nothing here runs.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from di_code.system.errors import DiCodeError

TOOL_EVENTS = ("PreToolUse", "PostToolUse")
PROMPT_EVENTS = ("UserPromptSubmit", "Stop")
"""Events of the prompt: their matcher is ignored (as Claude Code ignores it)."""
SESSION_EVENTS = ("Notification", "SessionStart", "SessionEnd", "PreCompact")
"""Events di-code tells hooks of and asks nothing (di_code.tools.policy.session_hooks); the
matcher matches what Claude Code's does: the notification's type, SessionStart's source,
SessionEnd's reason, PreCompact's trigger."""
HOOK_EVENTS = (*TOOL_EVENTS, *PROMPT_EVENTS, *SESSION_EVENTS)
DEFAULT_HOOK_TIMEOUT = 60.0
CLAUDE_TOOL_NAMES = {
    "find": "Glob",
    "fetch": "WebFetch",
    "todo": "TodoWrite",
    "task": "Task",
    "exit_plan_mode": "ExitPlanMode",
}
"""Claude Code's names for di-code's tools where they differ by more than case."""
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
GROUP_KEYS = ("matcher", "hooks")
HOOK_KEYS = ("type", "command", "timeout", "env")
"""The keys di-code reads; in its own config files any other is a mistake (an error naming it),
in Claude Code's settings.json it is Claude Code's own (left alone)."""


@dataclass(frozen=True, slots=True)
class UserHook:
    event: str
    matcher: re.Pattern[str] | None
    """None matches every tool."""
    command: str
    timeout: float
    source: str
    env: tuple[str, ...] = ()
    """Variables the hook gets although bash's commands do not (a provider key it needs):
    honoured only in the user's own config (di_code.setup.hooks)."""

    def matches(self, tool_name: str) -> bool:
        """By di-code's name or Claude Code's (`Glob` for find), so its matchers work."""
        if self.matcher is None:
            return True
        names = (tool_name, CLAUDE_TOOL_NAMES.get(tool_name, tool_name))
        return any(self.matcher.fullmatch(name) is not None for name in names)


class HookConfigError(DiCodeError, ValueError):
    """A `hooks` table of the wrong shape; the message names the file and key."""

    exit_code = 2


def parse_hooks(raw: Any, source: str, *, strict: bool = True) -> tuple[UserHook, ...]:
    """The hooks of one `hooks` table; a wrong shape (with `strict`, an unknown key too)
    raises HookConfigError."""
    if raw is None:
        return ()
    if not isinstance(raw, Mapping):
        raise HookConfigError(f"{source}: hooks must be a table of events")
    found: list[UserHook] = []
    for event, groups in raw.items():
        if event not in HOOK_EVENTS:
            raise HookConfigError(
                f"{source}: hooks.{event} is not a hook event ({', '.join(HOOK_EVENTS)})"
            )
        if not isinstance(groups, list):
            raise HookConfigError(f"{source}: hooks.{event} must be a list of matchers")
        for index, group in enumerate(groups):
            where = f"{source}: hooks.{event}[{index}]"
            found += _group(event, group, where, source, strict)
    return tuple(found)


def parse_claude_hooks(raw: Any, source: str) -> tuple[tuple[UserHook, ...], list[str]]:
    """The hooks of Claude Code's settings.json: an event di-code does not have (SubagentStop,
    PostCompact...) or a group it cannot run (a `prompt` hook) is skipped with a warning line,
    since the file is written for another program."""
    if not isinstance(raw, Mapping):
        return (), [f"{source}: hooks must be an object of events; not used"]
    found: list[UserHook] = []
    warnings = []
    for event, groups in raw.items():
        try:
            found += parse_hooks({event: groups}, source, strict=False)
        except HookConfigError as exc:
            warnings.append(f"{exc}; skipped")
    return tuple(found), warnings


def _group(event: str, group: Any, where: str, source: str, strict: bool) -> list[UserHook]:
    if not isinstance(group, Mapping) or not isinstance(group.get("hooks"), list):
        raise HookConfigError(f"{where} must have a list of hooks")
    if strict:
        _known(group, GROUP_KEYS, where)
    matcher = _matcher(group.get("matcher"), where)
    hooks = []
    for entry in group["hooks"]:
        if not isinstance(entry, Mapping) or entry.get("type", "command") != "command":
            raise HookConfigError(f'{where}: each hook must be {{type = "command", command = ...}}')
        if strict:
            _known(entry, HOOK_KEYS, f"{where}: a hook")
        command, timeout = entry.get("command"), entry.get("timeout", DEFAULT_HOOK_TIMEOUT)
        if not isinstance(command, str) or not command.strip():
            raise HookConfigError(f"{where}: a hook's command must be a non-empty string")
        if not _seconds(timeout):
            raise HookConfigError(f"{where}: a hook's timeout must be a positive number of seconds")
        env = entry.get("env", [])
        if not isinstance(env, list) or not all(
            isinstance(n, str) and _NAME.fullmatch(n) for n in env
        ):
            raise HookConfigError(f"{where}: a hook's env must be a list of variable names")
        hooks.append(UserHook(event, matcher, command, float(timeout), source, tuple(env)))
    return hooks


def _known(table: Mapping[str, Any], keys: Collection[str], where: str) -> None:
    unknown = [key for key in table if key not in keys]
    if unknown:
        raise HookConfigError(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(keys)})")


def _seconds(timeout: Any) -> bool:
    """A timeout that comes: a positive, finite number (NaN is no time, inf never comes)."""
    if isinstance(timeout, bool) or not isinstance(timeout, int | float):
        return False
    return math.isfinite(timeout) and timeout > 0


def _matcher(raw: Any, where: str) -> re.Pattern[str] | None:
    if raw is None or raw in ("", "*"):
        return None
    if not isinstance(raw, str):
        raise HookConfigError(f"{where}: matcher must be a string")
    try:
        return re.compile(raw, re.IGNORECASE)  # Claude Code's names are capitalised: Bash
    except re.error as exc:
        raise HookConfigError(f"{where}: matcher is not a regular expression ({exc})") from None
