"""The user's command files in the REPL (pipe input, faux provider): expanded into a prompt,
and refused in one line when they cannot be."""

from __future__ import annotations

from pathlib import Path

import pytest

from di_code.agent import Agent
from di_code.ai.providers.faux import create_faux_provider
from di_code.setup.prepared import Prepared
from tests.support.repl import chat, text_reply, user_texts


async def test_a_command_file_becomes_the_prompt_or_a_clear_refusal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    folder = tmp_path / ".di-code/commands"
    folder.mkdir(parents=True)
    (folder / "explain.md").write_text("Explain $1 to a $2.\n")
    (folder / "empty.md").write_text("---\ndescription: nothing\n---\n")
    (folder / "alias.md").write_text("/explain $ARGUMENTS\n")
    faux = create_faux_provider([text_reply("Sure.")])
    setup = Prepared(Agent(faux.provider, faux.model), workspace=tmp_path)
    async with chat(setup) as session:
        session.type("/empty\r/alias x\r/explain recursion child\r")
        await session.answered()
        session.type("/exit\r")
    assert user_texts(faux, 0) == ["Explain recursion to a child."]
    output = session.output
    assert "✗ /empty: its command file has no text\n" in output
    assert "✗ /alias: its template starts with / (a command cannot run another)\n" in output
