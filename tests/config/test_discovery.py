"""Local server discovery: steerable candidates, first answering server wins, silence is None."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from di_code.config.discovery import (
    DISCOVERY_ENV,
    Candidate,
    LocalServer,
    candidates,
    discover,
    parse_candidates,
)
from tests.support.llm_server import LLMServer


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    yield port


def test_candidates_come_from_env_then_settings_then_presets() -> None:
    presets = {"ollama": "http://localhost:11434/v1", "vllm": "http://localhost:8000/v1"}
    env = {DISCOVERY_ENV: "mine=http://127.0.0.1:1/v1, http://127.0.0.1:2/v1,"}
    assert candidates(env, ["x=http://y"], presets) == [
        Candidate("mine", "http://127.0.0.1:1/v1"),
        Candidate("local", "http://127.0.0.1:2/v1"),
    ]
    assert candidates({}, ["x=http://y"], presets) == [Candidate("x", "http://y")]
    assert candidates({}, None, presets) == [
        Candidate("ollama", "http://localhost:11434/v1"),
        Candidate("vllm", "http://localhost:8000/v1"),
    ]
    assert parse_candidates(["", "  "]) == []


async def test_first_answering_server_in_order_wins(closed_port: int) -> None:
    with LLMServer() as server:
        found = await discover(
            [
                Candidate("ollama", f"http://127.0.0.1:{closed_port}/v1"),
                Candidate("llamacpp", server.openai_base_url),
            ]
        )
    assert found == LocalServer("llamacpp", server.openai_base_url, "test-model")


async def test_nobody_answering_gives_none(closed_port: int) -> None:
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen()  # accepts connections, never answers: the timeout must end the probe
    try:
        port = silent.getsockname()[1]
        assert (
            await discover(
                [
                    Candidate("a", f"http://127.0.0.1:{closed_port}/v1"),
                    Candidate("b", f"http://127.0.0.1:{port}/v1"),
                ]
            )
            is None
        )
    finally:
        silent.close()
    assert await discover([]) is None
