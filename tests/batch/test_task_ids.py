"""The id rule, exactly as README states it (issue 40), at its edges: 1 to 100 letters,
digits, `.`, `_`, `-`, starting with a letter or digit, no `..`, not ending in `.` or `.lock`,
unique; and unique also ignoring case, since ids name folders (`checkouts/ID`, `logs/ID.*`)
that a case-insensitive disk would share."""

from __future__ import annotations

import json
import string
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from di_code.batch.tasks import TaskFileError, read_tasks

ALPHABET = string.ascii_letters + string.digits + "._-"


def readme_rule(task_id: str) -> bool:
    """README's sentence, written out on its own."""
    return (
        1 <= len(task_id) <= 100
        and all(c in ALPHABET for c in task_id)
        and task_id[0] in string.ascii_letters + string.digits
        and ".." not in task_id
        and not task_id.endswith((".", ".lock"))
    )


def accepted(folder: Path, *ids: str) -> bool:
    (folder / "r").mkdir(exist_ok=True)
    path = folder / "tasks.jsonl"
    lines = [json.dumps({"id": i, "repo": "r", "prompt": "p"}) for i in ids]
    path.write_text("".join(line + "\n" for line in lines))
    try:
        read_tasks(path)
    except TaskFileError:
        return False
    return True


def git_takes(task_id: str) -> bool:
    ref = f"refs/heads/di-code/batch/{task_id}"
    return subprocess.run(["git", "check-ref-format", ref], capture_output=True).returncode == 0


EDGES = [
    "a", "9", "x" * 100, "x" * 101, "fix..1", "..", "a.", "a.lock", "a.lock.b", "a.LOCK",
    ".a", "-a", "_a", "a-", "a_", "a.b", "a...b", "é", "a b", " a", "a\t", "a/b", "a@{1}",
    "lock", ".lock", "a..", "A-Z_0.9", "",
]  # fmt: skip


@pytest.mark.parametrize("task_id", EDGES)
def test_the_rule_at_its_edges_is_readmes_and_gits(tmp_path: Path, task_id: str) -> None:
    assert accepted(tmp_path, task_id) == readme_rule(task_id)
    if readme_rule(task_id):
        assert git_takes(task_id)


@settings(max_examples=200)
@given(st.text(alphabet=ALPHABET + "é /@{~^:", max_size=12))
def test_any_id_is_taken_exactly_when_readme_takes_it(task_id: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        assert accepted(Path(folder), task_id) == readme_rule(task_id)


def test_ids_that_differ_only_in_case_are_one_id(tmp_path: Path) -> None:
    (tmp_path / "r").mkdir()
    path = tmp_path / "tasks.jsonl"
    lines = [json.dumps({"id": i, "repo": "r", "prompt": "p"}) for i in ("Fix-1", "fix-1")]
    path.write_text("".join(line + "\n" for line in lines))
    with pytest.raises(TaskFileError) as raised:
        read_tasks(path)
    assert str(raised.value) == f"{path}:2: id 'fix-1' is also on line 1 (as 'Fix-1')"
