"""A Ray node without the model's key, against a real Ray head on 127.0.0.1 whose workers do
not have the key the driver has: the batch fails once, naming the node; `--ray-env` forwards
the driver's key, which is never shown."""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.batch.conftest import make_repo, read_results, write_tasks
from tests.cli.conftest import API_KEY, DI_CODE, cli_env
from tests.support.llm_server import LLMServer, Turn
from tests.support.ray import ray_head_with  # skips this file too without Ray


@pytest.fixture
def keyless_head(di_code_home: Path, llm_server: LLMServer) -> Iterator[str]:
    env = cli_env(di_code_home, llm_server)
    del env["OPENAI_API_KEY"]
    with ray_head_with(env) as address:
        yield address


def run_driver(
    tmp_path: Path, home: Path, server: LLMServer, head: str, count: int, *options: str
) -> subprocess.CompletedProcess[str]:
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    lines = [{"id": f"t{n}", "repo": str(repo), "prompt": "hi"} for n in range(count)]
    tasks = write_tasks(tmp_path / "t.jsonl", lines)
    return subprocess.run(
        [DI_CODE, "batch", str(tasks), "--out", "r.jsonl", "--ray", head, "--events", *options],
        cwd=tmp_path,
        env=cli_env(home, server),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_a_node_without_the_key_fails_the_batch_once_naming_it(
    keyless_head: str, di_code_home: Path, llm_server: LLMServer, tmp_path: Path
) -> None:
    done = run_driver(tmp_path, di_code_home, llm_server, keyless_head, 4)
    assert done.returncode == 2, done.stderr
    [said] = [line for line in done.stderr.splitlines() if "no API key" in line]
    node = f"{said.split()[2]} ({socket.gethostname()})"  # the node's address, as Ray has it
    assert said == (
        f"di-code: node {node} has no API key for openai: set OPENAI_API_KEY in the environment"
        " its Ray runs in (where `ray start` ran), or pass --ray-env OPENAI_API_KEY to forward"
        " yours (Ray then keeps it in its control store)"
    )
    results = read_results(tmp_path / "r.jsonl")
    assert {record["status"] for record in results.values()} == {"cancelled"}  # run again later
    assert not llm_server.requests
    assert '"stopped_by": "missing key"' in done.stdout.splitlines()[-1]
    assert API_KEY not in done.stdout + done.stderr


def test_ray_env_forwards_the_drivers_key_to_the_tasks_never_showing_it(
    keyless_head: str, di_code_home: Path, llm_server: LLMServer, tmp_path: Path
) -> None:
    llm_server.script(Turn(text="done with the forwarded key"))
    forward = ("--ray-env", "OPENAI_API_KEY", "--ray-env", "DI_CODE_MODEL")
    done = run_driver(tmp_path, di_code_home, llm_server, keyless_head, 1, *forward)
    assert done.returncode == 0, done.stderr
    record = read_results(tmp_path / "r.jsonl")["t0"]
    assert (record["status"], record["answer"]) == ("done", "done with the forwarded key")
    [request] = llm_server.requests
    assert request.headers["authorization"] == f"Bearer {API_KEY}"
    written = done.stdout + done.stderr + (tmp_path / "r.jsonl").read_text()
    assert API_KEY not in written
