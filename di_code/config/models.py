"""The model registry and provider presets.

A preset names a wire API, a base URL and the environment variable holding its key (`None`
for local servers, which need none). Unknown model ids are accepted with defaults.

OpenAI's own reasoning models (o-series, gpt-5*) at OpenAI's own URL speak the Responses API
(it keeps their reasoning between turns); every other OpenAI-compatible URL, and a provider
table that names its `api`, keeps what it says.

Figures for OpenAI, Anthropic and Google (context window, max output tokens, USD per million tokens:
input / output / cache read / cache write) are from the vendors' public model and pricing
pages as known in late 2025; check them there when they matter. Other vendors' models get the
defaults unless listed.
"""

from __future__ import annotations

import re

import msgspec

from di_code.ai.types import Model, ModelCost
from di_code.config.key_variables import PRESET_KEYS

DEFAULT_CONTEXT_WINDOW = 128_000
DEFAULT_MAX_OUTPUT = 8_192
"""For a model not listed here: high enough for a long file written in one tool call, accepted
by the current models of every compatible service, and a stop for a weak local model that
would otherwise generate until its context is full."""
OPENAI_API = "openai-completions"
ANTHROPIC_API = "anthropic-messages"
RESPONSES_API = "openai-responses"
GOOGLE_API = "google-generative-ai"
OPENAI_URL = "https://api.openai.com/v1"
_OPENAI_REASONING = re.compile(r"^(o\d|gpt-5)(?!.*-chat)")
_TEXT_IMAGE = frozenset({"text", "image"})


class ProviderPreset(msgspec.Struct, frozen=True):
    name: str
    api: str
    base_url: str
    api_key_env: str | None
    models: tuple[Model, ...] = ()
    default_model: str | None = None
    api_chosen: bool = False
    """The settings name the api: no model is moved to another one."""


def _openai(
    model_id: str, context: int, output: int, price: tuple[float, float, float], reasoning: bool
) -> Model:
    return Model(
        id=model_id,
        name=model_id,
        provider="openai",
        api=OPENAI_API,
        context_window=context,
        max_output_tokens=output,
        reasoning=reasoning,
        input=_TEXT_IMAGE,
        cost=ModelCost(input=price[0], output=price[1], cache_read=price[2]),
    )


def _anthropic(
    model_id: str, name: str, output: int, price: tuple[float, float], reasoning: bool = True
) -> Model:
    """Cache reads cost 0.1x the input price, 5-minute cache writes 1.25x."""
    cost = ModelCost(price[0], price[1], round(price[0] * 0.1, 4), round(price[0] * 1.25, 4))
    return Model(
        id=model_id,
        name=name,
        provider="anthropic",
        api=ANTHROPIC_API,
        context_window=200_000,
        max_output_tokens=output,
        reasoning=reasoning,
        input=_TEXT_IMAGE,
        cost=cost,
    )


OPENAI_MODELS = (
    _openai("gpt-5", 400_000, 128_000, (1.25, 10.0, 0.125), True),
    _openai("gpt-5-mini", 400_000, 128_000, (0.25, 2.0, 0.025), True),
    _openai("gpt-5-nano", 400_000, 128_000, (0.05, 0.40, 0.005), True),
    _openai("gpt-4.1", 1_047_576, 32_768, (2.0, 8.0, 0.50), False),
    _openai("gpt-4.1-mini", 1_047_576, 32_768, (0.40, 1.60, 0.10), False),
    _openai("gpt-4.1-nano", 1_047_576, 32_768, (0.10, 0.40, 0.025), False),
    _openai("gpt-4o", 128_000, 16_384, (2.50, 10.0, 1.25), False),
    _openai("gpt-4o-mini", 128_000, 16_384, (0.15, 0.60, 0.075), False),
    _openai("o3", 200_000, 100_000, (2.0, 8.0, 0.50), True),
    _openai("o4-mini", 200_000, 100_000, (1.10, 4.40, 0.275), True),
)

ANTHROPIC_MODELS = (
    _anthropic("claude-opus-4-5", "Claude Opus 4.5", 64_000, (5.0, 25.0)),
    _anthropic("claude-opus-4-1", "Claude Opus 4.1", 32_000, (15.0, 75.0)),
    _anthropic("claude-sonnet-4-5", "Claude Sonnet 4.5", 64_000, (3.0, 15.0)),
    _anthropic("claude-haiku-4-5", "Claude Haiku 4.5", 64_000, (1.0, 5.0)),
    _anthropic("claude-sonnet-4-0", "Claude Sonnet 4", 64_000, (3.0, 15.0)),
    _anthropic("claude-3-5-haiku-latest", "Claude Haiku 3.5", 8_192, (0.80, 4.0), False),
)


def _google(model_id: str, output: int, price: tuple[float, float, float]) -> Model:
    """Prices for prompts up to 200k tokens."""
    return Model(
        id=model_id,
        name=model_id,
        provider="gemini",
        api=GOOGLE_API,
        context_window=1_048_576,
        max_output_tokens=output,
        reasoning=True,
        input=_TEXT_IMAGE,
        cost=ModelCost(input=price[0], output=price[1], cache_read=price[2]),
    )


GEMINI_MODELS = (
    _google("gemini-3-pro-preview", 65_536, (2.0, 12.0, 0.20)),
    _google("gemini-2.5-pro", 65_536, (1.25, 10.0, 0.125)),
    _google("gemini-2.5-flash", 65_536, (0.30, 2.50, 0.03)),
    _google("gemini-2.5-flash-lite", 65_536, (0.10, 0.40, 0.01)),
)


def _compatible(name: str, base_url: str, key: str | None, default: str | None) -> ProviderPreset:
    return ProviderPreset(name, OPENAI_API, base_url, key, (), default)


PRESETS: dict[str, ProviderPreset] = {
    "openai": ProviderPreset(
        "openai",
        OPENAI_API,
        OPENAI_URL,
        PRESET_KEYS["openai"],
        OPENAI_MODELS,
        "gpt-4.1",
    ),
    "anthropic": ProviderPreset(
        "anthropic",
        ANTHROPIC_API,
        "https://api.anthropic.com",
        PRESET_KEYS["anthropic"],
        ANTHROPIC_MODELS,
        "claude-sonnet-4-5",
    ),
    "gemini": ProviderPreset(
        "gemini",
        GOOGLE_API,
        "https://generativelanguage.googleapis.com",
        PRESET_KEYS["gemini"],
        GEMINI_MODELS,
        "gemini-2.5-flash",
    ),
    "ollama": _compatible("ollama", "http://localhost:11434/v1", None, None),
    "lmstudio": _compatible("lmstudio", "http://localhost:1234/v1", None, None),
    "llamacpp": _compatible("llamacpp", "http://localhost:8080/v1", None, None),
    "vllm": _compatible("vllm", "http://localhost:8000/v1", None, None),
    "openrouter": _compatible(
        "openrouter", "https://openrouter.ai/api/v1", PRESET_KEYS["openrouter"], None
    ),
    "deepseek": _compatible(
        "deepseek", "https://api.deepseek.com/v1", PRESET_KEYS["deepseek"], "deepseek-chat"
    ),
    "groq": _compatible("groq", "https://api.groq.com/openai/v1", PRESET_KEYS["groq"], None),
    "mistral": _compatible(
        "mistral", "https://api.mistral.ai/v1", PRESET_KEYS["mistral"], "mistral-large-latest"
    ),
    "xai": _compatible("xai", "https://api.x.ai/v1", PRESET_KEYS["xai"], "grok-4"),
}


def _known(preset: ProviderPreset, model_id: str) -> Model | None:
    """Exact id, else the longest known id the given one starts with (dated snapshots such as
    `claude-sonnet-4-5-20250929` or `gpt-5-mini-2025-08-07` share their family's figures)."""
    models = [m for m in preset.models if isinstance(m, Model)]
    for model in models:
        if model.id == model_id:
            return model
    prefixed = [m for m in models if model_id.startswith(m.id + "-")]
    return max(prefixed, key=lambda m: len(m.id), default=None)


def resolve_model(preset: ProviderPreset, model_id: str, base_url: str | None = None) -> Model:
    """The Model for `model_id` on `preset`: known figures, or defaults for an unknown id."""
    known = _known(preset, model_id)
    if known is None:
        known = Model(
            id=model_id,
            name=model_id,
            provider=preset.name,
            api=preset.api,
            context_window=DEFAULT_CONTEXT_WINDOW,
            max_output_tokens=DEFAULT_MAX_OUTPUT,
        )
    url = base_url or preset.base_url
    responses = _speaks_responses(preset, model_id, url)
    return msgspec.structs.replace(
        known,
        id=model_id,
        provider=preset.name,
        api=RESPONSES_API if responses else preset.api,
        reasoning=known.reasoning or responses,
        base_url=url,
    )


def _speaks_responses(preset: ProviderPreset, model_id: str, base_url: str) -> bool:
    """OpenAI's reasoning models at OpenAI itself, unless the settings chose the api."""
    official = base_url.rstrip("/") == OPENAI_URL
    chat = preset.api == OPENAI_API and not preset.api_chosen
    return chat and official and bool(_OPENAI_REASONING.match(model_id))
