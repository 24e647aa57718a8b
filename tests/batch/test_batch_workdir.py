"""One working folder per batch: a second batch on the same `--workdir` is refused with one
line, and the first one's checkouts are left alone (issue 40)."""

from __future__ import annotations

from pathlib import Path

from tests.batch.conftest import RunBatch, bash_call, make_repo, read_results, write_tasks
from tests.support.batch import start_batch
from tests.support.llm_server import LLMServer, Turn
from tests.support.processes import wait_until

WAIT = "touch started; for i in $(seq 600); do [ -e go-on ] && break; sleep 0.1; done; echo ok"
"""The task's bash says it started, then waits for the test (at most a minute)."""


def test_a_second_batch_on_a_busy_workdir_is_refused_and_deletes_nothing(
    di_code_home: Path, run_batch: RunBatch, llm_server: LLMServer, tmp_path: Path
) -> None:
    make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    tasks = write_tasks(tmp_path / "tasks.jsonl", [{"id": "t", "repo": "repo", "prompt": "go"}])
    llm_server.script(bash_call(WAIT), Turn(text="first batch done"))
    first = start_batch(
        di_code_home, llm_server, tmp_path, str(tasks), "--out", "one.jsonl", "--workdir", "w"
    )
    checkout = tmp_path / "w" / "checkouts" / "t"
    try:
        wait_until((checkout / "started").exists, "the first batch's task to start")
        second = run_batch(str(tasks), "--out", "two.jsonl", "--workdir", "w")
        assert second.returncode == 2, second.stderr
        assert second.stderr == f"di-code: {tmp_path / 'w'} is in use by another batch\n"
        assert (checkout / "started").exists() and (checkout / "a.txt").exists()
        (checkout / "go-on").touch()
        _, stderr = first.communicate(timeout=120)
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    assert first.returncode == 0, stderr
    assert read_results(tmp_path / "one.jsonl")["t"]["answer"] == "first batch done"
    assert not (tmp_path / "two.jsonl").read_text()


def test_the_workdir_is_free_again_once_its_batch_ends(
    run_batch: RunBatch, llm_server: LLMServer, tmp_path: Path
) -> None:
    make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    tasks = write_tasks(tmp_path / "tasks.jsonl", [{"id": "t", "repo": "repo", "prompt": "go"}])
    for answer in ("one", "two"):
        llm_server.script(Turn(text=answer))
    for out in ("one.jsonl", "two.jsonl"):
        done = run_batch(str(tasks), "--out", out, "--workdir", "w")
        assert done.returncode == 0, done.stderr
    assert read_results(tmp_path / "two.jsonl")["t"]["answer"] == "two"
