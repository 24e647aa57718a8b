"""`di-code batch` and the stop signals it shares with every command: SIGHUP (a closed
terminal) stops it like Ctrl-C, and a second signal within 2 s ends the driver at once; either
way nothing a task started is left running."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from tests.batch.conftest import bash_call, make_repo, read_results, write_tasks
from tests.support.batch import start_batch
from tests.support.llm_server import LLMServer
from tests.support.processes import processes_running, wait_until


@pytest.mark.parametrize(
    ("numbers", "code"),
    [((signal.SIGHUP,), 129), ((signal.SIGINT, signal.SIGINT), 130)],
    ids=["hup", "twice"],
)
def test_a_stopped_batch_leaves_nothing_running(
    di_code_home: Path,
    llm_server: LLMServer,
    tmp_path: Path,
    numbers: tuple[signal.Signals, ...],
    code: int,
) -> None:
    marker = f"sleep 86403.{len(numbers)}"
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    tasks = write_tasks(tmp_path / "t.jsonl", [{"id": "t0", "repo": str(repo), "prompt": "wait"}])
    llm_server.script(bash_call(marker))
    driver = start_batch(di_code_home, llm_server, tmp_path, str(tasks), "--out", "r.jsonl")
    wait_until(lambda: bool(processes_running(marker, tmp_path)), "the task's bash to start")
    for number in numbers:
        driver.send_signal(number)
        time.sleep(0.2)
    _, err = driver.communicate(timeout=60)
    assert driver.returncode == code, err
    wait_until(lambda: not processes_running(marker, tmp_path), "the task's processes to end")
    if len(numbers) == 1:  # stopped cleanly: the task is recorded as cancelled
        assert read_results(tmp_path / "r.jsonl")["t0"]["status"] == "cancelled"
