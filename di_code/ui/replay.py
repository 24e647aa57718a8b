"""A resumed conversation's last prompts shown again (`chat -c`, `/resume`): the answers,
the tool calls collapsed, the plan as it was left, and the context size from the last answer."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rich.text import Text

from di_code.agent.tool import AgentTool, call_arguments
from di_code.ai.types import AssistantMessage, Message, ToolCall, ToolResultMessage
from di_code.system.safe_text import visible
from di_code.tools.builtin.support.job_table import is_job_notice
from di_code.ui.plan_view import last_plan, plan_of, plan_panel
from di_code.ui.render import Renderer, user_text
from di_code.ui.tool_view import tool_panel
from di_code.ui.turn_view import closing_rule

HISTORY_TURNS = 3


def replay(
    renderer: Renderer, messages: Sequence[Message], tools: Iterable[AgentTool] = ()
) -> None:
    """Print the last HISTORY_TURNS prompts of a resumed conversation and their answers
    (tool calls collapsed, each in its tool's own argument names, as when it ran), and take
    the context size from its last answer."""
    users = [n for n, message in enumerate(messages) if message.role == "user"]
    start = users[-HISTORY_TURNS] if len(users) >= HISTORY_TURNS else 0
    if start:
        renderer.console.print(Text(f"… {len(users) - HISTORY_TURNS} earlier prompts", "dim"))
    calls: dict[str, ToolCall] = {}
    for message in messages[start:]:
        if isinstance(message, AssistantMessage):
            calls.update((c.id, c) for c in message.content if isinstance(c, ToolCall))
            if message.text.strip():
                renderer.print_reply(message.text)
        elif isinstance(message, ToolResultMessage):
            call = calls.get(message.tool_call_id)
            if plan_of(message) is None:
                name = message.tool_name
                arguments = call_arguments(tools, name, call.arguments) if call else None
                renderer.remember(name, arguments, message)
                renderer.console.print(tool_panel(name, arguments, message))
        elif is_job_notice(text := user_text(message)):  # a job's end, as the chat said it
            renderer.console.print(Text(visible(text), style="dim"))
        else:
            renderer.show_user(user_text(message))
    if (steps := last_plan(messages)) is not None:
        renderer.console.print(plan_panel(steps))
    answers = [m for m in messages if isinstance(m, AssistantMessage)]
    if answers:
        renderer.usage.add_context(answers[-1].usage)
    renderer.console.print(closing_rule(f"resumed · {renderer.footer()}"))
