"""The shared setup's small decisions: permission mode, reasoning level, tool selection."""

from __future__ import annotations

from pathlib import Path

import pytest

from di_code.config.settings import ConfigError, Settings
from di_code.setup.flags import CliOptions
from di_code.setup.prepare import permission_mode, reasoning, select_tools


def test_permission_mode_order() -> None:
    assert permission_mode(CliOptions(), Settings()) == "ask"
    assert permission_mode(CliOptions(), Settings(permission_mode="auto")) == "auto"
    assert permission_mode(CliOptions(yes=True), Settings(permission_mode="read-only")) == "auto"
    explicit = CliOptions(yes=True, permission_mode="read-only")
    assert permission_mode(explicit, Settings()) == "read-only"
    with pytest.raises(
        ConfigError, match="--permission-mode must be one of ask, accept-edits, auto, read-only"
    ):
        permission_mode(CliOptions(permission_mode="yolo"), Settings())


def test_reasoning_from_flag_and_settings() -> None:
    assert reasoning(CliOptions(), Settings()) == "off"
    assert reasoning(CliOptions(thinking=True), Settings()) == "medium"
    assert reasoning(CliOptions(thinking=True), Settings(thinking="high")) == "high"
    assert reasoning(CliOptions(), Settings(thinking="low")) == "low"


def test_select_tools_keeps_the_named_ones_in_order(tmp_path: Path) -> None:
    assert [t.name for t in select_tools(tmp_path, [], None, None, print)] == [
        "read",
        "write",
        "edit",
        "bash",
        "grep",
        "find",
        "ls",
        "fetch",
        "todo",
        *("job_output", "job_input", "job_kill", "job_list"),
    ]
    assert [t.name for t in select_tools(tmp_path, [], " ls , read", None, print)] == ["read", "ls"]
    with_jobs = ["bash", "job_output", "job_input", "job_kill", "job_list"]
    assert [t.name for t in select_tools(tmp_path, [], "bash", None, print)] == with_jobs
    with pytest.raises(ConfigError, match="unknown tool 'teleport'"):
        select_tools(tmp_path, [], "teleport", None, print)
