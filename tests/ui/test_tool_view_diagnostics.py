"""Chat's tool panel shows an edit's new problems (details.diagnostics) under its diff, which
would otherwise hide them."""

from __future__ import annotations

from di_code.ai.types import TextContent, ToolResultMessage
from di_code.ui.tool_view import tool_panel
from tests.support.render import render_text


def test_an_edits_new_problems_are_shown_under_its_diff() -> None:
    problem = {"path": "a.py", "line": 2, "column": 5, "severity": "error",
               "message": "boom", "source": "x", "code": ""}  # fmt: skip
    details = {"diff": "--- a.py\n+++ a.py\n@@ -2 +2 @@\n-old\n+new\n", "diagnostics": [problem]}
    result = ToolResultMessage("c1", "edit", [TextContent("Applied")], details=details)
    lines = render_text(tool_panel("edit", {"path": "a.py"}, result, 0.1))
    assert any("+new" in line for line in lines)
    assert lines[-2].startswith("│ a.py:2:5: error: boom ")
