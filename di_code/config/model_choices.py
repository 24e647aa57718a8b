"""The models `/model` offers: the ones the settings name first, then every model a provider
preset knows, each with the key variable it still lacks."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from di_code.config.selection import providers_from
from di_code.config.settings import Settings


@dataclass(frozen=True, slots=True)
class ModelChoice:
    spec: str
    """`provider/id`, as `/model` and `--model` take it."""
    missing_key: str | None = None
    """The environment variable its provider needs and that is not set."""


def model_choices(settings: Settings, env: Mapping[str, str]) -> list[ModelChoice]:
    providers = providers_from(settings)
    configured = [settings.model] if settings.model and "/" in settings.model else []
    configured += [
        f"{table.name}/{m}" for table in settings.providers.values() for m in table.models
    ]
    known = [
        f"{preset.name}/{model.id}" for preset in providers.values() for model in preset.models
    ]
    choices = []
    for spec in dict.fromkeys([*configured, *known]):
        preset = providers.get(spec.partition("/")[0])
        key = preset.api_key_env if preset is not None else None
        choices.append(ModelChoice(spec, key if key and not env.get(key) else None))
    return choices
