"""A task's `check`: a command run in its checkout once the task ended, whose exit status is
the result's `passed` (what an evaluation counts), with the end of its output."""

from __future__ import annotations

import signal
import time
from pathlib import Path

from tests.batch.conftest import RunBatch, make_repo, read_results, write_call, write_tasks
from tests.support.batch import start_batch
from tests.support.llm_server import LLMServer, Turn
from tests.support.processes import processes_running, wait_until

CHECK = 'test "$(cat answer.txt)" = 42 && echo checked > check.log || { echo wrong; exit 1; }'


def test_a_check_decides_passed_and_leaves_the_patch_alone(
    run_batch: RunBatch, llm_server: LLMServer, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo", {"answer.txt": "41\n"})
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [
            {"id": "solved", "repo": str(repo), "prompt": "fix it", "check": CHECK},
            {"id": "unsolved", "repo": str(repo), "prompt": "fix it", "check": CHECK},
            {"id": "unchecked", "repo": str(repo), "prompt": "look"},
        ],
    )
    llm_server.script(write_call("answer.txt", "42\n", "w1"), Turn(text="fixed"))
    llm_server.script(Turn(text="I could not"))
    llm_server.script(Turn(text="looked"))
    done = run_batch(str(tasks), "--out", "results.jsonl", "--jobs", "1")
    assert done.returncode == 0, done.stderr
    results = read_results(tmp_path / "results.jsonl")
    solved, unsolved = results["solved"], results["unsolved"]
    assert (solved["status"], solved["passed"]) == ("done", True)
    assert "check.log" not in solved["patch"] and "+42" in solved["patch"]
    assert (unsolved["status"], unsolved["passed"]) == ("done", False)
    assert unsolved["check_output"] == "wrong\n"
    assert "passed" not in results["unchecked"]
    assert "solved done in" in done.stderr and ", check passed" in done.stderr
    assert "unsolved done in" in done.stderr and ", check failed" in done.stderr
    assert done.stderr.endswith("di-code batch: 3 done; checks: 1 of 2 passed\n")


def test_a_check_that_does_not_end_fails_at_the_task_s_timeout(
    run_batch: RunBatch, llm_server: LLMServer, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    check = "echo started; sleep 120"
    task = {"id": "slow", "repo": str(repo), "prompt": "go", "check": check, "timeout": 10}
    tasks = write_tasks(tmp_path / "tasks.jsonl", [task])
    llm_server.script(Turn(text="done"))
    began = time.monotonic()
    done = run_batch(str(tasks), "--out", "results.jsonl")
    record = read_results(tmp_path / "results.jsonl")["slow"]
    assert (record["status"], record["passed"]) == ("done", False)
    assert record["check_output"] == "started\n[the check did not end within 10 s]"
    assert time.monotonic() - began < 60  # not the check's 120 s
    assert done.returncode == 0, done.stderr


def test_a_bad_check_is_refused_with_the_task_file(run_batch: RunBatch, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [
            {"id": "a", "repo": str(repo), "prompt": "go", "check": ""},
            {"id": "b", "repo": str(repo), "prompt": "go", "check": ["make", "test"]},
            {"id": "c", "repo": str(repo), "prompt": "go", "check": "x" * 40_000},
        ],
    )
    done = run_batch(str(tasks), "--out", "results.jsonl")
    assert done.returncode == 2
    assert f"{tasks}:1: check must be a non-empty string" in done.stderr
    assert f"{tasks}:2: check must be a non-empty string" in done.stderr
    assert f"{tasks}:3: check is 40000 characters long (at most 32768)" in done.stderr


def test_ctrl_c_during_a_check_ends_it_and_the_task_runs_again(
    di_code_home: Path, llm_server: LLMServer, tmp_path: Path
) -> None:
    marker = "sleep 86404.1"
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    task = {"id": "t0", "repo": str(repo), "prompt": "go", "check": f"{marker} & wait"}
    tasks = write_tasks(tmp_path / "t.jsonl", [task])
    llm_server.script(Turn(text="done"))
    driver = start_batch(di_code_home, llm_server, tmp_path, str(tasks), "--out", "r.jsonl")
    wait_until(lambda: bool(processes_running(marker, tmp_path)), "the check to start")
    driver.send_signal(signal.SIGINT)
    _, err = driver.communicate(timeout=60)
    assert driver.returncode == 130, err
    wait_until(lambda: not processes_running(marker, tmp_path), "the check's processes to end")
    record = read_results(tmp_path / "r.jsonl")["t0"]
    assert (record["status"], record["passed"]) == ("cancelled", None)
