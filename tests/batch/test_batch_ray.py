"""`di-code batch --ray ADDRESS` against a real Ray head on 127.0.0.1 that the test starts.

The head runs with one CPU, so its tasks run one at a time and take the loopback model's
scripted replies in order. Its workers get the test's environment (model, key, home) from it,
as a real cluster's nodes have their own.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from di_code.ai.providers.request_slots import SOCKET_PREFIX, request_slot
from di_code.batch.ray_slots import SlotRelay, start_keeper
from di_code.batch.results import STOPPED
from tests.batch.conftest import bash_call, make_repo, read_results, write_call, write_tasks
from tests.cli.conftest import DI_CODE, cli_env
from tests.support.batch import CHILD
from tests.support.git import git
from tests.support.llm_server import LLMServer, Turn
from tests.support.processes import processes_running, wait_until

pytest.importorskip("ray", reason="Ray is not installed here: pip install 'di-code[ray]'")
from tests.support.ray import ray_head_with

KEEPER_CAP = ("--events", "--max-requests", "1")
"""Each model request of the batch then passes the cluster's slot keeper."""


@pytest.fixture
def ray_head(di_code_home: Path, llm_server: LLMServer) -> Iterator[str]:
    with ray_head_with(cli_env(di_code_home, llm_server)) as address:
        yield address


def parent_of(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat[stat.rfind(")") + 2 :].split()[1])


def test_ray_tasks_stream_results_and_a_killed_worker_is_retried(
    ray_head: str, di_code_home: Path, llm_server: LLMServer, tmp_path: Path
) -> None:
    first = make_repo(tmp_path / "first", {"a.txt": "a\n"})
    second = make_repo(tmp_path / "second", {"b.txt": "b\n"})
    tasks = write_tasks(
        tmp_path / "t.jsonl",
        [
            {"id": "edit", "repo": str(first), "prompt": "add notes"},
            {"id": "killed", "repo": f"file://{second}", "prompt": "wait"},
        ],
    )
    llm_server.script(
        write_call("NOTES.md", "from ray\n", "w1"),
        Turn(text="wrote notes"),
        bash_call("sleep 86405"),
        Turn(text="second attempt"),
    )
    driver = subprocess.Popen(
        [DI_CODE, "batch", str(tasks), "--out", "r.jsonl", "--ray", ray_head, *KEEPER_CAP],
        cwd=tmp_path,
        env=cli_env(di_code_home, llm_server),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_until(lambda: bool(processes_running("sleep 86405")), "the second task's bash")
        task_process = min(processes_running(CHILD, tmp_path))  # the keeper: forks `run`
        os.kill(parent_of(task_process), signal.SIGKILL)  # the Ray worker running the task
        out, err = driver.communicate(timeout=120)
    finally:
        if driver.poll() is None:
            driver.kill()
    assert driver.returncode == 0, err
    # the killed worker's keeper ends its task's bash (the kernel tells it its worker died); the
    # retry on a new worker may finish first, so the old processes are waited for, not raced
    wait_until(lambda: processes_running("sleep 86405") == [], "the killed task's bash to end")
    results = read_results(tmp_path / "r.jsonl")
    assert (results["edit"]["status"], results["edit"]["answer"]) == ("done", "wrote notes")
    assert "+from ray" in results["edit"]["patch"]
    assert (results["killed"]["status"], results["killed"]["answer"]) == (
        "done",
        "second attempt",
    )
    assert len((tmp_path / "r.jsonl").read_text().splitlines()) == 2
    assert '"event": "end"' in out.splitlines()[-1]


def test_ctrl_c_cancels_the_ray_tasks_and_ends_their_processes(
    ray_head: str, di_code_home: Path, llm_server: LLMServer, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    tasks = write_tasks(tmp_path / "t.jsonl", [{"id": "long", "repo": str(repo), "prompt": "w"}])
    llm_server.script(bash_call("sleep 86407"))
    driver = subprocess.Popen(
        [DI_CODE, "batch", str(tasks), "--out", "r.jsonl", "--ray", ray_head],
        cwd=tmp_path,
        env=cli_env(di_code_home, llm_server),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_until(lambda: bool(processes_running("sleep 86407")), "the task's bash")
        driver.send_signal(signal.SIGINT)
        _, err = driver.communicate(timeout=120)
    finally:
        if driver.poll() is None:
            driver.kill()
    assert driver.returncode == 130, err
    wait_until(lambda: not processes_running("sleep 86407"), "the task's bash to end")
    branches = lambda: git(repo, "branch", "--list")  # noqa: E731
    wait_until(lambda: "di-code/batch" not in branches(), "the worker to remove its checkout")
    record = read_results(tmp_path / "r.jsonl")["long"]
    assert (record["status"], record["error"]) == ("cancelled", STOPPED)


async def test_the_slot_keeper_grants_one_request_at_a_time_across_relays(ray_head: str) -> None:
    import ray

    ray.init(address=ray_head, log_to_driver=False)
    try:
        keeper = start_keeper(ray, 1)
        with SlotRelay(ray, keeper) as first_relay, SlotRelay(ray, keeper) as second_relay:
            first = SOCKET_PREFIX + str(first_relay.path)
            second = SOCKET_PREFIX + str(second_relay.path)
            async with request_slot("http://a/v1", first):
                waiting = asyncio.create_task(_enter(second, "http://a/v1"))
                other_provider = await asyncio.wait_for(_enter(second, "http://b/v1"), 30)
                assert other_provider == "entered"  # each endpoint has its own slots
                await asyncio.sleep(0.5)
                assert not waiting.done()  # the other relay waits for the keeper's grant
            assert await asyncio.wait_for(waiting, 30) == "entered"
    finally:
        ray.shutdown()


async def _enter(spec: str, endpoint: str) -> str:
    async with request_slot(endpoint, spec):
        return "entered"
