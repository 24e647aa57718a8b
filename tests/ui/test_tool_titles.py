"""The title of a tool's panel says what the call does in words (issue 44.4), as `edit app.py`
does: the lsp tool's names its operation and place, the plan tool's its plan's first line;
never the raw JSON of the arguments."""

from __future__ import annotations

import pytest

from di_code.ui.tool_view import tool_title


@pytest.mark.parametrize(
    ("arguments", "title"),
    [
        (
            {"operation": "definition", "path": "app.py", "line": 3, "character": 5},
            "lsp definition app.py:3:5",
        ),
        ({"operation": "references", "symbol": "load_config"}, "lsp references load_config"),
        (
            {"operation": "hover", "symbol": "Config", "path": "app.py"},
            "lsp hover Config in app.py",
        ),
        ({"operation": "symbols", "path": "src/app.py"}, "lsp symbols src/app.py"),
        ({"operation": "diagnostics"}, "lsp diagnostics"),
    ],
)
def test_an_lsp_call_is_titled_in_words(arguments: dict[str, object], title: str) -> None:
    assert tool_title("lsp", arguments).plain == title


def test_a_plan_is_titled_by_its_first_line() -> None:
    plan = {"plan": "\nRename the greeting\n\n1. app.py\n"}
    assert tool_title("exit_plan_mode", plan).plain == "exit_plan_mode Rename the greeting"


def test_a_hostile_lsp_symbol_is_shown_escaped() -> None:
    title = tool_title("lsp", {"operation": "references", "symbol": "x\x1b[2Jy"}).plain
    assert "\x1b" not in title and "lsp references x" in title
