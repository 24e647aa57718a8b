"""`@path` images in the chat REPL: attached to the prompt, or refused before any request."""

from __future__ import annotations

import base64
from pathlib import Path

import msgspec.structs

from di_code.agent import Agent
from di_code.ai.providers.faux import create_faux_provider
from di_code.ai.types import ImageContent, TextContent, UserMessage
from di_code.setup.prepared import Prepared
from tests.support.repl import chat, text_reply, until, user_texts

PNG = b"\x89PNG\r\n\x1a\n" + b"\x03" * 16


async def test_an_at_path_image_is_attached_to_the_prompt(tmp_path: Path) -> None:
    (tmp_path / "shot.png").write_bytes(PNG)
    faux = create_faux_provider([text_reply("A red square.")])
    model = msgspec.structs.replace(faux.model, input=frozenset({"text", "image"}))
    setup = Prepared(Agent(faux.provider, model), workspace=tmp_path)
    async with chat(setup) as session:
        session.type("what is @shot.png\r")
        await session.answered()
        session.type("/exit\r")
    sent = faux.requests[0].messages[-1]
    assert isinstance(sent, UserMessage)
    assert sent.content == [
        TextContent("what is @shot.png"),
        ImageContent(base64.b64encode(PNG).decode(), "image/png"),
    ]
    assert "› what is @shot.png[image]" in session.output


async def test_a_text_only_model_says_so_and_sends_nothing(tmp_path: Path) -> None:
    (tmp_path / "shot.png").write_bytes(PNG)
    faux = create_faux_provider([text_reply("never")])
    setup = Prepared(Agent(faux.provider, faux.model), workspace=tmp_path)
    async with chat(setup) as session:
        session.type("what is @shot.png\r")
        await until(lambda: "does not accept images" in session.output)
        session.type("/exit\r")
    assert "✗ faux/faux-1 does not accept images (1 attached)" in session.output
    assert faux.requests == []


async def test_a_refused_prompt_is_shown_and_keeps_the_shell_output_for_the_next(
    tmp_path: Path,
) -> None:
    (tmp_path / "shot.png").write_bytes(PNG)
    faux = create_faux_provider([text_reply("I see it")])
    setup = Prepared(Agent(faux.provider, faux.model), workspace=tmp_path)
    async with chat(setup) as session:
        session.type("!echo local-42\r")
        await until(lambda: "╰" in session.output and not session.repl.busy)
        session.type("what is @shot.png\r")
        await until(lambda: "does not accept images" in session.output)
        session.type("what did it print?\r")
        await session.answered()
        session.type("/exit\r")
    refused = session.output.split("does not accept images")[0]
    assert "› what is @shot.png\n" in refused
    sent = user_texts(faux, 0)[0]
    assert "local-42" in sent and sent.endswith("what did it print?")
