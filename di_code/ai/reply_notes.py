"""What a reply lacks, said the same way everywhere (run's stderr, the chat screen, the JSON).

A reply cut at the output token limit may carry complete tool calls; they are not run (tools
run only when the model stops for `tool_use`), and the user is told how many. A server that
never reports usage (many local servers without `stream_options` support) leaves the usage at
zero: that is unknown, never "0 tokens".
"""

from __future__ import annotations

from di_code.ai.types import AssistantMessage, Usage


def usage_known(usage: Usage) -> bool:
    """False when the server reported no usage at all (no real request costs 0 tokens)."""
    return bool(usage.input or usage.output or usage.cache_read or usage.cache_write)


def cut_reply_note(message: AssistantMessage) -> str:
    """One line for a reply that stopped at the output token limit."""
    calls = len(message.tool_calls)
    if calls:
        plural = "call" if calls == 1 else "calls"
        return f"{calls} tool {plural} not run: the reply hit the output token limit"
    return "the answer was cut at the model's output token limit"
