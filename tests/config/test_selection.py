"""Model selection: flags, env vars, settings, keys and the errors that name what to set."""

from __future__ import annotations

import pytest

from di_code.config.selection import ModelRequest, providers_from, select_model
from di_code.config.settings import ConfigError, ProviderSettings, Settings

KEYS = {"OPENAI_API_KEY": "sk-o", "ANTHROPIC_API_KEY": "sk-a"}


def choose(
    env: dict[str, str], settings: Settings | None = None, **request: str
) -> tuple[str, str, str | None, str]:
    selection = select_model(ModelRequest(**request), settings or Settings(), env)
    assert selection is not None
    model = selection.model
    return model.provider, model.id, model.base_url, selection.api_key


def test_model_flag_with_provider_prefix_and_key_from_env() -> None:
    assert choose(KEYS, model="anthropic/claude-sonnet-4-5") == (
        "anthropic",
        "claude-sonnet-4-5",
        "https://api.anthropic.com",
        "sk-a",
    )


def test_provider_flag_and_model_ids_with_slashes() -> None:
    env = {"OPENROUTER_API_KEY": "sk-r"}
    assert choose(env, provider="openrouter", model="meta/llama-3")[:2] == (
        "openrouter",
        "meta/llama-3",
    )
    assert choose(env, model="openrouter/meta/llama-3")[:2] == ("openrouter", "meta/llama-3")


def test_unknown_model_on_a_known_provider_gets_defaults() -> None:
    selection = select_model(ModelRequest(model="openai/brand-new"), Settings(), KEYS)
    assert selection is not None
    assert selection.model.context_window == 128_000
    assert selection.model.max_output_tokens == 8_192
    assert selection.model.cost.input == 0


def test_bare_known_model_id_finds_its_provider() -> None:
    assert choose(KEYS, model="claude-haiku-4-5")[:2] == ("anthropic", "claude-haiku-4-5")
    with pytest.raises(ConfigError, match='model "mystery" needs a provider'):
        choose(KEYS, model="mystery")


def test_order_flag_then_env_then_settings_then_keys() -> None:
    settings = Settings(model="anthropic/claude-haiku-4-5")
    env = {**KEYS, "DI_CODE_MODEL": "openai/gpt-4o"}
    assert choose(env, settings, model="openai/o3")[1] == "o3"
    assert choose(env, settings)[1] == "gpt-4o"
    assert choose(KEYS, settings)[1] == "claude-haiku-4-5"
    assert choose(KEYS)[:2] == ("openai", "gpt-4.1")
    assert choose({"ANTHROPIC_API_KEY": "k"})[:2] == ("anthropic", "claude-sonnet-4-5")
    assert choose({"GEMINI_API_KEY": "g"}) == (
        "gemini",
        "gemini-2.5-flash",
        "https://generativelanguage.googleapis.com",
        "g",
    )


def test_nothing_configured_returns_none() -> None:
    assert select_model(ModelRequest(), Settings(), {}) is None


def test_base_url_flag_then_env_then_preset() -> None:
    env = {**KEYS, "OPENAI_BASE_URL": "http://env/v1"}
    assert choose(env, model="openai/gpt-4o", base_url="http://flag/v1")[2] == "http://flag/v1"
    assert choose(env, model="openai/gpt-4o")[2] == "http://env/v1"


def test_missing_key_names_the_variable_and_api_key_flag_fills_it() -> None:
    with pytest.raises(ConfigError) as caught:
        choose({}, model="anthropic/claude-sonnet-4-5")
    assert str(caught.value) == (
        "no API key for anthropic: set ANTHROPIC_API_KEY (or pass --api-key)"
    )
    assert choose({}, model="anthropic/x", api_key="sk-flag")[3] == "sk-flag"


def test_local_presets_need_no_key_but_need_a_model() -> None:
    assert choose({}, model="ollama/qwen3")[2:] == ("http://localhost:11434/v1", "")
    with pytest.raises(ConfigError, match="no model given for ollama: use --model ollama/"):
        choose({}, provider="ollama")


def test_unknown_provider_lists_the_known_ones() -> None:
    with pytest.raises(ConfigError, match='unknown provider "nosuch" \\(known: anthropic, '):
        choose(KEYS, model="nosuch/x")


def test_custom_provider_from_settings() -> None:
    custom = ProviderSettings(
        "together", "openai-completions", "https://t/v1", "TOGETHER_API_KEY", ("llama-big", "b")
    )
    settings = Settings(providers={"together": custom})
    assert choose({"TOGETHER_API_KEY": "sk-t"}, settings, provider="together") == (
        "together",
        "llama-big",
        "https://t/v1",
        "sk-t",
    )
    assert choose({"TOGETHER_API_KEY": "sk-t"}, settings, model="b")[:2] == ("together", "b")
    broken = Settings(providers={"x": ProviderSettings("x", api="openai-completions")})
    with pytest.raises(ConfigError, match=r"providers\.x needs api and base_url"):
        providers_from(broken)


def test_settings_table_overrides_a_preset() -> None:
    settings = Settings(providers={"ollama": ProviderSettings("ollama", base_url="http://gpu/v1")})
    assert choose({}, settings, model="ollama/qwen3")[2] == "http://gpu/v1"
