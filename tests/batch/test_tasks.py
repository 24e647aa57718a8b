"""The task file's checks: what each field accepts, and every bad line named at once."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from di_code.batch.tasks import TaskFileError, read_tasks
from tests.batch.conftest import RunBatch


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
        ('{"id": "x", "repo": "r", "prompt": "p", "timeout": NaN}', "timeout must be"),
        ('{"id": "x", "repo": "r", "prompt": "p", "timeout": Infinity}', "timeout must be"),
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


def raw_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "tasks.jsonl"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85"])
def test_a_line_ends_only_at_a_newline(tmp_path: Path, separator: str) -> None:
    """U+2028 and the other separators str.splitlines knows may stand inside a JSON string."""
    (tmp_path / "r").mkdir()
    prompt = f"first{separator}second"
    line = json.dumps({"id": "x", "repo": "r", "prompt": prompt}, ensure_ascii=False)
    [task] = read_tasks(raw_file(tmp_path, line + "\r\n"))
    assert task.prompt == prompt


def test_a_line_of_only_a_separator_is_not_blank(tmp_path: Path) -> None:
    (tmp_path / "r").mkdir()
    good = json.dumps({"id": "x", "repo": "r", "prompt": "p"})
    with pytest.raises(TaskFileError, match=r"tasks.jsonl:2: not JSON"):
        read_tasks(raw_file(tmp_path, f"{good}\n\u2028\n"))


REF_CASES = ["fix-1", "a.b_c", "fix..1", "fix.", "fix.lock", "a.lock.b", "x" * 100, "9"]


def git_accepts(component: str) -> bool:
    checked = subprocess.run(
        ["git", "check-ref-format", f"refs/heads/di-code/batch/{component}"],
        capture_output=True,
    )
    return checked.returncode == 0


@pytest.mark.parametrize("task_id", REF_CASES)
def test_an_id_is_taken_exactly_when_git_takes_it_as_a_branch_name(
    tmp_path: Path, task_id: str
) -> None:
    (tmp_path / "r").mkdir()
    path = tasks_file(tmp_path, {"id": task_id, "repo": "r", "prompt": "p"})
    if git_accepts(task_id):
        assert read_tasks(path)[0].id == task_id
    else:
        with pytest.raises(TaskFileError, match=r"tasks.jsonl:1: id must be"):
            read_tasks(path)


def test_git_refuses_some_of_the_cases() -> None:
    assert [case for case in REF_CASES if not git_accepts(case)] == ["fix..1", "fix.", "fix.lock"]


def test_ref_component_rules_beyond_the_id_alphabet() -> None:
    from di_code.batch.tasks import ref_component_problem

    for component in ("", ".x", "a..b", "a.", "a.lock", "a b", "a~b", "a^b", "a:b", "a?b",
                      "a*b", "a[b", "a\\b", "a@{b", "a\x7fb", "a\x01b"):  # fmt: skip
        assert ref_component_problem(component) is not None, component
        assert not git_accepts(component), component
    assert ref_component_problem("a/b") == "contains '/'"  # two components
    for component in ("a@b", "@", "@@", "é", "a-b.c_d"):
        assert ref_component_problem(component) is None, component
        assert git_accepts(component), component


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("repo", "r" * 5000, "repo is 5000 characters long (at most 4096)"),
        ("ref", "v" * 300, "ref is 300 characters long (at most 256)"),
        ("model", "m" * 300, "model is 300 characters long (at most 256)"),
        ("tools", "t" * 5000, "tools is 5000 characters long (at most 4096)"),
        ("prompt_file", "p" * 5000, "prompt_file is 5000 characters long (at most 4096)"),
        ("prompt", "p" * 2_000_001, "prompt is 2000001 characters long (at most 2000000)"),
    ],
)
def test_a_too_long_value_is_named_with_its_line(
    tmp_path: Path, field: str, value: str, message: str
) -> None:
    (tmp_path / "r").mkdir()
    line = {"id": "x", "repo": "r", field: value}
    if field not in ("prompt", "prompt_file"):
        line["prompt"] = "p"
    with pytest.raises(TaskFileError) as raised:
        read_tasks(tasks_file(tmp_path, {"id": "fine", "repo": "r", "prompt": "p"}, line))
    assert str(raised.value) == f"{tmp_path / 'tasks.jsonl'}:2: {message}"


def test_a_too_long_prompt_file_is_named(tmp_path: Path) -> None:
    (tmp_path / "r").mkdir()
    (tmp_path / "big.md").write_text("p" * 2_000_001)
    with pytest.raises(TaskFileError, match=r":1: prompt_file 'big.md' is 2000001 characters"):
        read_tasks(tasks_file(tmp_path, {"id": "x", "repo": "r", "prompt_file": "big.md"}))


def test_a_huge_prompt_file_is_read_only_to_its_bound(tmp_path: Path) -> None:
    (tmp_path / "r").mkdir()
    with (tmp_path / "huge.md").open("wb") as huge:
        huge.truncate(1 << 40)  # a 1 TiB hole: read whole, it would never end
    with pytest.raises(TaskFileError, match=r":1: prompt_file 'huge.md' is over 2000000 char"):
        read_tasks(tasks_file(tmp_path, {"id": "x", "repo": "r", "prompt_file": "huge.md"}))


def test_a_path_the_system_cannot_take_is_named_with_its_line(tmp_path: Path) -> None:
    too_long_a_name = "n" * 300  # under the bound, but over the file system's 255 per name
    with pytest.raises(TaskFileError) as raised:
        read_tasks(tasks_file(tmp_path, {"id": "x", "repo": too_long_a_name, "prompt": "p"}))
    message = str(raised.value)
    assert message.startswith(f"{tmp_path / 'tasks.jsonl'}:1: repo 'nnn")
    assert message.endswith("…': File name too long") and len(message) < 200 + len(str(tmp_path))


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ({"id": "x\0", "repo": "r", "prompt": "p"}, "id contains a NUL character"),
        ({"id": "x", "repo": "r\0", "prompt": "p"}, "repo contains a NUL character"),
        ({"id": "x", "repo": "r", "prompt": "p\0"}, "prompt contains a NUL character"),
        ({"id": "x", "repo": "r", "prompt": "p", "ref": "\0"}, "ref contains a NUL character"),
        ({"id": "x", "repo": "r", "prompt": "p", "env": {"K\0": "v"}}, "env name"),
        ({"id": "x", "repo": "r", "prompt": "p", "env": {"K": "v\0"}}, "env 'K' contains a NUL"),
        ({"id": "x", "repo": "r", "prompt_file": "nul.md"}, "prompt_file 'nul.md' contains a NUL"),
    ],
)
def test_a_nul_is_refused_anywhere(tmp_path: Path, line: object, message: str) -> None:
    (tmp_path / "r").mkdir()
    (tmp_path / "nul.md").write_text("before\0after")
    with pytest.raises(TaskFileError) as raised:
        read_tasks(tasks_file(tmp_path, line))
    assert str(raised.value).startswith(f"{tmp_path / 'tasks.jsonl'}:1: ")
    assert message in str(raised.value)


@pytest.mark.parametrize(
    ("field", "value"),
    [("env", {"V" * 300: "v"}), ("env", {"V": "v" * 40_000})],
)
def test_env_names_and_values_are_bounded(tmp_path: Path, field: str, value: object) -> None:
    (tmp_path / "r").mkdir()
    with pytest.raises(TaskFileError) as raised:
        read_tasks(tasks_file(tmp_path, {"id": "x", "repo": "r", "prompt": "p", field: value}))
    assert ":1: env" in str(raised.value) and len(str(raised.value)) < 300 + len(str(tmp_path))


def test_echoes_of_bad_values_are_shortened(tmp_path: Path) -> None:
    (tmp_path / "r").mkdir()
    huge = "f" * 1_000_000
    lines = [
        {"id": "a", "repo": "r", "prompt": "p", huge: 1},
        {"id": "b", "repo": "n" * 4000, "prompt": "p"},
        {"id": "c", "repo": "r", "prompt_file": "m" * 4000},
    ]
    with pytest.raises(TaskFileError) as raised:
        read_tasks(tasks_file(tmp_path, *lines))
    reported = str(raised.value).splitlines()
    assert len(reported) == 3
    assert all(len(line) < 200 + len(str(tmp_path)) for line in reported), reported
    assert "unknown field 'ffff" in reported[0] and "…'" in reported[0]


def test_a_home_folder_of_nobody_is_named_with_its_line(tmp_path: Path) -> None:
    with pytest.raises(TaskFileError, match=r":1: repo '~no-such-user-here/r': "):
        read_tasks(tasks_file(tmp_path, {"id": "x", "repo": "~no-such-user-here/r", "prompt": "p"}))


def test_a_prompt_file_that_is_a_fifo_is_refused_without_waiting(tmp_path: Path) -> None:
    (tmp_path / "r").mkdir()
    os.mkfifo(tmp_path / "fifo.md")
    with pytest.raises(TaskFileError, match=r":1: prompt_file 'fifo.md': not a regular file"):
        read_tasks(tasks_file(tmp_path, {"id": "x", "repo": "r", "prompt_file": "fifo.md"}))


def test_the_command_says_a_too_long_repo_with_its_line_and_exit_2(
    run_batch: RunBatch, tmp_path: Path
) -> None:
    tasks = tasks_file(tmp_path, {"id": "x", "repo": "r" * 5000, "prompt": "p"})
    done = run_batch(str(tasks), "--out", "r.jsonl")
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().endswith(
        "tasks.jsonl:1: repo is 5000 characters long (at most 4096)"
    )
    assert "internal error" not in done.stderr
