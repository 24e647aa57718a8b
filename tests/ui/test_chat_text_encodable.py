"""The chat's typed prompt is a way in for text: bytes a terminal sends that are not UTF-8
(prompt-toolkit reads them as lone surrogates) reach the model, the session and the history
as U+FFFD, and the next prompt works."""

from __future__ import annotations

from pathlib import Path

from di_code.agent import Agent
from di_code.ai.providers.faux import create_faux_provider
from di_code.session import SessionStore
from di_code.setup.prepared import Prepared
from tests.support.repl import chat, text_reply, user_texts


async def test_a_typed_prompt_that_is_not_utf8_is_replaced(tmp_path: Path) -> None:
    faux = create_faux_provider([text_reply("one"), text_reply("two")])
    store = SessionStore(tmp_path)
    session = store.create(tmp_path)
    setup = Prepared(Agent(faux.provider, faux.model), session=session, store=store)
    setup.attach_session(setup.agent, session)
    async with chat(setup, history=tmp_path / "history") as typed:
        typed.input.send_bytes(b"caf\xe9 here\r")
        await typed.answered()
        typed.type("next\r")
        await typed.answered()
        typed.type("/exit\r")
    assert user_texts(faux, 0) == ["caf\ufffd here"]
    assert user_texts(faux, 1)[-1] == "next"
    assert session.write_error is None
    assert "caf\ufffd here" in session.path.read_text(encoding="utf-8")
    assert "next" in (tmp_path / "history").read_text(encoding="utf-8", errors="strict")
