"""Which model a command talks to when the command line does not say it all: the configured
one; else, for `--base-url` alone, the first model that server lists; else the first local
server that answers; else one line naming every way to configure a model (exit 2). Also the
chat's `/model`: its list, and the switch to the model it names."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from di_code.ai.stream import Provider
from di_code.cli.flags import CliOptions
from di_code.config.models import PRESETS, resolve_model
from di_code.config.selection import (
    KEYED_DEFAULTS,
    MODEL_ENV,
    ModelRequest,
    Selection,
    clean_key,
    select_model,
    timeouts_from,
)
from di_code.config.settings import ConfigError, Settings

if TYPE_CHECKING:
    from di_code.ai.types import Model
    from di_code.config.model_choices import ModelChoice

LISTING_TIMEOUT = 5.0
"""A server the user named may be remote and slower than the 300 ms local probe."""
GENERIC_PRESET = "llamacpp"
"""The preset of an OpenAI-compatible server that is none of the known ones."""


async def choose_model(
    options: CliOptions, settings: Settings, env: Mapping[str, str], notify: Callable[[str], None]
) -> Selection:
    """The configured model, else the named server's first, else the first local server's."""
    from_settings = env.get(MODEL_ENV) or settings.model
    if options.base_url and not (options.model or options.provider or from_settings):
        return await _first_listed(options, notify)
    request = ModelRequest(options.model, options.provider, options.base_url, options.api_key)
    selection = select_model(request, settings, env)
    if selection is not None:
        return selection
    from di_code.config.discovery import candidates, discover  # only when nothing is configured

    preset_urls = {name: preset.base_url for name, preset in PRESETS.items()}
    server = await discover(candidates(env, settings.discovery, preset_urls))
    if server is None:
        raise ConfigError(no_model_message())
    notify(f"using {server.model_id} from the local {server.name} server at {server.base_url}")
    preset = PRESETS.get(server.name) or PRESETS[GENERIC_PRESET]
    return Selection(resolve_model(preset, server.model_id, server.base_url), _key(options))


async def _first_listed(options: CliOptions, notify: Callable[[str], None]) -> Selection:
    """`--base-url` alone: the first model the server lists at `/models`, said on stderr."""
    from di_code.config.discovery import Candidate, discover

    url = options.base_url or ""
    server = await discover([Candidate("server", url)], timeout=LISTING_TIMEOUT)
    if server is None:
        listing = url.rstrip("/") + "/models"
        raise ConfigError(f"no model listed at {listing}: pass --model ID with --base-url")
    notify(f"using {server.model_id}, the first model {url} lists (--model picks another)")
    return Selection(resolve_model(PRESETS[GENERIC_PRESET], server.model_id, url), _key(options))


def _key(options: CliOptions) -> str:
    return clean_key(options.api_key, "--api-key") if options.api_key else ""


def no_model_message() -> str:
    """Every way to give di-code a model, with every key variable a preset reads."""
    keyed = [PRESETS[name].api_key_env or "" for name in KEYED_DEFAULTS]
    others = sorted(
        preset.api_key_env
        for name, preset in PRESETS.items()
        if preset.api_key_env and name not in KEYED_DEFAULTS
    )
    return (
        f"no model configured: set {', '.join(keyed[:-1])} or {keyed[-1]}; or pass --model "
        f"PROVIDER/ID (other providers' keys: {', '.join(others)}), or set {MODEL_ENV} or "
        "model in config.toml; or pass --base-url URL of an OpenAI-compatible server; or "
        "start a local server (Ollama, LM Studio, llama.cpp or vLLM)"
    )


def make_provider(selection: Selection) -> Provider:
    from di_code.ai.providers import PROVIDER_CLASSES

    api = selection.model.api
    provider_class = PROVIDER_CLASSES.get(api)
    if provider_class is None:
        raise ConfigError(f'unknown api "{api}" (known: {", ".join(sorted(PROVIDER_CLASSES))})')
    base_url = selection.model.base_url
    if not base_url:
        raise ConfigError(f"no base URL for {selection.model.provider}: pass --base-url")
    timeouts = timeouts_from(os.environ)
    provider: Provider = provider_class(
        api_key=selection.api_key or None, base_url=base_url, **timeouts
    )
    return provider


def switch_model(spec: str, settings: Settings, env: Mapping[str, str]) -> tuple[Provider, Model]:
    """The chat's /model provider/id: resolved like --model, with the same keys and settings."""
    selection = select_model(ModelRequest(model=spec), settings, env)
    if selection is None:
        raise ConfigError(f"no provider for {spec!r}: use PROVIDER/ID")
    return make_provider(selection), selection.model


def model_list(settings: Settings, env: Mapping[str, str]) -> list[ModelChoice]:
    """The chat's /model list, loaded only when it is first shown."""
    from di_code.config.model_choices import model_choices

    return model_choices(settings, env)
