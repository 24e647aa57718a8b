"""The prompt's snapshot starts once the model's answer does, never before the request."""

from __future__ import annotations

import subprocess
from pathlib import Path

from di_code.agent.events import AgentEndEvent, AgentStartEvent, MessageUpdateEvent
from di_code.ai.events import StartEvent
from di_code.session import SessionStore
from di_code.session.checkpoint_list import prompt_checkpoints
from di_code.session.checkpoints import Checkpointer


def git_repo(folder: Path) -> Path:
    folder.mkdir()
    (folder / "a.txt").write_text("a\n")
    for args in (["init", "-q"], ["add", "-A"]):
        subprocess.run(["git", *args], cwd=folder, check=True, timeout=30)
    return folder


async def test_the_snapshot_waits_for_the_answer_and_is_taken_once(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    session = SessionStore(tmp_path / "home").create(repo)
    checkpoints = Checkpointer(session, lambda raw: repo / raw)
    await checkpoints.on_event(AgentStartEvent())
    assert checkpoints._snapshot is None  # nothing competes with sending the request
    update = MessageUpdateEvent(StartEvent())
    await checkpoints.on_event(update)
    started = checkpoints._snapshot
    assert started is not None
    await checkpoints.on_event(update)
    assert checkpoints._snapshot is started
    await checkpoints.on_event(AgentEndEvent([]))
    assert [c.kind for c in prompt_checkpoints(session)] == ["git"]


async def test_a_prompt_that_got_no_answer_is_still_checkpointed(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    session = SessionStore(tmp_path / "home").create(repo)
    checkpoints = Checkpointer(session, lambda raw: repo / raw)
    await checkpoints.on_event(AgentStartEvent())
    await checkpoints.on_event(AgentEndEvent([]))
    assert [c.kind for c in prompt_checkpoints(session)] == ["git"]
