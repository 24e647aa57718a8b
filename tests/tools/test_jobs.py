"""Background jobs with real programs: a web server started, waited for, fetched by a later
bash call and killed; a Python REPL driven through its terminal; a job that prints without end
in bounded memory; a job that ends on its own, told once; twenty at once; di-code's exit."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

from di_code.agent.tool import own_arguments
from di_code.ai import AbortController
from di_code.ai.types import TextContent, ToolResultMessage, UserMessage
from di_code.system.children import group_members, run_child
from di_code.tools import default_tools
from di_code.tools.builtin.support.bash_policy import BashPolicy
from di_code.tools.builtin.support.job_history import resume
from di_code.tools.builtin.support.job_log import RING_BYTES
from di_code.tools.builtin.support.job_table import JobTable
from di_code.tools.builtin.support.process import KILL_AFTER
from di_code.tools.builtin.support.spill import SpillFolder
from di_code.tools.policy.permissions import Approval, ApprovalRequest, PermissionGate
from tests.support.jobs import resident_kib, start, start_web_server
from tests.support.processes import alive, until
from tests.tools.conftest import error_of, run, text_of


def tools_with(workspace: Path, policy: BashPolicy) -> dict[str, Any]:
    return {tool.name: tool for tool in default_tools(workspace, bash=policy)}


async def test_a_web_server_is_waited_for_fetched_by_a_later_command_and_killed(
    workspace: Path,
) -> None:
    policy = BashPolicy()
    tools = tools_with(workspace, policy)
    job, port = await start_web_server(tools)
    fetch = f"{sys.executable} -c \"import urllib.request as u; print(u.urlopen('http://127.0.0.1:{port}/').status)\""
    fetched = await run(tools["bash"], {"command": fetch})
    assert text_of(fetched).strip() == "200"
    members = group_members(policy.jobs.jobs[job].pid)
    assert members
    killed = await run(tools["job_kill"], {"job_id": job})
    assert "killed" in text_of(killed)
    assert not [pid for pid in members if alive(pid)]
    listed = await run(tools["job_list"], {})
    assert f"job {job} " in text_of(listed) and "killed" in text_of(listed)


async def test_a_python_repl_is_driven_through_its_terminal(workspace: Path) -> None:
    tools = tools_with(workspace, BashPolicy())
    job = await start(tools, f"{sys.executable} -q", pty=True)
    await run(tools["job_output"], {"job_id": job, "wait": 30, "pattern": ">>> $"})
    answer = await run(
        tools["job_input"], {"job_id": job, "text": "print(6 * 7)\n", "wait": 30, "pattern": "^42"}
    )
    assert "Pattern seen" in text_of(answer), text_of(answer)
    await run(tools["job_input"], {"job_id": job, "text": "raise SystemExit(4)\n"})
    ended = await run(tools["job_output"], {"job_id": job, "wait": 30})
    assert "exited with code 4" in text_of(ended), text_of(ended)


async def test_stdin_of_a_job_without_a_terminal_is_a_pipe_closed_on_request(
    workspace: Path,
) -> None:
    tools = tools_with(workspace, BashPolicy())
    job = await start(tools, "tr a-z A-Z")
    typed = await run(tools["job_input"], {"job_id": job, "text": "shout\n", "eof": True})
    assert "SHOUT" in text_of(typed)
    ended = await run(tools["job_output"], {"job_id": job, "wait": 30})
    assert "exited with code 0" in text_of(ended)
    whole = await run(tools["read"], {"path": ended.details["full_output_path"]})
    assert text_of(whole).endswith("1\tSHOUT")  # the whole output, on disk, for the read tool


async def test_a_job_printing_without_end_costs_bounded_memory(
    workspace: Path, tmp_path: Path
) -> None:
    cap = 1024 * 1024
    policy = BashPolicy(spill=SpillFolder(tmp_path / "spill", file_cap=cap))
    tools = tools_with(workspace, policy)
    before = resident_kib()
    job_id = await start(tools, "yes 'a line of output that never ends'")
    job = policy.jobs.jobs[job_id]
    read_already = job.cursor
    await until(lambda: job.log.total > read_already + 300 * 1024 * 1024, "300 MB more output")
    assert resident_kib() - before < 100 * 1024
    assert len(job.log._ring) <= 2 * RING_BYTES
    assert os.path.getsize(job.log.path) == cap
    read = text_of(await run(tools["job_output"], {"job_id": job_id}))
    assert len(read.encode()) < 60 * 1024
    assert f"The whole output: {job.log.path}" in read
    assert f"keeps only the first {cap} bytes" in read
    await run(tools["job_kill"], {"job_id": job_id})


async def test_a_job_that_exits_on_its_own_is_told_once(workspace: Path) -> None:
    policy = BashPolicy()
    tools = tools_with(workspace, policy)
    heard: list[str] = []
    policy.jobs.listeners.append(heard.append)
    job_id = await start(tools, "echo first; sleep 0.5; echo the-last-words; exit 3")
    await until(lambda: not policy.jobs.jobs[job_id].running, "the job's end")
    notices = policy.jobs.take_notices()
    assert len(notices) == 1 and heard == notices
    assert f"job {job_id} " in notices[0] and "exited with code 3" in notices[0]
    assert "the-last-words" in notices[0]
    assert policy.jobs.take_notices() == []
    killed = await start(tools, "sleep 100")
    await run(tools["job_kill"], {"job_id": killed})
    assert policy.jobs.take_notices() == []  # a job the model stopped is not news


async def test_twenty_jobs_run_at_once(workspace: Path) -> None:
    policy = BashPolicy()
    tools = tools_with(workspace, policy)
    # started together: each start waits out its 1 s first look at a job that never goes quiet
    ids = await asyncio.gather(
        *(start(tools, f"while :; do echo job-{n}-speaks; sleep 0.05; done") for n in range(20))
    )
    assert len(policy.jobs.running()) == 20
    for n, job_id in enumerate(ids):
        read = await run(tools["job_output"], {"job_id": job_id, "wait": 30, "pattern": "speaks"})
        assert f"job-{n}-speaks" in text_of(read)
        assert f"job-{(n + 1) % 20}-speaks" not in text_of(read)
    pids = [policy.jobs.jobs[job_id].pid for job_id in ids]
    await policy.jobs.stop_all()
    assert not [pid for pid in pids if alive(pid)]
    assert policy.jobs.status() is None


async def test_bad_ids_and_patterns_are_one_line_errors(workspace: Path) -> None:
    tools = tools_with(workspace, BashPolicy())
    assert "No background job 7" in await error_of(tools["job_output"], {"job_id": 7})
    job = await start(
        tools, "printf 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!\\n'; sleep 100"
    )
    bad = await error_of(tools["job_output"], {"job_id": job, "pattern": "(", "wait": 1})
    assert bad.startswith("pattern is not a regular expression")
    slow = await error_of(tools["job_output"], {"job_id": job, "pattern": "(a+)+$", "wait": 30})
    assert "took more than" in slow
    await run(tools["job_kill"], {"job_id": job})


async def test_an_aborted_wait_ends_the_turn_not_the_job(workspace: Path) -> None:
    policy = BashPolicy()
    tools = tools_with(workspace, policy)
    job = await start(tools, "sleep 100")
    await run(tools["job_output"], {"job_id": job})  # the tool made, so the next call waits at once
    waiters = policy.jobs.jobs[job]._waiters
    before = len(waiters)
    controller = AbortController()
    waiting = asyncio.ensure_future(
        run(
            tools["job_output"], {"job_id": job, "wait": 600, "pattern": "never"}, controller.signal
        )
    )
    # the stop must come while the read waits, not before it begins (that is another case)
    await until(lambda: len(waiters) > before, "the read waits on the job")
    controller.abort()
    result = await asyncio.wait_for(waiting, 30)
    assert "interrupted" in text_of(result)
    assert policy.jobs.jobs[job].running
    await policy.jobs.stop_all()


def test_claude_codes_name_for_background_is_taken() -> None:
    bash = next(tool for tool in default_tools(Path.cwd()) if tool.name == "bash")
    adopted = own_arguments(bash, {"command": "make serve", "run_in_background": True})
    assert adopted == {"command": "make serve", "background": True}
    output = next(tool for tool in default_tools(Path.cwd()) if tool.name == "job_output")
    assert own_arguments(output, {"bash_id": 2}) == {"job_id": 2}


async def test_a_background_command_is_asked_about_like_any_other() -> None:
    asked: list[ApprovalRequest] = []

    async def approver(request: ApprovalRequest) -> Approval:
        asked.append(request)
        return Approval(False)

    gate = PermissionGate("ask", approver=approver)
    refused = await gate.check("bash", {"command": "make serve", "background": True})
    assert refused is not None and [r.summary for r in asked] == ["bash: make serve"]
    assert await gate.check("job_output", {"job_id": 1}) is None
    assert await gate.check("job_kill", {"job_id": 1}) is None
    assert await gate.check("job_input", {"job_id": 1, "text": "x"}) is not None


EXITING = """
import asyncio, sys
from pathlib import Path
from di_code.tools import default_tools

async def main():
    tools = {t.name: t for t in default_tools(Path(sys.argv[1]))}
    from di_code.ai import AbortController
    command = "sleep 1000 & echo $! > tree; setsid sleep 1000 & echo $! >> tree; wait"
    params = {"command": command, "background": True}
    await tools["bash"].execute("1", params, AbortController().signal)
    tree = Path("tree")
    while not tree.exists() or len(tree.read_text().split()) < 2:
        await asyncio.sleep(0.02)
    print("started", flush=True)

asyncio.run(main())
"""


def test_di_codes_exit_ends_every_jobs_whole_tree(workspace: Path) -> None:
    done = run_child(
        [sys.executable, "-c", EXITING, str(workspace)],
        cwd=workspace,
        capture_output=True,
        timeout=60,
    )
    assert done.stdout == b"started\n", done.stderr
    pids = [int(word) for word in (workspace / "tree").read_text().split()]
    assert len(pids) == 2
    assert not [pid for pid in pids if alive(pid)]


async def test_an_end_the_model_has_read_is_not_told_again(workspace: Path) -> None:
    policy = BashPolicy()
    tools = tools_with(workspace, policy)
    job_id = await start(tools, "until [ -e go ]; do sleep 0.05; done")
    (workspace / "go").touch()
    read = await run(tools["job_output"], {"job_id": job_id, "wait": 30})
    assert "exited with code 0" in text_of(read)
    assert policy.jobs.take_notices() == []


def test_a_resumed_conversation_says_its_running_jobs_ended() -> None:
    def result(tool: str, details: dict[str, Any]) -> ToolResultMessage:
        return ToolResultMessage("c", tool, [TextContent("...")], False, 0, details)

    history = [
        result("bash", {"job_id": 1, "command": "npm run dev"}),
        result("bash", {"job_id": 2, "command": "pytest -f"}),
        result("bash", {"job_id": 3, "command": "make watch"}),
        result("job_kill", {"job_id": 2, "running": False}),
        UserMessage.of("[Background job 3 (`make watch`): exited with code 1; no output]"),
        result("bash", {"exit_code": 0}),
    ]
    table = JobTable()
    notices = resume(table, history)
    assert len(notices) == 1
    assert notices[0].startswith("[Background job 1 (`npm run dev`) was running when the session")
    assert "ended" in notices[0]
    assert table.take_notices() == notices
    assert table.new_id() == 4


async def test_jobs_that_ignore_term_are_stopped_together(workspace: Path) -> None:
    """The end of a session stops every job at once: those that ignore TERM are killed after
    one grace, not one grace each."""
    policy = BashPolicy()
    tools = tools_with(workspace, policy)
    stubborn = "trap '' TERM; echo ready; while :; do sleep 0.05; done"
    for _ in range(8):
        job = await start(tools, stubborn)
        await run(tools["job_output"], {"job_id": job, "wait": 30, "pattern": "ready"})
    pids = [job.pid for job in policy.jobs.running()]  # type: ignore[attr-defined]
    loop = asyncio.get_running_loop()
    began = loop.time()
    await policy.jobs.stop_all()
    assert loop.time() - began < 3 * KILL_AFTER  # one grace and the machine's slowness, not 8
    assert not [pid for pid in pids if alive(pid)]


async def test_hostile_input_is_typed_or_refused_in_one_line(workspace: Path) -> None:
    policy = BashPolicy()
    tools = tools_with(workspace, policy)
    echo = await start(tools, "cat")
    typed = await run(
        tools["job_input"],
        {"job_id": echo, "text": "a\ud800b\x00c\n", "pattern": "a.b", "wait": 30},
    )
    assert "Pattern seen" in text_of(typed)
    deaf = await start(tools, "sleep 100")
    refused = await error_of(tools["job_input"], {"job_id": deaf, "text": "x" * 4_000_000})
    assert "did not read its input" in refused and "\n" not in refused
    await run(tools["job_kill"], {"job_id": deaf})
    gone = await error_of(tools["job_input"], {"job_id": deaf, "text": "x"})
    assert "reads no more input" in gone
    await policy.jobs.stop_all()  # no child outlives the test's event loop


async def test_a_stop_ends_a_wait_for_input_output_at_once(workspace: Path) -> None:
    tools = tools_with(workspace, BashPolicy())
    job = await start(tools, "cat > /dev/null")
    controller = AbortController()
    typing = asyncio.ensure_future(
        run(tools["job_input"], {"job_id": job, "text": "x\n", "wait": 600}, controller.signal)
    )
    await asyncio.sleep(0)
    controller.abort()
    result = await asyncio.wait_for(typing, 30)
    assert "running" in text_of(result)
    await run(tools["job_kill"], {"job_id": job})
