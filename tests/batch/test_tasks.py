"""The task file's checks: what each field accepts, and every bad line named at once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from di_code.batch.tasks import TaskFileError, read_tasks


def tasks_file(tmp_path: Path, *lines: object) -> Path:
    path = tmp_path / "tasks.jsonl"
    path.write_text(
        "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)
    )
    return path


def test_every_field_is_read_and_paths_are_from_the_file_folder(tmp_path: Path) -> None:
    (tmp_path / "prompts").mkdir()
    (tmp_path / "sub" / "repo").mkdir(parents=True)
    (tmp_path / "prompts" / "p.md").write_text("migrate it\n")
    [task] = read_tasks(
        tasks_file(
            tmp_path,
            {
                "id": "a.b-1",
                "repo": "sub/repo",
                "ref": "v1",
                "prompt_file": "prompts/p.md",
                "model": "openai/x",
                "max_turns": 3,
                "timeout": 2.5,
                "permission_mode": "read-only",
                "tools": "read",
                "env": {"K": "v"},
            },
        )
    )
    assert task.prompt == "migrate it\n" and task.repo == str(tmp_path / "sub" / "repo")
    assert (task.ref, task.model, task.max_turns, task.timeout) == ("v1", "openai/x", 3, 2.5)
    assert (task.permission_mode, task.tools, dict(task.env), task.line) == (
        "read-only",
        "read",
        {"K": "v"},
        1,
    )


def test_a_url_is_kept_as_it_is(tmp_path: Path) -> None:
    [task] = read_tasks(
        tasks_file(tmp_path, {"id": "u", "repo": "git@host:o/r.git", "prompt": "p"})
    )
    assert task.repo == "git@host:o/r.git"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ({"id": "x", "repo": "r", "prompt": "p", "colour": 1}, "unknown field 'colour'"),
        ({"id": "../x", "repo": "r", "prompt": "p"}, "id must be"),
        ({"id": "x", "repo": "r", "prompt": "p", "prompt_file": "f"}, "exactly one of"),
        ({"id": "x", "repo": "r"}, "exactly one of"),
        ({"id": "x", "repo": "r", "prompt_file": "missing.md"}, "prompt_file 'missing.md'"),
        ({"id": "x", "repo": "r", "prompt": "p", "max_turns": 1.5}, "max_turns must be"),
        ({"id": "x", "repo": "r", "prompt": "p", "max_turns": True}, "max_turns must be"),
        ({"id": "x", "repo": "r", "prompt": "p", "permission_mode": "yolo"}, "permission_mode"),
        ({"id": "x", "repo": "r", "prompt": "p", "env": {"A=B": "c"}}, "env must be"),
        (["not", "an", "object"], "a task is a JSON object"),
        ({"id": "x", "repo": "nowhere", "prompt": "p"}, "repo 'nowhere' is neither a folder"),
    ],
)
def test_a_bad_line_is_named(tmp_path: Path, line: object, message: str) -> None:
    (tmp_path / "r").mkdir()
    good = {"id": "fine", "repo": "r", "prompt": "p"}
    with pytest.raises(TaskFileError) as raised:
        read_tasks(tasks_file(tmp_path, good, line))
    assert str(raised.value).startswith(f"{tmp_path / 'tasks.jsonl'}:2: ")
    assert message in str(raised.value)


def test_an_empty_file_has_no_tasks(tmp_path: Path) -> None:
    with pytest.raises(TaskFileError, match="no tasks"):
        read_tasks(tasks_file(tmp_path, "", "  "))
