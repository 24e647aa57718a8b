"""Compaction with the faux provider: threshold, kept tool pairs intact, overflow retry."""

from __future__ import annotations

from pathlib import Path

import msgspec.structs
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from di_code.agent import Agent
from di_code.ai import TextContent, ToolCall, ToolResultMessage, Usage
from di_code.ai.providers.faux import create_faux_provider
from di_code.ai.types import AssistantMessage, Message, UserMessage
from di_code.session import (
    CompactionError,
    CompactionResult,
    NothingToCompact,
    SessionStore,
    compact_agent,
    context_tokens,
    prompt_with_compaction,
)
from di_code.session.compaction import estimate_tokens, find_cut
from di_code.session.summary import SUMMARY_PREFIX, SUMMARY_SYSTEM_PROMPT
from tests.support.compaction import (
    RESERVE,
    SUMMARY,
    THRESHOLD,
    WINDOW,
    agent_after_three_turns,
    answer,
)

OVERFLOW = "openai: HTTP 400: This model's maximum context length is 40000 tokens."


def assert_tool_pairs_intact(messages: list[Message]) -> None:
    calls = [c.id for m in messages if isinstance(m, AssistantMessage) for c in m.tool_calls]
    results = [m.tool_call_id for m in messages if isinstance(m, ToolResultMessage)]
    assert calls == results


async def test_no_compaction_at_the_threshold(tmp_path: Path) -> None:
    agent, faux, _ = await agent_after_three_turns(THRESHOLD, tmp_path)
    faux.push(answer("four"))
    await prompt_with_compaction(agent, "task 4", None, reserve=RESERVE)
    assert len(faux.requests) == 7 and faux.requests[-1].messages[0] == agent.transcript[0]


async def test_compaction_past_the_threshold_keeps_recent_turns_whole(tmp_path: Path) -> None:
    agent, faux, session = await agent_after_three_turns(THRESHOLD + 1, tmp_path)
    before = agent.transcript
    faux.push(answer(SUMMARY), answer("four"))
    seen: list[CompactionResult | CompactionError] = []
    final = await prompt_with_compaction(
        agent, "task 4", session, reserve=RESERVE, on_compaction=seen.append
    )
    assert final.text == "four" and len(seen) == 1
    summary_request, next_request = faux.requests[-2], faux.requests[-1]
    assert summary_request.system_prompt == SUMMARY_SYSTEM_PROMPT and summary_request.tools == []
    asked = summary_request.messages[0].content[0].text  # type: ignore[union-attr]
    assert "[User]: task 1" in asked and "## Files read and changed" in asked
    assert "[User]: task 3" not in asked  # the kept turn is not summarized
    # the naive token cut lands on turn 2's tool result; the cut moves before its tool call
    kept = before[5:]
    assert isinstance(kept[0], AssistantMessage) and kept[0].tool_calls[0].id == "call-2"
    sent = next_request.messages
    assert sent[0].content[0].text.startswith(SUMMARY_PREFIX)  # type: ignore[union-attr]
    assert SUMMARY in sent[0].content[0].text  # type: ignore[union-attr]
    assert sent[1:-1] == kept and sent[-1].content == [TextContent("task 4")]
    assert_tool_pairs_intact(sent)
    resumed = SessionStore(tmp_path).latest(tmp_path, write=False)
    assert resumed is not None and resumed.context() == agent.transcript


async def test_overflow_error_compacts_then_retries_once(tmp_path: Path) -> None:
    agent, faux, session = await agent_after_three_turns(0, tmp_path)
    faux.push({"type": "failure", "error_message": OVERFLOW}, answer(SUMMARY), answer("four"))
    final = await prompt_with_compaction(agent, "task 4", session, reserve=RESERVE)
    assert final.text == "four" and faux.pending_responses() == 0
    overflowed, summary_request, retry = faux.requests[-3:]
    assert summary_request.system_prompt == SUMMARY_SYSTEM_PROMPT
    assert len(retry.messages) < len(overflowed.messages)
    assert SUMMARY in retry.messages[0].content[0].text  # type: ignore[union-attr]
    assert retry.messages[-1].content == [TextContent("task 4")]
    assert_tool_pairs_intact(retry.messages)
    resumed = SessionStore(tmp_path).latest(tmp_path, write=False)
    assert resumed is not None and resumed.context() == agent.transcript


async def test_overflow_with_nothing_to_compact_does_not_loop() -> None:
    faux = create_faux_provider([{"type": "failure", "error_message": OVERFLOW}])
    agent = Agent(faux.provider, faux.model)
    final = await prompt_with_compaction(agent, "hi", None)
    assert final.stop_reason == "error" and final.error_message == OVERFLOW
    assert len(faux.requests) == 1
    with pytest.raises(NothingToCompact, match=r"^Nothing to compact$"):
        await compact_agent(agent, None)


async def test_a_failed_summary_leaves_the_transcript_and_still_prompts(tmp_path: Path) -> None:
    agent, faux, session = await agent_after_three_turns(WINDOW, tmp_path)
    before = agent.transcript
    faux.push({"type": "failure", "error_message": "openai: HTTP 500: boom"}, answer("four"))
    seen: list[CompactionResult | CompactionError] = []
    final = await prompt_with_compaction(
        agent, "task 4", session, reserve=RESERVE, on_compaction=seen.append
    )
    assert [str(e) for e in seen] == ["Compaction failed: openai: HTTP 500: boom"]
    assert final.text == "four" and agent.transcript[: len(before)] == before


async def test_manual_compaction_passes_instructions_and_usage_is_not_reused(
    tmp_path: Path,
) -> None:
    agent, faux, session = await agent_after_three_turns(WINDOW, tmp_path)
    faux.push(answer(SUMMARY))
    await compact_agent(agent, session, instructions="mention the parser")
    asked = faux.requests[-1].messages[0].content[0].text  # type: ignore[union-attr]
    assert asked.endswith("Also follow these instructions: mention the parser")
    # the kept answer still carries the old, huge usage; after the summary it is estimated
    assert context_tokens(agent.transcript) < THRESHOLD


def test_a_kept_reply_in_the_summarys_millisecond_is_not_counted_as_new() -> None:
    from di_code.session.summary import summary_message

    kept = AssistantMessage(
        [TextContent("ok")], "faux", "faux-1", Usage(input=90_000, output=100), timestamp=7
    )
    messages: list[Message] = [summary_message("s", 7), kept, UserMessage.of("next", 8)]
    assert context_tokens(messages) < 1_000  # estimated, not the old 90k of usage


def test_context_tokens_uses_usage_then_estimates() -> None:
    user = UserMessage.of("y" * 400, 1)
    reply = AssistantMessage([TextContent("ok")], "faux", "faux-1", Usage(input=900, output=100))
    failed = msgspec.structs.replace(reply, stop_reason="error", error_message="x", usage=Usage(5))
    assert context_tokens([user]) == 100
    assert context_tokens([user, reply, user]) == 1000 + 100
    assert context_tokens([user, reply, failed]) == 1000


MESSAGE_KINDS = st.sampled_from(["user", "text", "calls1", "calls3"])


def build(kinds: list[str], size: int) -> list[Message]:
    out: list[Message] = []
    for n, kind in enumerate(kinds):
        if kind == "user":
            out.append(UserMessage.of("u" * size, n))
        elif kind == "text":
            out.append(AssistantMessage([TextContent("a" * size)], "f", "m"))
        else:
            calls = [ToolCall(f"{n}-{i}", "read", {}) for i in range(int(kind[-1]))]
            out.append(AssistantMessage(list(calls), "f", "m", stop_reason="tool_use"))
            out += [ToolResultMessage(c.id, "read", [TextContent("r" * size)]) for c in calls]
    return out


@given(st.lists(MESSAGE_KINDS, max_size=30), st.integers(0, 400), st.integers(1, 2000))
@example(["user", "calls3", "user", "text"], 400, 200)  # a cut exists
@example(["calls3"], 400, 200)  # only results after the first message: nothing to cut
def test_the_cut_never_separates_a_tool_call_from_its_result(
    kinds: list[str], size: int, keep: int
) -> None:
    messages = build(kinds, size)
    cut = find_cut(messages, keep)
    if cut is None:  # nothing older to summarize: all fits in `keep`, or no turn to cut at
        fits = sum(map(estimate_tokens, messages)) < keep
        assert fits or all(isinstance(m, ToolResultMessage) for m in messages[1:])
        return
    assert 0 < cut < len(messages)
    assert not isinstance(messages[cut], ToolResultMessage)
    assert_tool_pairs_intact(messages[cut:])
