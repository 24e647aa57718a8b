"""The one place every model and provider is picked through: the session's model,
a subagent's (its file's `model:` or `[subagents] model`), a local server found by discovery,
`--base-url` alone, the chat's `/model`, and so every ACP session and batch task (each is set
up by the same `prepare`). tests/test_guarded_models.py fails when another module resolves a
model or makes a provider on its own.

Who names a model decides what it may pick. What the user names (flags, `DI_CODE_MODEL`, their
own config and subagent files, `/model`, a batch's task file, a project's config they trust)
is resolved as it says. A project's subagent file is read untrusted (it is used anyway: it is
only text): its `model` counts only when it names a provider the user has set up (the rule of an
untrusted project's `model`, di_code.config.settings.user_providers). Any other is not
resolved at all (no preset, base URL or local port the user did not choose is contacted): one
line says so, once, and the subagent runs on the default model. Falling back rather than
failing the task keeps the job going on the model the user chose, as the project's `model` key
falls back to the user's.

A key goes only to the base URL it was given for: a `--base-url` or `--api-key` (or a local
server found) is remembered for its provider, and every later choice of a model of that
provider (the chat's `/model`, an editor's model select, a subagent's model) goes to the same
URL with the same key (tests/acp/test_acp_endpoint.py).

Every provider made here counts its requests against the session's request budget.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

import msgspec

from di_code.ai.budget import RequestBudget
from di_code.ai.redaction import PIECE, register, register_url
from di_code.ai.stream import Provider
from di_code.ai.types import Model
from di_code.config.models import PRESETS
from di_code.config.selection import (
    ModelRequest,
    Selection,
    provider_named,
    select_model,
    timeouts_from,
)
from di_code.config.settings import ConfigError, Settings, user_providers


def key_variables(settings: Settings) -> frozenset[str]:
    """The variables holding a provider's key: every preset's and every configured
    provider's `api_key_env` (a project's only once trusted)."""
    presets = [preset.api_key_env for preset in PRESETS.values()]
    configured = [provider.api_key_env for provider in settings.providers.values()]
    return frozenset(name for name in (*presets, *configured) if name)


def register_known_keys(settings: Settings, env: Mapping[str, str]) -> None:
    """Hide every provider key the environment holds, used or not (see `_key_like`)."""
    register(*(value for value in map(env.get, key_variables(settings)) if _key_like(value)))


def _key_like(value: str | None) -> bool:
    """Whether a key variable's value is a key to hide from the start: every key a later
    `/model` or subagent may send is a secret before it is used (read as text, a `.env`, it is
    hidden from what is shown and from every other provider), but a placeholder shorter than a
    redacted piece (`EMPTY`, `dummy`: what local servers are given) is no key, and hiding it
    would change what the model reads of the files holding that word."""
    return value is not None and len(value.strip()) >= PIECE


class ProviderFactory:
    """The session's settings, environment and request budget, and what it has said."""

    def __init__(
        self,
        settings: Settings,
        env: Mapping[str, str],
        notify: Callable[[str], None],
        budget: RequestBudget | None = None,
    ) -> None:
        self.settings = settings
        self.env = env
        self.notify = notify
        self.budget = budget
        self._said: set[str] = set()
        self._given: dict[str, tuple[str | None, str | None]] = {}
        """Per provider, the base URL and key given for it: where that key may go."""
        register_known_keys(settings, env)

    def pick(self, request: ModelRequest, named_by: str | None = None) -> Selection | None:
        """The model `request` names, resolved as `--model` is (a ConfigError names what to
        fix); None when nothing at all is configured (the caller looks for a local server),
        or when `named_by`, a file read untrusted, names a provider the user has not set up
        (said in one line; the caller uses its default)."""
        if named_by is not None and request.model:
            refusal = self._refusal(request.model, named_by)
            if refusal is not None:
                self._say(refusal)
                return None
        request = self._with_given_endpoint(request)
        selection = select_model(request, self.settings, self.env)
        if selection is not None and (request.base_url or request.api_key):
            self._given[selection.model.provider] = (request.base_url, request.api_key)
        return selection

    def _with_given_endpoint(self, request: ModelRequest) -> ModelRequest:
        """`request` with the base URL and key given earlier for its provider (`--base-url`,
        `--api-key`, a local server found), unless it names its own: choosing a model again
        (`/model`, an editor's model select, a subagent's model) never sends the key to the
        provider's public URL instead of the one it was given for, nor another key there."""
        if request.base_url or request.api_key:
            return request
        name = request.provider or (
            provider_named(request.model, self.settings) if request.model else None
        )
        if name not in self._given:
            return request
        base_url, api_key = self._given[name]
        return msgspec.structs.replace(request, base_url=base_url, api_key=api_key)

    def open(self, selection: Selection) -> Provider:
        """A provider for the selection; its key and URL are never shown from now on."""
        from di_code.ai.providers import PROVIDER_CLASSES

        register(selection.api_key)
        register_url(selection.model.base_url)
        api = selection.model.api
        provider_class = PROVIDER_CLASSES.get(api)
        if provider_class is None:
            known = ", ".join(sorted(PROVIDER_CLASSES))
            raise ConfigError(f'unknown api "{api}" (known: {known})')
        base_url = selection.model.base_url
        if not base_url:
            raise ConfigError(f"no base URL for {selection.model.provider}: pass --base-url")
        timeouts = timeouts_from(os.environ)
        provider: Provider = provider_class(
            api_key=selection.api_key or None, base_url=base_url, **timeouts
        )
        return self.budget.wrap(provider) if self.budget is not None else provider

    def choose(self, spec: str, named_by: str | None = None) -> tuple[Provider, Model] | None:
        """`PROVIDER/ID` as a new provider and its model; None when `named_by` (an untrusted
        file) may not pick it (said in one line: the default applies)."""
        selection = self.pick(ModelRequest(model=spec), named_by)
        if selection is None:
            if named_by is not None:
                return None
            raise ConfigError(f"no provider for {spec!r}: use PROVIDER/ID")
        return self.open(selection), selection.model

    def _refusal(self, spec: str, named_by: str) -> str | None:
        """Why an untrusted file's `spec` is not used; None when it names a provider the user
        set up (in their config, a key or `<NAME>_BASE_URL` variable, or discovery URLs)."""
        name = provider_named(spec, self.settings)
        if name is not None and name in user_providers(self.settings, self.env):
            return None
        which = f"provider {name!r}" if name is not None else "its provider"
        return (
            f"{named_by}: ignored model {spec!r}: {which} is not one you set up "
            "(its subagent uses the default model)"
        )

    def _say(self, line: str) -> None:
        if line not in self._said:
            self._said.add(line)
            self.notify(line)
