"""The hooks around an agent's tool calls and prompts: the permission gate always, the user's
hooks (their config, a trusted project's, Claude Code's `.claude/settings.json` once trusted)
when any are configured; their code is not even loaded otherwise."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from di_code.agent.prompt_hooks import PromptHooks
from di_code.agent.tool_call import ToolHooks
from di_code.config.settings import Settings
from di_code.setup.nested_context import NestedContextFiles
from di_code.tools.policy.permissions import PermissionGate

if TYPE_CHECKING:
    from di_code.session import Session
    from di_code.tools.policy.hook_config import UserHook
    from di_code.tools.policy.session_hooks import SessionHookRunner


def agent_hooks(
    settings: Settings,
    gate: PermissionGate,
    workspace: Path,
    session: Session | None,
    notify: Callable[[str], None],
    hidden: frozenset[str],
    own_config: Path,
) -> tuple[ToolHooks, PromptHooks | None, SessionHookRunner | None]:
    """The permission gate around every tool call and the subfolders' context files after
    it (di_code.setup.nested_context), with the user's PreToolUse and
    PostToolUse hooks, their UserPromptSubmit, Stop and PreCompact hooks around each prompt,
    and the runner of the hooks the session tells (Notification, SessionStart, SessionEnd),
    when any are configured (their code is not even loaded otherwise). Hooks start without the
    `hidden` variables, as bash's commands do, but those a hook in `own_config` (the user's
    own file) names in its `env`."""
    nested = NestedContextFiles(workspace)
    if not settings.hooks and not settings.claude_hooks:
        return ToolHooks(before=[gate.before_tool_call], after=[nested.after]), None, None
    from di_code.tools.policy.hook_config import parse_claude_hooks, parse_hooks
    from di_code.tools.policy.prompt_user_hooks import PromptHookRunner
    from di_code.tools.policy.session_hooks import SessionHookRunner
    from di_code.tools.policy.user_hooks import ToolHookRunner

    hooks = tuple(hook for source, raw in settings.hooks for hook in parse_hooks(raw, source))
    for source, raw in settings.claude_hooks:
        more, warnings = parse_claude_hooks(raw, source)
        hooks += more
        for line in warnings:
            notify(line)
    hooks = tuple(_own_env(hook, own_config, notify) for hook in hooks)
    session_id = session.id if session is not None else ""
    transcript = str(session.path) if session is not None else ""
    runner = ToolHookRunner(hooks, workspace, session_id, notify, hidden, transcript)
    prompts = PromptHookRunner(hooks, workspace, session_id, notify, hidden, transcript)
    told = SessionHookRunner(hooks, workspace, notify, hidden)
    tools = ToolHooks(before=[runner.gate(gate)], after=[runner.after, nested.after])
    return tools, prompts, told


def _own_env(hook: UserHook, own_config: Path, notify: Callable[[str], None]) -> UserHook:
    """`hook`, its `env` dropped (and said) unless it comes from the user's own config: a
    project, even a trusted one, does not get the keys di-code holds."""
    if not hook.env or hook.source == str(own_config):
        return hook
    notify(f"{hook.source}: a hook's env is honoured only in your own config; not passed")
    return replace(hook, env=())
