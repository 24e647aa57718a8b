"""Compaction: when the context nears the window, older turns become a model-written summary.

Token counts come from the provider's usage of the last request made since the latest
compaction (told apart by timestamp); only messages after it, or all when there is none, are
estimated at four characters a token.
The cut keeps the most recent ~`keep_recent_tokens` and is placed only before a user or
assistant message, never before a tool result, so a tool call and its result stay together.
The reserve and the kept tail are at most a quarter of the context window each, so a small
local model (2048 tokens) compacts early enough and keeps a tail that fits.
"""

from __future__ import annotations

import json

import msgspec

from di_code.ai.stream import Provider, StreamOptions
from di_code.ai.types import (
    AssistantMessage,
    Context,
    ImageContent,
    Message,
    Model,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    now_ms,
)
from di_code.session.summary import (
    SUMMARY_SYSTEM_PROMPT,
    is_summary_message,
    summary_message,
    summary_request,
)
from di_code.system.abort import AbortSignal
from di_code.system.errors import DiCodeError

DEFAULT_RESERVE = 16_384
DEFAULT_KEEP_RECENT_TOKENS = 20_000
IMAGE_TOKENS = 1_200
SUMMARY_MAX_TOKENS = 8_192
NOTHING_TO_COMPACT = "Nothing to compact"


class CompactionError(DiCodeError):
    """Compaction could not be done; the message is one line for the user."""


class NothingToCompact(CompactionError):
    def __init__(self) -> None:
        super().__init__(NOTHING_TO_COMPACT)


class CompactionResult(msgspec.Struct, frozen=True):
    summary: str
    first_kept_index: int
    """Index, in the messages given to `compact`, of the first message kept as it was."""
    tokens_before: int
    messages: list[Message]
    """The new transcript: the summary message, then the kept messages."""


def estimate_tokens(message: Message) -> int:
    """Four characters a token: a rough count, used only where no usage is known."""
    chars = 0
    images = 0
    for block in message.content:
        match block:
            case TextContent(text=text):
                chars += len(text)
            case ThinkingContent(thinking=thinking):
                chars += len(thinking)
            case ToolCall(name=name, arguments=arguments):
                chars += len(name) + len(json.dumps(arguments, ensure_ascii=False))
            case ImageContent():
                images += 1
    return chars // 4 + images * IMAGE_TOKENS


def context_tokens(messages: list[Message]) -> int:
    """The size of the next request: the last usage reported since the latest compaction (kept
    messages carry usage from before it, which no longer applies), plus estimates after it."""
    summaries = [m.timestamp for m in messages if is_summary_message(m)]
    since = summaries[-1] if summaries else None
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if not isinstance(message, AssistantMessage) or message.stop_reason in ("error", "aborted"):
            continue
        if since is not None and message.timestamp <= since:
            break  # kept from before the summary (a reply in the summary's millisecond too)
        used = message.usage.context
        if used > 0:
            return used + sum(estimate_tokens(m) for m in messages[index + 1 :])
    return sum(estimate_tokens(m) for m in messages)


def window_share(model: Model, tokens: int) -> int:
    """`tokens`, or a quarter of the model's context window when that is smaller."""
    return min(tokens, model.context_window // 4)


def should_compact(messages: list[Message], model: Model, reserve: int = DEFAULT_RESERVE) -> bool:
    """True when the context has grown past `context_window - reserve` (scaled down for a
    small window, see `window_share`)."""
    return context_tokens(messages) > model.context_window - window_share(model, reserve)


def find_cut(messages: list[Message], keep_recent_tokens: int) -> int | None:
    """Index of the first kept message, or None when there is nothing older to summarize."""
    kept = 0
    target = len(messages)
    for index in range(len(messages) - 1, -1, -1):
        kept += estimate_tokens(messages[index])
        if kept >= keep_recent_tokens:
            target = index
            break
    else:
        return None
    cuts = [i for i in range(1, len(messages)) if _can_cut_before(messages[i])]
    before = [i for i in cuts if i <= target]
    after = [i for i in cuts if i > target]
    if before:
        return before[-1]
    return after[0] if after else None


def _can_cut_before(message: Message) -> bool:
    return not isinstance(message, ToolResultMessage)


async def compact(
    provider: Provider,
    model: Model,
    messages: list[Message],
    *,
    keep_recent_tokens: int = DEFAULT_KEEP_RECENT_TOKENS,
    instructions: str | None = None,
    signal: AbortSignal | None = None,
) -> CompactionResult:
    """Ask the model for a summary of the older messages; keep the recent ones as they are."""
    cut = find_cut(messages, window_share(model, keep_recent_tokens))
    if cut is None or not _has_content(messages[:cut]):
        raise NothingToCompact
    max_tokens = window_share(model, min(model.max_output_tokens, SUMMARY_MAX_TOKENS))
    overhead = window_share(model, 2_000)  # the summary prompt's own instructions
    budget_chars = max(model.context_window - max_tokens - overhead, 500) * 3
    request = summary_request(messages[:cut], instructions, budget_chars)
    context = Context(SUMMARY_SYSTEM_PROMPT, [UserMessage.of(request)], [])
    stream = provider.stream(model, context, StreamOptions(signal=signal, max_tokens=max_tokens))
    reply = await stream.result()
    if reply.stop_reason in ("error", "aborted"):
        raise CompactionError(f"Compaction failed: {reply.error_message}")
    summary = reply.text.strip()
    if not summary:
        raise CompactionError("Compaction failed: the model returned an empty summary")
    compacted: list[Message] = [summary_message(summary, now_ms()), *messages[cut:]]
    return CompactionResult(summary, cut, context_tokens(messages), compacted)


def _has_content(messages: list[Message]) -> bool:
    """Something besides an earlier summary alone is there to summarize."""
    return any(not is_summary_message(message) for message in messages)
