"""`/model`: with no argument it opens a list of the configured and known models (and the key
each still lacks) to pick from; Tab completes their ids after `/model `."""

from __future__ import annotations

from pathlib import Path

from di_code.agent import Agent
from di_code.ai.providers.faux import create_faux_provider
from di_code.config.model_choices import ModelChoice, model_choices
from di_code.config.settings import ProviderSettings, Settings
from di_code.setup.prepared import Prepared
from tests.support.repl import chat, until


def test_the_configured_models_come_first_then_the_known_ones_with_their_missing_keys() -> None:
    settings = Settings(
        model="local/qwen-coder",
        providers={
            "local": ProviderSettings(
                "local", api="openai-completions", base_url="http://127.0.0.1:1/v1",
                models=("qwen-coder", "llama-3"),
            )
        },
    )  # fmt: skip
    choices = model_choices(settings, {"OPENAI_API_KEY": "sk-x"})
    specs = [choice.spec for choice in choices]
    assert specs[:2] == ["local/qwen-coder", "local/llama-3"]
    found = {choice.spec: choice.missing_key for choice in choices}
    assert found["openai/gpt-5"] is None
    assert found["anthropic/claude-sonnet-4-5"] == "ANTHROPIC_API_KEY"
    assert found["gemini/gemini-2.5-flash"] == "GEMINI_API_KEY"
    assert len(specs) == len(set(specs))


def test_tab_completes_model_ids_after_the_command(tmp_path: Path) -> None:
    from prompt_toolkit.completion import CompleteEvent
    from prompt_toolkit.document import Document

    from di_code.ui.completion import ChatCompleter

    specs = ["openai/gpt-5", "openai/gpt-4.1", "anthropic/claude-sonnet-4-5"]
    completer = ChatCompleter(tmp_path, lambda: specs)

    def complete(text: str) -> list[str]:
        return [c.text for c in completer.get_completions(Document(text), CompleteEvent())]

    assert complete("/model ") == specs
    assert complete("/model openai/gpt-4") == ["openai/gpt-4.1"]
    assert complete("/model claude") == ["anthropic/claude-sonnet-4-5"]
    assert complete("/mod") == ["/model"]


async def test_model_alone_picks_from_the_choices_typed_filter_and_enter() -> None:
    import msgspec

    faux = create_faux_provider([])
    choices = [ModelChoice("faux/faux-1"), ModelChoice("anthropic/opus", "ANTHROPIC_API_KEY")]
    asked: list[str] = []

    def switch(spec: str) -> tuple[object, object]:
        asked.append(spec)
        provider, _, model_id = spec.partition("/")
        return faux.provider, msgspec.structs.replace(faux.model, provider=provider, id=model_id)

    setup = Prepared(
        Agent(faux.provider, faux.model, []),
        models=lambda: choices,
        switch_model=switch,  # type: ignore[arg-type]
    )
    async with chat(setup) as session:
        session.type("/model\ropus\r")  # typed ahead of the list: it reads the rest
        await until(lambda: "Model: anthropic/opus\n" in session.output)
        session.type("/exit\r")
    assert asked == ["anthropic/opus"]
    assert setup.agent.model.id == "opus"
