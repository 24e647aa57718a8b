"""How the bash tool runs commands, decided at start-up: confined by a sandbox or not, which
variables are hidden from commands, where long outputs spill. Kept apart from the tool so the
policy (and the tool's description, which names the sandbox) is made without loading it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from di_code.tools.cards import BASH
from di_code.tools.sandbox import PRIVATE_TMP, Sandbox
from di_code.tools.spill import SpillFolder

KEY_VARIABLES = frozenset({"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"})
"""Kept out of every command's environment even when nobody configured anything."""


@dataclass(frozen=True, slots=True)
class BashPolicy:
    """How commands run: confined or not, with which variables hidden, spilling where."""

    sandbox: Sandbox | None = None
    hidden_env: frozenset[str] = KEY_VARIABLES
    """Variable names removed from the command's environment (the provider keys)."""
    spill: SpillFolder = field(default_factory=SpillFolder)

    def environment(self, env: Mapping[str, str]) -> dict[str, str]:
        clean = {name: value for name, value in env.items() if name not in self.hidden_env}
        if self.sandbox is not None:
            clean["TMPDIR"] = PRIVATE_TMP
        return clean

    def tool_description(self) -> str:
        """The bash tool's description: the model is told what the sandbox allows."""
        if self.sandbox is None:
            return BASH.description
        return f"{BASH.description} {self.sandbox.describe()}"
