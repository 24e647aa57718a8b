"""The REPL driven through prompt-toolkit's pipe input, against the faux provider."""

from __future__ import annotations

import asyncio
import io
import time
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from di_code.agent import Agent, FunctionTool, ToolResult
from di_code.ai import AbortSignal, TextContent, ToolCall
from di_code.ai.providers.faux import create_faux_provider
from di_code.ai.providers.openai import OpenAIProvider
from di_code.ai.types import AssistantMessage, Model, Usage, UserMessage
from di_code.session import SessionStore
from di_code.setup.prepared import Prepared
from di_code.tools.builtin.support.bash_policy import BashPolicy
from di_code.tools.policy.permissions import (
    Approval,
    ApprovalRequest,
    PermissionGate,
    PermissionRules,
    Rule,
)
from di_code.tools.process.sandbox import SandboxChoice, bubblewrap_works
from di_code.ui.approval import ReplApprover
from di_code.ui.repl import EXIT_ARMED_SECONDS
from tests.support.clock import ManualClock
from tests.support.gated import gate_tools
from tests.support.llm_server import LLMServer, Turn
from tests.support.repl import TIMEOUT, chat, text_reply, until, user_texts


async def test_a_prompt_gets_its_answer_and_exit_quits(tmp_path: Path) -> None:
    faux = create_faux_provider([text_reply("Hello **there**.")])
    history = tmp_path / "history"
    async with chat(Prepared(Agent(faux.provider, faux.model)), history=history) as session:
        session.type("hi\r")
        await session.answered()
        session.type("/exit\r")
    assert "› hi\n" in session.output
    assert "Hello there." in session.output
    assert "faux-1 · ↑? ↓?" in session.output
    assert user_texts(faux, 0) == ["hi"]
    assert "hi" in history.read_text()


async def test_trailing_backslash_continues_the_line() -> None:
    faux = create_faux_provider([text_reply("ok")])
    async with chat(Prepared(Agent(faux.provider, faux.model))) as session:
        session.type("first\\\rsecond\r")
        await session.answered()
        session.type("/exit\r")
    assert user_texts(faux, 0) == ["first\nsecond"]


async def test_slash_commands_answer_and_unknown_ones_are_refused() -> None:
    faux = create_faux_provider([])
    tool = FunctionTool("ls", "List a folder.\nMore.", {}, lambda *a: None)  # type: ignore[arg-type]
    async with chat(Prepared(Agent(faux.provider, faux.model, [tool]))) as session:
        session.type("/tools\r/model\r/nope\r/help\r/exit\r")
    output = session.output
    assert "Tools:\n  ls       List a folder\n" in output
    assert "Model: faux/faux-1\n" in output
    assert "✗ Unknown command /nope. /help lists the commands.\n" in output
    assert "/resume [N|id]" in output
    assert faux.requests == []


def blocking_tool(started: asyncio.Event, release: asyncio.Event) -> FunctionTool:
    async def run(call_id: str, params: dict[str, Any], signal: AbortSignal) -> ToolResult:
        started.set()
        waiter = asyncio.ensure_future(signal.wait())
        await asyncio.wait(
            [waiter, asyncio.ensure_future(release.wait())],
            timeout=TIMEOUT,
            return_when=asyncio.FIRST_COMPLETED,
        )
        return ToolResult([TextContent("done")])

    return FunctionTool("bash", "Run a command.", {"type": "object"}, run)


async def test_help_on_a_narrow_terminal_keeps_its_columns() -> None:
    faux = create_faux_provider([])
    async with chat(Prepared(Agent(faux.provider, faux.model)), width=60) as session:
        session.type("/help\r/exit\r")
    shown = session.output.split("› /help\n")[1].split("› /exit")[0].splitlines()
    headings = {"Commands:", "Keys:"}
    assert headings <= set(shown)
    assert all(line.startswith("  ") for line in shown if line not in headings), shown
    summary_column = shown[1].index("this list")
    for line in shown[1 : shown.index("Keys:")]:
        assert not line[2:summary_column].strip() or line[summary_column - 1] == " ", line
    assert any("Shift+Tab" in line for line in shown)


async def test_typing_while_the_agent_runs_steers_the_next_request() -> None:
    started, release = asyncio.Event(), asyncio.Event()
    faux = create_faux_provider(
        [
            {"type": "success", "content": [ToolCall("c1", "bash", {"command": "make"})]},
            text_reply("Built, and noted."),
        ]
    )
    agent = Agent(faux.provider, faux.model, [blocking_tool(started, release)])
    async with chat(Prepared(agent)) as session:
        session.type("build it\r")
        await asyncio.wait_for(started.wait(), TIMEOUT)
        session.type("also run the tests\r")
        await until(lambda: "queued › also run the tests" in session.output)
        release.set()
        await session.answered()
        session.type("/exit\r")
    assert user_texts(faux, 1) == ["build it", "also run the tests"]
    assert "Built, and noted." in session.output


async def test_ctrl_c_aborts_the_run_and_the_session_goes_on() -> None:
    started, release = asyncio.Event(), asyncio.Event()
    faux = create_faux_provider(
        [
            {"type": "success", "content": [ToolCall("c1", "bash", {"command": "sleep 100"})]},
            text_reply("Still here."),
        ]
    )
    agent = Agent(faux.provider, faux.model, [blocking_tool(started, release)])
    async with chat(Prepared(agent)) as session:
        session.type("sleep\r")
        await asyncio.wait_for(started.wait(), TIMEOUT)
        session.type("\x03")
        end = await session.answered()
        assert end.messages[-1].stop_reason == "aborted"  # type: ignore[union-attr]
        session.type("again\r")
        await session.answered()
        session.type("/exit\r")
    assert "■ aborted" in session.output
    assert "Still here." in session.output


async def test_ctrl_c_twice_on_an_empty_prompt_quits() -> None:
    faux = create_faux_provider([])
    async with chat(Prepared(Agent(faux.provider, faux.model))) as session:
        session.type("abc\x03\x03\x03")
    assert session.output.count("Press Ctrl-C again to exit.") == 1


async def test_ctrl_d_quits() -> None:
    faux = create_faux_provider([])
    async with chat(Prepared(Agent(faux.provider, faux.model))) as session:
        session.type("\x04")


class RecordingApprover(ReplApprover):
    def __init__(self) -> None:
        super().__init__(Console(file=io.StringIO()))
        self.asked = asyncio.Event()

    async def __call__(self, request: ApprovalRequest) -> Approval:
        answer = asyncio.ensure_future(super().__call__(request))
        while self.pending is None:  # the question's body is prepared off the event loop
            await asyncio.sleep(0.01)
        self.asked.set()
        return await answer


async def keys_live(approver: ReplApprover) -> None:
    """Wait until the question is on screen and its guard delay has passed."""
    async with asyncio.timeout(TIMEOUT):
        while not approver.keys_live(""):
            await asyncio.sleep(0.02)


def asking_bash(command: str, calls: list[str]) -> tuple[Prepared, RecordingApprover]:
    """A chat in ask mode whose model runs `command` (its runs recorded), then says
    "finished"."""

    async def run(call_id: str, params: dict[str, Any], signal: AbortSignal) -> ToolResult:
        calls.append(params["command"])
        return ToolResult([TextContent("ok")])

    approver = RecordingApprover()
    gate = PermissionGate("ask", approver=approver)
    tools = gate_tools([FunctionTool("bash", "b", {"type": "object"}, run)], gate)
    faux = create_faux_provider(
        [
            {"type": "success", "content": [ToolCall("c1", "bash", {"command": command})]},
            text_reply("finished"),
        ]
    )
    return Prepared(Agent(faux.provider, faux.model, tools), gate=gate), approver


@pytest.mark.parametrize(("key", "ran"), [("y", True), ("n", False)])
async def test_approval_keys_allow_or_deny_a_bash_call(key: str, ran: bool) -> None:
    calls: list[str] = []
    setup, approver = asking_bash("rm -r build", calls)
    async with chat(setup, approver=approver) as session:
        session.type("clean\r")
        await asyncio.wait_for(approver.asked.wait(), TIMEOUT)
        await keys_live(approver)
        session.type(key)
        await session.answered()
        session.type("/exit\r")
    assert calls == (["rm -r build"] if ran else [])
    assert "? bash $ rm -r build" in session.output
    assert ("  allowed" if ran else "  denied") in session.output


async def test_a_call_s_duration_leaves_out_the_time_its_question_waited() -> None:
    """On the chat's own clock, which moves only here: the user reads the question for a
    minute, and the call, which took no time, shows 0.0 s (with the wait counted: 60.0 s)."""
    setup, approver = asking_bash("true", [])
    clock = ManualClock(100.0)
    async with chat(setup, approver=approver, clock=clock) as session:
        session.type("go\r")
        await asyncio.wait_for(approver.asked.wait(), TIMEOUT)
        await keys_live(approver)
        clock.now += 60.0  # the user reads the question
        session.type("y")
        await session.answered()
        session.type("/exit\r")
    panel_end = next(line for line in session.output.splitlines() if line.startswith("╰"))
    assert panel_end.endswith(" 0.0s ─╯"), panel_end


async def test_clear_starts_a_new_session_and_resume_picks_the_old_one(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    first = store.create(tmp_path)
    faux = create_faux_provider([text_reply("one")])
    agent = Agent(faux.provider, faux.model)
    first.record(agent)
    setup = Prepared(agent, session=first, store=store, workspace=tmp_path)
    async with chat(setup) as session:
        session.type("remember one\r")
        await session.answered()
        session.type("/clear\r")
        await until(lambda: "New session" in session.output)
        cleared = setup.session
        assert cleared is not None and cleared.id != first.id
        assert setup.agent.transcript == []
        session.type("/resume\rremember\r")  # typed ahead of the list: it reads the rest
        await until(lambda: "Resumed session" in session.output)
        session.type("/exit\r")
    assert f"New session {cleared.id}." in session.output
    assert f"Resumed session {first.id} (2 messages)." in session.output
    assert setup.session is not None and setup.session.id == first.id


def test_completion_of_slash_commands_and_at_paths(tmp_path: Path) -> None:
    from prompt_toolkit.completion import CompleteEvent
    from prompt_toolkit.document import Document

    from di_code.ui.completion import ChatCompleter

    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.py").write_text("")
    completer = ChatCompleter(tmp_path)

    def complete(text: str) -> list[str]:
        found = completer.get_completions(Document(text), CompleteEvent())
        return [c.text for c in found]

    assert complete("/re") == ["/resume", "/rewind", "/review"]
    assert complete("/res") == ["/resume"]
    assert complete("/c") == ["/clear", "/compact"]
    assert complete("look at @src/ma") == ["in.py"]
    assert complete("plain words") == []


async def test_resume_by_number_loads_that_conversation(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    old = store.create(tmp_path)
    old.append_message(UserMessage.of("an old question"))
    old.release()  # its writer ended: /resume may go on with it
    faux = create_faux_provider([])
    setup = Prepared(
        Agent(faux.provider, faux.model),
        session=store.create(tmp_path),
        store=store,
        workspace=tmp_path,
    )
    async with chat(setup) as session:
        session.type("/resume 1\r/exit\r")
    assert setup.session is not None and setup.session.id == old.id
    assert [m.role for m in setup.agent.transcript] == ["user"]
    assert f"Resumed session {old.id} (1 message)." in session.output


async def test_model_switch_closes_the_old_providers_http_client(llm_server: LLMServer) -> None:
    llm_server.script(Turn(text="hi"))
    old = OpenAIProvider(api_key="test-key", base_url=llm_server.openai_base_url)
    model = Model("test-model", "Test", "openai", "openai-completions")
    faux = create_faux_provider([])
    setup = Prepared(Agent(old, model), switch_model=lambda spec: (faux.provider, faux.model))
    async with chat(setup) as session:
        session.type("hello\r")
        await session.answered()
        assert old._http._client is not None  # connected: there is something to close
        session.type("/model faux/faux-1\r/exit\r")
    assert "Model: faux/faux-1\n" in session.output
    assert old._http._client is None  # closed when it was replaced, not left to the exit


async def test_a_long_paste_is_one_placeholder_and_is_sent_whole() -> None:
    faux = create_faux_provider([text_reply("got it")])
    pasted = "\n".join(f"row {n}" for n in range(1, 31))
    async with chat(Prepared(Agent(faux.provider, faux.model))) as session:
        session.type(f"look: \x1b[200~{pasted}\x1b[201~")
        await until(lambda: "[pasted 30 lines]" in session.repl.pastes._texts)
        assert session.repl._session is not None
        assert session.repl._session.default_buffer.text == "look: [pasted 30 lines]"
        session.type("\r")
        await session.answered()
        session.type("/exit\r")
    assert user_texts(faux, 0) == [f"look: {pasted}"]
    assert "› look: [pasted 30 lines]" in session.output  # echoed as the input showed it
    assert "row 1" not in session.output


async def test_a_bang_command_runs_here_and_its_output_goes_with_the_next_prompt(
    tmp_path: Path,
) -> None:
    faux = create_faux_provider([text_reply("I see it")])
    setup = Prepared(Agent(faux.provider, faux.model), workspace=tmp_path)
    async with chat(setup) as session:
        session.type("!echo local-$((6*7))\r")
        await until(lambda: "╰" in session.output and not session.repl.busy)
        session.type("what did it print?\r")
        await session.answered()
        session.type("/exit\r")
    assert "╭─ !echo local-$((6*7)) ─" in session.output
    assert "│ local-42 " in session.output
    sent = user_texts(faux, 0)[0]
    assert sent.startswith("I ran `echo local-$((6*7))` in the shell myself.")
    assert "local-42" in sent and sent.endswith("what did it print?")
    assert len(faux.requests) == 1


async def test_a_prompt_typed_while_a_bang_command_runs_is_sent_after_it(
    tmp_path: Path,
) -> None:
    """Typed ahead, not lost: the line waits for the command and goes with its output."""
    faux = create_faux_provider([text_reply("I see it")])
    setup = Prepared(Agent(faux.provider, faux.model), workspace=tmp_path)
    async with chat(setup) as session:
        session.type("!sleep 0.5; echo waited-$((6*7))\r")
        await until(lambda: session.repl.busy)
        session.type("what did it print?\r")
        await session.answered()
        session.type("/exit\r")
    assert "queued › what did it print?" in session.output
    assert "Wait a moment" not in session.output
    sent = user_texts(faux, 0)[0]
    assert "waited-42" in sent and sent.endswith("what did it print?")
    assert len(faux.requests) == 1


async def test_a_prompt_queued_behind_a_stopped_command_goes_back_to_the_input(
    tmp_path: Path,
) -> None:
    """Ctrl-C stops the command and starts nothing: what was queued is back in the input."""
    faux = create_faux_provider([text_reply("unused")])
    setup = Prepared(Agent(faux.provider, faux.model), workspace=tmp_path)
    async with chat(setup) as session:
        session.type("!sleep 30\r")
        await until(lambda: session.repl.busy)
        session.type("then this\r")
        await until(lambda: "queued › then this" in session.output)
        session.type("\x03")
        await until(lambda: not session.repl.busy)
        assert session.repl._session is not None
        assert session.repl._session.default_buffer.text == "then this"
        session.type("\x03\x03\x03")  # clear the line, then quit
    assert faux.requests == []


async def test_expand_shows_the_whole_output_of_a_tool_call() -> None:
    lines = "\n".join(f"out {n}" for n in range(1, 31))

    async def run(call_id: str, params: dict[str, Any], signal: AbortSignal) -> ToolResult:
        return ToolResult([TextContent(lines)])

    faux = create_faux_provider(
        [
            {"type": "success", "content": [ToolCall("c1", "bash", {"command": "seq"})]},
            text_reply("done"),
        ]
    )
    agent = Agent(faux.provider, faux.model, [FunctionTool("bash", "b", {}, run)])
    async with chat(Prepared(agent)) as session:
        session.type("/expand\r")
        await until(lambda: "No tool call to expand yet." in session.output)
        session.type("go\r")
        await session.answered()
        assert "│ out 15 " not in session.output
        session.type("\x0f")
        await until(lambda: "│ out 15 " in session.output)
        session.type("/expand 1\r/expand x\r/exit\r")
    assert session.output.count("│ out 15 ") == 2
    assert "✗ Usage: /expand [thinking] [N]" in session.output


async def test_the_exit_armed_by_ctrl_c_expires() -> None:
    faux = create_faux_provider([])
    async with chat(Prepared(Agent(faux.provider, faux.model))) as session:
        session.type("\x03")
        await until(lambda: session.repl.exit_armed)
        session.repl._armed_at = time.monotonic() - EXIT_ARMED_SECONDS
        assert not session.repl.exit_armed
        session.type("\x03")
        await until(lambda: session.output.count("Press Ctrl-C again to exit.") == 2)
        session.type("\x03")
    assert session.output.count("Press Ctrl-C again to exit.") == 2


async def test_esc_aborts_the_run_like_ctrl_c() -> None:
    started, release = asyncio.Event(), asyncio.Event()
    faux = create_faux_provider(
        [{"type": "success", "content": [ToolCall("c1", "bash", {"command": "sleep 100"})]}]
    )
    agent = Agent(faux.provider, faux.model, [blocking_tool(started, release)])
    async with chat(Prepared(agent)) as session:
        session.type("sleep\r")
        await asyncio.wait_for(started.wait(), TIMEOUT)
        session.type("\x1b")
        end = await session.answered()
        assert end.messages[-1].stop_reason == "aborted"  # type: ignore[union-attr]
        session.type("/exit\r")
    assert "■ aborted" in session.output


async def test_a_resumed_call_in_claude_codes_names_is_shown_with_its_path(
    tmp_path: Path,
) -> None:
    from di_code.ai.types import ToolResultMessage
    from di_code.tools import default_tools

    faux = create_faux_provider([])
    edit = {"file_path": "notes.txt", "old_string": "a", "new_string": "b"}
    called = AssistantMessage([ToolCall("c1", "edit", edit)], "faux", "faux-1")
    done = ToolResultMessage("c1", "edit", [TextContent("Successfully applied 1 edit")])
    messages = [UserMessage.of("edit it"), called, done]
    agent = Agent(faux.provider, faux.model, default_tools(tmp_path), messages=messages)
    async with chat(Prepared(agent, workspace=tmp_path)) as session:
        session.type("/exit\r")
    assert "edit notes.txt" in session.output


async def test_a_resumed_conversation_is_shown_with_its_context_size(tmp_path: Path) -> None:
    faux = create_faux_provider([])
    answer = AssistantMessage(
        [TextContent("The answer was 42.")], "faux", "faux-1", usage=Usage(2000, 60, 0, 0, 2060)
    )
    agent = Agent(faux.provider, faux.model, messages=[UserMessage.of("old question"), answer])
    async with chat(Prepared(agent, workspace=tmp_path)) as session:
        session.type("/session\r/exit\r")
    banner = session.output.split("/help for commands")[0].replace("\n", "")
    assert banner == f"di-code chat · faux/faux-1 · {tmp_path}"
    assert "› old question\nThe answer was 42." in session.output
    assert "ctx 2.1k/128k (2%)" in session.output


@pytest.mark.parametrize(
    "edit",
    [
        {"path": "notes.txt", "old_text": "line 15\n", "new_text": "line fifteen\n"},
        {"file_path": "notes.txt", "old_string": "line 15\n", "new_string": "line fifteen\n"},
    ],
    ids=["di-code", "claude-code"],
)
async def test_an_edit_diff_is_shown_once_at_its_real_line_numbers(
    tmp_path: Path, edit: dict[str, str]
) -> None:
    from di_code.tools.builtin.edit import EditTool
    from di_code.tools.common.workspace import Workspace

    target = tmp_path / "notes.txt"
    target.write_text("".join(f"line {n}\n" for n in range(1, 21)))
    approver = RecordingApprover()
    gate = PermissionGate("ask", approver=approver)
    tools = gate_tools([EditTool(Workspace.create(tmp_path))], gate)
    faux = create_faux_provider(
        [
            {"type": "success", "content": [ToolCall("c1", "edit", edit)]},
            text_reply("edited"),
        ]
    )
    setup = Prepared(Agent(faux.provider, faux.model, tools), gate=gate, workspace=tmp_path)
    async with chat(setup, approver=approver) as session:
        session.type("edit it\r")
        await asyncio.wait_for(approver.asked.wait(), TIMEOUT)
        await keys_live(approver)
        session.type("y")
        await session.answered()
        session.type("/exit\r")
    assert "line fifteen" in target.read_text()
    assert session.output.count("-line 15") == 1
    assert "@@ -12,7 +12,7 @@" in session.output
    assert "? edit notes.txt" in session.output
    assert "│ Successfully applied 1 edit to notes.txt" in session.output


async def test_permissions_lists_and_revokes_the_session_grants() -> None:
    faux = create_faux_provider([])
    gate = PermissionGate("ask", PermissionRules.parse(deny=["bash:rm"]))
    gate.grant([Rule("bash", "git status"), Rule("edit", "a.py")])
    setup = Prepared(Agent(faux.provider, faux.model), gate=gate)
    async with chat(setup) as session:
        session.type("/permissions\r/permissions revoke 1\r/permissions accept-edits\r/exit\r")
    output = session.output
    listing = "  deny bash:rm\nGranted for this session:\n  1. bash:git status\n  2. edit:a.py"
    assert listing in output
    assert "Revoked: bash:git status" in output
    assert gate.grants == [Rule("edit", "a.py")] and gate.mode == "accept-edits"


async def test_permissions_says_how_bash_runs_now() -> None:
    """Bash's sandbox follows the mode (when none was asked for): /permissions says which."""
    faux = create_faux_provider([])
    gate = PermissionGate("ask", PermissionRules.parse())
    policy = BashPolicy(SandboxChoice(None), mode=lambda: gate.mode)
    setup = Prepared(Agent(faux.provider, faux.model), gate=gate, bash_state=policy.state)
    async with chat(setup) as session:
        session.type("/permissions\r/permissions auto\r/exit\r")
    assert "Permission mode: ask\nBash runs unsandboxed\n" in session.output
    confined = "sandboxed (workspace-write, no network)" if bubblewrap_works() else "unsandboxed"
    assert f"Permission mode: auto\nBash runs {confined}\n" in session.output
