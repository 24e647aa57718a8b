"""Figure 14: `di-code chat` beside the peers' TUIs, in a real pty (scripts/bench/tui.py):
spawn to the first screen with a prompt that takes input, and spawn to the first byte of the
model request when "hi" and Enter are typed as soon as it does (key by key, as tui.KEYS says).

di-code runs as a user installs it (figure 2's user install); the npm peers (Codex, Claude
Code, pi) with figure 2's settings, plus what their TUIs ask a new user before the prompt
(Codex and Claude Code: trust this folder; Claude Code: theme, onboarding and whether to use
the API key), answered yes in their own settings files, as a returning user's would be.
Each agent's "ready" is what its screen shows once it takes input: di-code's `›`; Codex's
placeholder and its footer's model once its header no longer says `loading` (keys typed
before that are dropped);
Claude Code's `? for shortcuts`; pi's context gauge in its footer. Interleaved in the
balanced order of measure.rotated, one untimed warm-up round.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from scripts.bench.agents import Agent, di_code, npm_agent
from scripts.bench.context import Bench
from scripts.bench.fig_first_request import Contender
from scripts.bench.loopback import LoopbackServer
from scripts.bench.measure import ChildFailed, interleaved
from scripts.bench.peers import PeerUnavailable
from scripts.bench.report import Row, Stat, Target, skipped
from scripts.bench.tui import Ready, Times, drive, shows
from scripts.bench.wire import MODEL, ScriptedModel

PEERS = ("di-code-user", "npm")
FIGURE = "14"
TITLE = "chat start-up in a pty"


def _codex_trust(home: Path, cwd: Path) -> None:
    config = home / ".codex" / "config.toml"
    with config.open("a", encoding="utf-8") as file:
        file.write(f'\n[projects."{cwd}"]\ntrust_level = "trusted"\n')


def _claude_returning(home: Path, cwd: Path) -> None:
    state = {
        "hasCompletedOnboarding": True,
        "theme": "dark",
        "customApiKeyResponses": {"approved": ["bench-key"], "rejected": []},
        "projects": {str(cwd): {"hasTrustDialogAccepted": True}},
    }
    (home / ".claude" / ".claude.json").write_text(json.dumps(state), encoding="utf-8")


def _nothing(home: Path, cwd: Path) -> None:
    return None


@dataclass(frozen=True, slots=True)
class Tui:
    args: tuple[str, ...]
    ready: Ready
    returning: Callable[[Path, Path], None] = _nothing
    """Writes the answers a returning user gave the TUI's first-start questions."""


TUIS: dict[str, Tui] = {
    "di-code": Tui(("chat", "--model", f"openai/{MODEL}", "--no-session"), shows("›")),
    "codex": Tui((), shows("Ask Codex", MODEL, unless="loading"), _codex_trust),
    "claude": Tui(("--model", MODEL), shows("? for shortcuts"), _claude_returning),
    "pi": Tui(("--provider", "bench", "--model", MODEL, "--no-session"), shows("0.0%/"), _nothing),
}
TARGETS: dict[str, float | None] = {"codex": 1.0, "claude": None, "pi": None}


@dataclass(frozen=True, slots=True)
class TuiContender(Contender):
    ready: Ready
    """When its screen shows a prompt that takes input."""


def run(bench: Bench) -> list[Row]:
    try:
        user = bench.user_install().bin("di-code")
    except PeerUnavailable as exc:
        return [skipped(FIGURE, TITLE, str(exc))]
    agents: list[Agent] = [di_code(bench, user)]
    missing: list[Row] = []
    for name in TARGETS:
        try:
            agents.append(npm_agent(bench, name))
        except PeerUnavailable as exc:
            missing.append(skipped(FIGURE, f"{TITLE} vs {name}", str(exc)))
    with bench.scratch_home() as home, ExitStack() as servers:
        cwd = home / "work"
        cwd.mkdir()
        contenders = []
        for agent in agents:
            tui = TUIS[agent.name]
            server = servers.enter_context(LoopbackServer(ScriptedModel(agent.wire)))
            env = agent.env(home / agent.name, server.origin) | {"TERM": "xterm-256color"}
            env.pop("NO_COLOR", None)  # as a user's terminal is
            tui.returning(home / agent.name, cwd)
            argv: list[str | Path] = [agent.command, *tui.args]
            contenders.append(TuiContender(agent.name, argv, env, server, tui.ready))
        times: dict[str, list[Times]] = {c.name: [] for c in contenders}
        failed: dict[str, str] = {}
        for timed, contender in interleaved(contenders, bench.repeats):
            if contender.name in failed:
                continue
            try:
                measured = drive(
                    contender.argv, contender.env, cwd, contender.ready, contender.server
                )
            except ChildFailed as exc:
                failed[contender.name] = str(exc)
                continue
            if timed:
                times[contender.name].append(measured)
    if "di-code" in failed:
        return [skipped(FIGURE, TITLE, f"di-code: {failed['di-code']}"), *missing]
    rows = []
    for metric, field in (
        ("chat: spawn to prompt", "prompt_s"),
        ("chat: spawn to first request", "request_s"),
    ):
        ours = Stat.of([getattr(t, field) for t in times["di-code"]])
        rows.append(Row(FIGURE, metric, "s", ours))
        for name, bound in TARGETS.items():
            if name in failed:
                rows.append(
                    skipped(FIGURE, f"{metric} vs {name}", f"cannot be driven here: {failed[name]}")
                )
            elif times.get(name):
                peer = Stat.of([getattr(t, field) for t in times[name]])
                target = Target(bound, "ratio") if bound is not None else None
                rows.append(Row(FIGURE, metric, "s", ours, name, peer, target))
    return [*rows, *missing]
