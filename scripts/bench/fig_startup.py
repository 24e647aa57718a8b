"""Figure 1: start-up of `di-code --help` / `--version` against plain Python and the peers.

Python peers (mini, aider) have `--help` only worth timing; the npm peers (pi, Claude Code,
Codex) are timed on both, each against di-code's same command. `codex` is the command npm
installs (a Node launcher that starts the Rust binary, what a user runs); `codex-native` is
the Rust binary started directly, shown for reference. di-code is installed as a user installs
it (`pip install`, no extras: see peers.ensure_user_install); the README's editable dev install
is shown beside it as `dev-checkout`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from scripts.bench.agents import NPM_AGENTS, base_env, codex_native
from scripts.bench.context import Bench
from scripts.bench.measure import ChildFailed, interleaved, last_line, run_child
from scripts.bench.peers import PeerUnavailable
from scripts.bench.report import Row, Stat, Target, skipped

PEERS = ("di-code-user", "mini", "aider", "npm")
"""Installed before the network is cut off (see offline.py)."""
NO_SERVER = "http://127.0.0.1:9"
"""Start-up needs no model: the agents' settings name a closed loopback port."""


@dataclass(frozen=True, slots=True)
class Command:
    name: str
    argv: Sequence[str | Path]


@dataclass(frozen=True, slots=True)
class Timing:
    wall: Stat
    memory: Stat


def peer_env(home: Path) -> dict[str, str]:
    """Peers run with a scratch HOME and no update checks or downloads at start-up."""
    env = base_env(home) | {
        "MSWEA_CONFIGURED": "true",
        "AIDER_CHECK_UPDATE": "false",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    }
    for *_, settings in NPM_AGENTS.values():
        env |= settings(home, NO_SERVER)
    return env


def time_commands(
    bench: Bench, commands: Sequence[Command], env: dict[str, str]
) -> dict[str, Timing]:
    """Interleave the commands, the order rotated each round; one untimed warm-up round."""
    walls: dict[str, list[float]] = {c.name: [] for c in commands}
    peaks: dict[str, list[float]] = {c.name: [] for c in commands}
    for timed, command in interleaved(commands, bench.repeats):
        run = run_child(command.argv, env=env, timeout=120)
        if run.returncode != 0:
            raise ChildFailed(f"{command.name} exited {run.returncode}: {last_line(run.stderr)}")
        if timed:
            walls[command.name].append(run.wall_s)
            peaks[command.name].append(run.maxrss_mib)
    return {c.name: Timing(Stat.of(walls[c.name]), Stat.of(peaks[c.name])) for c in commands}


def run(bench: Bench) -> list[Row]:
    if not bench.has("di_code.cli.app"):
        return [skipped("1", "start-up", "di_code.cli.app not written yet")]
    try:
        user = bench.user_install()
    except PeerUnavailable as exc:
        return [skipped("1", "start-up", str(exc))]
    commands = [
        Command("python -c pass", [user.python, "-c", "pass"]),
        Command("di-code --help", [user.bin("di-code"), "--help"]),
        Command("di-code --version", [user.bin("di-code"), "--version"]),
        Command("dev-checkout --help", [bench.bin("di-code"), "--help"]),
    ]
    missing: list[Row] = []
    for peer, argv in (("mini", ["mini", "--help"]), ("aider", ["aider", "--help"])):
        try:
            commands.append(Command(" ".join(argv), [bench.peer(peer).bin(argv[0]), *argv[1:]]))
        except PeerUnavailable as exc:
            missing.append(skipped("1", f"start-up vs {' '.join(argv)}", str(exc)))
    try:
        for name in NPM_AGENTS:
            command = bench.npm_bin(NPM_AGENTS[name][0])
            commands += [Command(f"{name} {flag}", [command, flag]) for flag in FLAGS]
        native = codex_native(bench)
        if native:
            commands += [Command(f"codex-native {flag}", [native, flag]) for flag in FLAGS]
    except PeerUnavailable as exc:
        missing.append(skipped("1", "start-up vs pi, claude, codex", str(exc)))
    with bench.scratch_home() as home:
        timings = time_commands(bench, commands, peer_env(home))
    return [*_rows(timings), *missing]


FLAGS = ("--help", "--version")
TARGETS: dict[str, float | None] = {
    "python -c pass": 2.5,
    "codex": 1.0,
    "mini --help": 0.3,
    "aider --help": 0.12,
    "codex-native": None,
    "pi": None,
    "claude": None,
    "dev-checkout": None,
}
"""Baseline: the bound on di-code / baseline (None: the ratio is shown, nothing is asked).
A bare peer name means its command with the same flag as di-code's."""


def _rows(timings: dict[str, Timing]) -> list[Row]:
    rows = []
    for flag in FLAGS:
        ours = f"di-code {flag}"
        mine = timings[ours]
        for base, bound in TARGETS.items():
            name = base if " " in base else f"{base} {flag}"
            if name in timings:
                target = Target(bound, "ratio") if bound is not None else None
                rows.append(
                    Row("1", f"{ours}: wall", "s", mine.wall, name, timings[name].wall, target)
                )
        rows.append(
            Row(
                "1",
                f"{ours}: peak memory",
                "MiB",
                mine.memory,
                "python -c pass",
                timings["python -c pass"].memory,
                Target(25, "value"),
            )
        )
    for name, timing in timings.items():
        if not name.startswith(("di-code", "python", "dev-checkout")):
            rows.append(Row("1", f"{name}: peak memory", "MiB", timing.memory, note="reference"))
    return rows
