"""`di-code batch` on a terminal (pty + pyte): the live display of running tasks with their
elapsed time, turns and tokens so far, and Ctrl-C typed at the keyboard stopping them."""

from __future__ import annotations

import re
from pathlib import Path

import pexpect

from tests.batch.conftest import bash_call, make_repo, read_results, write_tasks
from tests.cli.conftest import DI_CODE, cli_env
from tests.support.llm_server import LLMServer, Turn
from tests.support.processes import processes_running, wait_until
from tests.support.screen import Screen


def test_the_live_display_shows_running_tasks_and_ctrl_c_stops_them(
    di_code_home: Path, llm_server: LLMServer, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    tasks = write_tasks(
        tmp_path / "t.jsonl",
        [
            {"id": "quick", "repo": str(repo), "prompt": "hi"},
            {"id": "sleeper", "repo": str(repo), "prompt": "wait"},
        ],
    )
    llm_server.script(
        Turn(text="hello", input_tokens=40, output_tokens=2),
        Turn(tool_calls=bash_call("sleep 86406").tool_calls, input_tokens=50, output_tokens=3),
    )
    env = cli_env(di_code_home, llm_server, TERM="xterm-256color")
    env.pop("NO_COLOR")
    child = pexpect.spawn(
        DI_CODE,
        ["batch", str(tasks), "--out", "r.jsonl", "--jobs", "1"],
        cwd=str(tmp_path),
        env=env,
        dimensions=(30, 100),
        encoding="utf-8",
        timeout=30,
    )
    screen = Screen(child)
    screen.wait_for("quick done in")
    screen.wait_for("1/2 finished")
    screen.wait_for("53 tokens")  # the sleeper's first turn, while its bash runs
    assert re.search(r"sleeper +\d+ s, 1 turn +53 tokens, \$0\.0000", screen.text), screen.text
    wait_until(lambda: bool(processes_running("sleep 86406")), "the sleeper's bash")
    child.sendcontrol("c")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130
    assert processes_running("sleep 86406") == []
    results = read_results(tmp_path / "r.jsonl")
    assert (results["quick"]["status"], results["sleeper"]["status"]) == ("done", "cancelled")
