"""An approval question on model input opens in bounded time, its diff prepared off the event
loop (issue 41.2: a 300-line old_text missing from a 6,000-line file froze chat for 68 s)."""

from __future__ import annotations

import asyncio
import io
import time
from pathlib import Path

from rich.console import Console

from di_code.tools.common.workspace import Workspace
from di_code.tools.policy.permissions import NO, ApprovalRequest
from di_code.ui.approval import ReplApprover
from tests.support.big_files import LIVENESS, code_lines


async def asked_within_bound(request: ApprovalRequest, workspace: Path) -> str:
    """What the question shows, once it is open; fails if it took longer than LIVENESS."""
    output = io.StringIO()
    approver = ReplApprover(Console(file=output, width=100, color_system=None))
    approver.workspace = Workspace.create(workspace)
    started = time.monotonic()
    asking = asyncio.create_task(approver(request))
    while approver.pending is None and time.monotonic() - started < LIVENESS:
        await asyncio.sleep(0.05)
    assert approver.pending is not None
    assert time.monotonic() - started < LIVENESS
    approver.answer(NO)
    assert await asking == NO
    return output.getvalue()


async def test_an_edit_whose_old_text_is_missing_is_asked_about_at_once(tmp_path: Path) -> None:
    (tmp_path / "big.py").write_text("\n".join(code_lines(6000, 1)) + "\n")
    edit = {"path": "big.py", "old_text": "\n".join(code_lines(300, 2)), "new_text": "x"}
    shown = await asked_within_bound(ApprovalRequest("edit", edit, "edit big.py"), tmp_path)
    assert "? edit big.py" in shown


async def test_a_write_over_a_file_difflib_finds_hard_is_asked_about_at_once(
    tmp_path: Path,
) -> None:
    (tmp_path / "f.txt").write_text("\n".join(str(i % 150) for i in range(40_000)))
    write = {"path": "f.txt", "content": "\n".join(str(i * 7 % 151) for i in range(40_000))}
    shown = await asked_within_bound(ApprovalRequest("write", write, "write f.txt"), tmp_path)
    assert "? write f.txt" in shown and "@@ -1,40000 +1,40000 @@" in shown
