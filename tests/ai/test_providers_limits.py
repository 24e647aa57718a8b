"""Context window and output limits: learned from a local server, set in config or by flag,
and an overflow on a small model recovered by compaction (issue 17, items 2 and 3)."""

from __future__ import annotations

import json

import pytest

from di_code.agent import Agent
from di_code.ai.providers.limits import ServerLimits, probe_server_limits
from di_code.ai.providers.openai import OpenAIProvider
from di_code.ai.types import AssistantMessage, Message, TextContent, UserMessage
from di_code.config.models import PRESETS, resolve_model
from di_code.config.selection import Selection, with_limits
from di_code.config.settings import ConfigError, parse_settings
from di_code.session import prompt_with_compaction
from tests.support.llm_server import HttpError, LLMServer, Turn

LLAMA_SERVER_OVERFLOW = json.dumps(
    {
        "error": {
            "code": 400,
            "message": "request (3252 tokens) exceeds the available context size (2048 tokens)",
            "type": "exceed_context_size_error",
            "n_prompt_tokens": 3252,
            "n_ctx": 2048,
        }
    }
)
"""llama-server's answer to a prompt over its `-c` (its JSON error form, status 400)."""


async def test_llama_server_publishes_its_context_size_and_output_limit_in_props(
    llm_server: LLMServer,
) -> None:
    llm_server.publish(
        "/props", {"default_generation_settings": {"n_ctx": 2048, "params": {"n_predict": 300}}}
    )
    limits = await probe_server_limits(llm_server.openai_base_url, "gemma")
    assert limits == ServerLimits(2048, 300)
    asked = len(llm_server.requests)
    assert await probe_server_limits(llm_server.openai_base_url + "/", "gemma") == limits
    assert len(llm_server.requests) == asked  # cached per base URL


async def test_vllm_lmstudio_and_ollama_publish_their_windows(llm_server: LLMServer) -> None:
    vllm = {"data": [{"id": "other", "max_model_len": 1}, {"id": "qwen", "max_model_len": 4096}]}
    llm_server.publish("/v1/models", vllm)
    assert await probe_server_limits(llm_server.openai_base_url, "qwen") == ServerLimits(4096)
    llm_server.published.clear()
    llm_server.publish("/api/v0/models/phi", {"max_context_length": 32768})
    assert await probe_server_limits(llm_server.openai_base_url, "phi") == ServerLimits(32768)
    show = {"model_info": {"llama.context_length": 131072}, "parameters": "num_ctx 8192\nstop x"}
    llm_server.publish("/api/show", show)
    assert await probe_server_limits(llm_server.openai_base_url, "llama") == ServerLimits(8192)
    assert any(r.path == "/api/show" and r.body == {"model": "llama"} for r in llm_server.requests)


async def test_a_server_that_publishes_nothing_leaves_the_model_as_it_was(
    llm_server: LLMServer,
) -> None:
    assert await probe_server_limits(llm_server.openai_base_url, "mystery") == ServerLimits()
    selection = local_selection(llm_server, "mystery")
    assert (await with_limits(selection, parse_settings({}, "x"))).model == selection.model


def local_selection(server: LLMServer, model_id: str) -> Selection:
    return Selection(resolve_model(PRESETS["llamacpp"], model_id, server.openai_base_url), "")


async def test_the_flag_beats_the_config_which_beats_the_server(llm_server: LLMServer) -> None:
    llm_server.publish("/props", {"default_generation_settings": {"n_ctx": 2048}})
    learned = await with_limits(local_selection(llm_server, "small"), parse_settings({}, "x"))
    assert learned.model.context_window == 2048
    config = {"providers": {"llamacpp": {"models": {"small": {"context_window": 4096}}}}}
    settings = parse_settings(config, "config.toml")
    configured = await with_limits(local_selection(llm_server, "small"), settings)
    assert configured.model.context_window == 4096
    flagged = await with_limits(local_selection(llm_server, "small"), settings, 1024)
    assert flagged.model.context_window == 1024


def filler(turns: int) -> list[Message]:
    """`turns` question/answer pairs of ~270 estimated tokens each."""
    messages: list[Message] = []
    for n in range(turns):
        messages.append(UserMessage.of(f"question {n} " + "q" * 500))
        answer = AssistantMessage([TextContent(f"answer {n} " + "a" * 560)], "llamacpp", "gemma")
        messages.append(answer)
    return messages


async def test_an_overflow_on_a_2048_token_model_is_recovered_by_compaction(
    llm_server: LLMServer,
) -> None:
    """The model is assumed to have 128k tokens (nothing configured, nothing probed); the
    server's 400 names its real window, and compaction then keeps a tail that fits."""
    model = resolve_model(PRESETS["llamacpp"], "gemma", llm_server.openai_base_url)
    provider = OpenAIProvider(api_key=None, base_url=llm_server.openai_base_url)
    agent = Agent(provider, model, messages=filler(12))
    llm_server.script(
        HttpError(400, body=LLAMA_SERVER_OVERFLOW),
        Turn(text="## Goal\nAnswer the questions."),
        Turn(text="done"),
    )
    try:
        final = await prompt_with_compaction(agent, "one more", None)
    finally:
        await provider.aclose()
    assert final.text == "done", final.error_message
    overflowed, summary, retry = (r.body for r in llm_server.requests[-3:])
    assert agent.model.context_window == 2048
    assert summary["max_tokens"] <= 512
    assert len(retry["messages"]) < len(overflowed["messages"])
    assert sum(len(json.dumps(m)) for m in retry["messages"]) // 4 < 2048 - 512


async def test_a_learned_small_window_compacts_before_the_request(llm_server: LLMServer) -> None:
    llm_server.publish("/props", {"default_generation_settings": {"n_ctx": 2048}})
    selection = await with_limits(local_selection(llm_server, "tiny"), parse_settings({}, "x"))
    provider = OpenAIProvider(api_key=None, base_url=llm_server.openai_base_url)
    agent = Agent(provider, selection.model, messages=filler(12))
    llm_server.script(Turn(text="## Goal\nSummary."), Turn(text="done"))
    try:
        final = await prompt_with_compaction(agent, "one more", None)
    finally:
        await provider.aclose()
    assert final.text == "done"
    posts = [r.body for r in llm_server.requests if r.path == "/v1/chat/completions"]
    assert posts[-1]["max_tokens"] == 512
    assert len(posts[-1]["messages"]) < 12


def test_model_tables_in_config_give_the_ids_and_their_limits() -> None:
    config = {"providers": {"mine": {"models": {"m1": {"max_output_tokens": 1000}}}}}
    table = parse_settings(config, "config.toml").providers["mine"]
    assert table.models == ("m1",)
    assert table.limits["m1"].max_output_tokens == 1000
    bad = {"providers": {"mine": {"models": {"m1": {"context_window": 0}}}}}
    with pytest.raises(ConfigError, match=r"providers\.mine\.models\.m1\.context_window must"):
        parse_settings(bad, "config.toml")
