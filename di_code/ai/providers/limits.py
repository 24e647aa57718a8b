"""How many tokens a reply may use, and what a local server says about its own limits.

Every provider sends a `max_tokens` (README, Models and keys): without one a weak local model
generates until its context is full (minutes on a CPU), and a server that checks `prompt +
max_tokens` against its window (vLLM) needs room left for the prompt. `reply_token_limit` is that
one rule for all providers. `probe_server_limits` asks a local server for its context window and
output limit: llama-server (`/props`), vLLM (`max_model_len` in `/v1/models`), LM Studio
(`/api/v0/models`) and Ollama (`/api/show`); answers are cached per base URL and model for the
process."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import msgspec

from di_code.ai.stream import StreamOptions
from di_code.ai.types import Model
from di_code.system.http_client import http_client

MIN_REPLY_TOKENS = 256
PROBE_TIMEOUT = 2.0
OLLAMA_DEFAULT_CONTEXT = 4096
"""Ollama runs a model at `num_ctx` (default 4096), whatever the model was trained for."""


def reply_token_limit(model: Model, options: StreamOptions) -> int:
    """The caller's `max_tokens`, else the model's max output; never above the model's max
    output, nor above a quarter of its context window (the rest is the prompt's)."""
    wanted = options.max_tokens or model.max_output_tokens
    window_share = max(model.context_window // 4, MIN_REPLY_TOKENS)
    return max(1, min(wanted, model.max_output_tokens, window_share))


class ServerLimits(msgspec.Struct, frozen=True):
    """What a server published; None where it said nothing."""

    context_window: int | None = None
    max_output_tokens: int | None = None


_CACHE: dict[tuple[str, str], ServerLimits] = {}


async def probe_server_limits(
    base_url: str, model_id: str, timeout: float = PROBE_TIMEOUT
) -> ServerLimits:
    """Ask the server at `base_url` (an OpenAI-compatible `/v1` URL) for the limits of
    `model_id`; any failure means "nothing published". Cached per base URL and model."""
    key = (base_url.rstrip("/"), model_id)
    if key not in _CACHE:
        async with await http_client(base_url, timeout=timeout, trust_env=False) as client:
            answers = await asyncio.gather(
                *(probe(client, key[0], model_id) for probe in _PROBES),
            )
        _CACHE[key] = _first(answers)
    return _CACHE[key]


def _first(answers: list[ServerLimits]) -> ServerLimits:
    windows = [a.context_window for a in answers if a.context_window]
    outputs = [a.max_output_tokens for a in answers if a.max_output_tokens]
    return ServerLimits(windows[0] if windows else None, outputs[0] if outputs else None)


def _root(base_url: str) -> str:
    return base_url.removesuffix("/v1")


async def _get(client: Any, url: str, json: Any = None) -> Any:
    try:
        response = await (client.post(url, json=json) if json else client.get(url))
        return response.json() if response.status_code == 200 else None
    except Exception:  # refused, timed out, not JSON: nothing published there
        return None


def _positive(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


async def _llama_server(client: Any, base_url: str, model_id: str) -> ServerLimits:
    """`/props`: the slot's `n_ctx` (the `-c` it was started with) and `n_predict` (`-n`)."""
    data = await _get(client, _root(base_url) + "/props")
    settings = data.get("default_generation_settings") if isinstance(data, dict) else None
    if not isinstance(settings, dict):
        return ServerLimits()
    params = settings.get("params")
    predict = params.get("n_predict") if isinstance(params, dict) else settings.get("n_predict")
    return ServerLimits(_positive(settings.get("n_ctx")), _positive(predict))


async def _models_list(client: Any, base_url: str, model_id: str) -> ServerLimits:
    """`/v1/models`: vLLM's `max_model_len` (llama-server's `meta` there has only the
    training context, not the one it runs with: `/props` says that)."""
    data = await _get(client, base_url + "/models")
    for entry in data.get("data") or [] if isinstance(data, dict) else []:
        if isinstance(entry, dict) and entry.get("id") == model_id:
            return ServerLimits(_positive(entry.get("max_model_len")))
    return ServerLimits()


async def _lmstudio(client: Any, base_url: str, model_id: str) -> ServerLimits:
    """LM Studio's `/api/v0/models/ID`: the loaded context length, else the model's maximum."""
    data = await _get(client, f"{_root(base_url)}/api/v0/models/{model_id}")
    if not isinstance(data, dict):
        return ServerLimits()
    loaded = _positive(data.get("loaded_context_length"))
    return ServerLimits(loaded or _positive(data.get("max_context_length")))


async def _ollama(client: Any, base_url: str, model_id: str) -> ServerLimits:
    """Ollama's `/api/show`: `num_ctx` among the parameters, else Ollama's default (bounded by
    the model's own `*.context_length`); `num_predict` likewise."""
    data = await _get(client, _root(base_url) + "/api/show", {"model": model_id})
    if not isinstance(data, dict) or not isinstance(data.get("model_info"), dict):
        return ServerLimits()
    params = str(data.get("parameters") or "")
    trained = [_positive(v) for k, v in data["model_info"].items() if k.endswith(".context_length")]
    window = _parameter(params, "num_ctx") or OLLAMA_DEFAULT_CONTEXT
    if trained and trained[0]:
        window = min(window, trained[0])
    return ServerLimits(window, _parameter(params, "num_predict"))


def _parameter(parameters: str, name: str) -> int | None:
    found = re.search(rf"^{name}\s+(-?\d+)\s*$", parameters, re.MULTILINE)
    return _positive(int(found.group(1))) if found else None


_PROBES = (_llama_server, _models_list, _lmstudio, _ollama)
