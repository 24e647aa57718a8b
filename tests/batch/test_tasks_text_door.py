"""The task file is a door for text: a lone surrogate (`\\ud800`) in a task is made U+FFFD as
the line is read (it used to pass the check, then end the task in "internal error:
UnicodeEncodeError"), and a line nested too deep is named, not a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from di_code.batch.tasks import TaskFileError, read_tasks


def test_a_lone_surrogate_becomes_a_replacement_character(tmp_path: Path) -> None:
    path = tmp_path / "tasks.jsonl"
    line = '{"id": "t1", "repo": ".", "prompt": "fix \\ud800 this \\ud83d\\ude00"}\n'
    path.write_text(line)
    [task] = read_tasks(path)
    assert task.prompt == "fix \ufffd this \U0001f600"
    task.prompt.encode("utf-8")


def test_a_line_nested_too_deep_is_named(tmp_path: Path) -> None:
    path = tmp_path / "tasks.jsonl"
    path.write_text('{"id": "t1", "repo": ".", "prompt": "ok"}\n' + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(TaskFileError) as refused:
        read_tasks(path)
    assert str(refused.value).startswith(f"{path}:2: ")
