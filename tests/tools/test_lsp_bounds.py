"""What a language server says reaches the model bounded and confined: places through a link
out of the workspace are left out (as `read` refuses them), results and diagnostics are cut
like `read`'s output, malformed frames are one note (nothing on stderr), the crash limit is
exact, and a stop ends every wait on a server at once."""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from di_code.agent import AgentTool
from di_code.ai import AbortController
from di_code.tools import default_tools
from di_code.tools.builtin.support.truncation import MAX_BYTES
from di_code.tools.lsp.manager import LanguageServers
from di_code.tools.lsp.servers import catalog
from di_code.tools.lsp.spawn import ServerStarter
from tests.support.lsp import FIXTURE, server_pids, text
from tests.support.processes import wait_until
from tests.tools.conftest import error_of, run

Make = Callable[..., tuple[dict[str, AgentTool], LanguageServers]]


@pytest.fixture
async def servers(workspace: Path) -> AsyncIterator[Make]:
    made: list[LanguageServers] = []

    def make(
        mode: str, startup_timeout: float = 60, **fields: Any
    ) -> tuple[dict[str, AgentTool], LanguageServers]:
        command = [sys.executable, str(FIXTURE), mode, str(workspace)]
        table = {"command": command, "extensions": [".txt"], "startup_timeout": startup_timeout}
        found = catalog({"fixture": table}, which=lambda _: None)
        starter = ServerStarter(cache=workspace.parent / "cache")
        lsp = LanguageServers(found, workspace, starter=starter, **fields)
        made.append(lsp)
        return {tool.name: tool for tool in default_tools(workspace, lsp=lsp)}, lsp

    yield make
    for lsp in made:
        await lsp.aclose()


async def test_places_through_a_link_out_of_the_workspace_are_left_out(
    workspace: Path, servers: Make, monkeypatch: pytest.MonkeyPatch
) -> None:
    library = workspace.parent / "outside-lib"
    library.mkdir()
    (library / "lib.txt").write_text("SECRET LINE from outside\n")
    (workspace / "vendor").symlink_to("../outside-lib")
    (workspace / "own.txt").write_text("own line\n")
    inside_by_name = workspace / "vendor" / "lib.txt"
    monkeypatch.setenv("LSP_FIXTURE_POINTS", f"{inside_by_name}:{workspace / 'own.txt'}")
    tools, _ = servers("points")
    refused = await error_of(tools["read"], {"path": "vendor/lib.txt"})
    assert "outside the workspace" in refused
    for operation in ("definition", "references"):
        params = {"operation": operation, "path": "own.txt", "line": 1, "character": 1}
        result = text(await run(tools["lsp"], params))
        assert result == "own.txt:1:1: own line"
    found = text(await run(tools["lsp"], {"operation": "symbols", "symbol": "0"}))
    assert "SECRET" not in found and "vendor" not in found and "outside-lib" not in found
    assert "own.txt:1:1: function 0" in found


async def test_symbols_are_bounded_like_a_read(
    workspace: Path, servers: Make, monkeypatch: pytest.MonkeyPatch
) -> None:
    (workspace / "own.txt").write_text("own line\n")
    monkeypatch.setenv("LSP_FIXTURE_POINTS", str(workspace / "own.txt"))
    monkeypatch.setenv("LSP_FIXTURE_NAME_SIZE", "20000")
    tools, _ = servers("points")
    for params in ({"path": "own.txt"}, {"symbol": "0"}):
        result = text(await run(tools["lsp"], {"operation": "symbols", **params}))
        assert len(result.encode()) <= MAX_BYTES + 200
        assert "function 0nnn" in result


async def test_a_long_diagnostic_source_adds_little_to_an_edit(
    workspace: Path, servers: Make, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LSP_FIXTURE_SOURCE_SIZE", "200000")
    (workspace / "a.txt").write_text("fine\n")
    tools, _ = servers("sourced")
    result = await run(tools["edit"], {"path": "a.txt", "old_text": "fine", "new_text": "BAD"})
    assert "a.txt:1:1: error: BAD found here" in text(result)
    assert len(text(result)) < 2_000
    assert len(repr(result.details)) < 4_000


async def test_malformed_frames_are_one_note_and_nothing_on_stderr(
    workspace: Path,
    servers: Make,
    capfd: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    (workspace / "a.txt").write_text("fine\n")
    tools, _ = servers("garbage")
    first = await run(tools["edit"], {"path": "a.txt", "old_text": "fine", "new_text": "BAD"})
    again = await run(tools["edit"], {"path": "a.txt", "old_text": "BAD", "new_text": "BAD 2"})
    assert "a.txt:1:1: error: BAD found here" in text(first)  # the good frames still count
    said = (text(first) + text(again)).count("sent a message di-code cannot read")
    assert said == 1
    assert capfd.readouterr().err == ""
    assert [r.getMessage() for r in caplog.records if reaches_stderr(r)] == []


def reaches_stderr(record: logging.LogRecord) -> bool:
    """Whether a record would be printed, traceback and all, outside pytest: di-code sets no
    root handler, so one that no logger on its way handles goes to logging's last resort."""
    logger: logging.Logger | None = logging.getLogger(record.name)
    while logger is not None and logger is not logging.getLogger():
        if logger.handlers:
            return False
        logger = logger.parent if logger.propagate else None
    return logger is not None and record.levelno >= logging.WARNING


async def test_a_crashing_server_is_started_exactly_five_times(
    workspace: Path, servers: Make, monkeypatch: pytest.MonkeyPatch
) -> None:
    starts = workspace.parent / "cache" / "fixture.untrusted" / "starts"
    monkeypatch.setenv("LSP_FIXTURE_STARTS", str(Path.home() / ".cache" / "starts"))
    (workspace / "a.txt").write_text("0\n")
    tools, lsp = servers("crashes", first_retry=0.01)
    said = ""
    for n in range(12):
        result = await run(
            tools["edit"], {"path": "a.txt", "old_text": f"{n}", "new_text": f"{n + 1}"}
        )
        said += text(result)
        wait_until(lambda: not server_pids(workspace), "the crashed server gone")
        await asyncio.sleep(0.05)  # past the (shortened) back-off
    said += "\n".join(lsp.take_notes())
    assert said.count("crashed 5 times; not restarted") == 1
    assert starts.read_text().count("started") == 5


async def test_a_stop_ends_the_wait_for_initialize_at_once(workspace: Path, servers: Make) -> None:
    (workspace / "a.txt").write_text("fine\n")
    tools, _ = servers("silent")
    stop = AbortController()
    asyncio.get_running_loop().call_later(0.5, stop.abort)
    began = time.monotonic()
    with pytest.raises(Exception):  # noqa: B017 (the loop reads a stopped call as interrupted)
        await tools["edit"].execute(
            "1", {"path": "a.txt", "old_text": "fine", "new_text": "BAD"}, stop.signal
        )
    assert time.monotonic() - began < 5  # startup_timeout is 60
    assert (workspace / "a.txt").read_text() == "fine\n"  # stopped before the edit


async def test_a_stop_ends_a_request_to_a_wedged_server_and_closing_does_not_wait(
    workspace: Path, servers: Make
) -> None:
    (workspace / "a.txt").write_text("fine\n")
    tools, lsp = servers("wedged")
    await run(tools["edit"], {"path": "a.txt", "old_text": "fine", "new_text": "BAD"})
    stop = AbortController()
    asyncio.get_running_loop().call_later(0.5, stop.abort)
    began = time.monotonic()
    params = {"operation": "hover", "path": "a.txt", "line": 1, "character": 1}
    with pytest.raises(Exception):  # noqa: B017
        await tools["lsp"].execute("1", params, stop.signal)
    assert time.monotonic() - began < 5  # a request waits up to 10 s
    began = time.monotonic()
    await lsp.aclose()
    assert time.monotonic() - began < 3  # CLOSE_GRACE is 0.5 s; a request used to hold it


def test_a_place_a_server_names_oddly_is_left_out(workspace: Path) -> None:
    from di_code.tools.common.workspace import Workspace
    from di_code.tools.lsp.locations import confined

    space = Workspace.create(workspace, [])
    (workspace / "a.txt").write_text("x\n")
    assert confined(space, (workspace / "a.txt").as_uri()) == workspace / "a.txt"
    for uri in (
        f"file://{workspace}/a%00b.txt",  # a NUL in the name
        f"file://{workspace}/../../etc/passwd",  # climbs out
        "file:relative/a.txt",
        "https://example.com/a.txt",
    ):
        assert confined(space, uri) is None, uri


async def test_lone_surrogates_from_a_server_become_replacement_characters(
    workspace: Path, servers: Make
) -> None:
    (workspace / "a.txt").write_text("fine\n")
    tools, _ = servers("surrogate")
    result = await run(tools["edit"], {"path": "a.txt", "old_text": "fine", "new_text": "BAD"})
    said = text(result)
    assert "a.txt:1:1: error: BAD found here \ufffd [fix\ufffdture]" in said
    said.encode("utf-8")  # a session can store it
    repr(result.details).encode("utf-8")
    listed = text(await run(tools["lsp"], {"operation": "diagnostics", "path": "a.txt"}))
    assert listed == "a.txt:1:1: error: BAD found here \ufffd [fix\ufffdture]"


async def test_restarts_that_fail_count_toward_the_crash_limit(
    workspace: Path, servers: Make, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server that crashed, then fails every restart: started five times in all, not
    every few seconds for the rest of the session."""
    starts = workspace.parent / "cache" / "fixture.untrusted" / "starts"
    monkeypatch.setenv("LSP_FIXTURE_STARTS", str(Path.home() / ".cache" / "starts"))
    monkeypatch.setenv("LSP_FIXTURE_CRASH_ONCE", str(Path.home() / ".cache" / "crashed"))
    (workspace / "a.txt").write_text("0\n")
    tools, lsp = servers("crash-then-refuse", first_retry=0.01)
    said = ""
    for n in range(8):
        edit = {"path": "a.txt", "old_text": f"{n}", "new_text": f"{n + 1}"}
        said += text(await run(tools["edit"], edit))
        wait_until(lambda: not server_pids(workspace), "the server gone")
        await asyncio.sleep(0.05)  # past the (shortened) back-off
    said += "\n".join(lsp.take_notes())
    assert starts.read_text().count("started") == 5
    assert said.count("not restarted") == 1
