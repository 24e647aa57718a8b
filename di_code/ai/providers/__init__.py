"""Providers: each turns a Context into an AssistantMessageStream.

`PROVIDER_CLASSES` maps a `Model.api` value to the provider class that speaks it. A class's
module is imported when it is looked up, so importing this package imports no provider and
no httpx, and a run against OpenAI never loads the Anthropic translator.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from importlib import import_module

_WHERE: dict[str, tuple[str, str]] = {
    "openai-completions": ("di_code.ai.providers.openai", "OpenAIProvider"),
    "anthropic-messages": ("di_code.ai.providers.anthropic", "AnthropicProvider"),
    "openai-responses": ("di_code.ai.providers.openai_responses", "OpenAIResponsesProvider"),
    "google-generative-ai": ("di_code.ai.providers.google", "GoogleProvider"),
}


class _ProviderClasses(Mapping[str, type]):
    """A read-only map whose values are imported on first lookup."""

    def __getitem__(self, api: str) -> type:
        module, name = _WHERE[api]
        found: type = getattr(import_module(module), name)
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(_WHERE)

    def __len__(self) -> int:
        return len(_WHERE)


PROVIDER_CLASSES: Mapping[str, type] = _ProviderClasses()
