"""A 100 MB prompt's request body is encoded off the event loop (it held the loop 0.6 s, so
Ctrl-C waited): asyncio's debug mode names any callback over 0.4 s while it is encoded and
sent to a real socket on 127.0.0.1 that reads it."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator

import httpx
import pytest

from di_code.ai import AbortController
from di_code.ai.providers.openai import OpenAIProvider
from di_code.ai.stream import StreamOptions
from di_code.ai.types import Context, UserMessage
from tests.support import loop_watch
from tests.support.streams import model_for


class Sink:
    """A server that reads whatever is sent and never answers."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.received = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        connection, _ = self.listener.accept()
        with connection:
            while chunk := connection.recv(1 << 20):
                self.received += len(chunk)


@pytest.fixture
def sink() -> Iterator[Sink]:
    server = Sink()
    yield server
    server.listener.close()


@pytest.fixture
def prompt() -> str:
    """Made before the test's loop runs (it is the test's own work, not di-code's)."""
    return 'a line of a "log", with é and a tab\t\n' * 2_700_000


async def test_a_100_mb_prompt_is_encoded_off_the_event_loop(sink: Sink, prompt: str) -> None:
    provider = OpenAIProvider(base_url=f"http://127.0.0.1:{sink.port}/v1", api_key="sk-test")
    async with httpx.AsyncClient():  # what a first client imports is not what is watched here
        pass
    loop = asyncio.get_running_loop()
    debug, slow = loop.get_debug(), loop.slow_callback_duration
    loop.set_debug(True)
    loop.slow_callback_duration = 0.4
    watch = loop_watch.install()
    controller = AbortController()
    try:
        context = Context("", [UserMessage.of(prompt)])
        stream = provider.stream(
            model_for("openai"), context, StreamOptions(signal=controller.signal)
        )
        for _ in range(3000):
            if sink.received > len(prompt):
                break
            await asyncio.sleep(0.01)
        assert sink.received > len(prompt), "the body never arrived"
        controller.abort()
        message = await stream.result()
    finally:
        loop.set_debug(debug)
        loop.slow_callback_duration = slow
        loop_watch.uninstall(watch)
        await provider.aclose()
    assert message.stop_reason == "aborted"
    assert watch.seen == []
