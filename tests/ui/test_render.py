"""The Renderer draws each AgentEvent kind as exact, readable text."""

from __future__ import annotations

import asyncio
import io
from dataclasses import replace
from typing import Any

import pytest
from rich.console import Console, RenderableType

from di_code.agent import (
    Agent,
    FunctionTool,
    MessageEndEvent,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
    ToolResult,
)
from di_code.ai import AbortSignal, TextContent, ThinkingContent, ToolCall
from di_code.ai.providers.faux import create_faux_provider
from di_code.ai.types import AssistantMessage, Cost, Model, ModelCost, ToolResultMessage, Usage
from di_code.ui.footer import UsageTotals
from di_code.ui.markdown_stream import NoLive, RichLive, default_live
from di_code.ui.render import Renderer
from di_code.ui.tool_view import RunningTool, summarize_call


def make_console() -> Console:
    return Console(file=io.StringIO(), width=80, color_system=None)


def lines_of(console: Console) -> list[str]:
    return [line.rstrip() for line in console.file.getvalue().splitlines()]  # type: ignore[attr-defined]


def tool(name: str, result: ToolResult) -> FunctionTool:
    async def run(call_id: str, params: dict[str, Any], signal: AbortSignal) -> ToolResult:
        return result

    return FunctionTool(name, name, {"type": "object"}, run)


async def render_prompt(
    responses: list[dict[str, Any]], tools: list[Any], *, compact: bool = False
) -> list[str]:
    faux = create_faux_provider(responses)
    console = make_console()
    agent = Agent(faux.provider, faux.model, tools)
    agent.subscribe(Renderer(console, model=faux.model, clock=lambda: 0.0, compact=compact))
    await agent.prompt("list files")
    return lines_of(console)


BASH = tool("bash", ToolResult([TextContent("a.txt\nb.txt\nc\nd\ne\nf")]))
EDIT = tool(
    "edit",
    ToolResult(
        [TextContent("Edited a.txt")],
        details={"diff": "--- a.txt\n+++ a.txt\n@@ -1 +1 @@\n-old\n+new\n"},
    ),
)
GREP = tool("grep", ToolResult([TextContent("Command exited with code 1")], is_error=True))
SCRIPT: list[dict[str, Any]] = [
    {
        "type": "success",
        "content": [
            ThinkingContent("Let me think.\nStep two.\nThree.\nFour."),
            TextContent("I'll **look**.\n\n```py\nx = 1\n```"),
            ToolCall("c1", "bash", {"command": "ls"}),
        ],
    },
    {
        "type": "success",
        "content": [
            ToolCall("c2", "edit", {"path": "a.txt", "old_text": "old", "new_text": "new"}),
            ToolCall("c3", "grep", {"pattern": "x", "path": "src"}),
        ],
    },
    {"type": "success", "content": [TextContent("Done.")]},
]


async def test_every_event_kind_of_a_prompt_is_drawn() -> None:
    assert await render_prompt(SCRIPT, [BASH, EDIT, GREP]) == [
        "› list files",
        "",
        "── turn 1",
        "✻ thinking",
        "  Let me think.",
        "  Step two.",
        "  Three.",
        "  … 1 more line",
        "I'll look.",
        "",
        "",
        " x = 1",
        "",
        "● bash $ ls  0.0s",
        "  a.txt",
        "  b.txt",
        "  c",
        "  d",
        "  … 2 more lines",
        "",
        "── turn 2",
        "● edit a.txt  0.0s",
        "  @@ -1 +1 @@",
        "  -old",
        "  +new",
        "✗ grep x in src  0.0s",
        "  Command exited with code 1",
        "",
        "── turn 3",
        "Done.",
        "",
        "faux-1 · ↑? ↓? · $0.0000 · ctx ?/128k",
    ]


async def test_compact_mode_is_one_line_per_tool_call() -> None:
    assert await render_prompt(SCRIPT, [BASH, EDIT, GREP], compact=True) == [
        "● bash $ ls  0.0s",
        "● edit a.txt  0.0s",
        "✗ grep x in src  0.0s  Command exited with code 1",
    ]


async def test_a_failed_request_is_marked_in_red_words() -> None:
    failure = [{"type": "failure", "error_message": "openai: HTTP 500: boom"}]
    assert (await render_prompt(failure, []))[-3:] == [
        "✗ error: openai: HTTP 500: boom",
        "",
        "faux-1 · ↑? ↓? · $0.0000 · ctx ?/128k",
    ]


async def test_an_aborted_tool_run_shows_aborted() -> None:
    started = asyncio.Event()

    async def wait(call_id: str, params: dict[str, Any], signal: AbortSignal) -> ToolResult:
        started.set()
        await signal.wait()
        return ToolResult([TextContent("killed")], is_error=True)

    faux = create_faux_provider(
        [{"type": "success", "content": [ToolCall("c1", "bash", {"command": "sleep 100"})]}]
    )
    console = make_console()
    agent = Agent(faux.provider, faux.model, [FunctionTool("bash", "b", {}, wait)])
    agent.subscribe(Renderer(console, clock=lambda: 0.0))
    task = asyncio.create_task(agent.prompt("sleep"))
    await asyncio.wait_for(started.wait(), 10)
    agent.abort()
    final = await asyncio.wait_for(task, 10)
    assert final.stop_reason == "aborted"
    assert lines_of(console)[-7:] == [
        "✗ bash $ sleep 100  0.0s",
        "  Tool execution aborted.",
        "",
        "── turn 2",
        "■ aborted",
        "",
        "↑? ↓? · $0.0000",
    ]


async def test_length_stop_is_explained() -> None:
    script = [{"type": "success", "content": [TextContent("cut")], "stop_reason": "length"}]
    lines = await render_prompt(script, [])
    assert "⚠ stopped: the answer was cut at the model's output token limit" in lines


class RecordingLive:
    def __init__(self) -> None:
        self.shown: list[RenderableType | None] = []

    def show(self, renderable: RenderableType | None) -> None:
        self.shown.append(renderable)


def render_text(renderable: RenderableType) -> list[str]:
    console = make_console()
    console.print(renderable)
    return lines_of(console)


def test_a_running_tool_shows_spinner_elapsed_time_and_partial_output() -> None:
    now = [10.0]
    live = RecordingLive()
    renderer = Renderer(make_console(), live=live, clock=lambda: now[0])
    renderer.handle(ToolExecutionStartEvent("c1", "bash", {"command": "make"}))
    now[0] = 13.25
    output = "\n".join(f"line {n}" for n in range(1, 8))
    update = ToolResult([TextContent(output)])
    renderer.handle(ToolExecutionUpdateEvent("c1", "bash", update))
    shown = live.shown[-1]
    assert isinstance(shown, RunningTool)
    text = render_text(shown)
    assert text[0][1:] == " bash $ make  3.2s"
    assert text[1:] == ["  line 3", "  line 4", "  line 5", "  line 6", "  line 7"]
    result = ToolResultMessage("c1", "bash", [TextContent("ok")])
    renderer.handle(ToolExecutionEndEvent("c1", "bash", result))
    assert live.shown[-1] is None
    assert lines_of(renderer.console) == ["● bash $ make  3.2s", "  ok"]


def test_footer_sums_tokens_and_cost_and_shows_context_use() -> None:
    totals = UsageTotals()
    totals.add(Usage(1200, 300, 800, 0, 2300, Cost(total=0.0123)))
    totals.add(Usage(2500, 40, 0, 0, 2540, Cost(total=0.5)))
    model = Model("m1", "M", "openai", "openai", context_window=10_000, cost=ModelCost())
    assert totals.footer(model) == "m1 · ↑4.5k ↓340 · $0.5123 · ctx 2.5k/10k (25%)"


def test_missing_usage_is_shown_as_unknown_never_as_zero() -> None:
    local = Model("gemma", "G", "llamacpp", "openai-completions", context_window=2048)
    totals = UsageTotals()
    totals.add(Usage())
    assert totals.footer(local) == "gemma · ↑? ↓? · $0.0000 · ctx ?/2k"
    totals.add(Usage(1200, 300))
    assert totals.footer(local) == "gemma · ↑≥1.2k ↓≥300 · $0.0000 · ctx 1.5k/2k (73%)"
    priced = replace(local, cost=ModelCost(1.0, 2.0))
    assert UsageTotals(unknown=1).footer(priced) == "gemma · ↑? ↓? · $? · ctx 0/2k (0%)"


def test_tool_calls_cut_by_the_output_limit_are_said_not_run() -> None:
    console = make_console()
    calls = [ToolCall("c1", "bash", {}), ToolCall("c2", "bash", {})]
    cut = AssistantMessage([TextContent("Let me look."), *calls], "p", "m", stop_reason="length")
    Renderer(console, clock=lambda: 0.0).handle(MessageEndEvent(cut))
    lines = lines_of(console)
    note = "⚠ stopped: 2 tool calls not run: the reply hit the output token limit"
    assert note in lines


@pytest.mark.parametrize(
    ("name", "arguments", "summary"),
    [
        ("bash", {"command": "echo a\necho b"}, "$ echo a …"),
        ("read", {"path": "x.py", "offset": 5}, "x.py offset=5"),
        ("write", {"path": "x.py", "content": "a\nb\n"}, "x.py (2 lines)"),
        ("ls", {}, ""),
        ("find", {"pattern": "*.py", "path": "src"}, "*.py in src"),
        ("custom", {"q": 1}, '{"q": 1}'),
    ],
)
def test_tool_call_summaries(name: str, arguments: dict[str, Any], summary: str) -> None:
    assert summarize_call(name, arguments) == summary


def test_piped_output_has_no_live_area_and_a_terminal_has_one() -> None:
    assert isinstance(default_live(make_console()), NoLive)
    terminal = Console(file=io.StringIO(), force_terminal=True, width=80)
    assert isinstance(default_live(terminal), RichLive)


def test_no_color_is_respected(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    console = Console(file=io.StringIO(), force_terminal=True, width=80)
    renderer = Renderer(console, live=NoLive())
    result = ToolResultMessage("c1", "bash", [TextContent("bad")], is_error=True)
    renderer.handle(ToolExecutionEndEvent("c1", "bash", result))
    output = console.file.getvalue()  # type: ignore[attr-defined]
    assert "bad" in output
    assert "\x1b[31" not in output and "\x1b[91" not in output and "38;" not in output
