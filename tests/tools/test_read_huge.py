"""read of a huge file (issue 33): a log with a 1 TiB hole stands for any multi-GB file. The
work is in proportion to what is shown, and a stop ends the reading thread at once."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from di_code.agent import AgentTool
from di_code.ai import AbortController
from di_code.system.files.opener import Stopped
from tests.tools.conftest import run, text_of

TIB = 1 << 40


def huge_log(folder: Path) -> Path:
    """3,000 text lines, then a 1 TiB hole (no disk used; reading it all takes ~20 min)."""
    path = folder / "huge.log"
    path.write_text("".join(f"line {i}\n" for i in range(1, 3001)))
    os.truncate(path, TIB)
    return path


async def test_a_window_of_a_1_tib_file_does_not_count_its_lines(
    tools: dict[str, AgentTool], workspace: Path
) -> None:
    huge_log(workspace)
    result = await asyncio.wait_for(run(tools["read"], {"path": "huge.log", "limit": 2}), 10)
    assert text_of(result) == (
        "     1\tline 1\n     2\tline 2\n\n[More lines in file. Use offset=3 to continue.]"
    )
    result = await asyncio.wait_for(run(tools["read"], {"path": "huge.log"}), 10)
    assert text_of(result).endswith(
        "  2000\tline 2000\n\n[Showing lines 1-2000; the file goes on (too large to count its "
        "lines). Use offset=2001 to continue.]"
    )


async def test_a_stop_during_a_read_far_into_a_1_tib_file_ends_it_at_once(
    tools: dict[str, AgentTool], workspace: Path
) -> None:
    huge_log(workspace)
    controller = AbortController()
    reading = asyncio.ensure_future(
        run(tools["read"], {"path": "huge.log", "offset": 10**9}, controller.signal)
    )
    await asyncio.sleep(0.3)
    assert not reading.done()  # skipping to line 10**9 reads the hole
    controller.abort()
    with pytest.raises(Stopped):  # the loop tells the model "Interrupted by the user."
        await asyncio.wait_for(reading, 2)
