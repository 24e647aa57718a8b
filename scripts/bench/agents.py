"""The agents compared end to end: how each is started headless and pointed at the loopback.

di-code and the npm peers (pi, Claude Code, Codex) each get a scratch HOME and their own
documented settings, written there, naming only 127.0.0.1: pi a `models.json` provider with a
`baseUrl`, Claude Code `ANTHROPIC_BASE_URL`, Codex a `model_providers` entry in
`$CODEX_HOME/config.toml` with `wire_api = "responses"`. Update checks, telemetry and other
non-essential traffic are switched off by each one's own setting, and proxies point at a closed
loopback port, so a request that escapes the settings fails instead of leaving the machine (the
harness also runs the agents in a network namespace of their own where it can, see offline.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from scripts.bench.context import Bench
from scripts.bench.measure import child_env
from scripts.bench.wire import MODEL, Wire

API_KEY = "bench-key"
DEAD_PROXY = "http://127.0.0.1:9"
"""The discard port: nothing listens there, so a proxied request fails at once."""


def base_env(home: Path) -> dict[str, str]:
    """What every agent gets: a scratch HOME, no colour, no proxy that leads anywhere."""
    return child_env(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        DI_CODE_HOME=str(home / ".di-code"),
        NO_COLOR="1",
        HTTP_PROXY=DEAD_PROXY,
        HTTPS_PROXY=DEAD_PROXY,
        ALL_PROXY=DEAD_PROXY,
        http_proxy=DEAD_PROXY,
        https_proxy=DEAD_PROXY,
        all_proxy=DEAD_PROXY,
        NO_PROXY="127.0.0.1,localhost",
        no_proxy="127.0.0.1,localhost",
    )


def di_code_settings(home: Path, origin: str) -> dict[str, str]:
    return {"OPENAI_API_KEY": API_KEY, "OPENAI_BASE_URL": f"{origin}/v1"}


def pi_settings(home: Path, origin: str) -> dict[str, str]:
    """A `bench` provider in models.json (Chat Completions); PI_OFFLINE stops start-up fetches."""
    agent_dir = home / ".pi" / "agent"
    agent_dir.mkdir(parents=True, exist_ok=True)
    provider = {
        "baseUrl": f"{origin}/v1",
        "api": "openai-completions",
        "apiKey": API_KEY,
        "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
        "models": [{"id": MODEL, "reasoning": False}],
    }
    (agent_dir / "models.json").write_text(json.dumps({"providers": {"bench": provider}}))
    (agent_dir / "settings.json").write_text(json.dumps({"enableInstallTelemetry": False}))
    return {
        "PI_CODING_AGENT_DIR": str(agent_dir),
        "PI_OFFLINE": "1",
        "PI_SKIP_VERSION_CHECK": "1",
        "PI_TELEMETRY": "0",
    }


def claude_settings(home: Path, origin: str) -> dict[str, str]:
    """ANTHROPIC_BASE_URL, and every documented switch for traffic that is not the model's."""
    config = home / ".claude"
    config.mkdir(parents=True, exist_ok=True)
    return {
        "ANTHROPIC_BASE_URL": origin,
        "ANTHROPIC_API_KEY": API_KEY,
        "CLAUDE_CONFIG_DIR": str(config),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_BUG_COMMAND": "1",
        "DISABLE_NON_ESSENTIAL_MODEL_CALLS": "1",
        "DISABLE_COST_WARNINGS": "1",
        "CLAUDE_CODE_DISABLE_TERMINAL_TITLE": "1",
        "CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY": "1",
    }


CODEX_CONFIG = """\
model = "{model}"
model_provider = "bench"
approval_policy = "never"
sandbox_mode = "danger-full-access"

[model_providers.bench]
name = "bench loopback"
base_url = "{origin}/v1"
env_key = "BENCH_API_KEY"
wire_api = "responses"
"""
"""The plainest set-up a user would write (issue 47): the model, the loopback provider, and
neither approvals nor a sandbox, as di-code runs headless. Nothing else: the update check,
analytics, feedback and OTel are left at Codex's defaults, and the harness's own network
namespace (offline.py) with the dead proxies keeps them off the network."""


def codex_settings(home: Path, origin: str) -> dict[str, str]:
    """A throwaway CODEX_HOME whose config.toml names the loopback as the only provider."""
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(CODEX_CONFIG.format(model=MODEL, origin=origin))
    return {"CODEX_HOME": str(codex_home), "BENCH_API_KEY": API_KEY}


@dataclass(frozen=True, slots=True)
class Agent:
    name: str
    wire: Wire
    command: Path
    prompt_args: Sequence[str]
    """Arguments before the prompt for one headless run."""
    settings: Callable[[Path, str], dict[str, str]]

    def env(self, home: Path, origin: str) -> dict[str, str]:
        """Write the agent's settings under `home` for the server at `origin`; its environment."""
        return base_env(home) | self.settings(home, origin)

    def prompt_argv(self, prompt: str) -> list[str]:
        return [str(self.command), *self.prompt_args, prompt]


NPM_AGENTS: dict[str, tuple[str, Wire, Sequence[str], Callable[[Path, str], dict[str, str]]]] = {
    "pi": (
        "pi",
        "chat",
        ["-p", "--provider", "bench", "--model", MODEL, "--no-session"],
        pi_settings,
    ),
    "claude": ("claude", "anthropic", ["-p", "--model", MODEL], claude_settings),
    "codex": (
        "codex",
        "responses",
        ["exec", "--skip-git-repo-check", "--color", "never"],
        codex_settings,
    ),
}
"""name: (command, wire format, headless arguments, settings writer)."""


def di_code(
    bench: Bench, command: Path | None = None, name: str = "di-code", session: bool = False
) -> Agent:
    """di-code from the dev checkout, or from `command` (another install of it); `session`:
    it records its session, as a user's run does (the throughput figures leave it out)."""
    argv = ["run", "--model", f"openai/{MODEL}", *([] if session else ["--no-session"])]
    return Agent(name, "chat", command or bench.bin("di-code"), argv, di_code_settings)


def codex_native(bench: Bench) -> Path | None:
    """Codex's Rust binary itself, which the npm `codex` command starts through Node."""
    package = bench.npm_bin("codex").parent.parent / "@openai"
    found = sorted(package.glob("codex-linux-*/vendor/*/bin/codex"))
    return found[0] if found else None


def npm_agent(bench: Bench, name: str) -> Agent:
    """The npm peer `name`, installed on first use; raises PeerUnavailable."""
    command, wire, args, settings = NPM_AGENTS[name]
    return Agent(name, wire, bench.npm_bin(command), args, settings)
