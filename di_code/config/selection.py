"""Choosing the model, its provider, URL and key from flags, env vars and settings (README, Models
and keys).

Order: `--model` (`PROVIDER/ID`, or an ID with `--provider`), then `DI_CODE_MODEL`, then the
settings' `model`; with none, the provider whose key variable is set (OpenAI, Anthropic, Gemini)
and its default model; with no key either, `select_model` returns None and the caller looks for
a local server. Base URL: `--base-url`, then `<PROVIDER>_BASE_URL`, then settings, then the
preset. Key: `--api-key`, then the provider's key variable; a provider that needs a key and has
none is a one-line configuration error naming the variable.
"""

from __future__ import annotations

from collections.abc import Mapping

import msgspec
from msgspec.structs import replace

from di_code.ai.types import Model
from di_code.config.models import (
    DEFAULT_CONTEXT_WINDOW,
    DEFAULT_MAX_OUTPUT,
    OPENAI_API,
    PRESETS,
    ProviderPreset,
    resolve_model,
)
from di_code.config.settings import ConfigError, ModelLimits, ProviderSettings, Settings

MODEL_ENV = "DI_CODE_MODEL"
TIMEOUT_ENVS = {
    "first_byte_timeout": "DI_CODE_FIRST_BYTE_TIMEOUT",
    "stall_timeout": "DI_CODE_STALL_TIMEOUT",
}
"""Seconds a server may stay silent before its reply starts / between two pieces of it."""
KEYED_DEFAULTS = ("openai", "anthropic", "gemini")


class MissingKey(ConfigError):
    """A provider that needs a key has none: which provider, which variable would give it."""

    def __init__(self, provider: str, variable: str) -> None:
        super().__init__(f"no API key for {provider}: set {variable} (or pass --api-key)")
        self.provider, self.variable = provider, variable


class ModelRequest(msgspec.Struct, frozen=True):
    """What the command line asked for."""

    model: str | None = None
    provider: str | None = None
    base_url: str | None = None
    api_key: str | None = None


class Selection(msgspec.Struct, frozen=True):
    model: Model
    api_key: str
    """Empty for providers that need none (local servers)."""


def providers_from(settings: Settings) -> dict[str, ProviderPreset]:
    """The built-in presets, with the settings' `[providers.NAME]` tables laid over them."""
    providers = dict(PRESETS)
    for name, table in settings.providers.items():
        providers[name] = _apply(providers.get(name), table)
    return providers


def _apply(preset: ProviderPreset | None, table: ProviderSettings) -> ProviderPreset:
    """A settings table over a preset (or alone, for a custom provider)."""
    api = table.api or (preset.api if preset else None)
    base_url = table.base_url or (preset.base_url if preset else None)
    if api is None or base_url is None:
        raise ConfigError(f"providers.{table.name} needs api and base_url")
    listed = tuple(
        Model(m, m, table.name, api, DEFAULT_CONTEXT_WINDOW, DEFAULT_MAX_OUTPUT)
        for m in table.models
    )
    known = preset.models if preset else ()
    return ProviderPreset(
        name=table.name,
        api=api,
        base_url=base_url,
        api_key_env=table.api_key_env or (preset.api_key_env if preset else None),
        models=known + tuple(m for m in listed if m.id not in {k.id for k in known}),
        default_model=table.default_model
        or (table.models[0] if table.models else None)
        or (preset.default_model if preset else None),
        api_chosen=table.api is not None or (preset.api_chosen if preset else False),
    )


def select_model(
    request: ModelRequest, settings: Settings, env: Mapping[str, str]
) -> Selection | None:
    """The chosen model and key; None when nothing at all is configured."""
    providers = providers_from(settings)
    spec = request.model or env.get(MODEL_ENV) or settings.model
    name, model_id = _split(spec, request.provider, providers)
    if name is None:
        keyed = [n for n in KEYED_DEFAULTS if env.get(providers[n].api_key_env or "")]
        name = keyed[0] if keyed else None
        if name is None:
            return None
    preset = providers.get(name)
    if preset is None:
        known = ", ".join(sorted(providers))
        raise ConfigError(f'unknown provider "{name}" (known: {known})')
    model_id = model_id or preset.default_model
    if not model_id:
        raise ConfigError(f"no model given for {name}: use --model {name}/MODEL_ID")
    base_url = request.base_url or env.get(f"{name.upper()}_BASE_URL") or preset.base_url
    model = resolve_model(preset, model_id, base_url)
    model = _limited(model, _configured(settings, model))
    return Selection(model, _api_key(preset, request, env))


async def with_limits(
    selection: Selection, settings: Settings, context_window: int | None = None
) -> Selection:
    """The model's context window and output limit, first found wins: `--context-window`,
    `[providers.NAME.models.ID]`, what a local server publishes about itself (a small local
    model's window is often 2048 or 4096 tokens, far from the 128k assumed for an unknown
    model), then the known figures or the defaults."""
    model = selection.model
    configured = _configured(settings, model)
    preset = providers_from(settings).get(model.provider)
    local = preset is not None and preset.api_key_env is None and preset.api == OPENAI_API
    if local and model.base_url and not (context_window or configured.context_window):
        from di_code.ai.providers.limits import probe_server_limits

        published = await probe_server_limits(model.base_url, model.id)
        output = min(
            model.max_output_tokens, published.max_output_tokens or model.max_output_tokens
        )
        window = published.context_window or model.context_window
        model = replace(model, context_window=window, max_output_tokens=output)
    if context_window:
        configured = replace(configured, context_window=context_window)
    return replace(selection, model=_limited(model, configured))


def _configured(settings: Settings, model: Model) -> ModelLimits:
    table = settings.providers.get(model.provider)
    return (table.limits.get(model.id) if table else None) or ModelLimits()


def _limited(model: Model, limits: ModelLimits) -> Model:
    return replace(
        model,
        context_window=limits.context_window or model.context_window,
        max_output_tokens=limits.max_output_tokens or model.max_output_tokens,
    )


def timeouts_from(env: Mapping[str, str]) -> dict[str, float]:
    """The provider's silence limits from the environment (absent: the provider's defaults)."""
    found = {}
    for name, variable in TIMEOUT_ENVS.items():
        text = env.get(variable, "").strip()
        if not text:
            continue
        try:
            seconds = float(text)
        except ValueError:
            seconds = 0.0
        if not 0 < seconds < float("inf"):
            raise ConfigError(f"{variable} must be a number of seconds above 0, not {text!r}")
        found[name] = seconds
    return found


def _split(
    spec: str | None, provider: str | None, providers: Mapping[str, ProviderPreset]
) -> tuple[str | None, str | None]:
    """(provider, model id) from `--model` and `--provider`."""
    if provider is not None:
        prefix = f"{provider}/"
        return provider, spec[len(prefix) :] if spec and spec.startswith(prefix) else spec
    if not spec:
        return None, None
    if "/" in spec:
        name, model_id = spec.split("/", 1)
        return name, model_id
    owners = [n for n, p in providers.items() if any(m.id == spec for m in p.models)]
    if not owners:
        raise ConfigError(f'model "{spec}" needs a provider: use --model PROVIDER/{spec}')
    return owners[0], spec


def provider_named(spec: str, settings: Settings) -> str | None:
    """The provider `spec` names (`PROVIDER/ID`, or an ID only one provider's list has); None
    when it names none."""
    try:
        return _split(spec, None, providers_from(settings))[0]
    except ConfigError:
        return None


def _api_key(preset: ProviderPreset, request: ModelRequest, env: Mapping[str, str]) -> str:
    """The key to send: `--api-key`, else the provider's variable. None set is an error at the
    provider's own URL, but not at a `--base-url` (a server of yours, often keyless: no key is
    sent, and one that wants a key says so)."""
    if request.api_key:
        return clean_key(request.api_key, "--api-key")
    variable = preset.api_key_env
    if variable is None:
        return ""
    key = env.get(variable, "")
    if not key.strip():
        if request.base_url:
            return ""
        raise MissingKey(preset.name, variable)
    return clean_key(key, variable)


def clean_key(key: str, source: str) -> str:
    """The key without surrounding whitespace (a key file with Windows line endings); one
    with a control character inside is refused without being shown."""
    key = key.strip()
    if any(ord(char) < 0x20 or 0x7F <= ord(char) < 0xA0 for char in key):
        raise ConfigError(f"the API key in {source} contains control characters")
    return key
