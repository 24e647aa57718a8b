"""A 100 MB prompt's request body is encoded off the event loop (it held the loop 0.6 s, so
Ctrl-C waited), in pieces that let the loop's thread in, and sent to a real socket on
127.0.0.1 that reads it."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from di_code.ai import AbortController
from di_code.ai.json_pieces import PIECE, holds_long
from di_code.ai.providers.http import HttpClient
from di_code.ai.providers.openai import OpenAIProvider
from di_code.ai.stream import StreamOptions
from di_code.ai.types import Context, UserMessage
from tests.support.processes import until
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


async def test_a_100_mb_prompt_is_encoded_off_the_event_loop(
    sink: Sink, prompt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Structure, not a clock's verdict on a loaded machine: the real body encoding runs on a
    thread that is not the loop's, and no one call of the JSON encoder (C code that holds the
    GIL, so the loop too, throughout) is given more than a piece of the prompt."""
    threads: list[int] = []
    longest: list[int] = []
    real_encode, real_json = HttpClient._encode, json.JSONEncoder.encode

    def noted(self: HttpClient, *args: Any) -> bytes:
        threads.append(threading.get_ident())
        return real_encode(self, *args)

    def measured(self: json.JSONEncoder, value: Any) -> str:
        whole = len(value) if isinstance(value, str) else PIECE + holds_long(value)  # 1 over
        longest.append(whole)
        return real_json(self, value)

    monkeypatch.setattr(HttpClient, "_encode", noted)
    monkeypatch.setattr(json.JSONEncoder, "encode", measured)
    provider = OpenAIProvider(base_url=f"http://127.0.0.1:{sink.port}/v1", api_key="sk-test")
    controller = AbortController()
    try:
        context = Context("", [UserMessage.of(prompt)])
        stream = provider.stream(
            model_for("openai"), context, StreamOptions(signal=controller.signal)
        )
        await until(lambda: sink.received > len(prompt), "the body to arrive")
        controller.abort()
        message = await stream.result()
    finally:
        await provider.aclose()
    assert message.stop_reason == "aborted"
    assert threads and threading.get_ident() not in threads  # not the loop's thread
    assert longest and max(longest) <= PIECE
