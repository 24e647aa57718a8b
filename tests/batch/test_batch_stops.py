"""Stopping a batch: a bad task file, a task's timeout, Ctrl-C, and a driver killed outright.
Each is checked on real processes: nothing a task started may be left running."""

from __future__ import annotations

import fcntl
import json
import os
import re
import signal
import subprocess
from pathlib import Path

from di_code.batch.results import STOPPED
from tests.batch.conftest import RunBatch, bash_call, make_repo, read_results, write_tasks
from tests.cli.conftest import DI_CODE, cli_env
from tests.support.batch import CHILD, start_batch
from tests.support.git import git
from tests.support.llm_server import LLMServer, Turn
from tests.support.processes import processes_running, wait_until


def test_bad_lines_are_all_reported_with_their_numbers_and_nothing_runs(
    run_batch: RunBatch, llm_server: LLMServer, tmp_path: Path
) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(
        '{"id": "ok", "repo": ".", "prompt": "hi"}\n'
        "{not json\n"
        '{"id": "no-repo", "prompt": "hi"}\n'
        "\n"
        '{"id": "ok", "repo": ".", "prompt": "again"}\n'
        '{"id": "t", "repo": ".", "prompt": "hi", "timeout": -1, "env": {"A": 1}}\n'
    )
    done = run_batch(str(tasks), "--out", "r.jsonl")
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    numbers = [re.search(r"tasks\.jsonl:(\d+): ", line) for line in lines]
    assert [found and found[1] for found in numbers] == ["2", "3", "5", "6"], done.stderr
    assert "not JSON" in lines[0] and "repo must be" in lines[1]
    assert "also on line 1" in lines[2] and "timeout must be" in lines[3]
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "r.jsonl").exists() and llm_server.requests == []


def test_a_task_timeout_kills_its_bash_and_is_recorded(
    di_code_home: Path, llm_server: LLMServer, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    marker = "sleep 86401"
    tasks = write_tasks(
        tmp_path / "t.jsonl",
        [{"id": "slow", "repo": str(repo), "prompt": "wait", "timeout": 600}],
    )
    # the task file's timeout is long; the command line's is what ends it here
    tasks.write_text(tasks.read_text().replace(', "timeout": 600', ""))
    llm_server.script(bash_call(marker))
    driver = start_batch(di_code_home, llm_server, tmp_path, str(tasks), "--out", "r.jsonl")
    wait_until(lambda: bool(processes_running(marker)), "the task's bash to start")
    driver.terminate()  # a supervisor's stop: treated as Ctrl-C
    wait_until(lambda: driver.poll() is not None, "the driver to stop")
    assert driver.returncode == 128 + signal.SIGTERM
    assert processes_running(marker) == []
    record = read_results(tmp_path / "r.jsonl")["slow"]
    assert (record["status"], record["error"]) == ("cancelled", STOPPED)

    llm_server.script(bash_call(marker))
    timed = start_batch(
        di_code_home, llm_server, tmp_path, str(tasks), "--out", "r.jsonl", "--timeout", "1"
    )
    _, err = timed.communicate(timeout=60)
    assert timed.returncode == 1, err
    assert processes_running(marker) == []
    record = read_results(tmp_path / "r.jsonl")["slow"]  # the cancelled task ran again
    assert (record["status"], record["error"]) == ("timeout", "timed out after 1 s")
    assert "di-code/batch" not in git(repo, "branch", "--list")


def test_ctrl_c_stops_every_task_and_exits_130(
    di_code_home: Path, llm_server: LLMServer, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    tasks = write_tasks(
        tmp_path / "t.jsonl",
        [{"id": f"t{n}", "repo": str(repo), "prompt": "wait"} for n in range(3)],
    )
    llm_server.script(bash_call("sleep 86402"), bash_call("sleep 86402"))
    driver = start_batch(
        di_code_home, llm_server, tmp_path, str(tasks), "--out", "r.jsonl", "--jobs", "2"
    )
    wait_until(lambda: len(processes_running("sleep 86402")) >= 2, "both tasks' bash")
    driver.send_signal(signal.SIGINT)
    driver.communicate(timeout=60)
    assert driver.returncode == 130
    assert processes_running("sleep 86402") == []
    results = read_results(tmp_path / "r.jsonl")
    assert sorted(results) == ["t0", "t1"]  # the third never started
    assert {record["status"] for record in results.values()} == {"cancelled"}


def test_a_killed_driver_loses_only_the_running_task(
    di_code_home: Path, llm_server: LLMServer, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    tasks = write_tasks(
        tmp_path / "t.jsonl",
        [{"id": name, "repo": str(repo), "prompt": "go"} for name in ("one", "two", "three")],
    )
    llm_server.script(Turn(text="one"), bash_call("sleep 86403"))
    results = tmp_path / "r.jsonl"
    driver = start_batch(
        di_code_home, llm_server, tmp_path, str(tasks), "--out", "r.jsonl", "--jobs", "1"
    )
    wait_until(lambda: bool(processes_running("sleep 86403")), "the second task's bash")
    os.kill(driver.pid, signal.SIGKILL)
    driver.communicate(timeout=60)
    wait_until(lambda: not processes_running(CHILD, tmp_path), "the task to end")
    wait_until(lambda: not processes_running("sleep 86403"), "its bash to end")
    assert [json.loads(line)["id"] for line in results.read_text().splitlines()] == ["one"]

    llm_server.script(Turn(text="two"), Turn(text="three"))
    resumed = start_batch(
        di_code_home, llm_server, tmp_path, str(tasks), "--out", "r.jsonl", "--jobs", "1"
    )
    _, err = resumed.communicate(timeout=60)
    assert resumed.returncode == 0, err
    lines = [json.loads(line) for line in results.read_text().splitlines()]
    assert [(r["id"], r["status"], r["answer"]) for r in lines] == [
        ("one", "done", "one"),
        ("two", "done", "two"),
        ("three", "done", "three"),
    ]
    assert "di-code/batch" not in git(repo, "branch", "--list")


def test_a_results_file_that_cannot_be_written_is_exit_2_before_anything_runs(
    run_batch: RunBatch, llm_server: LLMServer, tmp_path: Path
) -> None:
    tasks = write_tasks(tmp_path / "t.jsonl", [{"id": "a", "repo": ".", "prompt": "hi"}])
    (tmp_path / "file").write_text("")
    done = run_batch(str(tasks), "--out", "file/r.jsonl")
    assert done.returncode == 2
    assert done.stderr.startswith("di-code: --out file/r.jsonl: ") and done.stderr.count("\n") == 1
    assert llm_server.requests == []


def test_a_second_batch_on_the_same_results_file_is_refused(
    di_code_home: Path, llm_server: LLMServer, tmp_path: Path
) -> None:
    tasks = write_tasks(tmp_path / "t.jsonl", [{"id": "a", "repo": ".", "prompt": "hi"}])
    results = tmp_path / "r.jsonl"
    with results.open("ab") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # as the running batch holds it
        done = subprocess.run(
            [DI_CODE, "batch", str(tasks), "--out", "r.jsonl"],
            cwd=tmp_path,
            env=cli_env(di_code_home, llm_server),
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 2
    assert done.stderr.endswith("r.jsonl is being written by another batch\n")
    assert results.read_text() == "" and llm_server.requests == []


def test_no_key_here_fails_the_batch_once_and_runs_no_task(
    di_code_home: Path, llm_server: LLMServer, tmp_path: Path
) -> None:
    tasks = write_tasks(
        tmp_path / "t.jsonl", [{"id": f"t{n}", "repo": ".", "prompt": "hi"} for n in range(4)]
    )
    env = cli_env(di_code_home, llm_server)
    del env["OPENAI_API_KEY"]
    done = subprocess.run(
        [DI_CODE, "batch", str(tasks), "--out", "r.jsonl", "--jobs", "2"],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines()[-1] == "di-code: no API key for openai: set OPENAI_API_KEY"
    assert "(stopped by missing key)" in done.stderr
    statuses = {record["status"] for record in read_results(tmp_path / "r.jsonl").values()}
    assert statuses == {"cancelled"}
    assert not llm_server.requests


def test_a_fifo_a_task_made_among_the_ignore_files_never_holds_the_batch(
    run_batch: RunBatch, llm_server: LLMServer, tmp_path: Path
) -> None:
    """Issue 41: a task's `mkfifo logs/.gitignore` left the driver's `git ls-files -o
    --exclude-standard` blocked opening it, past SIGINT, and outliving a SIGKILL. The git
    call is killed at once instead, and the batch ends (the task's record says why when
    its patch could not be made)."""
    make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    tasks = write_tasks(tmp_path / "tasks.jsonl", [{"id": "t", "repo": "repo", "prompt": "p"}])
    llm_server.script(
        bash_call("mkdir logs && mkfifo logs/.gitignore && echo changed > a.txt"),
        Turn(text="piped"),
    )
    done = run_batch(str(tasks), "--out", "r.jsonl")
    assert done.returncode in (0, 1), done.stderr
    assert "Traceback" not in done.stderr
    [record] = read_results(tmp_path / "r.jsonl").values()
    assert record["status"] == "done" or "FIFO" in record["error"], record
    assert not processes_running("ls-files", under=tmp_path)
