"""`/rewind N conversation` through prompt-toolkit's pipe input: the move is written before
the chat moves, so a write the disk refuses leaves the conversation as it was, in the chat and
in the session alike."""

from __future__ import annotations

from pathlib import Path

from di_code.ai.types import UserMessage
from di_code.session import Session, SessionStore
from tests.support.repl import chat, until
from tests.support.session_branches import answer, prompt, setup_with


def two_prompts(tmp_path: Path) -> Session:
    session = SessionStore(tmp_path / "home").create(tmp_path)
    for number, text in ((1, "one"), (2, "two")):
        session.append_checkpoint(
            number, "before", "files", "", leaf_id=session.leaf_id, title=text
        )
        session.append_message(prompt(text))
        session.append_message(answer(f"answer {number}"))
    return session


def typed(messages: list) -> list[str]:
    return [m.content[0].text for m in messages if isinstance(m, UserMessage)]


async def test_a_rewind_the_disk_refuses_moves_neither_chat_nor_session(tmp_path: Path) -> None:
    session = two_prompts(tmp_path)
    setup = setup_with(session, tmp_path)
    leaf = session.leaf_id
    session.path.unlink()
    session.path.mkdir()  # every later append is refused: cannot open a folder to write
    async with chat(setup) as repl:
        repl.type("/rewind 2 conversation\r")
        await until(lambda: "cannot" in repl.output)
        repl.type("/exit\r")
    assert "back to before prompt 2" not in repl.output
    assert typed(setup.agent.transcript) == ["one", "two"]
    assert session.leaf_id == leaf
    assert typed(session.context()) == ["one", "two"]


async def test_a_rewind_to_the_first_prompt_is_written_and_resumed_there(tmp_path: Path) -> None:
    session = two_prompts(tmp_path)
    setup = setup_with(session, tmp_path)
    async with chat(setup) as repl:
        repl.type("/rewind 1 conversation\r")
        await until(lambda: "back to before prompt 1" in repl.output)
        repl.type("/exit\r")
    assert typed(setup.agent.transcript) == []
    assert Session.load(session.path).context() == []
