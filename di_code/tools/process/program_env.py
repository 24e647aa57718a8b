"""The environment of every program di-code runs for the user or the repository: bash's
commands, the hooks, language servers, the pager, rg and the sandbox's probes.

One place, so that a new kind of program cannot start with the provider keys di-code holds: it
is the caller's environment without the hidden variables (the known key variables, every
preset's and configured `api_key_env`, and any variable holding the key in use: the set
`di_code.setup.prepare` makes once), plus only the variables di-code itself names for it.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping

KEY_VARIABLES = frozenset({"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"})
"""Kept out of every program's environment even when nobody configured anything."""


def program_env(
    hidden: Collection[str], base: Mapping[str, str] | None = None, **added: str
) -> dict[str, str]:
    """`base` (this process's environment by default) without the `hidden` variables, with
    `added` on top."""
    source = os.environ if base is None else base
    env = {name: value for name, value in source.items() if name not in hidden}
    env.update(added)
    return env
