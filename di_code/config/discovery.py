"""Finding a local OpenAI-compatible server when no model is configured at all.

Each candidate is asked `GET {base_url}/models` with a 300 ms timeout, all at once; the first
candidate in order that answers with at least one model wins, and its first model is used.
The candidates are the local presets (Ollama, LM Studio, llama.cpp, vLLM) unless the
`DI_CODE_DISCOVERY` variable or `[discovery] urls` lists others as `NAME=URL` or `URL`;
tests use that to point discovery at a loopback port.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from di_code.config.settings import DISCOVERY_ENV as DISCOVERY_ENV  # where callers look for it
from di_code.system.first_use import HTTP_STACK, import_off_loop

PROBE_TIMEOUT = 0.3
LOCAL_PRESETS = ("ollama", "lmstudio", "llamacpp", "vllm")


@dataclass(frozen=True, slots=True)
class Candidate:
    name: str
    base_url: str


@dataclass(frozen=True, slots=True)
class LocalServer:
    name: str
    base_url: str
    model_id: str


def parse_candidates(entries: Sequence[str]) -> list[Candidate]:
    """`NAME=URL` or a bare `URL` (named `local`), surrounding spaces and empties ignored."""
    found = []
    for entry in (item.strip() for item in entries):
        if not entry:
            continue
        name, sep, url = entry.partition("=")
        found.append(Candidate(name.strip(), url.strip()) if sep else Candidate("local", entry))
    return found


def candidates(
    env: Mapping[str, str], configured: Sequence[str] | None, preset_urls: Mapping[str, str]
) -> list[Candidate]:
    """The env variable, else the settings, else the local presets' default URLs."""
    if env.get(DISCOVERY_ENV) is not None:
        return parse_candidates(env[DISCOVERY_ENV].split(","))
    if configured is not None:
        return parse_candidates(configured)
    return [Candidate(name, preset_urls[name]) for name in LOCAL_PRESETS if name in preset_urls]


async def discover(
    found: Sequence[Candidate], timeout: float = PROBE_TIMEOUT
) -> LocalServer | None:
    """The first candidate, in order, that lists a model; None when nobody answers."""
    if not found:
        return None
    await import_off_loop(*HTTP_STACK)
    import httpx

    async with httpx.AsyncClient(timeout=timeout, trust_env=False) as client:
        answers = await asyncio.gather(*(_first_model(client, c.base_url) for c in found))
    for candidate, model_id in zip(found, answers, strict=True):
        if model_id is not None:
            return LocalServer(candidate.name, candidate.base_url, model_id)
    return None


async def _first_model(client: Any, base_url: str) -> str | None:
    try:
        response = await client.get(base_url.rstrip("/") + "/models")
        data = response.json() if response.status_code == 200 else None
    except Exception:  # refused, timed out, not JSON: not a usable server
        return None
    models = data.get("data") if isinstance(data, dict) else None
    if isinstance(models, list):
        for entry in models:
            if isinstance(entry, dict) and isinstance(entry.get("id"), str) and entry["id"]:
                return str(entry["id"])
    return None
