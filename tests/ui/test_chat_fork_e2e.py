"""`/fork [N]` in `di-code chat`, in a real pseudo-terminal (issue 45 item 2): the chat goes
on in a new session from before prompt N; the original session file is left as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.chat import DI_CODE, chatting, say
from tests.support.llm_server import LLMServer, Turn
from tests.support.processes import wait_until

pytestmark = pytest.mark.skipif(not DI_CODE.exists(), reason="di-code is not installed")


def test_fork_before_a_prompt_goes_on_in_a_new_session(
    llm_server: LLMServer, tmp_path: Path, di_code_home: Path
) -> None:
    llm_server.script(Turn(text="First."), Turn(text="Second."), Turn(text="Third."))
    with chatting(llm_server, tmp_path, "--yes") as child:
        say(child, "PROMPT-ONE", "First.")
        say(child, "PROMPT-TWO", "Second.")
        [original] = di_code_home.glob("sessions/*/*.jsonl")
        wait_until(lambda: answered(original, 2), "prompt 2's checkpoint after the answer")
        before = original.read_bytes()
        say(child, "/fork 2", "Forked before prompt 2: new session")
        say(child, "PROMPT-THREE", "Third.")
        say(child, "/fork x", "Usage: /fork")
    last = json.dumps(llm_server.requests[-1].body)
    assert "PROMPT-ONE" in last and "PROMPT-THREE" in last and "PROMPT-TWO" not in last
    assert original.read_bytes() == before
    [forked] = [p for p in di_code_home.glob("sessions/*/*.jsonl") if p != original]
    assert b"PROMPT-THREE" in forked.read_bytes() and b"PROMPT-TWO" not in forked.read_bytes()


def answered(session: Path, prompt: int) -> bool:
    """The session's last entry is prompt N's checkpoint after the answer (written once the
    answer is on screen: the file is whole only then)."""
    last = json.loads(session.read_bytes().splitlines()[-1])
    return last["type"] == "checkpoint" and last["prompt"] == prompt and last["phase"] == "after"
