"""How the harness points each agent at the loopback: the settings files and the environment.

Checked without npm: the files are written as each agent documents them, every URL they hold
is on 127.0.0.1, telemetry and update checks are off, no real key is passed on; npm missing is
a skip with its reason; the harness's own network namespace leaves loopback only; runs are
ordered so none always follows the same neighbour, and a killed run is over before the next.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import subprocess
import sys
import time
import tomllib
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from scripts.bench.agents import (
    API_KEY,
    DEAD_PROXY,
    Agent,
    claude_settings,
    codex_settings,
    di_code_settings,
    pi_settings,
)
from scripts.bench.measure import end_group, interleaved, rotated, tree_cpu_s
from scripts.bench.peers import PeerUnavailable, ensure_npm_peers

ORIGIN = "http://127.0.0.1:4321"
ROOT = Path(__file__).resolve().parents[2]


def agent_env(tmp_path: Path, settings: object, wire: str = "chat") -> dict[str, str]:
    agent = Agent("x", wire, Path("/bin/true"), [], settings)  # type: ignore[arg-type]
    return agent.env(tmp_path, ORIGIN)


def urls_in(values: object) -> list[str]:
    text = json.dumps(values)
    return [word.strip('",') for word in text.split() if "://" in word]


def test_pi_gets_a_models_json_provider_with_a_loopback_base_url(tmp_path: Path) -> None:
    env = agent_env(tmp_path, pi_settings)
    models = json.loads((Path(env["PI_CODING_AGENT_DIR"]) / "models.json").read_text())
    provider = models["providers"]["bench"]
    assert provider["baseUrl"] == f"{ORIGIN}/v1"
    assert provider["api"] == "openai-completions"
    assert provider["apiKey"] == API_KEY
    assert provider["models"][0]["id"] == "bench-model"
    assert Path(env["PI_CODING_AGENT_DIR"]).is_relative_to(tmp_path)
    assert env["PI_OFFLINE"] == "1"
    assert env["PI_TELEMETRY"] == "0"


def test_claude_code_gets_the_base_url_and_no_nonessential_traffic(tmp_path: Path) -> None:
    env = agent_env(tmp_path, claude_settings, "anthropic")
    assert env["ANTHROPIC_BASE_URL"] == ORIGIN
    assert env["ANTHROPIC_API_KEY"] == API_KEY
    for switch in (
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
        "DISABLE_TELEMETRY",
        "DISABLE_ERROR_REPORTING",
        "DISABLE_AUTOUPDATER",
    ):
        assert env[switch] == "1"
    assert Path(env["CLAUDE_CONFIG_DIR"]).is_relative_to(tmp_path)


def test_codex_gets_a_responses_provider_in_a_throwaway_codex_home(tmp_path: Path) -> None:
    env = agent_env(tmp_path, codex_settings, "responses")
    home = Path(env["CODEX_HOME"])
    assert home.is_relative_to(tmp_path)
    config = tomllib.loads((home / "config.toml").read_text())
    assert config["model_provider"] == "bench"
    provider = config["model_providers"]["bench"]
    assert provider["base_url"] == f"{ORIGIN}/v1"
    assert provider["wire_api"] == "responses"
    assert env[provider["env_key"]] == API_KEY
    # the plainest config a user would write (issue 47): nothing that may cost Codex time
    assert set(config) == {"model", "model_provider", "model_providers", "approval_policy",
                           "sandbox_mode"}  # fmt: skip
    assert (config["approval_policy"], config["sandbox_mode"]) == ("never", "danger-full-access")
    assert urls_in(config) == [f"{ORIGIN}/v1"]


@pytest.mark.parametrize(
    "settings", [di_code_settings, pi_settings, claude_settings, codex_settings]
)
def test_every_url_an_agent_is_given_is_loopback_and_no_real_key_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settings: object
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-real-secret")
    monkeypatch.setenv("OPENAI_BASE_URL", "https://api.example.invalid/v1")
    env = agent_env(tmp_path, settings)
    urls = [value for value in env.values() if "://" in value]
    assert urls
    assert all(url.startswith("http://127.0.0.1:") for url in urls), urls
    assert env["HTTPS_PROXY"] == env["https_proxy"] == DEAD_PROXY
    assert "127.0.0.1" in env["NO_PROXY"]
    assert "sk-real-secret" not in env.values()
    assert env["HOME"] == str(tmp_path)


def test_npm_missing_is_a_skip_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(PeerUnavailable, match="npm not found on PATH"):
        ensure_npm_peers(tmp_path / "bench")
    assert not (tmp_path / "bench" / "npm" / ".installed").exists()


def test_runs_are_interleaved_each_leading_a_round_and_after_every_other_alike() -> None:
    assert [rotated("ABC", r) for r in range(3)] == [
        ["A", "B", "C"],
        ["B", "C", "A"],
        ["C", "A", "B"],
    ]
    for items, rounds in (("ABCD", 4), ("ABCDE", 10), ("AB", 2)):
        orders = [rotated(items, r) for r in range(rounds)]
        assert sorted(order[0] for order in orders) == sorted(items * (rounds // len(items)))
        follows = Counter((a, b) for order in orders for a, b in itertools.pairwise(order))
        assert len(follows) == len(items) * (len(items) - 1)  # every ordered pair
        assert len(set(follows.values())) == 1  # each as often
    runs = list(interleaved("AB", 2))
    assert runs == [(False, "A"), (False, "B"), (True, "B"), (True, "A"), (True, "A"), (True, "B")]


def test_ending_a_group_waits_until_none_of_it_runs() -> None:
    proc = subprocess.Popen(["sh", "-c", "sleep 30 & sleep 30 & wait"], start_new_session=True)
    try:
        _wait_for(lambda: len(_group(proc.pid)) >= 3)
        end_group(proc.pid)
        assert [pid for pid, state in _group(proc.pid) if state not in "ZX"] == []
    finally:
        proc.wait()


def _group(pgid: int) -> list[tuple[int, str]]:
    found = []
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError, ValueError):
            fields = (entry / "stat").read_text().rpartition(")")[2].split()
            if int(fields[2]) == pgid:
                found.append((int(entry.name), fields[0]))
    return found


def _wait_for(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 10
    while not condition():
        assert time.monotonic() < deadline, "the group never started"
        time.sleep(0.01)


def test_tree_cpu_of_a_process_that_is_gone_is_zero() -> None:
    assert tree_cpu_s(2**22 + 7) == 0.0  # above Linux's highest pid: never a live process


ISOLATED = """
import socket
from scripts.bench.offline import isolate_network
print(isolate_network())
print(sorted(name for _, name in socket.if_nameindex()))
with socket.create_server(("127.0.0.1", 0)) as server:
    socket.create_connection(server.getsockname(), timeout=5).close()
print("loopback ok")
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="a network namespace needs root")
def test_the_harness_can_cut_itself_off_from_all_but_loopback() -> None:
    done = subprocess.run(
        [sys.executable, "-c", ISOLATED],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "isolated: own network namespace, loopback only",
        "['lo']",
        "loopback ok",
    ]
