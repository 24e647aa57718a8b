"""RESULTS.jsonl after a crash: a cut last line is no result, and is cut off before the next
append (the file is whole JSON lines again)."""

from __future__ import annotations

import json
from pathlib import Path

from di_code.batch.results import ResultsFile, finished_statuses


def test_a_cut_last_line_is_no_result_and_is_removed_before_appending(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    whole = json.dumps({"id": "a", "status": "done"}) + "\n"
    path.write_text(whole + '{"id": "b", "status": "do')
    assert finished_statuses(path) == {"a": "done"}
    results = ResultsFile(path)
    results.append({"id": "b", "status": "failed"})
    results.close()
    assert path.read_text() == whole + json.dumps({"id": "b", "status": "failed"}) + "\n"
    assert finished_statuses(path) == {"a": "done", "b": "failed"}


def test_a_later_line_of_an_id_wins(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    results = ResultsFile(path)
    for status in ("failed", "done"):
        results.append({"id": "a", "status": status})
    results.close()
    assert finished_statuses(path) == {"a": "done"}


def test_a_cut_first_line_leaves_an_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text('{"id": "a"')
    ResultsFile(path).close()
    assert path.read_text() == ""
