"""Figure 8: resuming a 10,000-message session; memory of `chat` idle and after 1,000 turns.

Idle memory is the real `di-code chat` in a pseudo-terminal, read from /proc (VmHWM) once the
prompt is up. The 1,000 turns run chat's parts in one process (Agent on the faux provider,
session recorder, Rich event renderer on a fake terminal), not through prompt-toolkit.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from scripts.bench.context import Bench
from scripts.bench.fig_startup import peer_env
from scripts.bench.loopback import LoopbackServer
from scripts.bench.measure import ChildFailed, run_worker
from scripts.bench.report import Row, Stat, Target
from scripts.bench.wire import chat_completion_sse

PROMPT_TIMEOUT_S = 30


def run(bench: Bench) -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="sessions-", dir=_mkdir(bench.out)) as scratch:
        home, cwd = Path(scratch) / "home", Path(scratch) / "work"
        cwd.mkdir(parents=True)
        rows = _resume(bench, home, cwd)
        rows.append(_chat_idle(bench, home, cwd))
        turns = bench.scale(1000, 100)
        peaks = [
            run_worker(
                bench.python,
                "session",
                {"mode": "turns", "home": str(home / "t"), "cwd": str(cwd), "turns": turns},
            )[0]["peak_mib"]
            for _ in range(min(bench.repeats, 3))
        ]
        rows.append(
            Row(
                "8",
                f"memory after {turns:,} faux turns",
                "MiB",
                Stat.of(peaks),
                target=Target(150, "value"),
                note="chat's parts in one process",
            )
        )
    return rows


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def _resume(bench: Bench, home: Path, cwd: Path) -> list[Row]:
    messages = bench.scale(10_000, 1_000)
    made, _ = run_worker(
        bench.python,
        "session",
        {"mode": "make", "home": str(home), "cwd": str(cwd), "messages": messages},
    )
    times, with_imports = [], []
    for _ in range(bench.repeats):
        answer, _run = run_worker(
            bench.python, "session", {"mode": "resume", "home": str(home), "cwd": str(cwd)}
        )
        if answer["messages"] != messages:
            raise ChildFailed(f"resumed {answer['messages']} of {messages} messages")
        times.append(answer["seconds"])
        with_imports.append(answer["with_imports"])
    size = f"{messages:,} messages, {made['bytes'] / 1e6:.1f} MB"
    return [
        Row(
            "8",
            "resume session (load + context)",
            "s",
            Stat.of(times),
            target=Target(0.5, "value"),
            note=size,
        ),
        Row("8", "resume session incl. imports", "s", Stat.of(with_imports), note="reference"),
    ]


def _chat_idle(bench: Bench, home: Path, cwd: Path) -> Row:
    import pexpect

    peaks = []
    with LoopbackServer(chat_completion_sse(3)) as server:
        env = peer_env(home) | {
            "OPENAI_API_KEY": "bench-key",
            "OPENAI_BASE_URL": server.base_url,
            "TERM": "xterm-256color",
        }
        env.pop("NO_COLOR", None)
        for _ in range(min(bench.repeats, 3)):
            child = pexpect.spawn(
                str(bench.bin("di-code")),
                ["chat", "--model", "openai/bench-model", "--no-session"],
                env=env,
                cwd=str(cwd),
                dimensions=(40, 100),
                encoding="utf-8",
                codec_errors="replace",
            )
            try:
                child.expect("›", timeout=PROMPT_TIMEOUT_S)
                peaks.append(_vm_hwm_mib(child.pid))
            except pexpect.ExceptionPexpect as exc:
                raise ChildFailed(f"chat showed no prompt: {type(exc).__name__}") from None
            finally:
                child.terminate(force=True)
    return Row(
        "8",
        "memory of chat, idle",
        "MiB",
        Stat.of(peaks),
        target=Target(80, "value"),
        note="real REPL in a pty",
    )


def _vm_hwm_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise ChildFailed("no VmHWM in /proc status")
