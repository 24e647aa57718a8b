"""The permission gate: which tool calls may run without asking, which are refused.

Modes (SPEC §5): `auto` runs everything; `ask` needs approval for every tool that is not
read-only (bash, write, edit, tools from plugins: yes, always for this session, or no);
`read-only` offers the model only read, grep, find and ls.
Rules from settings allow or deny a tool (`"write"`) or a bash command prefix (`"bash:git
status"`); a deny rule wins over an allow rule, in every mode. A bash command allowed by prefix
must consist only of allowed parts: `git status && rm -rf x` is not covered by `bash:git status`.

A refusal is a tool result with is_error set, phrased for the model, so the run goes on and the
model can choose another way.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from di_code.agent.tool import AgentTool, BoundTool, ToolResult, ToolUpdate, bind_tool
from di_code.ai.abort import AbortSignal
from di_code.ai.types import TextContent, ToolResultContent
from di_code.tools import READ_ONLY_TOOLS

PermissionMode: TypeAlias = Literal["ask", "auto", "read-only"]
Approval: TypeAlias = Literal["yes", "always", "no"]

# Shell separators that start another command; `$(` and backticks hide one inside, and a
# redirection writes files: a prefix rule never covers those, only a bare `bash` rule does.
_SEPARATORS = re.compile(r"\|\||&&|[;|&\n]")
_BEYOND_PREFIX = re.compile(r"\$\(|`|<\(|>")


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """What the user is asked about: the tool, its arguments and a one-line summary."""

    tool_name: str
    arguments: dict[str, Any]
    summary: str


Approver = Callable[[ApprovalRequest], Awaitable[Approval]]
"""Asks the user (the REPL, a terminal prompt). None where there is nobody to ask."""


@dataclass(frozen=True, slots=True)
class Rule:
    """`tool` alone, or `tool:prefix` for a bash command prefix."""

    tool: str
    prefix: str | None = None

    @classmethod
    def parse(cls, text: str) -> Rule:
        tool, _, prefix = text.partition(":")
        return cls(tool.strip(), prefix.strip() or None)

    def matches(self, tool_name: str, command: str | None) -> bool:
        if self.tool != tool_name:
            return False
        if self.prefix is None:
            return True
        return command is not None and _starts_with_words(command, self.prefix)


def _starts_with_words(command: str, prefix: str) -> bool:
    """`git status -s` starts with `git status`; `git statusx` does not."""
    words, wanted = command.split(), prefix.split()
    return words[: len(wanted)] == wanted


def command_parts(command: str) -> list[str]:
    """The simple commands of a shell line, split at ;, &&, ||, |, & and newlines."""
    return [part.strip() for part in _SEPARATORS.split(command) if part.strip()]


@dataclass(frozen=True, slots=True)
class PermissionRules:
    allow: tuple[Rule, ...] = ()
    deny: tuple[Rule, ...] = ()

    @classmethod
    def parse(cls, allow: Iterable[str] = (), deny: Iterable[str] = ()) -> PermissionRules:
        return cls(tuple(map(Rule.parse, allow)), tuple(map(Rule.parse, deny)))

    def decide(self, tool_name: str, arguments: dict[str, Any]) -> Literal["allow", "deny"] | None:
        """deny if any rule denies; allow if the rules cover the whole call; else None."""
        command = arguments.get("command") if tool_name == "bash" else None
        parts = command_parts(command) if isinstance(command, str) else [None]
        if any(rule.matches(tool_name, part) for rule in self.deny for part in parts):
            return "deny"
        if isinstance(command, str) and _BEYOND_PREFIX.search(command):
            covered = any(r.matches(tool_name, None) for r in self.allow if r.prefix is None)
        else:
            covered = all(
                any(rule.matches(tool_name, part) for rule in self.allow) for part in parts
            )
        return "allow" if covered and parts else None


def summarize(tool_name: str, arguments: dict[str, Any]) -> str:
    """The line a user approves: the command for bash, the path for write and edit."""
    for key in ("command", "path"):
        value = arguments.get(key)
        if isinstance(value, str):
            return f"{tool_name}: {value}"
    return tool_name


@dataclass(slots=True)
class PermissionGate:
    """Decides each gated call; remembers "always" answers for the rest of the session."""

    mode: PermissionMode
    rules: PermissionRules = field(default_factory=PermissionRules)
    approver: Approver | None = None
    always: set[str] = field(default_factory=set)

    async def check(self, tool_name: str, arguments: dict[str, Any]) -> str | None:
        """None if the call may run, else the reason it may not (for the model)."""
        decision = self.rules.decide(tool_name, arguments)
        if decision == "deny":
            return f"Permission denied: a deny rule in the settings blocks {tool_name} here."
        if self.mode == "read-only" and tool_name not in READ_ONLY_TOOLS:
            return f"Permission denied: {tool_name} is not available in read-only mode."
        if self.mode == "auto" or decision == "allow" or tool_name in READ_ONLY_TOOLS:
            return None
        if tool_name in self.always:
            return None
        if self.approver is None:
            return (
                f"Permission denied: {tool_name} needs the user's approval and there is no "
                "terminal to ask (the user can run di-code with --yes to allow it)."
            )
        answer = await self.approver(
            ApprovalRequest(tool_name, arguments, summarize(tool_name, arguments))
        )
        if answer == "always":
            self.always.add(tool_name)
        if answer == "no":
            return f"Permission denied: the user declined this {tool_name} call."
        return None


@dataclass(frozen=True, slots=True)
class GatedTool:
    """An AgentTool that asks the gate before running the tool it wraps."""

    tool: BoundTool
    gate: PermissionGate

    @property
    def name(self) -> str:
        return self.tool.name

    @property
    def description(self) -> str:
        return self.tool.description

    @property
    def parameters(self) -> dict[str, Any]:
        return self.tool.parameters

    async def execute(
        self,
        tool_call_id: str,
        params: dict[str, Any],
        signal: AbortSignal,
        on_update: ToolUpdate | None = None,
    ) -> list[ToolResultContent] | ToolResult:
        refusal = await _until_aborted(self.gate.check(self.tool.name, params), signal)
        if refusal is not None:
            return ToolResult([TextContent(refusal)], is_error=True)
        return await self.tool.execute(tool_call_id, params, signal, on_update)


async def _until_aborted(check: Awaitable[str | None], signal: AbortSignal) -> str | None:
    """The gate's answer, unless Ctrl-C comes first (a question must not block an abort)."""
    asking = asyncio.ensure_future(check)
    aborted = asyncio.ensure_future(signal.wait())
    await asyncio.wait({asking, aborted}, return_when=asyncio.FIRST_COMPLETED)
    aborted.cancel()
    if not asking.done():
        asking.cancel()
        return "Operation aborted"
    return asking.result()


def gate_tools(tools: Sequence[AgentTool], gate: PermissionGate) -> list[AgentTool]:
    """The tools the model is offered: read-only mode drops the others; all are gated."""
    offered = [tool for tool in tools if gate.mode != "read-only" or tool.name in READ_ONLY_TOOLS]
    return [GatedTool(bind_tool(tool), gate) for tool in offered]
