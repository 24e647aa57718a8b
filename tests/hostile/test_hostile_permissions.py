"""Permissions attacked from README alone ("Permissions", and what Chat, Config files and Trust
say asks and is allowed): a model's lines shaped to pass an allow rule or to slip past a deny
rule, paths that reach a file or a protected folder by another spelling, a project that widens
its own permissions, and commands built to stall the gate. Each runs a real `di-code run`
against the loopback model server, in a real workspace, and looks at what really happened."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.cli.conftest import RunDiCode
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn


def user_rules(home: Path, allow: list[str] = (), deny: list[str] = ()) -> None:  # type: ignore[assignment]
    """The user's own permission rules, in DI_CODE_HOME's config."""
    (home / "config.toml").write_text(
        f"[permissions]\nallow = {json.dumps(list(allow))}\ndeny = {json.dumps(list(deny))}\n"
    )


def calls(server: LLMServer, tool: str, arguments: list[dict[str, Any]]) -> list[str]:
    """Script one turn calling `tool` once per arguments (ids c0, c1, ...), then an answer."""
    ids = [f"c{n}" for n in range(len(arguments))]
    specs = tuple(ToolCallSpec(tool, args, id) for args, id in zip(arguments, ids, strict=True))
    server.script(Turn(tool_calls=specs), Turn(text="done"))
    return ids


def results(server: LLMServer) -> dict[str, str]:
    """What the model was told of each tool call, by call id (the last request's tool messages)."""
    messages = server.requests[-1].body["messages"]
    return {m["tool_call_id"]: json.dumps(m["content"]) for m in messages if m["role"] == "tool"}


def git_repo(folder: Path) -> None:
    subprocess.run(["git", "init", "-q", "-b", "main", str(folder)], check=True)


# --- the gate must not stall on a hostile command ---------------------------------------------


def test_a_command_full_of_brackets_and_dollars_is_decided_without_stalling(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path
) -> None:
    """The catalogue looks for code in subscripts (`a[$(id)]`) with regular expressions; a line
    of 30 KB of `[$` made them backtrack for hours, on the event loop, with no Esc possible."""
    command = "echo '" + "[$" * 15_000 + "' > /dev/null; touch ran.txt"
    [call] = calls(llm_server, "bash", [{"command": command}])
    done = run_di_code("run", "--yes", "go")  # the fixture's 60 s timeout fails the stall
    assert done.returncode == 0, done.stderr
    assert (workspace / "ran.txt").exists(), results(llm_server)[call]
