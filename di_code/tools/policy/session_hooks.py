"""The user's hooks di-code tells and asks nothing: Notification, SessionStart, SessionEnd and
PreCompact, with Claude Code's payloads.

Each hook runs as every hook does (di_code.tools.policy.user_hooks.run_hook: `bash -c` in the
workspace, through the one launcher, without the provider keys, killed at its timeout), with
the event as JSON on stdin: `session_id`, `transcript_path` (the session's file, "" without
one), `cwd`, `hook_event_name`, and the event's own fields:

- Notification: `message`, `notification_type` (`permission_prompt`, `idle_prompt`);
- SessionStart: `source` (`startup`, `resume`, `clear`);
- SessionEnd: `reason` (`clear`, `prompt_input_exit`, `other`);
- PreCompact: `trigger` (`manual`, `auto`), `custom_instructions` ("" for auto).

A hook's matcher matches that second field (the type, source, reason or trigger), as Claude
Code's does. What a hook prints changes nothing; a failure (another exit code than 0, a
timeout, a hook that cannot start) is one line to the user.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from di_code.tools.policy.hook_config import UserHook
from di_code.tools.policy.user_hooks import run_hook
from di_code.tools.process.program_env import KEY_VARIABLES

SUBJECT = {
    "Notification": "notification_type",
    "SessionStart": "source",
    "SessionEnd": "reason",
    "PreCompact": "trigger",
}
"""The field a hook's matcher is matched against, by event."""


@dataclass(frozen=True, slots=True)
class HookSession:
    """Which session an event is about (Claude Code names both in every payload)."""

    session_id: str = ""
    transcript_path: str = ""


def hook_payload(event: str, where: HookSession, cwd: Path, **fields: Any) -> dict[str, Any]:
    return {
        "session_id": where.session_id,
        "transcript_path": where.transcript_path,
        "cwd": str(cwd),
        "hook_event_name": event,
        **fields,
    }


async def tell_hooks(
    hooks: Collection[UserHook],
    payload: dict[str, Any],
    workspace: Path,
    hidden: Collection[str],
    report: Callable[[str], None],
) -> None:
    """Run the hooks of the payload's event whose matcher matches its subject, one after the
    other; a failure is reported, never raised."""
    event = payload["hook_event_name"]
    subject = str(payload.get(SUBJECT.get(event, ""), ""))
    for hook in hooks:
        if hook.event != event or not hook.matches(subject):
            continue
        run = await run_hook(hook, payload, workspace, hidden)
        if run.code != 0:
            report(f"{event} hook {run.failure()}")


@dataclass(frozen=True, slots=True)
class SessionHookRunner:
    hooks: tuple[UserHook, ...]
    workspace: Path
    report: Callable[[str], None] = lambda line: None
    """Tells the user about a hook that failed."""
    hidden: frozenset[str] = KEY_VARIABLES
    """Variables the hooks start without: bash's `hidden_env`."""

    def wants(self, event: str) -> bool:
        return any(hook.event == event for hook in self.hooks)

    async def tell(self, event: str, where: HookSession, **fields: Any) -> None:
        """Run the hooks of `event` with its payload (the event's `fields` added)."""
        if self.wants(event):
            payload = hook_payload(event, where, self.workspace, **fields)
            await tell_hooks(self.hooks, payload, self.workspace, self.hidden, self.report)
