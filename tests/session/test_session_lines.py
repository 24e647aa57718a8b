"""`/resume`'s lines: each session's first prompt, time and size, read no further than the
first prompt; broken and hostile files are listed as unreadable or left out, never an error
or a wait, and a folder of a thousand sessions is listed without reading them whole."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from di_code.ai.types import AssistantMessage, TextContent, UserMessage
from di_code.session import SessionStore
from di_code.session.session_lines import HEAD_BYTES, PROMPT_CHARS, session_lines

TIMEOUT = 30.0
"""A liveness bound on a loaded machine: a FIFO read would wait forever."""


def saved(store: SessionStore, workspace: Path, *prompts: str) -> Path:
    session = store.create(workspace, "chat")
    session.append_model_change("openai", "test-model")
    for prompt in prompts:
        session.append_message(UserMessage([TextContent(prompt)]))
        session.append_message(AssistantMessage([TextContent("ok")], "openai", "test-model"))
    session.release()
    return session.path


def planted(store: SessionStore, workspace: Path, name: str, data: bytes) -> Path:
    folder = store.directory(workspace)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"2020-01-01T00-00-00-000000Z_{name}.jsonl"
    path.write_bytes(data)
    return path


def header(workspace: Path) -> bytes:
    data = {"type": "session", "version": 1, "id": "x", "cwd": str(workspace), "timestamp": 1}
    return json.dumps(data).encode() + b"\n"


def by_id(store: SessionStore, workspace: Path) -> dict[str, str | None]:
    return {line.id: line.first_prompt for line in session_lines(store, workspace)}


def test_each_line_is_the_first_prompt_with_time_and_size_newest_first(
    tmp_path: Path, di_code_home: Path
) -> None:
    store = SessionStore(di_code_home)
    older = saved(store, tmp_path, "fix the\nparser", "then the tests")
    newer = saved(store, tmp_path)
    os.utime(older, (time.time() - 60, time.time() - 60))
    lines = session_lines(store, tmp_path)
    assert [line.path for line in lines] == [newer, older]
    assert lines[0].first_prompt == ""  # no prompt yet
    assert lines[1].first_prompt == "fix the parser"
    assert lines[1].size == older.stat().st_size
    assert lines[1].modified == pytest.approx(older.stat().st_mtime)


def test_broken_and_hostile_files_are_unreadable_or_left_out(
    tmp_path: Path, di_code_home: Path
) -> None:
    store = SessionStore(di_code_home)
    good = saved(store, tmp_path, "the good one")
    head = header(tmp_path)
    planted(store, tmp_path, "empty", b"")
    planted(store, tmp_path, "garbage", b"\xff\xfe\x00binary\n")
    planted(store, tmp_path, "alist", b"[1, 2]\n")
    planted(store, tmp_path, "deep", b"[" * 200_000 + b"\n")
    nested = b'{"type":"message","role":"user"' + b"[" * 200_000
    planted(store, tmp_path, "deepprompt", head + nested)
    planted(store, tmp_path, "noline", head + b"x" * (4 * HEAD_BYTES))  # one endless line
    typed = {"role": "user", "content": [{"type": "text", "text": "\x1b[2Jhi\r\nthere"}]}
    entry = {"type": "message", "id": "a", "parent_id": None, "timestamp": 1, "message": typed}
    planted(store, tmp_path, "escapes", head + json.dumps(entry, separators=(",", ":")).encode())
    huge = {**typed, "content": [{"type": "text", "text": "paste " + "y" * (2 * HEAD_BYTES)}]}
    cut = {**entry, "message": huge}
    planted(store, tmp_path, "hugeprompt", head + json.dumps(cut, separators=(",", ":")).encode())
    fifo = store.directory(tmp_path) / "2020-01-01T00-00-00-000000Z_fifo.jsonl"
    os.mkfifo(fifo)
    (store.directory(tmp_path) / "2020-01-01T00-00-00-000000Z_folder.jsonl").mkdir()
    (store.directory(tmp_path) / "2020-01-01T00-00-00-000000Z_zero.jsonl").symlink_to("/dev/zero")
    (store.directory(tmp_path) / "2020-01-01T00-00-00-000000Z_gone.jsonl").symlink_to("/nowhere")

    started = time.monotonic()
    found = by_id(store, tmp_path)
    assert time.monotonic() - started < TIMEOUT
    assert found[good.stem.partition("_")[2]] == "the good one"
    for broken in ("empty", "garbage", "alist", "deep"):
        assert found[broken] is None, broken
    assert found["deepprompt"] == ""
    assert found["noline"] == ""
    assert found["escapes"] == "\x1b[2Jhi there"  # one line; the list shows it visible
    assert found["hugeprompt"] == "paste " + "y" * (PROMPT_CHARS - len("paste "))
    assert not {"fifo", "folder", "zero", "gone"} & found.keys()


def test_a_thousand_sessions_are_listed_reading_only_their_heads(
    tmp_path: Path, di_code_home: Path
) -> None:
    store = SessionStore(di_code_home)
    for number in range(1000):  # 100 MB each, sparse: reading them whole would take minutes
        path = planted(store, tmp_path, f"s{number:04d}", header(tmp_path))
        os.truncate(path, 100 << 20)
    started = time.monotonic()
    lines = session_lines(store, tmp_path)
    assert time.monotonic() - started < TIMEOUT
    assert len(lines) == 1000
    assert {line.first_prompt for line in lines} == {""}
