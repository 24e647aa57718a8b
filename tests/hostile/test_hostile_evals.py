"""A batch task's `check` and the evaluation harness (issue 49), attacked as a hostile check,
model or user would: a check that never ends and hides its children from the stop, one that
outlives a killed driver, prints without end or prints bytes no terminal should get, prints the
key across the cut its result keeps, rewrites the checkout's history; and the harness stopped
with Ctrl-C or given a folder whose name holds a newline. Real `di-code batch` and
`python -m scripts.evals` processes against a loopback model."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.batch.conftest import RunBatch, make_repo, read_results, write_call, write_tasks
from tests.batch.conftest import run_batch as run_batch  # the fixture, for this folder too
from tests.cli.conftest import API_KEY, cli_env
from tests.support.batch import start_batch
from tests.support.llm_server import LLMServer, Turn
from tests.support.processes import processes_running, wait_until

ROOT = Path(__file__).resolve().parents[2]


@contextlib.contextmanager
def leftovers_ended(marker: str) -> Iterator[None]:
    """After it: what a failing case left running is killed (this test's own processes, those
    whose command line carries `marker`, by their ids)."""
    try:
        yield
    finally:
        for pid in processes_running(marker):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def then_probed(
    run_batch: RunBatch, llm_server: LLMServer, tmp_path: Path, first: dict[str, Any], number: int
) -> tuple[subprocess.CompletedProcess[str], dict[str, dict[str, Any]]]:
    """A batch of two tasks, one after the other: `first`, then "after", whose check passes
    only if no `sleep NUMBER.1` runs any more. The batch's end and its results by task."""
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    probe = f'm={number}; ! pgrep -f "sleep $m.1"'  # its own command line does not match
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [
            {"repo": str(repo), "prompt": "go", **first},
            {"id": "after", "repo": str(repo), "prompt": "go", "check": probe},
        ],
    )
    llm_server.script(Turn(text="done"))
    llm_server.script(Turn(text="done"))
    done = run_batch(str(tasks), "--out", "results.jsonl", "--jobs", "1", timeout=120)
    return done, read_results(tmp_path / "results.jsonl")


def test_a_check_that_never_ends_is_killed_with_a_daemon_it_forked_before_the_next_task(
    run_batch: RunBatch, llm_server: LLMServer, tmp_path: Path
) -> None:
    marker = "sleep 86413.1"
    daemon = f"(setsid bash -c 'trap \"\" TERM; exec {marker}' > /dev/null 2>&1 &); sleep 86413.2"
    first = {"id": "hangs", "check": daemon, "timeout": 8}
    with leftovers_ended(marker):
        done, results = then_probed(run_batch, llm_server, tmp_path, first, 86413)
        hangs = results["hangs"]
        assert (hangs["passed"], hangs["check_output"]) == (
            False,
            "[the check did not end within 8 s]",
        ), done.stderr
        assert results["after"]["passed"] is True, results["after"]["check_output"]


def test_a_server_a_passing_check_leaves_behind_is_gone_before_the_next_task(
    run_batch: RunBatch, llm_server: LLMServer, tmp_path: Path
) -> None:
    marker = "sleep 86416.1"
    left = f"setsid {marker} > /dev/null 2>&1 & {marker} > /dev/null 2>&1 & exit 0"
    first = {"id": "leaves", "check": left}
    with leftovers_ended(marker):
        _, results = then_probed(run_batch, llm_server, tmp_path, first, 86416)
        assert results["leaves"]["passed"] is True
        assert results["after"]["passed"] is True, results["after"]["check_output"]


def test_a_driver_killed_during_a_check_leaves_none_of_the_check_s_processes(
    di_code_home: Path, llm_server: LLMServer, tmp_path: Path
) -> None:
    marker = "sleep 86414.1"
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    task = {"id": "t0", "repo": str(repo), "prompt": "go", "check": f"{marker} & wait"}
    tasks = write_tasks(tmp_path / "t.jsonl", [task])
    llm_server.script(Turn(text="done"))
    driver = start_batch(di_code_home, llm_server, tmp_path, str(tasks), "--out", "r.jsonl")
    with leftovers_ended(marker):
        wait_until(lambda: bool(processes_running(marker, tmp_path)), "the check to start")
        driver.kill()  # as the README's resume promises: "even SIGKILL"
        driver.communicate(timeout=60)
        wait_until(lambda: not processes_running(marker), "the check's processes to end")


def deleted_files_of(pid: int, under: Path) -> list[int]:
    """Sizes of the unnamed (deleted) files process `pid` holds open below `under`."""
    sizes = []
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with contextlib.suppress(OSError):
            target = os.readlink(fd)
            if target.startswith(str(under)) and target.endswith(" (deleted)"):
                sizes.append(os.stat(fd).st_size)
    return sizes


def test_what_a_check_keeps_of_its_output_stays_bounded_while_it_prints(
    di_code_home: Path, llm_server: LLMServer, tmp_path: Path
) -> None:
    marker = "sleep 86415.1"
    printed = tmp_path / "printed"
    check = f"head -c 40000000 /dev/zero | tr '\\0' x; touch '{printed}'; {marker}"
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    tasks = write_tasks(tmp_path / "t.jsonl", [{"id": "t0", "repo": str(repo), "prompt": "go",
                                                "check": check}])  # fmt: skip
    llm_server.script(Turn(text="done"))
    driver = start_batch(di_code_home, llm_server, tmp_path, str(tasks), "--out", "r.jsonl")
    with leftovers_ended(marker):
        try:
            wait_until(printed.exists, "the check to print its 40 MB")
            kept = deleted_files_of(driver.pid, tmp_path)
            assert all(size <= 1 << 20 for size in kept), kept  # the tail it reports: 2,000 chars
        finally:
            driver.send_signal(signal.SIGINT)
            driver.communicate(timeout=60)


HOSTILE_OUTPUT = (
    r"printf '\033]0;owned\007\033[2J\r\0\377\376 \302\205 \342\200\250'; "
    "python3 -c \"import sys; sys.stdout.buffer.write(b'\\xed\\xa0\\x80' * 9 + b'A' * 3000000 + "
    "b'\\x1b[31m\\xc3')\"; exit 3"
)


def test_a_check_s_hostile_output_reaches_results_and_progress_as_safe_text(
    run_batch: RunBatch, llm_server: LLMServer, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    task = {"id": "noisy", "repo": str(repo), "prompt": "go", "check": HOSTILE_OUTPUT}
    tasks = write_tasks(tmp_path / "t.jsonl", [task])
    llm_server.script(Turn(text="done"))
    done = run_batch(str(tasks), "--out", "r.jsonl", "--events")
    events = [json.loads(line) for line in done.stdout.splitlines()]  # every line is JSON
    record = read_results(tmp_path / "r.jsonl")["noisy"]
    assert (record["status"], record["passed"]) == ("done", False)
    output = record["check_output"]
    assert len(output) == 2_000 and output.endswith("A\x1b[31m\ufffd"), repr(output[-20:])
    finish = [event for event in events if event["event"] == "finish"]
    assert finish and finish[0]["check_output"] == output
    assert "\x1b" not in done.stderr and "\r" not in done.stderr and "\0" not in done.stderr
    assert finish[0]["passed"] is False


def test_a_key_the_check_prints_across_the_cut_of_its_output_is_still_hidden(
    run_batch: RunBatch, llm_server: LLMServer, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    after = 2_000 - (len(API_KEY) - 5)  # the kept 2,000 characters start 5 into the key
    (tmp_path / "key.txt").write_text(API_KEY)  # read from a file: not in its environment
    check = f'cat {tmp_path / "key.txt"}; head -c {after} /dev/zero | tr "\\0" y; exit 1'
    tasks = write_tasks(tmp_path / "t.jsonl", [{"id": "cut", "repo": str(repo), "prompt": "go",
                                                "check": check}])  # fmt: skip
    llm_server.script(Turn(text="done"))
    done = run_batch(str(tasks), "--out", "r.jsonl", "--events")
    record = read_results(tmp_path / "r.jsonl")["cut"]
    assert record["check_output"] == "***" + "y" * after
    for text in [(tmp_path / "r.jsonl").read_text(), done.stdout, done.stderr]:
        assert API_KEY[5:] not in text


def test_a_check_running_code_the_model_wrote_hands_it_no_provider_key(
    run_batch: RunBatch, llm_server: LLMServer, tmp_path: Path
) -> None:
    """README, Threat model: no program di-code starts gets the provider keys in its
    environment. A check runs the task's tests, which the model may have written (a conftest,
    under a prompt injection), unsandboxed: the key must not be there to take."""
    seen = tmp_path / "seen-env"
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    steal = f"import os; open({str(seen)!r}, 'w').write(repr(dict(os.environ)))\n"
    check = "python3 conftest.py"
    tasks = write_tasks(tmp_path / "t.jsonl", [{"id": "t0", "repo": str(repo), "prompt": "go",
                                                "check": check}])  # fmt: skip
    llm_server.script(write_call("conftest.py", steal, "w1"), Turn(text="done"))
    run_batch(str(tasks), "--out", "r.jsonl")
    assert read_results(tmp_path / "r.jsonl")["t0"]["passed"] is True
    environment = seen.read_text()
    assert "OPENAI_BASE_URL" in environment and API_KEY not in environment


def test_a_check_that_commits_and_rewrites_the_checkout_changes_no_patch(
    run_batch: RunBatch, llm_server: LLMServer, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    check = (
        "echo junk > junk.txt && rm a.txt && git add -A && "
        "git -c user.name=c -c user.email=c@c commit -qm by-the-check && "
        "git checkout -q -b elsewhere && printf '[core]\\n\\tbare = true\\n' >> .git/config"
    )
    tasks = write_tasks(tmp_path / "t.jsonl", [{"id": "t0", "repo": str(repo), "prompt": "go",
                                                "check": check}])  # fmt: skip
    llm_server.script(write_call("b.txt", "by the task\n", "w1"), Turn(text="done"))
    done = run_batch(str(tasks), "--out", "r.jsonl")
    record = read_results(tmp_path / "r.jsonl")["t0"]
    assert record["passed"] is True, record["check_output"] + done.stderr
    assert "+by the task" in record["patch"]
    assert "junk" not in record["patch"] and "a.txt" not in record["patch"]


def start_evals(out: Path, home: Path, server: LLMServer, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "scripts.evals", "--out", str(out), *args],
        cwd=ROOT,
        env=cli_env(home, server),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # a terminal's Ctrl-C reaches its whole process group
    )


def test_ctrl_c_in_the_evals_stops_its_batch_as_the_batch_s_own_ctrl_c_does(
    di_code_home: Path, llm_server: LLMServer, tmp_path: Path
) -> None:
    llm_server.script(Turn(text="thinking", fault="stall"))  # a model that never finishes
    evals = start_evals(tmp_path / "out", di_code_home, llm_server, "--only", "rename")
    wait_until(lambda: bool(llm_server.requests), "the task's first model request")
    os.killpg(evals.pid, signal.SIGINT)
    _, err = evals.communicate(timeout=60)
    assert "Traceback" not in err, err
    assert evals.returncode == 130, err
    record = read_results(tmp_path / "out" / "results.jsonl")["rename"]
    assert record["status"] == "cancelled"


def test_evals_written_under_a_folder_named_with_a_newline_still_run_and_count(
    di_code_home: Path, llm_server: LLMServer, tmp_path: Path
) -> None:
    out = tmp_path / "runs\nof today"
    llm_server.script(Turn(text="I looked; nothing to change."))
    evals = start_evals(out, di_code_home, llm_server, "--only", "fix-test", "--jobs", "1")
    stdout, err = evals.communicate(timeout=300)
    assert evals.returncode == 0, err
    record = read_results(out / "results.jsonl")["fix-test"]
    assert (record["status"], record["passed"]) == ("done", False), record
    assert "| fix-test | no | done |" in stdout and "| **all** | **0/1** (0%)" in stdout


def test_an_answer_holding_a_line_separator_does_not_break_the_evals_summary(
    di_code_home: Path, llm_server: LLMServer, tmp_path: Path
) -> None:
    llm_server.script(Turn(text="Nothing to change.\u2028\u2029\x85 Really."))
    evals = start_evals(tmp_path / "out", di_code_home, llm_server, "--only", "fix-test")
    stdout, err = evals.communicate(timeout=300)
    assert evals.returncode == 0 and "Traceback" not in err, err
    assert "| fix-test | no | done |" in stdout
