"""Session files: lazy creation, round trip, torn and corrupt lines, versions, the store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from di_code.ai.types import AssistantMessage, TextContent, ToolCall, ToolResultMessage, UserMessage
from di_code.session import FORMAT_VERSION, SessionError, SessionStore
from di_code.session import format as session_format
from scripts.synthetic_session import make_session_file


def reply(text: str) -> AssistantMessage:
    return AssistantMessage([TextContent(text)], "faux", "faux-1", timestamp=2)


def lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_file_appears_with_the_first_entry_and_round_trips(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.create(tmp_path / "work")
    assert not session.path.exists()
    call = ToolCall("c1", "read", {"path": "a.py"})
    written = [
        UserMessage.of("hello", 1),
        AssistantMessage([call], "faux", "faux-1", stop_reason="tool_use", timestamp=2),
        ToolResultMessage("c1", "read", [TextContent("x = 1")], details={"lines": 1}, timestamp=3),
        reply("done"),
    ]
    for message in written:
        session.append_message(message)
    data = lines(session.path)
    assert list(data[0]) == ["type", "version", "id", "cwd", "timestamp"]
    assert data[0]["version"] == FORMAT_VERSION and data[0]["id"] == session.id
    assert [d["type"] for d in data[1:]] == ["message"] * 4
    assert data[1]["parent_id"] is None and data[2]["parent_id"] == data[1]["id"]
    loaded = store.open(session.path, tmp_path / "work", write=False)
    assert loaded.context() == written and loaded.warnings == []


def test_torn_last_line_is_skipped_and_the_next_append_is_not_lost(tmp_path: Path) -> None:
    session = SessionStore(tmp_path).create(tmp_path)
    session.append_message(UserMessage.of("one", 1))
    session.append_message(reply("two"))
    with session.path.open("ab") as file:
        file.write(b'{"type":"message","id":"torn","parent_id":nu')
    session.release()  # its writer ends; another goes on with it
    loaded = SessionStore(tmp_path).open(session.path, tmp_path)
    assert [m.role for m in loaded.context()] == ["user", "assistant"]
    assert len(loaded.warnings) == 1 and "last line was cut off" in loaded.warnings[0]
    loaded.append_message(UserMessage.of("three", 3))
    again = SessionStore(tmp_path).open(session.path, tmp_path, write=False)
    assert [m.content[0].text for m in again.context()] == ["one", "two", "three"]  # type: ignore[union-attr]
    assert "line 4 is corrupt" in again.warnings[0]


def test_corrupt_line_in_the_middle_is_reported_by_number_and_skipped(tmp_path: Path) -> None:
    session = SessionStore(tmp_path).create(tmp_path)
    first = session.append_message(UserMessage.of("one", 1))
    session.append_message(reply("two"))
    text = session.path.read_text().splitlines()
    text[2] = "#garbage#" + text[2]
    bad_shape = {
        "type": "message",
        "id": "zz",
        "parent_id": first.id,
        "message": {"role": "x", "content": []},
    }
    text.append(json.dumps(bad_shape))
    session.path.write_text("\n".join(text) + "\n")
    loaded = SessionStore(tmp_path).open(session.path, tmp_path, write=False)
    assert any("line 3 is corrupt" in w for w in loaded.warnings)
    assert any("line 4 was skipped" in w and "unknown message role" in w for w in loaded.warnings)
    assert [m.role for m in loaded.context()] == ["user"]


def test_a_newer_format_version_is_refused_and_left_untouched(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.create(tmp_path)
    session.append_message(UserMessage.of("hi", 1))
    raw = session.path.read_text().replace(
        f'"version":{FORMAT_VERSION}', f'"version":{FORMAT_VERSION + 1}'
    )
    session.path.write_text(raw)
    session.release()
    with pytest.raises(SessionError, match=r"newer than this di-code supports.*upgrade di-code"):
        store.latest(tmp_path)
    assert session.path.read_text() == raw


def test_not_a_session_file_is_a_one_line_error(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text('{"hello": 1}\n')
    with pytest.raises(SessionError, match="not a di-code session file") as refused:
        SessionStore(tmp_path).open(path, tmp_path)
    assert len(str(refused.value).splitlines()) == 1


def test_an_older_version_is_migrated_and_rewritten_on_the_next_append(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def rename_text(header: dict, entries: list[dict]) -> tuple[dict, list[dict]]:
        for entry in entries:
            entry["message"] = entry.pop("msg")
        return header, entries

    monkeypatch.setitem(session_format.MIGRATIONS, FORMAT_VERSION - 1, rename_text)
    old_header = {"type": "session", "version": FORMAT_VERSION - 1, "id": "old1", "cwd": "/w"}
    old_entry = {
        "type": "message",
        "id": "e1",
        "parent_id": None,
        "timestamp": 1,
        "msg": {"role": "user", "timestamp": 1, "content": [{"type": "text", "text": "hi"}]},
    }
    path = tmp_path / "old.jsonl"
    path.write_text(json.dumps(old_header) + "\n" + json.dumps(old_entry) + "\n")
    session = SessionStore(tmp_path).open(path, Path("/w"))
    assert session.context() == [UserMessage.of("hi", 1)]
    session.append_message(reply("hello"))
    data = lines(path)
    assert data[0]["version"] == FORMAT_VERSION and "message" in data[1]
    assert len(SessionStore(tmp_path).open(path, Path("/w"), write=False).context()) == 2


def test_latest_find_and_list(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "home")
    work, other = tmp_path / "work", tmp_path / "other"
    assert store.latest(work) is None
    first = store.create(work)
    first.append_message(UserMessage.of("fix   the\nparser", 1))
    second = store.create(work)
    second.append_message(UserMessage.of("second", 1))
    second.append_message(reply("ok"))
    elsewhere = store.create(other)
    elsewhere.append_message(UserMessage.of("elsewhere", 1))
    latest = store.latest(work, write=False)
    assert latest is not None and latest.id == second.id
    assert store.find(first.id[:10], work, write=False).id == first.id
    with pytest.raises(SessionError, match=f"belongs to {other.resolve()}, not {work}"):
        store.find(elsewhere.id[:10], work)  # another workspace's: its folder is named
    summaries = store.list(work)
    assert [s.id for s in summaries] == [second.id, first.id]
    assert summaries[1].first_prompt == "fix the parser" and summaries[0].message_count == 2
    assert summaries[0].size == second.path.stat().st_size
    with pytest.raises(SessionError, match='No session matches "nope"'):
        store.find("nope", work)


def test_an_ambiguous_prefix_names_the_candidates(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    ids = []
    for _ in range(40):  # 40 ids over 16 first characters: some share a first character
        session = store.create(tmp_path)
        session.append_message(UserMessage.of("x", 1))
        ids.append(session.id)
    shared = next(c for c in "0123456789abcdef" if sum(i.startswith(c) for i in ids) > 1)
    with pytest.raises(SessionError, match=f'Session id "{shared}" is ambiguous: it matches'):
        store.find(shared, tmp_path)


def test_model_changes_are_recorded_and_resumed(tmp_path: Path) -> None:
    session = SessionStore(tmp_path).create(tmp_path)
    assert session.model() is None
    session.append_model_change("openai", "gpt-4o")
    session.append_message(UserMessage.of("hi", 1))
    loaded = SessionStore(tmp_path).open(session.path, tmp_path, write=False)
    assert loaded.model() == ("openai", "gpt-4o")
    assert loaded.context() == [UserMessage.of("hi", 1)]


def test_a_large_synthetic_session_lists_and_resumes(tmp_path: Path) -> None:
    path = make_session_file(tmp_path, tmp_path / "w", messages=402)
    store = SessionStore(tmp_path)
    [summary] = store.list(tmp_path / "w")
    assert summary.path == path and summary.message_count == 402
    assert summary.first_prompt.startswith("Step 0: look at src/module_0.py")
    context = store.open(path, tmp_path / "w").context()
    assert len(context) == 402 and [m.role for m in context[:5]] == [
        "user",
        "assistant",
        "tool_result",
        "assistant",
        "user",
    ]


def test_list_leaves_out_unreadable_files(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    good = store.create(tmp_path)
    good.append_message(UserMessage.of("good", 1))
    (store.directory(tmp_path) / "2000-01-01_bad.jsonl").write_text("[1]\n")
    (store.directory(tmp_path) / "2000-01-02_empty.jsonl").write_text("")
    assert [s.id for s in store.list(tmp_path)] == [good.id]
