"""A task's panel in the Renderer: its subagent's calls folded to the last few under it, and
expanded (Ctrl-O, /expand) to every call and the whole answer when its transcript is gone."""

from __future__ import annotations

from pathlib import Path

from di_code.agent import ToolExecutionEndEvent, ToolExecutionStartEvent
from di_code.ai import TextContent
from di_code.ai.types import ToolResultMessage
from di_code.ui.render import Renderer
from tests.support.render import lines_of, make_console


def test_a_task_whose_transcript_is_gone_expands_to_every_call_and_its_whole_answer(
    tmp_path: Path,
) -> None:
    console = make_console()
    renderer = Renderer(console, clock=lambda: 0.0)
    calls = [
        {"id": f"r{n}", "name": "read", "arguments": {"path": f"f{n}.py"}, "is_error": n == 2}
        for n in range(6)
    ]
    answer = "\n".join(f"finding {n}" for n in range(8))
    details = {"tool_calls": calls, "transcript": str(tmp_path / "gone.jsonl")}
    result = ToolResultMessage("t1", "task", [TextContent(answer)], details=details)
    renderer.handle(ToolExecutionStartEvent("t1", "task", {"description": "survey"}))
    renderer.handle(ToolExecutionEndEvent("t1", "task", result))
    folded = "\n".join(lines_of(console))
    assert "… 2 earlier calls" in folded and "read f1.py" not in folded
    assert "✗ read f2.py" in folded and "✓ read f5.py" in folded
    console.print(renderer.expanded())
    shown = "\n".join(lines_of(console)[len(folded.splitlines()) :])
    assert all(f"✓ read f{n}.py" in shown for n in (0, 1, 3, 4, 5)) and "✗ read f2.py" in shown
    unwrapped = "".join(line.strip("│ ") for line in shown.splitlines())  # a long path wraps
    assert "finding 7" in shown and str(tmp_path / "gone.jsonl") in unwrapped
