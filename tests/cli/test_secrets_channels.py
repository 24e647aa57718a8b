"""Issue 40 item 5: the provider key, planted in an answer (streamed in pieces), a tool result,
tool arguments and an error, comes out of `run` only as `***`, in every output format, in the
session file and in what the user's hooks read on stdin."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.conftest import API_KEY, RunDiCode, WriteHook
from tests.support.llm_server import HttpError, LLMServer, ToolCallSpec, Turn
from tests.support.secrets import streamed

DUMP = 'cat >> "{path}"; echo >> "{path}"\n'


def plant(llm_server: LLMServer) -> None:
    """A model that says the key, reads it from a file, puts it in a command, then an error
    that echoes it."""
    llm_server.script(
        Turn(
            text=f"planting {API_KEY} in the answer",
            tool_calls=(ToolCallSpec("read", {"path": "key.txt"}),),
        ),
        Turn(tool_calls=(ToolCallSpec("bash", {"command": f"echo {API_KEY} > out.txt"}),)),
        HttpError(400, f"Incorrect API key provided: {API_KEY}"),
    )


@pytest.mark.parametrize("output_format", ["text", "json", "stream-json"])
def test_run_shows_and_hooks_read_the_key_only_hidden(
    output_format: str,
    run_di_code: RunDiCode,
    llm_server: LLMServer,
    user_hook: WriteHook,
    workspace: Path,
    di_code_home: Path,
    tmp_path: Path,
) -> None:
    (workspace / "key.txt").write_text(f"the key: {API_KEY}\n")
    hooks_read = tmp_path / "hooks-read.txt"
    user_hook("PostToolUse", "dump.sh", DUMP.format(path=hooks_read))
    plant(llm_server)
    done = run_di_code("run", "--yes", "--output-format", output_format, "go")
    assert done.returncode == 1, done.stderr
    assert (workspace / "out.txt").read_text() == f"{API_KEY}\n"  # the command ran as written
    shown = done.stdout + done.stderr
    assert "Incorrect API key provided: ***" in shown
    assert API_KEY not in shown + streamed(done.stdout)
    if output_format == "stream-json":
        assert "planting *** in the answer" in streamed(done.stdout)
    assert "***" in hooks_read.read_text() and API_KEY not in hooks_read.read_text()
    [session] = (di_code_home / "sessions").rglob("*.jsonl")
    assert API_KEY not in session.read_text(encoding="utf-8")
