"""The task file is a way in for text: a lone surrogate (`\\ud800`) in a task is refused with its
line (it used to pass the check, then end the task in "internal error: UnicodeEncodeError"),
and a line nested too deep is named, not a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from di_code.batch.tasks import TaskFileError, read_tasks


def test_a_lone_surrogate_is_refused_with_its_line_and_a_pair_is_its_character(
    tmp_path: Path,
) -> None:
    path = tmp_path / "tasks.jsonl"
    pair = '{"id": "t1", "repo": ".", "prompt": "fix this \\ud83d\\ude00"}\n'
    path.write_text(pair)
    [task] = read_tasks(path)
    assert task.prompt == "fix this \U0001f600"
    path.write_text(pair + '{"id": "t2", "repo": ".", "prompt": "fix \\ud800 this"}\n')
    with pytest.raises(TaskFileError) as refused:
        read_tasks(path)
    assert str(refused.value).startswith(f"{path}:2: ")
    assert "surrogate" in str(refused.value)


def test_a_line_nested_too_deep_is_named(tmp_path: Path) -> None:
    path = tmp_path / "tasks.jsonl"
    path.write_text('{"id": "t1", "repo": ".", "prompt": "ok"}\n' + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(TaskFileError) as refused:
        read_tasks(path)
    assert str(refused.value).startswith(f"{path}:2: ")
