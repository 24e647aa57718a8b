"""A subagent file that names a model, and a model script that calls the `task` tool once, for
the tests of which models a subagent may use."""

from __future__ import annotations

from pathlib import Path

from tests.support.llm_server import LLMServer, ToolCallSpec, Turn


def agent_file(folder: Path, model: str, name: str = "helper") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.md"
    path.write_text(
        f"---\nname: {name}\ndescription: Helps with jobs\nmodel: {model}\n---\nYou help.\n"
    )
    return path


def task(kind: str | None = None) -> ToolCallSpec:
    arguments = {"description": "a job", "prompt": "look at the code"}
    if kind is not None:
        arguments["subagent_type"] = kind
    return ToolCallSpec("task", arguments, "t1")


def script_one_task(llm_server: LLMServer, kind: str | None) -> None:
    llm_server.script(
        Turn(tool_calls=(task(kind),)), Turn(text="the sub's answer"), Turn(text="all done")
    )
