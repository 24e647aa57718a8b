"""`CliOptions`: the options `run` and `chat` share, as their bodies get them.

Declared for Typer in cli/options.py; a plain value here, so that the set-up (prepare.py) and
the commands (run.py, chat.py) and their tests need nothing of Typer. A NamedTuple: `--help`
imports this module, and `typing`, which Typer loads anyway, defines it at no extra cost (a
dataclass compiles its methods at import; a Struct needs msgspec, which `--help` has no other
use for).
"""

from __future__ import annotations

from typing import Any, NamedTuple


class CliOptions(NamedTuple):
    model: str | None = None
    provider: str | None = None
    base_url: str | None = None
    api_key: str | None = None
    thinking: bool = False
    permission_mode: str | None = None
    """ask | accept-edits | auto | read-only | plan, checked when the agent is set up."""
    yes: bool = False
    sandbox: str | None = None
    """off | workspace-write | read-only, checked when the agent is set up."""
    tools: str | None = None
    add_dir: tuple[str, ...] = ()
    max_turns: int | None = None
    context_window: int | None = None
    """Tokens; overrides the settings and what a local server says."""
    system_prompt: str | None = None
    append_system_prompt: str | None = None
    continue_session: bool = False
    session: str | None = None
    fork: bool = False
    """Go on in a copy of the resumed session (session/fork.py); the original is kept."""
    no_session: bool = False
    verbose: bool = False

    @property
    def session_source(self) -> str:
        """SessionStart's `source` (hooks): "resume" with --continue or --session."""
        return "resume" if self.continue_session or self.session is not None else "startup"


def options_from(values: dict[str, Any]) -> CliOptions:
    """Build CliOptions from the parsed values, normalising Typer's None lists."""
    values = dict(values)
    values["add_dir"] = tuple(values.get("add_dir") or ())
    return CliOptions(**values)
