"""Compaction's request and a subagent-like nested prompt count against the prompt's one
request budget (issue 32, requests)."""

from __future__ import annotations

from pathlib import Path

from di_code.agent import Agent
from di_code.ai import TextContent
from di_code.ai.budget import RequestBudget
from di_code.ai.providers.faux import create_faux_provider
from di_code.ai.types import AssistantMessage, Context, UserMessage
from di_code.session import prompt_with_compaction
from di_code.system.abort import AbortSignal
from tests.support.compaction import (
    RESERVE,
    SUMMARY,
    THRESHOLD,
    agent_after_three_turns,
    answer,
)


async def test_compaction_s_request_counts_against_the_prompt_s_limit(tmp_path: Path) -> None:
    agent, faux, session = await agent_after_three_turns(THRESHOLD + 1, tmp_path)
    agent.budget.limit = 1
    faux.push(answer(SUMMARY), answer("four"))
    final = await prompt_with_compaction(agent, "task 4", session, reserve=RESERVE)
    assert (final.stop_reason, final.error_message) == ("error", "Turn limit reached (1)")
    assert faux.pending_responses() == 1  # the summary was asked for; the prompt was not sent
    assert agent.budget.made == 1


async def test_a_nested_prompt_shares_the_count_and_a_new_prompt_starts_it_again() -> None:
    faux = create_faux_provider([answer("sub"), answer("main"), answer("next")])
    budget = RequestBudget(2)
    main = Agent(faux.provider, faux.model, budget=budget)
    sub = Agent(faux.provider, faux.model, budget=budget)
    with budget.prompt():
        assert (await sub.prompt("job")).text == "sub"
        assert (await main.prompt("go")).text == "main"
        assert budget.exhausted and budget.made == 2
        refused = main.provider.stream(faux.model, Context(None, [UserMessage.of("x")], []))
        message = await refused.result()
        assert message.error_message == "Turn limit reached (2)"
        assert faux.pending_responses() == 1  # nothing was sent for it
    final = await main.prompt("again")
    assert budget.made == 1 and final.content == [TextContent("next")]


class AlwaysGoOn:
    """A Stop hook that never lets the agent stop."""

    async def submitted(self, message: UserMessage, signal: AbortSignal) -> UserMessage:
        return message

    async def stopping(
        self, final: AssistantMessage, continued: bool, signal: AbortSignal
    ) -> str | None:
        return "keep going"


async def test_a_stop_hook_s_continues_share_the_prompt_s_limit() -> None:
    faux = create_faux_provider([answer(f"reply {n}") for n in range(10)])
    agent = Agent(faux.provider, faux.model, max_turns=2, prompt_hooks=AlwaysGoOn())
    final = await agent.prompt("go")
    assert (final.stop_reason, final.error_message) == ("error", "Turn limit reached (2)")
    assert faux.pending_responses() == 8  # two requests, not two per continue
