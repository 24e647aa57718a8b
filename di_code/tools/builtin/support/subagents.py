"""What the `task` tool needs to start subagents, kept apart from the tool's code.

The session builds one `Subagents` at start-up (cheap: nothing here imports more than the
agent's types) and the task tool's module is loaded only when the model first calls it. The
tool's description is read at every request and lists the custom subagents.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

from msgspec import Struct, field

from di_code.agent.tool import AgentTool
from di_code.ai.stream import Provider
from di_code.ai.types import Model
from di_code.tools.builtin.cards import PLAN, TASK

if TYPE_CHECKING:
    from di_code.agent.agent import Agent

DEFAULT_TOOLS = ("read", "grep", "find", "ls")
"""A general subagent reads and searches; it changes nothing."""


class SubagentKind(Protocol):
    """A custom subagent (di_code.config.agents reads them from Markdown files)."""

    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def tools(self) -> tuple[str, ...] | None: ...
    @property
    def denied(self) -> tuple[str, ...]: ...
    @property
    def model(self) -> str | None: ...
    @property
    def prompt(self) -> str: ...
    @property
    def model_named_by(self) -> str | None:
        """The untrusted file whose `model` this is (a project's); None: the user's own."""
        ...


ChooseModel = Callable[[str, str | None], tuple[Provider, Model] | None]
"""(`PROVIDER/ID`, the untrusted file naming it or None) → a new provider (closed after the
subagent) and the model; None when the file may not pick it (the default model is used);
raises ValueError with a one-line reason."""
RecordTranscript = Callable[[str, "Agent"], str | None]
"""Keeps a subagent's messages with the session (by its tool call id); returns the file."""


class Subagents(Struct, frozen=True):
    parent: Agent
    """The session's agent: a subagent uses its provider, model, limits and reasoning as they
    are when the task starts, picks from its tools, and passes its hooks (the permission gate,
    the user's hooks) for every call."""
    system_prompt: Callable[[Sequence[str]], str]
    """The system prompt for a subagent with these tools."""
    kinds: Mapping[str, SubagentKind] = field(default_factory=dict)
    default_model: str | None = None
    """`[subagents] model`; None: the parent's."""
    choose_model: ChooseModel | None = None
    record: RecordTranscript | None = None

    def tools_for(self, kind: SubagentKind | None) -> list[AgentTool]:
        """The tools a subagent gets: the read-only ones, or those its file names (without
        a file's `tools`, all the session's) less those it denies; never the task tool nor the
        plan tool (its question is the session's), never one the session lacks."""
        if kind is None:
            wanted: Sequence[str] | None = DEFAULT_TOOLS
            denied: Sequence[str] = ()
        else:
            wanted, denied = kind.tools, kind.denied
        never = (TASK.name, PLAN.name, *denied)
        offered = [tool for tool in self.parent.tools if tool.name not in never]
        if wanted is None:
            return offered
        return [tool for tool in offered if tool.name in wanted]

    def description(self) -> str:
        """The task tool's description, with the custom subagents the model may pick."""
        if not self.kinds:
            return TASK.description
        listed = "\n".join(f"- {k.name}: {k.description}" for k in self.kinds.values())
        return f"{TASK.description}\n\nCustom subagents (subagent_type):\n{listed}"
