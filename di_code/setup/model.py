"""Which model a command talks to when the command line does not say it all: the configured
one; else, for `--base-url` alone, the first model that server lists; else the first local
server that answers; else one line naming every way to configure a model (exit 2). Each is
picked through di_code.config.provider_factory. Also the chat's `/model` list."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from di_code.config.models import PRESETS
from di_code.config.provider_factory import ProviderFactory
from di_code.config.selection import (
    KEYED_DEFAULTS,
    MODEL_ENV,
    ModelRequest,
    Selection,
    with_limits,
)
from di_code.config.settings import ConfigError, Settings
from di_code.setup.flags import CliOptions
from di_code.system.web_address import BadAddress, web_address

if TYPE_CHECKING:
    from di_code.config.model_choices import ModelChoice
    from di_code.session import Session

LISTING_TIMEOUT = 5.0
"""A server the user named may be remote and slower than the 300 ms local probe."""
GENERIC_PRESET = "llamacpp"
"""The preset of an OpenAI-compatible server that is none of the known ones."""


async def session_model(
    options: CliOptions, factory: ProviderFactory, session: Session | None
) -> Selection:
    """`choose_model` and the model's limits, the resumed session's last model first (`/model`
    records it at once) unless the command line names one. Without a model the session is
    let go: another process may go on with it."""
    named = options.model or options.provider or options.base_url
    used = None if session is None or named else session.model()
    try:
        chosen = await choose_model(options, factory, None if used is None else "/".join(used))
        return await with_limits(chosen, factory.settings, options.context_window)
    except BaseException:
        if session is not None:
            session.release()
        raise


async def choose_model(
    options: CliOptions, factory: ProviderFactory, resumed: str | None = None
) -> Selection:
    """The resumed session's model, else the configured one, else the named server's first,
    else the first local server's."""
    settings, env = factory.settings, factory.env
    if resumed is not None:
        try:
            selection = factory.pick(ModelRequest(resumed))
        except ConfigError as exc:
            factory.notify(f"the session's model {resumed} is not used: {exc}")
        else:
            if selection is not None:
                return selection
    if options.base_url is not None:
        _check_base_url(options.base_url)
    from_settings = env.get(MODEL_ENV) or settings.model
    if options.base_url and not (options.model or options.provider or from_settings):
        return await _first_listed(options, factory)
    request = ModelRequest(options.model, options.provider, options.base_url, options.api_key)
    selection = factory.pick(request)
    if selection is not None:
        return selection
    from di_code.config.discovery import candidates, discover  # only when nothing is configured

    preset_urls = {name: preset.base_url for name, preset in PRESETS.items()}
    server = await discover(candidates(env, settings.discovery, preset_urls))
    if server is None:
        raise ConfigError(no_model_message())
    factory.notify(
        f"using {server.model_id} from the local {server.name} server at {server.base_url}"
    )
    preset = server.name if server.name in PRESETS else GENERIC_PRESET
    return _served(factory, preset, server.model_id, server.base_url, options)


def _check_base_url(url: str) -> None:
    """`--base-url` names an http(s) server; anything else is the user's to fix before a request
    is tried. The URL is not quoted: it may hold a key (`http://user:KEY@host`)."""
    try:
        web_address(url)
    except BadAddress:
        pass
    else:
        if url.isprintable() and " " not in url:  # urlsplit drops a newline: it is refused here
            return
    raise ConfigError("--base-url must be an http:// or https:// address with a host")


async def _first_listed(options: CliOptions, factory: ProviderFactory) -> Selection:
    """`--base-url` alone: the first model the server lists at `/models`, said on stderr."""
    from di_code.config.discovery import Candidate, discover

    url = options.base_url or ""
    server = await discover([Candidate("server", url)], timeout=LISTING_TIMEOUT)
    if server is None:
        listing = url.rstrip("/") + "/models"
        raise ConfigError(f"no model listed at {listing}: pass --model ID with --base-url")
    factory.notify(f"using {server.model_id}, the first model {url} lists (--model picks another)")
    return _served(factory, GENERIC_PRESET, server.model_id, url, options)


def _served(
    factory: ProviderFactory, preset: str, model_id: str, url: str, options: CliOptions
) -> Selection:
    """A model a server at `url` lists, as the preset `preset` speaks to it."""
    selection = factory.pick(ModelRequest(f"{preset}/{model_id}", None, url, options.api_key))
    assert selection is not None  # a model was named
    return selection


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


def model_list(settings: Settings, env: Mapping[str, str]) -> list[ModelChoice]:
    """The chat's /model list, loaded only when it is first shown."""
    from di_code.config.model_choices import model_choices

    return model_choices(settings, env)
