"""A fork (issue 45 item 2): a new session with an earlier session's conversation up to a
point; the original file is left byte for byte as it was."""

from __future__ import annotations

from pathlib import Path

from di_code.ai.types import AssistantMessage, TextContent, UserMessage
from di_code.session import SessionStore
from di_code.session.fork import fork


def answer(text: str) -> AssistantMessage:
    return AssistantMessage([TextContent(text)], "p", "m")


def texts(messages: list) -> list[str]:
    return [block.text for message in messages for block in message.content]


def test_a_fork_copies_the_branch_up_to_a_point_and_leaves_the_original(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "home")
    original = store.create(tmp_path)
    original.append_model_change("p", "m")
    original.append_message(UserMessage([TextContent("one")]))
    original.append_checkpoint(1, "before", "files", "ref1")
    kept = original.append_message(answer("first answer"))
    original.append_compaction("SUMMARY", kept.id, 10)
    original.append_message(UserMessage([TextContent("two")]))
    point = original.append_message(answer("second answer"))
    original.append_message(UserMessage([TextContent("three")]))
    before = original.path.read_bytes()

    forked = fork(store, original, tmp_path, point.id, "chat")

    assert forked.id != original.id and forked.path != original.path
    assert original.path.read_bytes() == before
    assert texts(forked.context()) == texts(original.context())[:-1]  # summary kept, no "three"
    reloaded = store.find(forked.id, tmp_path, write=False)
    assert texts(reloaded.context()) == texts(forked.context())
    assert reloaded.model() == ("p", "m")
    assert not any(entry.type == "checkpoint" for entry in reloaded.entries)
    forked.append_message(UserMessage([TextContent("fork goes on")]))
    assert original.path.read_bytes() == before
    assert texts(store.find(forked.id, tmp_path, write=False).context())[-1] == "fork goes on"


def test_a_fork_of_a_rewound_session_takes_the_branch_it_is_on(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "home")
    original = store.create(tmp_path)
    first = original.append_message(UserMessage([TextContent("one")]))
    original.append_message(answer("old branch"))
    original.branch_from(first.id)
    original.append_message(answer("new branch"))
    forked = fork(store, original, tmp_path, original.leaf_id)
    assert texts(forked.context()) == ["one", "new branch"]


def test_a_fork_before_the_first_prompt_is_an_empty_session_saved_at_once(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "home")
    original = store.create(tmp_path)
    original.append_message(UserMessage([TextContent("one")]))
    forked = fork(store, original, tmp_path, None)
    assert forked.context() == []
    assert store.find(forked.id, tmp_path, write=False).context() == []
