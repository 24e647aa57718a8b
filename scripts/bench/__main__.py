"""Run the benchmarks of issue 8 and print the table: `python -m scripts.bench [--only 3,7]`."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import platform
import sys
import time
from pathlib import Path
from types import ModuleType

from scripts.bench.context import Bench
from scripts.bench.offline import isolate_network
from scripts.bench.peers import PeerUnavailable, installed_versions
from scripts.bench.report import Row, skipped, table_lines, write_json

FIGURES: dict[str, tuple[str, str]] = {
    "1": ("fig_startup", "start-up"),
    "2": ("fig_first_request", "time to first request"),
    "3": ("fig_sse", "SSE throughput"),
    "4": ("fig_loop", "loop overhead"),
    "5": ("fig_render", "streaming render"),
    "6": ("fig_tools", "tools"),
    "7": ("fig_validation", "tool-argument validation"),
    "8": ("fig_sessions", "sessions"),
    "9": ("fig_checkpoints", "checkpoints"),
    "10": ("fig_agent_turns", "30 tool turns, headless, vs the npm peers"),
    "11": ("fig_agent_stream", "20,000-word streamed answer, headless, vs the npm peers"),
    "12": ("fig_acp_turns", "30 tool turns over ACP, against run"),
    "13": ("fig_acp_start", "ACP initialize, against claude-agent-acp and codex-acp"),
    "14": ("fig_chat_start", "chat start-up in a pty, vs the npm peers' TUIs"),
}
ROOT = Path(__file__).resolve().parents[2]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m scripts.bench", description=__doc__)
    parser.add_argument(
        "--only", default=",".join(FIGURES), help="comma-separated figure numbers (default: all)"
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smaller inputs and 2 repeats: a smoke run, not a measurement",
    )
    parser.add_argument("--repeats", type=int, default=None, help="runs per figure (default 5)")
    parser.add_argument("--json", type=Path, default=ROOT / ".bench" / "results.json")
    parser.add_argument(
        "--out",
        type=Path,
        default=ROOT / ".bench",
        help="scratch folder: peers' venvs, generated files",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    return parser.parse_args(argv)


def machine() -> dict[str, object]:
    model = "unknown"
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return {
        "nproc": os.cpu_count(),
        "cpu": model,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "date": time.strftime("%Y-%m-%d %H:%M:%S %z"),
        "load_average": [round(load, 2) for load in os.getloadavg()],
    }


def compile_bytecode() -> None:
    """Write di-code's .pyc files, as `pip install` does for a user.

    This machine sets PYTHONDONTWRITEBYTECODE=1, so an editable checkout never gets them and
    every measured process would compile di_code's source first (~100 ms), while the peers,
    installed normally, start from bytecode. compileall writes them regardless of that setting.
    """
    import compileall

    compileall.compile_dir(ROOT / "di_code", quiet=1)


def prepare_peers(bench: Bench, wanted: list[str]) -> None:
    """Install the peers the wanted figures name (their PEERS), while the network is there.

    A peer that cannot be installed is left for its figure to report as skipped.
    """
    needed: set[str] = set()
    for number in wanted:
        module = _module(number)
        needed.update(getattr(module, "PEERS", ()) if module else ())
    for name in sorted(needed):
        with contextlib.suppress(PeerUnavailable):
            if name == "npm":
                bench.npm_bin("pi")
            elif name == "di-code-user":
                bench.user_install()
            else:
                bench.peer(name)


def _module(number: str) -> ModuleType | None:
    try:
        return importlib.import_module(f"scripts.bench.{FIGURES[number][0]}")
    except ModuleNotFoundError:
        return None


def run_figure(bench: Bench, number: str) -> list[Row]:
    _, title = FIGURES[number]
    bench.log(f"figure {number}: {title}")
    module = _module(number)
    if module is None:
        return [skipped(number, title, "not written yet")]
    try:
        rows: list[Row] = module.run(bench)
    except Exception as exc:  # one broken figure must not lose the others' results
        return [skipped(number, title, f"error: {type(exc).__name__}: {exc}")]
    return rows


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    wanted = [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = [n for n in wanted if n not in FIGURES]
    if unknown:
        known = f"{min(FIGURES, key=int)}-{max(FIGURES, key=int)}"
        print(f"unknown figure(s): {', '.join(unknown)} (known: {known})", file=sys.stderr)
        return 2
    repeats = args.repeats or (2 if args.quick else 5)
    bench = Bench(
        ROOT, args.out.resolve(), quick=args.quick, repeats=repeats, verbose=not args.quiet
    )
    started = time.perf_counter()
    load_at_start = [round(load, 2) for load in os.getloadavg()]
    compile_bytecode()
    prepare_peers(bench, wanted)
    network = isolate_network()
    bench.log(f"network: {network}")
    rows = [row for number in wanted for row in run_figure(bench, number)]
    info = machine() | {
        "load_average_at_start": load_at_start,
        "network": network,
        "peers": installed_versions(bench.out),
        "quick": args.quick,
        "repeats": repeats,
        "elapsed_s": round(time.perf_counter() - started, 1),
    }
    print("\n".join(table_lines(rows)))
    write_json(args.json, rows, info)
    bench.log(f"wrote {args.json} in {info['elapsed_s']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
