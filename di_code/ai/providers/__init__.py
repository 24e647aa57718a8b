"""Providers: each turns a Context into an AssistantMessageStream (SPEC §2.3).

`PROVIDER_CLASSES` maps a `Model.api` value to the provider class that speaks it. It is
resolved on first access, so importing this package imports neither the providers nor httpx.
"""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    if name == "PROVIDER_CLASSES":
        from di_code.ai.providers.anthropic import AnthropicProvider
        from di_code.ai.providers.openai import OpenAIProvider

        classes: dict[str, type] = {
            "openai-completions": OpenAIProvider,
            "anthropic-messages": AnthropicProvider,
        }
        return classes
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
