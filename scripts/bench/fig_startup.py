"""Figure 1: start-up of `di-code --help` / `--version` against plain Python, mini and aider."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from scripts.bench.context import Bench
from scripts.bench.measure import ChildFailed, child_env, last_line, run_child
from scripts.bench.peers import PeerUnavailable
from scripts.bench.report import Row, Stat, Target, skipped


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
    return child_env(
        HOME=str(home),
        DI_CODE_HOME=str(home / ".di-code"),
        MSWEA_CONFIGURED="true",
        AIDER_CHECK_UPDATE="false",
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        NO_COLOR="1",
    )


def time_commands(
    bench: Bench, commands: Sequence[Command], env: dict[str, str]
) -> dict[str, Timing]:
    """Interleave the commands run by run (noise hits all alike); one untimed warm-up each."""
    walls: dict[str, list[float]] = {c.name: [] for c in commands}
    peaks: dict[str, list[float]] = {c.name: [] for c in commands}
    for attempt in range(bench.repeats + 1):
        for command in commands:
            run = run_child(command.argv, env=env, timeout=120)
            if run.returncode != 0:
                raise ChildFailed(
                    f"{command.name} exited {run.returncode}: {last_line(run.stderr)}"
                )
            if attempt:
                walls[command.name].append(run.wall_s)
                peaks[command.name].append(run.maxrss_mib)
    return {c.name: Timing(Stat.of(walls[c.name]), Stat.of(peaks[c.name])) for c in commands}


def run(bench: Bench) -> list[Row]:
    if not bench.has("di_code.cli.app"):
        return [skipped("1", "start-up", "di_code.cli.app not written yet")]
    commands = [
        Command("python -c pass", [bench.python, "-c", "pass"]),
        Command("di-code --help", [bench.bin("di-code"), "--help"]),
        Command("di-code --version", [bench.bin("di-code"), "--version"]),
    ]
    missing: list[Row] = []
    for peer, argv in (("mini", ["mini", "--help"]), ("aider", ["aider", "--help"])):
        try:
            commands.append(Command(" ".join(argv), [bench.peer(peer).bin(argv[0]), *argv[1:]]))
        except PeerUnavailable as exc:
            missing.append(skipped("1", f"start-up vs {' '.join(argv)}", str(exc)))
    with tempfile.TemporaryDirectory(prefix="bench-home-") as home:
        timings = time_commands(bench, commands, peer_env(Path(home)))
    return [*_rows(timings), *missing]


def _rows(timings: dict[str, Timing]) -> list[Row]:
    targets = {"python -c pass": 6.0, "mini --help": 0.3, "aider --help": 0.12}
    rows = []
    for ours in ("di-code --help", "di-code --version"):
        mine = timings[ours]
        for base, ratio in targets.items():
            if base in timings:
                rows.append(
                    Row(
                        "1",
                        f"{ours}: wall",
                        "s",
                        mine.wall,
                        base,
                        timings[base].wall,
                        Target(ratio, "ratio"),
                    )
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
    for base in ("mini --help", "aider --help"):
        if base in timings:
            rows.append(
                Row("1", f"{base}: peak memory", "MiB", timings[base].memory, note="reference")
            )
    return rows
