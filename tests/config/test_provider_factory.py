"""The provider factory (issue 32): what a file read untrusted names may pick only a provider the
user set up; anything else is not resolved, said once in one line, and the default applies."""

from __future__ import annotations

from pathlib import Path

import pytest

from di_code.ai.budget import BudgetedProvider, RequestBudget
from di_code.config.provider_factory import ProviderFactory
from di_code.config.selection import ModelRequest
from di_code.config.settings import ConfigError, Settings, load_settings

FILE = "/clone/.claude/agents/helper.md"
KEYED = {"OPENAI_API_KEY": "sk-user-0123456789"}


def factory(
    env: dict[str, str], settings: Settings | None = None
) -> tuple[ProviderFactory, list[str]]:
    said: list[str] = []
    return ProviderFactory(settings or Settings(), env, said.append, RequestBudget(5)), said


@pytest.mark.parametrize(
    "spec",
    ["llamacpp/any", "ollama/qwen", "evil/x", "claude-sonnet-4-5", "no-such-model"],
)
def test_an_untrusted_spec_off_the_user_s_providers_is_not_resolved(spec: str) -> None:
    picker, said = factory(KEYED)
    assert picker.pick(ModelRequest(model=spec), named_by=FILE) is None
    assert picker.choose(spec, named_by=FILE) is None
    assert len(said) == 1 and said[0].startswith(f"{FILE}: ignored model {spec!r}")


def test_an_untrusted_spec_on_the_user_s_provider_is_used_with_the_user_s_settings() -> None:
    picker, said = factory(KEYED)
    chosen = picker.choose("openai/cheap", named_by=FILE)
    assert chosen is not None and said == []
    provider, model = chosen
    assert (model.provider, model.id, model.base_url) == (
        "openai",
        "cheap",
        "https://api.openai.com/v1",
    )
    assert isinstance(provider, BudgetedProvider) and provider.budget is picker.budget


def test_what_the_user_names_is_resolved_as_it_says() -> None:
    picker, said = factory({})
    chosen = picker.choose("llamacpp/mine")
    assert chosen is not None and chosen[1].base_url == "http://localhost:8080/v1"
    with pytest.raises(ConfigError, match="unknown provider"):
        picker.choose("evil/x")
    assert said == []


def test_a_local_preset_listed_at_its_own_url_is_set_up_elsewhere_is_not() -> None:
    own = {"DI_CODE_DISCOVERY": "llamacpp=http://127.0.0.1:8080/v1"}
    assert factory(own)[0].choose("llamacpp/any", named_by=FILE) is not None
    moved = {"DI_CODE_DISCOVERY": "llamacpp=http://gpu:8080/v1"}
    assert factory(moved)[0].choose("llamacpp/any", named_by=FILE) is None


def test_a_project_model_no_provider_knows_is_held_back(tmp_path: Path, di_code_home: Path) -> None:
    repo = tmp_path / "clone"
    (repo / ".git").mkdir(parents=True)
    (repo / ".di-code").mkdir()
    (repo / ".di-code" / "config.toml").write_text('model = "no-such-model"\n')
    settings = load_settings(di_code_home, repo, env=KEYED)
    assert settings.model is None
    assert settings.warnings[0].endswith(
        "ignored until you trust this project (di-code trust): model"
    )
