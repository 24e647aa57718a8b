"""A session's bash spill files are kept in the session's own folder."""

from __future__ import annotations

import json
from pathlib import Path

from di_code.tools.builtin.support.spill import SUFFIX
from tests.cli.conftest import RunDiCode
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn


def test_a_session_keeps_its_spills_in_its_own_folder(
    run_di_code: RunDiCode, llm_server: LLMServer, di_code_home: Path
) -> None:
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("bash", {"command": "seq 1 3000"}),)), Turn(text="done")
    )
    done = run_di_code("run", "--yes", "--sandbox", "off", "count")
    assert done.returncode == 0, done.stderr
    [session] = di_code_home.glob("sessions/*/*.jsonl")
    paths = [
        entry["message"]["details"]["full_output_path"]
        for entry in map(json.loads, session.read_text().splitlines())
        if entry.get("type") == "message" and entry["message"].get("role") == "tool_result"
    ]
    assert [Path(path).parent for path in paths] == [session.with_suffix(SUFFIX)]
    assert Path(paths[0]).read_text() == "".join(f"{i}\n" for i in range(1, 3001))
