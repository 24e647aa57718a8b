"""What the batch says, once at its start, about where its tasks' bash commands run.

It must be what the tasks' own `run` processes will do: each reads the sandbox choice from the
user's config (`[sandbox] mode` in the config.toml of the DI_CODE_HOME its environment names;
a checkout's project file is untrusted and cannot set it) against its permission mode. So the
notice is computed from the same SandboxChoice, per task, and each different answer said once.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from di_code.batch.tasks import Task
from di_code.config.settings import di_code_home, load_user_settings
from di_code.tools.process.sandbox import SandboxChoice

ON_RAY = (
    "on Ray, each node decides where bash runs: its own [sandbox] mode (the config of the "
    "DI_CODE_HOME its Ray runs with), and whether bubblewrap works there"
)
"""The driver cannot know a node's config or kernel: said instead of a guess."""


def sandbox_notices(tasks: Sequence[Task], permission_mode: str) -> list[str]:
    """One line for each different sandbox the tasks' bash runs in, where nobody approves the
    commands (auto mode) or an explicit sandbox holds; SandboxUnavailable when a task's user
    config asks for a sandbox bubblewrap cannot give here (every such task would fail)."""
    choices: dict[Path, SandboxChoice] = {}
    notices: list[str] = []
    for task in tasks:
        home = di_code_home({**os.environ, **task.env})
        if home not in choices:
            requested = load_user_settings(home).sandbox_mode
            choices[home] = SandboxChoice(requested)  # type: ignore[arg-type]
            choices[home].check()
        notice = _notice(choices[home], task.permission_mode or permission_mode)
        if notice is not None and notice not in notices:
            notices.append(notice)
    return notices


def _notice(choice: SandboxChoice, permission_mode: str) -> str | None:
    sandbox = choice.sandbox(permission_mode)
    if sandbox is not None:
        return f"bash runs in the bubblewrap sandbox ({sandbox.mode})"
    return choice.note(permission_mode)  # auto mode unsandboxed, and why; else nothing to say
