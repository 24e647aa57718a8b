"""Running the user's hooks around tool calls, with Claude Code's contract.

Each hook gets the event as JSON on stdin (every secret hidden: di_code.ai.redaction) and
runs in the workspace with `bash -c`, in a process group of its own that is killed at its
timeout. A PreToolUse hook decides by its exit
code and stdout: exit 2 refuses the call with stderr as the reason; exit 0 with JSON may say
`hookSpecificOutput.permissionDecision` ("allow", "ask" or "deny", with
`permissionDecisionReason`) or the older `decision` ("approve" or "block", with `reason`).
Any other exit, a timeout or a hook that cannot start refuses too: a check that could not be
made is no permission. A PostToolUse hook that exits 2 (or says `"decision": "block"`) adds its
reason to the result the model reads; its failures are reported to the user.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from di_code.agent.tool import ToolResult
from di_code.agent.tool_call import BeforeToolCall, ToolCallContext
from di_code.ai.codec import loads_valid
from di_code.ai.redaction import redact_bytes
from di_code.ai.types import TextContent
from di_code.tools.policy.hook_config import UserHook
from di_code.tools.policy.hook_output import KeptOutput, collected, feed_stdin
from di_code.tools.policy.permissions import PermissionGate
from di_code.tools.process.launcher import start_program
from di_code.tools.process.program_env import KEY_VARIABLES, program_env

Decision = Literal["allow", "ask", "deny"]
BLOCKING_EXIT = 2
ENDED_POLL = 0.02
"""Seconds between two looks at a killed hook: has it ended?"""


@dataclass(frozen=True, slots=True)
class HookRun:
    hook: UserHook
    code: int | None
    """None when it timed out or could not start (`stderr` says which)."""
    stdout: str
    stderr: str

    def reason(self) -> str:
        return self.stderr.strip() or f"a {self.hook.event} hook refused ({self.hook.command})"

    def said(self) -> dict[str, Any]:
        """The JSON object the hook printed, when it exited 0 ({} for anything else)."""
        return hook_json(self.stdout) if self.code == 0 else {}

    def failure(self) -> str:
        """`COMMAND` timed out or exited N, with the first line of its stderr."""
        failed = "timed out" if self.code is None else f"exited {self.code}"
        detail = self.stderr.strip().splitlines()[:1]
        line = f"`{self.hook.command}` {failed}"
        return f"{line}: {detail[0]}" if detail else line


@dataclass(frozen=True, slots=True)
class PreToolVerdict:
    decision: Decision | None
    """None: the hooks have no opinion, the permission rules decide alone."""
    reason: str = ""


async def run_hook(
    hook: UserHook, payload: dict[str, Any], workspace: Path, hidden: Collection[str]
) -> HookRun:
    """`hook` with the environment a bash command gets (without the `hidden` variables: the
    provider keys, but those its own `env` names) and the project folder named as Claude
    Code's hooks read it."""
    folder = str(workspace)
    passed = set(hidden).difference(hook.env)
    env = program_env(passed, DI_CODE_PROJECT_DIR=folder, CLAUDE_PROJECT_DIR=folder)
    try:
        process = await start_program(
            ("bash", "-c", hook.command),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=workspace,
            env=env,
        )
    except OSError as exc:
        return HookRun(hook, None, "", f"hook could not start: {exc}")
    data = redact_bytes(json.dumps(payload, ensure_ascii=False, default=str).encode())
    assert process.stdin and process.stdout and process.stderr  # all three are pipes
    out, err = KeptOutput(), KeptOutput()
    readers = [
        asyncio.ensure_future(out.read(process.stdout)),
        asyncio.ensure_future(err.read(process.stderr)),
    ]
    feeder = asyncio.ensure_future(feed_stdin(process.stdin, data))
    try:
        await asyncio.wait_for(_ended(process), hook.timeout)
    except (TimeoutError, asyncio.CancelledError) as stopped:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        await _ended(process)
        if isinstance(stopped, asyncio.CancelledError):
            raise
        return HookRun(hook, None, "", f"hook timed out after {hook.timeout:g} s")
    finally:
        feeder.cancel()
        await collected(readers)
    return HookRun(hook, process.returncode, out.text(), err.text())


async def _ended(process: asyncio.subprocess.Process) -> None:
    """Until the killed hook itself is gone. Not `process.wait()`: asyncio's also waits for
    the hook's pipes to close, and a child the hook left in a session of its own (`setsid`,
    out of reach of the group's kill) may hold them for ever; di-code, its subreaper, ends
    that one at exit."""
    while process.returncode is None:
        await asyncio.sleep(ENDED_POLL)


def blocking(
    runs: Iterable[HookRun], failed: Callable[[HookRun], None]
) -> tuple[list[str], list[HookRun]]:
    """The reasons of the runs that block (exit 2, or JSON `"decision": "block"`), and the runs
    that answered without blocking; any other run failed and goes to `failed` (PostToolUse,
    UserPromptSubmit and Stop read their hooks alike)."""
    reasons: list[str] = []
    answered: list[HookRun] = []
    for run in runs:
        said = run.said()
        if run.code == BLOCKING_EXIT or said.get("decision") == "block":
            reasons.append(str(said.get("reason") or "") or run.reason())
        elif run.code != 0:
            failed(run)
        else:
            answered.append(run)
    return reasons, answered


def pre_tool_verdict(runs: Sequence[HookRun]) -> PreToolVerdict:
    """All the hooks' answers as one: any refusal wins, then ask, then allow."""
    verdicts = [_verdict(run) for run in runs]
    for wanted in ("deny", "ask", "allow"):
        for verdict in verdicts:
            if verdict.decision == wanted:
                return verdict
    return PreToolVerdict(None)


def _verdict(run: HookRun) -> PreToolVerdict:
    if run.code == BLOCKING_EXIT:
        return PreToolVerdict("deny", run.reason())
    if run.code != 0:
        return PreToolVerdict("deny", f"the PreToolUse hook {run.failure()}")
    said = run.said()
    specific = said.get("hookSpecificOutput")
    if isinstance(specific, dict) and specific.get("permissionDecision") in (
        "allow",
        "ask",
        "deny",
    ):
        reason = str(specific.get("permissionDecisionReason") or "")
        return PreToolVerdict(specific["permissionDecision"], reason or run.reason())
    legacy = said.get("decision")
    if legacy == "block" or said.get("continue") is False:
        reason = str(said.get("reason") or said.get("stopReason") or "") or run.reason()
        return PreToolVerdict("deny", reason)
    if legacy == "approve":
        return PreToolVerdict("allow")
    return PreToolVerdict(None)


@dataclass(frozen=True, slots=True)
class HookRunner:
    """What a runner of the user's hooks holds, whichever events it runs them for."""

    hooks: tuple[UserHook, ...]
    workspace: Path
    session_id: str = ""
    report: Callable[[str], None] = lambda line: None
    """Tells the user about a hook that failed."""
    hidden: frozenset[str] = KEY_VARIABLES
    """Variables the hooks start without: bash's `hidden_env`."""
    transcript_path: str = ""
    """The session's file, as Claude Code's payloads name it ("" without a session)."""


@dataclass(frozen=True, slots=True)
class ToolHookRunner(HookRunner):
    """The user's PreToolUse and PostToolUse hooks for one workspace and session."""

    def gate(self, gate: PermissionGate) -> BeforeToolCall:
        """The loop's before hook: the user's PreToolUse hooks, then the permission gate
        told what they said (a refusal by a hook never reaches the gate)."""

        async def before(context: ToolCallContext) -> str | None:
            verdict = await self.before(context)
            if verdict.decision == "deny":
                return f"Permission denied by a PreToolUse hook: {verdict.reason}"
            return await gate.check(context.call.name, context.params, verdict.decision)

        return before

    def wants(self, event: str, tool_name: str) -> list[UserHook]:
        return [h for h in self.hooks if h.event == event and h.matches(tool_name)]

    async def before(self, context: ToolCallContext) -> PreToolVerdict:
        hooks = self.wants("PreToolUse", context.call.name)
        if not hooks:
            return PreToolVerdict(None)
        payload = self._payload("PreToolUse", context)
        runs = [await run_hook(hook, payload, self.workspace, self.hidden) for hook in hooks]
        return pre_tool_verdict(runs)

    async def after(self, context: ToolCallContext, result: ToolResult) -> ToolResult:
        hooks = self.wants("PostToolUse", context.call.name)
        if not hooks:
            return result
        payload = self._payload("PostToolUse", context)
        payload["tool_response"] = {
            "content": [b.text for b in result.content if isinstance(b, TextContent)],
            "is_error": result.is_error,
        }
        runs = [await run_hook(hook, payload, self.workspace, self.hidden) for hook in hooks]
        notes, _ = blocking(runs, self._failed)
        if not notes:
            return result
        added = [TextContent(f"[PostToolUse hook] {note}") for note in notes]
        return ToolResult([*result.content, *added], result.details, result.is_error)

    def _failed(self, run: HookRun) -> None:
        self.report(f"PostToolUse hook {run.failure()}")

    def _payload(self, event: str, context: ToolCallContext) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "transcript_path": self.transcript_path,
            "cwd": str(self.workspace),
            "hook_event_name": event,
            "tool_name": context.call.name,
            "tool_input": _claude_input(context.params, self.workspace),
            "tool_use_id": context.call.id,
        }


def _claude_input(params: dict[str, Any], workspace: Path) -> dict[str, Any]:
    """The arguments, with Claude Code's `file_path` (absolute) beside a file tool's `path`:
    hooks written for it read that key."""
    path = params.get("path")
    if not isinstance(path, str) or "file_path" in params:
        return params
    return {**params, "file_path": str(workspace / os.path.expanduser(path))}


def hook_json(text: str) -> dict[str, Any]:
    """The object a hook printed, made valid as all JSON from outside is (no lone surrogate to
    break the next request, no nesting deep enough to recurse on); {} for anything else."""
    stripped = text.strip()
    if not stripped.startswith("{"):
        return {}
    try:
        value = loads_valid(stripped)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
