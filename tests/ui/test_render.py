"""The Renderer draws each AgentEvent kind as exact, readable text."""

from __future__ import annotations

import asyncio
import io
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec.structs import replace
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
from di_code.agent.events import (
    MessageStartEvent,
    MessageUpdateEvent,
    TurnEndEvent,
    TurnStartEvent,
)
from di_code.ai import AbortSignal, TextContent, ThinkingContent, ToolCall
from di_code.ai.events import (
    RetryEvent,
    StartEvent,
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
)
from di_code.ai.providers.faux import create_faux_provider
from di_code.ai.providers.openai import OpenAIProvider
from di_code.ai.types import (
    AssistantMessage,
    Cost,
    Model,
    ModelCost,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from di_code.tools.policy.permissions import YES, Approval, ApprovalRequest
from di_code.ui.footer import UsageTotals
from di_code.ui.markdown_stream import NoLive, RichLive, default_live
from di_code.ui.render import Renderer
from di_code.ui.replay import replay
from di_code.ui.thinking_view import thinking_panel
from di_code.ui.tool_view import RunningTool, summarize_call, tool_panel
from di_code.ui.turn_view import Activity, alert_panel
from tests.support.llm_server import HttpError, LLMServer, Turn
from tests.support.render import lines_of, make_console, render_prompt, render_text


def tool(name: str, result: ToolResult) -> FunctionTool:
    async def run(call_id: str, params: dict[str, Any], signal: AbortSignal) -> ToolResult:
        return result

    return FunctionTool(name, name, {"type": "object"}, run)


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
        "── turn 1 · faux-1 ─────────────────────────────────────────────────────────────",
        "╭─ ✻ thinking ─────────────────────────────────────────────────────────────────╮",
        "│ Let me think.                                                                │",
        "│ Step two.                                                                    │",
        "│ Three.                                                                       │",
        "│ … 1 more line (Ctrl-T shows thinking whole)                                  │",
        "╰──────────────────────────────────────────────────────────────────────────────╯",
        "I'll look.",
        "",
        "",
        " x = 1",
        "",
        "╭─ bash $ ls ──────────────────────────────────────────────────────────────────╮",
        "│ a.txt                                                                        │",
        "│ b.txt                                                                        │",
        "│ c                                                                            │",
        "│ d                                                                            │",
        "│ e                                                                            │",
        "│ f                                                                            │",
        "╰─────────────────────────────────────────────────────────────────────── 0.0s ─╯",
        "─────────────────────────────────────────────────────────────────── ↑? ↓? · 0.0s",
        "",
        "── turn 2 · faux-1 ─────────────────────────────────────────────────────────────",
        "╭─ edit a.txt ─────────────────────────────────────────────────────────────────╮",
        "│ @@ -1 +1 @@                                                                  │",
        "│ -old                                                                         │",
        "│ +new                                                                         │",
        "╰─────────────────────────────────────────────────────────────────────── 0.0s ─╯",
        "╭─ grep x in src ──────────────────────────────────────────────────────────────╮",
        "│ Command exited with code 1                                                   │",
        "╰────────────────────────────────────────────────────────────── failed · 0.0s ─╯",
        "─────────────────────────────────────────────────────────────────── ↑? ↓? · 0.0s",
        "",
        "── turn 3 · faux-1 ─────────────────────────────────────────────────────────────",
        "Done.",
        "─────────────────────────────────────────────────────────────────── ↑? ↓? · 0.0s",
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
    assert (await render_prompt(failure, []))[-5:] == [
        "╭─ ✗ error ────────────────────────────────────────────────────────────────────╮",
        "│ openai: HTTP 500: boom                                                       │",
        "╰──────────────────────────────────────────────────────────────────────────────╯",
        "─────────────────────────────────────────────────────────────────── ↑? ↓? · 0.0s",
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
    # No "turn 2" frame with ↑0 ↓0: the loop ended without asking the model again.
    assert lines_of(console)[-10:] == [
        "╭─ bash $ sleep 100 ───────────────────────────────────────────────────────────╮",
        "│ Interrupted by the user.                                                     │",
        "│ Output so far:                                                               │",
        "│ killed                                                                       │",
        "╰────────────────────────────────────────────────────────────── failed · 0.0s ─╯",
        "─────────────────────────────────────────────────────────────────── ↑? ↓? · 0.0s",
        "╭─ ■ aborted ──────────────────────────────────────────────────────────────────╮",
        "│ Tool loop aborted                                                            │",
        "╰──────────────────────────────────────────────────────────────────────────────╯",
        "↑? ↓? · $0.0000",
    ]


async def test_an_abort_between_requests_leaves_the_figures_exact() -> None:
    """Stopped while a tool ran, the loop ends without a request: no tokens went unseen, so
    the footer keeps exact figures (not `↑≥… ctx ?` as after a reply cut mid-stream)."""
    started = asyncio.Event()

    async def wait(call_id: str, params: dict[str, Any], signal: AbortSignal) -> ToolResult:
        started.set()
        await signal.wait()
        return ToolResult([TextContent("killed")], is_error=True)

    call = ToolCall("c1", "bash", {"command": "sleep 100"})
    faux = create_faux_provider([{"type": "success", "content": [call], "usage": Usage(1000, 100)}])
    console = make_console()
    agent = Agent(faux.provider, faux.model, [FunctionTool("bash", "b", {}, wait)])
    agent.subscribe(Renderer(console, model=faux.model, clock=lambda: 0.0))
    task = asyncio.create_task(agent.prompt("sleep"))
    await asyncio.wait_for(started.wait(), 10)
    agent.abort()
    await asyncio.wait_for(task, 10)
    assert lines_of(console)[-1] == "faux-1 · ↑1k ↓100 · $0.0000 · ctx 1.1k/128k (1%)"


async def test_length_stop_is_explained() -> None:
    script = [{"type": "success", "content": [TextContent("cut")], "stop_reason": "length"}]
    lines = await render_prompt(script, [])
    assert "⚠ stopped: the answer was cut at the model's output token limit" in lines


class RecordingLive:
    def __init__(self) -> None:
        self.shown: list[RenderableType | None] = []

    def show(self, renderable: RenderableType | None) -> None:
        self.shown.append(renderable)


class RenderingLive:
    """Draws what it is shown at once, as a terminal's live area would."""

    def __init__(self) -> None:
        self.drawn: list[list[str]] = []

    def show(self, renderable: RenderableType | None) -> None:
        if renderable is not None:
            self.drawn.append(render_text(renderable))


def test_a_running_tool_is_a_live_panel_with_spinner_elapsed_time_and_last_lines() -> None:
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
    assert render_text(shown) == [
        "╭─ bash $ make ────────────────────────────────────────────────────────────────╮",
        "│ ⠋ running  3.2s                                                              │",
        "│ … 2 earlier lines                                                            │",
        "│ line 3                                                                       │",
        "│ line 4                                                                       │",
        "│ line 5                                                                       │",
        "│ line 6                                                                       │",
        "│ line 7                                                                       │",
        "╰──────────────────────────────────────────────────────────────────────────────╯",
    ]
    result = ToolResultMessage("c1", "bash", [TextContent("ok")])
    renderer.handle(ToolExecutionEndEvent("c1", "bash", result))
    assert live.shown[-1] is None
    assert lines_of(renderer.console) == [
        "╭─ bash $ make ────────────────────────────────────────────────────────────────╮",
        "│ ok                                                                           │",
        "╰─────────────────────────────────────────────────────────────────────── 3.2s ─╯",
    ]


def test_the_spinner_of_a_running_call_moves_between_two_frames_150_ms_apart() -> None:
    running = RunningTool("bash", {"command": "make"}, 0.0, lambda: 1.0)
    frames = []
    for at in (100.0, 100.15):
        console = Console(
            file=io.StringIO(), width=80, color_system=None, get_time=lambda at=at: at
        )
        console.print(running)
        frames.append(lines_of(console)[1])
    assert frames[0] != frames[1]
    assert all("running  1.0s" in frame for frame in frames)


def test_failed_bash_shows_the_last_lines_with_an_earlier_lines_marker() -> None:
    text = "\n".join(f"line {n}" for n in range(1, 61)) + "\n\nCommand exited with code 1"
    result = ToolResultMessage(
        "c1", "bash", [TextContent(text)], details={"exit_code": 1}, is_error=True
    )
    assert render_text(tool_panel("bash", {"command": "make test"}, result, 2.5)) == [
        "╭─ bash $ make test ───────────────────────────────────────────────────────────╮",
        "│ … 54 earlier lines                                                           │",
        "│ line 55                                                                      │",
        "│ line 56                                                                      │",
        "│ line 57                                                                      │",
        "│ line 58                                                                      │",
        "│ line 59                                                                      │",
        "│ line 60                                                                      │",
        "│                                                                              │",
        "│ Command exited with code 1                                                   │",
        "╰────────────────────────────────────────────────────────────── exit 1 · 2.5s ─╯",
    ]


def test_read_shows_the_first_lines_and_how_many_more() -> None:
    text = "\n".join(f"row {n}" for n in range(1, 11))
    result = ToolResultMessage("c1", "read", [TextContent(text)])
    assert render_text(tool_panel("read", {"path": "a.txt"}, result, 0.1)) == [
        "╭─ read a.txt ─────────────────────────────────────────────────────────────────╮",
        "│ row 1                                                                        │",
        "│ row 2                                                                        │",
        "│ row 3                                                                        │",
        "│ row 4                                                                        │",
        "│ … 6 more lines                                                               │",
        "╰─────────────────────────────────────────────────────────────────────── 0.1s ─╯",
    ]


def test_control_characters_from_tools_are_shown_not_obeyed() -> None:
    result = ToolResultMessage("c1", "bash", [TextContent("a\x1b[2Jb")])
    lines = render_text(tool_panel("bash", {"command": "printf \x1b]0;x\x07"}, result, 0.0))
    assert "\x1b" not in "".join(lines)
    assert lines[1].startswith("│ a␛[2Jb")
    assert "␛]0;x␇" in lines[0]


def test_thinking_error_and_abort_panels() -> None:
    assert render_text(thinking_panel("one\ntwo\nthree\nfour")) == [
        "╭─ ✻ thinking ─────────────────────────────────────────────────────────────────╮",
        "│ one                                                                          │",
        "│ two                                                                          │",
        "│ three                                                                        │",
        "│ … 1 more line (Ctrl-T shows thinking whole)                                  │",
        "╰──────────────────────────────────────────────────────────────────────────────╯",
    ]
    assert render_text(alert_panel("■ aborted", "Request aborted\n  at step 2")) == [
        "╭─ ■ aborted ──────────────────────────────────────────────────────────────────╮",
        "│ Request aborted                                                              │",
        "╰──────────────────────────────────────────────────────────────────────────────╯",
    ]


def test_the_status_line_says_waiting_then_retrying_then_stalled() -> None:
    now = [0.0]
    activity = Activity("gpt-x", lambda: now[0], 0.0)
    now[0] = 3.24
    assert render_text(activity)[0][2:] == "waiting for gpt-x … 3.2s"
    activity.retry, activity.retry_at = RetryEvent(2, 4, 2.0, "HTTP 500: boom"), 5.0
    now[0] = 3.2
    assert render_text(activity)[0][2:] == "HTTP 500 · retry 2/4 in 1.8s"
    url = "connection to http://127.0.0.1:9/v1/chat/completions failed: refused"
    activity.retry = RetryEvent(2, 4, 2.0, url)
    assert activity.line(60) == "connection to http://127.0.0.1:9/v1/c… · retry 2/4 in 1.8s"
    activity.retry, activity.streaming, activity.since = None, True, 4.0
    now[0] = 5.0
    assert render_text(activity) == []
    now[0] = 11.0
    assert render_text(activity)[0][2:] == "no data from gpt-x for 7.0s"


async def test_a_retry_event_from_the_provider_reaches_the_live_status_line() -> None:
    with LLMServer() as server:
        server.script(HttpError(500, "boom", headers={"retry-after": "0"}), Turn(text="Hi."))
        provider = OpenAIProvider(api_key="k", base_url=server.openai_base_url)
        model = Model("m", "M", "openai", "openai", context_window=1000, cost=ModelCost())
        live = RenderingLive()
        renderer = Renderer(make_console(), live=live, model=model, clock=lambda: 0.0)
        agent = Agent(provider, model, [])
        agent.subscribe(renderer)
        events: list[str] = []
        agent.subscribe(lambda event: events.append(getattr(event, "event", event).type))
        await agent.prompt("hi")
        await provider.aclose()
    assert "retry" in events
    assert ["⠋ waiting for m … 0.0s"] in live.drawn
    assert ["⠋ HTTP 500 · retry 1/4 in 0.0s"] in live.drawn
    assert "Hi." in lines_of(renderer.console)


def test_expand_shows_every_line_of_the_last_or_the_nth_call() -> None:
    renderer = Renderer(make_console(), live=NoLive(), clock=lambda: 0.0)
    with pytest.raises(ValueError, match="No tool call"):
        renderer.expanded()
    for call_id, text in (("c1", "one"), ("c2", "\n".join(f"l{n}" for n in range(1, 31)))):
        renderer.handle(ToolExecutionStartEvent(call_id, "bash", {"command": "seq"}))
        result = ToolResultMessage(call_id, "bash", [TextContent(text)])
        renderer.handle(ToolExecutionEndEvent(call_id, "bash", result))
    full = render_text(renderer.expanded())
    assert full[0].startswith("╭─ #2 bash $ seq ─")
    assert [line[2:5].strip() for line in full[1:-1]] == [f"l{n}" for n in range(1, 31)]
    assert full[-1].endswith(" 30 lines ─╯")
    assert render_text(renderer.expanded(1))[1].startswith("│ one ")
    with pytest.raises(ValueError) as caught:
        renderer.expanded(3)
    assert str(caught.value) == "There are 2 tool calls: /expand 1 to 2."
    renderer.finished[1:] = []
    with pytest.raises(ValueError) as caught:
        renderer.expanded(9)
    assert str(caught.value) == "There is 1 tool call: /expand 1."


def reply(content: list[Any], usage: Usage | None = None, stop: Any = "stop") -> AssistantMessage:
    return AssistantMessage(content, "openai", "m", usage or Usage(), stop)


def test_a_resumed_conversation_shows_its_last_turns_and_context_size() -> None:
    model = Model("m", "M", "openai", "openai", context_window=10_000, cost=ModelCost())
    call = ToolCall("c1", "bash", {"command": "ls"})
    messages = [
        UserMessage.of("list files"),
        reply([call], Usage(900, 10, 0, 0, 910), "tool_use"),
        ToolResultMessage("c1", "bash", [TextContent("a.txt")]),
        reply([TextContent("There is **a.txt**.")], Usage(1200, 30, 0, 0, 1230)),
    ]
    renderer = Renderer(make_console(), live=NoLive(), model=model)
    replay(renderer, messages)
    assert lines_of(renderer.console) == [
        "› list files",
        "╭─ bash $ ls ──────────────────────────────────────────────────────────────────╮",
        "│ a.txt                                                                        │",
        "╰──────────────────────────────────────────────────────────────────────────────╯",
        "There is a.txt.",
        "───────────────────────────── resumed · m · ↑0 ↓0 · $0.0000 · ctx 1.2k/10k (12%)",
    ]


@settings(max_examples=40)
@given(st.data())
def test_a_reply_streamed_in_random_pieces_ends_as_the_whole_reply(data: st.DataObject) -> None:
    reply = data.draw(REPLIES)
    cuts = sorted(data.draw(st.sets(st.integers(1, max(1, len(reply) - 1)), max_size=12)))
    pieces = [reply[a:b] for a, b in zip([0, *cuts], [*cuts, len(reply)], strict=True)]
    assert streamed(pieces) == streamed([reply])


REPLIES = st.lists(
    st.sampled_from(
        ["Some *text*.", "", "# Title", "- item", "- other", "```py", "x = 1", "```", "| a |"]
    ),
    min_size=1,
    max_size=12,
).map("\n".join)


def streamed(pieces: list[str]) -> list[str]:
    console = make_console()
    renderer = Renderer(console, live=RecordingLive(), clock=lambda: 0.0)
    message = reply([TextContent("".join(pieces))])
    renderer.handle(MessageStartEvent(reply([])))
    renderer.handle(MessageUpdateEvent(TextStartEvent(0)))
    for piece in pieces:
        renderer.handle(MessageUpdateEvent(TextDeltaEvent(0, piece)))
    renderer.handle(MessageUpdateEvent(TextEndEvent(0, "".join(pieces))))
    renderer.handle(MessageEndEvent(message))
    return lines_of(console)


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


def test_the_stream_start_event_is_not_yet_an_answer() -> None:
    """`start` comes at once, before the server has sent a byte: still waiting."""
    live = RecordingLive()
    model = Model("slow", "S", "openai", "openai", context_window=1000, cost=ModelCost())
    renderer = Renderer(make_console(), live=live, model=model, clock=lambda: 2.0)
    renderer.handle(MessageStartEvent(reply([])))
    renderer.handle(MessageUpdateEvent(StartEvent()))
    shown = live.shown[-1]
    assert shown is not None
    assert render_text(shown) == ["⠋ waiting for slow … 0.0s"]
    renderer.handle(MessageUpdateEvent(TextStartEvent(0)))
    renderer.handle(MessageUpdateEvent(TextDeltaEvent(0, "Hi")))
    assert render_text(live.shown[-1] or "") == ["Hi"]


async def test_the_time_an_approval_question_waits_is_not_the_tool_s_or_the_turn_s() -> None:
    now = [10.0]
    renderer = Renderer(make_console(), live=NoLive(), clock=lambda: now[0])

    async def user_thinks_for_a_minute(request: ApprovalRequest) -> Approval:
        now[0] += 60.0
        return YES

    ask = renderer.pausing(user_thinks_for_a_minute)
    renderer.handle(TurnStartEvent())
    renderer.handle(MessageStartEvent(AssistantMessage([], "openai", "m")))
    renderer.handle(ToolExecutionStartEvent("c1", "bash", {"command": "make"}))
    await ask(ApprovalRequest("bash", {"command": "make"}, "bash: make", ()))
    now[0] += 0.5
    result = ToolResultMessage("c1", "bash", [TextContent("ok")])
    renderer.handle(ToolExecutionEndEvent("c1", "bash", result))
    renderer.handle(TurnEndEvent(AssistantMessage([], "openai", "m"), []))
    shown = lines_of(renderer.console)
    assert shown[-2].endswith(" 0.5s ─╯")
    assert shown[-1].endswith(" · 0.5s") and shown[-1].startswith("─")


def test_a_reply_cut_short_marks_the_figures_only_until_the_next_whole_reply() -> None:
    local = Model("gemma", "G", "llamacpp", "openai-completions", context_window=2048)
    totals = UsageTotals()
    totals.add(Usage(1000, 100))
    totals.add(Usage(), cut_short=True)  # aborted mid-stream: the server never said
    assert totals.footer(local) == "gemma · ↑≥1k ↓≥100 · $0.0000 · ctx ?/2k"
    totals.add(Usage(1200, 300))
    assert totals.footer(local) == "gemma · ↑2.2k ↓400 · $0.0000 · ctx 1.5k/2k (73%)"


def test_a_task_panel_names_its_job_and_counts_its_calls_and_the_footer_adds_its_usage() -> None:
    from di_code.ai.codec import to_dict

    console = make_console()
    renderer = Renderer(console, clock=lambda: 0.0)
    model = Model("m1", "M", "openai", "openai", context_window=10_000, cost=ModelCost())
    renderer.model = model
    renderer.handle(MessageEndEvent(reply([TextContent("hi")], Usage(1000, 100))))
    spent = Usage(5000, 500, cost=Cost(total=0.25))
    calls = [{"id": "r1", "name": "read", "arguments": {"path": "a"}, "is_error": False}]
    result = ToolResultMessage(
        "t1", "task", [TextContent("alpha is in a.py")],
        details={"tool_calls": calls, "usage": to_dict(spent)},
    )  # fmt: skip
    arguments = {"description": "find alpha", "prompt": "where is alpha?"}
    renderer.handle(ToolExecutionStartEvent("t1", "task", arguments))
    renderer.handle(ToolExecutionEndEvent("t1", "task", result))
    shown = "\n".join(lines_of(console))
    assert "task find alpha" in shown and "1 tool call" in shown
    assert "alpha is in a.py" in shown
    assert renderer.footer() == "m1 · ↑6k ↓600 · $0.2500 · ctx 1.1k/10k (11%)"


async def test_a_turn_that_only_changes_the_plan_says_so_inside_its_frame() -> None:
    from di_code.tools.builtin.todo import TodoTool

    steps = [
        {"content": "Read the code", "status": "done"},
        {"content": "Write the tests", "status": "in_progress"},
    ]
    call = ToolCall("p1", "todo", {"todos": steps})
    lines = await render_prompt(
        [
            {"type": "success", "content": [call]},
            {"type": "success", "content": [TextContent("Working on it.")]},
        ],
        [TodoTool()],
    )
    first_turn = lines[lines.index(next(x for x in lines if x.startswith("── turn 1"))) :]
    inside = first_turn[1 : next(i for i, x in enumerate(first_turn) if x.startswith("──", 1))]
    assert inside == ["◆ plan changed · ◐ Write the tests"]
