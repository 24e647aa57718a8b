"""Issue 40 item 5 in a batch: the provider key, written by a task into a file, said in its
answer and echoed by a failing request, reaches neither RESULTS.jsonl, nor the batch's logs,
nor what the driver prints."""

from __future__ import annotations

from pathlib import Path

from tests.batch.conftest import RunBatch, make_repo, write_call, write_tasks
from tests.cli.conftest import API_KEY
from tests.support.llm_server import HttpError, LLMServer, Turn


def test_a_key_a_task_writes_or_says_is_hidden_in_results_and_logs(
    run_batch: RunBatch, llm_server: LLMServer, tmp_path: Path
) -> None:
    make_repo(tmp_path / "repo", {"a.txt": "alpha\n"})
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [
            {"id": "says", "repo": "repo", "prompt": "note the key"},
            {"id": "fails", "repo": "repo", "prompt": "again"},
        ],
    )
    llm_server.script(
        write_call("KEY.md", f"key = {API_KEY}\n", "w1"),
        Turn(text=f"the key is {API_KEY}"),
        HttpError(400, f"Incorrect API key provided: {API_KEY}"),
    )
    done = run_batch(str(tasks), "--out", "results.jsonl", "--jobs", "1", "--events")
    results = (tmp_path / "results.jsonl").read_text(encoding="utf-8")
    assert "the key is ***" in results and "+key = ***" in results
    assert "Incorrect API key provided: ***" in results
    logs = [p for p in (tmp_path / "results.jsonl.work").rglob("*") if p.is_file()]
    written = [p.read_text(encoding="utf-8", errors="replace") for p in logs]
    for text in [results, done.stdout, done.stderr, *written]:
        assert API_KEY not in text


def test_a_key_a_check_prints_is_hidden_in_its_output(
    run_batch: RunBatch, llm_server: LLMServer, tmp_path: Path
) -> None:
    make_repo(tmp_path / "repo", {"a.txt": "alpha\n"})
    (tmp_path / "key.txt").write_text(API_KEY)  # not in its environment: read from a file
    check = f'echo "key: $(cat {tmp_path / "key.txt"})"; exit 1'
    task = {"id": "leaks", "repo": "repo", "prompt": "go", "check": check}
    tasks = write_tasks(tmp_path / "tasks.jsonl", [task])
    llm_server.script(Turn(text="done"))
    done = run_batch(str(tasks), "--out", "results.jsonl", "--events")
    results = (tmp_path / "results.jsonl").read_text(encoding="utf-8")
    assert '"check_output": "key: ***\\n"' in results
    logs = [p for p in (tmp_path / "results.jsonl.work").rglob("*") if p.is_file()]
    written = [p.read_text(encoding="utf-8", errors="replace") for p in logs]
    for text in [results, done.stdout, done.stderr, *written]:
        assert API_KEY not in text
