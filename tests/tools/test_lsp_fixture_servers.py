"""Language servers that misbehave, as tiny real servers (tests/support/lsp_fixture_server.py):
an edit reports only the problems it introduced, a crash is said once and the server comes
back, a server that never answers initialize is left behind, a flood is bounded, and a file
no server serves costs nothing."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from di_code.agent import AgentTool
from di_code.tools import default_tools
from di_code.tools.lsp.manager import LanguageServers
from tests.support.lsp import fixture_servers, server_pids, text
from tests.support.processes import until, wait_until
from tests.tools.conftest import error_of, run

MakeTools = Callable[..., "asyncio.Future[dict[str, AgentTool]]"]


@pytest.fixture
async def lsp_tools(workspace: Path) -> AsyncIterator[Callable[..., dict[str, AgentTool]]]:
    made: list[LanguageServers] = []

    def make(mode: str, **table: Any) -> dict[str, AgentTool]:
        servers = fixture_servers(workspace, mode, **table)
        made.append(servers)
        return {tool.name: tool for tool in default_tools(workspace, lsp=servers)}

    yield make
    for servers in made:
        await servers.aclose()


async def test_an_edit_reports_what_it_introduced_and_what_it_fixed_not_old_noise(
    workspace: Path, lsp_tools: Callable[..., dict[str, AgentTool]]
) -> None:
    (workspace / "a.txt").write_text("BAD old\nfine\n")
    edit = lsp_tools("lines")["edit"]
    result = await run(edit, {"path": "a.txt", "old_text": "fine", "new_text": "BAD new"})
    assert "New problems in a.txt (language server):\na.txt:2:1: error: BAD found here" in text(
        result
    )
    assert "a.txt:1:" not in text(result)  # the old problem is not repeated
    assert result.details["diagnostics"] == [
        {"path": "a.txt", "line": 2, "column": 1, "severity": "error",
         "message": "BAD found here", "source": "fixture", "code": ""},
    ]  # fmt: skip
    assert result.details["diff"]  # the edit's own details stay
    fixed = await run(edit, {"path": "a.txt", "old_text": "BAD new", "new_text": "good"})
    assert "Fixed in a.txt: error: BAD found here" in text(fixed)
    assert fixed.details["diagnostics"] == []
    quiet = await run(edit, {"path": "a.txt", "old_text": "good", "new_text": "better"})
    assert text(quiet) == "Successfully applied 1 edit to a.txt"


async def test_write_of_a_new_file_reports_its_problems(
    workspace: Path, lsp_tools: Callable[..., dict[str, AgentTool]]
) -> None:
    write = lsp_tools("lines")["write"]
    result = await run(write, {"path": "new.txt", "content": "ok\nBAD\n"})
    assert "new.txt:2:1: error: BAD found here" in text(result)


async def test_a_crashed_server_is_said_once_and_restarted_after_a_back_off(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the server's own cache, the one folder it may write in the sandbox (~/.cache there)
    monkeypatch.setenv("LSP_FIXTURE_CRASH_ONCE", str(Path.home() / ".cache" / "crashed"))
    (workspace / "a.txt").write_text("one\n")
    now = 0.0
    servers = fixture_servers(workspace, "crash")
    servers.clock = lambda: now  # the back-off passes when the test says, not after a sleep
    edit = {tool.name: tool for tool in default_tools(workspace, lsp=servers)}["edit"]
    try:
        first = await run(edit, {"path": "a.txt", "old_text": "one", "new_text": "BAD"})
        assert (workspace / "a.txt").read_text() == "BAD\n"  # the edit itself is done
        [slot] = servers.slots.values()
        await until(lambda: slot.crashes == 1, "the crash seen")  # maybe after the result
        now += 1.0  # the first back-off
        again = await run(edit, {"path": "a.txt", "old_text": "BAD", "new_text": "BAD two"})
        said = text(first) + text(again) + "\n".join(servers.take_notes())
        assert said.count("Language server fixture exited with code 3") == 1
        assert len(server_pids(workspace)) == 1  # a new one
        more = await run(edit, {"path": "a.txt", "old_text": "BAD two", "new_text": "BAD\nBAD"})
        assert "a.txt:2:1: error: BAD found here" in text(more)
    finally:
        await servers.aclose()


async def test_a_crashing_server_waits_out_each_back_off_and_stays_down_after_five(
    workspace: Path,
) -> None:
    """The restart policy on the manager's own clock: 1, 2, 4, 8 s after crashes one to four
    (not a moment sooner), and no start at all after the fifth, however long one waits."""
    now = 0.0
    servers = fixture_servers(workspace, "crashes")
    servers.clock = lambda: now
    edit = {tool.name: tool for tool in default_tools(workspace, lsp=servers)}["edit"]
    path = workspace / "a.txt"
    path.write_text("0\n")
    try:
        for crash, back_off in enumerate((1.0, 2.0, 4.0, 8.0, None), start=1):
            await run(edit, {"path": "a.txt", "old_text": f"{crash - 1}", "new_text": f"{crash}"})
            [slot] = servers.slots.values()
            await until(lambda: slot.crashes == crash, f"crash {crash} seen")  # noqa: B023
            if back_off is None:
                break
            now += back_off - 0.01
            assert await servers.connections(path) == [], f"restarted early after {crash}"
            now += 0.01
            assert len(await servers.connections(path)) == 1, f"not restarted after {crash}"
        now += 1e6
        assert await servers.connections(path) == []
        assert slot.state == "failed" and "crashed 5 times" in slot.reason
        assert not server_pids(workspace)
    finally:
        await servers.aclose()


async def test_a_server_that_never_answers_initialize_is_left_behind_once(
    workspace: Path, lsp_tools: Callable[..., dict[str, AgentTool]]
) -> None:
    (workspace / "a.txt").write_text("one\n")
    tools = lsp_tools("silent", startup_timeout=1)
    first = await run(tools["edit"], {"path": "a.txt", "old_text": "one", "new_text": "BAD"})
    assert text(first).endswith(
        "Language server fixture did not answer initialize within 1 s; going on without it."
    )
    wait_until(lambda: not server_pids(workspace), "the silent server killed")
    second = await run(tools["edit"], {"path": "a.txt", "old_text": "BAD", "new_text": "two"})
    assert text(second) == "Successfully applied 1 edit to a.txt"
    assert not server_pids(workspace)  # not started again


async def test_a_flood_of_diagnostics_is_bounded(
    workspace: Path, lsp_tools: Callable[..., dict[str, AgentTool]]
) -> None:
    (workspace / "a.txt").write_text("one\n")
    edit = lsp_tools("flood")["edit"]
    result = await run(edit, {"path": "a.txt", "old_text": "one", "new_text": "two"})
    # the flood is the same before and after: nothing new
    assert text(result) == "Successfully applied 1 edit to a.txt"
    write = lsp_tools("flood")["write"]
    fresh = await run(write, {"path": "b.txt", "content": "x"})
    lines = text(fresh).splitlines()
    assert lines[-1] == "... and 4980 more"
    assert len(lines) <= 25 and len(text(fresh)) < 10_000
    assert len(fresh.details["diagnostics"]) == 20
    assert fresh.details["diagnostics_total"] == 5000


async def test_a_file_no_server_serves_starts_none_and_keeps_the_result(
    workspace: Path, lsp_tools: Callable[..., dict[str, AgentTool]]
) -> None:
    (workspace / "notes.md").write_text("BAD\n")
    tools = lsp_tools("lines")
    result = await run(tools["edit"], {"path": "notes.md", "old_text": "BAD", "new_text": "BAD!"})
    assert text(result) == "Successfully applied 1 edit to notes.md"
    assert "diagnostics" not in result.details
    assert not server_pids(workspace)


async def test_the_servers_are_stopped_with_their_manager(workspace: Path) -> None:
    (workspace / "a.txt").write_text("one\n")
    servers = fixture_servers(workspace, "lines")
    tools = {tool.name: tool for tool in default_tools(workspace, lsp=servers)}
    await run(tools["edit"], {"path": "a.txt", "old_text": "one", "new_text": "two"})
    assert len(server_pids(workspace)) == 1
    await servers.aclose()
    wait_until(lambda: not server_pids(workspace), "the server stopped")


async def test_a_file_closed_in_the_server_keeps_its_problems_for_the_next_edit(
    workspace: Path, lsp_tools: Callable[..., dict[str, AgentTool]]
) -> None:
    for name in "abcde":
        (workspace / f"{name}.txt").write_text(f"BAD in {name}\nok\n")
    edit = lsp_tools("lines")["edit"]
    for name in "abcde":  # more files than a server keeps open: a.txt is closed
        await run(edit, {"path": f"{name}.txt", "old_text": "ok", "new_text": "fine"})
    again = await run(edit, {"path": "a.txt", "old_text": "fine", "new_text": "BAD"})
    assert "a.txt:2:1: error: BAD found here" in text(again)
    assert "a.txt:1:" not in text(again)  # known from before it was closed, not new


async def test_the_status_lines_say_each_servers_state_per_root(workspace: Path) -> None:
    from di_code.tools.lsp.manager import status_lines

    (workspace / "a.txt").write_text("one\n")
    servers = fixture_servers(workspace, "silent", startup_timeout=1)
    tools = {tool.name: tool for tool in default_tools(workspace, lsp=servers)}
    assert status_lines(servers)[1] == "  not started (starts on the first file it serves)"
    await run(tools["edit"], {"path": "a.txt", "old_text": "one", "new_text": "two"})
    assert status_lines(servers)[1] == (
        f"  {workspace}: failed: did not answer initialize within 1 s"
    )
    await servers.aclose()


async def test_the_lsp_tool_says_in_one_line_what_a_server_cannot_do(
    workspace: Path, lsp_tools: Callable[..., dict[str, AgentTool]]
) -> None:
    (workspace / "a.txt").write_text("BAD\n")
    lsp = lsp_tools("lines")["lsp"]
    where = {"operation": "definition", "path": "a.txt", "line": 1, "character": 1}
    message = await error_of(lsp, where)
    assert message.startswith("The language server refused: ")
    assert len(message.splitlines()) == 1, message
    problems = await run(lsp, {"operation": "diagnostics", "path": "a.txt"})
    assert text(problems) == "a.txt:1:1: error: BAD found here [fixture]"
    nothing = await error_of(lsp, {"operation": "hover", "path": "a.txt"})
    assert nothing == "Give line and character, or symbol"


async def test_the_position_read_shows_is_the_one_lsp_reports(
    workspace: Path, lsp_tools: Callable[..., dict[str, AgentTool]]
) -> None:
    """read's line number, and the column counted in the text after its tab, are lsp's."""
    (workspace / "a.txt").write_text("one\ntwo\n  x BAD\n")
    tools = lsp_tools("lines")
    shown = text(await run(tools["read"], {"path": "a.txt"}))
    number, line = next(row for row in shown.split("\n") if "BAD" in row).split("\t", 1)
    found = text(await run(tools["lsp"], {"operation": "diagnostics", "path": "a.txt"}))
    assert f"a.txt:{int(number)}:{line.index('BAD') + 1}: error: BAD found here" in found
