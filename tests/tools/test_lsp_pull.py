"""An edit's diagnostics asked for (textDocument/diagnostic, LSP 3.17) rather than only waited
for: a server that checks at once when asked and publishes nothing (basedpyright when the
client pulls; on its own it would wait 250 ms after each change) gives the edit's result its
problems; a server that does not take the request is asked once and then only listened to."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from di_code.agent import AgentTool
from di_code.tools import default_tools
from di_code.tools.lsp.manager import LanguageServers
from tests.support.lsp import fixture_servers, text
from tests.tools.conftest import run


@pytest.fixture
async def servers_for(workspace: Path) -> AsyncIterator[Callable[[str], LanguageServers]]:
    """`servers_for(mode)`: the fixture server in `mode` as the one language server."""
    made: list[LanguageServers] = []

    def make(mode: str) -> LanguageServers:
        made.append(fixture_servers(workspace, mode))
        return made[-1]

    yield make
    for servers in made:
        await servers.aclose()


def tool_of(workspace: Path, servers: LanguageServers, name: str = "edit") -> AgentTool:
    return {tool.name: tool for tool in default_tools(workspace, lsp=servers)}[name]


async def test_the_answer_to_a_pull_is_the_edits_diagnostics(
    workspace: Path,
    servers_for: Callable[[str], LanguageServers],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the server's own cache, the one folder it may write in the sandbox (~/.cache there)
    marks = workspace.parent / "cache" / "fixture.untrusted" / "marks"
    monkeypatch.setenv("LSP_FIXTURE_STARTS", str(Path.home() / ".cache" / "marks"))
    (workspace / "a.txt").write_text("BAD old\nfine\n")
    edit = tool_of(workspace, servers_for("pulled"))
    result = await run(edit, {"path": "a.txt", "old_text": "fine", "new_text": "BAD new"})
    assert "New problems in a.txt (language server):\na.txt:2:1: error: BAD found here" in text(
        result
    )
    assert "a.txt:1:" not in text(result)  # the old problem, pulled before the edit, is not new
    fixed = await run(edit, {"path": "a.txt", "old_text": "BAD new", "new_text": "good"})
    assert "Fixed in a.txt: error: BAD found here" in text(fixed)
    assert "a.txt:1:" not in text(fixed)
    assert marks.read_text().split().count("pull") == 3  # the file as first read, each edit


async def test_the_lsp_tools_diagnostics_of_a_file_are_pulled_too(
    workspace: Path, servers_for: Callable[[str], LanguageServers]
) -> None:
    (workspace / "a.txt").write_text("ok\nBAD\n")
    lsp = tool_of(workspace, servers_for("pulled"), "lsp")
    problems = await run(lsp, {"operation": "diagnostics", "path": "a.txt"})
    assert text(problems) == "a.txt:2:1: error: BAD found here [fixture]"


async def test_a_server_that_does_not_take_pulls_is_asked_once_then_listened_to(
    workspace: Path, servers_for: Callable[[str], LanguageServers]
) -> None:
    (workspace / "a.txt").write_text("fine\n")
    servers = servers_for("lines")
    edit = tool_of(workspace, servers)
    first = await run(edit, {"path": "a.txt", "old_text": "fine", "new_text": "BAD"})
    assert "a.txt:1:1: error: BAD found here" in text(first)
    [connection] = servers.running()
    assert connection.pulls is False  # it answered "method not found"
    again = await run(edit, {"path": "a.txt", "old_text": "BAD", "new_text": "BAD\nBAD"})
    assert "a.txt:2:1: error: BAD found here" in text(again)
