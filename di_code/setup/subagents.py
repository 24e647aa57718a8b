"""Wiring the `task` tool into a session: the custom subagents found, the model a subagent
uses, where its transcript is kept, and its system prompt.

A subagent's transcript is a session file of its own next to the session's,
`<session>.subagents/<tool call id>.jsonl` (the session lists and `--continue` never see it;
the task's result names it). Without a session it is not kept.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from di_code.ai.stream import Provider
from di_code.ai.types import Model, now_ms
from di_code.config.agents import load_agents
from di_code.config.provider_factory import ProviderFactory
from di_code.config.settings import ConfigError, di_code_home
from di_code.config.skills import Skill
from di_code.config.system_prompt import build_system_prompt

if TYPE_CHECKING:
    from di_code.agent.agent import Agent
    from di_code.session import Session
    from di_code.tools.builtin.support.subagents import ChooseModel, RecordTranscript

TRANSCRIPTS_SUFFIX = ".subagents"
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def add_task_tool(
    agent: Agent,
    factory: ProviderFactory,
    workspace: Path,
    roots: Sequence[Path],
    skills: Sequence[Skill],
    session: Session | None,
) -> None:
    """Offer `agent` the task tool; its subagents pick from the agent's other tools, and
    their models through the session's provider factory."""
    from di_code.tools.builtin import cards
    from di_code.tools.builtin.support.lazy import LazyTool
    from di_code.tools.builtin.support.subagents import Subagents

    home = di_code_home()
    found = load_agents(home, workspace)
    for warning in found.warnings:
        factory.notify(warning)

    def system_prompt(tool_names: Sequence[str]) -> str:
        return build_system_prompt(
            tool_names=tool_names,
            workspace=workspace,
            home=home,
            today=date.today(),
            extra_roots=roots,
            skills=skills,
            subagent=True,
        )

    subagents = Subagents(
        agent,
        system_prompt,
        kinds=found.agents,
        default_model=factory.settings.subagent_model,
        choose_model=model_chooser(factory),
        record=transcript_recorder(session) if session is not None else None,
    )
    task = LazyTool(
        cards.TASK,
        "di_code.tools.builtin.task",
        "TaskTool",
        subagents,
        describe=subagents.description,
    )
    agent.tools = [*agent.tools, task]


def model_chooser(factory: ProviderFactory) -> ChooseModel:
    """`PROVIDER/ID` resolved as `--model` would be, with a provider of its own; None when
    the untrusted file naming it may not pick it (the factory has said so)."""

    def choose(spec: str, named_by: str | None) -> tuple[Provider, Model] | None:
        try:
            return factory.choose(spec, named_by)
        except ConfigError as exc:
            raise ValueError(str(exc)) from None

    return choose


def transcript_recorder(session: Session) -> RecordTranscript:
    folder = session.path.with_suffix(TRANSCRIPTS_SUFFIX)

    def record(tool_call_id: str, agent: Agent) -> str | None:
        from di_code.session.format import SessionHeader
        from di_code.session.session import Session

        stem = _UNSAFE.sub("_", tool_call_id)[:80] or "task"
        path, number = folder / f"{stem}.jsonl", 1
        while path.exists():  # a model that reuses call ids across turns
            number += 1
            path = folder / f"{stem}-{number}.jsonl"
        transcript = Session(path, SessionHeader(uuid.uuid4().hex, session.cwd, now_ms()))
        transcript.record(agent)
        return str(path)

    return record
