"""The environment of every program di-code runs for the user or the repository: bash's
commands, the hooks, language servers, the pager, rg and the sandbox's probes.

One place, so that a new kind of program cannot start with the provider keys di-code holds: it
is the caller's environment without the hidden variables (the known key variables, every
preset's and configured `api_key_env`, and any variable holding the key in use: the set
`di_code.setup.prepare` makes once), plus only the variables di-code itself names for it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

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


def refusing_bare_repositories(env: dict[str, str]) -> dict[str, str]:
    """`env` with git told `safe.bareRepository=explicit` (as one more `GIT_CONFIG_COUNT`
    setting after the user's own): a folder laid out as a bare repository (one a clone holds as
    plain files, or the model wrote where no rule protects it as `.git`) is then never taken
    for the repository by a git the command runs in it, so its config names no program git
    runs (fsmonitor, hooks, pager). A command-line setting, which its config cannot undo."""
    count = env.get("GIT_CONFIG_COUNT", "0")
    index = int(count) if count.isascii() and count.isdigit() else 0
    env.update(
        {
            "GIT_CONFIG_COUNT": str(index + 1),
            f"GIT_CONFIG_KEY_{index}": "safe.bareRepository",
            f"GIT_CONFIG_VALUE_{index}": "explicit",
        }
    )
    return env


def path_outside(value: str, roots: Sequence[Path]) -> str:
    """A PATH without the entries that lie in `roots` or are relative (to the folder a
    program starts in: the workspace), so that no program is looked up among the project's."""
    real_roots = [Path(os.path.realpath(root)) for root in roots]
    kept = []
    for entry in value.split(os.pathsep):
        if not os.path.isabs(entry):
            continue
        real = Path(os.path.realpath(entry))
        if not any(real.is_relative_to(root) for root in real_roots):
            kept.append(entry)
    return os.pathsep.join(kept)


def installed_program(name: str) -> str | None:
    """Where a program di-code itself runs around the model's commands is installed (`bwrap`
    and `nsenter`, which make the sandbox; `bash`, which every command starts in; `rg`): looked
    up on PATH but never in the working folder, through a relative entry (`bin`,
    `node_modules/.bin`) or an absolute one (direnv's `PATH_add bin`): a repository that ships
    its own would decide how its commands are confined, or run unasked."""
    try:
        here = Path.cwd()
    except OSError:  # the working folder was removed: relative entries are skipped still
        here = Path("/")
    inside = [] if here == here.parent else [here]  # `/` (an editor's) holds every entry
    return shutil.which(name, path=path_outside(os.environ.get("PATH", os.defpath), inside))
