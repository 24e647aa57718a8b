"""Model registry and provider presets."""

from __future__ import annotations

import pytest

from di_code.ai.types import Usage, compute_cost
from di_code.config.models import PRESETS, ProviderPreset, resolve_model
from di_code.config.selection import providers_from
from di_code.config.settings import ProviderSettings, Settings

LOCAL = ("ollama", "lmstudio", "llamacpp", "vllm")


def test_every_preset_of_the_spec_exists_with_its_base_url() -> None:
    expected = {
        "openai": "https://api.openai.com/v1",
        "anthropic": "https://api.anthropic.com",
        "ollama": "http://localhost:11434/v1",
        "lmstudio": "http://localhost:1234/v1",
        "llamacpp": "http://localhost:8080/v1",
        "vllm": "http://localhost:8000/v1",
    }
    others = {"gemini", "openrouter", "deepseek", "groq", "mistral", "xai"}
    assert set(PRESETS) == {*expected, *others}
    for name, url in expected.items():
        assert PRESETS[name].base_url == url
    assert PRESETS["anthropic"].api == "anthropic-messages"
    assert PRESETS["gemini"].api == "google-generative-ai"
    assert PRESETS["gemini"].base_url == "https://generativelanguage.googleapis.com"
    native = ("anthropic", "gemini")
    assert all(p.api == "openai-completions" for n, p in PRESETS.items() if n not in native)


def test_local_servers_need_no_key_and_hosted_ones_name_their_variable() -> None:
    for name, preset in PRESETS.items():
        assert (preset.api_key_env is None) == (name in LOCAL), name
    assert PRESETS["openai"].api_key_env == "OPENAI_API_KEY"
    assert PRESETS["anthropic"].api_key_env == "ANTHROPIC_API_KEY"


@pytest.mark.parametrize("name", ["openai", "anthropic", "gemini"])
def test_default_models_are_known_and_priced(name: str) -> None:
    preset = PRESETS[name]
    assert preset.default_model is not None
    model = resolve_model(preset, preset.default_model)
    assert model.cost.input > 0 and model.cost.output > model.cost.input
    assert model.context_window >= 128_000
    assert model.provider == name and model.base_url == preset.base_url


def test_unknown_id_gets_defaults_and_a_base_url_override() -> None:
    model = resolve_model(PRESETS["ollama"], "qwen3-coder:30b", "http://box:11434/v1")
    assert (model.id, model.provider, model.api) == (
        "qwen3-coder:30b",
        "ollama",
        "openai-completions",
    )
    assert (model.context_window, model.max_output_tokens) == (128_000, 8_192)
    assert model.cost.input == model.cost.output == 0
    assert model.base_url == "http://box:11434/v1"


def test_a_dated_snapshot_takes_its_family_figures() -> None:
    base = resolve_model(PRESETS["anthropic"], "claude-sonnet-4-5")
    dated = resolve_model(PRESETS["anthropic"], "claude-sonnet-4-5-20250929")
    assert dated.id == "claude-sonnet-4-5-20250929"
    assert (dated.cost, dated.max_output_tokens) == (base.cost, base.max_output_tokens)
    mini = resolve_model(PRESETS["openai"], "gpt-5-mini-2025-08-07")
    assert mini.cost == resolve_model(PRESETS["openai"], "gpt-5-mini").cost


def test_cost_is_computed_from_the_registry_prices() -> None:
    model = resolve_model(PRESETS["openai"], "gpt-4.1")
    usage = compute_cost(model, Usage(input=1_000_000, output=500_000, cache_read=2_000_000))
    assert usage.cost.input == pytest.approx(2.0)
    assert usage.cost.output == pytest.approx(4.0)
    assert usage.cost.cache_read == pytest.approx(1.0)
    assert usage.cost.total == pytest.approx(7.0)


def test_a_custom_preset_keeps_its_own_name() -> None:
    preset = ProviderPreset("mybox", "openai-completions", "http://h/v1", None)
    assert resolve_model(preset, "m").provider == "mybox"


@pytest.mark.parametrize(
    ("model_id", "api"),
    [
        ("gpt-5", "openai-responses"),
        ("gpt-5-mini-2025-08-07", "openai-responses"),
        ("o3", "openai-responses"),
        ("o4-mini", "openai-responses"),
        ("gpt-4.1", "openai-completions"),
        ("gpt-4o", "openai-completions"),
        ("gpt-5-chat-latest", "openai-completions"),
    ],
)
def test_openai_reasoning_models_speak_the_responses_api_at_openai(model_id: str, api: str) -> None:
    model = resolve_model(PRESETS["openai"], model_id)
    assert model.api == api
    assert model.reasoning or api == "openai-completions"


def test_other_openai_compatible_urls_keep_chat_completions() -> None:
    proxy = resolve_model(PRESETS["openai"], "gpt-5", "http://127.0.0.1:9999/v1")
    assert proxy.api == "openai-completions"
    assert resolve_model(PRESETS["openrouter"], "gpt-5").api == "openai-completions"


def test_an_api_named_in_the_settings_is_kept() -> None:
    table = ProviderSettings("openai", api="openai-completions")
    providers = providers_from(Settings(providers={"openai": table}))
    assert resolve_model(providers["openai"], "gpt-5").api == "openai-completions"
    assert resolve_model(PRESETS["openai"], "gpt-5").api == "openai-responses"
