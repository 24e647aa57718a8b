"""`!command` in the REPL: run a shell command locally, show it as a tool panel, and hand
its output back as context for the next prompt (the model did not ask for it, the user did).

It runs through the bash tool itself, so it behaves exactly like the model's bash calls:
the same process group, output cap, spill file and abort (Ctrl-C or Esc kill it).
"""

from __future__ import annotations

import itertools
from pathlib import Path

from di_code.agent.events import (
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
)
from di_code.agent.tool import ToolResult
from di_code.ai.types import TextContent, ToolResultMessage
from di_code.session.prompt_notes import shell_note
from di_code.system.abort import AbortSignal
from di_code.tools.builtin.bash import BashTool
from di_code.tools.builtin.support.bash_policy import BashPolicy
from di_code.tools.common.errors import ToolError
from di_code.tools.common.workspace import Workspace
from di_code.ui.render import Renderer

NAME = "!"
_ids = itertools.count(1)


async def run_shell(
    command: str, root: Path, signal: AbortSignal, renderer: Renderer, hidden: frozenset[str]
) -> str | None:
    """Run `command` in `root` without the `hidden` variables (as bash's commands); the
    context text for the next prompt, None if nothing ran."""
    if not command:
        return None
    call_id = f"shell-{next(_ids)}"
    arguments = {"command": command}
    renderer.handle(ToolExecutionStartEvent(call_id, NAME, arguments))

    async def update(partial: ToolResult) -> None:
        renderer.handle(ToolExecutionUpdateEvent(call_id, NAME, partial))

    tool = BashTool(Workspace.create(root), BashPolicy(hidden_env=hidden))
    try:
        outcome = await tool.execute(call_id, arguments, signal, update)
        result = outcome if isinstance(outcome, ToolResult) else ToolResult(outcome)
    except ToolError as exc:
        result = ToolResult([TextContent(str(exc))], is_error=True)
    message = ToolResultMessage(
        call_id, NAME, result.content, result.is_error, details=result.details
    )
    renderer.handle(ToolExecutionEndEvent(call_id, NAME, message))
    return shell_note(command, message.text)
