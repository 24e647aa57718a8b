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

import re
from collections.abc import Mapping
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


def parse_hooks(raw: Any, source: str) -> tuple[UserHook, ...]:
    """The hooks of one `hooks` table; a wrong shape raises HookConfigError."""
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
            found += _group(event, group, f"{source}: hooks.{event}[{index}]", source)
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
            found += parse_hooks({event: groups}, source)
        except HookConfigError as exc:
            warnings.append(f"{exc}; skipped")
    return tuple(found), warnings


def _group(event: str, group: Any, where: str, source: str) -> list[UserHook]:
    if not isinstance(group, Mapping) or not isinstance(group.get("hooks"), list):
        raise HookConfigError(f"{where} must have a list of hooks")
    matcher = _matcher(group.get("matcher"), where)
    hooks = []
    for entry in group["hooks"]:
        if not isinstance(entry, Mapping) or entry.get("type", "command") != "command":
            raise HookConfigError(f'{where}: each hook must be {{type = "command", command = ...}}')
        command, timeout = entry.get("command"), entry.get("timeout", DEFAULT_HOOK_TIMEOUT)
        if not isinstance(command, str) or not command.strip():
            raise HookConfigError(f"{where}: a hook's command must be a non-empty string")
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            raise HookConfigError(f"{where}: a hook's timeout must be a positive number of seconds")
        env = entry.get("env", [])
        if not isinstance(env, list) or not all(
            isinstance(n, str) and _NAME.fullmatch(n) for n in env
        ):
            raise HookConfigError(f"{where}: a hook's env must be a list of variable names")
        hooks.append(UserHook(event, matcher, command, float(timeout), source, tuple(env)))
    return hooks


def _matcher(raw: Any, where: str) -> re.Pattern[str] | None:
    if raw is None or raw in ("", "*"):
        return None
    if not isinstance(raw, str):
        raise HookConfigError(f"{where}: matcher must be a string")
    try:
        return re.compile(raw, re.IGNORECASE)  # Claude Code's names are capitalised: Bash
    except re.error as exc:
        raise HookConfigError(f"{where}: matcher is not a regular expression ({exc})") from None
