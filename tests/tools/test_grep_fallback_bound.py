"""grep's Python fallback (used when ripgrep is missing) on a catastrophic pattern: `(a+)+$`
against a long line of `a`s and a `b` backtracks for longer than anyone waits, and Python's
`re` holds the interpreter while it does. The fallback runs in a worker process: it gives up
after its time limit with a one-line error, and an abort stops it at once."""

from __future__ import annotations

import asyncio
from pathlib import Path

from di_code.ai import AbortController
from di_code.tools.builtin.grep import GrepTool
from di_code.tools.builtin.support.workspace import Workspace
from tests.support.processes import alive
from tests.tools.conftest import error_of, run

CATASTROPHIC = r"(a+)+$"
SAFETY = 60.0
"""Far longer than either test needs: only a hang reaches it."""


def slow_tree(workspace: Path) -> Path:
    (workspace / "a.txt").write_text("fine\n")
    (workspace / "b.txt").write_text("a" * 64 + "b\n")
    return workspace


async def test_a_catastrophic_pattern_ends_with_a_one_line_error(workspace: Path) -> None:
    grep = GrepTool(Workspace.create(slow_tree(workspace)), ripgrep=None, time_limit=1.0)
    message = await asyncio.wait_for(error_of(grep, {"pattern": CATASTROPHIC}), SAFETY)
    assert message == "grep: the pattern took too long (over 1 s) — simplify it"


async def test_an_abort_stops_a_catastrophic_search_at_once(workspace: Path) -> None:
    grep = GrepTool(Workspace.create(slow_tree(workspace)), ripgrep=None, time_limit=SAFETY * 10)
    controller = AbortController()
    search = asyncio.create_task(run(grep, {"pattern": CATASTROPHIC}, controller.signal))
    async with asyncio.timeout(SAFETY):
        while not (found := workers(workspace)):
            await asyncio.sleep(0.02)
    assert not search.done()
    controller.abort()
    message = await asyncio.wait_for(error_of_task(search), SAFETY)
    assert message == "Operation aborted"
    assert not any(map(alive, found))


def workers(workspace: Path) -> list[int]:
    """The grep worker processes searching `workspace` (their command line names it)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes() if entry.name.isdigit() else b""
        except OSError:
            continue
        if b"di_code.tools.builtin.support.grep_worker" in argv and str(workspace).encode() in argv:
            found.append(int(entry.name))
    return found


async def error_of_task(search: asyncio.Task[object]) -> str:
    from di_code.tools.builtin.support.errors import ToolError

    try:
        await search
    except ToolError as exc:
        return str(exc)
    raise AssertionError("the search ended without an error")
