"""Recognising a context-overflow failure, whatever words the provider used.

Providers say "the prompt is too long" in their own words; these patterns cover the ones
di-code talks to (OpenAI and compatible servers, Anthropic, Gemini, llama.cpp, LM Studio,
vLLM, Mistral, xAI, OpenRouter, Groq, Bedrock). Servers that truncate silently instead
(Ollama) report large input usage, which `should_compact` sees before the next prompt.
"""

from __future__ import annotations

import re

from di_code.ai.types import AssistantMessage

_OVERFLOW = re.compile(
    "|".join(
        (
            r"context[_ ]length[_ ]exceeded",
            r"maximum context length",
            r"maximum prompt length",
            r"prompt is too long",
            r"prompt too long",
            r"input is too long",
            r"exceeds? (?:the )?(?:available |model'?s? )?context",
            r"exceed context limit",
            r"context (?:window|size|limit) (?:is |was |has been )?exceeded",
            r"too large for model with \d+ maximum context length",
            r"input token count .* exceeds the maximum",
            r"reduce the length of the messages",
            r"context overflow",
            r"tokens? > \d+ maximum",
            r"HTTP 413",
        )
    ),
    re.IGNORECASE,
)


_STATED_WINDOW = re.compile(
    "|".join(
        (
            r"available context size \((\d+) tokens?\)",  # llama-server
            r"maximum context length is (\d+) tokens?",  # OpenAI, vLLM
            r"tokens? > (\d+) maximum",  # Anthropic
            r"context (?:window|length|size) of (\d+) tokens?",
        )
    ),
    re.IGNORECASE,
)


def stated_context_window(message: AssistantMessage) -> int | None:
    """The window an overflow error names (`... exceeds the available context size (2048
    tokens)`), so a wrong assumption about the model is corrected by the failure itself."""
    if not is_context_overflow(message):
        return None
    found = _STATED_WINDOW.search(message.error_message or "")
    return int(next(group for group in found.groups() if group)) if found else None


def is_context_overflow(message: AssistantMessage) -> bool:
    """True when this reply failed because the context was too long for the model."""
    return message.stop_reason == "error" and bool(_OVERFLOW.search(message.error_message or ""))
