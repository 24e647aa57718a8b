"""Figure 13: how soon an editor can talk to the agent: spawn to the answer of `initialize`,
`di-code acp` against Zed's own ACP adapters, claude-agent-acp and codex-acp (npm), and a
bare agent on the same SDK, the four interleaved. Each is started by the ACP SDK's own client
(`scripts/bench/workers/acp_initialize.py`, which imports the SDK before its clock starts),
with figure 1's scratch HOME and settings; no model is needed for `initialize`. di-code runs
from the dev checkout (figure 1's user install has no extras, so no ACP SDK). The bare agent
(`workers/bare_acp_agent.py`) answers once the SDK is imported, as di-code did until issue 42
(it now answers `initialize` before the SDK's import)."""

from __future__ import annotations

import json
from pathlib import Path

from scripts.bench.context import Bench
from scripts.bench.fig_startup import peer_env
from scripts.bench.measure import (
    WORKERS,
    ChildFailed,
    end_group,
    interleaved,
    last_line,
    run_child,
)
from scripts.bench.peers import PeerUnavailable
from scripts.bench.report import Row, Stat, Target, skipped

PEERS = ("npm",)
ADAPTERS = ("claude-agent-acp", "codex-acp")
"""The npm commands of Zed's adapters (scripts/bench/peers.py installs them)."""
TARGETS = {"claude-agent-acp": Target(1.0, "ratio")}
"""Issue 42: `initialize` at most as late as Zed's Claude adapter's."""
BARE = "the Python SDK alone"
"""An agent that only answers `initialize` on the SDK di-code uses, after importing it."""


def run(bench: Bench) -> list[Row]:
    agents: dict[str, list[str | Path]] = {
        "di-code acp": [bench.bin("di-code"), "acp"],
        BARE: [bench.python, WORKERS / "bare_acp_agent.py"],
    }
    missing: list[Row] = []
    try:
        for name in ADAPTERS:
            command = bench.npm_bin(name)
            if not command.exists():
                raise PeerUnavailable(f"{command} is not installed")
            agents[name] = [command]
    except PeerUnavailable as exc:
        missing.append(skipped("13", "initialize vs the ACP adapters", str(exc)))
    times: dict[str, list[float]] = {name: [] for name in agents}
    with bench.scratch_home() as home:
        env = peer_env(home)
        for timed, name in interleaved(list(agents), bench.repeats):
            ms = _initialize_ms(bench, agents[name], env, home)
            if timed:
                times[name].append(ms)
    ours = Stat.of(times["di-code acp"])
    metric = "di-code acp: spawn to the initialize answer"
    rows = [
        Row("13", metric, "ms", ours, name, Stat.of(values), TARGETS.get(name))
        for name, values in times.items()
        if name != "di-code acp"
    ]
    return [*(rows or [Row("13", metric, "ms", ours)]), *missing]


def _initialize_ms(bench: Bench, argv: list[str | Path], env: dict[str, str], home: Path) -> float:
    worker = [bench.python, WORKERS / "acp_initialize.py", *argv]
    started: list[int] = []
    done = run_child(worker, env=env, cwd=home, timeout=180, on_start=started.append)
    end_group(started[0])  # codex-acp's binary outlives its Node launcher: one left a run
    if done.returncode != 0:
        raise ChildFailed(f"{argv[0]} exited {done.returncode}: {last_line(done.stderr)}")
    return float(json.loads(done.stdout.strip().splitlines()[-1])["initialize_ms"])
