"""The todo tool: the plan comes back as text for the model and as a list for the screens;
one step in progress at a time (`run` printing it: tests/cli/test_run_todo.py)."""

from __future__ import annotations

from di_code.tools.builtin.todo import TodoTool
from tests.support.todo import STEPS
from tests.tools.conftest import error_of, run, text_of


async def test_the_plan_comes_back_as_text_and_as_a_list() -> None:
    result = await run(TodoTool(), {"todos": STEPS})
    assert text_of(result) == (
        "Plan: 1/3 done\n[x] read the parser\n[>] fix the bug\n[ ] add a test"
    )
    assert result.details == {"todos": STEPS}


async def test_one_step_in_progress_at_a_time() -> None:
    two = [{**step, "status": "in_progress"} for step in STEPS[:2]]
    assert "Only one step" in await error_of(TodoTool(), {"todos": two})
